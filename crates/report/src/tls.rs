//! TLS handshake results (`cryptoscope tls`): stored items, the terminal tables (one row per
//! configuration, and the study's "software versus accelerated" ratios) and the report's
//! section.

use crate::table::{duration, render};
use crate::AppResult;
use serde_json::Value;

/// The driver name under which TLS items are stored.
pub const DRIVER: &str = "tls";

/// Items to store: `setup`, then one per configuration (measured, failed or "does not fit").
pub fn items(setup: &Value, rows: &[Value]) -> Vec<AppResult> {
    let mut out = vec![AppResult {
        driver: DRIVER.into(),
        item: "setup".into(),
        data: setup.clone(),
    }];
    for r in rows {
        let item = format!(
            "{} {} {} {}",
            r["peer"].as_str().unwrap_or(setup["peer"].as_str().unwrap_or("?")),
            r["group"].as_str().unwrap_or("?"),
            r["cert"].as_str().unwrap_or("-"),
            r["accel"].as_str().unwrap_or("-")
        );
        out.push(AppResult {
            driver: DRIVER.into(),
            item,
            data: r.clone(),
        });
    }
    out
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn ms(ns: &Value) -> String {
    f(ns).map_or("-".into(), duration)
}

fn count(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Header and cells, one row per configuration.
pub fn rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "group",
        "cert",
        "cpu",
        "hs/s",
        "hs/min",
        "connect p50",
        "p95",
        "p99",
        "server CPU",
        "CPU/hs",
        "hs/min per CPU%",
        "bytes c→s",
        "bytes s→c",
        "RTT",
        "note",
    ];
    let mut out = Vec::new();
    for a in apps.iter().filter(|a| a.driver == DRIVER && a.item != "setup") {
        let d = &a.data;
        let m = &d["measurement"];
        let status = d["status"].as_str().unwrap_or("?");
        let mut note = match status {
            "does not fit" => format!(
                "does not fit: key shares {} / {} B, TLS limit {} B",
                d["client_share"], d["server_share"], d["limit"]
            ),
            "failed" => format!(
                "FAILED: {}",
                d["error"]
                    .as_str()
                    .or(m["first_error"].as_str())
                    .unwrap_or("no handshake completed")
            ),
            _ => String::new(),
        };
        if status == "ok" && m["errors"].as_u64().unwrap_or(0) > 0 {
            note = format!("{} errors: {}", m["errors"], m["first_error"].as_str().unwrap_or(""));
        }
        if let Some(st) = f(&m["steal_pct"]).filter(|s| *s >= 10.0) {
            let w = format!("hypervisor stole {st:.0} % of CPU time: noisy");
            note = if note.is_empty() { w } else { format!("{note}; {w}") };
        }
        if d["group_info"]["kind"] == "experimental" {
            let code = d["group_info"]["code"].as_u64().unwrap_or(0);
            let subj = d["group_info"]["subject"].as_str().unwrap_or("");
            note = [format!("{subj}, code {code:#06x}"), note]
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("; ");
        }
        if m.is_null() {
            out.push(vec![
                d["group"].as_str().unwrap_or("?").into(),
                d["cert"].as_str().unwrap_or("-").into(),
                d["accel"].as_str().unwrap_or("-").into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                note,
            ]);
            continue;
        }
        out.push(vec![
            d["group"].as_str().unwrap_or("?").into(),
            d["cert"].as_str().unwrap_or("-").into(),
            d["accel"].as_str().unwrap_or("-").into(),
            count(f(&m["handshakes_per_s"]), 0),
            count(f(&m["handshakes_per_min"]), 0),
            ms(&m["connection_ns"]["p50"]),
            ms(&m["connection_ns"]["p95"]),
            ms(&m["connection_ns"]["p99"]),
            f(&m["server_cpu_pct"]).map_or("-".into(), |p| format!("{p:.0} %")),
            f(&m["server_cpu_s_per_handshake"]).map_or("-".into(), |s| duration(s * 1e9)),
            count(f(&m["handshakes_per_min_per_cpu_pct"]), 1),
            count(f(&m["bytes_client_to_server"]["p50"]), 0),
            count(f(&m["bytes_server_to_client"]["p50"]), 0),
            count(f(&m["round_trips"]["p50"]), 0),
            note,
        ]);
    }
    (header, out)
}

/// The configurations table, or `None` when the run has no TLS items.
pub fn table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = rows(apps);
    if rows.is_empty() {
        return None;
    }
    let right: Vec<bool> = (0..header.len()).map(|i| (3..14).contains(&i)).collect();
    Some(render(&header, &rows, &right))
}

