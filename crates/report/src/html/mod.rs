//! A self-contained HTML report (inline CSS, SVG and one small hand-written script, no
//! network) of one or more runs: environment, gate status of every subject, per-operation
//! bar charts with 95% confidence intervals (log scale), the trade-off of bytes on the wire
//! against cycles, key and ciphertext sizes, and every result in a sortable table with its
//! samples on demand. Toggles at the top hide or show a provider or family everywhere
//! (`explore.rs`); ARCHITECTURE.md says why the charts are hand-written SVG.
//!
//! Subjects that did not pass their gate are listed with the reason and never drawn as
//! bars: a failed implementation is never ranked.

use crate::{table, GateStatus, ResultRow, RunFile};
use std::collections::BTreeMap;
use std::fmt::Write as _;

mod apps;
mod bars;
mod details;
mod explore;
mod latency;
mod lines;
mod marks;
mod side_by_side;
#[cfg(test)]
pub(crate) mod testrows;
pub mod tradeoff;
pub(crate) mod versus;
pub(crate) use apps::{ab_section, ct_section, openvpn_section, tahoe_section, tls_section, tunnel_section};
use bars::{bar_chart, Bar};
use marks::Of;

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

/// Relative level change that counts as a shift in reports.
pub const SHIFT_RATIO: f64 = 0.10;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.fail{color:#b00020;font-weight:bold}.better{color:#1b5e20;font-weight:bold}.unavail{color:#888}\
svg.chart{display:block;margin:12px 0}svg .title{font-size:13px;font-weight:bold}svg .label{font-size:11px;text-anchor:end}\
svg .tick,svg .unit{font-size:10px;fill:#555;text-anchor:middle}svg .grid{stroke:#ddd}svg .ci{stroke:#000;stroke-width:1.5}\
svg.spark polyline{fill:none;stroke:#1b6ca8;stroke-width:1}";

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
            "emulation",
            e.emulated.clone().unwrap_or_else(|| "none (native)".into()),
        ),
        (
            "preflight",
            match &e.preflight {
                None => "not recorded".into(),
                Some(p) if p.warnings.is_empty() => "no warnings".into(),
                Some(p) => p
                    .warnings
                    .iter()
                    .map(|w| format!("{} (fix: {})", w.what, w.fix))
                    .collect::<Vec<_>>()
                    .join("; "),
            },
        ),
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
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cryptoscope report</title><style>{STYLE}{}</style></head><body>\
         <h1>cryptoscope report</h1><p>{} run(s). Medians with 95% bootstrap confidence intervals (black lines); log scales. \
         Only subjects that passed their correctness gate are drawn. The boxes above the charts show or hide a provider or \
         a family everywhere; a table sorts by the column whose header is clicked, and the box above it filters its rows.</p>",
        explore::STYLE,
        runs.len()
    );
    // Explorable page: the toggles (explore.rs); runs side by side when there are several.
    s.push_str(&explore::controls(runs));
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
        s.push_str(&details::stability_sentence(run));
        for r in crate::apps::DRIVERS {
            s.push_str(&(r.html)(ri, run));
        }
        if run.results.is_empty() && !run.applications.is_empty() {
            s.push_str("</section>");
            continue;
        }
        s.push_str(&gate_section(run));
        s.push_str(&time_charts(ri, run));
        s.push_str(&tradeoff::section(ri, run));
        let sizes = size_bars(run);
        s.push_str(&lines::hash_charts(ri, run));
        s.push_str(&cipher_section(ri, run));
        if let Some((h, body)) = crate::aead::rows(&run.results) {
            let h: Vec<&str> = h.iter().map(String::as_str).collect();
            let _ = write!(s, "<h3>AEADs</h3><p>{}</p>", esc(crate::aead::NOTE));
            s.push_str(&explore::sortable_table(
                &format!("aead-{ri}"),
                "aead",
                &h,
                &body,
                "aead",
            ));
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
        s.push_str(&all_results(ri, run));
        s.push_str("</section>");
    }
    s.push_str("<p><small>Generated by cryptoscope. Cycles are labelled with their source; see docs/results-schema.md.</small></p>");
    // The explorable page's script (explore.rs), last: the page reads the same without it.
    let _ = writeln!(s, "<script>{}</script></body></html>", explore::SCRIPT);
    s
}

