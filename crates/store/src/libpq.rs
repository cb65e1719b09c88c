//! A PostgreSQL server and its credentials, named the way libpq users name them, so that a
//! password never has to be typed on a command line: a URI (`postgresql://user@host/db`) or
//! a keyword/value string (`host=h dbname=d`), completed — for each option the string
//! leaves out — from a service in `pg_service.conf` (`service=NAME` or `PGSERVICE`), then
//! the `PG*` environment variables, then libpq's defaults; and, when no password came from
//! any of these, the password file (`PGPASSFILE` or `~/.pgpass`).
//!
//! The rules are those of the PostgreSQL manual, "libpq — Connection Strings", "Environment
//! Variables", "The Password File" and "The Connection Service File"; options libpq has and
//! this client lacks (TLS certificates, GSSAPI) are refused by name rather than ignored.
//!
//! This module reads files and variables and builds a [`postgres::Config`]; it never
//! connects, prints, or puts a password into anything but that `Config`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The options this client understands, with libpq's names.
const OPTIONS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "service",
    "options",
    "application_name",
    "fallback_application_name",
    "connect_timeout",
    "sslmode",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// Environment variables and the options they stand for, when the connection string and
/// the service leave an option out (libpq, "Environment Variables").
const ENV_OPTIONS: &[(&str, &str)] = &[
    ("PGHOST", "host"),
    ("PGHOSTADDR", "hostaddr"),
    ("PGPORT", "port"),
    ("PGDATABASE", "dbname"),
    ("PGUSER", "user"),
    ("PGPASSWORD", "password"),
    ("PGPASSFILE", "passfile"),
    ("PGOPTIONS", "options"),
    ("PGAPPNAME", "application_name"),
    ("PGCONNECT_TIMEOUT", "connect_timeout"),
    ("PGSSLMODE", "sslmode"),
    ("PGTARGETSESSIONATTRS", "target_session_attrs"),
    ("PGCHANNELBINDING", "channel_binding"),
    ("PGLOADBALANCEHOSTS", "load_balance_hosts"),
];

/// Where libpq looks for the server's Unix socket when no host is named: Debian's build
/// uses the first, upstream's the second.
const SOCKET_DIRS: &[&str] = &["/var/run/postgresql", "/tmp"];

/// Where libpq looks for the system-wide `pg_service.conf` when `PGSYSCONFDIR` is unset
/// (Debian's build, then upstream's).
const SYSCONF_DIRS: &[&str] = &["/etc/postgresql-common", "/usr/local/pgsql/etc"];

/// The surroundings a connection string is completed from: environment variables, the
/// home directory and the operating-system user. [`Env::of_process`] reads this process's;
/// tests make their own.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
    pub home: Option<PathBuf>,
    pub os_user: Option<String>,
}

impl Env {
    /// This process's `PG*` variables, `$HOME` (else the password database's home) and
    /// user name.
    pub fn of_process() -> Env {
        let vars: BTreeMap<String, String> = std::env::vars().filter(|(k, _)| k.starts_with("PG")).collect();
        let passwd = own_passwd_entry();
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .or_else(|| passwd.as_ref().map(|(_, h)| h.clone()));
        let os_user = passwd
            .map(|(u, _)| u)
            .or_else(|| std::env::var("USER").ok())
            .or_else(|| std::env::var("LOGNAME").ok());
        Env { vars, home, os_user }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }
}

/// This process's user name and home directory from `/etc/passwd` (the owner of
/// `/proc/self` is the effective user).
fn own_passwd_entry() -> Option<(String, PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 6 && f[2] == uid).then(|| (f[0].to_string(), PathBuf::from(f[5])))
    })
}

/// Where one option's value came from, for messages (never the value itself).
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    Given,
    Service(String),
    Var(&'static str),
    PassFile(PathBuf),
    Default,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Given => write!(f, "the connection string"),
            Origin::Service(s) => write!(f, "service {s}"),
            Origin::Var(v) => write!(f, "{v}"),
            Origin::PassFile(p) => write!(f, "password file {}", p.display()),
            Origin::Default => write!(f, "the default"),
        }
    }
}

