//! The Tahoe-LAFS study's results: from the driver's JSON (`python -m cryptoscope.tahoe`)
//! to stored items (medians over repeats per hash, vector and direction), and from stored
//! items to the terminal table and the report's section.

use crate::AppResult;
use serde_json::{json, Value};

/// The driver name under which the study's items are stored.
pub const DRIVER: &str = "tahoe";

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}

/// The stored items of one study: `setup` first, then one item per (hash, vector,
/// direction) in the order measured, each with medians over repeats and every repeat's
/// figures. Errors name what is missing from the driver's output.
pub fn items(driver_output: &Value) -> Result<Vec<AppResult>, String> {
    let rows = driver_output["rows"]
        .as_array()
        .ok_or("the driver's output has no `rows`")?;
    let mut setup = driver_output.clone();
    if let Some(m) = setup.as_object_mut() {
        m.remove("rows");
    }
    let mut out = vec![AppResult {
        driver: DRIVER.into(),
        item: "setup".into(),
        data: setup,
    }];
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in rows {
        let k = (
            r["hash"].as_str().unwrap_or("?").to_string(),
            r["vector"].as_str().unwrap_or("?").to_string(),
            r["direction"].as_str().unwrap_or("?").to_string(),
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (hash, vector, direction) in keys {
        let reps: Vec<&Value> = rows
            .iter()
            .filter(|r| {
                r["hash"] == hash.as_str() && r["vector"] == vector.as_str() && r["direction"] == direction.as_str()
            })
            .collect();
        let first = reps[0];
        let proc = |r: &Value, role: &str, k: &str| num(&r["processes"][role], k);
        let servers = |r: &Value, k: &str| proc(r, "storage", k) + proc(r, "introducer", k);
        let each = |f: &dyn Fn(&Value) -> f64| reps.iter().map(|r| f(r)).collect::<Vec<f64>>();
        let totals = each(&|r| num(r, "total_s"));
        let client_wall = each(&|r| proc(r, "client", "wall_ns") / 1e9);
        let fractions: Vec<f64> = totals
            .iter()
            .zip(&client_wall)
            .map(|(t, h)| if *t > 0.0 { h / t } else { 0.0 })
            .collect();
        let mut histogram = serde_json::Map::new();
        for r in &reps {
            if let Some(h) = r["processes"]["client"]["histogram"].as_object() {
                for (b, n) in h {
                    let e = histogram.entry(b.clone()).or_insert(json!(0));
                    *e = json!(e.as_u64().unwrap_or(0) + n.as_u64().unwrap_or(0));
                }
            }
        }
        let implementation = driver_output["hashes"][&hash]["implementation"].clone();
        out.push(AppResult {
            driver: DRIVER.into(),
            item: format!("{hash}|{vector}|{direction}"),
            data: json!({
                "hash": hash,
                "implementation": implementation,
                "vector": vector,
                "count": first["count"],
                "size": first["size"],
                "direction": direction,
                "repeats": reps.len(),
                "literal": reps.iter().all(|r| r["literal"].as_bool().unwrap_or(false)),
                "total_s": median(totals.clone()),
                "client_hash_s": median(client_wall.clone()),
                "client_hash_cpu_s": median(each(&|r| proc(r, "client", "cpu_ns") / 1e9)),
                "fraction": median(fractions),
                "client_digests": median(each(&|r| proc(r, "client", "digests"))),
                "client_updates": median(each(&|r| proc(r, "client", "updates"))),
                "client_bytes": median(each(&|r| proc(r, "client", "bytes"))),
                "servers_hash_s": median(each(&|r| servers(r, "wall_ns") / 1e9)),
                "servers_digests": median(each(&|r| servers(r, "digests"))),
                "client_histogram_all_repeats": histogram,
                "retried_after": reps.iter().filter_map(|r| r["retried_after"].as_str()).collect::<Vec<_>>(),
                "each": {"total_s": totals, "client_hash_s": client_wall},
            }),
        });
    }
    Ok(out)
}

fn seconds(s: f64) -> String {
    crate::table::duration(s * 1e9)
}

fn megabytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} KB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// Header and cells of the study's table, one row per (hash, vector, direction).
pub fn rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "hash",
        "vector",
        "direction",
        "total",
        "hashing (client)",
        "share",
        "digests",
        "hashed",
        "hashing (servers)",
        "note",
    ];
    let rows = apps
        .iter()
        .filter(|a| a.driver == DRIVER && a.item != "setup")
        .map(|a| {
            let d = &a.data;
            let literal = d["literal"].as_bool().unwrap_or(false);
            let mut note = if literal {
                "literal caps (≤ 55 B): no hashing".to_string()
            } else if d["repeats"].as_u64().unwrap_or(1) > 1 {
                format!("median of {}", d["repeats"])
            } else {
                String::new()
            };
            if d["retried_after"].as_array().is_some_and(|a| !a.is_empty()) {
                let w = "measured again after a storage server dropped (UploadUnhappinessError)";
                note = if note.is_empty() {
                    w.to_string()
                } else {
                    format!("{note}; {w}")
                };
            }
            vec![
                d["hash"].as_str().unwrap_or("?").into(),
                d["vector"].as_str().unwrap_or("?").into(),
                d["direction"].as_str().unwrap_or("?").into(),
                seconds(num(d, "total_s")),
                seconds(num(d, "client_hash_s")),
                format!("{:.1} %", 100.0 * num(d, "fraction")),
                format!("{:.0}", num(d, "client_digests")),
                megabytes(num(d, "client_bytes")),
                seconds(num(d, "servers_hash_s")),
                note,
            ]
        })
        .collect();
    (header, rows)
}

