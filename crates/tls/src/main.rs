fn main() {
    cryptoscope_tls::main(
        cryptoscope_provider_liboqs::subjects,
        cryptoscope_provider_liboqs::PROVIDER,
    )
}
