//! `cryptoscope openvpn-server` end to end with real OpenVPN servers and clients between two
//! network namespaces: every connection ran TLS 1.2 DHE-RSA with the asked RSA size and the
//! AES-256-CBC/SHA256 data channel; paced clients never exceed their rate (counted); results
//! reach the store, `show` and the report; nothing is left behind, also after Ctrl-C.

mod common;

use common::*;
use serde_json::Value;

fn leftovers() -> String {
    common::leftovers("csovpn", "[o]penvpn .*--machine-readable-output")
}

/// Polls until every namespace and process is gone (at most 30 s).
fn nothing_left() {
    let t = std::time::Instant::now();
    while !leftovers().is_empty() && t.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(leftovers().is_empty(), "{}", leftovers());
}

#[test]
fn paced_and_unpaced_clients_soft_and_accelerated() {
    let _serial = serial(); // creates namespaces and starts daemons
    if !cryptoscope_testkit::needs_root("network namespaces") {
        let out = cryptoscope().args(["openvpn-server", "--quick"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr_of(&out).contains("needs root"), "{}", stderr_of(&out));
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (db, json) = (d.path().join("r.db"), d.path().join("o.json"));
    let (clients, rate) = (3u64, 2.0f64);
    let out = cryptoscope()
        .args([
            "openvpn-server",
            "--quick",
            "--quiet",
            "--rsa",
            "1024",
            "--clients",
            &clients.to_string(),
            "--pace",
            &format!("{rate},off"),
            "--window",
            "3",
            "--min-connections",
            "20",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let cells: Vec<(bool, Option<f64>)> = rows
        .iter()
        .map(|r| (r["soft"].as_bool().unwrap(), r["pace"].as_f64()))
        .collect();
    assert_eq!(
        cells,
        [(false, Some(rate)), (false, None), (true, Some(rate)), (true, None)],
        "{rows:?}"
    );
    let warmup = v["setup"]["warmup_s"].as_f64().unwrap();
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        // What ran is read from every client's log; one connection with anything else
        // fails the cell.
        let control = r["control_channel"].as_str().unwrap();
        for want in [
            "TLSv1.2",
            "DHE-RSA-",
            "peer certificate: 1024 bits RSA",
            "peer temporary key: 2048 bits DH",
        ] {
            assert!(control.contains(want), "{want}: {control}");
        }
        assert_eq!(r["data_channel"], "cipher 'AES-256-CBC', auth 'SHA256'");
        // The window held at least the connections asked for, each with its two times.
        let k = r["connections"].as_u64().unwrap();
        assert!(k >= 20, "{r}");
        assert_eq!(r["connect"]["n"].as_u64().unwrap(), k);
        let (p50, p95) = (
            r["connect"]["p50_ms"].as_f64().unwrap(),
            r["connect"]["p95_ms"].as_f64().unwrap(),
        );
        assert!(0.0 < p50 && p50 <= p95, "{r}");
        assert!(r["start_to_ready"]["p50_ms"].as_f64().unwrap() >= r["connect"]["min_ms"].as_f64().unwrap());
        assert!(r["server_cpu_ms_per_connection"].as_f64().unwrap() > 0.0, "{r}");
        // Pacing holds the rate: no client starts before its slot, so by the window's end
        // each has started at most floor(rate × elapsed) + 1 connections (counted). Elapsed
        // is the warm-up and the window, and the few ms of starting the client threads and
        // reading the CPU times between them: 0.25 s allowed for those.
        if let Some(rate) = r["pace"].as_f64() {
            let elapsed = warmup + r["window_s"].as_f64().unwrap() + 0.25;
            let most = clients * ((rate * elapsed).floor() as u64 + 1);
            assert!(
                k <= most,
                "{k} connections, at most {most} at {rate}/s for {elapsed} s: {r}"
            );
        }
    }
    // The store holds the run; show and the report render it.
    let show = cryptoscope()
        .args(["show", "latest", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let shown = stdout_of(&show);
    assert!(show.status.success(), "{}", stderr_of(&show));
    for want in ["conn/min", "rsa-1024", "paced-2/s", "unpaced"] {
        assert!(shown.contains(want), "{want}:\n{shown}");
    }
    let html = d.path().join("r.html");
    let rep = cryptoscope()
        .args(["report", "latest", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&html)
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", stderr_of(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("OpenVPN server: connections"), "no section");
    nothing_left();
}

#[test]
fn ctrl_c_keeps_the_finished_cells_and_leaves_nothing() {
    let _serial = serial(); // creates namespaces and starts daemons
    if !cryptoscope_testkit::needs_root("network namespaces") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (db, json) = (d.path().join("r.db"), d.path().join("o.json"));
    let mut child = interruptible(&mut std::process::Command::new(bin()))
        .args([
            "openvpn-server",
            "--quick",
            "--rsa",
            "1024",
            "--pace",
            "off",
            "--clients",
            "2",
            "--window",
            "2",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once the second cell has started (the run says so), whatever the
    // machine's speed: the first is kept, the second torn down half-measured.
    let err = interrupt_at(&mut child, "[2/2]");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}\n{err}", stdout_of(&out));
    assert!(err.contains("interrupted"), "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(v["setup"]["interrupted"], true);
    nothing_left();
}

#[test]
fn bad_input_is_a_usage_error() {
    let _serial = serial(); // creates namespaces and starts daemons
    for (args, want) in [
        (vec!["--rsa", "2048,512"], "unknown RSA size `512`"),
        (vec!["--pace", "1,fast"], "bad pace `fast`"),
        (vec!["--clients", "0"], "--clients is 1 to 200"),
        (vec!["--window", "0"], "--window must be a positive"),
        (vec!["--accel", "maybe"], "invalid value 'maybe' for '--accel"),
    ] {
        let out = cryptoscope()
            .args(["openvpn-server", "--quick", "--quiet"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(want), "{args:?}: {}", stderr_of(&out));
        assert_eq!(
            stderr_of(&out).trim().lines().count(),
            1,
            "{args:?}: {}",
            stderr_of(&out)
        );
    }
    assert!(leftovers().is_empty(), "{}", leftovers());
}
