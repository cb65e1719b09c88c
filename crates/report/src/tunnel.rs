//! Tunnel results (`cryptoscope tunnel`): stored items, the terminal tables (throughput,
//! latency and CPU per tunnel and couple; software versus accelerated) and the report's
//! section.

use crate::table::render;
use crate::AppResult;
pub use cryptoscope_model::apps::tunnel::DRIVER;
use cryptoscope_model::apps::tunnel::{Row, Setup, Status};
use cryptoscope_model::apps::Item;

/// Items to store: `setup`, the baseline (`none - -`), then one per (tunnel, couple, accel).
pub fn items(setup: &Setup, rows: &[Row]) -> Vec<AppResult> {
    std::iter::once(setup.to_app("setup"))
        .chain(rows.iter().map(|r| r.to_app(r.key())))
        .collect()
}

/// The run's set-up, typed.
pub fn setup(apps: &[AppResult]) -> Option<Setup> {
    apps.iter().filter(|a| a.item == "setup").find_map(Setup::from_app)
}

/// The run's configurations (all but the set-up), typed, in order.
pub fn configurations(apps: &[AppResult]) -> impl Iterator<Item = Row> + '_ {
    apps.iter().filter(|a| a.item != "setup").filter_map(Row::from_app)
}

/// A figure to show: `None` when it is absent or could not be measured.
fn f(x: Option<f64>) -> Option<f64> {
    x.filter(|x| x.is_finite())
}

fn ms(x: Option<f64>) -> String {
    f(x).map_or("-".into(), |x| format!("{x:.3} ms"))
}

