//! The results store: an embedded SQLite database (`rusqlite`, SQLite compiled in) that
//! keeps every run — its environment, subjects, builds, per-operation statistics and raw
//! samples — so results can be listed, shown, exported and compared later, across runs and
//! machines.
//!
//! Schema (version [`SCHEMA_VERSION`], in `PRAGMA user_version`; older databases are
//! migrated forward in a transaction, newer ones are refused):
//! - `environments(id, hostname, cpu_model, json)` — one row per distinct machine state
//! - `builds(id, description)` — compiler and flags of an implementation
//! - `subjects(id, subject, algorithm, family, provider, provider_version, implementation,
//!   algorithm_version, build_id, nist_level, classical_bits, public_key, secret_key,
//!   ciphertext, shared_secret)`
//! - `runs(id, started_at, finished_at, status, tool_version, command, config,
//!   environment_id, run_group)` — status `running` until the run finishes (an interrupted
//!   run stays `running` and keeps what it committed); shards of one sharded run share a
//!   `run_group` (schema version 2; a version-1 database gets each run as its own group)
//! - `results(run_id, subject_id, operation, gate, gate_detail, samples, stop_reason,
//!   median_cycles, …, cycle_source, overhead_cycles, tsc_hz, cpu)` — one row per
//!   (subject, operation), committed as soon as it is measured
//! - `samples(run_id, subject_id, operation, cycles, ns)` — raw samples as little-endian
//!   f64 arrays
//!
//! The store never measures and never prints.

use cryptoscope_report::{ResultRow, RunFile};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Current schema version.
pub const SCHEMA_VERSION: i64 = 2;

/// A store operation failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database could not be opened or created.
    #[error("cannot open results database {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    /// The database was written by a newer cryptoscope.
    #[error("results database {path} has schema version {found}; this cryptoscope supports up to {SCHEMA_VERSION}")]
    TooNew { path: PathBuf, found: i64 },
    /// A query failed.
    #[error("results database error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// Stored data could not be decoded.
    #[error("results database holds undecodable data: {0}")]
    Decode(String),
    /// No run matches.
    #[error("no run `{0}` in the results database (`cryptoscope runs` lists them)")]
    NoSuchRun(String),
    /// A run prefix matches several runs.
    #[error("`{0}` matches several runs: {1}")]
    Ambiguous(String, String),
}

/// Forward migrations; entry `i` brings a database from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE environments (
    id INTEGER PRIMARY KEY,
    hostname TEXT,
    cpu_model TEXT,
    json TEXT NOT NULL UNIQUE
);
CREATE TABLE builds (
    id INTEGER PRIMARY KEY,
    description TEXT NOT NULL UNIQUE
);
CREATE TABLE subjects (
    id INTEGER PRIMARY KEY,
    subject TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    family TEXT NOT NULL,
    provider TEXT NOT NULL,
    provider_version TEXT NOT NULL,
    implementation TEXT NOT NULL,
    algorithm_version TEXT NOT NULL,
    build_id INTEGER NOT NULL REFERENCES builds(id),
    nist_level INTEGER,
    classical_bits INTEGER,
    public_key INTEGER NOT NULL,
    secret_key INTEGER NOT NULL,
    ciphertext INTEGER NOT NULL,
    shared_secret INTEGER NOT NULL,
    UNIQUE (subject, provider_version, algorithm_version, build_id)
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    command TEXT NOT NULL,
    config TEXT NOT NULL,
    environment_id INTEGER NOT NULL REFERENCES environments(id)
);
CREATE TABLE results (
    run_id TEXT NOT NULL REFERENCES runs(id),
    subject_id INTEGER NOT NULL REFERENCES subjects(id),
    operation TEXT NOT NULL,
    gate TEXT NOT NULL,
    gate_detail TEXT NOT NULL,
    samples INTEGER NOT NULL,
    stop_reason TEXT,
    median_cycles REAL, median_ns REAL,
    ci95_low_cycles REAL, ci95_high_cycles REAL, ci95_low_ns REAL, ci95_high_ns REAL,
    mean_cycles REAL, mean_ns REAL, stddev_cycles REAL,
    min_cycles REAL, max_cycles REAL, p5_cycles REAL, p95_cycles REAL, p99_cycles REAL, mad_cycles REAL,
    outliers INTEGER, severe_outliers INTEGER,
    cycle_source TEXT, overhead_cycles REAL, overhead_ns REAL, tsc_hz REAL, cpu INTEGER,
    PRIMARY KEY (run_id, subject_id, operation)
);
CREATE TABLE samples (
    run_id TEXT NOT NULL,
    subject_id INTEGER NOT NULL,
    operation TEXT NOT NULL,
    cycles BLOB NOT NULL,
    ns BLOB NOT NULL,
    PRIMARY KEY (run_id, subject_id, operation)
);
CREATE INDEX results_by_subject ON results(subject_id, operation);
"#,
    r#"
