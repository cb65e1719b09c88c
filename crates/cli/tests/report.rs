//! The HTML report as a person sees it: rendered by headless Chromium (Debian's package,
//! installed by scripts/setup.sh), every chart present with marks, the trade-off chart with
//! a point per implementation, failed subjects listed but never drawn, and screenshots kept
//! as artifacts of the test run (`target/tmp/report-screenshot*.png`).
//!
//! Interaction without a browser driver: the page's script reads its state from the
//! address (`#sort=TABLE:COLUMN:desc&hide=provider:NAME`) on load and applies it with the
//! functions a click calls; `--dump-dom` runs the script, so the dumped DOM shows the
//! sorted rows and the hidden marks.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn headless(browser: &str, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    // Flags from the environment notes: no sandbox as root, no GPU, no background traffic.
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn report_renders_in_a_browser_with_every_chart() {
    let Some(browser) = chromium() else {
        cryptoscope_testkit::needs_setup("chromium");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let json = tmp.path().join("run.json");
    let o = cryptoscope()
        .args([
            "run",
            "--quick",
            "--quiet",
            "--alg",
            "ML-KEM-768",
            "--alg",
            "X25519",
            "--memory",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let html = tmp.path().join("run.html");
    assert!(stdout.contains(&format!("Report:  {}", html.display())), "{stdout}");
    // `report` from the store writes the same kind of file.
    let out = tmp.path().join("from-store.html");
    let o = cryptoscope()
        .args(["report", "latest", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));

    let dom = dump_dom(
        browser,
        &tmp.path().join("profile"),
        &format!("file://{}", out.display()),
    );
    // One chart per (family, operation) plus sizes, each with bars.
    for id in [
        "kem-keypair",
        "kem-encaps",
        "kem-decaps",
        "kex-keypair",
        "kex-exchange",
        "sizes",
        "stack-kem-decaps",
        "stack-kex-exchange",
        "heap-kem-keypair",
        "heap-kex-exchange",
    ] {
        let start = dom
            .find(&format!("id=\"chart-0-{id}\""))
            .unwrap_or_else(|| panic!("chart {id} missing"));
        let chart = &dom[start..start + dom[start..].find("</svg>").unwrap()];
        assert!(chart.matches("class=\"bar\"").count() >= 2, "chart {id} has no bars");
    }
    assert!(
        dom.contains("no heap allocation: ML-KEM-768 · pqclean clean"),
        "subjects without heap use are listed"
    );
    // ML-KEM-768 from 5 providers/implementations x 3 ops + X25519 from 3 x 4 ops
    // (keypair, derive, validate, exchange).
    assert_eq!(
        dom.matches("<polyline").count(),
        27,
        "a sample trace per measured operation"
    );
    assert!(
        dom.contains("11 of 11 subjects passed") || dom.contains("8 of 8 subjects passed"),
        "gate summary"
    );

    every_chart_has_marks_of_a_provider_and_family(&dom);
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let expected = exchange_subjects(&run);
    assert!(expected >= 8, "ML-KEM-768 and X25519 implementations: {expected}");
    assert_eq!(
        chart(&dom, "chart-0-tradeoff").matches("class=\"mark pt\"").count(),
        expected,
        "one trade-off point per gated KEM and key-exchange implementation"
    );
    answers_quote_the_run_file(&dom, &run);
    explored_by_the_address(browser, tmp.path(), &out, &dom);

    let shot = tmp.path().join("shot.png");
    let o = headless(browser, &tmp.path().join("profile2"))
        .args(["--window-size=1280,2400"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", out.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = std::fs::metadata(&shot).unwrap().len();
    assert!(size > 50_000, "screenshot of {size} bytes looks empty");
    let artifact = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    std::fs::copy(&shot, &artifact).unwrap();
    eprintln!("screenshot: {}", artifact.display());
}

/// The DOM of `url` after the page's script ran.
fn dump_dom(browser: &str, profile: &Path, url: &str) -> String {
    let dom = headless(browser, profile).arg("--dump-dom").arg(url).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    String::from_utf8_lossy(&dom.stdout).into_owned()
}

/// The SVG element with this id, up to its end.
fn chart<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("chart {id} missing"));
    &dom[start..start + dom[start..].find("</svg>").unwrap()]
}

/// The start tags of the elements whose class attribute begins with `class`.
fn tags_with_class<'a>(dom: &'a str, class: &str) -> Vec<&'a str> {
    let needle = format!("class=\"{class}");
    dom.match_indices(&needle)
        .map(|(i, _)| {
            let open = dom[..i].rfind('<').unwrap();
            &dom[open..i + dom[i..].find('>').unwrap() + 1]
        })
        .collect()
}

fn every_chart_has_marks_of_a_provider_and_family(dom: &str) {
    let charts: Vec<&str> = dom.split("<svg class=\"chart").skip(1).collect();
    assert!(charts.len() >= 10, "{} charts", charts.len());
    for c in charts {
        let c = &c[..c.find("</svg>").unwrap()];
        assert!(
            c.contains("class=\"mark"),
            "a chart without marks: {}",
            &c[..c.len().min(300)]
        );
    }
    for tag in tags_with_class(dom, "mark") {
        assert!(
            tag.contains("data-provider=") && tag.contains("data-family="),
            "a mark without its provider and family: {tag}"
        );
    }
}

/// The KEM and key-exchange subjects of a results file that passed their gate and have
/// the medians of a full exchange (keypair, encaps, decaps; keypair, exchange).
fn exchange_subjects(run: &serde_json::Value) -> usize {
    let rows = run["results"].as_array().unwrap();
    let mut subjects: Vec<&str> = rows.iter().map(|r| r["subject"].as_str().unwrap()).collect();
    subjects.dedup();
    subjects
        .into_iter()
        .filter(|s| {
            let of: Vec<&serde_json::Value> = rows.iter().filter(|r| r["subject"] == *s).collect();
            let needs: &[&str] = match of[0]["family"].as_str().unwrap() {
                "kem" => &["keypair", "encaps", "decaps"],
                "kex" => &["keypair", "exchange"],
                _ => return false,
            };
            of.iter().all(|r| r["gate"] == "pass")
                && needs.iter().all(|op| {
                    of.iter()
                        .any(|r| r["operation"] == *op && r["median_cycles"].is_number())
                })
        })
        .count()
}

/// The cells of every body row of the table in the answer `id="ANCHOR"`: (text,
/// data-value); none when the answer has no table.
fn answer_rows(dom: &str, anchor: &str) -> Vec<Vec<(String, Option<f64>)>> {
    let start = dom
        .find(&format!("id=\"{anchor}\""))
        .unwrap_or_else(|| panic!("{anchor} missing"));
    // Within the answer's own div: an answer with nothing to say has no table.
    let div = &dom[start..start + dom[start..].find("</div>").unwrap()];
    let Some(open) = div.find("<tbody>") else {
        return Vec::new();
    };
    let body = &div[open..div.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let value = cell
                        .split("data-value=\"")
                        .nth(1)
                        .and_then(|v| v[..v.find('"').unwrap()].parse().ok());
                    let text = &cell[cell.find('>').unwrap() + 1..];
                    (text[..text.find("</td>").unwrap()].to_string(), value)
                })
                .collect()
        })
        .collect()
}

