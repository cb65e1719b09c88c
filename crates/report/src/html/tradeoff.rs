//! The trade-off chart: what a key establishment or an authentication costs on the wire
//! against what it costs in computation, one point per implementation that passed its gate.
//! Bytes on the wire: a KEM's public key and ciphertext; a key exchange's public key both
//! ways; a signature scheme's public key and signature. Cycles of one full exchange: a KEM's
//! keypair + encaps + decaps medians; a key exchange's keypair and exchange, once per side;
//! a signature's sign + verify. Log–log, colour = provider, shape = family (circle KEM, square key exchange,
//! triangle signature), filled = post-quantum (its NIST level written in it),
//! hollow = classical.

use super::marks::{log_axes, place_label, tick_label, Frame, LogScale, Of};
use super::{esc, provider_colour, table};
use crate::RunFile;
use std::fmt::Write as _;

pub use crate::answers::TradeoffPoint;

impl TradeoffPoint {
    /// "level 3", "classical (128 bits)", or "classical".
    pub fn strength(&self) -> String {
        match (self.nist_level, self.classical_bits) {
            (Some(l), _) => format!("level {l}"),
            (None, Some(b)) => format!("classical ({b} bits)"),
            (None, None) => "classical".into(),
        }
    }
}

/// One point per KEM or key-exchange implementation of `run` that passed its gate (the
/// answers' own points: one definition of a full exchange).
pub fn points(run: &RunFile) -> Vec<TradeoffPoint> {
    crate::answers::tradeoff_points(run)
}

const W: f64 = 800.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;

/// The chart's box and margins.
const FRAME: Frame = Frame {
    width: W,
    height: H,
    left: LEFT,
    right: RIGHT,
    top: TOP,
    bottom: BOTTOM,
};

