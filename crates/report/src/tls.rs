//! TLS handshake results (`cryptoscope tls`): stored items, the terminal tables (one row per
//! configuration, and the study's "software versus accelerated" ratios) and the report's
//! section.

use crate::table::{duration, render};
use crate::AppResult;
pub use cryptoscope_model::apps::tls::DRIVER;
use cryptoscope_model::apps::tls::{Configuration, Measurement, Setup, Summary};
use cryptoscope_model::apps::Item;
use serde::Serialize;

/// Items to store: `setup`, then one per configuration (measured, failed or "does not fit").
pub fn items(setup: &Setup, rows: &[Configuration]) -> Vec<AppResult> {
    let mut out = vec![setup.to_app("setup")];
    out.extend(rows.iter().map(|r| r.to_app(r.key(setup))));
    out
}

/// The run's configurations (all but the set-up), typed.
pub fn configurations(apps: &[AppResult]) -> impl Iterator<Item = Configuration> + '_ {
    apps.iter()
        .filter(|a| a.item != "setup")
        .filter_map(Configuration::from_app)
}

/// A value as the stored JSON writes it (`null` when absent).
fn shown<T: Serialize>(v: &Option<T>) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A percentile of a summary, in nanoseconds or bytes.
fn pct(s: &Option<Summary>, p: fn(&Summary) -> u64) -> Option<f64> {
    s.as_ref().map(|s| p(s) as f64)
}

fn ms(ns: Option<f64>) -> String {
    ns.map_or("-".into(), duration)
}

fn count(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Handshakes a second: over repeats the median [interval], else the one window's.
fn rate(d: &Configuration, m: &Measurement) -> String {
    match d.repeats.as_ref().filter(|r| r.n > 1) {
        Some(r) => {
            let s = &r.handshakes_per_s;
            format!("{:.0} [{:.0}, {:.0}]", s.median, s.low, s.high)
        }
        None => count(m.handshakes_per_s, 0),
    }
}

/// Accelerated against software over repeats: `faster` or `slower` only where the two
/// intervals are apart.
fn verdict(accel: &Configuration, soft: &Configuration) -> Option<&'static str> {
    let (a, s) = (accel.repeats.as_ref()?, soft.repeats.as_ref()?);
    let (a, s) = (&a.handshakes_per_s, &s.handshakes_per_s);
    Some(if a.low > s.high {
        "faster"
    } else if a.high < s.low {
        "slower"
    } else {
        "no difference shown"
    })
}

fn cpu_pct(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:.0} %"))
}

