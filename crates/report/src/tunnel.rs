//! Tunnel results (`cryptoscope tunnel`): stored items, the terminal tables (throughput,
//! latency and CPU per tunnel and couple; software versus accelerated) and the report's
//! section.

use crate::table::render;
use crate::AppResult;
use serde_json::Value;

/// The driver name under which tunnel items are stored.
pub const DRIVER: &str = "tunnel";

/// Items to store: `setup`, the baseline (`none`), then one per (tunnel, couple, accel).
pub fn items(setup: &Value, rows: &[Value]) -> Vec<AppResult> {
    let mut out = vec![AppResult {
        driver: DRIVER.into(),
        item: "setup".into(),
        data: setup.clone(),
    }];
    for r in rows {
        out.push(AppResult {
            driver: DRIVER.into(),
            item: format!(
                "{} {} {}",
                r["tunnel"].as_str().unwrap_or("?"),
                r["couple"].as_str().unwrap_or("-"),
                r["accel"].as_str().unwrap_or("-")
            ),
            data: r.clone(),
        });
    }
    out
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn ms(v: &Value) -> String {
    f(v).map_or("-".into(), |x| format!("{x:.3} ms"))
}

/// The ping sizes of the run, in order.
fn sizes(apps: &[AppResult]) -> Vec<String> {
    apps.iter()
        .find(|a| a.driver == DRIVER && a.item == "setup")
        .and_then(|s| s.data["sizes"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|v| v.to_string())
        .collect()
}

/// Header and cells: one row per configuration, ping p50 for the smallest, a middle and
/// the largest size.
pub fn rows(apps: &[AppResult]) -> (Vec<String>, Vec<Vec<String>>) {
    let sz = sizes(apps);
    let shown: Vec<String> = match sz.len() {
        0 => vec![],
        1..=3 => sz.clone(),
        n => vec![sz[0].clone(), sz[n / 2].clone(), sz[n - 1].clone()],
    };
    let mut header: Vec<String> = ["tunnel", "couple", "cpu", "MB/s", "vs plain", "CPU A", "CPU B"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for s in &shown {
        header.push(format!("ping {s} B"));
    }
    header.push("note".into());
    let mut out = Vec::new();
    for a in apps.iter().filter(|a| a.driver == DRIVER && a.item != "setup") {
        let d = &a.data;
        let t = &d["transfer"];
        let mut row = vec![
            d["tunnel"].as_str().unwrap_or("?").to_string(),
            d["couple"].as_str().unwrap_or("-").to_string(),
            d["accel"].as_str().unwrap_or("-").to_string(),
            f(&t["mb_per_s"]).map_or("-".into(), |x| format!("{x:.1}")),
            f(&d["throughput_vs_plain"]).map_or("-".into(), |x| format!("{:.0} %", x * 100.0)),
            f(&t["cpu_a_pct"]).map_or("-".into(), |x| format!("{x:.0} %")),
            f(&t["cpu_b_pct"]).map_or("-".into(), |x| format!("{x:.0} %")),
        ];
        for s in &shown {
            row.push(ms(&d["ping"][s]["p50_ms"]));
        }
        let note = match d["status"].as_str().unwrap_or("?") {
            "not supported" => format!("not supported: {}", d["reason"].as_str().unwrap_or("")),
            "failed" => format!("FAILED: {}", d["error"].as_str().unwrap_or("")),
            _ if d["tunnel"] == "none" => "the same veth path without a tunnel".to_string(),
            _ => {
                let mut n = d["software"].as_str().unwrap_or("").to_string();
                if let Some(p) = d["ping_note"].as_str() {
                    n = format!("{n}; {p}");
                }
                n
            }
        };
        row.push(note);
        out.push(row);
    }
    (header, out)
}

pub fn table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = rows(apps);
    if rows.is_empty() {
        return None;
    }
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..h.len()).map(|i| i >= 3 && i + 1 < h.len()).collect();
    Some(render(&h, &rows, &right))
}

/// Software versus accelerated: throughput and CPU for every (tunnel, couple) run both ways.
pub fn ratio_rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "tunnel",
        "couple",
        "MB/s soft",
        "MB/s accel",
        "accel/soft",
        "CPU A soft",
        "CPU A accel",
    ];
    let mine: Vec<&AppResult> = apps
        .iter()
        .filter(|a| a.driver == DRIVER && a.data["status"] == "ok")
        .collect();
    let mut out = Vec::new();
    for s in mine.iter().filter(|a| a.data["accel"] == "soft") {
        let Some(h) = mine.iter().find(|a| {
            a.data["accel"] == "accel" && a.data["tunnel"] == s.data["tunnel"] && a.data["couple"] == s.data["couple"]
        }) else {
            continue;
        };
        let (ts, th) = (&s.data["transfer"], &h.data["transfer"]);
        out.push(vec![
            s.data["tunnel"].as_str().unwrap_or("?").into(),
            s.data["couple"].as_str().unwrap_or("?").into(),
            f(&ts["mb_per_s"]).map_or("-".into(), |x| format!("{x:.1}")),
            f(&th["mb_per_s"]).map_or("-".into(), |x| format!("{x:.1}")),
            match (f(&th["mb_per_s"]), f(&ts["mb_per_s"])) {
                (Some(a), Some(b)) if b > 0.0 => format!("×{:.2}", a / b),
                _ => "-".into(),
            },
            f(&ts["cpu_a_pct"]).map_or("-".into(), |x| format!("{x:.0} %")),
            f(&th["cpu_a_pct"]).map_or("-".into(), |x| format!("{x:.0} %")),
        ]);
    }
    (header, out)
}

