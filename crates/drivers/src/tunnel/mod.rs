//! `cryptoscope tunnel`: ping latency by payload size, bulk transfer throughput and the CPU
//! of each endpoint through real VPN and SSH tunnels between two network namespaces, per
//! cipher:MAC couple, against the same path without a tunnel; with the AES instructions or
//! with them masked.
//!
//! Every configuration gets fresh namespaces, keys and daemons, all removed afterwards
//! (drop guards; SIGINT, SIGTERM and SIGHUP are caught so the guards run: `crate::stop`).

use anyhow::{bail, Context, Result};
use clap::Args;
use cryptoscope_engine::context::Ctx;
use cryptoscope_model::apps::tunnel::{self as item, Ping, Pings, Row, Setup, Status, Transfer};
use serde_json::Value;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) mod daemons;
mod datapath;
pub(crate) mod repeats;
mod rounds;

use crate::hostile;
use crate::netns::{run_cmd, Netns, ADDR_A, ADDR_B};
use crate::tls::MASK_AES;
use daemons::{ipsec, openvpn, ssh, ssh_client, wait_for, wireguard, Renew, Running};

pub const TUNNELS: &[&str] = &["openvpn-static", "openvpn-tls", "ipsec", "wireguard", "ssh"];
pub const COUPLES: &[&str] = &[
    "none:none",
    "aes-256-cbc:none",
    "aes-256-cbc:sha256",
    "aes-256-gcm",
    "chacha20-poly1305",
];
const INNER_A: &str = "10.8.0.1";
const INNER_B: &str = "10.8.0.2";

#[derive(Args, Clone)]
pub struct TunnelArgs {
    /// Tunnels, comma-separated: openvpn-static, openvpn-tls, ipsec (strongSwan: the
    /// kernel's ESP or kernel-libipsec), wireguard (the kernel module or wireguard-go), ssh
    /// (OpenSSH port forwarding).
    #[arg(
        long,
        default_value = "openvpn-static,openvpn-tls,ipsec,wireguard,ssh",
        value_name = "LIST"
    )]
    pub tunnel: String,
    /// Cipher:MAC couples, comma-separated: none:none, aes-256-cbc:none, aes-256-cbc:sha256,
    /// aes-256-gcm, chacha20-poly1305. Couples a tunnel cannot do are listed with the reason.
    #[arg(
        long,
        default_value = "none:none,aes-256-cbc:none,aes-256-cbc:sha256,aes-256-gcm,chacha20-poly1305",
        value_name = "LIST"
    )]
    pub couple: String,
    /// Ping payload sizes in bytes.
    #[arg(long, default_value = "64,512,1000,1400,4000,8000,16000", value_name = "LIST")]
    pub sizes: String,
    /// Pings per size (default 100; --quick 10).
    #[arg(long, value_name = "N")]
    pub pings: Option<u32>,
    /// Bytes per bulk transfer (default 256 MiB; --quick 32 MiB).
    #[arg(long, value_name = "BYTES")]
    pub bytes: Option<u64>,
    /// Fewer pings and a smaller transfer: a check that everything works.
    #[arg(long)]
    pub quick: bool,
    /// With the CPU's AES and carry-less multiply instructions (on), masked through
    /// OPENSSL_ia32cap in both endpoints (off), or each configuration both ways.
    #[arg(long, default_value = "on", value_parser = ["on", "off", "both"])]
    pub accel: String,
    /// Rate limit on the veth pair with tc tbf, e.g. 100mbit.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,
    /// Keep keys, configurations and logs here (default: a private temporary directory,
    /// removed at the end).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Also write every configuration's full measurements as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also measure each configuration again while a third party (its own address in the
    /// client's namespace) sends the server junk datagrams, handshakes it never finishes,
    /// and TCP connections it drops, stalls or fills with garbage (bounded: at most 2,000
    /// datagrams and 40 connections a second, 6 held open). Meanwhile the client starts a
    /// new session (a new SSH login; a new WireGuard, IKE or OpenVPN TLS handshake).
    /// Reports whether the well-behaved client was still served, and at what cost.
    #[arg(long)]
    pub hostile: bool,
    /// openvpn-tls without --tls-crypt (by default its control channel is authenticated
    /// and encrypted with a shared key, as OpenVPN recommends).
    #[arg(long)]
    pub no_tls_crypt: bool,
    /// Times each configuration and the baseline are measured, in interleaved rounds (all
    /// of them once per round, the baseline first); each figure is then the median with a
    /// distribution-free interval, and "faster"/"slower" against the baseline is said only
    /// where the intervals are apart. Default 5 (3 with --quick).
    #[arg(long, value_name = "N")]
    pub repeats: Option<u32>,
    /// Data path of ipsec and wireguard: auto (the kernel's where it has ESP through xfrm
    /// or the wireguard module, found by trying them; user space otherwise), kernel (an
    /// error where the kernel lacks it), user (strongSwan's kernel-libipsec, wireguard-go).
    /// OpenVPN and OpenSSH run in user space either way. Each row names the path it took.
    #[arg(long, default_value = "auto", value_parser = ["auto", "kernel", "user"], value_name = "PATH")]
    pub data_path: String,
    #[arg(long = "db", value_name = "PATH|URL", help = cryptoscope_engine::args::DB_HELP, long_help = cryptoscope_engine::args::DB_LONG_HELP)]
    pub db: Option<String>,
}