/// A server to connect to, resolved.
pub struct Target {
    /// What the client connects with (the password included, if any was found).
    pub config: postgres::Config,
    /// `postgresql://user@host:port/dbname` — never a password.
    pub shown: String,
    /// Where the password came from, if one was found.
    pub password_from: Option<String>,
    /// The password file looked at when none was given (whether it exists or not).
    pub passfile: Option<PathBuf>,
    /// Things libpq would warn about (a password file others can read, so ignored).
    pub warnings: Vec<String>,
}

/// Whether a `--db` value names a PostgreSQL server: a `postgres://` or `postgresql://`
/// URI, or a libpq keyword/value string whose first word is a connection option
/// (`host=db.example dbname=results`, `service=team`).
pub fn is_server(spec: &str) -> bool {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        return true;
    }
    let first = spec.trim_start();
    match first.find('=') {
        Some(eq) => OPTIONS.contains(&first[..eq].trim_end()),
        None => false,
    }
}

/// Resolves a connection string with libpq's rules: the string's own options, then the
/// service's, then the environment's, then defaults; the password file last, for the
/// password alone. Errors are one sentence that names the option, file or line at fault.
pub fn resolve(spec: &str, env: &Env) -> Result<Target, String> {
    let mut opts: BTreeMap<String, (String, Origin)> =
        parse(spec)?.into_iter().map(|(k, v)| (k, (v, Origin::Given))).collect();
    let mut warnings = Vec::new();

    // The service: its options fill what the string left out.
    let service = opts
        .get("service")
        .map(|(v, _)| v.clone())
        .or_else(|| env.var("PGSERVICE").map(str::to_string));
    if let Some(name) = &service {
        for (k, v) in service_options(name, env)? {
            opts.entry(k).or_insert((v, Origin::Service(name.clone())));
        }
    }
    // Then the environment.
    for (var, key) in ENV_OPTIONS {
        if let Some(v) = env.var(var) {
            opts.entry(key.to_string()).or_insert((v.to_string(), Origin::Var(var)));
        }
    }
    // Then libpq's defaults.
    if !opts.contains_key("host") && !opts.contains_key("hostaddr") {
        let dir = SOCKET_DIRS
            .iter()
            .find(|d| Path::new(d).is_dir())
            .copied()
            .unwrap_or("localhost");
        opts.insert("host".into(), (dir.into(), Origin::Default));
    }
    if !opts.contains_key("user") {
        let user = env
            .os_user
            .clone()
            .ok_or("no PostgreSQL user: name one in the connection string or PGUSER")?;
        opts.insert("user".into(), (user, Origin::Default));
    }
    if !opts.contains_key("dbname") {
        let user = opts["user"].0.clone();
        opts.insert("dbname".into(), (user, Origin::Default));
    }
    let get = |k: &str| opts.get(k).map(|(v, _)| v.as_str());

    // The password file, when no password was given.
    let mut passfile = None;
    if get("password").is_none() {
        let file = get("passfile")
            .map(PathBuf::from)
            .or_else(|| env.home.as_ref().map(|h| h.join(".pgpass")));
        if let Some(file) = file {
            let hosts: Vec<&str> = get("host").or(get("hostaddr")).unwrap_or("").split(',').collect();
            let ports: Vec<&str> = get("port").unwrap_or("").split(',').collect();
            let (db, user) = (get("dbname").unwrap_or(""), get("user").unwrap_or(""));
            let found = hosts
                .iter()
                .enumerate()
                .find_map(|(i, host)| password_from_file(&file, host, port_of(&ports, i), db, user, &mut warnings));
            if let Some(pw) = found {
                opts.insert("password".into(), (pw, Origin::PassFile(file.clone())));
            }
            passfile = Some(file);
        }
    }

    let shown = shown(&opts);
    let mut conninfo = Vec::new();
    for (k, (v, origin)) in &opts {
        let v = match k.as_str() {
            // Not for the server, or handled here.
            "password" | "passfile" | "service" => continue,
            "fallback_application_name" if opts.contains_key("application_name") => continue,
            "fallback_application_name" => v.as_str(),
            "sslmode" => match v.as_str() {
                "disable" => "disable",
                // Without TLS compiled in, these connect in the clear, as libpq does
                // when the server offers no TLS.
                "allow" | "prefer" => "prefer",
                "require" | "verify-ca" | "verify-full" => {
                    return Err(format!(
                        "sslmode={v} (from {origin}): cryptoscope's PostgreSQL client has no TLS; \
                         reach the server over a Unix socket or an SSH tunnel, or use sslmode=prefer"
                    ))
                }
                other => return Err(format!("invalid sslmode \"{other}\" (from {origin})")),
            },
            _ => v.as_str(),
        };
        let key = match k.as_str() {
            "keepalives_count" => "keepalives_retries",
            "fallback_application_name" => "application_name",
            k => k,
        };
        conninfo.push(format!("{key}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")));
    }
    if !opts.contains_key("application_name") && !opts.contains_key("fallback_application_name") {
        conninfo.push("application_name=cryptoscope".into());
    }
    let mut config: postgres::Config = conninfo
        .join(" ")
        .parse()
        .map_err(|e| format!("connection options: {e}"))?;
    let password_from = opts.get("password").map(|(pw, origin)| {
        config.password(pw.as_bytes());
        origin.to_string()
    });
    Ok(Target {
        config,
        shown,
        password_from,
        passfile,
        warnings,
    })
}

