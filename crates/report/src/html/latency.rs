//! TLS handshake latency against packet loss, one panel per one-way delay, the way Paquin,
//! Stebila and Tamvada drew theirs: per group a line through the medians and a band up to
//! the 95th percentile.

use super::marks::Of;
use super::{esc, PALETTE};
use cryptoscope_model::apps::tls::Configuration;
use std::fmt::Write as _;

const W: f64 = 560.0;
const H: f64 = 280.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;

/// A group's line: its name and points (loss %, p50 ns, p95 ns).
type Line = (String, Vec<(f64, f64, f64)>);

/// (loss %, p50 ns, p95 ns) of a configuration measured under conditions.
fn point(c: &Configuration) -> Option<(f64, f64, f64)> {
    let cond = c.conditions.as_ref()?;
    if c.status != "ok" {
        return None;
    }
    let (p50, p95) = match &c.latency {
        Some(l) => (l.at(50)?.ns, l.at(95)?.ns),
        None => {
            let s = c.measurement.as_ref()?.connection_ns.as_ref()?;
            (s.p50 as f64, s.p95 as f64)
        }
    };
    Some((cond.loss_pct, p50, p95))
}

/// A configuration's line name: group, certificate, and HRR when asked.
fn series_name(c: &Configuration) -> String {
    format!(
        "{} {}{}",
        c.group,
        c.cert.as_deref().unwrap_or("-"),
        if c.hello_retry == Some(true) { " HRR" } else { "" }
    )
}

/// One chart per delay of the configurations measured under conditions, or nothing when
/// there are none (or only one loss rate: nothing to draw a line through).
pub(crate) fn latency_charts(ri: usize, confs: &[Configuration]) -> String {
    let mut delays: Vec<f64> = Vec::new();
    for c in confs {
        if let Some(d) = c.conditions.as_ref().map(|x| x.delay_ms) {
            if !delays.contains(&d) {
                delays.push(d);
            }
        }
    }
    let mut s = String::new();
    for (di, delay) in delays.iter().enumerate() {
        let mut series: Vec<Line> = Vec::new();
        for c in confs
            .iter()
            .filter(|c| c.conditions.as_ref().map(|x| x.delay_ms) == Some(*delay))
        {
            let Some(p) = point(c) else { continue };
            let name = series_name(c);
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, pts)) => pts.push(p),
                None => series.push((name, vec![p])),
            }
        }
        if series.iter().all(|(_, p)| p.len() < 2) {
            continue;
        }
        let _ = write!(s, "{}", panel(&format!("tls-latency-{ri}-{di}"), *delay, &mut series));
    }
    s
}

