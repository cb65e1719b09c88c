//! `cryptoscope openvpn-server`: the OpenVPN server study as the BA411E chapter ran it. An
//! OpenVPN 2.6 server in TLS mode with RSA certificates, TLS 1.2 DHE-RSA with the RFC 7919
//! 2048-bit group and an AES-256-CBC + HMAC-SHA256 data channel; ten clients (by default),
//! each starting whole OpenVPN client processes one after another, paced at one connection a
//! second or back to back. Per cell (RSA size × AES instructions on/masked × pace): the time
//! each connection takes, the connections completed a minute, and the server's CPU.
//!
//! Every cell gets fresh namespaces and a fresh server; every process is stopped and every
//! namespace removed at its end, also on failure and Ctrl-C (`crate::stop`).

use anyhow::{bail, Context, Result};
use clap::Args;
use cryptoscope_measure::pace::Pace;
use cryptoscope_model::apps::openvpn::{accel, load, Row, Setup, Status, Times};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

mod cell;
mod clients;

pub use cell::run;

use crate::netns::{run_cmd, Netns, ADDR_B};
use crate::tls::MASK_AES;
use crate::tunnel::daemons::{check_alive, spawn_logged, version_of, wait_for, Procs};

/// The RSA sizes a cell can have.
pub const RSA: &[u32] = &[1024, 2048, 3072, 4096];
/// The one control-channel suite the server and the clients allow (OpenVPN's IANA name).
const TLS_CIPHER: &str = "TLS-DHE-RSA-WITH-AES-256-GCM-SHA384";
/// The one data channel: what every connection's log must name.
const DATA_CHANNEL: &str = "cipher 'AES-256-CBC', auth 'SHA256'";
/// What the server allows so that its own limits are not what is measured: new
/// connections and first replies a second (OpenVPN 2.6's defaults would cap the unpaced
/// cells), and clients at once.
const SERVER_LIMITS: &[&str] = &[
    "--connect-freq",
    "100000",
    "1",
    "--connect-freq-initial",
    "100000",
    "1",
    "--max-clients",
    "10000",
];

#[derive(Args, Clone)]
pub struct OpenvpnServerArgs {
    /// RSA sizes of the certificates (the CA's, the server's and the clients'),
    /// comma-separated: 1024, 2048, 3072, 4096.
    #[arg(long, default_value = "1024,2048,4096", value_name = "LIST")]
    pub rsa: String,
    /// Concurrent clients, each starting one OpenVPN client process after another.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub clients: u32,
    /// Loads, comma-separated: a number is each client's pace in connections a second
    /// (the study's `1`: ten clients make at most 600 a minute); `off` starts each
    /// connection as soon as the last is up. A start is never early; one that comes due
    /// while the client's last connection still runs is taken late, and counted.
    #[arg(long, default_value = "1,off", value_name = "LIST")]
    pub pace: String,
    /// Measured seconds per cell, after a warm-up of 2 s (default 30; --quick 8). The
    /// window lasts until --min-connections completed in it (at most 120 s more).
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<f64>,
    /// Connections a cell's window holds at least, for its median and 95th percentile.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub min_connections: u64,
    /// Short windows: a check that everything works.
    #[arg(long)]
    pub quick: bool,
    /// With the CPU's AES and carry-less multiply instructions (on), masked through
    /// OPENSSL_ia32cap in the server and every client (off), or each cell both ways. The
    /// mask does not reach RSA or Diffie-Hellman: no accelerator for those is asked for.
    #[arg(long, default_value = "both", value_parser = ["on", "off", "both"])]
    pub accel: String,
    /// Keep certificates, logs and the DH file here (default: a private temporary
    /// directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Also write every cell as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[arg(long = "db", value_name = "PATH|URL", help = cryptoscope_engine::args::DB_HELP, long_help = cryptoscope_engine::args::DB_LONG_HELP)]
    pub db: Option<String>,
}

/// The study's settings, checked.
struct Study {
    rsa: Vec<u32>,
    paces: Vec<Option<f64>>,
    modes: Vec<bool>,
    clients: u32,
    warmup: f64,
    window: f64,
    min: u64,
    /// The server's CPU and the clients' (when there are at least two).
    server_cpu: Option<usize>,
    client_cpus: Vec<usize>,
}

