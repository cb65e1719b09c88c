//! The Tahoe-LAFS study's results: from stored items (medians over repeats per hash, vector
//! and direction; made from the driver's output by [`items`]) to the terminal table and the
//! report's section.

use crate::AppResult;
pub use cryptoscope_model::apps::tahoe::DRIVER;
use cryptoscope_model::apps::tahoe::{Measured, Setup};
use cryptoscope_model::apps::Item;
use serde_json::Value;

/// The run's measured items (all but the set-up), typed.
pub fn measured(apps: &[AppResult]) -> impl Iterator<Item = Measured> + '_ {
    apps.iter().filter(|a| a.item != "setup").filter_map(Measured::from_app)
}

pub use cryptoscope_model::apps::tahoe::items;

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
        let up = Measured::from_app(&items[1]).unwrap();
        assert_eq!(items[1].item, "blake3|3x1 MB|upload");
        assert_eq!(up.total_s, 2.0);
        assert_eq!(up.client_hash_s, 0.3);
        // Per-repeat shares 0.1, 0.1, 0.25: the median share, not the ratio of medians.
        assert_eq!(up.fraction, 0.1);
        assert_eq!(up.servers_hash_s, 0.001);
        assert_eq!(up.client_histogram_all_repeats["20"], 9);
        assert_eq!(up.implementation.as_deref(), Some("x"));
        let (_, rows) = rows(&items);
        assert_eq!(rows[0][5], "10.0 %");
        assert_eq!(rows[0][9], "median of 3");
        assert!(super::items(&json!({})).is_err());
    }
}