fn panel(id: &str, delay: f64, series: &mut [Line]) -> String {
    let x_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .fold(1.0f64, f64::max);
    let y_max_ns = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.2))
        .fold(1.0f64, f64::max);
    // A round top in milliseconds: 1, 2 or 5 times a power of ten.
    let top_ms = {
        let raw = y_max_ns / 1e6;
        let e = 10f64.powf(raw.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * e)
            .find(|v| *v >= raw)
            .unwrap_or(10.0 * e)
    };
    let x = |loss: f64| LEFT + loss / x_max * (W - LEFT - RIGHT);
    let y = |ns: f64| H - BOTTOM - (ns / 1e6) / top_ms * (H - TOP - BOTTOM);
    let title = format!("Handshake latency against loss, {delay} ms one-way delay (line p50, band to p95)");
    let mut s = format!(
        r#"<svg class="chart latency" id="{id}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><text class="title" x="0" y="16">{t}</text>"#,
        t = esc(&title)
    );
    // Axes: five ticks each way.
    for i in 0..=5 {
        let v = top_ms * i as f64 / 5.0;
        let yy = y(v * 1e6);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{} ms</text>"##,
            W - RIGHT,
            LEFT - 4.0,
            yy + 4.0,
            trim(v)
        );
        let l = x_max * i as f64 / 5.0;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{} %</text>"#,
            x(l),
            H - BOTTOM + 14.0,
            trim(l)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">packet loss each way</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0
    );
    let of = Of {
        provider: "tls".into(),
        family: "kex".into(),
    };
    for (i, (name, pts)) in series.iter_mut().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let colour = PALETTE[i % PALETTE.len()];
        let upper: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.2))).collect();
        let lower: Vec<String> = pts
            .iter()
            .rev()
            .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
            .collect();
        let line: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1))).collect();
        let _ = write!(
            s,
            r#"<g class="mark"{}><polygon class="band" fill="{colour}" fill-opacity="0.15" stroke="none" points="{} {}"/><polyline class="p50" fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
            of.attrs(),
            upper.join(" "),
            lower.join(" "),
            line.join(" "),
            esc(name)
        );
        for p in pts.iter() {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"><title>{}: {} % loss, p50 {:.2} ms, p95 {:.2} ms</title></circle>"#,
                x(p.0),
                y(p.1),
                esc(name),
                p.0,
                p.1 / 1e6,
                p.2 / 1e6
            );
        }
        // The legend, in the right margin, one line per group.
        let _ = write!(
            s,
            r#"<text class="endlabel" x="{:.1}" y="{:.1}" fill="{colour}" font-size="11">{}</text></g>"#,
            W - RIGHT + 10.0,
            TOP + 12.0 + 14.0 * i as f64,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// A tick value without needless decimals.
fn trim(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round())
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_model::apps::tls::{LinkConditions, Measurement, Summary};

    fn conf(group: &str, delay: f64, loss: f64, p50: u64, p95: u64) -> Configuration {
        Configuration {
            group: group.into(),
            cert: Some("ecdsa-p256".into()),
            status: "ok".into(),
            conditions: Some(LinkConditions {
                mechanism: "nfqueue emulator".into(),
                delay_ms: delay,
                loss_pct: loss,
                seed: 1,
                directions: Vec::new(),
                flights: Vec::new(),
            }),
            measurement: Some(Measurement {
                handshakes: 200,
                connection_ns: Some(Summary {
                    p50,
                    p95,
                    ..Summary::default()
                }),
                ..Measurement::default()
            }),
            ..Configuration::default()
        }
    }

    /// Figures set by hand: two delays make two panels; each group a band and a line
    /// through its points in loss order; a delay with a single loss rate draws nothing.
    #[test]
    fn a_panel_per_delay_a_line_and_band_per_group() {
        let confs = vec![
            conf("X25519", 2.684, 0.0, 6_000_000, 7_000_000),
            conf("X25519", 2.684, 10.0, 6_500_000, 1_100_000_000),
            conf("X25519", 2.684, 5.0, 6_200_000, 9_000_000),
            conf("FrodoKEM-640-AES", 2.684, 0.0, 8_000_000, 9_000_000),
            conf("FrodoKEM-640-AES", 2.684, 10.0, 20_000_000, 1_300_000_000),
            conf("X25519", 15.458, 0.0, 33_000_000, 35_000_000),
            conf("X25519", 15.458, 5.0, 34_000_000, 40_000_000),
            conf("X25519", 97.73, 0.0, 200_000_000, 210_000_000),
        ];
        let svg = latency_charts(0, &confs);
        assert_eq!(svg.matches("<svg class=\"chart latency\"").count(), 2, "{svg}");
        assert!(svg.contains("2.684 ms one-way delay") && svg.contains("15.458 ms one-way delay"));
        assert!(!svg.contains("97.73 ms"), "one loss rate: no line");
        assert_eq!(svg.matches("<polygon class=\"band\"").count(), 3);
        assert_eq!(svg.matches("<polyline class=\"p50\"").count(), 3);
        // The first panel's y axis tops at 2,000 ms (p95 1.3 s, rounded up to 2 × 10³).
        assert!(svg.contains(">2000 ms<"), "{svg}");
        // X25519's line runs 0, 5, 10 % left to right.
        let line = svg
            .split("<polyline class=\"p50\"")
            .nth(1)
            .and_then(|x| x.split("points=\"").nth(1))
            .and_then(|x| x.split('"').next())
            .unwrap();
        let xs: Vec<f64> = line
            .split(' ')
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{line}");
        assert!(svg.contains("X25519 ecdsa-p256: 10 % loss, p50 6.50 ms, p95 1100.00 ms"));
        assert!(latency_charts(0, &[]).is_empty());
    }
}