/// Header and cells: one row per configuration, ping p50 for the smallest, a middle and
/// the largest size.
pub fn rows(apps: &[AppResult]) -> (Vec<String>, Vec<Vec<String>>) {
    let sz = setup(apps).map(|s| s.sizes).unwrap_or_default();
    let shown: Vec<u32> = match sz.len() {
        0 => vec![],
        1..=3 => sz.clone(),
        n => vec![sz[0], sz[n / 2], sz[n - 1]],
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
    for d in configurations(apps) {
        let t = d.transfer.as_ref();
        let rep = d.repeats.as_ref().filter(|r| r.n > 1);
        // Over repeats: the median [interval]; the ratio to the baseline with the verdict.
        let mb = match rep {
            Some(r) => format!(
                "{:.1} [{:.1}, {:.1}]",
                r.mb_per_s.median, r.mb_per_s.low, r.mb_per_s.high
            ),
            None => f(t.map(|t| t.mb_per_s)).map_or("-".into(), |x| format!("{x:.1}")),
        };
        let vs = f(d.throughput_vs_plain).map_or("-".into(), |x| match rep.and_then(|r| r.vs_plain.as_deref()) {
            Some(v) => format!("{:.0} % ({v})", x * 100.0),
            None => format!("{:.0} %", x * 100.0),
        });
        let mut row = vec![
            d.tunnel.clone(),
            d.couple.clone(),
            d.accel.clone(),
            mb,
            vs,
            f(t.and_then(|t| t.cpu_a_pct)).map_or("-".into(), |x| format!("{x:.0} %")),
            f(t.and_then(|t| t.cpu_b_pct)).map_or("-".into(), |x| format!("{x:.0} %")),
        ];
        for s in &shown {
            let median = rep.and_then(|r| r.ping_p50_ms.get(s)).map(|sp| sp.median);
            row.push(ms(median.or_else(|| d.pings().and_then(|p| p.get(s)).map(|p| p.p50_ms))));
        }
        let note = match d.status {
            Status::NotSupported => format!("not supported: {}", d.reason.as_deref().unwrap_or("")),
            Status::Failed => format!("FAILED: {}", d.error.as_deref().unwrap_or("")),
            Status::Ok if d.tunnel == "none" => "the same veth path without a tunnel".to_string(),
            Status::Ok => {
                let mut n = d.software.clone().unwrap_or_default();
                if let Some(p) = &d.data_path {
                    n = format!("{n} [{p}]");
                }
                if let Some(p) = &d.ping_note {
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
    let mut out = render(&h, &rows, &right);
    // Over repeats: what the brackets are, and what a verdict needs.
    if let Some(r) = configurations(apps).find_map(|r| r.repeats).filter(|r| r.n > 1) {
        out += &format!(
            "MB/s and pings: medians over {} interleaved repeats; [low, high] is the median's distribution-free \
interval ({:.1} % coverage with {} values). \"faster\"/\"slower\" only where it and the baseline's are apart.\n",
            r.n,
            r.mb_per_s.coverage * 100.0,
            r.mb_per_s.values.len()
        );
    }
    Some(out)
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
    let mine: Vec<Row> = configurations(apps).filter(|r| r.status == Status::Ok).collect();
    let mut out = Vec::new();
    for s in mine.iter().filter(|r| r.accel == "soft") {
        let Some(h) = mine
            .iter()
            .find(|r| r.accel == "accel" && r.tunnel == s.tunnel && r.couple == s.couple)
        else {
            continue;
        };
        let (ts, th) = (s.transfer.as_ref(), h.transfer.as_ref());
        let (soft, accel) = (f(ts.map(|t| t.mb_per_s)), f(th.map(|t| t.mb_per_s)));
        out.push(vec![
            s.tunnel.clone(),
            s.couple.clone(),
            soft.map_or("-".into(), |x| format!("{x:.1}")),
            accel.map_or("-".into(), |x| format!("{x:.1}")),
            match (accel, soft) {
                (Some(a), Some(b)) if b > 0.0 => format!("×{:.2}", a / b),
                _ => "-".into(),
            },
            f(ts.and_then(|t| t.cpu_a_pct)).map_or("-".into(), |x| format!("{x:.0} %")),
            f(th.and_then(|t| t.cpu_a_pct)).map_or("-".into(), |x| format!("{x:.0} %")),
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
    for a in configurations(apps) {
        let Some(h) = &a.hostile else {
            continue;
        };
        let t = h.traffic.clone().unwrap_or_default();
        let mut traffic = Vec::new();
        if t.garbage_datagrams + t.half_handshakes > 0 {
            traffic.push(format!(
                "{} junk datagrams, {} half handshakes",
                t.garbage_datagrams, t.half_handshakes
            ));
        }
        if t.spoofed_datagrams > 0 {
            traffic.push(format!("{} from the peer's forged address", t.spoofed_datagrams));
        }
        let tcp = t.tcp_opened_and_dropped + t.tcp_stalled_after_banner + t.tcp_garbage;
        if tcp > 0 {
            traffic.push(format!(
                "{tcp} connections ({} dropped, {} stalled, {} garbage)",
                t.tcp_opened_and_dropped, t.tcp_stalled_after_banner, t.tcp_garbage
            ));
        }
        out.push(vec![
            a.tunnel.clone(),
            a.couple.clone(),
            a.accel.clone(),
            if h.served {
                "yes".into()
            } else {
                format!("NO: {}", h.why.as_deref().unwrap_or("?"))
            },
            traffic.join("; "),
            f(h.ping_loss).map_or("-".into(), |x| format!("{:.0} %", x * 100.0)),
            f(h.latency_vs_calm).map_or("-".into(), |x| format!("×{x:.2}")),
            f(h.transfer.as_ref().map(|t| t.mb_per_s)).map_or("-".into(), |x| format!("{x:.1}")),
            f(h.throughput_vs_calm).map_or("-".into(), |x| format!("×{x:.2}")),
            match (f(h.new_login_s), h.new_login_attempts, f(h.new_handshake_s)) {
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
    let Some(d) = setup(apps) else {
        return Vec::new();
    };
    let mut lines = vec![
        format!(
            "{}; {} pings per size (sizes {}), {} bytes per transfer{}",
            d.network,
            d.pings_per_size,
            d.sizes.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            d.transfer_bytes,
            d.repeats.map_or(String::new(), |n| format!("; {n} interleaved repeats"))
        ),
        d.transfer,
        d.cpu,
        format!("soft = OPENSSL_ia32cap={} in both endpoints (AES-NI and PCLMULQDQ masked); ping columns are p50 round-trip times", d.mask),
    ];
    if let Some(k) = d.kernel {
        lines.push(format!("kernel data paths: {k}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_model::apps::tunnel::{Hostile, Traffic, Transfer};

    fn set_up(sizes: &[u32]) -> Setup {
        Setup {
            network: "veth between two namespaces".into(),
            pings_per_size: 10,
            sizes: sizes.to_vec(),
            transfer_bytes: 1 << 20,
            transfer: "iperf3".into(),
            cpu: "/proc/PID/stat".into(),
            mask: "~0x200000200000000".into(),
            openvpn_tls_crypt: None,
            hostile: None,
            kernel: None,
            repeats: None,
            interrupted: false,
        }
    }

    /// A measured row with its throughput and, if given, endpoint A's CPU.
    fn measured(tunnel: &str, couple: &str, accel: &str, mb_per_s: f64, cpu_a_pct: Option<f64>) -> Row {
        Row {
            transfer: Some(Transfer {
                mb_per_s,
                cpu_a_pct,
                ..Default::default()
            }),
            ..Row::new(tunnel, couple, accel, Status::Ok)
        }
    }

    #[test]
    fn unsupported_couples_carry_their_reason_and_ratios_pair_up() {
        let rows = [
            measured("none", "-", "-", 400.0, None),
            Row {
                reason: Some("OpenSSH has no `none` cipher".into()),
                ..Row::new("ssh", "none:none", "-", Status::NotSupported)
            },
            measured("ssh", "aes-256-gcm", "accel", 150.0, Some(90.0)),
            measured("ssh", "aes-256-gcm", "soft", 50.0, Some(100.0)),
        ];
        let apps = items(&set_up(&[64, 1400, 16000]), &rows);
        let (h, r) = super::rows(&apps);
        assert_eq!(h.iter().filter(|c| c.starts_with("ping")).count(), 3);
        assert!(r[1].last().unwrap().contains("OpenSSH has no `none` cipher"));
        let (_, rr) = ratio_rows(&apps);
        assert_eq!(rr.len(), 1);
        assert_eq!(rr[0][4], "×3.00");
    }

    #[test]
    fn hostile_rows_say_who_was_served_and_how_long_a_new_session_took() {
        let under = |tunnel: &str, couple: &str, accel: &str, h: Hostile| Row {
            hostile: Some(h),
            ..Row::new(tunnel, couple, accel, Status::Ok)
        };
        let transfer = |mb_per_s| {
            Some(Transfer {
                mb_per_s,
                ..Default::default()
            })
        };
        let rows = [
            under(
                "ssh",
                "aes-256-gcm",
                "accel",
                Hostile {
                    served: true,
                    traffic: Some(Traffic {
                        tcp_opened_and_dropped: 3,
                        tcp_stalled_after_banner: 2,
                        tcp_garbage: 1,
                        ..Default::default()
                    }),
                    transfer: transfer(120.0),
                    new_login_s: Some(0.5),
                    new_login_attempts: Some(3),
                    ..Default::default()
                },
            ),
            under(
                "wireguard",
                "chacha20-poly1305",
                "-",
                Hostile {
                    served: true,
                    traffic: Some(Traffic {
                        garbage_datagrams: 10,
                        half_handshakes: 4,
                        ..Default::default()
                    }),
                    ping_loss: Some(0.0),
                    transfer: transfer(300.0),
                    new_handshake_s: Some(0.25),
                    ..Default::default()
                },
            ),
            under(
                "ipsec",
                "aes-128-gcm",
                "soft",
                Hostile {
                    served: false,
                    why: Some("no new handshake".into()),
                    traffic: Some(Traffic::default()),
                    ..Default::default()
                },
            ),
        ];
        let apps = items(&set_up(&[64]), &rows);
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
