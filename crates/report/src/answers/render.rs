//! The answers as text for a terminal (78 columns) and as an HTML fragment for the report:
//! one `<div class="answer">` per question, each table `sortable`.

use super::{Answers, CtLine, Fastest, Gain, MachineStability, PublishedLine, TradeoffPoint, Versus};
use crate::html::esc;
use crate::table::{duration, group, render};
use std::fmt::Write as _;

/// The width the terminal answers wrap at.
const WIDTH: usize = 78;

/// The questions, numbered as printed.
const QUESTIONS: [&str; 5] = [
    "Fastest here",
    "Cost against bytes",
    "What optimised code buys",
    "Constant-time next to speed",
    "Against published figures or a previous run",
];

/// A space [`wrap`] does not break at.
const KEEP: char = '\u{1}';

/// `s` with its spaces kept together by [`wrap`] (unless it is too long for one line).
fn keep(s: &str) -> String {
    if s.chars().count() > WIDTH - 10 {
        s.to_string()
    } else {
        s.replace(' ', &KEEP.to_string())
    }
}

/// `text` wrapped at [`WIDTH`] between words (never inside what [`keep`] joined): the first
/// line indented by `indent` spaces, the others by `indent + hang`.
fn wrap(text: &str, indent: usize, hang: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(indent);
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent + hang);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out.replace(KEEP, " ")
}

/// A table indented under its question.
fn indented(table: &str) -> String {
    table.lines().map(|l| format!("   {l}\n")).collect()
}

/// A ratio, with two decimals where one would round it to 1.
fn times(x: f64) -> String {
    if x < 1.1 {
        format!("{x:.2}×")
    } else if x < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.0}×")
    }
}

/// An operation's outcome: "liboqs/dispatch (1.1× pqclean/avx2)", "tied a = b", or the
/// winner alone when the others are tied with it.
fn outcome(f: &Fastest) -> String {
    if !f.tied.is_empty() {
        let names: Vec<String> = std::iter::once(&f.winner).chain(&f.tied).map(|c| c.label()).collect();
        return format!("tied {}", names.join(" = "));
    }
    match (f.ratio(), &f.runner_up) {
        (Some(x), Some(r)) => format!("{} ({} {})", f.winner.label(), times(x), r.label()),
        (None, Some(r)) => format!(
            "{} (below the clock's resolution; then {})",
            f.winner.label(),
            r.label()
        ),
        _ => f.winner.label(),
    }
}

/// A speed-up with its interval: "3.1× [2.9, 3.3]", "no gain [0.95, 1.04]".
fn gain_text(g: &Gain) -> String {
    let interval = format!("[{:.2}, {:.2}]", g.low, g.high);
    if g.no_gain() {
        format!("no gain {interval}")
    } else if g.high < 1.0 {
        format!("{} slower {interval}", times(1.0 / g.speedup))
    } else {
        format!("{} {interval}", times(g.speedup))
    }
}

/// NIST level or classical strength: "level 3", "128-bit".
fn security(p: &TradeoffPoint) -> String {
    match (p.nist_level, p.classical_bits) {
        (Some(l), _) => format!("level {l}"),
        (None, Some(b)) => format!("{b}-bit"),
        _ => "-".into(),
    }
}

fn family_name(f: &str) -> &str {
    match f {
        "kem" => "KEM",
        "kex" => "key exchange",
        "sig" => "signature",
        f => f,
    }
}

/// Percent with no decimals, "<1%" for what would round to 0.
fn percent(x: f64) -> String {
    if x > 0.0 && x < 0.005 {
        "<1%".into()
    } else {
        format!("{:.0}%", x * 100.0)
    }
}

/// Groups of consecutive items with the same key, in order.
fn runs_of<T, K: PartialEq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=items.len() {
        if i == items.len() || key(&items[i]) != key(&items[start]) {
            if i > start {
                out.push(&items[start..i]);
            }
            start = i;
        }
    }
    out
}

