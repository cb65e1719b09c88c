//! The schema's migrations, written once for both engines and rendered for the one a
//! database uses ([`render`]): SQLite and PostgreSQL accept the same DDL except for a few
//! column types and PostgreSQL's explicit insertion order of `results`.

/// The SQL dialect a migration is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// Forward migrations; entry `i` brings a database from version `i` to `i + 1`.
///
/// Written with placeholders that [`render`] replaces per dialect:
/// - `{id}`: an auto-increment primary key (`INTEGER PRIMARY KEY`, `BIGSERIAL PRIMARY KEY`)
/// - `{int}`: an integer (`INTEGER`, `BIGINT`)
/// - `{real}`: a float (`REAL`, `DOUBLE PRECISION`)
/// - `{blob}`: bytes (`BLOB`, `BYTEA`)
/// - `{seq}`: the first column of `results` on PostgreSQL, `seq BIGSERIAL`, which keeps the
///   order results were stored in; nothing on SQLite, where the rowid keeps it
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE environments (
    id {id},
    hostname TEXT,
    cpu_model TEXT,
    json TEXT NOT NULL UNIQUE
);
CREATE TABLE builds (
    id {id},
    description TEXT NOT NULL UNIQUE
);
CREATE TABLE subjects (
    id {id},
    subject TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    family TEXT NOT NULL,
    provider TEXT NOT NULL,
    provider_version TEXT NOT NULL,
    implementation TEXT NOT NULL,
    algorithm_version TEXT NOT NULL,
    build_id {int} NOT NULL REFERENCES builds(id),
    nist_level {int},
    classical_bits {int},
    public_key {int} NOT NULL,
    secret_key {int} NOT NULL,
    ciphertext {int} NOT NULL,
    shared_secret {int} NOT NULL,
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
    environment_id {int} NOT NULL REFERENCES environments(id)
);
CREATE TABLE results (
    {seq}run_id TEXT NOT NULL REFERENCES runs(id),
    subject_id {int} NOT NULL REFERENCES subjects(id),
    operation TEXT NOT NULL,
    gate TEXT NOT NULL,
    gate_detail TEXT NOT NULL,
    samples {int} NOT NULL,
    stop_reason TEXT,
    median_cycles {real}, median_ns {real},
    ci95_low_cycles {real}, ci95_high_cycles {real}, ci95_low_ns {real}, ci95_high_ns {real},
    mean_cycles {real}, mean_ns {real}, stddev_cycles {real},
    min_cycles {real}, max_cycles {real}, p5_cycles {real}, p95_cycles {real}, p99_cycles {real}, mad_cycles {real},
    outliers {int}, severe_outliers {int},
    cycle_source TEXT, overhead_cycles {real}, overhead_ns {real}, tsc_hz {real}, cpu {int},
    PRIMARY KEY (run_id, subject_id, operation)
);
CREATE TABLE samples (
    run_id TEXT NOT NULL,
    subject_id {int} NOT NULL,
    operation TEXT NOT NULL,
    cycles {blob} NOT NULL,
    ns {blob} NOT NULL,
    PRIMARY KEY (run_id, subject_id, operation)
);
CREATE INDEX results_by_subject ON results(subject_id, operation);
"#,
    r#"
ALTER TABLE runs ADD COLUMN run_group TEXT;
UPDATE runs SET run_group = id WHERE run_group IS NULL;
CREATE INDEX runs_by_group ON runs(run_group);
"#,
    r#"
ALTER TABLE samples ADD COLUMN visits TEXT;
"#,
    r#"
ALTER TABLE results ADD COLUMN memory_calls {int};
ALTER TABLE results ADD COLUMN stack_bytes {int};
ALTER TABLE results ADD COLUMN heap_allocations {int};
ALTER TABLE results ADD COLUMN heap_frees {int};
ALTER TABLE results ADD COLUMN heap_bytes {int};
ALTER TABLE results ADD COLUMN heap_peak_bytes {int};
ALTER TABLE results ADD COLUMN heap_retained_bytes {int};
ALTER TABLE results ADD COLUMN code_bytes {int};
ALTER TABLE results ADD COLUMN code_bytes_method TEXT;
"#,
    r#"
ALTER TABLE results ADD COLUMN scaling TEXT;
ALTER TABLE results ADD COLUMN scale_knee_threads {int};
"#,
    r#"