pub fn ratio_table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = ratio_rows(apps);
    if rows.is_empty() {
        return None;
    }
    Some(render(&header, &rows, &[false, false, true, true, true, true, true]))
}

/// Under hostile traffic (`--hostile`): per configuration, whether the well-behaved
/// client was still served, what the third party sent, and what it cost.
pub fn hostile_rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "tunnel",
        "couple",
        "accel",
        "served",
        "hostile traffic",
        "ping loss",
        "p50 vs calm",
        "MB/s",
        "vs calm",
        "new session",
    ];
    let mut out = Vec::new();
    for a in apps
        .iter()
        .filter(|a| a.driver == DRIVER && a.data["hostile"].is_object())
    {
        let h = &a.data["hostile"];
        let t = &h["traffic"];
        let n = |k: &str| t[k].as_u64().unwrap_or(0);
        let mut traffic = Vec::new();
        if n("garbage_datagrams") + n("half_handshakes") > 0 {
            traffic.push(format!(
                "{} junk datagrams, {} half handshakes",
                n("garbage_datagrams"),
                n("half_handshakes")
            ));
        }
        if n("spoofed_datagrams") > 0 {
            traffic.push(format!("{} from the peer's forged address", n("spoofed_datagrams")));
        }
        let tcp = n("tcp_opened_and_dropped") + n("tcp_stalled_after_banner") + n("tcp_garbage");
        if tcp > 0 {
            traffic.push(format!(
                "{tcp} connections ({} dropped, {} stalled, {} garbage)",
                n("tcp_opened_and_dropped"),
                n("tcp_stalled_after_banner"),
                n("tcp_garbage")
            ));
        }
        out.push(vec![
            a.data["tunnel"].as_str().unwrap_or("?").into(),
            a.data["couple"].as_str().unwrap_or("?").into(),
            a.data["accel"].as_str().unwrap_or("?").into(),
            if h["served"] == true {
                "yes".into()
            } else {
                format!("NO: {}", h["why"].as_str().unwrap_or("?"))
            },
            traffic.join("; "),
            f(&h["ping_loss"]).map_or("-".into(), |x| format!("{:.0} %", x * 100.0)),
            f(&h["latency_vs_calm"]).map_or("-".into(), |x| format!("×{x:.2}")),
            f(&h["transfer"]["mb_per_s"]).map_or("-".into(), |x| format!("{x:.1}")),
            f(&h["throughput_vs_calm"]).map_or("-".into(), |x| format!("×{x:.2}")),
            match (
                f(&h["new_login_s"]),
                h["new_login_attempts"].as_u64(),
                f(&h["new_handshake_s"]),
            ) {
                (Some(x), Some(1), _) => format!("login {x:.2} s"),
                (Some(x), Some(n), _) => format!("login {x:.2} s, {n} tries"),
                (_, _, Some(x)) => format!("handshake {x:.2} s"),
                _ => "-".into(),
            },
        ]);
    }
    (header, out)
}

