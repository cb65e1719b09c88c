//! The results store: an embedded SQLite database (`rusqlite`, SQLite compiled in), or a
//! PostgreSQL server for a team or a fleet (`--db postgresql://...`), that keeps every run — its environment, subjects, builds, per-operation statistics and raw
//! samples — so results can be listed, shown, exported and compared later, across runs and
//! machines.
//!
//! Schema (version [`SCHEMA_VERSION`], in `PRAGMA user_version` for SQLite and the table
//! `cryptoscope_schema` for PostgreSQL; older databases are migrated forward in a
//! transaction, newer ones are refused):
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
//!   median_cycles, …, cycle_source, overhead_cycles, tsc_hz, cpu, memory_calls,
//!   stack_bytes, heap_*, code_bytes, code_bytes_method, scaling, scale_knee_threads)` —
//!   one row per (subject, operation), committed as soon as it is measured (memory
//!   columns: schema version 4; `scaling`, JSON text, and the knee: version 5;
//!   `counters`, JSON text, and `instructions`: version 7; `cipher`, JSON text, the block
//!   cipher strategy's description: version 9)
//! - version 10 changes no table: it replaces the passwords that earlier versions kept in
//!   `runs.command` by `***` (see [`Migration`])
//! - version 11 adds `results.input_check`: how the subject treats invalid public input
//!   ("does not validate ek"), a verdict kept beside the gate's
//! - version 12 adds `results.instructions_spread`: how much one call's instruction count
//!   varies under real randomness ((max − min) / min), beside the fixed-seed `instructions`
//! - `samples(run_id, subject_id, operation, cycles, ns, visits, t)` — raw samples as
//!   little-endian f64 arrays; `visits` (schema version 3) is the JSON array of visit
//!   lengths of a run measured in rounds, NULL for one visit; `t` (version 6) the start
//!   of each sample in seconds after the run started
//!
//! The store never measures and never prints; it never stores a secret (command lines are
//! scrubbed, [`cryptoscope_model::secrets`]) and never shows a server's password.

mod db;
mod groups;
mod libpq;
mod schema;

pub use libpq::is_server;

use cryptoscope_model::secrets::{scrub_args, scrub_text};
use cryptoscope_model::{AppResult, ResultRow, RunFile};
use db::{Db, Param};
pub use groups::{machine_types, Member};
use schema::{render, Dialect, MIGRATIONS};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Current schema version.
pub const SCHEMA_VERSION: i64 = 12;

/// The migration that scrubs passwords from stored command lines.
const SCRUB_VERSION: i64 = 10;

/// What opening a database written by an earlier cryptoscope changed in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The schema version found.
    pub from: i64,
    /// The schema version now.
    pub to: i64,
    /// Stored command lines from which a password or other secret was removed.
    pub scrubbed_commands: usize,
}

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
    /// The PostgreSQL server failed or could not be reached.
    #[error("PostgreSQL: {0}")]
    Server(String),
    /// Stored data could not be decoded.
    #[error("results database holds undecodable data: {0}")]
    Decode(String),
    /// No run matches.
    #[error("no run `{0}` in the results database (`cryptoscope runs` lists them)")]
    NoSuchRun(String),
    /// A run prefix matches several runs.
    #[error("`{0}` matches several runs: {1}")]
    Ambiguous(String, String),
    /// A group's shards ran on several machine types, whose figures are never merged.
    #[error(
        "group {group} ran on several machine types, whose figures are never merged: {types}; name one \
         (group:{group}@TEXT, TEXT from its CPU model or host name), or `show`/`report` the group (a part per machine)"
    )]
    ManyMachines { group: String, types: String },
    /// `group:NAME@TEXT` where no run of the group ran on such a machine.
    #[error("group {group} has no run on a machine matching `{text}`; its machines: {types}")]
    NoSuchMachine { group: String, text: String, types: String },
}

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
    "memory_calls",
    "stack_bytes",
    "heap_allocations",
    "heap_frees",
    "heap_bytes",
    "heap_peak_bytes",
    "heap_retained_bytes",
    "code_bytes",
    "code_bytes_method",
    "scaling",
    "scale_knee_threads",
    "counters",
    "instructions",
    "cipher",
    "input_check",
    "instructions_spread",
];

