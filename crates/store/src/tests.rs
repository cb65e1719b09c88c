use super::*;
use cryptoscope_model::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_model::{GateStatus, RunConfig};
use rusqlite::Connection;

fn run(id: &str, started: &str) -> RunFile {
    RunFile {
        schema: cryptoscope_model::SCHEMA.into(),
        run_id: id.into(),
        started_at: started.into(),
        finished_at: String::new(),
        tool_version: "0.1.0".into(),
        command: cryptoscope_model::RecordedCommand::new(["cryptoscope", "run"]),
        config: RunConfig {
            suites: vec!["kem".into()],
            quick: true,
            ..Default::default()
        },
        environment: cryptoscope_measure::env::capture(Some(2.0e9), "not supported: test"),
        results: Vec::new(),
        applications: Vec::new(),
    }
}

fn row(alg: &str, op: &str, samples: &[f64]) -> ResultRow {
    let d = Descriptor::catalogued(
        alg,
        "pqclean",
        "clean",
        "pqcrypto-mlkem 0.1.1".into(),
        "cc -O3".into(),
        Sizes {
            public_key: 1184,
            secret_key: 2400,
            ciphertext: 1088,
            shared_secret: 32,
        },
        Randomness::Harness,
    );
    let mut r = ResultRow::without_numbers(&d, op, GateStatus::Pass, "kat ok");
    let s = cryptoscope_measure::summarize(samples);
    r.samples = s.samples;
    r.median_cycles = Some(s.median);
    r.median_ns = Some(s.median / 2.0);
    r.ci95_low_cycles = Some(s.ci95_low);
    r.ci95_high_cycles = Some(s.ci95_high);
    r.outliers = Some(s.outliers);
    r.cycle_source = Some(cryptoscope_measure::CycleSource::TscReferenceCycles);
    r.raw_cycles = samples.to_vec();
    r.raw_ns = samples.iter().map(|x| x / 2.0).collect();
    r
}

#[test]
fn a_run_round_trips_with_raw_samples() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/results.db");
    let mut st = Store::open(&path).unwrap();
    assert_eq!(st.version().unwrap(), SCHEMA_VERSION);
    st.begin_run(&run("20260101T000000Z-aaaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let mut visited = row("ML-KEM-768", "encaps", &[20.5, 21.25, 19.0, 22.0]);
    visited.visits = vec![1, 2, 1];
    visited.raw_t_s = vec![0.5, 0.75, 3.0, 3.25];
    visited.stack_bytes = Some(3_168);
    visited.heap_allocations = Some(2);
    visited.heap_peak_bytes = Some(472);
    visited.code_bytes = Some(40_960);
    visited.code_bytes_method = Some("text of PQCLEAN_MLKEM768_CLEAN_*".into());
    let mut pts = vec![
        cryptoscope_model::ScalePoint::new(1, vec![10], &[1.0]),
        cryptoscope_model::ScalePoint::new(2, vec![9, 12], &[1.0, 1.25]),
    ];
    visited.scale_knee_threads = cryptoscope_model::finish_scaling(&mut pts);
    visited.scaling = Some(pts);
    visited.instructions = Some(333_913.0);
    visited.instructions_spread = Some(0.0125);
    visited.input_check = Some("does not validate ek".into());
    visited.counters = Some(vec![
        cryptoscope_model::CounterFigure {
            event: "task-clock".into(),
            status: "ok".into(),
            median: Some(64_277.0),
            mean: Some(70_000.5),
            calls: 101,
        },
        cryptoscope_model::CounterFigure {
            event: "cycles".into(),
            status: "not supported: No such file or directory (os error 2)".into(),
            median: None,
            mean: None,
            calls: 101,
        },
    ]);
    let rows = vec![row("ML-KEM-768", "keypair", &[10.0, 12.0, 11.0]), visited];
    for r in &rows {
        st.add_result("20260101T000000Z-aaaa", r).unwrap();
    }
    st.finish_run("20260101T000000Z-aaaa", "2026-01-01T00:01:00Z").unwrap();
    drop(st);
    let mut st = Store::open(&path).unwrap();
    let back = st.load_run("20260101T000000Z-aaaa").unwrap();
    assert_eq!(back.results.len(), 2);
    for (a, b) in rows.iter().zip(&back.results) {
        assert_eq!(serde_json::to_value(a).unwrap(), serde_json::to_value(b).unwrap());
    }
    assert_eq!(back.finished_at, "2026-01-01T00:01:00Z");
    assert_eq!(back.config.suites, vec!["kem".to_string()]);
    let runs = st.runs().unwrap();
    assert_eq!(
        (runs[0].status.as_str(), runs[0].measured, runs[0].total),
        ("complete", 2, 2)
    );
}

#[test]
fn an_interrupted_run_keeps_what_it_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    {
        let mut st = Store::open(&path).unwrap();
        st.begin_run(&run("r1", "2026-01-01T00:00:00Z")).unwrap();
        st.add_result("r1", &row("ML-KEM-768", "keypair", &[1.0, 2.0, 3.0]))
            .unwrap();
        // No finish_run: the process "dies" here.
    }
    let mut st = Store::open(&path).unwrap();
    let runs = st.runs().unwrap();
    assert_eq!(runs[0].status, "running");
    assert_eq!(st.load_run("r1").unwrap().results.len(), 1);
}