/// The study's "soft versus accelerator" columns: for every (group, cert) measured both
/// ways, accelerated over software for handshakes per second, server CPU and CPU per
/// handshake.
pub fn ratio_rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "group",
        "cert",
        "hs/s soft",
        "hs/s accel",
        "accel/soft",
        "CPU soft",
        "CPU accel",
        "CPU/hs soft÷accel",
    ];
    let mine: Vec<&AppResult> = apps
        .iter()
        .filter(|a| a.driver == DRIVER && a.item != "setup")
        .collect();
    let mut out = Vec::new();
    for s in mine
        .iter()
        .filter(|a| a.data["accel"] == "soft" && a.data["status"] == "ok")
    {
        let Some(h) = mine.iter().find(|a| {
            a.data["accel"] == "accel"
                && a.data["status"] == "ok"
                && a.data["group"] == s.data["group"]
                && a.data["cert"] == s.data["cert"]
                && a.data["peer"] == s.data["peer"]
        }) else {
            continue;
        };
        let (ms_, mh) = (&s.data["measurement"], &h.data["measurement"]);
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("×{:.2}", a / b),
            _ => "-".into(),
        };
        out.push(vec![
            s.data["group"].as_str().unwrap_or("?").into(),
            s.data["cert"].as_str().unwrap_or("?").into(),
            count(f(&ms_["handshakes_per_s"]), 0),
            count(f(&mh["handshakes_per_s"]), 0),
            ratio(f(&mh["handshakes_per_s"]), f(&ms_["handshakes_per_s"])),
            f(&ms_["server_cpu_pct"]).map_or("-".into(), |p| format!("{p:.0} %")),
            f(&mh["server_cpu_pct"]).map_or("-".into(), |p| format!("{p:.0} %")),
            ratio(
                f(&ms_["server_cpu_s_per_handshake"]),
                f(&mh["server_cpu_s_per_handshake"]),
            ),
        ]);
    }
    (header, out)
}

pub fn ratio_table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = ratio_rows(apps);
    if rows.is_empty() {
        return None;
    }
    Some(render(
        &header,
        &rows,
        &[false, false, true, true, true, true, true, true],
    ))
}

/// One line per fact of the set-up.
pub fn setup_lines(apps: &[AppResult]) -> Vec<String> {
    let Some(s) = apps.iter().find(|a| a.driver == DRIVER && a.item == "setup") else {
        return Vec::new();
    };
    let d = &s.data;
    let mut lines = vec![
        format!(
            "server: {}; clients: {} × {}; {}",
            d["server"].as_str().unwrap_or("?"),
            d["clients"],
            d["client"].as_str().unwrap_or("?"),
            d["network"].as_str().unwrap_or("?")
        ),
        format!(
            "{} s warm-up, {} per configuration; {}; {}",
            d["warmup_s"],
            match d["count"].as_u64() {
                Some(n) => format!("{n} handshakes measured"),
                None => format!("{} s measured", d["duration_s"]),
            },
            d["resumption"].as_str().unwrap_or(""),
            if d["request_bytes"].as_u64().unwrap_or(0) > 0 {
                format!("then {} bytes echoed", d["request_bytes"])
            } else {
                "handshake, close_notify both ways, close".into()
            }
        ),
        format!(
            "connect = TCP connect + handshake at the client; bytes = TLS bytes each way up to the end of the handshake; RTT = times the client waited for an answer during the handshake (TCP's own round trip not counted); soft = OPENSSL_ia32cap={} (AES-NI and PCLMULQDQ masked)",
            d["mask"].as_str().unwrap_or("?")
        ),
        d["cpu"].as_str().unwrap_or("").to_string(),
    ];
    if let Some(w) = d["window"].as_str() {
        lines.push(w.to_string());
    }
    if let Some(n) = d["netem"].as_str() {
        lines.push(format!("network conditions: {n}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(accel: &str, hs: f64, cpu: f64) -> Value {
        json!({"peer": "rustls", "group": "X25519", "cert": "rsa-2048", "accel": accel, "status": "ok",
               "measurement": {"handshakes_per_s": hs, "server_cpu_pct": cpu,
                               "server_cpu_s_per_handshake": cpu / 100.0 / hs,
                               "connection_ns": {"p50": 1e6, "p95": 2e6, "p99": 3e6}}})
    }

    #[test]
    fn ratios_pair_soft_with_accelerated() {
        let apps = items(
            &json!({"peer": "rustls"}),
            &[row("accel", 600.0, 50.0), row("soft", 200.0, 100.0)],
        );
        let (_, r) = ratio_rows(&apps);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0][4], "×3.00");
        // CPU per handshake: soft 1/200 per %, accel 0.5/600: ratio 6.
        assert_eq!(r[0][7], "×6.00");
    }

    #[test]
    fn does_not_fit_rows_say_why() {
        let apps = items(
            &json!({"peer": "rustls"}),
            &[
                json!({"group": "Classic-McEliece-348864", "status": "does not fit", "client_share": 261120, "server_share": 96, "limit": 65535}),
            ],
        );
        let (_, r) = rows(&apps);
        assert!(r[0].last().unwrap().contains("261120"), "{:?}", r[0]);
    }
}