/// The correctness gate: how many subjects passed, and a table of those that did not.
fn gate_section(run: &RunFile) -> String {
    let mut s = String::new();
    // Gate status of every subject.
    let mut gate: BTreeMap<(String, String), (GateStatus, String, String)> = BTreeMap::new();
    for r in &run.results {
        gate.entry((r.subject.clone(), r.family.clone())).or_insert((
            r.gate,
            r.gate_detail.clone(),
            r.provider.clone(),
        ));
    }
    let passed = gate.values().filter(|g| g.0 == GateStatus::Pass).count();
    let _ = write!(
        s,
        "<h3>Correctness gate</h3><p>{passed} of {} subjects passed.</p>",
        gate.len()
    );
    let not_passed: Vec<_> = gate.iter().filter(|(_, g)| g.0 != GateStatus::Pass).collect();
    if !not_passed.is_empty() {
        s.push_str(&explore::table_head("", "gate", &["subject", "gate", "reason"]));
        for ((subject, family), (g, detail, provider)) in not_passed {
            let class = if *g == GateStatus::Unavailable {
                "unavail"
            } else {
                "fail"
            };
            let of = Of {
                provider: provider.clone(),
                family: family.clone(),
            };
            let _ = write!(
                s,
                "{}<td>{}</td><td class=\"{class}\">{}</td><td>{}</td></tr>",
                explore::row_start(&of),
                esc(subject),
                g.as_str().to_uppercase(),
                esc(detail)
            );
        }
        s.push_str(explore::TABLE_END);
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
                Some(Bar::new(subject_label(r), m, ci, provider_colour(&r.provider)).of(Of::row(r)))
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
        let (pk, ct) = (r.sizes.public_key as f64, r.sizes.ciphertext as f64);
        let of = Of::family(&r.family);
        sizes.push(Bar::new(format!("{} public key", r.algorithm), pk, None, PALETTE[0]).of(of.clone()));
        if r.sizes.ciphertext > 0 {
            sizes.push(Bar::new(format!("{} ciphertext", r.algorithm), ct, None, PALETTE[1]).of(of));
        }
    }
    sizes
}

/// The header of the All results table (the script's sort columns count from 0 here).
const RESULTS_HEADER: &[&str] = &[
    "algorithm",
    "provider",
    "impl",
    "op",
    "gate",
    "median cycles",
    "95% CI",
    "median time",
    "n",
    "outliers",
    "source",
    "off fast level",
    "samples",
];

/// Every result of the run, with the share of its samples off its fast level and, folded,
/// its sample trace and distribution.
fn all_results(ri: usize, run: &RunFile) -> String {
    let mut s = String::from("<h3>All results</h3>");
    s.push_str(&explore::table_head(
        &format!("results-{ri}"),
        "results",
        RESULTS_HEADER,
    ));
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
            "{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td class=\"n\">{med}</td><td class=\"n\">{ci}</td><td class=\"n\">{t}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            explore::row_start(&Of::row(r)),
            esc(&r.algorithm),
            esc(&r.provider),
            esc(&r.implementation),
            esc(&r.operation),
            esc(&r.gate_label()),
            r.samples,
            r.outliers.map(|o| o.to_string()).unwrap_or_default(),
            r.cycle_source.map(|c| c.label()).unwrap_or(""),
            details::off_fast_cell(&r.raw_ns),
            details::details_cell(r)
        );
    }
    s.push_str(explore::TABLE_END);
    s
}

