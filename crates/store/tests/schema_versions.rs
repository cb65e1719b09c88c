//! Every schema version an earlier cryptoscope wrote still opens: each fixture
//! `tests/fixtures/sqlite-v{N}.sql` (a dump of a database at version N holding one run, see
//! the README there) is loaded into a new file and opened as `cryptoscope` opens a store.
//! It must migrate to the current version, read back the values the fixture holds, and
//! lose the password that versions before 10 kept in the stored command line.

use cryptoscope_store::{Migration, Store, SCHEMA_VERSION};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The one run every fixture holds.
const RUN: &str = "20250314T091500Z-3fa1";

fn fixture(v: i64) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/sqlite-v{v}.sql"))
}

/// The password in the fixture's command line (versions 1 to 9; version 10 stores `***`).
fn password(v: i64) -> String {
    format!("pw-v{v}-Qx7Z")
}

/// `value` where version `v` has the column that holds it (added in version `first`).
fn since(v: i64, first: i64, value: Value) -> Value {
    if v >= first {
        value
    } else {
        Value::Null
    }
}

/// A passing result's gate, samples and statistics; `figures` are the columns from
/// `median_cycles` to `mad_cycles`, in table order.
fn stats(samples: u64, stop: &str, figures: [f64; 15], outliers: [u64; 2]) -> Value {
    let names = [
        "median_cycles",
        "median_ns",
        "ci95_low_cycles",
        "ci95_high_cycles",
        "ci95_low_ns",
        "ci95_high_ns",
        "mean_cycles",
        "mean_ns",
        "stddev_cycles",
        "min_cycles",
        "max_cycles",
        "p5_cycles",
        "p95_cycles",
        "p99_cycles",
        "mad_cycles",
    ];
    let mut m = json!({
        "gate": "pass",
        "gate_detail": "kat ok",
        "samples": samples,
        "stop_reason": stop,
        "outliers": outliers[0],
        "severe_outliers": outliers[1],
        "cycle_source": "tsc-reference-cycles",
        "overhead_cycles": 24.0,
        "overhead_ns": 9.75,
        "tsc_hz": 2445000000.0,
        "cpu": 2,
    });
    for (k, x) in names.iter().zip(figures) {
        m[*k] = json!(x);
    }
    m
}

/// The memory columns (version 4) of a result.
fn memory(v: i64, stack: u64, heap: [u64; 5], code: Option<(u64, &str)>) -> Value {
    let mut m = json!({
        "memory_calls": 3,
        "stack_bytes": stack,
        "heap_allocations": heap[0],
        "heap_frees": heap[1],
        "heap_bytes": heap[2],
        "heap_peak_bytes": heap[3],
        "heap_retained_bytes": heap[4],
        "code_bytes": code.map(|c| c.0),
        "code_bytes_method": code.map(|c| c.1),
    });
    for x in m.as_object_mut().expect("object").values_mut() {
        *x = since(v, 4, x.take());
    }
    m
}

fn merge(parts: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for p in parts {
        m.extend(p.as_object().expect("object").clone());
    }
    Value::Object(m)
}

