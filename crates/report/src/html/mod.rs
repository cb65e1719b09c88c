//! A self-contained HTML report (inline CSS and SVG, no scripts, no network) of one or more
//! runs: environment, gate status of every subject, per-operation bar charts with 95%
//! confidence intervals (log scale), key and ciphertext sizes, and every result in a table
//! with its samples over time.
//!
//! Subjects that did not pass their gate are listed with the reason and never drawn as
//! bars: a failed implementation is never ranked.

use crate::{table, GateStatus, ResultRow, RunFile};
use std::collections::BTreeMap;
use std::fmt::Write as _;

mod apps;
mod side_by_side;
mod versus;
pub(crate) use apps::{ct_section, tahoe_section, tls_section, tunnel_section};

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Colours of the providers, in their display order (and of other series by index): room
/// for twelve, each distinct; a test keeps it longer than the list of providers.
const PALETTE: &[&str] = &[
    "#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#7b4b94", "#00798c", "#6c757d", "#a23b72", "#3b1f2b", "#8f2d56",
    "#5c8001", "#f18f01",
];

/// The colour of a provider the catalogue does not name.
const UNKNOWN: &str = "#adb5bd";

fn provider_colour(provider: &str) -> &'static str {
    crate::PROVIDER_ORDER
        .iter()
        .chain(cryptoscope_model::names::TEST_PROVIDERS)
        .position(|p| *p == provider)
        .and_then(|i| PALETTE.get(i).copied())
        .unwrap_or(UNKNOWN)
}

/// Log-scale axis from the data range, in whole decades.
fn log_axis(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
    )
}