fn split(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn check(a: &OpenvpnServerArgs) -> Result<Study> {
    let rsa = split(&a.rsa)
        .map(|s| {
            s.trim_start_matches("rsa-")
                .parse::<u32>()
                .ok()
                .filter(|b| RSA.contains(b))
                .with_context(|| format!("unknown RSA size `{s}` (one of: 1024, 2048, 3072, 4096)"))
        })
        .collect::<Result<Vec<_>>>()?;
    let paces = split(&a.pace)
        .map(|s| match s {
            "off" | "unpaced" => Ok(None),
            _ => s
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0 && *r <= 1000.0)
                .map(Some)
                .with_context(|| format!("bad pace `{s}` (connections a second per client, up to 1000, or off)")),
        })
        .collect::<Result<Vec<_>>>()?;
    if rsa.is_empty() || paces.is_empty() {
        bail!("--rsa and --pace need at least one value");
    }
    if !(1..=200).contains(&a.clients) {
        bail!("--clients is 1 to 200");
    }
    let window = a.window.unwrap_or(if a.quick { 8.0 } else { 30.0 });
    if !(window.is_finite() && window > 0.0) {
        bail!("--window must be a positive number of seconds");
    }
    if a.min_connections == 0 {
        bail!("--min-connections must be positive");
    }
    if unsafe { libc::geteuid() } != 0 {
        bail!("cryptoscope openvpn-server needs root: it creates network namespaces and TUN devices (run it as root)");
    }
    for b in ["openvpn", "openssl", "ip"] {
        if !crate::tunnel::have(b) {
            bail!("cryptoscope openvpn-server needs {b}, which is not installed (scripts/setup.sh installs it)");
        }
    }
    let cpus = allowed_cpus();
    let (server_cpu, client_cpus) = match cpus.split_last() {
        Some((last, rest)) if !rest.is_empty() => (Some(*last), rest.to_vec()),
        _ => (None, cpus.clone()),
    };
    Ok(Study {
        rsa,
        paces,
        modes: match a.accel.as_str() {
            "on" => vec![false],
            "off" => vec![true],
            _ => vec![false, true],
        },
        clients: a.clients,
        warmup: if a.quick { 1.0 } else { 2.0 },
        window,
        min: a.min_connections,
        server_cpu,
        client_cpus,
    })
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|c| unsafe { libc::CPU_ISSET(*c, &set) })
        .collect()
}

/// Runs `cmd`'s process on `cpus` only (none: anywhere).
fn pin(cmd: &mut Command, cpus: &[usize]) {
    if cpus.is_empty() {
        return;
    }
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for c in cpus {
        unsafe { libc::CPU_SET(*c, &mut set) };
    }
    use std::os::unix::process::CommandExt;
    // SAFETY: sched_setaffinity is async-signal-safe and touches only the copied set.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// What both ends are told: keys, TLS 1.2 with DHE-RSA only, the data channel.
fn common_args(keys: &Path, bits: u32) -> Vec<String> {
    let k = |f: &str| keys.join(f).display().to_string();
    let mut v: Vec<String> = [
        "--dev",
        "tun",
        "--proto",
        "udp",
        "--tls-version-max",
        "1.2",
        "--tls-cipher",
        TLS_CIPHER,
        "--data-ciphers",
        "AES-256-CBC",
        "--auth",
        "SHA256",
        "--disable-dco",
        "--machine-readable-output",
        "--verb",
        "3",
    ]
    .map(String::from)
    .to_vec();
    v.extend([
        "--ca".into(),
        k("ca.pem"),
        "--cert".into(),
        k("chain.pem"),
        "--key".into(),
        k("key.pem"),
    ]);
    if bits < 2048 {
        // OpenSSL's default security level refuses RSA under 2048 bits.
        v.extend(["--tls-cert-profile".into(), "insecure".into()]);
    }
    v
}

fn server_args(keys: &Path, dh: &Path, bits: u32) -> Vec<String> {
    let mut v = common_args(keys, bits);
    v.extend(
        [
            "--mode",
            "server",
            "--tls-server",
            "--topology",
            "subnet",
            "--local",
            ADDR_B,
            "--port",
            "1194",
            "--server",
            "10.9.0.0",
            "255.255.0.0",
            // Every client presents the same certificate.
            "--duplicate-cn",
        ]
        .map(String::from),
    );
    v.extend(["--dh".into(), dh.display().to_string()]);
    v.extend(SERVER_LIMITS.iter().map(|s| s.to_string()));
    v
}

fn client_args(keys: &Path, bits: u32) -> Vec<String> {
    let mut v = common_args(keys, bits);
    v.extend(
        [
            "--client",
            "--remote",
            ADDR_B,
            "1194",
            "--nobind",
            "--verify-x509-name",
            "localhost",
            "name",
            // Told to stop, a client tells the server, which then frees its slot at once.
            "--explicit-exit-notify",
            "1",
        ]
        .map(String::from),
    );
    v
}

/// Sleeps `secs`, or less when Ctrl-C comes.
fn nap(secs: f64) {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < until && !crate::stop::requested() {
        std::thread::sleep(Duration::from_millis(20).min(until.saturating_duration_since(Instant::now())));
    }
}

/// CPU seconds of this process's reaped children.
fn children_cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Nearest-rank summary in ms.
fn times(mut v: Vec<f64>) -> Times {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if v.is_empty() {
            f64::NAN
        } else {
            v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
        }
    };
    Times {
        n: v.len() as u64,
        min_ms: q(0.0),
        p50_ms: q(0.5),
        p95_ms: q(0.95),
        max_ms: v.last().copied().unwrap_or(f64::NAN),
    }
}

/// Why a connection's channels are not the study's, or `None` when they are.
fn wrong_channels(control: &str, data: &str, bits: u32) -> Option<String> {
    let want = [
        "TLSv1.2".to_string(),
        "DHE-RSA-".to_string(),
        format!("peer certificate: {bits} bits RSA"),
        "peer temporary key: 2048 bits DH".to_string(),
    ];
    if let Some(missing) = want.iter().find(|w| !control.contains(w.as_str())) {
        return Some(format!(
            "a client's control channel was \"{control}\": no `{missing}` (TLS 1.2 DHE-RSA with a 2048-bit group and RSA-{bits} certificates asked for)"
        ));
    }
    (data != DATA_CHANNEL).then(|| format!("a client's data channel was \"{data}\", not \"{DATA_CHANNEL}\""))
}