#[test]
fn run_references_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    st.begin_run(&run("20260101T000000Z-aaaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    st.begin_run(&run("20260102T000000Z-bbbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    assert_eq!(st.resolve("latest").unwrap(), "20260102T000000Z-bbbb");
    assert_eq!(st.resolve("20260101").unwrap(), "20260101T000000Z-aaaa");
    assert!(matches!(st.resolve("2026010"), Err(StoreError::Ambiguous(..))));
    assert!(matches!(st.resolve("nope"), Err(StoreError::NoSuchRun(_))));
}

#[test]
fn schema_migrates_forward_and_refuses_the_future() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    Connection::open(&old)
        .unwrap()
        .execute_batch("CREATE TABLE unrelated (x INTEGER);")
        .unwrap();
    let mut st = Store::open(&old).unwrap();
    assert_eq!(st.version().unwrap(), SCHEMA_VERSION);
    assert!(st.runs().unwrap().is_empty());
    let newer = dir.path().join("newer.db");
    Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = Store::open(&newer).err().unwrap();
    assert!(e.to_string().contains("schema version 99"), "{e}");
}

#[test]
fn unopenable_path_is_a_clear_error() {
    let e = Store::open(Path::new("/proc/no/such/dir/results.db")).err().unwrap();
    assert!(
        e.to_string()
            .starts_with("cannot open results database /proc/no/such/dir/results.db"),
        "{e}"
    );
}

#[test]
fn shards_of_a_group_load_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    st.begin_run_in_group(&run("s1", "2026-01-01T00:00:00Z"), "job42")
        .unwrap();
    st.add_result("s1", &row("ML-KEM-768", "keypair", &[1.0, 2.0])).unwrap();
    st.begin_run_in_group(&run("s2", "2026-01-01T00:00:01Z"), "job42")
        .unwrap();
    st.add_result("s2", &row("ML-KEM-512", "keypair", &[3.0, 4.0])).unwrap();
    st.begin_run(&run("other", "2026-01-01T00:00:02Z")).unwrap();
    let g = st.load("group:job42").unwrap();
    assert_eq!(g.run_id, "group:job42");
    assert_eq!(g.results.len(), 2);
    assert!(matches!(st.load("group:nope"), Err(StoreError::NoSuchRun(_))));
    assert_eq!(st.runs().unwrap().iter().filter(|r| r.group == "job42").count(), 2);
}

