//! Several processes (shards, parallel tests) opening one new database at the same moment
//! must all succeed: the schema is created once, not twice ("duplicate column name").

#[test]
fn many_openers_of_one_new_database() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("new-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (p, b) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    b.wait();
                    cryptoscope_store::Store::open(&p).map(|mut s| s.version().unwrap())
                })
            })
            .collect();
        let versions: Vec<i64> = handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}")))
            .collect();
        assert!(versions.windows(2).all(|w| w[0] == w[1]), "{versions:?}");
    }
}