/// Result columns that hold JSON text (arrays or objects) rather than a scalar.
const JSON_COLUMNS: &[&str] = &["scaling", "counters", "cipher"];

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
    /// `run --name`, or empty.
    pub name: String,
    pub measured: usize,
    pub failed: usize,
    pub total: usize,
}

/// The default database, from what the caller read of the environment (`get`: a variable's
/// value, if set): `$CRYPTOSCOPE_DB`, else `$XDG_DATA_HOME/cryptoscope/results.db`, else
/// `~/.local/share/cryptoscope/results.db`.
pub fn default_path(get: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    if let Some(p) = get("CRYPTOSCOPE_DB").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let base = get("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| get("HOME").map(|h| PathBuf::from(h).join(".local/share")))
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

fn param_of(v: &Value) -> Param {
    match v {
        Value::Null => Param::Null,
        Value::Bool(b) => Param::Int(i64::from(*b)),
        Value::Number(n) => n
            .as_i64()
            .map(Param::Int)
            .unwrap_or_else(|| Param::Real(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => Param::Text(s.clone()),
        other => Param::Text(other.to_string()),
    }
}

fn value_of(p: &Param) -> Value {
    match p {
        Param::Null | Param::Blob(_) => Value::Null,
        Param::Int(i) => Value::from(*i),
        Param::Real(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        Param::Text(t) => Value::String(t.clone()),
    }
}

fn one(rows: Vec<Vec<Param>>, what: &str) -> Result<Vec<Param>, StoreError> {
    rows.into_iter()
        .next()
        .ok_or_else(|| StoreError::Decode(format!("{what}: no row")))
}

/// Replaces the secrets in every stored command line (written by versions before
/// [`SCRUB_VERSION`]) by `***`; returns how many command lines changed.
fn scrub_stored_commands(db: &mut Db) -> Result<usize, StoreError> {
    let mut changed = 0;
    for row in db.query("SELECT id, command FROM runs", &[])? {
        let (Some(id), Some(stored)) = (row[0].text(), row[1].text()) else {
            continue;
        };
        // A command line is a JSON array of arguments; anything else is scrubbed as text.
        let clean = match serde_json::from_str::<Vec<String>>(&stored) {
            Ok(args) => {
                let scrubbed = scrub_args(&args);
                if scrubbed == args {
                    continue;
                }
                serde_json::to_string(&scrubbed).map_err(|e| StoreError::Decode(e.to_string()))?
            }
            Err(_) => scrub_text(&stored),
        };
        if clean != stored {
            db.execute("UPDATE runs SET command = ?2 WHERE id = ?1", &[id.into(), clean.into()])?;
            changed += 1;
        }
    }
    Ok(changed)
}

/// A connection string that could not be resolved, for its error message: a URI with its
/// password masked; a keyword string that holds a password not at all, since a malformed
/// one (an unquoted value with a space) cannot be masked reliably.
fn unresolved(spec: &str) -> String {
    let masked = scrub_text(spec);
    if masked == spec || spec.contains("://") {
        masked
    } else {
        "the PostgreSQL connection string given (not repeated: it holds a password)".into()
    }
}

/// Why a connection failed, in words that say what to do about a missing or refused
/// password (never the password itself).
fn connect_failure(e: &postgres::Error, target: &libpq::Target) -> String {
    let msg = db::pg_message(e);
    // The store is not returned, so its warnings (a password file ignored) go here.
    let warned = target.warnings.join("; ");
    if msg.contains("password missing") {
        let file = match &target.passfile {
            _ if !warned.is_empty() => warned,
            Some(f) if f.exists() => format!("the password file {} has no line for it", f.display()),
            Some(f) => format!("no password file at {}", f.display()),
            None => "no password file".to_string(),
        };
        return format!(
            "the server asks for a password and none was given: set PGPASSWORD, add a line \
             host:port:database:user:password to ~/.pgpass (or the file PGPASSFILE names, mode 0600), \
             or name a pg_service.conf service ({file})"
        );
    }
    match &target.password_from {
        Some(from) if msg.contains("password authentication failed") => {
            format!("{msg} (the password came from {from})")
        }
        _ if warned.is_empty() => msg,
        _ => format!("{msg}; {warned}"),
    }
}

/// An open results database.
pub struct Store {
    db: Db,
    /// A file path, or the PostgreSQL server as `postgresql://user@host:port/dbname`.
    location: String,
    path: PathBuf,
    /// What opening it did to a database written by an earlier version.
    migrated: Option<Migration>,
    /// What libpq would have warned about while finding the server's credentials.
    warnings: Vec<String>,
}

impl Store {
    /// Opens a SQLite file or a PostgreSQL server — a `postgres://` / `postgresql://` URI or
    /// a libpq keyword/value string (`service=team`), completed from `pg_service.conf`, the
    /// `PG*` variables and the password file as libpq does ([`is_server`]); creates and
    /// migrates the schema as needed.
    pub fn open_any(location: &str) -> Result<Store, StoreError> {
        if !is_server(location) {
            return Store::open(Path::new(location));
        }
        let target = libpq::resolve(location, &libpq::Env::of_process()).map_err(|detail| StoreError::Open {
            path: PathBuf::from(unresolved(location)),
            detail,
        })?;
        let client = target.config.connect(postgres::NoTls).map_err(|e| StoreError::Open {
            path: PathBuf::from(&target.shown),
            detail: connect_failure(&e, &target),
        })?;
        let mut store = Store {
            db: Db::Pg(Box::new(client)),
            location: target.shown.clone(),
            path: PathBuf::from(&target.shown),
            migrated: None,
            warnings: target.warnings,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Opens (creating if needed) and migrates the SQLite database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = |detail: String| StoreError::Open {
            path: path.to_path_buf(),
            detail,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let conn = rusqlite::Connection::open(path).map_err(|e| err(e.to_string()))?;
        // Shards of one run may write at the same time: wait for the lock instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(60))
            .map_err(|e| err(e.to_string()))?;
        // WAL keeps committed results safe if the process is killed mid-run. Switching a new
        // database to WAL takes an exclusive lock that the busy handler does not wait for, so
        // several processes opening it at once retry here.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if matches!(
                        e.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(err(e.to_string())),
            }
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| err(e.to_string()))?;
        // What is deleted or overwritten is zeroed in the file, not left in free space: a
        // scrubbed password must not survive in the database's pages.
        conn.pragma_update(None, "secure_delete", "ON")
            .map_err(|e| err(e.to_string()))?;
        let mut store = Store {
            db: Db::Lite(conn),
            location: path.display().to_string(),
            path: path.to_path_buf(),
            migrated: None,
            warnings: Vec::new(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Where this database lives (a path, or a URL without password).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this database lives, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// What opening this database changed, if an earlier cryptoscope wrote it.
    pub fn migrated(&self) -> Option<&Migration> {
        self.migrated.as_ref()
    }

    /// Warnings about how the server was reached (a password file others can read, so
    /// ignored), for the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The schema version of the open database.
    pub fn version(&mut self) -> Result<i64, StoreError> {
        match &mut self.db {
            Db::Lite(c) => Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?),
            Db::Pg(_) => {
                self.db
                    .batch("CREATE TABLE IF NOT EXISTS cryptoscope_schema (version BIGINT NOT NULL)")?;
                let rows = self
                    .db
                    .query("SELECT COALESCE(MAX(version), 0) FROM cryptoscope_schema", &[])?;
                Ok(one(rows, "schema version")?[0].int().unwrap_or(0))
            }
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let v = self.version()?;
        if v > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: v,
            });
        }
        let dialect = if self.db.is_pg() {
            Dialect::Postgres
        } else {
            Dialect::Sqlite
        };
        let mut scrubbed = 0;
        for (i, m) in MIGRATIONS.iter().enumerate().skip(v as usize) {
            let next = (i + 1) as i64;
            let sql = render(m, dialect);
            // Another process may be migrating the same new database at the same moment
            // (shards, parallel tests): inside the write transaction, look again.
            self.db.transaction(|db| {
                let now = match db {
                    Db::Lite(c) => c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))?,
                    Db::Pg(_) => {
                        db.batch("LOCK TABLE cryptoscope_schema IN EXCLUSIVE MODE")?;
                        let rows = db.query("SELECT COALESCE(MAX(version), 0) FROM cryptoscope_schema", &[])?;
                        one(rows, "schema version")?[0].int().unwrap_or(0)
                    }
                };
                if now >= next {
                    return Ok(());
                }
                db.batch(&sql)?;
                if next == SCRUB_VERSION {
                    scrubbed = scrub_stored_commands(db)?;
                }
                match db {
                    Db::Lite(c) => Ok(c.pragma_update(None, "user_version", next)?),
                    Db::Pg(_) => db.execute("INSERT INTO cryptoscope_schema (version) VALUES (?1)", &[next.into()]),
                }
            })?;
        }
        if scrubbed > 0 {
            // The old values must not outlive the update: SQLite copies the WAL's pages
            // (written with secure_delete) over the old ones and empties the WAL; PostgreSQL
            // rewrites the table without its dead rows (only its owner may; others get the
            // server's warning and the scrubbed live rows).
            match &mut self.db {
                Db::Lite(c) => c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?,
                Db::Pg(_) => self.db.batch("VACUUM FULL runs")?,
            }
        }
        if v > 0 && v < SCHEMA_VERSION {
            self.migrated = Some(Migration {
                from: v,
                to: SCHEMA_VERSION,
                scrubbed_commands: scrubbed,
            });
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
        self.db.transaction(|db| {
            db.execute(
                "INSERT INTO environments (hostname, cpu_model, json) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                &[run.environment.hostname.clone().into(), run.environment.cpu_model.clone().into(), env_json.clone().into()],
            )?;
            let env_id = one(db.query("SELECT id FROM environments WHERE json = ?1", &[env_json.clone().into()])?, "environment")?[0].clone();
            db.execute(
                "INSERT INTO runs (id, started_at, finished_at, status, tool_version, command, config, environment_id, run_group)
                 VALUES (?1, ?2, NULL, 'running', ?3, ?4, ?5, ?6, ?7)",
                &[
                    run.run_id.as_str().into(),
                    run.started_at.as_str().into(),
                    run.tool_version.as_str().into(),
                    serde_json::to_string(&run.command).unwrap_or_default().into(),
                    serde_json::to_string(&run.config).unwrap_or_default().into(),
                    env_id,
                    group.into(),
                ],
            )
        })
    }

    /// Replaces a run's environment (a run learns whether the machine was stable only when
    /// it ends).
    pub fn set_environment(
        &mut self,
        run_id: &str,
        env: &cryptoscope_measure::env::Environment,
    ) -> Result<(), StoreError> {
        let env_json = serde_json::to_string(env).map_err(|e| StoreError::Decode(e.to_string()))?;
        self.db.transaction(|db| {
            db.execute(
                "INSERT INTO environments (hostname, cpu_model, json) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                &[
                    env.hostname.clone().into(),
                    env.cpu_model.clone().into(),
                    env_json.clone().into(),
                ],
            )?;
            let env_id = one(
                db.query(
                    "SELECT id FROM environments WHERE json = ?1",
                    &[env_json.clone().into()],
                )?,
                "environment",
            )?[0]
                .clone();
            db.execute(
                "UPDATE runs SET environment_id = ?2 WHERE id = ?1",
                &[run_id.into(), env_id],
            )
        })
    }

    /// Stores one (subject, operation) result with its raw samples, in one transaction.
    pub fn add_result(&mut self, run_id: &str, row: &ResultRow) -> Result<(), StoreError> {
        let v = serde_json::to_value(row).map_err(|e| StoreError::Decode(e.to_string()))?;
        self.db.transaction(|db| {
            db.execute("INSERT INTO builds (description) VALUES (?1) ON CONFLICT DO NOTHING", &[row.build.as_str().into()])?;
            let build_id = one(db.query("SELECT id FROM builds WHERE description = ?1", &[row.build.as_str().into()])?, "build")?[0].clone();
            db.execute(
                "INSERT INTO subjects (subject, algorithm, family, provider, provider_version, implementation,
                   algorithm_version, build_id, nist_level, classical_bits, public_key, secret_key, ciphertext, shared_secret)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT DO NOTHING",
                &[
                    row.subject.as_str().into(),
                    row.algorithm.as_str().into(),
                    row.family.as_str().into(),
                    row.provider.as_str().into(),
                    row.provider_version.as_str().into(),
                    row.implementation.as_str().into(),
                    row.algorithm_version.as_str().into(),
                    build_id.clone(),
                    row.nist_level.map(i64::from).into(),
                    row.classical_bits.map(i64::from).into(),
                    (row.sizes.public_key as i64).into(),
                    (row.sizes.secret_key as i64).into(),
                    (row.sizes.ciphertext as i64).into(),
                    (row.sizes.shared_secret as i64).into(),
                ],
            )?;
            let subject_id = one(
                db.query(
                    "SELECT id FROM subjects WHERE subject = ?1 AND provider_version = ?2 AND algorithm_version = ?3 AND build_id = ?4",
                    &[row.subject.as_str().into(), row.provider_version.as_str().into(), row.algorithm_version.as_str().into(), build_id],
                )?,
                "subject",
            )?[0]
                .clone();
            let mut values: Vec<Param> = vec![run_id.into(), subject_id.clone(), row.operation.as_str().into()];
            values.extend(RESULT_COLUMNS.iter().map(|c| param_of(&v[*c])));
            let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
            let updates: Vec<String> = RESULT_COLUMNS.iter().map(|c| format!("{c} = excluded.{c}")).collect();
            let sql = format!(
                "INSERT INTO results (run_id, subject_id, operation, {}) VALUES ({})
                 ON CONFLICT (run_id, subject_id, operation) DO UPDATE SET {}",
                RESULT_COLUMNS.join(", "),
                placeholders.join(", "),
                updates.join(", ")
            );
            db.execute(&sql, &values)?;
            db.execute(
                "INSERT INTO samples (run_id, subject_id, operation, cycles, ns, visits, t) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (run_id, subject_id, operation)
                 DO UPDATE SET cycles = excluded.cycles, ns = excluded.ns, visits = excluded.visits, t = excluded.t",
                &[
                    run_id.into(),
                    subject_id,
                    row.operation.as_str().into(),
                    to_blob(&row.raw_cycles).into(),
                    to_blob(&row.raw_ns).into(),
                    match row.visits.is_empty() {
                        true => Param::Null,
                        false => Param::Text(serde_json::to_string(&row.visits).map_err(|e| StoreError::Decode(e.to_string()))?),
                    },
                    to_blob(&row.raw_t_s).into(),
                ],
            )
        })
    }

    /// Marks a run as running again (`run --resume`): its stored results stay.
    pub fn reopen_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        self.db.transaction(|db| {
            db.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1",
                &[run_id.into()],
            )
        })
    }

    /// Stores one item of an application driver's results (replacing an item of the same
    /// driver and key), in one transaction; items load back in the order first stored.
    pub fn add_app_result(&mut self, run_id: &str, item: &AppResult) -> Result<(), StoreError> {
        let json = serde_json::to_string(&item.data).map_err(|e| StoreError::Decode(e.to_string()))?;
        self.db.transaction(|db| {
            db.execute(
                "DELETE FROM app_results WHERE run_id = ?1 AND driver = ?2 AND item = ?3",
                &[run_id.into(), item.driver.as_str().into(), item.item.as_str().into()],
            )?;
            db.execute(
                "INSERT INTO app_results (run_id, seq, driver, item, json)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM app_results WHERE run_id = ?1), ?2, ?3, ?4)",
                &[
                    run_id.into(),
                    item.driver.as_str().into(),
                    item.item.as_str().into(),
                    json.into(),
                ],
            )
        })
    }

    /// Marks a run complete.
    pub fn finish_run(&mut self, run_id: &str, finished_at: &str) -> Result<(), StoreError> {
        self.db.execute(
            "UPDATE runs SET status = 'complete', finished_at = ?2 WHERE id = ?1",
            &[run_id.into(), finished_at.into()],
        )
    }

    /// The run named `name` (`run --name`), if any: names live in the run's configuration.
    pub fn named(&mut self, name: &str) -> Result<Option<String>, StoreError> {
        // Only runs whose configuration holds a name are parsed (names are written as
        // `"name":"NAME"`; LIKE's `_` may match more, the parse decides).
        let rows = self.db.query(
            "SELECT id, config FROM runs WHERE config LIKE ?1",
            &[format!("%\"name\":\"{name}\"%").into()],
        )?;
        Ok(rows.into_iter().find_map(|r| {
            let config: Value = serde_json::from_str(&r[1].text()?).ok()?;
            (config["name"].as_str() == Some(name)).then(|| r[0].text()).flatten()
        }))
    }

    /// Deletes a run and everything stored under it (results, samples, application items).
    pub fn delete_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        self.db.transaction(|db| {
            for table in ["samples", "results", "app_results", "runs"] {
                let column = if table == "runs" { "id" } else { "run_id" };
                db.execute(&format!("DELETE FROM {table} WHERE {column} = ?1"), &[run_id.into()])?;
            }
            Ok(())
        })
    }

    /// Every stored run, newest first.
    pub fn runs(&mut self) -> Result<Vec<RunSummary>, StoreError> {
        let rows = self.db.query(
            "SELECT r.id, r.started_at, r.status, COALESCE(e.hostname, '?'), COALESCE(e.cpu_model, '?'), r.config, r.run_group,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND (x.median_ns IS NOT NULL OR x.stack_bytes IS NOT NULL)),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND x.gate IN ('fail', 'crashed', 'timeout')),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)
             FROM runs r JOIN environments e ON e.id = r.environment_id
             ORDER BY r.started_at DESC, r.id DESC",
            &[],
        )?;
        // The families a run's results belong to: what it measured, not what it selected
        // (a run of X25519 alone is `kex`, not its default suites `kem,kex`).
        let mut families: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for f in self.db.query(
            "SELECT DISTINCT x.run_id, s.family FROM results x JOIN subjects s ON s.id = x.subject_id",
            &[],
        )? {
            if let (Some(id), Some(family)) = (f[0].text(), f[1].text()) {
                families.entry(id).or_default().push(family);
            }
        }
        let order = |f: &String| {
            cryptoscope_model::descriptor::Family::ALL
                .iter()
                .position(|x| x.as_str() == f)
                .unwrap_or(usize::MAX)
        };
        Ok(rows
            .into_iter()
            .map(|r| {
                let config = r[5].text().unwrap_or_default();
                let measured = families.remove(&r[0].text().unwrap_or_default()).map(|mut f| {
                    f.sort_by_key(order);
                    f.join(",")
                });
                // Runs without results (application drivers, the constant-time audit) keep
                // the suite they recorded.
                let suites = measured
                    .or_else(|| {
                        serde_json::from_str::<Value>(&config).ok().and_then(|c| {
                            c["suites"]
                                .as_array()
                                .map(|a| a.iter().filter_map(|s| s.as_str()).collect::<Vec<_>>().join(","))
                        })
                    })
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "kem,kex".into());
                RunSummary {
                    id: r[0].text().unwrap_or_default(),
                    started_at: r[1].text().unwrap_or_default(),
                    status: r[2].text().unwrap_or_default(),
                    hostname: r[3].text().unwrap_or_default(),
                    cpu_model: r[4].text().unwrap_or_default(),
                    suites,
                    name: serde_json::from_str::<Value>(&config)
                        .ok()
                        .and_then(|c| c["name"].as_str().map(String::from))
                        .unwrap_or_default(),
                    group: r[6].text().unwrap_or_default(),
                    measured: r[7].int().unwrap_or(0) as usize,
                    failed: r[8].int().unwrap_or(0) as usize,
                    total: r[9].int().unwrap_or(0) as usize,
                }
            })
            .collect())
    }

    /// Resolves a run reference: a full id, a unique prefix, or `latest`.
    pub fn resolve(&mut self, reference: &str) -> Result<String, StoreError> {
        if let Some(back) = runs_back(reference) {
            let back = back.ok_or_else(|| StoreError::NoSuchRun(reference.into()))?;
            let rows = self.db.query(
                "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?1",
                &[(back as i64).into()],
            )?;
            return rows
                .first()
                .and_then(|r| r[0].text())
                .ok_or_else(|| StoreError::NoSuchRun(reference.into()));
        }
        if let Some(id) = self.named(reference)? {
            return Ok(id);
        }
        let rows = self.db.query(
            "SELECT id FROM runs WHERE id = ?1 OR id LIKE ?1 || '%' ORDER BY id",
            &[reference.into()],
        )?;
        let ids: Vec<String> = rows.iter().filter_map(|r| r[0].text()).collect();
        match ids.len() {
            0 => Err(StoreError::NoSuchRun(reference.into())),
            1 => Ok(ids.into_iter().next().expect("one")),
            _ if ids.iter().any(|i| i == reference) => Ok(reference.into()),
            _ => Err(StoreError::Ambiguous(reference.into(), ids.join(", "))),
        }
    }

    /// Loads a run reference as one `cryptoscope.run/1` structure: a run (id, prefix,
    /// `latest`) or a run group (`group:NAME`, `group:NAME@MACHINE`), whose shards are merged
    /// in start order (results concatenated; environment, configuration and command of the
    /// first shard) when they ran on one machine type, and refused otherwise
    /// ([`Store::load_all`] gives one part per type).
    pub fn load(&mut self, reference: &str) -> Result<RunFile, StoreError> {
        match reference.strip_prefix("group:") {
            Some(group) => self.load_group(group),
            None => self.load_run(reference),
        }
    }

    /// Loads a whole run as the `cryptoscope.run/1` structure.
    pub fn load_run(&mut self, reference: &str) -> Result<RunFile, StoreError> {
        let id = self.resolve(reference)?;
        let dec = |e: serde_json::Error| StoreError::Decode(e.to_string());
        let head = one(
            self.db.query(
                "SELECT r.started_at, r.finished_at, r.tool_version, r.command, r.config, e.json
                 FROM runs r JOIN environments e ON e.id = r.environment_id WHERE r.id = ?1",
                &[id.as_str().into()],
            )?,
            "run",
        )?;
        let cols = RESULT_COLUMNS
            .iter()
            .map(|c| format!("x.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let order = if self.db.is_pg() { "x.seq" } else { "x.rowid" };
        let sql = format!(
            "SELECT s.subject, s.algorithm, s.family, s.provider, s.provider_version, s.implementation, s.algorithm_version,
                    b.description, s.nist_level, s.classical_bits, s.public_key, s.secret_key, s.ciphertext, s.shared_secret,
                    x.operation, m.cycles, m.ns, m.visits, m.t, {cols}
             FROM results x JOIN subjects s ON s.id = x.subject_id JOIN builds b ON b.id = s.build_id
             LEFT JOIN samples m ON m.run_id = x.run_id AND m.subject_id = x.subject_id AND m.operation = x.operation
             WHERE x.run_id = ?1 ORDER BY {order}"
        );
        let rows = self.db.query(&sql, &[id.as_str().into()])?;
        let mut results = Vec::new();
        for r in rows {
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
                m.insert(k.to_string(), value_of(&r[i]));
            }
            m.insert("nist_level".into(), value_of(&r[8]));
            m.insert("classical_bits".into(), value_of(&r[9]));
            let mut sizes = Map::new();
            for (i, k) in ["public_key", "secret_key", "ciphertext", "shared_secret"]
                .iter()
                .enumerate()
            {
                sizes.insert(k.to_string(), value_of(&r[10 + i]));
            }
            m.insert("sizes".into(), Value::Object(sizes));
            m.insert("operation".into(), value_of(&r[14]));
            let blob = |p: &Param| match p {
                Param::Blob(b) => from_blob(b),
                _ => Ok(Vec::new()),
            };
            m.insert("raw_cycles".into(), serde_json::to_value(blob(&r[15])?).map_err(dec)?);
            m.insert("raw_ns".into(), serde_json::to_value(blob(&r[16])?).map_err(dec)?);
            if let Param::Text(t) = &r[17] {
                m.insert("visits".into(), serde_json::from_str(t).map_err(dec)?);
            }
            m.insert("raw_t_s".into(), serde_json::to_value(blob(&r[18])?).map_err(dec)?);
            for (i, c) in RESULT_COLUMNS.iter().enumerate() {
                let v = match (&r[19 + i], JSON_COLUMNS.contains(c)) {
                    (Param::Text(t), true) => serde_json::from_str(t).map_err(dec)?,
                    (p, _) => value_of(p),
                };
                m.insert(c.to_string(), v);
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
        // Unknown names sort last (None < Some, hence the flag first).
        let op_rank = |op: &str| {
            let o = cryptoscope_model::descriptor::Operation::parse(op);
            (o.is_none(), o)
        };
        results.sort_by_key(|r| (first_seen.iter().position(|s| s == &r.subject), op_rank(&r.operation)));
        let mut applications = Vec::new();
        for r in self.db.query(
            "SELECT driver, item, json FROM app_results WHERE run_id = ?1 ORDER BY seq",
            &[id.as_str().into()],
        )? {
            applications.push(AppResult {
                driver: r[0].text().unwrap_or_default(),
                item: r[1].text().unwrap_or_default(),
                data: serde_json::from_str(&r[2].text().unwrap_or_default()).map_err(dec)?,
            });
        }
        Ok(RunFile {
            schema: cryptoscope_model::SCHEMA.into(),
            run_id: id,
            started_at: head[0].text().unwrap_or_default(),
            finished_at: head[1].text().unwrap_or_default(),
            tool_version: head[2].text().unwrap_or_default(),
            command: serde_json::from_str(&head[3].text().unwrap_or_default()).map_err(dec)?,
            config: serde_json::from_str(&head[4].text().unwrap_or_default()).map_err(dec)?,
            environment: serde_json::from_str(&head[5].text().unwrap_or_default()).map_err(dec)?,
            results,
            applications,
        })
    }
}

/// `latest` (or `last`) and `latest~N`: how many runs back from the most recent one; `None`
/// for another reference, `Some(None)` for a malformed count.
fn runs_back(reference: &str) -> Option<Option<usize>> {
    let rest = reference
        .strip_prefix("latest")
        .or_else(|| reference.strip_prefix("last"))?;
    match rest {
        "" => Some(Some(0)),
        r => r.strip_prefix('~').map(|n| n.parse().ok()),
    }
}

#[cfg(test)]
mod tests;