/// A point's marker: a circle for a KEM, a square for a key exchange, a triangle for a
/// signature, in the provider's
/// colour; filled with the NIST level written in it when post-quantum, hollow when
/// classical.
fn marker(p: &TradeoffPoint, cx: f64, cy: f64) -> String {
    let colour = provider_colour(&p.provider);
    let fill = if p.nist_level.is_some() { colour } else { "#fff" };
    let mut m = if p.family == "kem" {
        format!(r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="6.5" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>"#)
    } else if p.family == "sig" {
        format!(
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>"#,
            cx,
            cy - 7.5,
            cx + 7.0,
            cy + 5.5,
            cx - 7.0,
            cy + 5.5
        )
    } else {
        format!(
            r#"<rect x="{:.1}" y="{:.1}" width="11" height="11" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>"#,
            cx - 5.5,
            cy - 5.5
        )
    };
    if let Some(l) = p.nist_level {
        let _ = write!(m, r#"<text class="level" x="{cx:.1}" y="{:.1}">{l}</text>"#, cy + 3.0);
    }
    m
}

/// The trade-off scatter of `points` (log–log), or "" when there are none.
pub fn tradeoff_chart(points: &[TradeoffPoint]) -> String {
    chart("", points)
}

/// The scatter, with an element id when `id` is not empty.
fn chart(id: &str, points: &[TradeoffPoint]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let x = LogScale::of(points.iter().map(|p| p.bytes as f64), LEFT, W - RIGHT);
    let y = LogScale::of(points.iter().map(|p| p.cycles), H - BOTTOM, TOP);
    let id = if id.is_empty() {
        String::new()
    } else {
        format!(" id=\"{}\"", esc(id))
    };
    let mut s = format!(
        r#"<svg class="chart tradeoff"{id} xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="bytes on the wire against cycles of one exchange"><text class="title" x="0" y="16">Bytes on the wire against cycles of one full exchange</text>"#
    );
    log_axes(
        &mut s,
        &FRAME,
        (&x, &y),
        tick_label,
        (
            "bytes on the wire (both directions, log scale)",
            "cycles of one full exchange (log scale)",
        ),
    );
    // Every point's box, so that no label covers a point.
    let mut taken: Vec<(f64, f64, f64)> = Vec::new();
    for p in points {
        let (cx, cy) = (x.at(p.bytes as f64), y.at(p.cycles));
        taken.push((cx - 7.0, cx + 7.0, cy + 6.0));
        let _ = write!(
            s,
            r#"<g class="mark pt"{}>{}<title>{} · {} {}: {} B, {} cycles, {}</title></g>"#,
            Of {
                provider: p.provider.clone(),
                family: p.family.clone(),
            }
            .attrs(),
            marker(p, cx, cy),
            esc(&p.algorithm),
            esc(&p.provider),
            esc(&p.implementation),
            table::group(p.bytes as f64),
            table::group(p.cycles),
            p.strength()
        );
    }
    // One label per algorithm, beside its fastest implementation, where there is room.
    let mut labelled: Vec<&str> = Vec::new();
    let mut by_speed: Vec<&TradeoffPoint> = points.iter().collect();
    by_speed.sort_by(|a, b| a.cycles.total_cmp(&b.cycles));
    for p in by_speed {
        if labelled.contains(&p.algorithm.as_str()) {
            continue;
        }
        labelled.push(&p.algorithm);
        let text = &p.algorithm;
        let Some((lx, ly, end)) = place_label(&mut taken, (x.at(p.bytes as f64), y.at(p.cycles) + 4.0), text, true, 1)
        else {
            continue; // crowded: the points keep their tooltips
        };
        let _ = write!(
            s,
            r#"<text class="pointlabel" x="{lx:.1}" y="{ly:.1}"{} data-family="{}">{}</text>"#,
            if end { r#" text-anchor="end""# } else { "" },
            esc(&p.family),
            esc(text)
        );
    }
    s.push_str("</svg>");
    s
}

/// The section: a heading, how to read the chart, and the chart (with the run's index in its
/// id); "" when the run has no point to draw.
pub(crate) fn section(ri: usize, run: &RunFile) -> String {
    let chart = chart(&format!("chart-{ri}-tradeoff"), &points(run));
    if chart.is_empty() {
        return chart;
    }
    format!(
        "<h3>Trade-off: bytes on the wire against computation</h3><p>One point per implementation that passed its gate. \
         Bytes: a KEM's public key and ciphertext, a key exchange's public key each way, a signature scheme's public key \
         and signature. Cycles: the medians of keypair, encaps and decaps (KEM), of keypair and exchange on both sides \
         (key exchange), or of sign and verify (signature). Circles: KEMs; squares: key exchange; triangles: signatures; \
         filled: post-quantum, with its NIST level written in it; hollow: classical. Colour: the provider. Lower \
         left is better on both counts.</p>{chart}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::testrows::{row, run};

    fn sample() -> RunFile {
        let mut rows = Vec::new();
        for (p, k) in [("liboqs", 1.0), ("pqclean", 2.0)] {
            for (op, c) in [("keypair", 30_000.0), ("encaps", 35_000.0), ("decaps", 40_000.0)] {
                let mut r = row("ML-KEM-768", "kem", p, op, c * k);
                r.nist_level = Some(3);
                r.sizes.public_key = 1184;
                r.sizes.ciphertext = 1088;
                rows.push(r);
            }
        }
        for op in ["keypair", "derive", "validate", "exchange"] {
            let mut r = row("X25519", "kex", "openssl", op, 50_000.0);
            r.classical_bits = Some(128);
            r.sizes.public_key = 32;
            rows.push(r);
        }
        // A subject that failed its gate, and a hash: never points.
        let mut bad = row("ML-KEM-512", "kem", "build", "keypair", 1.0);
        bad.gate = crate::GateStatus::Fail;
        rows.push(bad);
        rows.push(row("SHA-256", "hash", "openssl", "hash:64", 500.0));
        run(rows)
    }

    #[test]
    fn points_add_up_a_full_exchange() {
        let p = points(&sample());
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!((p[0].bytes, p[0].cycles), (2272, 105_000.0));
        assert_eq!(p[1].cycles, 210_000.0);
        assert_eq!(p[2].family, "kex");
        // X25519: 32 bytes each way; keypair and exchange on both sides (derive and
        // validate are parts of exchange, not added).
        assert_eq!((p[2].bytes, p[2].cycles), (64, 200_000.0));
        assert_eq!(p[2].strength(), "classical (128 bits)");
        assert_eq!(p[0].strength(), "level 3");
    }

    #[test]
    fn a_missing_operation_leaves_the_subject_out() {
        let mut f = sample();
        f.results
            .retain(|r| !(r.provider == "pqclean" && r.operation == "decaps"));
        assert_eq!(points(&f).len(), 2);
    }

    #[test]
    fn the_chart_has_one_mark_per_point_and_decade_ticks() {
        let p = points(&sample());
        let c = tradeoff_chart(&p);
        assert_eq!(c.matches("class=\"mark pt\"").count(), 3);
        assert_eq!(c.matches("<circle").count(), 2, "KEMs are circles");
        assert_eq!(c.matches("<rect").count(), 1, "key exchange a square");
        assert!(c.contains(r##"fill="#fff""##), "classical hollow");
        assert!(c.contains("ML-KEM-768 · liboqs default: 2,272 B, 105,000 cycles, level 3"));
        // x: 64 to 2,272 bytes -> 10 .. 10,000; y: 105,000 to 210,000 -> 100k .. 1M.
        for t in [">10<", ">100<", ">1,000<", ">10k<", ">100k<", ">1M<"] {
            assert!(c.contains(t), "tick {t}");
        }
        assert!(c.contains(r#"<text class="level" x="#), "the level in the marker");
        assert_eq!(c.matches("class=\"level\"").count(), 2, "post-quantum points only");
        assert_eq!(c.matches(">ML-KEM-768</text>").count(), 1, "one label per algorithm");
        assert!(c.contains(">X25519</text>"));
        assert!(tradeoff_chart(&[]).is_empty());
        assert!(section(2, &sample()).contains("id=\"chart-2-tradeoff\""));
    }
}
