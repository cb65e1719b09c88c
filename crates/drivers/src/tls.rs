//! `cryptoscope tls`: TLS handshakes per second, connection time, server CPU and bytes on
//! the wire, per key-exchange group and certificate, with rustls (AWS-LC) on both ends or
//! against nginx with the system's OpenSSL; on loopback or across a veth pair between two
//! network namespaces; with the CPU's AES/CLMUL instructions or with them masked.
//!
//! The work is done by the TLS driver binaries (`cryptoscope-tls` with liboqs's KEMs,
//! `cryptoscope-tls-pqclean` with PQClean's): this module resolves groups, gates catalogue
//! KEMs, makes certificates, starts and stops servers and namespaces, runs the load
//! generator and turns its output into stored items.

use anyhow::{bail, Context, Result};
use clap::Args;
use cryptoscope_engine::context::Ctx as Cx;
use cryptoscope_engine::gated::{gated, GateOptions};
use cryptoscope_model::apps::tls::{Configuration, GroupInfo, LinkConditions, Measurement, Setup};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::netem;
use crate::netns::{children_of, Netns, ADDR_A};
use crate::tls_peers;
use cryptoscope_engine::catalog::Catalogue;

mod rounds;
use rounds::template;

/// What masks only AES-NI and PCLMULQDQ in OpenSSL and AWS-LC (the second word left alone,
/// so SHA-NI and AVX2 stay on; see notes/channels.md).
pub const MASK_AES: &str = "~0x200000200000000:~0x0";

pub const DEFAULT_GROUPS: &str = "X25519,secp256r1,secp384r1,X25519MLKEM768,secp256r1MLKEM768,MLKEM768,MLKEM1024";
/// Groups nginx/OpenSSL 3.0 serve: TLS 1.3 groups by OpenSSL's names, and `DHE` for the
/// BA411E secure-channels study's TLS 1.2 DHE-RSA with the RFC 7919 2048-bit group.
pub const OPENSSL_GROUPS: &[&str] = &["X25519", "P-256", "P-384", "X448", "ffdhe2048", "ffdhe3072", "DHE"];