/// `postgresql://user@host:port/dbname` from resolved options; socket directories
/// percent-encoded as in a libpq URI.
fn shown(opts: &BTreeMap<String, (String, Origin)>) -> String {
    let get = |k: &str| opts.get(k).map(|(v, _)| v.as_str()).unwrap_or("");
    let hosts: Vec<&str> = match get("host") {
        "" => get("hostaddr").split(',').collect(),
        h => h.split(',').collect(),
    };
    let ports: Vec<&str> = get("port").split(',').collect();
    let hostports: Vec<String> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = port_of(&ports, i);
            let h = if h.contains(':') && !h.starts_with('[') {
                format!("[{h}]")
            } else {
                h.replace('/', "%2F")
            };
            format!("{h}:{port}")
        })
        .collect();
    format!("postgresql://{}@{}/{}", get("user"), hostports.join(","), get("dbname"))
}

/// The port of the `i`-th host: its own entry of a comma-separated list, else a single
/// port for all, else libpq's 5432.
fn port_of<'a>(ports: &[&'a str], i: usize) -> &'a str {
    let p = if ports.len() == 1 {
        ports[0]
    } else {
        ports.get(i).copied().unwrap_or("")
    };
    if p.is_empty() {
        "5432"
    } else {
        p
    }
}

/// The options a connection string names, with libpq's syntax rules.
fn parse(spec: &str) -> Result<BTreeMap<String, String>, String> {
    let pairs = match spec
        .strip_prefix("postgresql://")
        .or_else(|| spec.strip_prefix("postgres://"))
    {
        Some(rest) => parse_uri(rest)?,
        None => parse_keywords(spec)?,
    };
    let mut out = BTreeMap::new();
    for (k, v) in pairs {
        check_option(&k, "the connection string")?;
        // An empty value leaves the option to the service, the environment or the default
        // (libpq: `password=` still consults the password file).
        if !v.is_empty() {
            out.insert(k, v);
        }
    }
    Ok(out)
}

fn check_option(key: &str, place: &str) -> Result<(), String> {
    if OPTIONS.contains(&key) {
        Ok(())
    } else {
        Err(format!(
            "connection option \"{key}\" in {place} is not supported (cryptoscope's PostgreSQL client understands {})",
            OPTIONS.join(", ")
        ))
    }
}

