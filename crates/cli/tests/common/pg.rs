//! A throwaway PostgreSQL server for tests: Debian's postgresql package, initdb into a
//! temporary directory, listening on a free loopback port, stopped when dropped. As root,
//! the server runs as the `postgres` system user (PostgreSQL refuses to run as root).
//! [`PgServer::start`] trusts every local connection; [`PgServer::start_with_password`]
//! asks for a password (SCRAM-SHA-256), as a team's server does.

use std::path::PathBuf;
use std::process::Command;

pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    /// `postgresql://cryptoscope@127.0.0.1:PORT/postgres`, without any password.
    pub url: String,
    pub port: u16,
}

fn find_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .rev()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
}

impl PgServer {
    fn cmd(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    /// Starts a server that trusts every local connection, or returns why it cannot.
    pub fn start() -> Result<PgServer, String> {
        PgServer::start_with(None)
    }

    /// Starts a server whose user `cryptoscope` must give `password`.
    pub fn start_with_password(password: &str) -> Result<PgServer, String> {
        PgServer::start_with(Some(password))
    }

    fn start_with(password: Option<&str>) -> Result<PgServer, String> {
        let bin = find_bin().ok_or("Debian's postgresql package is not installed (scripts/setup.sh installs it)")?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let pwfile = dir.path().join("pwfile");
        if let Some(pw) = password {
            std::fs::write(&pwfile, pw).map_err(|e| e.to_string())?;
        }
        if root {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err("running as root but cannot hand the data directory to the postgres user".into());
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| e.to_string())?
            .local_addr()
            .map_err(|e| e.to_string())?
            .port();
        let server = PgServer {
            url: format!("postgresql://cryptoscope@127.0.0.1:{port}/postgres"),
            port,
            dir,
            bin,
            as_postgres: root,
        };
        let data = server.dir.path().join("data");
        let mut initdb = server.cmd("initdb");
        match password {
            None => initdb.args(["-A", "trust"]),
            Some(_) => initdb.args(["-A", "scram-sha-256", "--pwfile"]).arg(&pwfile),
        };
        let out = initdb
            .args(["-U", "cryptoscope", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&pwfile);
        if !out.status.success() {
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            server.dir.path().display()
        );
        let out = server
            .cmd("pg_ctl")
            .args(["-w", "-D"])
            .arg(&data)
            .args(["-o", &opts, "-l"])
            .arg(server.dir.path().join("log"))
            .arg("start")
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("pg_ctl start failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(server)
    }
}

impl PgServer {
    /// One of PostgreSQL's client programs (`psql`, `pg_dump`) connected to this server's
    /// `postgres` database as `cryptoscope` over TCP; a password, if the server asks for
    /// one, must come from the caller (`PGPASSWORD`).
    pub fn client(&self, tool: &str) -> Command {
        let mut c = Command::new(self.bin.join(tool));
        c.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "cryptoscope",
            "-d",
            "postgres",
        ]);
        c
    }
}

/// The server, or None after saying why it could not start: a machine without
/// PostgreSQL skips the test, CI (`CI=true`, where setup installs it) fails it.
pub fn or_skip(started: Result<PgServer, String>) -> Option<PgServer> {
    match started {
        Ok(s) => Some(s),
        Err(why) => {
            cryptoscope_testkit::needs_setup(&format!("a PostgreSQL server ({why})"));
            None
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self
            .cmd("pg_ctl")
            .args(["-D"])
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .output();
    }
}
