//! `cryptoscope tunnel --quick` end to end with the real daemons: OpenVPN (static key and
//! TLS), strongSwan with kernel-libipsec, wireguard-go and OpenSSH between two network
//! namespaces; couples a tunnel cannot carry are listed with the reason; results reach the
//! store and the report; nothing is left behind, also after Ctrl-C.

mod common;

use common::*;
use serde_json::Value;

fn leftovers() -> String {
    common::leftovers(
        "cstun",
        "[c]ryptoscope-tunnel-[0-9]+|/usr/lib/ipsec/[c]haron|[w]ireguard-go -f wcs",
    )
}

/// A row of the quick tunnel run, checked: measured (the whole file sent, the pings back,
/// CPU and the ratio to the baseline) or not supported with its reason. Whether it was
/// measured.
fn measured_row(r: &Value) -> bool {
    let bytes = 32u64 << 20;
    match r["status"].as_str().unwrap() {
        "ok" => {
            // The whole file went in (iperf3's receiver stops counting at the sender's
            // end message, so a little of it may be missing from the received count).
            assert_eq!(r["transfer"]["bytes_sent"].as_u64().unwrap(), bytes, "{r}");
            assert!(r["transfer"]["bytes"].as_f64().unwrap() as u64 > bytes / 2, "{r}");
            assert!(r["transfer"]["mb_per_s"].as_f64().unwrap() > 0.0, "{r}");
            if r["tunnel"] == "ssh" {
                assert!(r["ping"].is_null(), "{r}");
            } else {
                for s in ["64", "1400", "8000"] {
                    // The pings came back through the tunnel. User-space tunnels on a
                    // loaded 2-vCPU guest drop some (CI saw one of ten lost at 8000 bytes
                    // with IPsec and at 64 bytes with another tunnel): up to 30 % may be
                    // lost, but most must come back, and the report counts the loss.
                    let (sent, got) = (
                        r["ping"][s]["sent"].as_u64().unwrap(),
                        r["ping"][s]["received"].as_u64().unwrap(),
                    );
                    assert!(sent > 0 && got > 0 && got <= sent, "{r}");
                    assert!(r["ping"][s]["p50_ms"].as_f64().unwrap() > 0.0, "{r}");
                }
            }
            if r["tunnel"] != "none" && !r["data_path"].as_str().unwrap().starts_with("kernel: the wireguard") {
                assert!(r["transfer"]["cpu_a_pct"].as_f64().unwrap() >= 0.0, "{r}");
                assert!(r["throughput_vs_plain"].as_f64().unwrap() > 0.0, "{r}");
            }
        }
        "not supported" => {
            assert!(!r["reason"].as_str().unwrap().is_empty(), "{r}");
            return false;
        }
        s => panic!("{s}: {r}"),
    }
    true
}

/// Each row names its data path, which follows what the kernel's probe found (ours has
/// neither ESP nor the wireguard module: user space).
fn data_paths_follow_the_kernel(v: &Value, find: &dyn Fn(&str, &str) -> Value) {
    let kernel = v["setup"]["kernel"].as_str().unwrap();
    let (ipsec, wg) = (find("ipsec", "aes-256-gcm"), find("wireguard", "chacha20-poly1305"));
    let (ipsec_path, wg_path) = (ipsec["data_path"].as_str().unwrap(), wg["data_path"].as_str().unwrap());
    if kernel.starts_with("ESP: yes") {
        assert!(ipsec_path.starts_with("kernel: ESP through xfrm"), "{kernel}: {ipsec}");
        assert!(
            ipsec["software"].as_str().unwrap().contains("ESP in the kernel"),
            "{ipsec}"
        );
    } else {
        assert!(kernel.starts_with("ESP: no (the kernel refused: "), "{kernel}");
        assert!(ipsec_path.contains("kernel-libipsec"), "{kernel}: {ipsec}");
        assert!(
            ipsec["software"].as_str().unwrap().contains("kernel-libipsec"),
            "{ipsec}"
        );
    }
    if kernel.contains("WireGuard: yes") {
        assert_eq!(wg_path, "kernel: the wireguard module", "{kernel}");
        assert!(wg["transfer"]["cpu_a_pct"].is_null(), "no process to read: {wg}");
    } else {
        assert!(kernel.contains("WireGuard: no (the kernel refused: "), "{kernel}");
        assert!(wg_path.contains("wireguard-go"), "{kernel}: {wg}");
    }
}