/// `[user[:password]@][host[:port][,...]][/dbname][?option=value&...]`, after the scheme.
fn parse_uri(rest: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    // Credentials end at an `@` met before any `/` (libpq's reading).
    let mut rest = rest;
    let cred_end = rest.find(['@', '/']);
    if let Some(at) = cred_end.filter(|&i| rest.as_bytes()[i] == b'@') {
        let creds = &rest[..at];
        let (user, password) = match creds.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (creds, None),
        };
        if !user.is_empty() {
            out.push(("user".into(), decode(user)?));
        }
        if let Some(p) = password {
            out.push(("password".into(), decode(p)?));
        }
        rest = &rest[at + 1..];
    }
    let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (hostspec, mut rest) = rest.split_at(host_end);
    if !hostspec.is_empty() {
        let (mut hosts, mut ports) = (Vec::new(), Vec::new());
        for hp in hostspec.split(',') {
            let (host, port) = if let Some(v6) = hp.strip_prefix('[') {
                let close = v6
                    .find(']')
                    .ok_or_else(|| format!("unterminated IPv6 address \"{hp}\""))?;
                (&v6[..close], v6[close + 1..].strip_prefix(':'))
            } else {
                match hp.rsplit_once(':') {
                    Some((h, p)) => (h, Some(p)),
                    None => (hp, None),
                }
            };
            hosts.push(decode(host)?);
            ports.push(port.unwrap_or("").to_string());
        }
        if hosts.iter().any(|h| !h.is_empty()) {
            out.push(("host".into(), hosts.join(",")));
        }
        if ports.iter().any(|p| !p.is_empty()) {
            out.push(("port".into(), ports.join(",")));
        }
    }
    if let Some(r) = rest.strip_prefix('/') {
        let end = r.find('?').unwrap_or(r.len());
        if end > 0 {
            out.push(("dbname".into(), decode(&r[..end])?));
        }
        rest = &r[end..];
    }
    if let Some(query) = rest.strip_prefix('?') {
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                format!(
                    "missing \"=\" after {} in the URI's options",
                    named(&decode_lossy(pair))
                )
            })?;
            let (k, v) = (decode(k)?, decode(v)?);
            // libpq's JDBC-style alias.
            if k == "ssl" && v == "true" {
                out.push(("sslmode".into(), "require".into()));
            } else {
                out.push((k, v));
            }
        }
    }
    Ok(out)
}

/// Percent-decoding of one URI component.
fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("invalid percent-encoded token in the connection URI")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the connection URI decodes to invalid UTF-8".to_string())
}

/// A word of a connection string, for an error message: quoted if it is an option's name,
/// else not repeated (it may be a piece of a password that was meant to be quoted).
fn named(word: &str) -> String {
    match OPTIONS.contains(&word) {
        true => format!("\"{word}\""),
        false => "a word that is not a connection option".to_string(),
    }
}

fn decode_lossy(s: &str) -> String {
    decode(s).unwrap_or_else(|_| s.to_string())
}

