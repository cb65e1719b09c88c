//! `cryptoscope-tls-openssl40`: the TLS driver (crates/tls) linked to OpenSSL 4.0, built
//! from vendored sources. `cryptoscope tls --peer openssl-4.0` runs its `serve --openssl`
//! and its `load --client openssl`; it links no catalogue KEMs.
fn main() {
    cryptoscope_tls::main(Vec::new, "none")
}