/// A sortable table of escaped text cells under a header row (rows carry the provider of
/// their "provider" column).
fn plain_table(header: &[&str], rows: &[Vec<String>]) -> String {
    explore::sortable_table("", "", header, rows, "")
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
    s.push_str(&explore::sortable_table(
        &format!("cipher-{ri}"),
        "",
        &h,
        &body,
        "cipher",
    ));
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
                let n = cryptoscope_model::descriptor::Operation::parse(&r.operation)?.message_bytes()? as f64;
                let kind = r.operation.split(':').next().unwrap_or_default();
                let colour = PALETTE[kinds.iter().position(|k| *k == kind).unwrap_or(0) % PALETTE.len()];
                let label = format!("{}/{} {}", r.provider, r.implementation, r.operation);
                Some(Bar::new(label, r.median_cycles? / n, None, colour).of(Of::row(r)))
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
        s.push_str(&lines::cipher_lines(&format!("chart-{ri}-cipherline-{ci}"), run, c));
    }
    let (fh, fbody) = crate::cipher::function_rows(&run.results);
    s.push_str("<h4>Per function</h4>");
    let fid = format!("cipherfn-{ri}");
    s.push_str(&explore::sortable_table(&fid, "", &fh, &fbody, "cipher"));
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
                r#"<g class="mark"{}><polyline class="scaleline" fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
                Of::row(r).attrs(),
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
            s.push_str("</g>");
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
                .filter_map(|r| {
                    let bar = Bar::new(subject_label(r), value(r)? as f64, None, provider_colour(&r.provider));
                    Some(bar.of(Of::row(r)))
                })
                .filter(|b| b.value > 0.0)
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
    let header = [
        "algorithm",
        "provider",
        "impl",
        "op",
        "heap allocations",
        "heap bytes",
        "peak heap",
        "stack",
        "code",
    ];
    s.push_str(&explore::table_head(&format!("memory-{ri}"), "results memory", &header));
    let n = |x: Option<u64>| x.map(|v| table::group(v as f64)).unwrap_or_default();
    for r in &rows {
        let _ = write!(
            s,
            "{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\" title=\"{}\">{}</td></tr>",
            explore::row_start(&Of::row(r)),
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
    s.push_str(explore::TABLE_END);
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
    fn a_default_size_run_with_memory_stays_under_two_megabytes() {
        // The default run's shape: 56 KEMs (3 operations) and 7 key exchanges (4), each with
        // 1,000 samples (the most a default run takes) and the memory pass's figures.
        let mut rows = Vec::new();
        for i in 0..63usize {
            let (alg, family, ops): (&str, &str, &[&str]) = if i < 56 {
                ("Classic-McEliece-8192128f", "kem", &["keypair", "encaps", "decaps"])
            } else {
                ("X25519", "kex", &["keypair", "derive", "validate", "exchange"])
            };
            for op in ops {
                let provider = crate::PROVIDER_ORDER[i % 5];
                let mut r = testrows::row(alg, family, provider, op, 1e5 + i as f64);
                r.subject = format!("{alg}/{provider}/implementation-{i}");
                r.implementation = format!("implementation-{i}");
                r.raw_ns = (0..1000).map(|k| 4e4 + ((k * 7919 + i) % 997) as f64).collect();
                r.raw_cycles = r.raw_ns.iter().map(|x| x * 2.6).collect();
                r.samples = 1000;
                (r.ci95_low_cycles, r.ci95_high_cycles) = (Some(99_000.0), Some(101_000.0));
                (r.ci95_low_ns, r.ci95_high_ns) = (Some(39_000.0), Some(41_000.0));
                r.stack_bytes = Some(12_345);
                r.heap_peak_bytes = Some(1_048_576);
                (r.heap_allocations, r.heap_bytes, r.code_bytes) = (Some(7), Some(2_000_000), Some(40_000));
                rows.push(r);
            }
        }
        let html = render(&[testrows::run(rows)]);
        eprintln!("default-size report: {} bytes", html.len());
        assert!(html.len() < 2_000_000, "{} bytes", html.len());
        assert_eq!(html.matches("<details>").count(), 196, "samples on demand per row");
    }

    #[test]
    fn escaping() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
