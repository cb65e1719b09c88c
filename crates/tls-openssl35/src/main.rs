//! `cryptoscope-tls-openssl35`: the TLS driver (crates/tls) linked to OpenSSL 3.5, built
//! from vendored sources. `cryptoscope tls --peer openssl-3.5` runs its `serve --openssl`
//! and its `load --client openssl`; it links no catalogue KEMs (the OpenSSL peers offer
//! OpenSSL's own groups).
fn main() {
    cryptoscope_tls::main(Vec::new, "none")
}