/// Every figure the first two answers quote, checked against the results file the run
/// wrote: the fastest implementation's median is the least of its (algorithm, operation)
/// among gated rows, "ahead by" is the runner-up's median over it and the runner-up's
/// interval lies clear of the winner's, every "tied" implementation's interval overlaps the
/// winner's; a full exchange's cycles and bytes are the sums of its rows' medians and sizes.
fn answers_quote_the_run_file(dom: &str, run: &serde_json::Value) {
    let rows = run["results"].as_array().unwrap();
    let find = |alg: &str, op: &str, label: &str| {
        rows.iter()
            .find(|r| {
                r["algorithm"] == alg
                    && r["operation"] == op
                    && format!(
                        "{}/{}",
                        r["provider"].as_str().unwrap(),
                        r["implementation"].as_str().unwrap()
                    ) == label
            })
            .unwrap_or_else(|| panic!("{alg} {op} {label} not in the run file"))
    };
    let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap();
    let fastest = answer_rows(dom, "answer-1");
    assert!(!fastest.is_empty(), "question 1 answered");
    for cells in &fastest {
        let (alg, op, label) = (&cells[0].0, &cells[1].0, &cells[2].0);
        let winner = find(alg, op, label);
        assert_eq!(cells[3].1, Some(f(winner, "median_cycles")), "{alg} {op}");
        let least = rows
            .iter()
            .filter(|r| r["algorithm"] == alg.as_str() && r["operation"] == op.as_str() && r["gate"] == "pass")
            .filter_map(|r| r["median_cycles"].as_f64())
            .fold(f64::INFINITY, f64::min);
        assert_eq!(
            f(winner, "median_cycles"),
            least,
            "{alg} {op}: the fastest is the least median"
        );
        let overlaps = |r: &serde_json::Value| {
            f(r, "ci95_low_cycles") <= f(winner, "ci95_high_cycles")
                && f(winner, "ci95_low_cycles") <= f(r, "ci95_high_cycles")
        };
        for t in cells[4].0.split(", ").filter(|t| !t.is_empty()) {
            assert!(
                overlaps(find(alg, op, t)),
                "{alg} {op}: {t} tied, yet its interval is clear"
            );
        }
        if !cells[5].0.is_empty() {
            let second = find(alg, op, &cells[5].0);
            assert!(!overlaps(second), "{alg} {op}: a winner by noise over {}", cells[5].0);
            if !cells[4].0.is_empty() {
                // Tied with the winner: no margin is named, whoever comes next.
                assert_eq!((cells[6].0.as_str(), cells[6].1), ("", None), "{alg} {op}");
                continue;
            }
            if f(winner, "median_cycles") == 0.0 {
                // Cheaper than the clock's overhead: no ratio over it.
                assert_eq!(cells[6].0, "winner below the clock's resolution", "{alg} {op}");
                continue;
            }
            let ratio = f(second, "median_cycles") / f(winner, "median_cycles");
            assert!(
                (cells[6].1.unwrap() - ratio).abs() < 1e-9 * ratio,
                "{alg} {op}: ahead by"
            );
        }
    }
    let costs = answer_rows(dom, "answer-2");
    assert_eq!(costs.len(), 2, "ML-KEM-768 and X25519");
    for cells in costs {
        let (alg, label) = (&cells[0].0, &cells[2].0);
        let of = |op: &str| f(find(alg, op, label), "median_cycles");
        let any = find(alg, "keypair", label);
        let size = |k: &str| any["sizes"][k].as_f64().unwrap();
        let (cycles, bytes) = if any["family"] == "kem" {
            (
                of("keypair") + of("encaps") + of("decaps"),
                size("public_key") + size("ciphertext"),
            )
        } else {
            (2.0 * (of("keypair") + of("exchange")), 2.0 * size("public_key"))
        };
        assert!(
            (cells[3].1.unwrap() - cycles).abs() < 1e-6 * cycles,
            "{alg}: cycles of a full exchange"
        );
        assert_eq!(cells[4].1, Some(bytes), "{alg}: bytes on the wire");
    }
    // 3: a speed-up is the portable median over the optimised one.
    let gains = answer_rows(dom, "answer-3");
    assert!(!gains.is_empty(), "PQClean's avx2 against its clean code");
    for cells in gains {
        let (alg, op) = (&cells[0].0, &cells[1].0);
        let ratio = f(find(alg, op, &cells[3].0), "median_cycles") / f(find(alg, op, &cells[2].0), "median_cycles");
        assert!(
            (cells[4].1.unwrap() - ratio).abs() < 1e-9 * ratio,
            "{alg} {op}: speed-up"
        );
    }
    // 4: this database holds no `ct` audit, and the answer counts the subjects measured.
    let measured: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["median_cycles"].is_number())
        .map(|r| r["subject"].as_str().unwrap())
        .collect();
    let ct = &dom[dom.find("id=\"answer-4\"").unwrap()..];
    assert!(
        ct[..ct.find("</div>").unwrap()].contains(&format!("none of the {} subjects measured here", measured.len())),
        "question 4"
    );
    // 5: ours/theirs is our median over the published cycles.
    for cells in answer_rows(dom, "answer-5") {
        let Some(theirs) = grouped(&cells[5].0) else { continue }; // per byte or MB/s: not cycles
        let ours = f(find(&cells[0].0, &cells[1].0, &cells[2].0), "median_cycles");
        assert!(
            (cells[7].1.unwrap() - ours / theirs).abs() < 0.006,
            "{}: ours/theirs",
            cells[0].0
        );
    }
}