/// `keyword = value ...`, values bare or single-quoted, backslash escaping one character.
fn parse_keywords(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut it = spec.chars().peekable();
    loop {
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        if it.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = it.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        if it.next() != Some('=') {
            return Err(format!("missing \"=\" after {} in the connection string", named(&key)));
        }
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if it.next_if_eq(&'\'').is_some() {
            loop {
                match it.next() {
                    None => {
                        return Err(format!(
                            "unterminated quoted value of \"{key}\" in the connection string"
                        ))
                    }
                    Some('\'') => break,
                    Some('\\') => value.extend(it.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = it.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(it.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// The options of service `name`: the user's file (`PGSERVICEFILE`, else
/// `~/.pg_service.conf`) if it defines the service, else the system's
/// (`$PGSYSCONFDIR/pg_service.conf`).
fn service_options(name: &str, env: &Env) -> Result<Vec<(String, String)>, String> {
    let user_file = env
        .var("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| env.home.as_ref().map(|h| h.join(".pg_service.conf")));
    let system_files: Vec<PathBuf> = match env.var("PGSYSCONFDIR") {
        Some(d) => vec![Path::new(d).join("pg_service.conf")],
        None => SYSCONF_DIRS
            .iter()
            .map(|d| Path::new(d).join("pg_service.conf"))
            .collect(),
    };
    let mut looked = Vec::new();
    for file in user_file.into_iter().chain(system_files) {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                looked.push(file.display().to_string());
                continue;
            }
            Err(e) => return Err(format!("cannot read service file {}: {e}", file.display())),
        };
        if let Some(opts) = service_in(&text, name, &file)? {
            return Ok(opts);
        }
        looked.push(file.display().to_string());
    }
    Err(format!(
        "definition of service \"{name}\" not found (looked in {})",
        looked.join(", ")
    ))
}

/// Service `name`'s options in one `pg_service.conf` text: INI sections, `key=value` lines,
/// `#` comments.
fn service_in(text: &str, name: &str, file: &Path) -> Result<Option<Vec<(String, String)>>, String> {
    let mut current: Option<&str> = None;
    let mut found: Option<Vec<(String, String)>> = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if found.is_some() {
                break;
            }
            current = Some(section);
            if section == name {
                found = Some(Vec::new());
            }
            continue;
        }
        if current != Some(name) {
            continue;
        }
        let place = format!("service file {}, line {}", file.display(), n + 1);
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("syntax error in {place}: expected key=value"))?;
        let k = k.trim();
        if k == "service" {
            return Err(format!("nested service specifications are not supported ({place})"));
        }
        check_option(k, &place)?;
        if let Some(f) = found.as_mut().filter(|_| !v.trim().is_empty()) {
            f.push((k.to_string(), v.trim().to_string()));
        }
    }
    Ok(found)
}

/// The password of the first line of a password file that matches, as libpq reads it:
/// `host:port:database:user:password`, `*` matching anything in the first four fields, `\`
/// escaping `:` and `\`, `#` starting a comment line. A file that others may read is
/// ignored with a warning, as libpq does. `localhost` matches a Unix-socket connection to
/// the default socket directory.
fn password_from_file(
    file: &Path,
    host: &str,
    port: &str,
    db: &str,
    user: &str,
    warnings: &mut Vec<String>,
) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        warnings.push(format!("password file {} is not a plain file: ignored", file.display()));
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        let w = format!(
            "password file {} has group or world access: ignored (permissions should be u=rw, 0600, or less)",
            file.display()
        );
        if !warnings.contains(&w) {
            warnings.push(w);
        }
        return None;
    }
    let host = if host.is_empty() || SOCKET_DIRS.contains(&host) {
        "localhost"
    } else {
        host
    };
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass(line);
            if fields.len() < 5 {
                return None;
            }
            let want = [host, port, db, user];
            let matches = want.iter().zip(&fields).all(|(w, f)| f == "*" || f == w);
            matches.then(|| fields[4].clone())
        })
}