const COST_NOTE: &str = "KEM: keypair + encaps + decaps, bytes = public key + ciphertext; key exchange: \
(keypair + exchange) × 2, bytes = a public key each way; signature: sign + verify, bytes = public key + \
signature.";

const NO_FASTEST: &str = "— no operation was measured by two implementations that passed the gate.";
const NO_COST: &str = "— no KEM, key exchange or signature has all the operations of a full exchange measured.";
const NO_GAIN: &str = "— no algorithm was measured both in portable code (clean, ref) and optimised.";
const NOTHING_TO_COMPARE: &str =
    "— no published figure matches an operation of this run, and no previous run was given.";

/// The machine's stability in a few lines: one sentence for the run, then the operations
/// that spent longest off their fast level.
pub fn machine_terminal(m: &MachineStability) -> String {
    let pct = crate::html::SHIFT_RATIO * 100.0;
    let mut out = wrap(
        &format!(
            "Unstable machine: {} of {} operations changed speed by {pct:.0}% or more while being measured \
(largest ×{:.2}); the results file keeps each change, the report draws each fast level.",
            m.shifted, m.examined, m.largest
        ),
        0,
        0,
    );
    if !m.worst.is_empty() {
        out += &wrap(
            &format!("Share of samples taken {pct:.0}% or more slower than the operation's fastest level, the worst:"),
            0,
            0,
        );
        let rows: Vec<Vec<String>> = m
            .worst
            .iter()
            .map(|w| {
                vec![
                    w.algorithm.clone(),
                    w.label.clone(),
                    w.operation.clone(),
                    percent(w.fraction),
                ]
            })
            .collect();
        let t = render(
            &["algorithm", "implementation", "op", "off fast level"],
            &rows,
            &[false, false, false, true],
        );
        out += &t.lines().map(|l| format!("  {l}\n")).collect::<String>();
    }
    out
}

/// The answers for a terminal: "Answers", then the five questions, "—" and why where one
/// has nothing to say.
pub fn terminal(a: &Answers) -> String {
    let mut out = String::from("Answers\n");
    let head = |n: usize, note: &str| format!("{}. {}{note}\n", n + 1, QUESTIONS[n]);
    out += &head(0, " (median cycles; tied where the 95% intervals overlap):");
    if a.fastest.is_empty() {
        out += &wrap(NO_FASTEST, 3, 2);
    }
    for group in runs_of(&a.fastest, |f| f.algorithm.clone()) {
        let parts: Vec<String> = group
            .iter()
            .map(|f| keep(&format!("{} {}", f.operation, outcome(f))))
            .collect();
        out += &wrap(&format!("{}: {}", group[0].algorithm, parts.join(", ")), 3, 2);
    }
    out += &head(1, " (one exchange or signature, fastest implementation):");
    if a.costs.is_empty() {
        out += &wrap(NO_COST, 3, 2);
    } else {
        out += &indented(&cost_table(&a.costs));
        out += &wrap(COST_NOTE, 3, 0);
    }
    out += &head(2, " (portable / optimised median, 95% interval):");
    if a.gains.is_empty() {
        out += &wrap(NO_GAIN, 3, 2);
    }
    for group in runs_of(&a.gains, |g| {
        (g.algorithm.clone(), g.optimised.clone(), g.portable.clone())
    }) {
        let parts: Vec<String> = group
            .iter()
            .map(|g| keep(&format!("{} {}", g.operation, gain_text(g))))
            .collect();
        let g = &group[0];
        out += &wrap(
            &format!(
                "{} {} over {}: {}",
                g.algorithm,
                g.optimised,
                g.portable,
                parts.join(", ")
            ),
            3,
            2,
        );
    }
    out += &head(3, " (latest `cryptoscope ct` audit):");
    if a.ct.is_empty() {
        out += &wrap(
            &format!(
                "— none of the {} subjects measured here has been audited: {}",
                a.measured_subjects,
                keep(&format!("`{}`.", a.ct_command))
            ),
            3,
            2,
        );
    }
    for c in &a.ct {
        out += &wrap(&ct_text(c), 3, 2);
    }
    out += &format!("{}. {}:\n", 5, QUESTIONS[4]);
    out += &match &a.versus {
        None => wrap(NOTHING_TO_COMPARE, 3, 2),
        Some(v) => versus_terminal(v, &a.run_id),
    };
    out
}

