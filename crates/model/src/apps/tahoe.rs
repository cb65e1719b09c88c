//! The Tahoe-LAFS study's items: the set-up (item `setup`) and one [`Measured`] per (hash,
//! file set, direction), with medians over repeats.

use super::Item;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The driver's name.
pub const DRIVER: &str = "tahoe";

/// How one hash was swapped in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HashInfo {
    #[serde(default)]
    pub implementation: Option<String>,
    #[serde(default)]
    pub probe_cap: Option<String>,
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

/// The study's set-up: the driver's own output without its rows, stored as the driver wrote
/// it and read back as this. Fields the report does not show are kept as they came (`rest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    #[serde(default)]
    pub tahoe_version: Option<String>,
    #[serde(default)]
    pub python: Option<String>,
    #[serde(default)]
    pub storage_nodes: Option<Value>,
    /// Shares needed, happy, total.
    #[serde(default)]
    pub shares: Option<Vec<Value>>,
    #[serde(default)]
    pub transport: Option<String>,
    /// Bytes; the default (1 MiB) when absent.
    #[serde(default)]
    pub segment_size: Option<u64>,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub repeat: Option<Value>,
    #[serde(default)]
    pub seed: Option<Value>,
    #[serde(default)]
    pub hashes: BTreeMap<String, HashInfo>,
    #[serde(default)]
    pub swap_checks: Vec<String>,
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// Every repeat's figures of one measured item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    pub total_s: Vec<f64>,
    pub client_hash_s: Vec<f64>,
}

/// One (hash, file set, direction): medians over the repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub hash: String,
    #[serde(default)]
    pub implementation: Option<String>,
    /// The file set, e.g. `5x1 MB`.
    pub vector: String,
    #[serde(default)]
    pub count: Option<Value>,
    #[serde(default)]
    pub size: Option<Value>,
    /// `upload` or `download`.
    pub direction: String,
    pub repeats: usize,
    /// Literal capabilities (≤ 55 bytes): nothing is hashed.
    #[serde(default)]
    pub literal: bool,
    /// Seconds of the requests.
    pub total_s: f64,
    /// Seconds the client spent hashing (wall).
    pub client_hash_s: f64,
    pub client_hash_cpu_s: f64,
    /// Median over repeats of client hashing / total.
    pub fraction: f64,
    pub client_digests: f64,
    pub client_updates: f64,
    pub client_bytes: f64,
    pub servers_hash_s: f64,
    pub servers_digests: f64,
    /// Update sizes (power-of-two buckets) over all repeats.
    #[serde(default)]
    pub client_histogram_all_repeats: BTreeMap<String, u64>,
    /// Repeats measured again after a storage server dropped, and why.
    #[serde(default)]
    pub retried_after: Vec<String>,
    pub each: Repeats,
}

impl Item for Measured {
    const DRIVER: &'static str = DRIVER;
}

impl Measured {
    /// Its key among the run's items: `hash|vector|direction`.
    pub fn key(&self) -> String {
        format!("{}|{}|{}", self.hash, self.vector, self.direction)
    }
}

/// One repeat of one (hash, file set, direction) as the driver (`python -m
/// cryptoscope.tahoe`) reports it.
#[derive(Debug, Clone, Deserialize)]
struct DriverRow {
    hash: String,
    vector: String,
    direction: String,
    #[serde(default)]
    count: Value,
    #[serde(default)]
    size: Value,
    #[serde(default)]
    total_s: Option<f64>,
    #[serde(default)]
    literal: Option<bool>,
    #[serde(default)]
    retried_after: Option<String>,
    /// Per role (`client`, `storage`, `introducer`): what its hash probe counted.
    #[serde(default)]
    processes: BTreeMap<String, Probe>,
}

/// One process's hash probe.
#[derive(Debug, Clone, Default, Deserialize)]
struct Probe {
    #[serde(default)]
    wall_ns: Option<f64>,
    #[serde(default)]
    cpu_ns: Option<f64>,
    #[serde(default)]
    digests: Option<f64>,
    #[serde(default)]
    updates: Option<f64>,
    #[serde(default)]
    bytes: Option<f64>,
    /// Digests per input size bucket.
    #[serde(default)]
    histogram: BTreeMap<String, u64>,
}

impl DriverRow {
    /// A figure of one role's probe (0 when the role or the figure is absent).
    fn probe(&self, role: &str, figure: impl Fn(&Probe) -> Option<f64>) -> f64 {
        self.processes.get(role).and_then(figure).unwrap_or(0.0)
    }

    /// A figure over the servers: storage nodes and the introducer.
    fn servers(&self, figure: impl Fn(&Probe) -> Option<f64> + Copy) -> f64 {
        self.probe("storage", figure) + self.probe("introducer", figure)
    }
}