/// A password file line's fields, unescaped; the fifth (the password) ends at the next
/// unescaped `:`, as in libpq.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut it = line.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => fields.last_mut().expect("one field").extend(it.next()),
            ':' if fields.len() == 5 => break,
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn env(vars: &[(&str, &str)], home: Option<&Path>) -> Env {
        Env {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            home: home.map(Path::to_path_buf),
            os_user: Some("alice".into()),
        }
    }

    fn opts(spec: &str) -> Vec<(String, String)> {
        parse(spec).unwrap().into_iter().collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        v.sort();
        v
    }

    #[test]
    fn uris_read_as_the_manual_says() {
        // The examples of the PostgreSQL manual, libpq "Connection URIs", and the escapes
        // and aliases it describes.
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("postgresql://", &[]),
            ("postgresql://localhost", &[("host", "localhost")]),
            (
                "postgresql://localhost:5433",
                &[("host", "localhost"), ("port", "5433")],
            ),
            (
                "postgresql://localhost/mydb",
                &[("host", "localhost"), ("dbname", "mydb")],
            ),
            (
                "postgresql://user@localhost",
                &[("host", "localhost"), ("user", "user")],
            ),
            (
                "postgresql://user:secret@localhost",
                &[("host", "localhost"), ("user", "user"), ("password", "secret")],
            ),
            (
                "postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp",
                &[
                    ("host", "localhost"),
                    ("user", "other"),
                    ("dbname", "otherdb"),
                    ("connect_timeout", "10"),
                    ("application_name", "myapp"),
                ],
            ),
            (
                "postgresql://host1:123,host2:456/somedb?target_session_attrs=any&application_name=myapp",
                &[
                    ("host", "host1,host2"),
                    ("port", "123,456"),
                    ("dbname", "somedb"),
                    ("target_session_attrs", "any"),
                    ("application_name", "myapp"),
                ],
            ),
            (
                "postgresql:///mydb?host=localhost&port=5433",
                &[("host", "localhost"), ("port", "5433"), ("dbname", "mydb")],
            ),
            (
                "postgresql://[2001:db8::1234]/database",
                &[("host", "2001:db8::1234"), ("dbname", "database")],
            ),
            (
                "postgresql://%2Fvar%2Flib%2Fpostgresql/dbname",
                &[("host", "/var/lib/postgresql"), ("dbname", "dbname")],
            ),
            (
                "postgresql://u:p%40ss%3Aw@h",
                &[("host", "h"), ("user", "u"), ("password", "p@ss:w")],
            ),
            (
                "postgres://h/d?ssl=true",
                &[("host", "h"), ("dbname", "d"), ("sslmode", "require")],
            ),
        ];
        for (uri, want) in cases {
            assert_eq!(opts(uri), kv(want), "{uri}");
        }
    }

    #[test]
    fn keyword_strings_read_as_the_manual_says() {
        assert_eq!(
            opts("host=localhost port=5432 dbname=mydb connect_timeout=10"),
            kv(&[
                ("host", "localhost"),
                ("port", "5432"),
                ("dbname", "mydb"),
                ("connect_timeout", "10")
            ])
        );
        assert_eq!(
            opts(r"user = 'o\'brien' password='a b\\c' dbname=x\ y"),
            kv(&[("user", "o'brien"), ("password", r"a b\c"), ("dbname", "x y")])
        );
        assert!(parse("host").unwrap_err().contains("missing \"=\" after \"host\""));
        // An unquoted password with a space: its second word is not repeated.
        let e = parse("password=two words").unwrap_err();
        assert!(
            e.contains("after a word that is not a connection option") && !e.contains("words"),
            "{e}"
        );
        assert!(parse("password='open").unwrap_err().contains("unterminated"));
        let e = parse("host=h sslcert=/c.pem").unwrap_err();
        assert!(e.contains("\"sslcert\"") && e.contains("not supported"), "{e}");
        assert!(parse("postgresql://h?sslkey=x").unwrap_err().contains("\"sslkey\""));
    }

    #[test]
    fn what_names_a_server() {
        for s in [
            "postgresql://h/d",
            "postgres://",
            "host=h dbname=d",
            "service=team",
            "  dbname = results",
        ] {
            assert!(is_server(s), "{s}");
        }
        for s in ["results.db", "/tmp/a=b.db", "./x.sqlite", "foo=bar"] {
            assert!(!is_server(s), "{s}");
        }
    }

    #[test]
    fn the_string_wins_then_the_service_then_the_environment_then_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let services = dir.path().join("services.conf");
        std::fs::write(
            &services,
            "# team store\n[other]\nport=1\n\n[team]\nhost=db.team.example\nport=6543\ndbname = results\n",
        )
        .unwrap();
        let e = env(
            &[
                ("PGSERVICEFILE", services.to_str().unwrap()),
                ("PGHOST", "env-host"),
                ("PGUSER", "env-user"),
                ("PGDATABASE", "env-db"),
                ("PGPORT", "7777"),
            ],
            Some(dir.path()),
        );
        let t = resolve("service=team port=5555", &e).unwrap();
        // port from the string, host and dbname from the service, user from PGUSER.
        assert_eq!(t.shown, "postgresql://env-user@db.team.example:5555/results");
        let t = resolve("postgresql://", &e).unwrap();
        assert_eq!(t.shown, "postgresql://env-user@env-host:7777/env-db");
        // PGSERVICE names the service when the string does not.
        let mut e2 = e.clone();
        e2.vars.insert("PGSERVICE".into(), "team".into());
        assert_eq!(
            resolve("postgresql://", &e2).unwrap().shown,
            "postgresql://env-user@db.team.example:6543/results"
        );
        // Nothing at all: the OS user, their database, the default socket or localhost.
        let t = resolve("postgresql://", &env(&[], None)).unwrap();
        assert!(t.shown.starts_with("postgresql://alice@"), "{}", t.shown);
        assert!(t.shown.ends_with(":5432/alice"), "{}", t.shown);
        assert_eq!(t.password_from, None);
        // A service nobody defines, and a bad line in a service file.
        let e3 = env(
            &[
                ("PGSERVICEFILE", services.to_str().unwrap()),
                ("PGSYSCONFDIR", "/nonexistent"),
            ],
            None,
        );
        let err = resolve("service=nope", &e3).err().unwrap();
        assert!(err.contains("definition of service \"nope\" not found"), "{err}");
        std::fs::write(&services, "[team]\nhost h\n").unwrap();
        let err = resolve("service=team", &e3).err().unwrap();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn the_password_comes_from_the_string_the_environment_or_the_password_file() {
        let dir = tempfile::tempdir().unwrap();
        let pgpass = dir.path().join(".pgpass");
        std::fs::write(
            &pgpass,
            "# host:port:database:user:password\n\
             db.example:5432:results:bench:first\n\
             127.0.0.1:*:*:bench:from\\:file\\\\x\n\
             localhost:5432:*:alice:socket\n\
             *:*:*:*:anything\n",
        )
        .unwrap();
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
        let home = env(&[], Some(dir.path()));

        let t = resolve("postgresql://bench@127.0.0.1:6000/postgres", &home).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"from:file\\x"[..]));
        assert_eq!(
            t.password_from.as_deref(),
            Some(&*format!("password file {}", pgpass.display()))
        );
        let t = resolve("host=db.example user=bench dbname=results", &home).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"first"[..]));
        // The first matching line wins, `*` matches anything.
        let t = resolve("host=db.example user=bench dbname=other", &home).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"anything"[..]));
        // A socket in the default directory is `localhost`.
        let t = resolve(&format!("host={} user=alice", SOCKET_DIRS[0]), &home).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"socket"[..]));
        // An empty password is none: the file is read.
        let t = resolve("host=db.example user=bench dbname=results password=''", &home).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"first"[..]));
        // PGPASSWORD and the string come before the file.
        let mut e = home.clone();
        e.vars.insert("PGPASSWORD".into(), "env".into());
        let t = resolve("postgresql://bench@127.0.0.1/postgres", &e).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"env"[..]));
        assert_eq!(t.password_from.as_deref(), Some("PGPASSWORD"));
        let t = resolve("postgresql://bench:typed@127.0.0.1/postgres", &e).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"typed"[..]));
        // PGPASSFILE names another file; a missing one gives no password and no warning.
        let mut e = home.clone();
        e.vars
            .insert("PGPASSFILE".into(), dir.path().join("none").display().to_string());
        let t = resolve("postgresql://bench@127.0.0.1/postgres", &e).unwrap();
        assert_eq!((t.config.get_password(), t.warnings.len()), (None, 0));
        assert_eq!(t.passfile, Some(dir.path().join("none")));
        // A file others can read is ignored, with libpq's warning.
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
        let t = resolve("postgresql://bench@127.0.0.1/postgres", &home).unwrap();
        assert_eq!(t.config.get_password(), None);
        assert!(t.warnings[0].contains("group or world access"), "{:?}", t.warnings);
    }

    #[test]
    fn options_reach_the_client_and_tls_is_refused() {
        let t = resolve(
            "host=h1,h2 port=1,2 user=u dbname=d connect_timeout=7 application_name=ci sslmode=disable",
            &env(&[], None),
        )
        .unwrap();
        let c = &t.config;
        assert_eq!(c.get_ports(), &[1, 2]);
        assert_eq!(c.get_hosts().len(), 2);
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_dbname(), Some("d"));
        assert_eq!(c.get_connect_timeout(), Some(&std::time::Duration::from_secs(7)));
        assert_eq!(c.get_application_name(), Some("ci"));
        assert_eq!(c.get_ssl_mode(), postgres::config::SslMode::Disable);
        assert_eq!(t.shown, "postgresql://u@h1:1,h2:2/d");
        let t = resolve("host=/run/pg user=u dbname='a b'", &env(&[], None)).unwrap();
        assert_eq!(t.shown, "postgresql://u@%2Frun%2Fpg:5432/a b");
        assert_eq!(t.config.get_application_name(), Some("cryptoscope"));
        let e = resolve("postgresql://h/d", &env(&[("PGSSLMODE", "verify-full")], None))
            .err()
            .unwrap();
        assert!(
            e.contains("sslmode=verify-full (from PGSSLMODE)") && e.contains("no TLS"),
            "{e}"
        );
        assert!(resolve("host=h port=x", &env(&[], None)).is_err());
    }
}
