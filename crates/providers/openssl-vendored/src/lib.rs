//! OpenSSL versions built from vendored sources, each its own provider and worker
//! (`openssl-3.5`, `openssl-4.0`), beside the system's (`openssl`): the subjects are
//! cryptoscope-openssl-evp's, linked per worker to its own static libcrypto (build.rs).
//! Each worker's `main` (src/workers/) is [`run`]; which version it is, is decided at link
//! time.

/// A vendored version's worker.
pub fn run() -> ! {
    if let Some(reason) = cryptoscope_openssl_evp::unbuilt() {
        eprintln!(
            "error: {} was not built from its vendored sources: {reason}",
            cryptoscope_openssl_evp::provider()
        );
        std::process::exit(2);
    }
    cryptoscope_worker::worker_main(cryptoscope_openssl_evp::subjects)
}