pub fn hostile_table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = hostile_rows(apps);
    if rows.is_empty() {
        return None;
    }
    let right = [false, false, false, false, false, true, true, true, true, true];
    Some(render(&header, &rows, &right))
}

pub fn setup_lines(apps: &[AppResult]) -> Vec<String> {
    let Some(s) = apps.iter().find(|a| a.driver == DRIVER && a.item == "setup") else {
        return Vec::new();
    };
    let d = &s.data;
    vec![
        format!(
            "{}; {} pings per size (sizes {}), {} bytes per transfer",
            d["network"].as_str().unwrap_or("?"),
            d["pings_per_size"],
            d["sizes"].as_array().map(|a| a.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")).unwrap_or_default(),
            d["transfer_bytes"]
        ),
        d["transfer"].as_str().unwrap_or("").to_string(),
        d["cpu"].as_str().unwrap_or("").to_string(),
        format!("soft = OPENSSL_ia32cap={} in both endpoints (AES-NI and PCLMULQDQ masked); ping columns are p50 round-trip times", d["mask"].as_str().unwrap_or("?")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unsupported_couples_carry_their_reason_and_ratios_pair_up() {
        let setup = json!({"sizes": [64, 1400, 16000]});
        let rows = [
            json!({"tunnel": "none", "couple": "-", "accel": "-", "status": "ok", "transfer": {"mb_per_s": 400.0}}),
            json!({"tunnel": "ssh", "couple": "none:none", "accel": "-", "status": "not supported", "reason": "OpenSSH has no `none` cipher"}),
            json!({"tunnel": "ssh", "couple": "aes-256-gcm", "accel": "accel", "status": "ok", "transfer": {"mb_per_s": 150.0, "cpu_a_pct": 90.0}}),
            json!({"tunnel": "ssh", "couple": "aes-256-gcm", "accel": "soft", "status": "ok", "transfer": {"mb_per_s": 50.0, "cpu_a_pct": 100.0}}),
        ];
        let apps = items(&setup, &rows);
        let (h, r) = super::rows(&apps);
        assert_eq!(h.iter().filter(|c| c.starts_with("ping")).count(), 3);
        assert!(r[1].last().unwrap().contains("OpenSSH has no `none` cipher"));
        let (_, rr) = ratio_rows(&apps);
        assert_eq!(rr.len(), 1);
        assert_eq!(rr[0][4], "×3.00");
    }

    #[test]
    fn hostile_rows_say_who_was_served_and_how_long_a_new_session_took() {
        let setup = json!({"sizes": [64]});
        let rows = [
            json!({"tunnel": "ssh", "couple": "aes-256-gcm", "accel": "accel", "status": "ok",
                   "hostile": {"served": true, "traffic": {"tcp_opened_and_dropped": 3, "tcp_stalled_after_banner": 2, "tcp_garbage": 1},
                               "transfer": {"mb_per_s": 120.0}, "new_login_s": 0.5, "new_login_attempts": 3}}),
            json!({"tunnel": "wireguard", "couple": "chacha20-poly1305", "accel": "-", "status": "ok",
                   "hostile": {"served": true, "traffic": {"garbage_datagrams": 10, "half_handshakes": 4},
                               "ping_loss": 0.0, "transfer": {"mb_per_s": 300.0}, "new_handshake_s": 0.25}}),
            json!({"tunnel": "ipsec", "couple": "aes-128-gcm", "accel": "soft", "status": "ok",
                   "hostile": {"served": false, "why": "no new handshake", "traffic": {}, "transfer": {}}}),
        ];
        let apps = items(&setup, &rows);
        let (h, r) = hostile_rows(&apps);
        assert_eq!(h.last(), Some(&"new session"));
        assert_eq!(r.len(), 3);
        assert_eq!(r[0][9], "login 0.50 s, 3 tries");
        assert_eq!(r[0][4], "6 connections (3 dropped, 2 stalled, 1 garbage)");
        assert_eq!(r[1][9], "handshake 0.25 s");
        assert_eq!(r[1][4], "10 junk datagrams, 4 half handshakes");
        assert_eq!(r[2][3], "NO: no new handshake");
        assert_eq!(r[2][9], "-");
    }
}