#[derive(Args, Clone)]
pub struct TlsArgs {
    /// Key-exchange groups, comma-separated. rustls: X25519, secp256r1, secp384r1,
    /// X25519MLKEM768, secp256r1MLKEM768, MLKEM768, MLKEM1024, or any KEM of the catalogue
    /// as an experimental group (HQC-128, FrodoKEM-640-AES, sntrup761, NTRU-HRSS-701,
    /// BIKE-L1, ...; a full id like NTRU-HRSS-701/pqclean/clean picks the implementation).
    /// --peer openssl: X25519, P-256, P-384, X448, ffdhe2048, ffdhe3072 (TLS 1.3) or DHE
    /// (TLS 1.2 DHE-RSA-AES256-GCM-SHA384 with ffdhe2048).
    #[arg(long, value_name = "LIST")]
    pub group: Option<String>,
    /// Server certificate key types, comma-separated: rsa-2048, rsa-3072, rsa-4096,
    /// ecdsa-p256, ecdsa-p384, ed25519, mldsa-44, mldsa-65, mldsa-87 (ML-DSA, FIPS 204: rustls
    /// peer only; rsa-1024 only with --peer openssl).
    #[arg(long, default_value = "ecdsa-p256", value_name = "LIST")]
    pub cert: String,
    /// Server and client: rustls (AWS-LC) on both ends; `openssl`: nginx with the system's
    /// OpenSSL and an OpenSSL client (for what rustls refuses: RSA-1024, DHE, TLS 1.2);
    /// `openssl-X.Y`: our OpenSSL server and client linked to that version, the same code
    /// in every version — `openssl-3.5` and `openssl-4.0` (built from vendored sources:
    /// X25519MLKEM768, ML-KEM groups, ML-DSA certificates) or the system's (`openssl-3.0` on
    /// Debian 12).
    #[arg(long, default_value = "rustls", value_name = "PEER")]
    pub peer: String,
    /// With an `openssl-X.Y` peer: its own OpenSSL clients (`own`), or rustls clients
    /// against its server (`rustls`).
    #[arg(long, default_value = "own", value_parser = ["own", "rustls"])]
    pub client: String,
    /// Concurrent clients, each doing full handshakes back to back [default: 10; 1 under
    /// --delay or --loss, so each handshake's latency is its own].
    #[arg(long, value_name = "N")]
    pub clients: Option<usize>,
    /// Measured seconds per configuration (after the warm-up).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Measure N handshakes per configuration instead of a duration (the window ends when
    /// the N-th completes).
    #[arg(long, value_name = "N", conflicts_with = "duration")]
    pub count: Option<u64>,
    /// Warm-up seconds per configuration, not counted.
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<f64>,
    /// Times each configuration is measured, in interleaved rounds (all of them once per
    /// round), each a warm-up and a window of its own. With more than one, hs/s is the
    /// median with a distribution-free interval, and the soft-versus-accelerated table says
    /// faster or slower only where the intervals are apart.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: u32,
    /// Each client's pace in handshakes a second, the clients spread evenly over one
    /// interval (default: back to back). A start is never early; one that comes due while
    /// the client's last handshake still runs is taken late, and counted (`late_starts`).
    #[arg(long, value_name = "RATE")]
    pub pace: Option<f64>,
    /// Short windows (1 s measured, 0.3 s warm-up): a check that everything works.
    #[arg(long)]
    pub quick: bool,
    /// Bytes each client sends after the handshake and reads back (0: handshake only).
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub request: usize,
    /// Server and clients in two network namespaces joined by a veth pair (needs root),
    /// instead of loopback.
    #[arg(long)]
    pub netns: bool,
    /// Rate limit on the veth pair with tc tbf, e.g. 100mbit (needs --netns).
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,
    /// One-way delay added in each direction, a list to sweep, e.g. 2.684ms,15.458ms
    /// (needs --netns). Every configuration is measured under every (delay, loss) pair, with
    /// sequential handshakes (--clients 1, --count 200 unless given).
    #[arg(long, value_name = "TIME,...")]
    pub delay: Option<String>,
    /// Packet loss in percent in each direction, a list to sweep, e.g. 0,1,3,5,10,20
    /// (needs --netns); drawn from a seeded generator, the same pattern for every group.
    #[arg(long, value_name = "PERCENT,...")]
    pub loss: Option<String>,
    /// The loss generator's seed (the nfqueue emulator's).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// What makes delay and loss: the kernel's netem where it has it (auto), or ours
    /// (nfqueue: iptables NFQUEUE + a thread of ours, for kernels without sch_netem).
    #[arg(long, default_value = "auto", value_parser = ["auto", "netem", "nfqueue"])]
    pub emulator: String,
    /// The client offers X25519 first, with its key share, and the group second: the server,
    /// which accepts only the group, answers with a HelloRetryRequest, one more round trip
    /// (rustls peer; not with the X25519 group itself).
    #[arg(long)]
    pub hello_retry: bool,
    /// MTU of the veth pair, e.g. 1280 (needs --netns; default: the kernel's, 1500).
    #[arg(long, value_name = "BYTES")]
    pub mtu: Option<u32>,
    /// With the CPU's AES and carry-less multiply instructions (on), masked through
    /// OPENSSL_ia32cap in server and clients (off), or each configuration both ways.
    #[arg(long, default_value = "on", value_parser = ["on", "off", "both"])]
    pub accel: String,
    /// Server threads (rustls peer), or nginx worker processes (default: logical CPUs).
    #[arg(long, value_name = "N")]
    pub server_threads: Option<usize>,
    /// Keep certificates, configurations and logs here (default: a private temporary
    /// directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Also write every configuration's full measurements as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[arg(long = "db", value_name = "PATH|URL", help = cryptoscope_engine::args::DB_HELP, long_help = cryptoscope_engine::args::DB_LONG_HELP)]
    pub db: Option<String>,
}

pub(crate) fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

pub(crate) fn split(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

use crate::netns::run_cmd;

/// A running server: killed and reaped on drop.
struct Server {
    child: Child,
    pids: Vec<u32>,
    addr: String,
    /// The server's library, from its ready line (nginx: none).
    library: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One configuration to measure.
#[derive(Clone)]
struct Config {
    group: String,
    cert: String,
    soft: bool,
    /// The driver binary (rustls peer): which provider's KEMs it links; with an
    /// `openssl-X.Y` peer, the binary linking that OpenSSL.
    driver: PathBuf,
    info: GroupInfo,
    /// The load generator's binary and group name (rustls clients against an OpenSSL
    /// server name groups as rustls does).
    client_driver: PathBuf,
    client_group: String,
    /// The server is `serve --openssl` (an `openssl-X.Y` peer).
    openssl_server: bool,
}

fn label(c: &Config, peer: &str) -> String {
    format!(
        "{peer} {} {} {}",
        c.group,
        c.cert,
        if c.soft { "soft" } else { "accel" }
    )
}

struct Ctx<'a> {
    a: &'a TlsArgs,
    work: PathBuf,
    netns: Option<Netns>,
    warmup: f64,
    duration: f64,
    threads: usize,
    clients: usize,
    count: Option<u64>,
    /// How delay and loss are made, when they are.
    mechanism: Option<netem::Mechanism>,
}

impl Ctx<'_> {
    fn command(&self, side: char, bin: &Path) -> Command {
        match &self.netns {
            Some(n) => n.wrap(side, bin),
            None => Command::new(bin),
        }
    }

    fn server_addr(&self) -> &'static str {
        if self.netns.is_some() {
            ADDR_A
        } else {
            "127.0.0.1"
        }
    }
}