ALTER TABLE samples ADD COLUMN t {blob};
"#,
    r#"
ALTER TABLE results ADD COLUMN counters TEXT;
ALTER TABLE results ADD COLUMN instructions {real};
"#,
    r#"
CREATE TABLE app_results (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq {int} NOT NULL,
    driver TEXT NOT NULL,
    item TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, driver, item)
);
"#,
    r#"
ALTER TABLE results ADD COLUMN cipher TEXT;
"#,
    SCRUB_SQL,
    r#"
ALTER TABLE results ADD COLUMN input_check TEXT;
"#,
    r#"
ALTER TABLE results ADD COLUMN instructions_spread {real};
"#,
];

/// Version 10 is data only: `scrub_stored_commands` (lib.rs) runs in the same transaction.
const SCRUB_SQL: &str = "-- version 10: secrets in runs.command replaced by *** (Store::migrate)";

/// A migration of [`MIGRATIONS`] as `dialect` takes it: its placeholders replaced.
pub(crate) fn render(sql: &str, dialect: Dialect) -> String {
    let types: [(&str, &str); 5] = match dialect {
        Dialect::Sqlite => [
            ("{id}", "INTEGER PRIMARY KEY"),
            ("{int}", "INTEGER"),
            ("{real}", "REAL"),
            ("{blob}", "BLOB"),
            ("{seq}", ""),
        ],
        Dialect::Postgres => [
            ("{id}", "BIGSERIAL PRIMARY KEY"),
            ("{int}", "BIGINT"),
            ("{real}", "DOUBLE PRECISION"),
            ("{blob}", "BYTEA"),
            ("{seq}", "seq BIGSERIAL, "),
        ],
    };
    types.iter().fold(sql.to_string(), |sql, (placeholder, text)| {
        sql.replace(placeholder, text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two migration lists this one replaced, per dialect and version, normalised as
    /// [`normalise`] does (tests/fixtures/README.md says how it was made).
    const BEFORE: &str = include_str!("../tests/fixtures/migrations-before.txt");

    /// SQL as a list of tokens, for comparing statements whatever their layout: spaces around
    /// `(`, `)`, `,` and `;`, white space collapsed to one space, one statement a line.
    fn normalise(sql: &str) -> String {
        let mut spaced = String::with_capacity(sql.len() * 2);
        for c in sql.chars() {
            if "(),;".contains(c) {
                spaced.extend([' ', c, ' ']);
            } else {
                spaced.push(c);
            }
        }
        let mut lines = Vec::new();
        let mut statement: Vec<&str> = Vec::new();
        for token in spaced.split_whitespace() {
            statement.push(token);
            if token == ";" {
                lines.push(statement.join(" "));
                statement.clear();
            }
        }
        if !statement.is_empty() {
            lines.push(statement.join(" "));
        }
        lines.join("\n")
    }

    #[test]
    fn rendered_migrations_match_the_lists_they_replaced() {
        let mut now = String::new();
        for (name, dialect) in [("sqlite", Dialect::Sqlite), ("postgres", Dialect::Postgres)] {
            for (i, m) in MIGRATIONS.iter().enumerate() {
                now.push_str(&format!("[{name} {}]\n{}\n\n", i + 1, normalise(&render(m, dialect))));
            }
        }
        // Sections by their `[dialect version]` header: every version of the lists replaced
        // renders as it was; versions added since are not in the fixture.
        let sections = |text: &str| -> std::collections::BTreeMap<String, String> {
            text.split("\n\n")
                .filter(|s| !s.trim().is_empty())
                .map(|s| {
                    let (head, body) = s.trim_start().split_once('\n').unwrap_or((s, ""));
                    (head.to_string(), body.to_string())
                })
                .collect()
        };
        let (before, now) = (sections(BEFORE), sections(&now));
        assert_eq!(before.len(), 20, "the fixture holds versions 1 to 10 of both dialects");
        for (head, b) in &before {
            assert_eq!(
                now.get(head),
                Some(b),
                "{head}: rendered (left) differs from before (right)"
            );
        }
    }

    #[test]
    fn rendering_replaces_every_placeholder() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for (i, m) in MIGRATIONS.iter().enumerate() {
                let sql = render(m, dialect);
                assert!(
                    !sql.contains(['{', '}']),
                    "{dialect:?} migration {i} keeps a placeholder: {sql}"
                );
            }
        }
    }
}