/// The driver's whole output: its rows, and the rest as the set-up.
#[derive(Debug, Clone, Deserialize)]
struct DriverOutput {
    rows: Vec<DriverRow>,
    #[serde(default)]
    hashes: BTreeMap<String, HashInfo>,
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

/// The stored items of one study from the driver's output: `setup` first (the output as the
/// driver wrote it, without its rows), then one [`Measured`] per (hash, file set, direction)
/// in the order measured, with medians over repeats and every repeat's figures. Errors name
/// what is missing from the output.
pub fn items(driver_output: &Value) -> Result<Vec<crate::AppResult>, String> {
    let out: DriverOutput =
        serde_json::from_value(driver_output.clone()).map_err(|e| format!("the driver's output: {e}"))?;
    let mut setup = driver_output.clone();
    if let Some(m) = setup.as_object_mut() {
        m.remove("rows");
    }
    let mut items = vec![crate::AppResult {
        driver: DRIVER.into(),
        item: "setup".into(),
        data: setup,
    }];
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in &out.rows {
        let k = (r.hash.as_str(), r.vector.as_str(), r.direction.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (hash, vector, direction) in keys {
        let reps: Vec<&DriverRow> = out
            .rows
            .iter()
            .filter(|r| (r.hash.as_str(), r.vector.as_str(), r.direction.as_str()) == (hash, vector, direction))
            .collect();
        let first = reps[0];
        let each = |f: &dyn Fn(&DriverRow) -> f64| reps.iter().map(|r| f(r)).collect::<Vec<f64>>();
        let totals = each(&|r| r.total_s.unwrap_or(0.0));
        let client_wall = each(&|r| r.probe("client", |p| p.wall_ns) / 1e9);
        let fractions: Vec<f64> = totals
            .iter()
            .zip(&client_wall)
            .map(|(t, h)| if *t > 0.0 { h / t } else { 0.0 })
            .collect();
        let mut histogram: BTreeMap<String, u64> = BTreeMap::new();
        for p in reps.iter().filter_map(|r| r.processes.get("client")) {
            for (b, n) in &p.histogram {
                *histogram.entry(b.clone()).or_default() += n;
            }
        }
        let m = Measured {
            hash: hash.into(),
            implementation: out.hashes.get(hash).and_then(|h| h.implementation.clone()),
            vector: vector.into(),
            count: Some(first.count.clone()).filter(|v| !v.is_null()),
            size: Some(first.size.clone()).filter(|v| !v.is_null()),
            direction: direction.into(),
            repeats: reps.len(),
            literal: reps.iter().all(|r| r.literal.unwrap_or(false)),
            total_s: median(totals.clone()),
            client_hash_s: median(client_wall.clone()),
            client_hash_cpu_s: median(each(&|r| r.probe("client", |p| p.cpu_ns) / 1e9)),
            fraction: median(fractions),
            client_digests: median(each(&|r| r.probe("client", |p| p.digests))),
            client_updates: median(each(&|r| r.probe("client", |p| p.updates))),
            client_bytes: median(each(&|r| r.probe("client", |p| p.bytes))),
            servers_hash_s: median(each(&|r| r.servers(|p| p.wall_ns) / 1e9)),
            servers_digests: median(each(&|r| r.servers(|p| p.digests))),
            client_histogram_all_repeats: histogram,
            retried_after: reps.iter().filter_map(|r| r.retried_after.clone()).collect(),
            each: Repeats {
                total_s: totals,
                client_hash_s: client_wall,
            },
        };
        items.push(m.to_app(m.key()));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppResult;

    /// An item as `report::tahoe::items` has stored it since the study began (its `json!`
    /// before these types): the same keys, an implementation that may be null.
    const STORED: &str = r#"{"hash":"blake3","implementation":null,"vector":"5x1 MB","count":5,"size":1000000,
        "direction":"upload","repeats":3,"literal":false,"total_s":2.0,"client_hash_s":0.3,"client_hash_cpu_s":0.29,
        "fraction":0.1,"client_digests":40.0,"client_updates":90.0,"client_bytes":6000000.0,"servers_hash_s":0.001,
        "servers_digests":6.0,"client_histogram_all_repeats":{"20":9},"retried_after":[],
        "each":{"total_s":[1.0,3.0,2.0],"client_hash_s":[0.1,0.3,0.5]}}"#;

    #[test]
    fn a_stored_item_reads_back_and_is_written_with_the_same_keys() {
        let data: Value = serde_json::from_str(STORED).unwrap();
        let a = AppResult {
            driver: DRIVER.into(),
            item: "blake3|5x1 MB|upload".into(),
            data: data.clone(),
        };
        let m = Measured::from_app(&a).expect("reads");
        assert_eq!(
            (m.hash.as_str(), m.vector.as_str(), m.direction.as_str()),
            ("blake3", "5x1 MB", "upload")
        );
        assert_eq!((m.repeats, m.total_s, m.fraction), (3, 2.0, 0.1));
        assert_eq!(m.client_histogram_all_repeats["20"], 9);
        assert_eq!(m.key(), a.item);
        assert_eq!(m.to_app(m.key()).data, data, "written back exactly as stored");
        // Another driver's item is not a Tahoe item.
        assert!(Measured::from_app(&AppResult {
            driver: "tls".into(),
            ..a
        })
        .is_none());
    }

    #[test]
    fn a_setup_keeps_what_the_report_does_not_show() {
        let data = serde_json::json!({"tahoe_version": "1.20.0", "shares": [3, 7, 10], "storage_nodes": 10,
            "hashes": {"blake3": {"implementation": "cryptoscope", "probe_cap": "URI:CHK:..", "module": "m"}},
            "swap_checks": ["ok"], "grid_seconds": 4.5});
        let s: Setup = serde_json::from_value(data).unwrap();
        assert_eq!(s.tahoe_version.as_deref(), Some("1.20.0"));
        assert_eq!(s.hashes["blake3"].probe_cap.as_deref(), Some("URI:CHK:.."));
        assert_eq!(s.hashes["blake3"].rest["module"], "m");
        assert_eq!(s.rest["grid_seconds"], 4.5);
        assert_eq!(s.segment_size, None);
    }
}