/// One bar: label, value, optional 95% interval, colour.
type Bar = (String, f64, Option<(f64, f64)>, &'static str);

/// A horizontal bar chart: one bar per (label, value, optional CI), log x axis.
fn bar_chart(id: &str, title: &str, unit: &str, bars: &[Bar]) -> String {
    let row_h = 18.0;
    let label_w = 300.0;
    let plot_w = 520.0;
    let top = 28.0;
    let h = top + row_h * bars.len() as f64 + 30.0;
    let (lo, hi) = log_axis(bars.iter().flat_map(|b| [b.1, b.2.map(|c| c.1).unwrap_or(b.1)]));
    let x = |v: f64| label_w + plot_w * ((v.max(lo)).log10() - lo.log10()) / (hi.log10() - lo.log10());
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}">"#,
        w = label_w + plot_w + 20.0,
        t = esc(title)
    );
    let _ = write!(
        s,
        r#"<text class="title" x="0" y="16">{} ({unit}, log scale)</text>"#,
        esc(title)
    );
    let mut d = lo;
    while d <= hi * 1.0001 {
        let xd = x(d);
        let _ = write!(
            s,
            r#"<line x1="{xd:.1}" y1="{top}" x2="{xd:.1}" y2="{y2:.1}" class="grid"/><text x="{xd:.1}" y="{ty:.1}" class="tick">{}</text>"#,
            // Decades below 1 (cycles per byte of fast ciphers) keep their digits.
            if d < 1.0 { format!("{d}") } else { table::group(d) },
            y2 = h - 24.0,
            ty = h - 10.0
        );
        d *= 10.0;
    }
    for (i, (label, v, ci, colour)) in bars.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = write!(
            s,
            r#"<text x="{lx:.1}" y="{ty:.1}" class="label">{}</text><rect class="bar" x="{label_w}" y="{by:.1}" width="{bw:.1}" height="{bh:.1}" fill="{colour}"><title>{}: {} {unit}</title></rect>"#,
            esc(label),
            esc(label),
            table::group(*v),
            lx = label_w - 6.0,
            ty = y + 13.0,
            by = y + 3.0,
            bw = (x(*v) - label_w).max(1.0),
            bh = row_h - 6.0
        );
        if let Some((a, b)) = ci {
            let _ = write!(
                s,
                r#"<line class="ci" x1="{:.1}" x2="{:.1}" y1="{cy:.1}" y2="{cy:.1}"/>"#,
                x(*a),
                x(*b),
                cy = y + row_h / 2.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// Relative level change that counts as a shift in reports.
pub const SHIFT_RATIO: f64 = 0.10;

/// "2 (largest ×1.52)" or "" for the shifts in a sample series.
fn shift_note(samples: &[f64]) -> String {
    let shifts = cryptoscope_measure::shifts::level_shifts(samples, SHIFT_RATIO);
    let worst = shifts
        .iter()
        .map(|s| (s.after / s.before).max(s.before / s.after))
        .fold(1.0f64, f64::max);
    if shifts.is_empty() {
        String::new()
    } else {
        format!("{} (largest ×{worst:.2})", shifts.len())
    }
}

/// A sparkline of samples in the order they were taken, detected level shifts marked by
/// red vertical lines.
fn sparkline(samples: &[f64]) -> String {
    if samples.len() < 2 {
        return String::new();
    }
    let (w, h) = (160.0, 24.0);
    let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = samples.iter().copied().fold(0.0f64, f64::max);
    let span = (hi - lo).max(1e-9);
    let n = samples.len() as f64 - 1.0;
    let pts: Vec<String> = samples
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", w * i as f64 / n, h - 2.0 - (h - 4.0) * (v - lo) / span))
        .collect();
    let marks: String = cryptoscope_measure::shifts::level_shifts(samples, SHIFT_RATIO)
        .iter()
        .map(|sh| {
            let x = w * sh.at as f64 / n;
            format!(
                r#"<line class="shift" x1="{x:.1}" x2="{x:.1}" y1="0" y2="{h}"><title>level shift at sample {}: {:.0} → {:.0}</title></line>"#,
                sh.at, sh.before, sh.after
            )
        })
        .collect();
    format!(
        r#"<svg class="spark" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><polyline points="{}"/>{marks}</svg>"#,
        pts.join(" ")
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.fail{color:#b00020;font-weight:bold}.better{color:#1b5e20;font-weight:bold}.unavail{color:#888}\
svg.chart{display:block;margin:12px 0}svg .title{font-size:13px;font-weight:bold}svg .label{font-size:11px;text-anchor:end}\
svg .tick,svg .unit{font-size:10px;fill:#555;text-anchor:middle}svg .grid{stroke:#ddd}svg .ci{stroke:#000;stroke-width:1.5}\
svg.spark polyline{fill:none;stroke:#1b6ca8;stroke-width:1}svg.spark .shift{stroke:#d1495b;stroke-width:1.5}.legend span{display:inline-block;margin-right:12px}\
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}";

fn env_table(run: &RunFile) -> String {
    let e = &run.environment;
    let rows: Vec<(&str, String)> = vec![
        ("run", run.run_id.clone()),
        ("started", run.started_at.clone()),
        ("command", run.command.display()),
        ("host", e.hostname.clone().unwrap_or_default()),
        (
            "CPU",
            format!(
                "{} ({} logical, {} physical cores, SMT {})",
                e.cpu_model.clone().unwrap_or_default(),
                e.logical_cpus,
                e.physical_cores.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                e.smt.map(|s| if s { "on" } else { "off" }).unwrap_or("?")
            ),
        ),
        ("hypervisor", e.hypervisor.clone().unwrap_or_else(|| "none".into())),
        (
            "TSC",
            e.tsc_hz
                .map(|h| {
                    format!(
                        "{:.3} GHz (constant: {}, nonstop: {})",
                        h / 1e9,
                        e.tsc_constant,
                        e.tsc_nonstop
                    )
                })
                .unwrap_or_else(|| "n/a".into()),
        ),
        ("PMU core cycles", e.perf_core_cycles.clone()),
        (
            "kernel / OS",
            format!(
                "{} / {}",
                e.kernel.clone().unwrap_or_default(),
                e.os.clone().unwrap_or_default()
            ),
        ),
        ("CPU flags", e.cpu_flags.join(" ")),
        (
            "compilers",
            e.compilers
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        (
            "libraries",
            e.libraries
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    ];
    let mut s = String::from("<table class=\"env\">");
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    s.push_str("</table>");
    s
}

fn subject_label(r: &ResultRow) -> String {
    format!("{} · {} {}", r.algorithm, r.provider, r.implementation)
}

/// The distinct (family, operation) pairs of `rows`, in order of first appearance: one
/// chart each.
fn op_groups<'a>(rows: impl Iterator<Item = &'a ResultRow>) -> Vec<(String, String)> {
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.family.clone(), r.operation.clone());
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    groups
}

/// Renders the report.
/// What a report shows beyond its runs: published figures to set beside ours
/// (`reference/published.json`; empty: no such section) and constant-time verdicts.
#[derive(Debug, Default, Clone)]
pub struct Extras {
    pub published: Vec<crate::published::Published>,
    /// Stored constant-time verdicts: (subject, summary), for the answers.
    pub ct: Vec<(String, String)>,
}

/// The report of `runs` with nothing beyond them.
pub fn render(runs: &[RunFile]) -> String {
    render_with(runs, &Extras::default())
}

/// The report of `runs`, with `extras`.
pub fn render_with(runs: &[RunFile], extras: &Extras) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cryptoscope report</title><style>{STYLE}</style></head><body>\
         <h1>cryptoscope report</h1><p>{} run(s). Medians with 95% bootstrap confidence intervals (black lines); log scales. \
         Only subjects that passed their correctness gate are drawn. Red marks on a sample trace: its level changed by 10% or more \
         while it was measured (the machine, not the code, changed speed).</p>",
        runs.len()
    );
    s.push_str("<p class=\"legend\">");
    for p in crate::PROVIDER_ORDER {
        let _ = write!(
            s,
            "<span><i style=\"background:{}\"></i>{}</span>",
            provider_colour(p),
            esc(p)
        );
    }
    s.push_str("</p>");
    s.push_str(&side_by_side::section(runs));
    for (ri, run) in runs.iter().enumerate() {
        let _ = write!(
            s,
            "<section class=\"run\" id=\"run-{ri}\"><h2>Run {}</h2>",
            esc(&run.run_id)
        );
        if run.results.iter().any(|r| r.median_cycles.is_some()) {
            let against = if extras.published.is_empty() {
                crate::answers::Against::Nothing
            } else {
                crate::answers::Against::Published(&extras.published)
            };
            s.push_str(&crate::answers::html(&crate::answers::answers(
                run, &extras.ct, against,
            )));
        }
        s.push_str(&env_table(run));
        for r in crate::apps::DRIVERS {
            s.push_str(&(r.html)(ri, run));
        }
        if run.results.is_empty() && !run.applications.is_empty() {
            s.push_str("</section>");
            continue;
        }
        s.push_str(&gate_section(run));
        s.push_str(&time_charts(ri, run));
        let sizes = size_bars(run);
        s.push_str(&hash_section(ri, run));
        s.push_str(&cipher_section(ri, run));
        if let Some((h, body)) = crate::aead::rows(&run.results) {
            let h: Vec<&str> = h.iter().map(String::as_str).collect();
            let _ = write!(s, "<h3>AEADs</h3><p>{}</p>", esc(crate::aead::NOTE));
            s.push_str(&plain_table(&h, &body));
        }
        if !sizes.is_empty() {
            s.push_str("<h3>Sizes</h3>");
            s.push_str(&bar_chart(
                &format!("chart-{ri}-sizes"),
                "Public key and ciphertext sizes",
                "bytes",
                &sizes,
            ));
        }
        s.push_str(&versus::section(run, &extras.published));
        s.push_str(&memory_section(ri, run));
        s.push_str(&scale_section(ri, run));
        s.push_str(&all_results(run));
        s.push_str("</section>");
    }
    s.push_str("<p><small>Generated by cryptoscope. Cycles are labelled with their source; see docs/results-schema.md.</small></p></body></html>\n");
    s
}

/// The correctness gate: how many subjects passed, and a table of those that did not.
fn gate_section(run: &RunFile) -> String {
    let mut s = String::new();
    // Gate status of every subject.
    let mut gate: BTreeMap<(String, String), (GateStatus, String)> = BTreeMap::new();
    for r in &run.results {
        gate.entry((r.subject.clone(), r.family.clone()))
            .or_insert((r.gate, r.gate_detail.clone()));
    }
    let passed = gate.values().filter(|g| g.0 == GateStatus::Pass).count();
    let _ = write!(
        s,
        "<h3>Correctness gate</h3><p>{passed} of {} subjects passed.</p>",
        gate.len()
    );
    let not_passed: Vec<_> = gate.iter().filter(|(_, g)| g.0 != GateStatus::Pass).collect();
    if !not_passed.is_empty() {
        s.push_str("<table class=\"gate\"><tr><th>subject</th><th>gate</th><th>reason</th></tr>");
        for ((subject, _), (g, detail)) in not_passed {
            let class = if *g == GateStatus::Unavailable {
                "unavail"
            } else {
                "fail"
            };
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"{class}\">{}</td><td>{}</td></tr>",
                esc(subject),
                g.as_str().to_uppercase(),
                esc(detail)
            );
        }
        s.push_str("</table>");
    }
    s
}

/// One bar chart per (family, operation) of the families drawn as bars (KEMs, key
/// exchange); hashes, ciphers and AEADs have sections of their own.
fn time_charts(ri: usize, run: &RunFile) -> String {
    let mut s = String::new();
    // One chart per (family, operation).
    let groups = op_groups(run.results.iter());
    if run
        .results
        .iter()
        .any(|r| r.median_ns.is_some() && !matches!(r.family.as_str(), "hash" | "cipher" | "aead"))
    {
        s.push_str("<h3>Time per operation</h3>");
    }
    for (family, op) in &groups {
        if family == "hash" || family == "cipher" || family == "aead" {
            continue; // hashes: curves against message length; ciphers and AEADs: their sections
        }
        let bars: Vec<Bar> = run
            .results
            .iter()
            .filter(|r| &r.family == family && &r.operation == op && r.gate == GateStatus::Pass)
            .filter_map(|r| {
                let m = r.median_ns?;
                let ci = r.ci95_low_ns.zip(r.ci95_high_ns);
                Some((subject_label(r), m, ci, provider_colour(&r.provider)))
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let title = format!("{} {op}: median time", family.to_uppercase());
        s.push_str(&bar_chart(&format!("chart-{ri}-{family}-{op}"), &title, "ns", &bars));
    }
    s
}

/// Public key and ciphertext sizes, once per algorithm (KEMs and key exchange).
fn size_bars(run: &RunFile) -> Vec<Bar> {
    // Sizes, once per algorithm.
    let mut sizes: Vec<Bar> = Vec::new();
    let mut seen = Vec::new();
    for r in &run.results {
        if seen.contains(&r.algorithm) || matches!(r.family.as_str(), "hash" | "cipher" | "aead") {
            continue;
        }
        seen.push(r.algorithm.clone());
        sizes.push((
            format!("{} public key", r.algorithm),
            r.sizes.public_key as f64,
            None,
            PALETTE[0],
        ));
        if r.sizes.ciphertext > 0 {
            sizes.push((
                format!("{} ciphertext", r.algorithm),
                r.sizes.ciphertext as f64,
                None,
                PALETTE[1],
            ));
        }
    }
    sizes
}

/// Every result of the run, with its sample trace and level shifts.
fn all_results(run: &RunFile) -> String {
    let mut s = String::new();
    // Every result.
    s.push_str("<h3>All results</h3><table class=\"results\"><tr><th>algorithm</th><th>provider</th><th>impl</th><th>op</th><th>gate</th><th>median cycles</th><th>95% CI</th><th>median time</th><th>n</th><th>outliers</th><th>source</th><th>samples over time</th><th>level shifts ≥10%</th></tr>");
    for r in &run.results {
        let (med, ci, t) = match (r.gate, r.median_cycles) {
            (GateStatus::Pass, Some(m)) => (
                table::group(m),
                match (r.ci95_low_cycles, r.ci95_high_cycles) {
                    (Some(a), Some(b)) => format!("{} – {}", table::group(a), table::group(b)),
                    _ => String::new(),
                },
                r.median_ns.map(table::duration).unwrap_or_default(),
            ),
            _ => (String::new(), String::new(), String::new()),
        };
        let class = match r.gate {
            GateStatus::Pass => "",
            GateStatus::Unavailable => "unavail",
            _ => "fail",
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td class=\"n\">{med}</td><td class=\"n\">{ci}</td><td class=\"n\">{t}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.algorithm),
            esc(&r.provider),
            esc(&r.implementation),
            esc(&r.operation),
            esc(&r.gate_label()),
            r.samples,
            r.outliers.map(|o| o.to_string()).unwrap_or_default(),
            r.cycle_source.map(|c| c.label()).unwrap_or(""),
            sparkline(&r.raw_ns),
            shift_note(&r.raw_ns)
        );
    }
    s.push_str("</table>");
    s
}

/// A table of escaped text cells under a header row.
fn plain_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = String::from("<table><tr>");
    for h in header {
        let _ = write!(t, "<th>{}</th>", esc(h));
    }
    t.push_str("</tr>");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            let _ = write!(t, "<td>{}</td>", esc(c));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

/// Block ciphers: the summary and per-function tables, and per cipher one chart of cycles
/// per byte of every strategy's operations (log scale: the strategies span two decades).
fn cipher_section(ri: usize, run: &RunFile) -> String {
    let (h, body) = crate::cipher::summary_rows(&run.results);
    if body.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>Block ciphers</h3>");
    let _ = write!(
        s,
        "<p>Cycles per byte from the median cycles of one call. 1 block: the latency of encrypting one block;          ECB and CTR: 4 KiB per call, the throughput of strategies that encrypt many blocks at once.          <em>secret tables</em> marks strategies that index memory with secret data. {}{}</p>",
        esc(&crate::cipher::core_note(run.environment.core_per_tsc)),
        esc(crate::cipher::AARCH64_NOTE)
    );
    s.push_str(&plain_table(&h, &body));
    let mut ciphers: Vec<&str> = Vec::new();
    for r in run.results.iter().filter(|r| r.family == "cipher") {
        if !ciphers.contains(&r.algorithm.as_str()) {
            ciphers.push(&r.algorithm);
        }
    }
    let kinds = [
        "block",
        "ecb",
        "ctr",
        "subcells",
        "permbits",
        "addroundkey",
        "feistel",
        "fl",
    ];
    for (ci, c) in ciphers.iter().enumerate() {
        let bars: Vec<Bar> = run
            .results
            .iter()
            .filter(|r| r.family == "cipher" && r.algorithm == *c && r.gate == GateStatus::Pass)
            .filter_map(|r| {
                let n = cryptoscope_catalogue::Operation::parse(&r.operation)?.message_bytes()? as f64;
                let kind = r.operation.split(':').next().unwrap_or_default();
                let colour = PALETTE[kinds.iter().position(|k| *k == kind).unwrap_or(0) % PALETTE.len()];
                let label = format!("{}/{} {}", r.provider, r.implementation, r.operation);
                Some((label, r.median_cycles? / n, None, colour))
            })
            .collect();
        if !bars.is_empty() {
            s.push_str(&bar_chart(
                &format!("cipher-{ri}-{ci}"),
                &format!("{c}: cycles per byte"),
                "c/B",
                &bars,
            ));
        }
    }
    let (fh, fbody) = crate::cipher::function_rows(&run.results);
    s.push_str("<h4>Per function</h4>");
    s.push_str(&plain_table(&fh, &fbody));
    s
}

/// One line of the hash plot: (algorithm, subject label, provider, streamed).
type SeriesKey = (String, String, String, bool);

/// Hash functions: one chart per algorithm, cycles per byte (log scale) against message
/// length (log scale), a solid line per subject for one update (`hash:N`) and a dashed one
/// for 64-byte updates (`stream:N`). A sweep (`run --lengths`) becomes a curve.
fn hash_section(ri: usize, run: &RunFile) -> String {
    // (algorithm, subject label, provider, streamed) -> [(bytes, cycles per byte)]
    let mut lines: BTreeMap<SeriesKey, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &run.results {
        if r.family != "hash" || r.gate != GateStatus::Pass {
            continue;
        }
        let (Some(op), Some(c)) = (cryptoscope_catalogue::Operation::parse(&r.operation), r.median_cycles) else {
            continue;
        };
        let Some(n) = op.message_bytes().filter(|&n| n > 0) else {
            continue;
        };
        let streamed = matches!(op, cryptoscope_catalogue::Operation::Stream(_));
        lines
            .entry((r.algorithm.clone(), subject_label(r), r.provider.clone(), streamed))
            .or_default()
            .push((n as f64, c / n as f64));
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h3>Hash functions: cycles per byte against message length</h3><p>Median cycles of one call (a fresh state,          the message, the digest) divided by the message length. Solid: the message in one update; dashed: in 64-byte          updates. Both axes are logarithmic.</p>",
    );
    let mut algs: Vec<&String> = lines.keys().map(|k| &k.0).collect();
    algs.dedup();
    for (ai, alg) in algs.iter().enumerate() {
        let of_alg: Vec<(&SeriesKey, &Vec<(f64, f64)>)> = lines.iter().filter(|(k, _)| &k.0 == *alg).collect();
        let (w, h, left, top, bottom) = (640.0, 260.0, 70.0, 24.0, 30.0);
        let xs = of_alg.iter().flat_map(|(_, v)| v.iter().map(|p| p.0));
        let (x_lo, x_hi) = (xs.clone().fold(f64::MAX, f64::min), xs.fold(1.0, f64::max).max(2.0));
        let ys = of_alg.iter().flat_map(|(_, v)| v.iter().map(|p| p.1));
        let (y_lo, y_hi) = (ys.clone().fold(f64::MAX, f64::min).max(1e-3), ys.fold(1e-3, f64::max));
        let (ly0, ly1) = (
            y_lo.log10().floor(),
            y_hi.log10().ceil().max(y_lo.log10().floor() + 1.0),
        );
        let x = |v: f64| left + (w - left - 20.0) * (v.log2() - x_lo.log2()) / (x_hi.log2() - x_lo.log2()).max(1e-9);
        let y = |v: f64| top + (h - top - bottom) * (1.0 - (v.log10() - ly0) / (ly1 - ly0));
        let _ = write!(
            s,
            r#"<svg class="chart hash" id="chart-{ri}-hash-{ai}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="cycles per byte"><text class="title" x="0" y="16">{}: cycles per byte against message length (bytes)</text>"#,
            esc(alg)
        );
        let mut t = 2f64.powi(x_lo.log2().ceil() as i32);
        while t <= x_hi {
            let _ = write!(
                s,
                r#"<line class="grid" x1="{xt:.1}" x2="{xt:.1}" y1="{top}" y2="{yb:.1}"/><text class="tick" x="{xt:.1}" y="{ty:.1}">{}</text>"#,
                table::group(t),
                xt = x(t),
                yb = h - bottom,
                ty = h - 12.0
            );
            t *= if x_hi / x_lo > 4096.0 { 16.0 } else { 4.0 };
        }
        let mut d = ly0;
        while d <= ly1 {
            let v = 10f64.powf(d);
            let yv = y(v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{left}" x2="{:.1}" y1="{yv:.1}" y2="{yv:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                w - 20.0,
                left - 6.0,
                yv + 4.0,
                if v >= 1.0 { table::group(v) } else { format!("{v}") },
            );
            d += 1.0;
        }
        for ((_, label, provider, streamed), pts) in &of_alg {
            let mut pts: Vec<(f64, f64)> = pts.to_vec();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let colour = provider_colour(provider);
            let dash = if *streamed { r#" stroke-dasharray="5,3""# } else { "" };
            let kind = if *streamed { "64-byte updates" } else { "one update" };
            let line: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1))).collect();
            let _ = write!(
                s,
                r#"<polyline class="hashline" fill="none" stroke="{colour}" stroke-width="2"{dash} points="{}"><title>{} ({kind})</title></polyline>"#,
                line.join(" "),
                esc(label)
            );
            if pts.len() <= 64 {
                for p in &pts {
                    let _ = write!(
                        s,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"><title>{} ({kind}): {} bytes, {:.2} cycles/byte</title></circle>"#,
                        x(p.0),
                        y(p.1),
                        esc(label),
                        table::group(p.0),
                        p.1
                    );
                }
            }
        }
        s.push_str("</svg>");
    }
    s
}

/// Throughput against threads: one line chart per (family, operation), a line per
/// subject, log-2 thread axis, linear throughput axis from zero.
fn scale_section(ri: usize, run: &RunFile) -> String {
    let rows: Vec<&ResultRow> = run
        .results
        .iter()
        .filter(|r| r.gate == GateStatus::Pass && r.scaling.as_ref().is_some_and(|p| !p.is_empty()))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>Throughput against threads</h3><p>Operations per second with every thread running the operation on its own keys; \
         the dashed line is linear scaling from one thread. This machine: {} logical CPUs{}.</p>",
        run.environment.logical_cpus,
        run.environment
            .physical_cores
            .map(|c| format!(" on {c} cores"))
            .unwrap_or_default()
    );
    let groups = op_groups(rows.iter().copied());
    for (family, op) in &groups {
        let of_op: Vec<&&ResultRow> = rows
            .iter()
            .filter(|r| &r.family == family && &r.operation == op)
            .collect();
        let (w, h, left, top, bottom) = (640.0, 260.0, 70.0, 24.0, 30.0);
        let max_t = of_op
            .iter()
            .flat_map(|r| r.scaling.iter().flatten().map(|p| p.threads))
            .max()
            .unwrap_or(1)
            .max(2) as f64;
        let max_y = of_op
            .iter()
            .flat_map(|r| r.scaling.iter().flatten().map(|p| p.ops_per_s))
            .fold(1.0, f64::max)
            * 1.1;
        let x = |t: f64| left + (w - left - 20.0) * t.log2() / max_t.log2();
        let y = |v: f64| top + (h - top - bottom) * (1.0 - v / max_y);
        let _ = write!(
            s,
            r#"<svg class="chart scale" id="chart-{ri}-scale-{family}-{op}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="throughput"><text class="title" x="0" y="16">{} {op}: operations per second against threads</text>"#,
            family.to_uppercase()
        );
        let mut t = 1.0;
        while t <= max_t {
            let _ = write!(
                s,
                r#"<line class="grid" x1="{xt:.1}" x2="{xt:.1}" y1="{top}" y2="{yb:.1}"/><text class="tick" x="{xt:.1}" y="{ty:.1}">{t}</text>"#,
                xt = x(t),
                yb = h - bottom,
                ty = h - 12.0
            );
            t *= 2.0;
        }
        let _ = write!(
            s,
            r#"<text class="tick" x="4" y="{:.1}">{}</text><text class="tick" x="4" y="{:.1}">0</text>"#,
            y(max_y / 1.1) + 4.0,
            table::group(max_y / 1.1),
            y(0.0)
        );
        for r in &of_op {
            let pts = r.scaling.as_deref().unwrap_or_default();
            let colour = provider_colour(&r.provider);
            let line: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", x(p.threads as f64), y(p.ops_per_s)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline class="scaleline" fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
                line.join(" "),
                esc(&subject_label(r))
            );
            if let Some(one) = pts.iter().find(|p| p.threads == 1) {
                let lin: Vec<String> = pts
                    .iter()
                    .map(|p| {
                        format!(
                            "{:.1},{:.1}",
                            x(p.threads as f64),
                            y((one.ops_per_s * p.threads as f64).min(max_y))
                        )
                    })
                    .collect();
                let _ = write!(
                    s,
                    r#"<polyline class="linear" fill="none" stroke="{colour}" stroke-dasharray="3,3" stroke-opacity="0.5" points="{}"/>"#,
                    lin.join(" ")
                );
            }
            for p in pts {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: {} threads, {} ops/s, threads min/max {:.2}</title></circle>"#,
                    x(p.threads as f64),
                    y(p.ops_per_s),
                    esc(&subject_label(r)),
                    p.threads,
                    table::group(p.ops_per_s),
                    p.min_max_ratio
                );
            }
        }
        s.push_str("</svg>");
    }
    s
}

/// A per-row figure drawn as a chart.
type Figure = fn(&ResultRow) -> Option<u64>;

/// Heap and stack charts and table, when the run has a memory pass.
fn memory_section(ri: usize, run: &RunFile) -> String {
    let rows: Vec<&ResultRow> = run
        .results
        .iter()
        .filter(|r| r.gate == GateStatus::Pass && r.stack_bytes.is_some())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h3>Heap and stack</h3><p>Measured in a pass apart from timing. Heap: bytes the operation allocated and held at \
         most at one time (malloc family, after one warm-up call). Stack: high-water mark of the operation on a painted stack. \
         Subjects that allocate nothing are listed, not drawn (a log scale has no zero).</p>",
    );
    let groups = op_groups(rows.iter().copied());
    for (family, op) in &groups {
        let of_op: Vec<&&ResultRow> = rows
            .iter()
            .filter(|r| &r.family == family && &r.operation == op)
            .collect();
        // One chart per figure; zero values are listed below instead (no zero on a log scale).
        let figures: [(&str, &str, Figure); 2] = [
            ("stack", "stack high-water mark", |r| r.stack_bytes),
            ("heap", "peak heap", |r| r.heap_peak_bytes),
        ];
        for (key, what, value) in figures {
            let bars: Vec<Bar> = of_op
                .iter()
                .filter_map(|r| Some((subject_label(r), value(r)? as f64, None, provider_colour(&r.provider))))
                .filter(|b| b.1 > 0.0)
                .collect();
            if !bars.is_empty() {
                let title = format!("{} {op}: {what}", family.to_uppercase());
                s.push_str(&bar_chart(
                    &format!("chart-{ri}-{key}-{family}-{op}"),
                    &title,
                    "bytes",
                    &bars,
                ));
            }
        }
        let none: Vec<String> = of_op
            .iter()
            .filter(|r| r.heap_peak_bytes == Some(0))
            .map(|r| esc(&subject_label(r)))
            .collect();
        if !none.is_empty() {
            let _ = write!(
                s,
                "<p class=\"noheap\">{} {op}, no heap allocation: {}.</p>",
                family.to_uppercase(),
                none.join("; ")
            );
        }
    }
    s.push_str("<table class=\"results memory\"><tr><th>algorithm</th><th>provider</th><th>impl</th><th>op</th><th>heap allocations</th><th>heap bytes</th><th>peak heap</th><th>stack</th><th>code</th></tr>");
    let n = |x: Option<u64>| x.map(|v| table::group(v as f64)).unwrap_or_default();
    for r in &rows {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\" title=\"{}\">{}</td></tr>",
            esc(&r.algorithm),
            esc(&r.provider),
            esc(&r.implementation),
            esc(&r.operation),
            n(r.heap_allocations),
            n(r.heap_bytes),
            n(r.heap_peak_bytes),
            n(r.stack_bytes),
            esc(r.code_bytes_method.as_deref().unwrap_or("not determined")),
            n(r.code_bytes)
        );
    }
    s.push_str("</table>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_has_a_colour_of_its_own() {
        let all: Vec<&str> = crate::PROVIDER_ORDER
            .iter()
            .chain(cryptoscope_model::names::TEST_PROVIDERS)
            .copied()
            .collect();
        let colours: std::collections::BTreeSet<&str> = all.iter().map(|p| provider_colour(p)).collect();
        assert_eq!(colours.len(), all.len(), "two providers share a colour");
        assert!(!colours.contains(UNKNOWN));
        assert_eq!(provider_colour("not-a-provider"), UNKNOWN);
    }

    #[test]
    fn escaping_and_axes() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert_eq!(log_axis([150.0, 20_000.0].into_iter()), (100.0, 100_000.0));
        let c = bar_chart("x", "t", "ns", &[("a".into(), 1000.0, Some((900.0, 1100.0)), "#000")]);
        assert!(c.contains("<rect class=\"bar\"") && c.contains("class=\"ci\""));
        assert!(sparkline(&[1.0]).is_empty());
        assert!(sparkline(&[1.0, 3.0, 2.0]).contains("polyline"));
    }
}
