fn main() {
    cryptoscope_tls::main(
        cryptoscope_provider_pqclean::subjects,
        cryptoscope_provider_pqclean::PROVIDER,
    )
}