fn cert_dir(ctx: &Ctx, driver: &Path, alg: &str) -> Result<PathBuf> {
    let d = ctx.work.join(format!("cert-{alg}"));
    if !d.join("chain.pem").is_file() {
        std::fs::create_dir_all(&d)?;
        run_cmd(
            Command::new(driver)
                .args(["certs", "--alg", alg, "--dir"])
                .arg(&d)
                .args(["--ip", "127.0.0.1", "--ip", ADDR_A]),
        )
        .with_context(|| format!("making the {alg} certificate"))?;
    }
    Ok(d)
}

fn start_rustls(ctx: &Ctx, c: &Config, dir: &Path) -> Result<Server> {
    let mut cmd = ctx.command('a', &c.driver);
    cmd.args([
        "serve",
        "--group",
        &c.group,
        "--threads",
        &ctx.threads.to_string(),
        "--listen",
    ])
    .arg(format!("{}:0", ctx.server_addr()))
    .arg("--dir")
    .arg(dir)
    .args(c.openssl_server.then_some("--openssl"))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if c.soft {
        cmd.env("OPENSSL_ia32cap", MASK_AES);
    }
    let mut child = cmd.spawn().context("cannot start the TLS server")?;
    let out = child.stdout.take().expect("piped");
    let mut line = String::new();
    let read = BufReader::new(out).read_line(&mut line);
    if read.is_err() || line.trim().is_empty() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!("the TLS server did not start: {}", err.trim());
    }
    let v: Value = serde_json::from_str(line.trim()).context("the TLS server's ready line")?;
    Ok(Server {
        pids: vec![v["pid"].as_u64().unwrap_or(child.id() as u64) as u32],
        addr: v["addr"].as_str().unwrap_or_default().to_string(),
        library: v["library"].as_str().map(String::from),
        child,
    })
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn start_nginx(ctx: &Ctx, c: &Config, dir: &Path) -> Result<Server> {
    let ng = ctx.work.join(format!("nginx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ng);
    std::fs::create_dir_all(ng.join("tmp"))?;
    let port = free_port()?;
    let dh = ctx.work.join("ffdhe2048.pem");
    if !dh.is_file() {
        run_cmd(
            Command::new("openssl")
                .args([
                    "genpkey",
                    "-genparam",
                    "-algorithm",
                    "DH",
                    "-pkeyopt",
                    "group:ffdhe2048",
                    "-out",
                ])
                .arg(&dh),
        )
        .context("writing the ffdhe2048 parameters")?;
    }
    let (protocols, curve) = if c.group == "DHE" {
        ("TLSv1.2", "X25519")
    } else {
        ("TLSv1.3", c.group.as_str())
    };
    let p = ng.display();
    let conf = format!(
        "daemon off;\nmaster_process on;\nworker_processes {threads};\n{user}pid {p}/nginx.pid;\nerror_log {p}/error.log;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {p}/tmp/body;\n  proxy_temp_path {p}/tmp/proxy;\n  fastcgi_temp_path {p}/tmp/fcgi;\n  uwsgi_temp_path {p}/tmp/uwsgi;\n  scgi_temp_path {p}/tmp/scgi;\n\
         \x20 server {{\n    listen {addr}:{port} ssl;\n    server_name localhost;\n    ssl_certificate {d}/chain.pem;\n    ssl_certificate_key {d}/key.pem;\n\
         \x20   ssl_protocols {protocols};\n    ssl_ciphers DHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:@SECLEVEL=0;\n\
         \x20   ssl_prefer_server_ciphers on;\n    ssl_ecdh_curve {curve};\n    ssl_dhparam {dh};\n    ssl_session_tickets off;\n    ssl_session_cache off;\n\
         \x20   location / {{ return 200 \"ok\\n\"; }}\n  }}\n}}\n",
        threads = ctx.threads,
        user = if is_root() { "user root;\n" } else { "" },
        addr = ctx.server_addr(),
        d = dir.display(),
        dh = dh.display(),
    );
    std::fs::write(ng.join("nginx.conf"), conf)?;
    // RSA-1024 and DHE need security level 0 in OpenSSL 3.0 (Debian's default is 2); the
    // certificate is loaded before nginx applies ssl_ciphers, so set it for the library.
    std::fs::write(
        ng.join("openssl.cnf"),
        "openssl_conf = init\n[init]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = sys\n[sys]\nCipherString = DEFAULT:@SECLEVEL=0\n",
    )?;
    let mut cmd = ctx.command('a', Path::new("nginx"));
    cmd.arg("-p")
        .arg(&ng)
        .arg("-c")
        .arg(ng.join("nginx.conf"))
        .arg("-e")
        .arg(ng.join("error.log"));
    cmd.env("OPENSSL_CONF", ng.join("openssl.cnf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if c.soft {
        cmd.env("OPENSSL_ia32cap", MASK_AES);
    }
    let mut child = cmd.spawn().context("cannot start nginx")?;
    let t = Instant::now();
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            let log = std::fs::read_to_string(ng.join("error.log")).unwrap_or_default();
            bail!("nginx exited ({st}): {}", log.lines().last().unwrap_or("").trim());
        }
        let pid = std::fs::read_to_string(ng.join("nginx.pid"))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        if let Some(pid) = pid {
            let kids = children_of(pid);
            if kids.len() >= ctx.threads {
                let mut pids = vec![pid];
                pids.extend(kids);
                return Ok(Server {
                    child,
                    pids,
                    addr: format!("{}:{port}", ctx.server_addr()),
                    library: None,
                });
            }
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            bail!("nginx did not become ready in 10 s (see {}/error.log)", ng.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Measures one configuration, under `cell`'s delay and loss when given (the emulation
/// starts once the server is up, fresh for each configuration, and its report comes back).
fn measure(ctx: &Ctx, c: &Config, cell: Option<netem::Conditions>) -> Result<(Measurement, Option<LinkConditions>)> {
    let a = ctx.a;
    let dir = cert_dir(ctx, &c.driver, &c.cert)?;
    let server = if a.peer == "openssl" {
        start_nginx(ctx, c, &dir)?
    } else {
        start_rustls(ctx, c, &dir)?
    };
    if c.openssl_server {
        tls_peers::check_library(&a.peer, server.library.as_deref().unwrap_or("no library"))?;
    }
    let mut cmd = ctx.command('b', &c.client_driver);
    cmd.args(["load", "--connect", &server.addr, "--clients", &ctx.clients.to_string()])
        .arg("--ca")
        .arg(dir.join("ca.pem"))
        .args([
            "--warmup",
            &ctx.warmup.to_string(),
            "--duration",
            &ctx.duration.to_string(),
        ])
        .args(["--request", &a.request.to_string()]);
    if let Some(r) = a.pace {
        cmd.args(["--pace", &r.to_string()]);
    }
    if let Some(n) = ctx.count {
        cmd.args(["--count", &n.to_string()]);
    }
    for p in &server.pids {
        cmd.args(["--server-pid", &p.to_string()]);
    }
    let openssl_client = a.peer == "openssl" || (c.openssl_server && a.client == "own");
    if openssl_client {
        cmd.args(["--client", "openssl"]);
        if c.group == "DHE" {
            cmd.args(["--tls12-ciphers", "DHE-RSA-AES256-GCM-SHA384"]);
        } else {
            cmd.args(["--openssl-groups", &c.group]);
        }
    } else {
        cmd.args(["--group", &c.client_group]);
        if a.hello_retry {
            cmd.arg("--hello-retry");
        }
    }
    if c.soft {
        cmd.env("OPENSSL_ia32cap", MASK_AES);
    }
    let emulation = match (cell, &ctx.netns, ctx.mechanism) {
        (Some(cell), Some(n), Some(mech)) => {
            let (a_end, b_end) = (n.end('a'), n.end('b'));
            Some(netem::Emulation::start(
                (a_end.0, &a_end.1),
                (b_end.0, &b_end.1),
                cell,
                a.rate.as_deref(),
                mech,
            )?)
        }
        _ => None,
    };
    let out = crate::stop::output(cmd.stdin(Stdio::null())).context("the load generator")?;
    let link = emulation.map(netem::Emulation::finish).transpose()?;
    drop(server);
    if !out.status.success() {
        bail!("load generator: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    if let Some(l) = &link {
        let over: u64 = l.directions.iter().map(|d| d.overflowed()).sum();
        if over > 0 {
            bail!(
                "the emulator's queue overflowed: {over} packets lost beyond the set loss (set --rate to bound the link, or lower the delay)"
            );
        }
    }
    let mut m: Measurement = serde_json::from_slice(&out.stdout).context("the load generator's output")?;
    if let Some(want) = expected_scheme(&c.cert) {
        let got = m.rest.get("signature_scheme").and_then(Value::as_str);
        if m.handshakes > 0 && got != Some(want) {
            bail!(
                "the server signed with {} instead of {want}",
                got.unwrap_or("no scheme")
            );
        }
    }
    let (window, n) = (m.window_s, m.handshakes as f64);
    // What cannot be computed is stored as null (a non-finite number serialises as null).
    if let Some(cpu) = m.server_cpu_s {
        let pct = cpu / window * 100.0;
        m.server_cpu_pct = Some(Some(pct));
        m.server_cpu_s_per_handshake = Some((n > 0.0).then(|| cpu / n));
        m.handshakes_per_min_per_cpu_pct = Some((pct > 0.0).then(|| n / window * 60.0 / pct));
    }
    m.handshakes_per_min = Some(n / window * 60.0);
    Ok((m, link))
}

/// Certificate types for the rustls peer (the OpenSSL peer also takes rsa-1024, and no ML-DSA).
pub const CERTS: &[&str] = &[
    "rsa-2048",
    "rsa-3072",
    "rsa-4096",
    "ecdsa-p256",
    "ecdsa-p384",
    "ed25519",
    "mldsa-44",
    "mldsa-65",
    "mldsa-87",
];

/// Refuses a certificate type the peer cannot serve, with the reason.
fn check_certs(certs: &[String], peer: &str, versioned: Option<&tls_peers::Peer>, client: &str) -> Result<()> {
    let openssl = peer == "openssl" || (versioned.is_some() && client == "own");
    for c in certs {
        if c.starts_with("mldsa-")
            && openssl
            && CERTS.contains(&c.as_str())
            && !versioned.is_some_and(|p| p.post_quantum)
        {
            bail!("{c} needs the rustls peer or --peer openssl-3.5: Debian's OpenSSL 3.0 (nginx and the OpenSSL client) has no ML-DSA");
        }
        if c == "rsa-1024" && !openssl {
            bail!("rsa-1024 needs --peer openssl (rustls and webpki refuse RSA keys under 2048 bits)");
        }
        if !(CERTS.contains(&c.as_str()) || c == "rsa-1024") {
            bail!(
                "unknown certificate type `{c}` ({}; rsa-1024 with --peer openssl; mldsa-* with the rustls peer)",
                CERTS.join(", ")
            );
        }
    }
    Ok(())
}

/// The signature scheme (rustls's name) a server with this certificate must sign with, where
/// the certificate allows only one: the ML-DSA types.
fn expected_scheme(cert: &str) -> Option<&'static str> {
    match cert {
        "mldsa-44" => Some("ML_DSA_44"),
        "mldsa-65" => Some("ML_DSA_65"),
        "mldsa-87" => Some("ML_DSA_87"),
        _ => None,
    }
}

/// A group resolved: its name, the driver binary that offers it, what the driver says of it.
type Resolved = (String, PathBuf, GroupInfo);

/// Resolves the requested groups with the driver binaries; experimental ones are gated.
fn plan(a: &TlsArgs, dir: &Path, cx: &Cx) -> Result<(Vec<Config>, Vec<Configuration>, Vec<String>)> {
    let liboqs = dir.join("cryptoscope-tls");
    let pqclean = dir.join("cryptoscope-tls-pqclean");
    if !liboqs.is_file() {
        bail!(
            "{} is missing: build the workspace (cargo build --release --workspace)",
            liboqs.display()
        );
    }
    let versioned = tls_peers::versioned(&a.peer, dir)?;
    let groups = split(a.group.as_deref().unwrap_or(match &versioned {
        Some(p) if p.post_quantum => "X25519,X25519MLKEM768",
        Some(_) => "X25519,P-256",
        None if a.peer == "openssl" => "X25519,P-256,ffdhe2048",
        None => DEFAULT_GROUPS,
    }));
    let certs = split(&a.cert);
    if groups.is_empty() || certs.is_empty() {
        bail!("--group and --cert need at least one name");
    }
    check_certs(&certs, &a.peer, versioned.as_ref(), &a.client)?;
    let modes: Vec<bool> = match a.accel.as_str() {
        "off" => vec![true],
        "both" => vec![false, true],
        _ => vec![false],
    };
    if let Some(p) = &versioned {
        return Ok((
            versioned_configs(a, p, &groups, &certs, &modes, &liboqs)?,
            Vec::new(),
            Vec::new(),
        ));
    }
    let (resolved, skipped, gate_failed) = if a.peer == "openssl" {
        (openssl_groups(&groups, &certs, &liboqs)?, Vec::new(), Vec::new())
    } else {
        driver_groups(cx, &groups, &liboqs, &pqclean)?
    };
    let mut configs = Vec::new();
    for (g, bin, info) in &resolved {
        for c in &certs {
            for &soft in &modes {
                configs.push(Config {
                    group: g.clone(),
                    cert: c.clone(),
                    soft,
                    driver: bin.clone(),
                    info: info.clone(),
                    client_driver: bin.clone(),
                    client_group: g.clone(),
                    openssl_server: false,
                });
            }
        }
    }
    Ok((configs, skipped, gate_failed))
}

/// The groups of `--peer openssl`, by OpenSSL's names (DHE needs RSA certificates).
fn openssl_groups(groups: &[String], certs: &[String], liboqs: &Path) -> Result<Vec<Resolved>> {
    let mut resolved = Vec::new();
    for g in groups {
        let Some(name) = OPENSSL_GROUPS.iter().find(|n| n.eq_ignore_ascii_case(g)) else {
            bail!(
                "unknown group `{g}` for --peer openssl (one of: {})",
                OPENSSL_GROUPS.join(", ")
            );
        };
        if *name == "DHE" && certs.iter().any(|c| !c.starts_with("rsa-")) {
            bail!("DHE (TLS 1.2 DHE-RSA) needs RSA certificates");
        }
        let info = GroupInfo {
            name: name.to_string(),
            kind: "openssl".into(),
            ..GroupInfo::default()
        };
        resolved.push((name.to_string(), liboqs.to_path_buf(), info));
    }
    Ok(resolved)
}

/// The groups the TLS driver knows (rustls's, and catalogue KEMs as experimental groups
/// from the liboqs or the PQClean build of the driver), each catalogue KEM gated first:
/// the groups to measure, those whose key shares do not fit a handshake, and those whose
/// KEM failed its gate.
fn driver_groups(
    cx: &Cx,
    groups: &[String],
    liboqs: &Path,
    pqclean: &Path,
) -> Result<(Vec<Resolved>, Vec<Configuration>, Vec<String>)> {
    let (mut resolved, mut skipped, mut gate_failed) = (Vec::new(), Vec::new(), Vec::new());
    let ask = |bin: &Path, names: &[String]| -> Result<Vec<Value>> {
        let out = run_cmd(Command::new(bin).arg("groups").args(names))?;
        Ok(serde_json::from_str::<Vec<Value>>(&out)?)
    };
    let first = ask(liboqs, groups)?;
    let second = if pqclean.is_file() {
        ask(pqclean, groups)?
    } else {
        vec![Value::Null; groups.len()]
    };
    for (i, g) in groups.iter().enumerate() {
        let wants_pqclean = g.to_ascii_lowercase().contains("/pqclean/");
        let (bin, v) = if first[i].get("ok").is_some() && !wants_pqclean {
            (liboqs.to_path_buf(), &first[i])
        } else if second[i].get("ok").is_some() {
            (pqclean.to_path_buf(), &second[i])
        } else {
            let e = first[i]["error"].as_str().unwrap_or("unknown group");
            bail!("{e}");
        };
        let info: GroupInfo = serde_json::from_value(v["ok"].clone()).context("the driver's group")?;
        if !info.fits.unwrap_or(false) {
            skipped.push(Configuration {
                group: info.name,
                status: "does not fit".into(),
                client_share: info.client_share,
                server_share: info.server_share,
                limit: Some(65535),
                subject: Some(info.subject),
                ..Configuration::default()
            });
            continue;
        }
        resolved.push((info.name.clone(), bin, info));
    }
    // Correct before fast: a catalogue KEM is gated before it carries a handshake.
    let ids: Vec<String> = resolved.iter().filter_map(|(_, _, i)| i.subject.clone()).collect();
    if !ids.is_empty() {
        let gate = GateOptions {
            vectors: cryptoscope_engine::util::vectors_dir(&cx.env, None)?,
            depth: "single".into(),
            timeout: Duration::from_secs(600),
        };
        let ours = |cat: &Catalogue| Ok(cat.subjects.iter().filter(|d| ids.contains(&d.id)).cloned().collect());
        let (gated, pb) = gated(cx, &gate, ours, |picked| picked.len() as u64)?;
        pb.finish();
        let verdicts = &gated.verdicts;
        resolved.retain(|(name, _, info)| match info.subject.as_deref() {
            Some(id) => match verdicts.get(id) {
                Some(v) if v.status == cryptoscope_model::GateStatus::Pass => true,
                v => {
                    gate_failed.push(format!(
                        "{name} ({id}): gate {}",
                        v.map(|v| v.detail.as_str()).unwrap_or("not run")
                    ));
                    false
                }
            },
            None => true,
        });
    }
    Ok((resolved, skipped, gate_failed))
}

/// The configurations of an `openssl-X.Y` peer: its groups by OpenSSL's names, served by
/// its binary; the clients its own, or rustls (`cryptoscope-tls`) with rustls's names.
fn versioned_configs(
    a: &TlsArgs,
    p: &tls_peers::Peer,
    groups: &[String],
    certs: &[String],
    modes: &[bool],
    rustls_bin: &Path,
) -> Result<Vec<Config>> {
    let mut configs = Vec::new();
    for g in groups {
        let name = tls_peers::group(p, g)?;
        let (client_driver, client_group) = if a.client == "rustls" {
            let Some(r) = tls_peers::rustls_name(name) else {
                bail!("{name}: no rustls client group for it (use --client own)");
            };
            (rustls_bin.to_path_buf(), r.to_string())
        } else {
            (p.binary.clone(), name.to_string())
        };
        for c in certs {
            for &soft in modes {
                configs.push(Config {
                    group: name.to_string(),
                    cert: c.clone(),
                    soft,
                    driver: p.binary.clone(),
                    info: GroupInfo {
                        name: name.to_string(),
                        kind: "openssl".into(),
                        ..GroupInfo::default()
                    },
                    client_driver: client_driver.clone(),
                    client_group: client_group.clone(),
                    openssl_server: true,
                });
            }
        }
    }
    Ok(configs)
}

/// Runs the study; returns (setup, rows, exit code).
pub fn run(a: &TlsArgs, cx: &Cx) -> Result<(Setup, Vec<Configuration>, i32)> {
    let quiet = cx.quiet;
    let (cells, mechanism) = crate::tls_checks::check(a)?;
    let dir = cx.workers.dir().to_path_buf();
    let (configs, skipped, gate_failed) = plan(a, &dir, cx)?;
    let (warmup, duration, clients, count, threads) = crate::tls_checks::load(a, !cells.is_empty())?;
    // Keys and configurations live in a private 0700 directory with an unpredictable name,
    // created fresh (never reused) and removed with everything in it on the way out; or in
    // the directory the user names with --workdir, kept.
    let (work, _private) = cryptoscope_engine::util::work_dir(a.workdir.as_deref(), "tls")?;
    let (netns, network) = crate::tls_checks::network(a, mechanism)?;
    let ctx = Ctx {
        a,
        work,
        netns,
        warmup,
        duration,
        threads,
        clients,
        count,
        mechanism,
    };
    let catching = crate::stop::catch();
    let mut rows = Vec::new();
    let mut code = if gate_failed.is_empty() { 0 } else { 1 };
    for m in &gate_failed {
        errln!(cx, "error: {m}: not measured");
    }
    // Without delay or loss, one pass with no conditions.
    let passes: Vec<Option<netem::Conditions>> = if cells.is_empty() {
        vec![None]
    } else {
        cells.iter().copied().map(Some).collect()
    };
    let total = configs.len() * passes.len();
    let work: Vec<(Option<netem::Conditions>, &Config)> = passes
        .iter()
        .flat_map(|p| configs.iter().map(move |c| (*p, c)))
        .collect();
    let rounds = a.repeats;
    let mut gathered: Vec<rounds::Gathered> = work.iter().map(|_| Default::default()).collect();
    let mut planned: Vec<Configuration> = work
        .iter()
        .map(|(cell, c)| template(a, c, *cell, &network, mechanism))
        .collect();
    'rounds: for round in 1..=rounds {
        for (i, (cell, c)) in work.iter().enumerate() {
            if crate::stop::requested() {
                code = 1;
                break 'rounds;
            }
            let mut lbl = label(c, &a.peer);
            if let Some(cell) = cell {
                lbl += &format!(" @ {} ms, {} % loss", cell.millis(), cell.loss);
            }
            if !quiet {
                let r = if rounds > 1 {
                    format!("[round {round}/{rounds}] ")
                } else {
                    String::new()
                };
                match ctx.count {
                    Some(n) => errln!(cx, "{r}[{}/{total}] {lbl} ({n} handshakes)", i + 1),
                    None => errln!(cx, "{r}[{}/{total}] {lbl} ({duration} s)", i + 1),
                }
            }
            gathered[i].tried = true;
            let row = &mut planned[i];
            match measure(&ctx, c, *cell) {
                Ok((m, link)) if m.handshakes > 0 => gathered[i].ok.push((m, link)),
                Ok((m, link)) => {
                    code = 1;
                    errln!(
                        cx,
                        "error: {lbl}: no handshake completed: {}",
                        m.first_error.as_deref().unwrap_or("?")
                    );
                    if link.is_some() {
                        row.conditions = link;
                    }
                    row.status = "failed".into();
                    row.latency = crate::tls_checks::latency_of(&m);
                    row.measurement = Some(m);
                }
                Err(e) => {
                    code = 1;
                    if crate::stop::requested() {
                        break 'rounds;
                    }
                    errln!(cx, "error: {lbl}: {e:#}");
                    row.status = "failed".into();
                    row.error = Some(format!("{e:#}"));
                }
            }
        }
    }
    for (mut row, g) in planned.into_iter().zip(gathered) {
        if g.tried {
            rounds::finish(&mut row, g, rounds);
            rows.push(row);
        }
    }
    drop(catching);
    if crate::stop::requested() {
        errln!(
            cx,
            "interrupted: servers and namespaces removed; what was measured is kept"
        );
    }
    rows.extend(skipped);
    let setup = setup(a, &ctx, network, gate_failed);
    Ok((setup, rows, code))
}

/// The peer as results name it: with `--client rustls`, "openssl-3.5 (rustls clients)".
fn peer_label(a: &TlsArgs) -> String {
    if a.client == "rustls" {
        format!("{} (rustls clients)", a.peer)
    } else {
        a.peer.clone()
    }
}

/// The run's set-up item: what every configuration shares.
fn setup(a: &TlsArgs, ctx: &Ctx, network: String, gate_failed: Vec<String>) -> Setup {
    let openssl = a.peer == "openssl";
    let versioned = a.peer.starts_with("openssl-");
    let netem = match ctx.mechanism {
        Some(netem::Mechanism::Netem) => "delay and loss by tc netem on each end's way out".to_string(),
        Some(netem::Mechanism::Nfqueue) => format!(
            "delay and loss by the nfqueue emulator (iptables NFQUEUE, on arrival; seed {}){}",
            a.seed,
            if netem::netem_available() {
                ""
            } else {
                "; this kernel has no sch_netem"
            }
        ),
        None if !is_root() => "not checked (needs root)".to_string(),
        None if netem::netem_available() => "available (--delay, --loss use it)".to_string(),
        None => "not available on this kernel (no sch_netem): --delay and --loss use the nfqueue emulator".to_string(),
    };
    Setup {
        peer: Some(peer_label(a)),
        server: Some(if openssl {
            format!("nginx ({} workers), system OpenSSL", ctx.threads)
        } else if versioned {
            format!(
                "{} through the openssl crate (cryptoscope-tls serve --openssl), {} threads",
                a.peer, ctx.threads
            )
        } else {
            format!("rustls 0.23 (AWS-LC), {} threads", ctx.threads)
        }),
        client: Some(if openssl {
            "OpenSSL (system libssl) via the openssl crate".into()
        } else if versioned && a.client == "own" {
            format!("{} via the openssl crate", a.peer)
        } else {
            "rustls (AWS-LC)".into()
        }),
        clients: Some(ctx.clients as u64),
        warmup_s: Some(ctx.warmup),
        duration_s: if ctx.count.is_some() { None } else { Some(ctx.duration) },
        count: ctx.count,
        request_bytes: Some(a.request as u64),
        network: Some(network),
        netem: Some(netem),
        resumption: Some("off (full handshakes only; no tickets, no session cache)".into()),
        window: Some("at least the duration, extended until 20 handshakes completed in it (60 s at most); steal = share of the CPUs' time the hypervisor gave to others during the window (/proc/stat), noted from 10 %".into()),
        cpu: Some("server CPU = utime+stime of its processes over the window (/proc/PID/stat, clock ticks); CPU % is of one core".into()),
        mask: Some(MASK_AES.into()),
        gate_failed,
        pace: a.pace,
        repeats: (a.repeats > 1).then_some(a.repeats),
        interrupted: crate::stop::requested(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &str) -> Vec<String> {
        split(list)
    }

    #[test]
    fn mldsa_certificates_need_rustls_or_openssl_35() {
        let all = CERTS.join(",");
        check_certs(&names(&all), "rustls", None, "own").unwrap();
        let peer = |name: &str, post_quantum| tls_peers::Peer {
            name: name.into(),
            binary: PathBuf::new(),
            post_quantum,
        };
        let (v30, v35) = (peer("openssl-3.0", false), peer("openssl-3.5", true));
        for c in ["mldsa-44", "mldsa-65", "mldsa-87"] {
            for (p, v) in [("openssl", None), ("openssl-3.0", Some(&v30))] {
                let e = check_certs(&names(c), p, v, "own").unwrap_err().to_string();
                assert!(e.contains("OpenSSL 3.0") && e.contains("no ML-DSA"), "{e}");
                assert!(!e.contains('\n'), "one line: {e}");
            }
            check_certs(&names(c), "openssl-3.5", Some(&v35), "own").unwrap();
            check_certs(&names(c), "openssl-3.5", Some(&v35), "rustls").unwrap();
        }
        check_certs(&names("rsa-1024,rsa-2048,ecdsa-p256,ed25519"), "openssl", None, "own").unwrap();
        check_certs(&names("rsa-1024"), "openssl-3.5", Some(&v35), "own").unwrap();
        for (p, v, client) in [("rustls", None, "own"), ("openssl-3.5", Some(&v35), "rustls")] {
            let e = check_certs(&names("rsa-1024"), p, v, client).unwrap_err().to_string();
            assert!(e.contains("--peer openssl"), "{e}");
        }
        for bad in ["mldsa-128", "ML-DSA-65", "dilithium3"] {
            for peer in ["rustls", "openssl"] {
                let e = check_certs(&names(bad), peer, None, "own").unwrap_err().to_string();
                assert!(e.contains("unknown certificate type"), "{bad} {peer}: {e}");
            }
        }
    }

    #[test]
    fn only_mldsa_certificates_pin_the_signature_scheme() {
        assert_eq!(expected_scheme("mldsa-44"), Some("ML_DSA_44"));
        assert_eq!(expected_scheme("mldsa-65"), Some("ML_DSA_65"));
        assert_eq!(expected_scheme("mldsa-87"), Some("ML_DSA_87"));
        for c in ["rsa-2048", "ecdsa-p256", "ed25519"] {
            assert_eq!(expected_scheme(c), None);
        }
    }
}