/// The text of column `col` of every row of the table with this id, in page order.
fn column(dom: &str, table: &str, col: usize) -> Vec<String> {
    let start = dom.find(&format!("id=\"{table}\"")).expect("table");
    let body = &dom[start..];
    let body = &body[body.find("<tbody>").unwrap()..body.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            let cell = row.split("<td").nth(col + 1).unwrap_or_default();
            let text = &cell[cell.find('>').map_or(0, |i| i + 1)..];
            text[..text.find("</td>").unwrap_or(text.len())].to_string()
        })
        .collect()
}

/// "12,345" as a number; `None` for an empty cell (a subject without timings).
fn grouped(text: &str) -> Option<f64> {
    text.replace(',', "").trim().parse().ok()
}

/// The page opened with a sort and a hidden provider in its address: the results table in
/// descending median cycles (it was not before), its header marked, and every mark and row
/// of OpenSSL hidden while the others stay.
fn explored_by_the_address(browser: &str, tmp: &Path, page: &Path, plain: &str) {
    let before: Vec<Option<f64>> = column(plain, "results-0", 5).iter().map(|t| grouped(t)).collect();
    let url = format!(
        "file://{}#sort=results:5:desc&hide=provider:openssl&filter=results-0:decaps",
        page.display()
    );
    let dom = dump_dom(browser, &tmp.join("profile3"), &url);
    let after: Vec<Option<f64>> = column(&dom, "results-0", 5).iter().map(|t| grouped(t)).collect();
    assert_eq!(after.len(), before.len(), "sorting keeps every row");
    let timed: Vec<f64> = after.iter().map_while(|v| *v).collect();
    assert!(timed.len() >= 20, "timed rows first: {after:?}");
    assert!(after[timed.len()..].iter().all(Option::is_none), "empty cells last");
    assert!(timed.windows(2).all(|w| w[0] >= w[1]), "descending: {timed:?}");
    assert_ne!(before, after, "sorting changed the order");
    assert!(
        dom.contains("aria-sort=\"descending\">median cycles</th>"),
        "the sorted column's header says so"
    );
    let openssl: Vec<&str> = dom
        .match_indices("data-provider=\"openssl\"")
        .map(|(i, _)| &dom[dom[..i].rfind('<').unwrap()..i + dom[i..].find('>').unwrap()])
        .collect();
    assert!(openssl.len() >= 5, "OpenSSL's marks and rows: {}", openssl.len());
    for tag in &openssl {
        assert!(tag.contains("hidden"), "an OpenSSL element still shown: {tag}");
    }
    let others = dom.matches("data-provider=\"liboqs\"").count();
    assert!(others > 0);
    assert!(
        tags_with_class(&dom, "mark")
            .iter()
            .filter(|t| t.contains("data-provider=\"liboqs\""))
            .all(|t| !t.contains("hidden")),
        "other providers stay shown"
    );
    // The filter: the rows of decaps stay, the others are filtered out.
    let start = dom.find("id=\"results-0\"").unwrap();
    let start = start + dom[start..].find("<tbody>").unwrap();
    let body = &dom[start..start + dom[start..].find("</tbody>").unwrap()];
    let rows: Vec<&str> = body.split("<tr").skip(1).collect();
    let kept = rows.iter().filter(|r| r.contains("<td>decaps</td>")).count();
    let decaps = column(plain, "results-0", 3)
        .iter()
        .filter(|op| *op == "decaps")
        .count();
    assert!(kept > 0 && kept == decaps, "every decaps row kept: {kept} of {decaps}");
    for r in &rows {
        let tag = &r[..r.find('>').unwrap()];
        assert_eq!(
            tag.contains("filtered"),
            !r.contains("<td>decaps</td>"),
            "filter on decaps: {tag}"
        );
    }
    let shot = tmp.join("explored.png");
    let o = headless(browser, &tmp.join("profile4"))
        .args(["--window-size=1280,2400"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let artifact = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot-explored.png");
    std::fs::copy(&shot, &artifact).unwrap();
    eprintln!("screenshot: {}", artifact.display());
}

#[test]
fn failed_subjects_are_listed_not_drawn() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    // Corrupt one published digest so both NTRU-HRSS-701 implementations fail their gate.
    let v = tmp.path().join("vectors");
    vectors_with_wrong_digest(&v, "NTRU-HRSS-701");
    let o = cryptoscope()
        .args(["run", "--quick", "--quiet", "--alg", "NTRU-HRSS-701", "--vectors"])
        .arg(&v)
        .arg("--db")
        .arg(&db)
        .arg("--json")
        .arg(tmp.path().join("run.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let html = std::fs::read_to_string(tmp.path().join("run.html")).unwrap();
    assert!(
        html.contains("0 of 2 subjects passed"),
        "both implementations fail against the corrupted digest"
    );
    assert!(html.contains("KAT digest mismatch"));
    // Only the sizes chart has bars: NTRU-HRSS-701's public key and ciphertext.
    assert_eq!(html.matches("class=\"bar\"").count(), 2);
}