/// The note of a configuration: why it was not measured, errors, a noisy window, and what
/// an experimental group is.
fn note(d: &Configuration) -> String {
    let m = d.measurement.as_ref();
    let first_error = m.and_then(|m| m.first_error.as_deref());
    let mut note = match d.status.as_str() {
        "does not fit" => format!(
            "does not fit: key shares {} / {} B, TLS limit {} B",
            shown(&d.client_share),
            shown(&d.server_share),
            shown(&d.limit)
        ),
        "failed" => format!(
            "FAILED: {}",
            d.error.as_deref().or(first_error).unwrap_or("no handshake completed")
        ),
        _ => String::new(),
    };
    if let Some(m) = m.filter(|m| d.status == "ok" && m.errors > 0) {
        note = format!("{} errors: {}", m.errors, first_error.unwrap_or(""));
    }
    // Paced clients whose starts came due while their last handshake still ran.
    if let Some(late) = m
        .and_then(|m| m.rest.get("late_starts"))
        .and_then(|v| v.as_u64())
        .filter(|n| *n > 0)
    {
        let w = format!("{late} paced starts late");
        note = if note.is_empty() { w } else { format!("{note}; {w}") };
    }
    if let Some(st) = m.and_then(|m| m.steal_pct).filter(|s| *s >= 10.0) {
        let w = format!("hypervisor stole {st:.0} % of CPU time: noisy");
        note = if note.is_empty() { w } else { format!("{note}; {w}") };
    }
    if let Some(g) = d.group_info.as_ref().filter(|g| g.kind == "experimental") {
        let code = g.code.unwrap_or(0);
        let subj = g.subject.as_deref().unwrap_or("");
        note = [format!("{subj}, code {code:#06x}"), note]
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
    }
    note
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
    for d in configurations(apps) {
        let mut row = vec![
            d.group.clone(),
            d.cert.clone().unwrap_or_else(|| "-".into()),
            d.accel.clone().unwrap_or_else(|| "-".into()),
        ];
        match &d.measurement {
            None => row.extend(std::iter::repeat_n("-".to_string(), 11)),
            Some(m) => row.extend([
                rate(&d, m),
                count(m.handshakes_per_min, 0),
                ms(pct(&m.connection_ns, |s| s.p50)),
                ms(pct(&m.connection_ns, |s| s.p95)),
                ms(pct(&m.connection_ns, |s| s.p99)),
                cpu_pct(m.server_cpu_pct.flatten()),
                m.server_cpu_s_per_handshake
                    .flatten()
                    .map_or("-".into(), |s| duration(s * 1e9)),
                count(m.handshakes_per_min_per_cpu_pct.flatten(), 1),
                count(pct(&m.bytes_client_to_server, |s| s.p50), 0),
                count(pct(&m.bytes_server_to_client, |s| s.p50), 0),
                count(pct(&m.round_trips, |s| s.p50), 0),
            ]),
        }
        row.push(note(&d));
        out.push(row);
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

/// Header and cells of the configurations measured under delay and loss (`--delay`,
/// `--loss`): latency percentiles of the sequential handshakes (p50 and p95 with their 95 %
/// intervals where every time was kept), the client's retransmissions, the packets of the
/// handshake's first two flights, and per direction the packets per handshake and the
/// emulator's drops, from its own counts.
pub fn conditions_rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut header = vec![
        "group",
        "cert",
        "delay",
        "loss",
        "handshakes",
        "p25",
        "p50 [95 % CI]",
        "p75",
        "p95 [95 % CI]",
        "retrans/hs",
        "flight 1 / 2",
        "pkts c→s/hs",
        "pkts s→c/hs",
        "dropped c→s",
        "dropped s→c",
        "via",
    ];
    let mut out = Vec::new();
    for d in configurations(apps) {
        let Some(c) = &d.conditions else { continue };
        let m = d.measurement.as_ref();
        let hs = m.map(|m| m.handshakes).filter(|h| *h > 0);
        // Namespace b holds the clients: b→a is client to server.
        let dir = |name: &str| c.directions.iter().find(|x| x.direction == name);
        // Per connection the emulator saw open (warm-up handshakes included); per
        // handshake counted by the client in results from before connections were counted.
        let per_hs = |name: &str| match (dir(name), hs) {
            (Some(x), _) if x.connections > 0 => format!("{:.1}", x.packets as f64 / x.connections as f64),
            (Some(x), Some(h)) => format!("{:.1}", x.packets as f64 / h as f64),
            _ => "-".into(),
        };
        // Median packets of the ClientHello's flight and of the server's answer.
        let flights = match (
            c.flights.iter().find(|f| f.flight == 1),
            c.flights.iter().find(|f| f.flight == 2),
        ) {
            (Some(a), Some(b)) => format!("{} / {}", a.segments_median, b.segments_median),
            (Some(a), None) => format!("{} / -", a.segments_median),
            _ => "-".into(),
        };
        let dropped = |name: &str| dir(name).map_or("-".into(), |x| format!("{} of {}", x.dropped, x.packets));
        let conn = m.and_then(|m| m.connection_ns.clone());
        let at = |p: u8, ci: bool| match d.latency.as_ref().and_then(|l| l.at(p)) {
            Some(x) if ci => format!("{} [{}, {}]", ms(Some(x.ns)), ms(Some(x.low_ns)), ms(Some(x.high_ns))),
            Some(x) => ms(Some(x.ns)),
            None => match p {
                50 => ms(pct(&conn, |s| s.p50)),
                95 => ms(pct(&conn, |s| s.p95)),
                _ => "-".into(),
            },
        };
        let retrans = match (
            m.and_then(|m| m.rest.get("client_retransmits_total"))
                .and_then(|v| v.as_f64()),
            hs,
        ) {
            (Some(r), Some(h)) => format!("{:.2}", r / h as f64),
            _ => "-".into(),
        };
        let mut row = vec![
            d.group.clone() + if d.hello_retry == Some(true) { " (HRR)" } else { "" },
            d.cert.clone().unwrap_or_else(|| "-".into()),
            format!("{} ms", c.delay_ms),
            format!("{} %", c.loss_pct),
            m.map_or("-".into(), |m| m.handshakes.to_string()),
            at(25, false),
            at(50, true),
            at(75, false),
            at(95, true),
            retrans,
            flights,
            per_hs("b→a"),
            per_hs("a→b"),
            dropped("b→a"),
            dropped("a→b"),
            c.mechanism.clone(),
        ];
        if d.status != "ok" {
            row.push(note(&d));
        }
        out.push(row);
    }
    if out.iter().any(|r| r.len() > header.len()) {
        header.push("note");
        for r in &mut out {
            if r.len() < header.len() {
                r.push(String::new());
            }
        }
    }
    (header, out)
}

/// The table of [`conditions_rows`], or `None` without such configurations.
pub fn conditions_table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = conditions_rows(apps);
    if rows.is_empty() {
        return None;
    }
    let right: Vec<bool> = (0..header.len()).map(|i| (2..15).contains(&i)).collect();
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
    let mine: Vec<Configuration> = configurations(apps).collect();
    let measured = |c: &Configuration, accel: &str| c.accel.as_deref() == Some(accel) && c.status == "ok";
    let mut out = Vec::new();
    for s in mine.iter().filter(|c| measured(c, "soft")) {
        let Some(h) = mine
            .iter()
            .find(|h| measured(h, "accel") && h.group == s.group && h.cert == s.cert && h.peer == s.peer)
        else {
            continue;
        };
        let (ms_, mh) = (s.measurement.as_ref(), h.measurement.as_ref());
        let hs = |m: Option<&Measurement>| m.and_then(|m| m.handshakes_per_s);
        let cpu = |m: Option<&Measurement>| m.and_then(|m| m.server_cpu_pct.flatten());
        let per_hs = |m: Option<&Measurement>| m.and_then(|m| m.server_cpu_s_per_handshake.flatten());
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("×{:.2}", a / b),
            _ => "-".into(),
        };
        out.push(vec![
            s.group.clone(),
            s.cert.clone().unwrap_or_else(|| "?".into()),
            count(hs(ms_), 0),
            count(hs(mh), 0),
            match verdict(h, s) {
                Some(v) => format!("{} ({v})", ratio(hs(mh), hs(ms_))),
                None => ratio(hs(mh), hs(ms_)),
            },
            cpu_pct(cpu(ms_)),
            cpu_pct(cpu(mh)),
            ratio(per_hs(ms_), per_hs(mh)),
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
    let Some(d) = apps.iter().filter(|a| a.item == "setup").find_map(Setup::from_app) else {
        return Vec::new();
    };
    let mut lines = vec![
        format!(
            "server: {}; clients: {} × {}; {}",
            d.server.as_deref().unwrap_or("?"),
            shown(&d.clients),
            d.client.as_deref().unwrap_or("?"),
            d.network.as_deref().unwrap_or("?")
        ),
        format!(
            "{} s warm-up, {} per configuration; {}; {}",
            shown(&d.warmup_s),
            match d.count {
                Some(n) => format!("{n} handshakes measured"),
                None => format!("{} s measured", shown(&d.duration_s)),
            },
            d.resumption.as_deref().unwrap_or(""),
            if d.request_bytes.unwrap_or(0) > 0 {
                format!("then {} bytes echoed", shown(&d.request_bytes))
            } else {
                "handshake, close_notify both ways, close".into()
            }
        ),
        format!(
            "connect = TCP connect + handshake at the client; bytes = TLS bytes each way up to the end of the handshake; RTT = times the client waited for an answer during the handshake (TCP's own round trip not counted); soft = OPENSSL_ia32cap={} (AES-NI and PCLMULQDQ masked)",
            d.mask.as_deref().unwrap_or("?")
        ),
        d.cpu.clone().unwrap_or_default(),
        match d.pace {
            Some(r) => format!("each client paced at {r} handshakes a second (late: paced starts taken after they were due)"),
            None => "clients back to back".into(),
        },
        match d.repeats {
            Some(n) => format!(
                "{n} repeats, interleaved (every configuration once per round): hs/s is the median [the median's order-statistic interval, {:.1} % coverage]; the other figures are the median repeat's; accel/soft says faster or slower only where the intervals are apart",
                100.0 * cryptoscope_measure::stats::median_ci_coverage(n as usize)
            ),
            None => "one window per configuration".into(),
        },
    ];
    lines.extend(d.window);
    if let Some(n) = d.netem {
        lines.push(format!("network conditions: {n}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(accel: &str, hs: f64, cpu: f64) -> Configuration {
        let connection_ns = Summary {
            p50: 1_000_000,
            p95: 2_000_000,
            p99: 3_000_000,
            ..Summary::default()
        };
        Configuration {
            peer: Some("rustls".into()),
            group: "X25519".into(),
            cert: Some("rsa-2048".into()),
            accel: Some(accel.into()),
            status: "ok".into(),
            measurement: Some(Measurement {
                handshakes_per_s: Some(hs),
                server_cpu_pct: Some(Some(cpu)),
                server_cpu_s_per_handshake: Some(Some(cpu / 100.0 / hs)),
                connection_ns: Some(connection_ns),
                ..Measurement::default()
            }),
            ..Configuration::default()
        }
    }

    fn rustls() -> Setup {
        Setup {
            peer: Some("rustls".into()),
            ..Setup::default()
        }
    }

    #[test]
    fn ratios_pair_soft_with_accelerated() {
        let apps = items(&rustls(), &[row("accel", 600.0, 50.0), row("soft", 200.0, 100.0)]);
        let (_, r) = ratio_rows(&apps);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0][4], "×3.00");
        // CPU per handshake: soft 1/200 per %, accel 0.5/600: ratio 6.
        assert_eq!(r[0][7], "×6.00");
    }

    #[test]
    fn does_not_fit_rows_say_why() {
        let unfit = Configuration {
            group: "Classic-McEliece-348864".into(),
            status: "does not fit".into(),
            client_share: Some(261120),
            server_share: Some(96),
            limit: Some(65535),
            ..Configuration::default()
        };
        let apps = items(&rustls(), &[unfit]);
        assert_eq!(apps[1].item, "rustls Classic-McEliece-348864 - -");
        let (_, r) = rows(&apps);
        assert!(r[0].last().unwrap().contains("261120"), "{:?}", r[0]);
    }
}