fn ct_text(c: &CtLine) -> String {
    let mut s = format!("{}: {}", c.subject, c.verdict);
    if let Some((op, ns)) = &c.fastest_op {
        let _ = write!(s, "; {}", keep(&format!("fastest op {op} {}", duration(*ns))));
    }
    if let Some(x) = c.exchange_cycles {
        let _ = write!(s, "; {}", keep(&format!("full exchange {} cycles", group(x))));
    }
    if !c.wins.is_empty() {
        let _ = write!(s, "; fastest here at {}", c.wins.join(", "));
    }
    s
}

fn cost_table(costs: &[TradeoffPoint]) -> String {
    let rows: Vec<Vec<String>> = costs
        .iter()
        .map(|p| {
            vec![
                p.algorithm.clone(),
                family_name(&p.family).to_string(),
                format!("{}/{}", p.provider, p.implementation),
                group(p.cycles),
                group(p.bytes as f64),
                security(p),
            ]
        })
        .collect();
    render(
        &["algorithm", "family", "fastest", "cycles", "bytes", "security"],
        &rows,
        &[false, false, false, true, true, false],
    )
}

/// "X25519 derive 0.41: ours 48,538 aws-lc/default; theirs 118,455 OpenSSL 3.1.1 on Intel
/// Skylake".
fn published_text(l: &PublishedLine) -> String {
    let cpu = if l.cpu.is_empty() {
        String::new()
    } else {
        format!(" on {}", l.cpu)
    };
    format!(
        "{}: ours {}; theirs {}",
        keep(&format!("{} {} {:.2}", l.algorithm, l.operation, l.ratio)),
        keep(&format!("{} {}", l.our_figure, l.ours)),
        keep(&format!("{} {}{cpu}", l.their_figure, l.theirs)),
    )
}

/// How many published figures match, how many on our class of processor, the median
/// ratio and what it means.
fn published_summary(v: &Versus) -> String {
    let Versus::Published {
        matched,
        arch,
        comparable,
        median_ratio,
        ..
    } = v
    else {
        return String::new();
    };
    let figures = if *matched == 1 {
        "figure matches"
    } else {
        "figures match"
    };
    let (of_ours, over) = match arch {
        Some(a) if *comparable > 0 => (
            format!(", {comparable} of them measured on {a} processors as ours"),
            " over those",
        ),
        Some(a) => (format!(", none of them measured on {a} processors as ours"), ""),
        None => (String::new(), ""),
    };
    format!(
        "{matched} published {figures} this run{of_ours}; ours/theirs {median_ratio:.2} at the median{over} (below 1: \
ours is faster; their CPU models are not ours). Farthest from parity:"
    )
}

fn versus_terminal(v: &Versus, run_id: &str) -> String {
    match v {
        Versus::Published { lines, .. } => {
            let mut out = wrap(&published_summary(v), 3, 0);
            for l in lines {
                out += &wrap(&published_text(l), 3, 2);
            }
            out + &wrap(
                &format!("All of them: {}", keep(&format!("`cryptoscope compare --published {run_id}`."))),
                3,
                0,
            )
        }
        Versus::Withheld(why) => wrap(&format!("— {why}."), 3, 2),
        Versus::Run {
            run_id: prev,
            faster,
            slower,
            unchanged,
            missing,
            test,
        } => wrap(
            &format!(
                "Against run {prev}: {faster} faster, {slower} slower, {unchanged} no significant change, {missing} not \
comparable ({test})."
            ),
            3,
            0,
        ),
    }
}