#[test]
fn a_group_on_two_machine_types_loads_as_a_part_per_type_never_merged() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let on = |id: &str, started: &str, cpu: &str, host: &str| {
        let mut r = run(id, started);
        r.environment.cpu_model = Some(cpu.into());
        r.environment.hostname = Some(host.into());
        r
    };
    // Shards 1 and 3 on two EPYC nodes, shard 2 on a Xeon: two types, three runs.
    st.begin_run_in_group(&on("s1", "2026-01-01T00:00:00Z", "AMD EPYC 7B13", "n1"), "mix")
        .unwrap();
    st.add_result("s1", &row("ML-KEM-768", "keypair", &[1.0, 2.0])).unwrap();
    st.begin_run_in_group(
        &on("s2", "2026-01-01T00:00:01Z", "Intel Xeon Platinum 8480C", "n2"),
        "mix",
    )
    .unwrap();
    st.add_result("s2", &row("ML-KEM-512", "keypair", &[3.0, 4.0])).unwrap();
    st.begin_run_in_group(&on("s3", "2026-01-01T00:00:02Z", "AMD EPYC 7B13", "n3"), "mix")
        .unwrap();
    st.add_result("s3", &row("ML-KEM-1024", "keypair", &[5.0, 6.0]))
        .unwrap();

    let parts = st.load_all("group:mix").unwrap();
    let ids: Vec<&str> = parts.iter().map(|p| p.run_id.as_str()).collect();
    assert_eq!(ids, ["group:mix@AMD EPYC 7B13", "group:mix@Intel Xeon Platinum 8480C"]);
    let subjects = |p: &RunFile| p.results.iter().map(|r| r.algorithm.clone()).collect::<Vec<_>>();
    assert_eq!(subjects(&parts[0]), ["ML-KEM-768", "ML-KEM-1024"]);
    assert_eq!(parts[0].environment.cpu_model.as_deref(), Some("AMD EPYC 7B13"));
    assert_eq!(subjects(&parts[1]), ["ML-KEM-512"]);
    assert_eq!(
        parts[1].environment.cpu_model.as_deref(),
        Some("Intel Xeon Platinum 8480C")
    );

    // As one run: refused, naming both types.
    let e = st.load("group:mix").unwrap_err().to_string();
    assert!(
        e.contains("AMD EPYC 7B13 (2 runs), Intel Xeon Platinum 8480C (1 run)"),
        "{e}"
    );
    // One type by a piece of its CPU model or a host name.
    let epyc = st.load("group:mix@epyc").unwrap();
    assert_eq!(epyc.run_id, "group:mix@epyc");
    assert_eq!(subjects(&epyc), ["ML-KEM-768", "ML-KEM-1024"]);
    assert_eq!(subjects(&st.load("group:mix@n2").unwrap()), ["ML-KEM-512"]);
    let e = st.load("group:mix@arm").unwrap_err().to_string();
    assert!(e.starts_with("group mix has no run on a machine matching `arm`"), "{e}");
    let m = st.group_members("mix").unwrap();
    assert_eq!(
        m.iter().map(|m| (m.id.as_str(), m.results)).collect::<Vec<_>>(),
        [("s1", 1), ("s2", 1), ("s3", 1)]
    );
}

#[test]
fn a_version_1_database_migrates_to_groups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&render(MIGRATIONS[0], Dialect::Sqlite)).unwrap();
        c.execute(
            "INSERT INTO environments (hostname, cpu_model, json) VALUES ('h', 'c', '{}')",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO runs (id, started_at, status, tool_version, command, config, environment_id) VALUES ('old', 't', 'complete', '0', '[]', '{}', 1)",
            [],
        )
        .unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
    }
    let mut st = Store::open(&path).unwrap();
    assert_eq!(st.version().unwrap(), SCHEMA_VERSION);
    let runs = st.runs().unwrap();
    assert_eq!((runs[0].id.as_str(), runs[0].group.as_str()), ("old", "old"));
}

#[test]
fn application_results_round_trip_in_order_and_replace_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let mut r = run("20260102T000000Z-bbbb", "2026-01-02T00:00:00Z");
    r.config.suites = vec!["tahoe".into()];
    st.begin_run(&r).unwrap();
    let item = |key: &str, v: serde_json::Value| AppResult {
        driver: "tahoe".into(),
        item: key.into(),
        data: v,
    };
    st.add_app_result(&r.run_id, &item("setup", serde_json::json!({"nodes": 5})))
        .unwrap();
    st.add_app_result(
        &r.run_id,
        &item("blake3|1x8 MB|upload", serde_json::json!({"total_s": 0.5})),
    )
    .unwrap();
    st.add_app_result(&r.run_id, &item("setup", serde_json::json!({"nodes": 6})))
        .unwrap();
    let back = st.load("latest").unwrap();
    assert!(back.results.is_empty());
    let keys: Vec<_> = back.applications.iter().map(|a| a.item.as_str()).collect();
    assert_eq!(keys, ["blake3|1x8 MB|upload", "setup"]);
    assert_eq!(back.applications[1].data["nodes"], 6);
    assert_eq!(st.runs().unwrap()[0].suites, "tahoe");
}