/// The results of the fixture at version `v`, in run order, as `cryptoscope.run/1` writes
/// them; fields not named are null (or empty sample arrays).
fn expected_results(v: i64) -> Vec<Value> {
    let kem = json!({
        "subject": "ML-KEM-768/pqclean/clean", "algorithm": "ML-KEM-768", "family": "kem",
        "provider": "pqclean", "provider_version": "pqcrypto-mlkem 0.1.1", "implementation": "clean",
        "algorithm_version": "-", "build": "cc (Debian 12.2.0-14) 12.2.0 -O3 -march=native",
        "nist_level": 3,
        "sizes": {"public_key": 1184, "secret_key": 2400, "ciphertext": 1088, "shared_secret": 32},
    });
    let hash = json!({
        "subject": "SHA3-256/openssl/evp", "algorithm": "SHA3-256", "family": "hash",
        "provider": "openssl", "provider_version": "OpenSSL 3.0.15 3 Sep 2024", "implementation": "evp",
        "algorithm_version": "-", "build": "cc (Debian 12.2.0-14) 12.2.0 -O3 -march=native",
        "sizes": {"public_key": 0, "secret_key": 0, "ciphertext": 0, "shared_secret": 32},
    });
    let pqclean_code = Some((40960, "text of PQCLEAN_MLKEM768_CLEAN_*"));
    let keypair = merge(&[
        kem.clone(),
        json!({"operation": "keypair"}),
        stats(
            1200,
            "converged",
            [
                28412.0, 11620.5, 28390.0, 28437.0, 11611.5, 11630.75, 28650.25, 11717.75, 912.5, 28011.0, 41877.0,
                28102.0, 29840.0, 33120.0, 140.5,
            ],
            [37, 6],
        ),
        memory(v, 9896, [0; 5], pqclean_code),
        json!({
            "scaling": since(v, 5, json!([
                {"threads": 1, "ops_per_s": 80000.0, "per_thread": [80000], "seconds": 1.0, "efficiency": 1.0, "min_max_ratio": 1.0},
                {"threads": 2, "ops_per_s": 152000.0, "per_thread": [76000, 76000], "seconds": 1.0, "efficiency": 0.95, "min_max_ratio": 1.0},
                {"threads": 4, "ops_per_s": 240000.0, "per_thread": [60000, 60000, 60000, 60000], "seconds": 1.0, "efficiency": 0.75, "min_max_ratio": 1.0},
            ])),
            "scale_knee_threads": since(v, 5, json!(4)),
            "counters": since(v, 7, json!([
                {"event": "instructions", "status": "ok", "median": 61234.0, "mean": 61240.5, "calls": 101},
                {"event": "cache-misses", "status": "not supported: No such file or directory (os error 2)",
                 "median": null, "mean": null, "calls": 101},
            ])),
            "instructions": since(v, 7, json!(61190.0)),
            "input_check": since(v, 11, json!("does not validate ek")),
            "instructions_spread": since(v, 12, json!(0.0123)),
        }),
    ]);
    let encaps = merge(&[
        kem.clone(),
        json!({"operation": "encaps"}),
        stats(
            6,
            "max-samples",
            [
                33112.0, 13543.5, 33088.0, 33152.0, 13533.25, 13559.5, 33126.75, 13548.5, 40.25, 33088.0, 33200.0,
                33088.0, 33200.0, 33200.0, 16.0,
            ],
            [0, 0],
        ),
        memory(v, 11432, [0; 5], pqclean_code),
        json!({
            "raw_cycles": [33120.0, 33088.0, 33152.0, 33104.0, 33200.0, 33096.0],
            "raw_ns": [13546.5, 13533.25, 13559.5, 13539.75, 13578.5, 13536.0],
            "visits": since(v, 3, json!([3, 3])),
            "raw_t_s": since(v, 6, json!([0.125, 0.25, 0.375, 1.5, 1.625, 1.75])),
            "input_check": since(v, 11, json!("does not validate ek")),
        }),
    ]);
    let decaps = merge(&[
        kem,
        json!({
            "operation": "decaps", "gate": "fail",
            "gate_detail": "shared secret differs from the KAT's (entry 0)", "samples": 0,
        }),
    ]);
    let hash64 = merge(&[
        hash,
        json!({"operation": "hash:64"}),
        stats(
            5000,
            "max-samples",
            [
                412.0, 168.5, 410.0, 414.0, 167.75, 169.25, 415.5, 170.0, 9.5, 398.0, 1204.0, 402.0, 431.0, 466.0, 3.0,
            ],
            [212, 41],
        ),
        memory(v, 1312, [1, 1, 232, 232, 0], None),
        json!({
            "instructions": since(v, 7, json!(1873.0)),
            "instructions_spread": since(v, 12, json!(0.0)),
        }),
    ]);
    let mut rows = vec![keypair, encaps, decaps, hash64];
    if v >= 9 {
        rows.push(camellia_row(v));
    }
    rows
}