ALTER TABLE runs ADD COLUMN run_group TEXT;
UPDATE runs SET run_group = id WHERE run_group IS NULL;
CREATE INDEX runs_by_group ON runs(run_group);
"#,
];

/// Result columns stored as they are named in [`ResultRow`] (beyond the key columns).
const RESULT_COLUMNS: &[&str] = &[
    "gate",
    "gate_detail",
    "samples",
    "stop_reason",
    "median_cycles",
    "median_ns",
    "ci95_low_cycles",
    "ci95_high_cycles",
    "ci95_low_ns",
    "ci95_high_ns",
    "mean_cycles",
    "mean_ns",
    "stddev_cycles",
    "min_cycles",
    "max_cycles",
    "p5_cycles",
    "p95_cycles",
    "p99_cycles",
    "mad_cycles",
    "outliers",
    "severe_outliers",
    "cycle_source",
    "overhead_cycles",
    "overhead_ns",
    "tsc_hz",
    "cpu",
];

/// One line of `cryptoscope runs`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub id: String,
    pub group: String,
    pub started_at: String,
    pub status: String,
    pub hostname: String,
    pub cpu_model: String,
    pub suites: String,
    pub measured: usize,
    pub failed: usize,
    pub total: usize,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// The default database: `$CRYPTOSCOPE_DB`, else `$XDG_DATA_HOME/cryptoscope/results.db`,
