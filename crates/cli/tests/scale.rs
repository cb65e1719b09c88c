//! `cryptoscope scale`: throughput against threads through the real workers.
mod common;
use common::*;

#[test]
fn scale_reports_throughput_per_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("scale.json");
    let o = cryptoscope()
        .args([
            "scale",
            "--quiet",
            "--quick",
            "--alg",
            "X25519",
            "--provider",
            "rustcrypto",
            "--threads",
            "2,1",
            "--duration",
            "0.2",
            "--op",
            "exchange",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout_of(&o), stderr_of(&o));
    let out = stdout_of(&o);
    assert!(
        out.contains("1 thr ops/s") && out.contains("2 thr ops/s") && out.contains("Knee:"),
        "{out}"
    );
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = run["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the operation asked for");
    let r = &rows[0];
    assert_eq!(r["operation"], "exchange");
    let points = r["scaling"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, threads) in points.iter().zip([1, 2]) {
        assert_eq!(p["threads"], threads);
        let per = p["per_thread"].as_array().unwrap();
        assert_eq!(per.len(), threads, "one count per thread");
        assert!(per.iter().all(|n| n.as_u64().unwrap() > 0), "{p}");
        assert!(p["ops_per_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(points[0]["efficiency"], 1.0);
    assert!([1, 2].contains(&r["scale_knee_threads"].as_u64().unwrap()));
    let html = std::fs::read_to_string(json.with_extension("html")).unwrap();
    assert!(html.contains("id=\"chart-0-scale-kex-exchange\"") && html.contains("class=\"scaleline\""));

    for bad in [
        vec!["scale", "--threads", "0,2"],
        vec!["scale", "--threads", "two"],
        vec!["scale", "--duration=-1"],
        vec!["scale", "--op", "sign"],
    ] {
        let o = cryptoscope().args(&bad).current_dir(tmp.path()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr_of(&o));
        assert_eq!(
            stderr_of(&o).trim().lines().count(),
            1,
            "{bad:?}: one line: {}",
            stderr_of(&o)
        );
    }
}