/// Why a tunnel cannot carry a couple, or `None` when it can.
pub fn unsupported(tunnel: &str, couple: &str) -> Option<&'static str> {
    match (tunnel, couple) {
        ("openvpn-static", "aes-256-gcm" | "chacha20-poly1305") => {
            Some("OpenVPN's static-key mode refuses AEAD ciphers (use openvpn-tls)")
        }
        ("openvpn-tls", "none:none" | "aes-256-cbc:none") => {
            Some("OpenVPN 2.6 negotiates no unauthenticated data channel in TLS mode (use openvpn-static)")
        }
        ("ipsec", "none:none") => Some("ESP needs encryption or integrity: strongSwan has no null:null proposal"),
        ("ipsec", "aes-256-cbc:none") => {
            Some("strongSwan refuses CBC without integrity (\"unsupported integrity algorithm UNDEFINED\")")
        }
        ("wireguard", c) if c != "chacha20-poly1305" => {
            Some("WireGuard has exactly one cipher suite: ChaCha20-Poly1305")
        }
        ("ssh", "none:none") => Some("OpenSSH has no `none` cipher"),
        ("ssh", "aes-256-cbc:none") => Some("OpenSSH has no `none` MAC"),
        _ => None,
    }
}

fn binary_for(tunnel: &str) -> &'static [&'static str] {
    match tunnel {
        "openvpn-static" | "openvpn-tls" => &["openvpn"],
        "ipsec" => &["/usr/lib/ipsec/charon", "swanctl"],
        "wireguard" => &["wireguard-go", "wg"],
        "ssh" => &["/usr/sbin/sshd", "ssh", "ssh-keygen"],
        _ => &[],
    }
}

pub(crate) fn have(bin: &str) -> bool {
    if bin.starts_with('/') {
        return Path::new(bin).is_file();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false)
}

