//! The PostgreSQL store, for real: a server from Debian's package on loopback, sharded
//! runs written into it by separate processes, reassembled into one group for export,
//! compare and report.

mod common;

use common::*;

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;

#[test]
fn sharded_runs_into_postgresql_reassemble_into_one_report() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    let Some(server) = pg::or_skip(pg::PgServer::start()) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "--quiet",
                "--alg",
                "X25519",
                "--alg",
                "ML-KEM-512",
                "--shard",
                &format!("{k}/2"),
                "--group",
                "pgjob",
                "--db",
                &server.url,
                "--json",
            ])
            .arg(tmp.path().join(format!("s{k}.json")))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("group pgjob"));
    }
    let o = cryptoscope().args(["runs", "--db", &server.url]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 runs in postgresql://cryptoscope@127.0.0.1"));

    // The group holds every (subject, operation) once: ML-KEM-512 5x3 + X25519 3x2.
    let o = cryptoscope()
        .args(["export", "group:pgjob", "--format", "json", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = merged["results"].as_array().unwrap();
    assert_eq!(results.len(), 27, "ML-KEM-768: 5 x 3 operations; X25519: 3 x 4");
    // What PostgreSQL returns equals what the shards wrote, raw samples included.
    let mut written = Vec::new();
    for k in 1..=2 {
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(format!("s{k}.json"))).unwrap()).unwrap();
        written.extend(run["results"].as_array().unwrap().clone());
    }
    for w in &written {
        let back = results
            .iter()
            .find(|r| r["subject"] == w["subject"] && r["operation"] == w["operation"])
            .unwrap();
        assert_eq!(back, w, "{} {}", w["subject"], w["operation"]);
    }

    let html = tmp.path().join("group.html");
    let o = cryptoscope()
        .args(["report", "group:pgjob", "--db", &server.url, "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("8 of 8 subjects passed"),
        "both shards' subjects in one report"
    );
    let o = cryptoscope()
        .args(["compare", "group:pgjob", "group:pgjob", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 slower, 0 faster, 27 no significant change"));

    // An unreachable server is bad input: exit 2, one line.
    drop(server);
    let o = cryptoscope()
        .args(["runs", "--db", "postgresql://cryptoscope@127.0.0.1:1/postgres"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: cannot open results database postgresql://"));
}

/// What every step of the password test shares: the server, a home of our own, and the
/// password typed and masked.
struct PgCase {
    server: pg::PgServer,
    password: &'static str,
    port: String,
    tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    typed: String,
    masked: String,
}

impl PgCase {
    /// `cryptoscope` with no PG* variable of the machine's and a home of our own: only what
    /// each step gives can reach the server.
    fn bare(&self) -> assert_cmd::Command {
        let mut c = cryptoscope();
        for (k, _) in std::env::vars() {
            if k.starts_with("PG") {
                c.env_remove(k);
            }
        }
        c.env("HOME", &self.home);
        c
    }

    fn no_password(&self, what: &str, s: &str) {
        assert!(!s.contains(self.password), "{what} holds the password:\n{s}");
    }

    /// The whole database, as pg_dump writes it.
    fn dump(&self) -> String {
        let o = self
            .server
            .client("pg_dump")
            .env("PGPASSWORD", self.password)
            .output()
            .unwrap();
        assert!(o.status.success(), "pg_dump: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A password typed in `--db` reaches the server and nothing else: not the terminal, the
/// results file, the HTML report, the exports, `show`, or the database. PGPASSWORD, a
/// password file and a pg_service.conf service reach the server without one being typed.
/// A database that an earlier version left with a password in a stored command line comes
/// out of the schema migration scrubbed.
#[test]
fn a_password_reaches_the_server_and_nothing_cryptoscope_writes() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    let password = "Pw-4b1e-kept-out-of-everything";
    let Some(server) = pg::or_skip(pg::PgServer::start_with_password(password)) else {
        return;
    };
    let port = server.port.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let c = PgCase {
        typed: format!("postgresql://cryptoscope:{password}@127.0.0.1:{port}/postgres"),
        masked: format!("postgresql://cryptoscope:***@127.0.0.1:{port}/postgres"),
        server,
        password,
        port,
        tmp,
        home,
    };
    typed_is_recorded_masked(&c);
    from_the_environment(&c);
    from_password_files(&c);
    migration_scrubs_old_databases(&c);
}

/// Typed on the command line: recorded masked everywhere.
fn typed_is_recorded_masked(c: &PgCase) {
    let typed = c.typed.clone();
    let masked = c.masked.clone();
    let tmp = &c.tmp;
    let bare = || c.bare();
    let no_password = |what: &str, s: &str| c.no_password(what, s);
    let dump = || c.dump();
    // Typed on the command line: recorded masked everywhere.
    let json = tmp.path().join("typed.json");
    let o = bare()
        .args(["run", "--quick", "--alg", "X25519", "--db", &typed, "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    no_password("run's output", &text(&o));
    let file = std::fs::read_to_string(&json).unwrap();
    no_password("the results file", &file);
    let run: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert!(
        run["command"].as_array().unwrap().contains(&masked.clone().into()),
        "{}",
        run["command"]
    );
    let html = std::fs::read_to_string(json.with_extension("html")).unwrap();
    no_password("the HTML report", &html);
    assert!(html.contains(&masked), "the report shows the command line, masked");
    let mut reads: Vec<Vec<&str>> = vec![vec!["show", "latest"], vec!["runs"]];
    for f in ["json", "csv", "markdown", "github-benchmark"] {
        reads.push(vec!["export", "latest", "--format", f]);
    }
    for args in &reads {
        let o = bare().args(args).args(["--db", &typed]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        no_password(&args.join(" "), &text(&o));
    }
    let o = bare().args(["show", "latest", "--db", &typed]).output().unwrap();
    assert!(text(&o).contains(&format!("--db {masked}")), "{}", text(&o));
    let report = tmp.path().join("report.html");
    let o = bare()
        .args(["report", "latest", "--db", &typed, "--out"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    no_password("cryptoscope report", &std::fs::read_to_string(&report).unwrap());
    let db = dump();
    no_password("the database", &db);
    assert!(db.contains(&masked), "the dump holds the masked command line");
}

/// Every connection setting from the environment; no password, and a wrong one.
fn from_the_environment(c: &PgCase) {
    let password = c.password;
    let port = c.port.clone();
    let server = &c.server;
    let tmp = &c.tmp;
    let bare = || c.bare();
    let no_password = |what: &str, s: &str| c.no_password(what, s);
    // Every connection setting from the environment, the password from PGPASSWORD.
    let o = bare()
        .args(["run", "--quick", "--alg", "X25519", "--db", "postgresql://", "--json"])
        .arg(tmp.path().join("pgpassword.json"))
        .envs([
            ("PGHOST", "127.0.0.1"),
            ("PGPORT", &port),
            ("PGUSER", "cryptoscope"),
            ("PGDATABASE", "postgres"),
            ("PGPASSWORD", password),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    no_password("run with PGPASSWORD", &text(&o));
    // Nothing gives a password: one line that says where one goes, exit 2.
    let o = bare().args(["runs", "--db", &server.url]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("asks for a password") && err.contains("PGPASSWORD") && err.contains("~/.pgpass"),
        "{err}"
    );
    // A wrong one: the server's refusal, and where the password came from.
    let o = bare()
        .args(["runs", "--db", &server.url])
        .env("PGPASSWORD", "wrong")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("password authentication failed") && err.contains("from PGPASSWORD"),
        "{err}"
    );
}

/// ~/.pgpass (only when its owner alone can read it), PGPASSFILE and a service.
fn from_password_files(c: &PgCase) {
    let password = c.password;
    let port = c.port.clone();
    let server = &c.server;
    let tmp = &c.tmp;
    let home = &c.home;
    let bare = || c.bare();
    // ~/.pgpass, readable by its owner only.
    use std::os::unix::fs::PermissionsExt;
    let pgpass = home.join(".pgpass");
    std::fs::write(
        &pgpass,
        format!("# host:port:db:user:password\n127.0.0.1:{port}:*:cryptoscope:{password}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = bare()
        .args(["run", "--quick", "--alg", "X25519", "--db", &server.url, "--json"])
        .arg(tmp.path().join("pgpass.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Readable by others: ignored, as libpq ignores it, and said so.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = bare().args(["runs", "--db", &server.url]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("group or world access"), "{}", text(&o));
    std::fs::remove_file(&pgpass).unwrap();
    // PGPASSFILE, and a service that names the server.
    let passfile = tmp.path().join("team.pgpass");
    std::fs::write(&passfile, format!("127.0.0.1:*:postgres:cryptoscope:{password}\n")).unwrap();
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let services = tmp.path().join("pg_service.conf");
    std::fs::write(
        &services,
        format!("[team]\nhost=127.0.0.1\nport={port}\nuser=cryptoscope\ndbname=postgres\n"),
    )
    .unwrap();
    let o = bare()
        .args(["runs", "--db", "service=team"])
        .env("PGPASSFILE", &passfile)
        .env("PGSERVICEFILE", &services)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("3 runs in postgresql://cryptoscope@127.0.0.1:{port}/postgres")),
        "{}",
        text(&o)
    );
}

/// A database as the version before scrubbing left it comes out scrubbed, once.
fn migration_scrubs_old_databases(c: &PgCase) {
    let password = c.password;
    let typed = c.typed.clone();
    let server = &c.server;
    let bare = || c.bare();
    let no_password = |what: &str, s: &str| c.no_password(what, s);
    let dump = || c.dump();
    // A database as the version before scrubbing left it: schema 9 (without the columns of
    // versions 11 and 12), a command line stored with its password.
    let old_command = serde_json::to_string(&["cryptoscope", "run", "--db", typed.as_str()]).unwrap();
    let sql = format!(
        "UPDATE runs SET command = '{old_command}' WHERE id = (SELECT MIN(id) FROM runs);
         ALTER TABLE results DROP COLUMN input_check;
         ALTER TABLE results DROP COLUMN instructions_spread;
         DELETE FROM cryptoscope_schema WHERE version >= 10;"
    );
    let o = server
        .client("psql")
        .args(["-v", "ON_ERROR_STOP=1", "-c", &sql])
        .env("PGPASSWORD", password)
        .output()
        .unwrap();
    assert!(o.status.success(), "psql: {}", String::from_utf8_lossy(&o.stderr));
    assert!(
        dump().contains(password),
        "the fixture holds the password before the migration"
    );
    let o = bare()
        .args(["runs", "--db", &server.url])
        .env("PGPASSWORD", password)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("upgraded from schema version 9 to 12; the password in 1 stored command line is now ***"),
        "{}",
        text(&o)
    );
    no_password("the migrated database", &dump());
    let o = bare()
        .args(["show", "latest", "--db", &server.url])
        .env("PGPASSWORD", password)
        .output()
        .unwrap();
    no_password("show after the migration", &text(&o));
    // Migrated once: the next open says nothing.
    let o = bare()
        .args(["runs", "--db", &server.url])
        .env("PGPASSWORD", password)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("upgraded"), "{}", text(&o));
}
