//! The worker of provider `openssl-4.0` (build.rs links it to that version).
fn main() {
    cryptoscope_provider_openssl_vendored::run()
}