/// else `~/.local/share/cryptoscope/results.db`.
pub fn default_path() -> PathBuf {
    if let Ok(p) = std::env::var("CRYPTOSCOPE_DB") {
        return PathBuf::from(p);
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("cryptoscope/results.db")
}

fn to_blob(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Result<Vec<f64>, StoreError> {
    if !b.len().is_multiple_of(8) {
        return Err(StoreError::Decode("sample blob length is not a multiple of 8".into()));
    }
    Ok(b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

fn sql_value(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Bool(b) => V::Integer(i64::from(*b)),
        Value::Number(n) => n
            .as_i64()
            .map(V::Integer)
            .unwrap_or_else(|| V::Real(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => V::Text(s.clone()),
        other => V::Text(other.to_string()),
    }
}

fn json_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Null => Value::Null,
        V::Integer(i) => Value::from(i),
        V::Real(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        V::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        V::Blob(_) => Value::Null,
    }
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = |detail: String| StoreError::Open {
            path: path.to_path_buf(),
            detail,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let conn = Connection::open(path).map_err(|e| err(e.to_string()))?;
        // Shards of one run may write at the same time: wait for the lock instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(60))
            .map_err(|e| err(e.to_string()))?;
        // WAL keeps committed results safe if the process is killed mid-run.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| err(e.to_string()))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| err(e.to_string()))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Where this database lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database.
    pub fn version(&self) -> Result<i64, StoreError> {
        Ok(self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let v = self.version()?;
        if v > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: v,
            });
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(v as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(m)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Records the start of a run (status `running`). `run.results` is ignored: results are
    /// added one by one with [`Store::add_result`].
    pub fn begin_run(&mut self, run: &RunFile) -> Result<(), StoreError> {
        self.begin_run_in_group(run, &run.run_id)
    }

    /// Like [`Store::begin_run`], as one shard of the run group `group`.
    pub fn begin_run_in_group(&mut self, run: &RunFile, group: &str) -> Result<(), StoreError> {
        let env_json = serde_json::to_string(&run.environment).map_err(|e| StoreError::Decode(e.to_string()))?;
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT OR IGNORE INTO environments (hostname, cpu_model, json) VALUES (?1, ?2, ?3)",
            params![run.environment.hostname, run.environment.cpu_model, env_json],
        )?;
        let env_id: i64 = tx.query_row("SELECT id FROM environments WHERE json = ?1", [&env_json], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO runs (id, started_at, finished_at, status, tool_version, command, config, environment_id, run_group)
             VALUES (?1, ?2, NULL, 'running', ?3, ?4, ?5, ?6, ?7)",
            params![
                run.run_id,
                run.started_at,
                run.tool_version,
                serde_json::to_string(&run.command).unwrap_or_default(),
                serde_json::to_string(&run.config).unwrap_or_default(),
                env_id,
                group
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Stores one (subject, operation) result with its raw samples, in one transaction.
    pub fn add_result(&mut self, run_id: &str, row: &ResultRow) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute("INSERT OR IGNORE INTO builds (description) VALUES (?1)", [&row.build])?;
        let build_id: i64 = tx.query_row("SELECT id FROM builds WHERE description = ?1", [&row.build], |r| {
            r.get(0)
        })?;
        tx.execute(
            "INSERT OR IGNORE INTO subjects (subject, algorithm, family, provider, provider_version, implementation,
               algorithm_version, build_id, nist_level, classical_bits, public_key, secret_key, ciphertext, shared_secret)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                row.subject,
                row.algorithm,
                row.family,
                row.provider,
                row.provider_version,
                row.implementation,
                row.algorithm_version,
                build_id,
                row.nist_level,
                row.classical_bits,
                row.sizes.public_key as i64,
                row.sizes.secret_key as i64,
                row.sizes.ciphertext as i64,
                row.sizes.shared_secret as i64
            ],
        )?;
        let subject_id: i64 = tx.query_row(
            "SELECT id FROM subjects WHERE subject = ?1 AND provider_version = ?2 AND algorithm_version = ?3 AND build_id = ?4",
            params![row.subject, row.provider_version, row.algorithm_version, build_id],
            |r| r.get(0),
        )?;
        let v = serde_json::to_value(row).map_err(|e| StoreError::Decode(e.to_string()))?;
        let mut values: Vec<rusqlite::types::Value> = vec![
            rusqlite::types::Value::Text(run_id.to_string()),
            rusqlite::types::Value::Integer(subject_id),
            rusqlite::types::Value::Text(row.operation.clone()),
        ];
        values.extend(RESULT_COLUMNS.iter().map(|c| sql_value(&v[*c])));
        let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT OR REPLACE INTO results (run_id, subject_id, operation, {}) VALUES ({})",
            RESULT_COLUMNS.join(", "),
            placeholders.join(", ")
        );
        tx.execute(&sql, rusqlite::params_from_iter(values))?;
        tx.execute(
            "INSERT OR REPLACE INTO samples (run_id, subject_id, operation, cycles, ns) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run_id,
                subject_id,
                row.operation,
                to_blob(&row.raw_cycles),
                to_blob(&row.raw_ns)
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Marks a run complete.
    pub fn finish_run(&mut self, run_id: &str, finished_at: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET status = 'complete', finished_at = ?2 WHERE id = ?1",
            params![run_id, finished_at],
        )?;
        Ok(())
    }

    /// Every stored run, newest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT r.id, r.started_at, r.status, COALESCE(e.hostname, '?'), COALESCE(e.cpu_model, '?'), r.config, r.run_group,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND x.median_ns IS NOT NULL),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND x.gate IN ('fail', 'crashed', 'timeout')),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)
             FROM runs r JOIN environments e ON e.id = r.environment_id
             ORDER BY r.started_at DESC, r.id DESC",
        )?;
        let rows = st.query_map([], |r| {
            let config: String = r.get(5)?;
            let suites = serde_json::from_str::<Value>(&config)
                .ok()
                .and_then(|c| {
                    c["suites"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|s| s.as_str()).collect::<Vec<_>>().join(","))
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "kem,kex".into());
            Ok(RunSummary {
                id: r.get(0)?,
                started_at: r.get(1)?,
                status: r.get(2)?,
                hostname: r.get(3)?,
                cpu_model: r.get(4)?,
                suites,
                group: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                measured: r.get::<_, i64>(7)? as usize,
                failed: r.get::<_, i64>(8)? as usize,
                total: r.get::<_, i64>(9)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Resolves a run reference: a full id, a unique prefix, or `latest`.
    pub fn resolve(&self, reference: &str) -> Result<String, StoreError> {
        if reference == "latest" || reference == "last" {
            return self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NoSuchRun(reference.into()));
        }
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs WHERE id = ?1 OR id LIKE ?1 || '%' ORDER BY id")?;
        let ids: Vec<String> = st.query_map([reference], |r| r.get(0))?.collect::<Result<_, _>>()?;
        match ids.len() {
            0 => Err(StoreError::NoSuchRun(reference.into())),
            1 => Ok(ids.into_iter().next().expect("one")),
            _ if ids.iter().any(|i| i == reference) => Ok(reference.into()),
            _ => Err(StoreError::Ambiguous(reference.into(), ids.join(", "))),
        }
    }

    /// Loads a run reference as one `cryptoscope.run/1` structure: a run (id, prefix,
    /// `latest`) or a run group (`group:NAME`), whose shards are merged in start order
    /// (results concatenated; environment, configuration and command of the first shard).
    pub fn load(&self, reference: &str) -> Result<RunFile, StoreError> {
        let Some(group) = reference.strip_prefix("group:") else {
            return self.load_run(reference);
        };
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs WHERE run_group = ?1 ORDER BY started_at, id")?;
        let ids: Vec<String> = st.query_map([group], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let mut shards = ids.iter().map(|id| self.load_run(id));
        let mut merged = shards.next().ok_or_else(|| StoreError::NoSuchRun(reference.into()))??;
        for shard in shards {
            let shard = shard?;
            merged.results.extend(shard.results);
            merged.finished_at = merged.finished_at.max(shard.finished_at);
        }
        merged.run_id = reference.to_string();
        Ok(merged)
    }

    /// Loads a whole run as the `cryptoscope.run/1` structure.
    pub fn load_run(&self, reference: &str) -> Result<RunFile, StoreError> {
        let id = self.resolve(reference)?;
        let dec = |e: serde_json::Error| StoreError::Decode(e.to_string());
        let (started_at, finished_at, tool_version, command, config, env): (
            String,
            Option<String>,
            String,
            String,
            String,
            String,
        ) = self.conn.query_row(
            "SELECT r.started_at, r.finished_at, r.tool_version, r.command, r.config, e.json
                 FROM runs r JOIN environments e ON e.id = r.environment_id WHERE r.id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )?;
        let cols = RESULT_COLUMNS
            .iter()
            .map(|c| format!("x.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT s.subject, s.algorithm, s.family, s.provider, s.provider_version, s.implementation, s.algorithm_version,
                    b.description, s.nist_level, s.classical_bits, s.public_key, s.secret_key, s.ciphertext, s.shared_secret,
                    x.operation, m.cycles, m.ns, {cols}
             FROM results x JOIN subjects s ON s.id = x.subject_id JOIN builds b ON b.id = s.build_id
             LEFT JOIN samples m ON m.run_id = x.run_id AND m.subject_id = x.subject_id AND m.operation = x.operation
             WHERE x.run_id = ?1 ORDER BY x.rowid"
        );
        let mut st = self.conn.prepare(&sql)?;
        let mut rows = st.query([&id])?;
        let mut results = Vec::new();
        while let Some(r) = rows.next()? {
            let mut m = Map::new();
            for (i, k) in [
                "subject",
                "algorithm",
                "family",
                "provider",
                "provider_version",
                "implementation",
                "algorithm_version",
                "build",
            ]
            .iter()
            .enumerate()
            {
                m.insert(k.to_string(), json_value(r.get_ref(i)?));
            }
            m.insert("nist_level".into(), json_value(r.get_ref(8)?));
            m.insert("classical_bits".into(), json_value(r.get_ref(9)?));
            let mut sizes = Map::new();
            for (i, k) in ["public_key", "secret_key", "ciphertext", "shared_secret"]
                .iter()
                .enumerate()
            {
                sizes.insert(k.to_string(), json_value(r.get_ref(10 + i)?));
            }
            m.insert("sizes".into(), Value::Object(sizes));
            m.insert("operation".into(), json_value(r.get_ref(14)?));
            let cycles = r
                .get::<_, Option<Vec<u8>>>(15)?
                .map(|b| from_blob(&b))
                .transpose()?
                .unwrap_or_default();
            let ns = r
                .get::<_, Option<Vec<u8>>>(16)?
                .map(|b| from_blob(&b))
                .transpose()?
                .unwrap_or_default();
            m.insert("raw_cycles".into(), serde_json::to_value(cycles).map_err(dec)?);
            m.insert("raw_ns".into(), serde_json::to_value(ns).map_err(dec)?);
            for (i, c) in RESULT_COLUMNS.iter().enumerate() {
                m.insert(c.to_string(), json_value(r.get_ref(17 + i)?));
            }
            results.push(serde_json::from_value::<ResultRow>(Value::Object(m)).map_err(dec)?);
        }
        // The run file's order: subjects as measured, operations in protocol order.
        let mut first_seen: Vec<String> = Vec::new();
        for r in &results {
            if !first_seen.contains(&r.subject) {
                first_seen.push(r.subject.clone());
            }
        }
        let op_rank = |op: &str| {
            cryptoscope_catalogue::Operation::parse(op)
                .map(|o| o as usize)
                .unwrap_or(usize::MAX)
        };
        results.sort_by_key(|r| (first_seen.iter().position(|s| s == &r.subject), op_rank(&r.operation)));
        Ok(RunFile {
            schema: cryptoscope_report::SCHEMA.into(),
            run_id: id,
            started_at,
            finished_at: finished_at.unwrap_or_default(),
            tool_version,
            command: serde_json::from_str(&command).map_err(dec)?,
            config: serde_json::from_str(&config).map_err(dec)?,
            environment: serde_json::from_str(&env).map_err(dec)?,
            results,
        })
    }
}

#[cfg(test)]
mod tests;