/// The cipher row that schema version 9 brought: Camellia-128, bitsliced in AVX2 registers.
fn camellia_row(v: i64) -> Value {
    merge(&[
        json!({
            "subject": "Camellia-128/cryptoscope/bitsliced-avx2", "algorithm": "Camellia-128",
            "family": "cipher", "provider": "cryptoscope", "provider_version": "0.9.0",
            "implementation": "bitsliced-avx2", "algorithm_version": "-",
            "build": "cc (Debian 12.2.0-14) 12.2.0 -O3 -march=native",
            "sizes": {"public_key": 0, "secret_key": 16, "ciphertext": 16, "shared_secret": 0},
            "operation": "block:16",
            "cipher": {"block_bytes": 16, "key_bytes": 16, "batch": 32, "secret_indexing": false,
                       "functions": ["feistel", "fl"],
                       "about": "bitsliced: 32 blocks in AVX2 registers, S-boxes as Boolean circuits"},
        }),
        stats(
            2000,
            "converged",
            [
                5312.0, 2172.5, 5304.0, 5320.0, 2169.25, 2175.75, 5330.5, 2180.0, 22.0, 5290.0, 5710.0, 5296.0, 5364.0,
                5420.0, 6.5,
            ],
            [14, 2],
        ),
        memory(
            v,
            2208,
            [0; 5],
            Some((18432, "text of cryptoscope_ciphers::camellia::bitsliced_avx2")),
        ),
    ])
}

/// The command line as it must be stored after opening: its password masked.
fn scrubbed_command(v: i64) -> String {
    let suites = if v >= 9 { "kem,hash,cipher" } else { "kem,hash" };
    let rounds = if v >= 3 { " --rounds 2" } else { "" };
    format!("cryptoscope run --suite {suites}{rounds} --db postgresql://bench:***@db.example.org:5432/cryptoscope")
}

fn file_holds(path: &Path, secret: &str) -> bool {
    std::fs::read(path)
        .map(|b| b.windows(secret.len()).any(|w| w == secret.as_bytes()))
        .unwrap_or(false)
}

/// Loads the fixture of version `v` into a new database file and checks what opening it
/// with the store does.
fn opens_and_migrates(v: i64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("v{v}.db"));
    let dump = std::fs::read_to_string(fixture(v)).unwrap();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&dump).unwrap();
        let found: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(found, v, "the fixture's own schema version");
    }
    let secret = password(v);
    if v < 10 {
        assert!(
            file_holds(&path, &secret),
            "v{v}: the fixture must hold its password before opening"
        );
    }

    let mut st = Store::open_any(path.to_str().unwrap()).unwrap();
    assert_eq!(st.version().unwrap(), SCHEMA_VERSION, "v{v}");
    let migrated = (v < SCHEMA_VERSION).then_some(Migration {
        from: v,
        to: SCHEMA_VERSION,
        scrubbed_commands: usize::from(v < 10),
    });
    assert_eq!(st.migrated(), migrated.as_ref(), "v{v}");

    let runs = st.runs().unwrap();
    assert_eq!(runs.len(), 1, "v{v}");
    let s = &runs[0];
    let (measured, total) = if v >= 9 { (4, 5) } else { (3, 4) };
    assert_eq!(
        (
            s.id.as_str(),
            s.group.as_str(),
            s.status.as_str(),
            s.started_at.as_str()
        ),
        (RUN, RUN, "complete", "2025-03-14T09:15:00Z"),
        "v{v}"
    );
    assert_eq!(
        (s.hostname.as_str(), s.cpu_model.as_str()),
        ("bench-01", "AMD EPYC 7763 64-Core Processor")
    );
    assert_eq!(s.suites, if v >= 9 { "kem,hash,cipher" } else { "kem,hash" }, "v{v}");
    assert_eq!((s.measured, s.failed, s.total), (measured, 1, total), "v{v}");

    let run = st.load("latest").unwrap();
    assert_eq!(run.run_id, RUN);
    assert_eq!(
        (run.started_at.as_str(), run.finished_at.as_str()),
        ("2025-03-14T09:15:00Z", "2025-03-14T09:21:47Z")
    );
    assert_eq!(run.tool_version, format!("0.{v}.0"));
    assert_eq!(run.command.display(), scrubbed_command(v), "v{v}");
    assert_eq!(run.config.rounds, if v >= 3 { 2 } else { 1 }, "v{v}");
    assert_eq!((run.config.max_samples, run.config.cpu), (5000, Some(2)));
    assert_eq!(run.environment.hostname.as_deref(), Some("bench-01"));
    assert_eq!(run.environment.hypervisor.as_deref(), Some("KVMKVMKVM"));
    assert_eq!(run.environment.tsc_hz, Some(2445000000.0));

    let expected = expected_results(v);
    let ops: Vec<&str> = run.results.iter().map(|r| r.operation.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|r| r["operation"].as_str().unwrap()).collect();
    assert_eq!(ops, want, "v{v}: results in run order");
    for (got, want) in run.results.iter().zip(&expected) {
        let got = serde_json::to_value(got).unwrap();
        let (got, want) = (got.as_object().unwrap(), want.as_object().unwrap());
        let what = format!("v{v} {} {}", want["subject"], want["operation"]);
        for (k, w) in want {
            assert_eq!(got.get(k).unwrap_or(&Value::Null), w, "{what}: {k}");
        }
        for (k, g) in got {
            if !want.contains_key(k) {
                let empty = g.is_null() || g.as_array().is_some_and(|a| a.is_empty());
                assert!(empty, "{what}: {k} is {g}, the fixture holds none");
            }
        }
    }

    let apps: Vec<(&str, &str, &Value)> = run
        .applications
        .iter()
        .map(|a| (a.driver.as_str(), a.item.as_str(), &a.data))
        .collect();
    let setup = json!({"nodes": 5, "shares_needed": 3, "shares_total": 10});
    let upload = json!({"total_s": 0.5, "mb_per_s": 16.0});
    let want_apps = match v >= 8 {
        true => vec![("tahoe", "setup", &setup), ("tahoe", "blake3|1x8 MB|upload", &upload)],
        false => vec![],
    };
    assert_eq!(apps, want_apps, "v{v}");
    drop(st);

    // The stored value, not only the one read back (which is scrubbed again on reading),
    // and no copy left in the file's free pages or the write-ahead log.
    let c = rusqlite::Connection::open(&path).unwrap();
    let stored: String = c.query_row("SELECT command FROM runs", [], |r| r.get(0)).unwrap();
    let stored: Vec<String> = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored.join(" "), scrubbed_command(v), "v{v}");
    drop(c);
    for p in [path.clone(), dir.path().join(format!("v{v}.db-wal"))] {
        assert!(
            !file_holds(&p, &secret),
            "v{v}: {} still holds the password",
            p.display()
        );
    }
    // Opened again: nothing left to migrate.
    assert_eq!(
        Store::open_any(path.to_str().unwrap()).unwrap().migrated(),
        None,
        "v{v}"
    );
}