#[test]
fn the_version_10_migration_scrubs_passwords_from_stored_command_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v9.db");
    let secret = "hunter2-in-a-v9-database";
    let with_password = serde_json::to_string(&[
        "cryptoscope",
        "run",
        "--db",
        &format!("postgresql://bench:{secret}@127.0.0.1:5432/postgres"),
        "--quick",
    ])
    .unwrap();
    {
        // A database as version 9 left it: its schema, and command lines stored as typed.
        let c = Connection::open(&path).unwrap();
        for m in &MIGRATIONS[..9] {
            c.execute_batch(&render(m, Dialect::Sqlite)).unwrap();
        }
        let env = serde_json::to_string(&run("x", "t").environment).unwrap();
        let config = serde_json::to_string(&run("x", "t").config).unwrap();
        c.execute(
            "INSERT INTO environments (hostname, cpu_model, json) VALUES ('h', 'c', ?1)",
            [&env],
        )
        .unwrap();
        for (id, command) in [("leaky", with_password.as_str()), ("clean", r#"["cryptoscope","run"]"#)] {
            c.execute(
                "INSERT INTO runs (id, started_at, status, tool_version, command, config, environment_id, run_group)
                 VALUES (?1, 't', 'complete', '0.1.0', ?2, ?3, 1, ?1)",
                [id, command, config.as_str()],
            )
            .unwrap();
        }
        c.pragma_update(None, "user_version", 9).unwrap();
    }
    let holds_secret = |p: &Path| {
        std::fs::read(p)
            .map(|b| b.windows(secret.len()).any(|w| w == secret.as_bytes()))
            .unwrap_or(false)
    };
    assert!(
        holds_secret(&path),
        "the fixture must hold the password before the migration"
    );

    let mut st = Store::open(&path).unwrap();
    assert_eq!(
        st.migrated(),
        Some(&Migration {
            from: 9,
            to: SCHEMA_VERSION,
            scrubbed_commands: 1
        })
    );
    assert_eq!(
        st.load_run("leaky").unwrap().command.display(),
        "cryptoscope run --db postgresql://bench:***@127.0.0.1:5432/postgres --quick"
    );
    assert_eq!(st.load_run("clean").unwrap().command.display(), "cryptoscope run");
    // The value stored, not only the value read back, and no copy left in the file's free
    // pages or the write-ahead log.
    let stored = st.db.query("SELECT command FROM runs WHERE id = 'leaky'", &[]).unwrap();
    assert!(!stored[0][0].text().unwrap().contains(secret));
    for p in [path.clone(), dir.path().join("v9.db-wal")] {
        assert!(!holds_secret(&p), "{} still holds the password", p.display());
    }
    drop(st);
    // Opened again: nothing left to migrate.
    assert_eq!(Store::open(&path).unwrap().migrated(), None);
}

#[test]
fn a_run_stored_now_keeps_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let mut r = run("now", "2026-01-01T00:00:00Z");
    r.command = cryptoscope_model::RecordedCommand::new(["cryptoscope", "run", "--db", "postgres://u:pw123@h/d"]);
    st.begin_run(&r).unwrap();
    let stored = st.db.query("SELECT command FROM runs", &[]).unwrap();
    assert_eq!(
        stored[0][0].text().unwrap(),
        r#"["cryptoscope","run","--db","postgres://u:***@h/d"]"#
    );
    // A new database is not "migrated".
    assert_eq!(st.migrated(), None);
}

#[test]
fn a_connection_string_that_fails_is_named_without_its_password() {
    let e = Store::open_any("host=127.0.0.1 password=two words")
        .err()
        .unwrap()
        .to_string();
    assert!(!e.contains("two") && !e.contains("words"), "{e}");
    assert!(e.contains("not repeated: it holds a password"), "{e}");
    let e = Store::open_any("postgresql://u:pw0rd@h/d?sslcert=x")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with("cannot open results database postgresql://u:***@h/d?sslcert=x: "),
        "{e}"
    );
    let e = Store::open_any("host=h sslcert=x").err().unwrap().to_string();
    assert!(e.starts_with("cannot open results database host=h sslcert=x: "), "{e}");
}
