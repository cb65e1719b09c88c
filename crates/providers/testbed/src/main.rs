fn main() {
    cryptoscope_worker::worker_main(cryptoscope_provider_testbed::subjects)
}