#[test]
fn every_tunnel_and_couple_quick() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    if !cryptoscope_testkit::needs_root("network namespaces") {
        let out = cryptoscope().args(["tunnel", "--quick"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr_of(&out).contains("needs root"), "{}", stderr_of(&out));
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (db, json) = (d.path().join("r.db"), d.path().join("t.json"));
    let out = cryptoscope()
        .args([
            "tunnel",
            "--quick",
            "--quiet",
            "--sizes",
            "64,1400,8000",
            "--repeats",
            "2",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // The baseline, then 5 tunnels x 5 couples.
    assert_eq!(rows[0]["tunnel"], "none");
    assert_eq!(rows.len(), 1 + 25, "{rows:?}");
    let measured = rows.iter().filter(|r| measured_row(r)).count();
    // openvpn-static 3, openvpn-tls 3, ipsec 3, wireguard 1, ssh 3, and the baseline.
    assert_eq!(measured, 14, "{text}");
    // Two interleaved repeats of each: the median within its interval (the range of two,
    // 50 % coverage), and a verdict against the baseline on every tunnel row.
    assert_eq!(v["setup"]["repeats"], 2);
    for r in rows.iter().filter(|r| r["status"] == "ok") {
        let m = &r["repeats"]["mb_per_s"];
        assert_eq!(r["repeats"]["n"], 2, "{r}");
        assert_eq!(m["values"].as_array().unwrap().len(), 2, "{r}");
        let (lo, med, hi) = (
            m["low"].as_f64().unwrap(),
            m["median"].as_f64().unwrap(),
            m["high"].as_f64().unwrap(),
        );
        assert!(lo <= med && med <= hi && m["coverage"] == 0.5, "{r}");
        if r["tunnel"] != "none" {
            let v = r["repeats"]["vs_plain"].as_str().unwrap();
            assert!(["slower", "faster", "no difference shown"].contains(&v), "{r}");
        }
    }
    assert!(text.contains("medians over 2 interleaved repeats"), "{text}");
    let find = |t: &str, c: &str| rows.iter().find(|r| r["tunnel"] == t && r["couple"] == c).unwrap();
    assert_eq!(find("ssh", "none:none")["status"], "not supported");
    assert_eq!(find("wireguard", "aes-256-gcm")["status"], "not supported");
    assert_eq!(find("openvpn-static", "none:none")["status"], "ok");
    data_paths_follow_the_kernel(&v, &|t, c| find(t, c).clone());
    assert!(find("ssh", "aes-256-gcm")["data_path"]
        .as_str()
        .unwrap()
        .starts_with("user space"));
    assert!(leftovers().is_empty(), "{}", leftovers());
    let html = d.path().join("report.html");
    let rep = cryptoscope()
        .args(["report", "latest", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&html)
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", stderr_of(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Tunnels: latency, throughput and CPU"),
        "no tunnel section"
    );
    let runs = cryptoscope().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(stdout_of(&runs).contains("tunnel"), "{}", stdout_of(&runs));
}

#[test]
fn soft_and_accelerated_and_ctrl_c_leaves_nothing() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    if !cryptoscope_testkit::needs_root("network namespaces") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let out = cryptoscope()
        .args([
            "tunnel",
            "--quick",
            "--quiet",
            "--tunnel",
            "ssh,wireguard",
            "--couple",
            "aes-256-gcm,chacha20-poly1305",
            "--sizes",
            "64",
            "--accel",
            "both",
            "--repeats",
            "1",
            "--db",
        ])
        .arg(&db)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    assert!(text.contains("Software versus accelerated"), "{text}");
    assert!(text.contains("nothing to mask"), "{text}");

    let mut child = interruptible(&mut std::process::Command::new(bin()))
        .args([
            "tunnel",
            "--tunnel",
            "ipsec,openvpn-static",
            "--couple",
            "aes-256-cbc:sha256",
            "--repeats",
            "2",
            "--pings",
            "2000",
            "--sizes",
            "64",
            "--db",
        ])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once the second configuration of the first round has started (the run
    // says so), whatever the machine's speed: the first is reported from its one repeat,
    // the second torn down half-built.
    let err = interrupt_at(&mut child, "[round 1/2] [2/");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}\n{err}", stdout_of(&out));
    assert!(err.contains("interrupted"), "{err}");
    // Teardown is polled, not waited for: the namespaces and daemons go within 30 s.
    let t = std::time::Instant::now();
    while !leftovers().is_empty() && t.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(leftovers().is_empty(), "{}", leftovers());
}

/// A tunnel's row of the hostile run, checked: the junk of each kind was sent and reached
/// the daemon, pings and a new handshake (or SSH login) got through it, and the transfer
/// was whole.
fn served_under_hostile_traffic(tunnel: &str, h: &Value, bytes: u64) {
    assert_eq!(h["served"], true, "{tunnel}: {h}");
    let t = &h["traffic"];
    let n = |k: &str| t[k].as_u64().unwrap();
    if tunnel == "ssh" {
        // Every kind of bad connection was made and accepted by sshd (a refused
        // connection would mean the traffic never reached it).
        for k in ["tcp_opened_and_dropped", "tcp_stalled_after_banner", "tcp_garbage"] {
            assert!(n(k) > 0, "{tunnel}: no {k}: {t}");
        }
        assert!(n("tcp_refused_or_failed") * 10 <= n("tcp_garbage"), "{t}");
        // A new login got through while the stalled connections held their slots
        // (0.4-1.1 s here; up to five tries, so a busy guest may take much longer).
        let login = h["new_login_s"].as_f64().unwrap();
        assert!(login > 0.0, "{h}");
        assert!(h["ping"].is_null());
    } else {
        assert!(
            n("garbage_datagrams") > 100 && n("half_handshakes") > 10,
            "{tunnel}: {t}"
        );
        if tunnel.starts_with("openvpn") {
            // OpenVPN drops datagrams from other addresses unread; these reach it.
            assert!(n("spoofed_datagrams") > 100, "{tunnel}: {t}");
        }
        // Pings came back through the tunnel under the junk (how many is the
        // machine's load to decide: no threshold).
        assert!(h["ping_loss"].as_f64().unwrap() < 1.0, "{tunnel}: {h}");
        assert!(h["latency_vs_calm"].as_f64().unwrap() > 0.0, "{h}");
        // A new session's handshake reached B through the junk and the half
        // handshakes, and traffic crossed the new session (OpenVPN's static key has no
        // handshake).
        if tunnel == "openvpn-static" {
            assert!(h["new_handshake_s"].is_null(), "{h}");
        } else {
            let s = h["new_handshake_s"]
                .as_f64()
                .unwrap_or_else(|| panic!("{tunnel}: no new handshake: {h}"));
            assert!(s > 0.0, "{tunnel}: {h}");
        }
    }
    assert_eq!(h["transfer"]["bytes_sent"].as_u64().unwrap(), bytes, "{h}");
    assert!(h["transfer"]["mb_per_s"].as_f64().unwrap() > 0.0, "{h}");
    assert!(h["throughput_vs_calm"].as_f64().unwrap() > 0.0, "{h}");
    assert!(h["traffic"]["seconds"].as_f64().unwrap() > 0.5, "{h}");
}

#[test]
fn every_tunnel_keeps_serving_under_hostile_traffic() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    if !cryptoscope_testkit::needs_root("network namespaces") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (db, json) = (d.path().join("r.db"), d.path().join("t.json"));
    let bytes = 8u64 << 20;
    let out = cryptoscope()
        .args([
            "tunnel",
            "--quick",
            "--quiet",
            "--hostile",
            "--repeats",
            "1",
            "--couple",
            "aes-256-cbc:sha256,chacha20-poly1305",
            "--sizes",
            "64,1400",
            "--bytes",
            &bytes.to_string(),
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    assert!(text.contains("Under hostile traffic"), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for r in v["rows"].as_array().unwrap() {
        if r["status"] != "ok" || r["tunnel"] == "none" {
            continue;
        }
        let tunnel = r["tunnel"].as_str().unwrap();
        seen.insert(tunnel.to_string());
        served_under_hostile_traffic(tunnel, &r["hostile"], bytes);
    }
    let all: std::collections::BTreeSet<String> = ["openvpn-static", "openvpn-tls", "ipsec", "wireguard", "ssh"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, all, "{text}");
    assert!(leftovers().is_empty(), "{}", leftovers());
    // The stored run shows the table too.
    let show = cryptoscope()
        .args(["show", "latest", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(stdout_of(&show).contains("hostile traffic"), "{}", stdout_of(&show));
    // A tunnel run has no primitive measurements: no empty speed table.
    assert!(!stdout_of(&show).contains("median cycles"), "{}", stdout_of(&show));

    // The check can fail, and says so: OpenVPN in TLS mode without --tls-crypt lets
    // datagrams forged with the peer's address into its TLS state machine, which loses
    // its keys' synchronisation, and the data channel stops (a finding about that
    // configuration, which is why OpenVPN recommends --tls-crypt or --tls-auth).
    let out = cryptoscope()
        .args([
            "tunnel",
            "--quick",
            "--quiet",
            "--hostile",
            "--repeats",
            "1",
            "--no-tls-crypt",
            "--tunnel",
            "openvpn-tls",
            "--couple",
            "chacha20-poly1305",
            "--sizes",
            "64",
            "--bytes",
            &bytes.to_string(),
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}\n{}", stdout_of(&out), stderr_of(&out));
    assert!(
        stderr_of(&out).contains("not served under hostile traffic"),
        "{}",
        stderr_of(&out)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tunnel"] == "openvpn-tls")
        .unwrap();
    assert_eq!(row["hostile"]["served"], false, "{row}");
    assert!(stdout_of(&out).contains("NO: "), "{}", stdout_of(&out));
    assert!(leftovers().is_empty(), "{}", leftovers());
}

#[test]
fn bad_input_is_a_usage_error() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    for (args, want) in [
        (vec!["--tunnel", "ipsec,pptp"], "unknown tunnel `pptp`"),
        (vec!["--couple", "rc4:md5"], "unknown couple `rc4:md5`"),
        (vec!["--sizes", "64,huge"], "bad ping size `huge`"),
        (
            vec!["--data-path", "fast"],
            "invalid value 'fast' for '--data-path <PATH>'",
        ),
    ] {
        let out = cryptoscope()
            .args(["tunnel", "--quick", "--quiet"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(want), "{args:?}: {}", stderr_of(&out));
    }
}

/// `--data-path kernel` where the kernel lacks the path: one line with the kernel's own
/// reason, exit 2, nothing started; where it has it, the check passes that point (the
/// study itself is `every_tunnel_and_couple_quick`'s).
#[test]
fn a_kernel_data_path_the_kernel_lacks_is_refused_with_its_reason() {
    let _serial = serial(); // creates network namespaces (the probe's own, unnamed)
    if !cryptoscope_testkit::needs_root("network namespaces") {
        return;
    }
    for (tunnel, what) in [("ipsec", "ESP"), ("wireguard", "WireGuard")] {
        let out = cryptoscope()
            .args([
                "tunnel",
                "--quick",
                "--quiet",
                "--tunnel",
                tunnel,
                "--couple",
                "chacha20-poly1305",
            ])
            .args(["--data-path", "kernel", "--bytes", "1"])
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let err = stderr_of(&out);
        if out.status.code() == Some(2) {
            assert!(
                err.contains(&format!("the kernel has no {what} data path (the kernel refused: ")),
                "{err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        } else {
            // This kernel has it: the run went on and took the kernel's path.
            cryptoscope_testkit::skip(&format!("the kernel has {what}: the refusal cannot be shown here"));
        }
    }
    assert!(leftovers().is_empty(), "{}", leftovers());
}
