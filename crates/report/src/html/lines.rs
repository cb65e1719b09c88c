//! Line charts on log–log axes: a figure against bytes per call, one line per
//! implementation. Hashes: cycles per byte and time against message length (a solid line
//! for the message in one update, dashed for 64-byte updates). Block ciphers: cycles per
//! byte against bytes per call for every strategy (one block, then ECB at the bulk length),
//! where a batching strategy's line falls as the calls grow.

use super::marks::{log_axes, ns_label, stack_labels, tick_label, Frame, LogScale, Of};
use super::{esc, provider_colour, table, PALETTE};
use crate::{GateStatus, ResultRow, RunFile};
use cryptoscope_model::descriptor::Operation;
use std::fmt::Write as _;

/// One line: its label, colour, dash, owner and points (x, y), in any order.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub colour: &'static str,
    pub dashed: bool,
    pub of: Of,
    pub points: Vec<(f64, f64)>,
}

/// What the axes show: their names, whether y is a duration in nanoseconds, and the class
/// of the chart's lines.
pub(crate) struct Axes {
    pub x: &'static str,
    pub y: &'static str,
    pub y_ns: bool,
    pub line: &'static str,
}

const W: f64 = 760.0;
const H: f64 = 280.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;

/// A log–log line chart: a mark (`<g class="mark">`) per series holding its line, its
/// points (up to 64) and its label at the line's end; decade ticks on both axes.
pub(crate) fn line_chart(id: &str, title: &str, axes: &Axes, series: &[Series]) -> String {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x = LogScale::of(all().map(|p| p.0), LEFT, W - RIGHT);
    let y = LogScale::of(all().map(|p| p.1), H - BOTTOM, TOP);
    let mut s = format!(
        r#"<svg class="chart lines" id="{id}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><text class="title" x="0" y="16">{t}</text>"#,
        t = esc(title)
    );
    let frame = Frame {
        width: W,
        height: H,
        left: LEFT,
        right: RIGHT,
        top: TOP,
        bottom: BOTTOM,
    };
    let y_label = if axes.y_ns { ns_label } else { tick_label };
    let titles = (format!("{} (log scale)", axes.x), format!("{} (log)", axes.y));
    log_axes(&mut s, &frame, (&x, &y), y_label, (&titles.0, &titles.1));
    let drawn: Vec<(&Series, Vec<(f64, f64)>)> = series
        .iter()
        .filter(|l| !l.points.is_empty())
        .map(|l| {
            let mut pts = l.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (l, pts)
        })
        .collect();
    // Labels at the lines' ends, stacked in the order of the ends so that none overlaps.
    let ends: Vec<f64> = drawn.iter().map(|(_, p)| y.at(p[p.len() - 1].1) + 4.0).collect();
    let label_ys = stack_labels(&ends, TOP + 8.0, H - BOTTOM + 2.0);
    for ((l, pts), ly) in drawn.iter().zip(label_ys) {
        let line: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", x.at(p.0), y.at(p.1)))
            .collect();
        let dash = if l.dashed { r#" stroke-dasharray="5,3""# } else { "" };
        let _ = write!(
            s,
            r#"<g class="mark"{}><polyline class="{}" fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"><title>{}</title></polyline>"#,
            l.of.attrs(),
            axes.line,
            line.join(" "),
            esc(&l.label),
            c = l.colour
        );
        if pts.len() <= 64 {
            for p in pts {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"><title>{}: {} bytes, {}</title></circle>"#,
                    x.at(p.0),
                    y.at(p.1),
                    l.colour,
                    esc(&l.label),
                    table::group(p.0),
                    if axes.y_ns {
                        table::duration(p.1)
                    } else {
                        format!("{:.2} {}", p.1, axes.y)
                    }
                );
            }
        }
        let _ = write!(
            s,
            r#"<text class="endlabel" x="{:.1}" y="{ly:.1}" fill="{}">{}</text></g>"#,
            x.at(pts[pts.len() - 1].0) + 8.0,
            l.colour,
            esc(&l.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// The hash lines of `run`: per (algorithm, subject, streamed), the points (bytes, cycles
/// per byte) and (bytes, median ns).
type HashLine<'a> = ((&'a str, &'a ResultRow, bool), Vec<(f64, f64)>, Vec<(f64, f64)>);

fn hash_lines(run: &RunFile) -> Vec<HashLine<'_>> {
    let mut lines: Vec<HashLine> = Vec::new();
    for r in run
        .results
        .iter()
        .filter(|r| r.family == "hash" && r.gate == GateStatus::Pass)
    {
        let Some(op) = Operation::parse(&r.operation) else {
            continue;
        };
        let (Some(n), Some(c), Some(t)) = (op.message_bytes().filter(|&n| n > 0), r.median_cycles, r.median_ns) else {
            continue;
        };
        let streamed = matches!(op, Operation::Stream(_));
        let n = n as f64;
        match lines
            .iter_mut()
            .find(|l| l.0 .0 == r.algorithm && l.0 .1.subject == r.subject && l.0 .2 == streamed)
        {
            Some(l) => {
                l.1.push((n, c / n));
                l.2.push((n, t));
            }
            None => lines.push(((&r.algorithm, r, streamed), vec![(n, c / n)], vec![(n, t)])),
        }
    }
    lines
}

/// Hash functions: per algorithm, cycles per byte and median time against message length,
/// a line per subject and way of feeding it. "" without measured hashes.
pub(crate) fn hash_charts(ri: usize, run: &RunFile) -> String {
    let lines = hash_lines(run);
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h3>Hash functions against message length</h3><p>Median cycles of one call (a fresh state, the message, the \
         digest) divided by the message length, and the median time of that call. Solid: the message in one update; \
         dashed: in 64-byte updates. Both axes are logarithmic.</p>",
    );
    let mut algs: Vec<&str> = lines.iter().map(|l| l.0 .0).collect();
    algs.dedup();
    for (ai, alg) in algs.iter().enumerate() {
        let of_alg: Vec<&HashLine> = lines.iter().filter(|l| l.0 .0 == *alg).collect();
        let series = |time: bool| -> Vec<Series> {
            of_alg
                .iter()
                .map(|((_, r, streamed), cpb, ns)| Series {
                    label: format!(
                        "{} {}{}",
                        r.provider,
                        r.implementation,
                        if *streamed { " (64 B updates)" } else { "" }
                    ),
                    colour: provider_colour(&r.provider),
                    dashed: *streamed,
                    of: Of::row(r),
                    points: if time { ns.clone() } else { cpb.clone() },
                })
                .collect()
        };
        let bytes = "message length (bytes)";
        s.push_str(&line_chart(
            &format!("chart-{ri}-hash-{ai}"),
            &format!("{alg}: cycles per byte against message length"),
            &Axes {
                x: bytes,
                y: "cycles/byte",
                y_ns: false,
                line: "hashline",
            },
            &series(false),
        ));
        s.push_str(&line_chart(
            &format!("chart-{ri}-hashtime-{ai}"),
            &format!("{alg}: time against message length"),
            &Axes {
                x: bytes,
                y: "median time",
                y_ns: true,
                line: "hashtime",
            },
            &series(true),
        ));
    }
    s
}

/// One block cipher's strategies as lines of cycles per byte against bytes per call, one
/// per subject: one block, then ECB at the bulk length (and any other length measured).
/// CTR stays in the bars and tables above (one length: a point, not a line). "" when none
/// passed.
pub(crate) fn cipher_lines(id: &str, run: &RunFile, cipher: &str) -> String {
    let mut series: Vec<Series> = Vec::new();
    let mut subjects: Vec<&str> = Vec::new();
    for r in run
        .results
        .iter()
        .filter(|r| r.family == "cipher" && r.algorithm == cipher)
    {
        let Some(op) = Operation::parse(&r.operation) else {
            continue;
        };
        if !matches!(op, Operation::Block(_) | Operation::Ecb(_)) {
            continue;
        }
        let (Some(n), Some(c)) = (op.message_bytes().filter(|&n| n > 0), r.median_cycles) else {
            continue;
        };
        if r.gate != GateStatus::Pass {
            continue;
        }
        if !subjects.contains(&r.subject.as_str()) {
            subjects.push(&r.subject);
        }
        let colour = PALETTE[subjects.iter().position(|s| *s == r.subject).unwrap_or(0) % PALETTE.len()];
        let label = format!("{}/{}", r.provider, r.implementation);
        let point = (n as f64, c / n as f64);
        match series.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push(point),
            None => series.push(Series {
                label,
                colour,
                dashed: false,
                of: Of::row(r),
                points: vec![point],
            }),
        }
    }
    if series.is_empty() {
        return String::new();
    }
    line_chart(
        id,
        &format!("{cipher}: cycles per byte against bytes per call, per strategy"),
        &Axes {
            x: "bytes per call",
            y: "cycles/byte",
            y_ns: false,
            line: "cipherline",
        },
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::testrows::{row, run};

    #[test]
    fn hash_charts_draw_a_line_per_subject_and_feeding() {
        let mut rows = Vec::new();
        for p in ["openssl", "aws-lc"] {
            for n in [64u32, 4096, 1 << 20] {
                rows.push(row("SHA-256", "hash", p, &format!("hash:{n}"), 10.0 * n as f64));
                rows.push(row("SHA-256", "hash", p, &format!("stream:{n}"), 12.0 * n as f64));
            }
        }
        let html = hash_charts(0, &run(rows));
        let cpb = &html[html.find("id=\"chart-0-hash-0\"").unwrap()..];
        let cpb = &cpb[..cpb.find("</svg>").unwrap()];
        assert_eq!(cpb.matches("class=\"mark\"").count(), 4);
        assert_eq!(cpb.matches("stroke-dasharray").count(), 2);
        assert_eq!(cpb.matches("<circle").count(), 12);
        assert!(html.contains("id=\"chart-0-hashtime-0\""));
        // Time runs from 640 ns to about 12.6 ms: decades 100 ns .. 100 ms.
        assert!(html.contains(">100 ns<") && html.contains(">100 ms<"));
        assert!(hash_charts(0, &run(vec![])).is_empty());
    }

    #[test]
    fn cipher_lines_join_one_block_and_bulk_per_strategy() {
        let mut rows = Vec::new();
        for (imp, block, bulk) in [("table", 200.0, 40_000.0), ("fixsliced", 400.0, 8_000.0)] {
            for (op, c) in [("block:16", block), ("ecb:4096", bulk), ("ctr:4096", bulk * 1.1)] {
                let mut r = row("Camellia-128", "cipher", "cryptoscope", op, c);
                r.implementation = imp.into();
                r.subject = format!("Camellia-128/cryptoscope/{imp}");
                rows.push(r);
            }
        }
        let c = cipher_lines("x", &run(rows), "Camellia-128");
        assert_eq!(c.matches("class=\"mark\"").count(), 2, "a line per strategy");
        assert!(c.contains(">cryptoscope/fixsliced</text>"));
        assert!(!c.contains("4,096 bytes, 2.15"), "CTR is not drawn");
        // 16 bytes at 25 c/B falling to 1.95 c/B at 4 KiB for the batching strategy.
        assert!(c.contains("4,096 bytes, 1.95 cycles/byte"));
        assert!(cipher_lines("x", &run(vec![]), "Camellia-128").is_empty());
    }

    #[test]
    fn a_line_chart_has_decade_ticks_on_both_axes() {
        let l = Series {
            label: "a".into(),
            colour: "#000",
            dashed: false,
            of: Of::family("hash"),
            points: vec![(8.0, 50.0), (1_048_576.0, 2.0)],
        };
        let c = line_chart(
            "t",
            "t",
            &Axes {
                x: "x",
                y: "y",
                y_ns: false,
                line: "l",
            },
            &[l],
        );
        for t in [">1<", ">10<", ">100<", ">1,000<", ">10k<", ">100k<", ">1M<", ">10M<"] {
            assert!(c.contains(t), "tick {t}");
        }
    }
}
