//! The worker of provider `openssl-3.5` (build.rs links it to that version).
fn main() {
    cryptoscope_provider_openssl_vendored::run()
}