#[test]
fn every_schema_version_has_a_fixture() {
    for v in 1..=SCHEMA_VERSION {
        assert!(
            fixture(v).is_file(),
            "no fixture for schema version {v}: {}",
            fixture(v).display()
        );
    }
}

/// Every table and index of the database at `path` as SQLite keeps it: type, name and the
/// SQL text that made it (ALTER TABLE appends to it), by name.
fn schema_of(path: &Path) -> Vec<(String, String, String)> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        .unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_new_database_has_the_schema_of_the_latest_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.db");
    drop(Store::open_any(new.to_str().unwrap()).unwrap());
    let old = dir.path().join("fixture.db");
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute_batch(&std::fs::read_to_string(fixture(SCHEMA_VERSION)).unwrap())
        .unwrap();
    assert_eq!(schema_of(&new), schema_of(&old));
}

#[test]
fn version_1_opens() {
    opens_and_migrates(1);
}

#[test]
fn version_2_opens() {
    opens_and_migrates(2);
}

#[test]
fn version_3_opens() {
    opens_and_migrates(3);
}

#[test]
fn version_4_opens() {
    opens_and_migrates(4);
}

#[test]
fn version_5_opens() {
    opens_and_migrates(5);
}

#[test]
fn version_6_opens() {
    opens_and_migrates(6);
}

#[test]
fn version_7_opens() {
    opens_and_migrates(7);
}

#[test]
fn version_8_opens() {
    opens_and_migrates(8);
}

#[test]
fn version_9_opens() {
    opens_and_migrates(9);
}

#[test]
fn version_10_opens() {
    opens_and_migrates(10);
}

#[test]
fn version_11_opens() {
    opens_and_migrates(11);
}

#[test]
fn version_12_opens() {
    opens_and_migrates(12);
}