/// The terminal table, or `None` when the run has no Tahoe-LAFS items.
pub fn table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = rows(apps);
    if rows.is_empty() {
        return None;
    }
    Some(crate::table::render(
        &header,
        &rows,
        &[false, false, false, true, true, true, true, true, true, false],
    ))
}

/// One line per fact of the set-up: versions, grid, transport, swap checks.
pub fn setup_lines(apps: &[AppResult]) -> Vec<String> {
    let Some(s) = apps.iter().find(|a| a.driver == DRIVER && a.item == "setup") else {
        return Vec::new();
    };
    let d = &s.data;
    let shares = d["shares"]
        .as_array()
        .map(|a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/"));
    let mut lines = vec![format!(
        "Tahoe-LAFS {} on Python {}: 1 introducer, {} storage nodes, 1 client on 127.0.0.1; shares needed/happy/total {}; {} transport; immutable segments {}",
        d["tahoe_version"].as_str().unwrap_or("?"),
        d["python"].as_str().unwrap_or("?"),
        d["storage_nodes"],
        shares.unwrap_or_default(),
        d["transport"].as_str().unwrap_or("?"),
        d["segment_size"].as_u64().map_or("1 MiB (default)".to_string(), |b| format!("{b} bytes")),
    )];
    lines.push(format!(
        "profile {}, {} repeat(s), fresh random contents (seed {}); times are one web-API request each over one persistent connection, summed over the vector's files",
        d["profile"].as_str().unwrap_or("?"),
        d["repeat"],
        d["seed"]
    ));
    if let Some(h) = d["hashes"].as_object() {
        for (name, info) in h {
            lines.push(format!(
                "{name}: {} — probe cap {}",
                info["implementation"].as_str().unwrap_or("?"),
                info["probe_cap"].as_str().unwrap_or("?")
            ));
        }
    }
    if let Some(c) = d["swap_checks"].as_array() {
        for x in c {
            lines.push(format!("swap check: {}", x.as_str().unwrap_or("?")));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver_row(hash: &str, dir: &str, rep: u32, total: f64, client_ns: f64) -> Value {
        json!({"hash": hash, "vector": "3x1 MB", "count": 3, "size": 1_000_000, "direction": dir,
               "repeat": rep, "total_s": total, "literal": false,
               "processes": {"client": {"digests": 40, "updates": 90, "bytes": 6_000_000,
                                        "wall_ns": client_ns, "cpu_ns": client_ns, "histogram": {"20": 3}},
                             "storage": {"digests": 6, "updates": 6, "bytes": 300, "wall_ns": 1e6,
                                         "cpu_ns": 1e6, "histogram": {}}}})
    }

    #[test]
    fn medians_over_repeats_per_hash_vector_and_direction() {
        let out = json!({"tahoe_version": "1.20.0", "hashes": {"blake3": {"implementation": "x"}},
            "rows": [driver_row("blake3", "upload", 1, 1.0, 1e8), driver_row("blake3", "download", 1, 2.0, 1e8),
                     driver_row("blake3", "upload", 2, 3.0, 3e8), driver_row("blake3", "download", 2, 2.0, 1e8),
                     driver_row("blake3", "upload", 3, 2.0, 5e8), driver_row("blake3", "download", 3, 2.0, 1e8)]});
        let items = items(&out).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].item, "setup");
        assert!(items[0].data.get("rows").is_none());
        let up = &items[1].data;
        assert_eq!(items[1].item, "blake3|3x1 MB|upload");
        assert_eq!(up["total_s"], 2.0);
        assert_eq!(up["client_hash_s"], 0.3);
        // Per-repeat shares 0.1, 0.1, 0.25: the median share, not the ratio of medians.
        assert_eq!(up["fraction"], 0.1);
        assert_eq!(up["servers_hash_s"], 0.001);
        assert_eq!(up["client_histogram_all_repeats"]["20"], 9);
        let (_, rows) = rows(&items);
        assert_eq!(rows[0][5], "10.0 %");
        assert_eq!(rows[0][9], "median of 3");
        assert!(super::items(&json!({})).is_err());
    }
}