fn cpu_of(pids: &[u32]) -> f64 {
    pids.iter().filter_map(|p| crate::netns::process_cpu(*p)).sum()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[(((p / 100.0) * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)]
}

/// Pings `target` from namespace A: per size, RTT mean and percentiles in ms, and loss.
fn ping(n: &Netns, target: &str, source: Option<&str>, sizes: &[u32], count: u32) -> Result<Pings> {
    let mut out = Pings::new();
    for &s in sizes {
        let mut cmd = n.wrap('a', Path::new("ping"));
        cmd.args([
            "-n",
            "-c",
            &count.to_string(),
            "-i",
            "0.01",
            "-W",
            "2",
            "-s",
            &s.to_string(),
        ]);
        if let Some(src) = source {
            cmd.args(["-I", src]);
        }
        cmd.arg(target);
        let o = cmd.output().context("cannot run ping")?;
        let text = String::from_utf8_lossy(&o.stdout);
        let mut t: Vec<f64> = text
            .lines()
            .filter_map(|l| l.split("time=").nth(1))
            .filter_map(|x| x.split_whitespace().next()?.parse().ok())
            .collect();
        t.sort_by(|a, b| a.total_cmp(b));
        let got = t.len() as u64;
        out.insert(
            s,
            Ping {
                sent: count.into(),
                received: got,
                mean_ms: if got > 0 {
                    t.iter().sum::<f64>() / got as f64
                } else {
                    f64::NAN
                },
                p50_ms: percentile(&t, 50.0),
                p95_ms: percentile(&t, 95.0),
                p99_ms: percentile(&t, 99.0),
                max_ms: t.last().copied().unwrap_or(f64::NAN),
            },
        );
    }
    Ok(out)
}

/// Sends `file` with iperf3 from namespace A to `target:port` (the server runs in B, or
/// behind ssh's forward); returns seconds, bytes, MB/s and the endpoints' CPU.
fn transfer(
    n: &Netns,
    r: Option<&Running>,
    target: &str,
    source: Option<&str>,
    port: u16,
    file: &Path,
    bytes: u64,
) -> Result<Transfer> {
    let bind = if r.map(|r| !r.pings).unwrap_or(false) {
        "127.0.0.1"
    } else {
        target
    };
    let mut server = n.wrap('b', Path::new("iperf3"));
    server
        .args(["-s", "-1", "-B", bind, "-p", "5201"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut server = server.spawn().context("cannot start iperf3")?;
    std::thread::sleep(Duration::from_millis(300));
    let client = || {
        let mut cmd = n.wrap('a', Path::new("iperf3"));
        cmd.args([
            "--connect-timeout",
            "15000",
            "-c",
            target,
            "-p",
            &port.to_string(),
            "-n",
            &bytes.to_string(),
            "-J",
            "-F",
        ])
        .arg(file);
        if let Some(s) = source {
            cmd.args(["-B", s]);
        }
        cmd.output().context("cannot run iperf3")
    };
    let (mut a0, mut b0) = r.map(|r| (cpu_of(&r.pids_a), cpu_of(&r.pids_b))).unwrap_or_default();
    let mut out = client();
    // A server not yet listening (a busy machine can take longer than the 300 ms to start
    // it) refuses at once: asked again, up to five times in all. The one-off server still
    // waits for its first client.
    for _ in 0..4 {
        let refused = out.as_ref().is_ok_and(|o| {
            serde_json::from_slice::<Value>(&o.stdout)
                .ok()
                .and_then(|v| v["error"].as_str().map(|e| e.contains("Connection refused")))
                .unwrap_or(false)
        });
        if !refused {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        (a0, b0) = r.map(|r| (cpu_of(&r.pids_a), cpu_of(&r.pids_b))).unwrap_or_default();
        out = client();
    }
    let (a1, b1) = r.map(|r| (cpu_of(&r.pids_a), cpu_of(&r.pids_b))).unwrap_or_default();
    let _ = server.kill();
    let _ = server.wait();
    let out = out?;
    let v: Value = serde_json::from_slice(&out.stdout).context("iperf3's JSON")?;
    if let Some(e) = v["error"].as_str() {
        bail!("iperf3: {e}");
    }
    let recv = &v["end"]["sum_received"];
    let secs = recv["seconds"].as_f64().unwrap_or(f64::NAN);
    let got = recv["bytes"].as_f64().unwrap_or(0.0);
    // iperf3's receiver counts until the sender's end message, so a few segments still in
    // flight can be missing from `bytes`; `bytes_sent` is the whole file.
    Ok(Transfer {
        bytes: got,
        bytes_sent: v["end"]["sum_sent"]["bytes"].as_u64(),
        seconds: secs,
        mb_per_s: got / secs / 1e6,
        sender_retransmits: v["end"]["sum_sent"]["retransmits"].as_u64(),
        // No process to read on a kernel data path (WireGuard's module): no figure, rather
        // than a 0 % that would read as free.
        cpu_a_pct: r.filter(|r| !r.pids_a.is_empty()).map(|_| (a1 - a0) / secs * 100.0),
        cpu_b_pct: r.filter(|r| !r.pids_b.is_empty()).map(|_| (b1 - b0) / secs * 100.0),
    })
}

/// The hostile client's address: beside the well-behaved client's, in its namespace.
const ADDR_HOSTILE: &str = "10.99.0.3";

/// What a tunnel's server listens on, and what its first message looks like.
fn hostile_target(tunnel: &str) -> hostile::Target {
    use hostile::Shape;
    let (udp, tcp) = match tunnel {
        "openvpn-static" | "openvpn-tls" => (vec![(1194, Shape::OpenVpn)], None),
        "wireguard" => (vec![(51820, Shape::WireGuard)], None),
        "ipsec" => (vec![(500, Shape::Ike), (4500, Shape::EspInUdp)], None),
        _ => (Vec::new(), Some(22022)),
    };
    hostile::Target {
        addr: ADDR_B.parse().expect("an IPv4 address"),
        udp,
        tcp,
        from: ADDR_HOSTILE.parse().expect("an IPv4 address"),
        spoof: tunnel
            .starts_with("openvpn")
            .then(|| SocketAddrV4::new(ADDR_A.parse().expect("an IPv4 address"), 1194)),
    }
}

/// What one configuration gave under attack: pings (when measured), the transfer, a new
/// login's time and tries (SSH), and the time a new handshake took until traffic crossed
/// the tunnel again (the UDP tunnels with a handshake).
type UnderAttack = (Option<Pings>, Transfer, Option<Result<(f64, u32)>>, Option<Result<f64>>);

/// The same pings and transfer again while hostile traffic runs; for SSH, also a new
/// well-behaved login (the stalled connections hold sshd's unauthenticated slots); for the
/// UDP tunnels with a handshake, a new session (its handshake's messages reach B among the
/// junk and the half handshakes). Says whether the well-behaved client was served and what
/// the traffic cost it.
#[allow(clippy::too_many_arguments)]
fn under_attack(
    n: &Netns,
    r: &mut Running,
    tunnel: &str,
    dir: &Path,
    sizes: &[u32],
    pings: u32,
    file: &Path,
    bytes: u64,
    calm_ping: Option<&Pings>,
    calm_transfer: &Transfer,
) -> item::Hostile {
    let mut out = item::Hostile::default();
    let result = (|| -> Result<()> {
        n.add_address('a', ADDR_HOSTILE)?;
        let h = hostile::Hostile::start(&n.a, &hostile_target(tunnel))?;
        // Let the junk reach a steady rate before the well-behaved client starts.
        std::thread::sleep(Duration::from_millis(500));
        let measured = (|| -> Result<UnderAttack> {
            let p = if r.pings {
                Some(ping(n, &r.target, r.source.as_deref(), sizes, pings)?)
            } else {
                None
            };
            if let Some(p) = &p {
                let (sent, got) = p.values().fold((0, 0), |(s, g), v| (s + v.sent, g + v.received));
                out.ping_loss = Some(1.0 - got as f64 / sent.max(1) as f64);
                if got * 10 < sent * 7 {
                    anyhow::bail!("{} of {sent} pings answered", got);
                }
            }
            let tr = transfer(n, Some(r), &r.target, r.source.as_deref(), r.port, file, bytes)?;
            let login = (tunnel == "ssh").then(|| new_ssh_login(n, dir));
            let renewed = r.renew.as_ref().map(|rn| renew_session(n, r, rn));
            Ok((p, tr, login, renewed))
        })();
        out.traffic = Some(h.stop()?);
        let (p, tr, login, renewed) = measured?;
        for c in r.children.iter_mut() {
            if let Ok(Some(st)) = c.try_wait() {
                anyhow::bail!("a tunnel process died under hostile traffic ({st}; logs in the work directory)");
            }
        }
        if let Some(p) = &p {
            let p50 = |p: Option<&Pings>| p.and_then(|p| p.get(&sizes[0])).map_or(f64::NAN, |x| x.p50_ms);
            out.latency_vs_calm = Some(p50(Some(p)) / p50(calm_ping));
        }
        out.throughput_vs_calm = Some(tr.mb_per_s / calm_transfer.mb_per_s);
        out.ping = Some(p);
        out.transfer = Some(tr);
        if let Some(login) = login {
            let (secs, attempts) = login?;
            out.new_login_s = Some(secs);
            out.new_login_attempts = Some(attempts.into());
        }
        if let Some(renewed) = renewed {
            out.new_handshake_s = Some(renewed?);
        }
        Ok(())
    })();
    match result {
        Ok(()) => out.served = true,
        Err(e) => {
            out.served = false;
            out.why = Some(format!("{e:#}"));
        }
    }
    out
}

/// Starts a fresh session between the ends and waits until traffic crosses it: seconds from
/// the start of the new handshake until a ping is answered (at most 60 s).
fn renew_session(n: &Netns, r: &Running, renew: &Renew) -> Result<f64> {
    const LIMIT: Duration = Duration::from_secs(60);
    let t0 = Instant::now();
    match renew {
        Renew::Commands(cmds) => {
            for c in cmds {
                run_cmd(n.wrap('a', Path::new(&c[0])).args(&c[1..]))
                    .with_context(|| format!("no new session: `{}` failed", c.join(" ")))?;
            }
        }
        Renew::Signal {
            pid,
            signal,
            log,
            marker,
        } => {
            let completed = || std::fs::read_to_string(log).unwrap_or_default().matches(marker).count();
            let before = completed();
            // SAFETY: a signal to our own child process.
            unsafe { libc::kill(*pid as i32, *signal) };
            wait_for("a new session", LIMIT, || Ok(completed() > before)).context("no new handshake")?;
        }
    }
    loop {
        let mut cmd = n.wrap('a', Path::new("ping"));
        cmd.args(["-n", "-c", "1", "-W", "1"]);
        if let Some(src) = &r.source {
            cmd.args(["-I", src]);
        }
        cmd.arg(&r.target);
        if cmd.output().map(|o| o.status.success()).unwrap_or(false) {
            return Ok(t0.elapsed().as_secs_f64());
        }
        if t0.elapsed() > LIMIT {
            bail!("no traffic within {} s of a new handshake", LIMIT.as_secs());
        }
        // A ping refused at once (no route while the session is down) is not a wait.
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fresh SSH login from the well-behaved client's address, with the configuration's
/// key, retried as a person would (sshd's MaxStartups drops some new connections at random
/// while many are unauthenticated): (seconds until one succeeded, attempts), or why the
/// last of 5 attempts failed.
fn new_ssh_login(n: &Netns, dir: &Path) -> Result<(f64, u32)> {
    let t0 = Instant::now();
    let mut why = String::new();
    for attempt in 1..=5 {
        let out = ssh_client(n, dir)
            .args([
                "-o",
                "ConnectTimeout=20",
                "-b",
                ADDR_A,
                "-p",
                "22022",
                &format!("root@{ADDR_B}"),
                "true",
            ])
            .stdin(Stdio::null())
            .output()
            .context("cannot run ssh")?;
        if out.status.success() {
            return Ok((t0.elapsed().as_secs_f64(), attempt));
        }
        why = String::from_utf8_lossy(&out.stderr)
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .to_string();
        std::thread::sleep(Duration::from_millis(200 * attempt as u64));
    }
    anyhow::bail!("5 new SSH logins failed; the last: {why}")
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The study's settings, checked.
struct Study {
    tunnels: Vec<String>,
    couples: Vec<String>,
    sizes: Vec<u32>,
    pings: u32,
    bytes: u64,
    /// Rounds: each configuration measured this many times, interleaved.
    repeats: u32,
    /// What the kernel offers, and the path each tunnel takes.
    kernel: datapath::Kernel,
    paths: Vec<(String, datapath::Path)>,
}

impl Study {
    fn path(&self, tunnel: &str) -> datapath::Path {
        self.paths
            .iter()
            .find(|(t, _)| t == tunnel)
            .map_or(datapath::Path::User, |(_, p)| *p)
    }
}

/// One configuration of the plan: tunnel, couple, AES masked, and why it cannot run (if so).
type Planned = (String, String, bool, Option<&'static str>);

/// Checks the arguments, root and the programs the chosen tunnels need.
fn check(a: &TunnelArgs) -> Result<Study> {
    let tunnels = split(&a.tunnel);
    let couples = split(&a.couple);
    for t in &tunnels {
        if !TUNNELS.contains(&t.as_str()) {
            bail!("unknown tunnel `{t}` (one of: {})", TUNNELS.join(", "));
        }
    }
    for c in &couples {
        if !COUPLES.contains(&c.as_str()) {
            bail!("unknown couple `{c}` (one of: {})", COUPLES.join(", "));
        }
    }
    let sizes: Vec<u32> = split(&a.sizes)
        .iter()
        .map(|s| {
            s.parse::<u32>()
                .ok()
                .filter(|n| (1..=65_000).contains(n))
                .with_context(|| format!("bad ping size `{s}` (1 to 65000 bytes)"))
        })
        .collect::<Result<_>>()?;
    if unsafe { libc::geteuid() } != 0 {
        bail!("cryptoscope tunnel needs root: it creates network namespaces, TUN devices and runs VPN daemons (run it as root)");
    }
    let want = datapath::Want::parse(&a.data_path).context("--data-path is auto, kernel or user")?;
    let kernel = if tunnels.iter().any(|t| t == "ipsec" || t == "wireguard") {
        datapath::probe()
    } else {
        datapath::not_probed()
    };
    let mut paths = Vec::new();
    for t in &tunnels {
        let p = datapath::choose(t, &kernel, want).map_err(anyhow::Error::msg)?;
        paths.push((t.clone(), p));
    }
    for (t, path) in &paths {
        for b in binary_for(t) {
            // The kernel's WireGuard needs `wg` and `ip`, no daemon.
            if *b == "wireguard-go" && *path == datapath::Path::Kernel {
                continue;
            }
            if !have(b) {
                bail!("{t} needs {b}, which is not installed (scripts/setup.sh installs it)");
            }
        }
    }
    for b in ["ip", "iperf3", "ping"] {
        if !have(b) {
            bail!("cryptoscope tunnel needs {b} (scripts/setup.sh installs it)");
        }
    }
    let pings = a.pings.unwrap_or(if a.quick { 10 } else { 100 });
    let bytes = a.bytes.unwrap_or(if a.quick { 32 << 20 } else { 256 << 20 });
    let repeats = a.repeats.unwrap_or(if a.quick { 3 } else { 5 });
    if pings == 0 || bytes == 0 || repeats == 0 {
        bail!("--pings, --bytes and --repeats must be positive");
    }
    Ok(Study {
        tunnels,
        couples,
        sizes,
        pings,
        bytes,
        repeats,
        kernel,
        paths,
    })
}

/// The file to transfer: random bytes, so nothing compresses.
fn write_payload(file: &Path, bytes: u64) -> Result<()> {
    let mut f = std::fs::File::create(file)?;
    let mut src = std::fs::File::open("/dev/urandom")?;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let k = left.min(buf.len() as u64) as usize;
        std::io::Read::read_exact(&mut src, &mut buf[..k])?;
        std::io::Write::write_all(&mut f, &buf[..k])?;
        left -= k as u64;
    }
    Ok(())
}

/// In order: (tunnel, couple, accel), with what cannot run listed where it belongs.
fn plan(s: &Study, modes: &[bool]) -> Vec<Planned> {
    let mut plan = Vec::new();
    for t in &s.tunnels {
        for c in &s.couples {
            match unsupported(t, c) {
                Some(why) => plan.push((t.clone(), c.clone(), false, Some(why))),
                None => {
                    for &soft in modes {
                        let why = datapath::soft_note(t, s.path(t)).filter(|_| soft);
                        plan.push((t.clone(), c.clone(), soft, why));
                    }
                }
            }
        }
    }
    plan
}

/// What one configuration measured: its pings (none through SSH), the transfer, the
/// tunnel's software, and the same under hostile traffic (`--hostile`).
struct Measured {
    ping: Option<Pings>,
    transfer: Transfer,
    software: String,
    hostile: Option<item::Hostile>,
}

/// What one configuration needs besides its tunnel, couple and mode.
struct Bench<'a> {
    a: &'a TunnelArgs,
    s: &'a Study,
    driver: &'a Path,
    file: &'a Path,
}

impl Bench<'_> {
    /// Sets one configuration up in fresh namespaces, measures it (and under attack with
    /// --hostile), and tears it all down.
    fn configuration(&self, t: &str, c: &str, soft: bool, dir: &Path, hostile: bool) -> Result<Measured> {
        let (a, s) = (self.a, self.s);
        let n = Netns::create("cstun", a.rate.as_deref())?;
        let mut r = match t {
            "openvpn-static" => openvpn(&n, dir, false, false, c, soft, self.driver)?,
            "openvpn-tls" => openvpn(&n, dir, true, !a.no_tls_crypt, c, soft, self.driver)?,
            "wireguard" => wireguard(&n, dir, s.path(t) == datapath::Path::Kernel)?,
            "ipsec" => ipsec(&n, dir, c, soft, s.path(t) == datapath::Path::Kernel)?,
            _ => ssh(&n, dir, c, soft)?,
        };
        let p = if r.pings {
            Some(ping(&n, &r.target, r.source.as_deref(), &s.sizes, s.pings)?)
        } else {
            None
        };
        let tr = transfer(&n, Some(&r), &r.target, r.source.as_deref(), r.port, self.file, s.bytes)?;
        let software = r.software.clone();
        let hostile = if hostile {
            Some(under_attack(
                &n,
                &mut r,
                t,
                dir,
                &s.sizes,
                s.pings,
                self.file,
                s.bytes,
                p.as_ref(),
                &tr,
            ))
        } else {
            None
        };
        drop(r);
        drop(n);
        Ok(Measured {
            ping: p,
            transfer: tr,
            software,
            hostile,
        })
    }
}

/// Puts a configuration's outcome into its row; returns whether it failed.
fn record(ctx: &Ctx, row: &mut Row, label: &str, result: Result<Measured>) -> bool {
    match result {
        Ok(m) => {
            let mut failed = false;
            row.status = Status::Ok;
            row.ping = Some(m.ping);
            row.transfer = Some(m.transfer);
            row.software = Some(m.software);
            if let Some(h) = m.hostile {
                if !h.served {
                    failed = true;
                    errln!(
                        ctx,
                        "error: {label}: not served under hostile traffic: {}",
                        h.why.as_deref().unwrap_or("?")
                    );
                }
                row.hostile = Some(h);
            }
            if row.pings().is_none() {
                row.ping_note = Some("SSH forwards TCP streams, not IP packets: no ping through it".into());
            }
            failed
        }
        Err(e) => {
            errln!(ctx, "error: {label}: {e:#}");
            row.status = Status::Failed;
            row.error = Some(format!("{e:#}"));
            true
        }
    }
}

/// Throughput and latency of every measured row against the baseline (the first row): the
/// medians over the repeats.
fn overheads(rows: &mut [Row]) {
    let base = rows[0].clone();
    let mb_per_s = |r: &Row| match &r.repeats {
        Some(rep) => rep.mb_per_s.median,
        None => r.transfer.as_ref().map_or(f64::NAN, |t| t.mb_per_s),
    };
    let p50 = |r: &Row, size: &u32| -> Option<f64> {
        match r.repeats.as_ref().and_then(|rep| rep.ping_p50_ms.get(size)) {
            Some(sp) => Some(sp.median),
            None => r.pings().and_then(|p| p.get(size)).map(|p| p.p50_ms),
        }
    };
    for r in rows.iter_mut().skip(1) {
        if r.status != Status::Ok {
            continue;
        }
        r.throughput_vs_plain = Some(mb_per_s(r) / mb_per_s(&base));
        if let Some(p) = r.pings() {
            let lat = p
                .keys()
                .map(|size| {
                    let ours = p50(r, size).unwrap_or(f64::NAN);
                    (*size, ours / p50(&base, size).unwrap_or(f64::NAN))
                })
                .collect();
            r.latency_vs_plain = Some(lat);
        }
    }
}

/// Runs the study; returns (setup, rows, exit code).
pub fn run(a: &TunnelArgs, ctx: &Ctx) -> Result<(Setup, Vec<Row>, i32)> {
    let s = check(a)?;
    let driver = ctx.workers.dir().join("cryptoscope-tls");
    // Keys and configurations live in a private 0700 directory with an unpredictable name,
    // created fresh (never reused) and removed with everything in it on the way out; or in
    // the directory the user names with --workdir, kept.
    let (work, _private) = cryptoscope_engine::util::work_dir(a.workdir.as_deref(), "tunnel")?;
    let file = work.join("payload.bin");
    write_payload(&file, s.bytes)?;
    let modes: Vec<bool> = match a.accel.as_str() {
        "off" => vec![true],
        "both" => vec![false, true],
        _ => vec![false],
    };
    let catching = crate::stop::catch();
    let plan = plan(&s, &modes);
    let bench = Bench {
        a,
        s: &s,
        driver: &driver,
        file: &file,
    };
    let (mut rows, mut code) = rounds::measure(&bench, &plan, &work, ctx)?;
    drop(catching);
    if crate::stop::requested() {
        code = 1;
        errln!(
            ctx,
            "interrupted: daemons and namespaces removed; what was measured is kept"
        );
    }
    if rows.is_empty() {
        bail!("interrupted before the baseline was measured");
    }
    overheads(&mut rows);
    let setup = Setup {
        network: match &a.rate {
            Some(r) => format!("veth between two namespaces, tbf {r}"),
            None => "veth between two namespaces".into(),
        },
        pings_per_size: s.pings,
        transfer_bytes: s.bytes,
        transfer: "iperf3 -F: a file of random bytes, TCP through the tunnel (ssh: through a -L forward)".into(),
        cpu: "CPU of each endpoint's tunnel processes during the transfer (/proc/PID/stat), % of one core; A sends, B receives".into(),
        mask: MASK_AES.into(),
        openvpn_tls_crypt: Some(s.tunnels.iter().any(|t| t == "openvpn-tls") && !a.no_tls_crypt),
        hostile: Some(a.hostile),
        repeats: Some(s.repeats),
        kernel: s
            .tunnels
            .iter()
            .any(|t| t == "ipsec" || t == "wireguard")
            .then(|| datapath::describe(&s.kernel)),
        interrupted: crate::stop::requested(),
        sizes: s.sizes,
    };
    Ok((setup, rows, code))
}

#[cfg(test)]
mod secret_tests {
    #[test]
    fn pre_shared_keys_are_48_hex_digits_and_fresh() {
        let (a, b) = (super::daemons::hex_secret(), super::daemons::hex_secret());
        assert_eq!(a.len(), 48);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a.as_str(), b.as_str());
    }
}