/// A table cell; numbers carry their value for sorting.
fn td(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

fn td_num(text: &str, value: f64) -> String {
    format!("<td class=\"num\" data-value=\"{value}\">{}</td>", esc(text))
}

fn html_table(header: &[&str], rows: &[String]) -> String {
    let mut s = String::from("<table class=\"sortable\"><thead><tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s += "</tr></thead><tbody>\n";
    for r in rows {
        let _ = writeln!(s, "<tr>{r}</tr>");
    }
    s + "</tbody></table>\n"
}

/// One question's `<div>`: its heading, a note, and a table or why there is none.
fn div(n: usize, note: &str, body: Result<String, String>) -> String {
    let mut s = format!(
        "<div class=\"answer\" id=\"answer-{}\">\n<h3>{}. {}</h3>\n",
        n + 1,
        n + 1,
        esc(QUESTIONS[n])
    );
    if !note.is_empty() {
        let _ = writeln!(s, "<p>{}</p>", esc(note));
    }
    match body {
        Ok(t) => s += &t,
        Err(why) => {
            let _ = writeln!(s, "<p class=\"none\">{}</p>", esc(&why));
        }
    }
    s + "</div>\n"
}

/// The "ahead by" of a winner whose median is 0 cycles: no ratio is defined over it.
const BELOW_RESOLUTION: &str = "winner below the clock's resolution";

fn fastest_html(a: &Answers) -> Result<String, String> {
    if a.fastest.is_empty() {
        return Err(NO_FASTEST.into());
    }
    let rows: Vec<String> = a
        .fastest
        .iter()
        .map(|f| {
            let tied: Vec<String> = f.tied.iter().map(|c| c.label()).collect();
            [
                td(&f.algorithm),
                td(&f.operation),
                td(&f.winner.label()),
                td_num(&group(f.winner.median_cycles), f.winner.median_cycles),
                td(&tied.join(", ")),
                td(&f.runner_up.as_ref().map(|r| r.label()).unwrap_or_default()),
                match f.ratio() {
                    Some(x) => td_num(&times(x), x),
                    None if f.tied.is_empty() && f.runner_up.is_some() => td(BELOW_RESOLUTION),
                    None => td(""),
                },
            ]
            .concat()
        })
        .collect();
    Ok(html_table(
        &[
            "algorithm",
            "op",
            "fastest",
            "median cycles",
            "tied with",
            "runner-up",
            "ahead by",
        ],
        &rows,
    ))
}

fn costs_html(a: &Answers) -> Result<String, String> {
    if a.costs.is_empty() {
        return Err(NO_COST.into());
    }
    let rows: Vec<String> = a
        .costs
        .iter()
        .map(|p| {
            [
                td(&p.algorithm),
                td(family_name(&p.family)),
                td(&format!("{}/{}", p.provider, p.implementation)),
                td_num(&group(p.cycles), p.cycles),
                td_num(&group(p.bytes as f64), p.bytes as f64),
                td(&security(p)),
            ]
            .concat()
        })
        .collect();
    Ok(html_table(
        &["algorithm", "family", "fastest", "cycles", "bytes", "security"],
        &rows,
    ))
}

fn gains_html(a: &Answers) -> Result<String, String> {
    if a.gains.is_empty() {
        return Err(NO_GAIN.into());
    }
    let rows: Vec<String> = a
        .gains
        .iter()
        .map(|g| {
            [
                td(&g.algorithm),
                td(&g.operation),
                td(&g.optimised),
                td(&g.portable),
                td_num(&gain_text(g), g.speedup),
            ]
            .concat()
        })
        .collect();
    Ok(html_table(
        &["algorithm", "op", "optimised", "portable", "speed-up [95% interval]"],
        &rows,
    ))
}

fn ct_html(a: &Answers) -> Result<String, String> {
    if a.ct.is_empty() {
        return Err(format!(
            "— none of the {} subjects measured here has been audited: {}",
            a.measured_subjects, a.ct_command
        ));
    }
    let rows: Vec<String> =
        a.ct.iter()
            .map(|c| {
                [
                    td(&c.subject),
                    td(&c.verdict),
                    td(&c.fastest_op.as_ref().map(|o| o.0.clone()).unwrap_or_default()),
                    c.fastest_op
                        .as_ref()
                        .map_or_else(|| td(""), |o| td_num(&duration(o.1), o.1)),
                    c.exchange_cycles.map_or_else(|| td(""), |x| td_num(&group(x), x)),
                    td(&c.wins.join(", ")),
                ]
                .concat()
            })
            .collect();
    Ok(html_table(
        &[
            "subject",
            "verdict",
            "fastest op",
            "median time",
            "full exchange (cycles)",
            "fastest here at",
        ],
        &rows,
    ))
}

fn versus_html(a: &Answers) -> Result<String, String> {
    match &a.versus {
        None => Err(NOTHING_TO_COMPARE.into()),
        Some(Versus::Withheld(why)) => Err(format!("— {why}.")),
        Some(v @ Versus::Published { lines, .. }) => {
            let rows: Vec<String> = lines
                .iter()
                .map(|l| {
                    [
                        td(&l.algorithm),
                        td(&l.operation),
                        td(&l.ours),
                        td(&l.our_figure),
                        td(&l.theirs),
                        td(&l.their_figure),
                        td(&l.cpu),
                        td_num(&format!("{:.2}", l.ratio), l.ratio),
                    ]
                    .concat()
                })
                .collect();
            Ok(format!(
                "<p>{}</p>\n{}",
                esc(&published_summary(v)),
                html_table(
                    &[
                        "algorithm",
                        "op",
                        "ours",
                        "our figure",
                        "theirs",
                        "their figure",
                        "their CPU",
                        "ours/theirs"
                    ],
                    &rows
                )
            ))
        }
        Some(Versus::Run {
            run_id,
            faster,
            slower,
            unchanged,
            missing,
            test,
        }) => {
            let row = [
                td(run_id),
                td_num(&faster.to_string(), *faster as f64),
                td_num(&slower.to_string(), *slower as f64),
                td_num(&unchanged.to_string(), *unchanged as f64),
                td_num(&missing.to_string(), *missing as f64),
            ]
            .concat();
            Ok(format!(
                "<p>{}</p>\n{}",
                esc(test),
                html_table(
                    &[
                        "against run",
                        "faster",
                        "slower",
                        "no significant change",
                        "not comparable"
                    ],
                    &[row]
                )
            ))
        }
    }
}

fn machine_html(m: &MachineStability) -> String {
    let pct = crate::html::SHIFT_RATIO * 100.0;
    let rows: Vec<String> = m
        .worst
        .iter()
        .map(|w| {
            [
                td(&w.algorithm),
                td(&w.label),
                td(&w.operation),
                td_num(&percent(w.fraction), w.fraction),
            ]
            .concat()
        })
        .collect();
    format!(
        "<div class=\"answer\" id=\"answer-machine\">\n<p>Unstable machine: {} of {} operations changed speed by \
{pct:.0}% or more while being measured (largest ×{:.2}). Share of samples taken {pct:.0}% or more slower than the \
operation's fastest level, the worst:</p>\n{}</div>\n",
        m.shifted,
        m.examined,
        m.largest,
        html_table(&["algorithm", "implementation", "op", "off fast level"], &rows)
    )
}

/// The answers as an HTML fragment: `<section id="answers">` with one
/// `<div class="answer" id="answer-N">` per question (and `answer-machine` when the machine
/// changed speed), every table `sortable`.
pub fn html(a: &Answers) -> String {
    let mut s = String::from("<section id=\"answers\">\n<h2>Answers</h2>\n");
    s += &div(
        0,
        "Median cycles; tied where the 95% intervals overlap.",
        fastest_html(a),
    );
    s += &div(
        1,
        &format!("A full exchange, the fastest implementation. {COST_NOTE}"),
        costs_html(a),
    );
    s += &div(
        2,
        "Portable median / optimised median, with the interval from both rows' 95% intervals.",
        gains_html(a),
    );
    s += &div(3, "The latest `cryptoscope ct` audit.", ct_html(a));
    s += &div(4, "", versus_html(a));
    if let Some(m) = &a.machine {
        s += &machine_html(m);
    }
    s + "</section>\n"
}
