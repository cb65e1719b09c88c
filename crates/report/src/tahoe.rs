//! The Tahoe-LAFS study's results: from the driver's JSON (`python -m cryptoscope.tahoe`)
//! to stored items (medians over repeats per hash, vector and direction), and from stored
//! items to the terminal table and the report's section.

use crate::AppResult;
pub use cryptoscope_model::apps::tahoe::DRIVER;
use cryptoscope_model::apps::tahoe::{Measured, Repeats, Setup};
use cryptoscope_model::apps::Item;
use serde_json::Value;
use std::collections::BTreeMap;

/// The run's measured items (all but the set-up), typed.
pub fn measured(apps: &[AppResult]) -> impl Iterator<Item = Measured> + '_ {
    apps.iter().filter(|a| a.item != "setup").filter_map(Measured::from_app)
}

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

/// A number of the driver's output (0 when absent): the one place its rows are read by key.
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
    // The set-up is kept as the driver wrote it (read back as `Setup`).
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
        let mut histogram: BTreeMap<String, u64> = BTreeMap::new();
        for r in &reps {
            if let Some(h) = r["processes"]["client"]["histogram"].as_object() {
                for (b, n) in h {
                    *histogram.entry(b.clone()).or_default() += n.as_u64().unwrap_or(0);
                }
            }
        }
        let m = Measured {
            implementation: driver_output["hashes"][&hash]["implementation"]
                .as_str()
                .map(String::from),
            count: Some(first["count"].clone()).filter(|v| !v.is_null()),
            size: Some(first["size"].clone()).filter(|v| !v.is_null()),
            repeats: reps.len(),
            literal: reps.iter().all(|r| r["literal"].as_bool().unwrap_or(false)),
            total_s: median(totals.clone()),
            client_hash_s: median(client_wall.clone()),
            client_hash_cpu_s: median(each(&|r| proc(r, "client", "cpu_ns") / 1e9)),
            fraction: median(fractions),
            client_digests: median(each(&|r| proc(r, "client", "digests"))),
            client_updates: median(each(&|r| proc(r, "client", "updates"))),
            client_bytes: median(each(&|r| proc(r, "client", "bytes"))),
            servers_hash_s: median(each(&|r| servers(r, "wall_ns") / 1e9)),
            servers_digests: median(each(&|r| servers(r, "digests"))),
            client_histogram_all_repeats: histogram,
            retried_after: reps
                .iter()
                .filter_map(|r| r["retried_after"].as_str().map(String::from))
                .collect(),
            each: Repeats {
                total_s: totals,
                client_hash_s: client_wall,
            },
            hash,
            vector,
            direction,
        };
        out.push(m.to_app(m.key()));
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
    let rows = measured(apps)
        .map(|d| {
            let mut note = if d.literal {
                "literal caps (≤ 55 B): no hashing".to_string()
            } else if d.repeats > 1 {
                format!("median of {}", d.repeats)
            } else {
                String::new()
            };
            if !d.retried_after.is_empty() {
                let w = "measured again after a storage server dropped (UploadUnhappinessError)";
                note = if note.is_empty() {
                    w.to_string()
                } else {
                    format!("{note}; {w}")
                };
            }
            vec![
                d.hash.clone(),
                d.vector.clone(),
                d.direction.clone(),
                seconds(d.total_s),
                seconds(d.client_hash_s),
                format!("{:.1} %", 100.0 * d.fraction),
                format!("{:.0}", d.client_digests),
                megabytes(d.client_bytes),
                seconds(d.servers_hash_s),
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
    let Some(d) = apps.iter().filter(|a| a.item == "setup").find_map(Setup::from_app) else {
        return Vec::new();
    };
    let shown = |v: &Option<Value>| v.clone().unwrap_or(Value::Null).to_string();
    let shares = d
        .shares
        .as_ref()
        .map(|a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/"));
    let mut lines = vec![format!(
        "Tahoe-LAFS {} on Python {}: 1 introducer, {} storage nodes, 1 client on 127.0.0.1; shares needed/happy/total {}; {} transport; immutable segments {}",
        d.tahoe_version.as_deref().unwrap_or("?"),
        d.python.as_deref().unwrap_or("?"),
        shown(&d.storage_nodes),
        shares.unwrap_or_default(),
        d.transport.as_deref().unwrap_or("?"),
        d.segment_size.map_or("1 MiB (default)".to_string(), |b| format!("{b} bytes")),
    )];
    lines.push(format!(
        "profile {}, {} repeat(s), fresh random contents (seed {}); times are one web-API request each over one persistent connection, summed over the vector's files",
        d.profile.as_deref().unwrap_or("?"),
        shown(&d.repeat),
        shown(&d.seed)
    ));
    for (name, info) in &d.hashes {
        lines.push(format!(
            "{name}: {} — probe cap {}",
            info.implementation.as_deref().unwrap_or("?"),
            info.probe_cap.as_deref().unwrap_or("?")
        ));
    }
    for x in &d.swap_checks {
        lines.push(format!("swap check: {x}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
