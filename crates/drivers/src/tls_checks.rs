//! What `cryptoscope tls` checks before it starts (one-line errors, exit 2), the
//! (delay, loss) cells it sweeps, the network it builds, and the latency percentiles it
//! derives from a count's handshakes.

use crate::netem;
use crate::netns::Netns;
use crate::tls::{is_root, split, TlsArgs};
use anyhow::{bail, Result};
use cryptoscope_model::apps::tls::Measurement;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Every check of the arguments that needs no server; the cells to sweep and, with cells,
/// the mechanism that makes their delay and loss.
pub(crate) fn check(a: &TlsArgs) -> Result<(Vec<netem::Conditions>, Option<netem::Mechanism>)> {
    if a.clients == Some(0) {
        bail!("--clients must be at least 1");
    }
    if a.count == Some(0) {
        bail!("--count must be at least 1");
    }
    if (a.rate.is_some() || a.delay.is_some() || a.loss.is_some() || a.mtu.is_some()) && !a.netns {
        bail!("--rate, --delay, --loss and --mtu shape the veth pair: add --netns");
    }
    let cells = cells(a)?;
    if let Some(m) = a.mtu {
        if !(576..=65535).contains(&m) {
            bail!("--mtu {m}: an IPv4 link's MTU is between 576 and 65535");
        }
    }
    if let Some(r) = &a.rate {
        if netem::parse_rate(r).is_none() {
            bail!("--rate `{r}` is not a rate (e.g. 100mbit, 1gbit, 10mbps)");
        }
    }
    if a.netns && !is_root() {
        bail!("--netns needs root (it creates network namespaces and a veth pair); run as root or drop --netns to use loopback");
    }
    if !(a.peer == "rustls" || a.peer == "openssl" || a.peer.starts_with("openssl-")) {
        bail!(
            "unknown peer `{}` (rustls, openssl, or openssl-X.Y: openssl-3.5, or the system's version)",
            a.peer
        );
    }
    if a.client == "rustls" && !a.peer.starts_with("openssl-") {
        bail!("--client rustls is for the openssl-X.Y peers (the rustls peer's clients are rustls already)");
    }
    if a.hello_retry && a.peer != "rustls" {
        bail!("--hello-retry needs the rustls peer (its client offers X25519 first)");
    }
    if a.hello_retry
        && a.group
            .as_deref()
            .is_none_or(|g| split(g).iter().any(|x| x.eq_ignore_ascii_case("X25519")))
    {
        bail!("--hello-retry offers X25519 first, so X25519 cannot be the group: name the others with --group");
    }
    if a.peer == "openssl" && a.request > 0 {
        bail!("--request needs the rustls peer (nginx does not echo)");
    }
    if a.peer == "openssl" && Command::new("nginx").arg("-v").output().is_err() {
        bail!("--peer openssl needs nginx (run scripts/setup.sh, which installs it)");
    }
    let mechanism = if cells.is_empty() {
        None
    } else {
        if Command::new("iptables").arg("-V").output().is_err() && a.emulator != "netem" {
            bail!("--delay and --loss need iptables where the kernel has no netem (run scripts/setup.sh, which installs it)");
        }
        Some(netem::choose(&a.emulator)?)
    };
    Ok((cells, mechanism))
}

/// The namespaces (with `--netns`), shaped by `--rate` and `--mtu`, and the network in words.
pub(crate) fn network(a: &TlsArgs, mechanism: Option<netem::Mechanism>) -> Result<(Option<Netns>, String)> {
    let netns = if a.netns {
        // netem carries the rate itself; tbf otherwise.
        let tbf = if mechanism == Some(netem::Mechanism::Netem) {
            None
        } else {
            a.rate.as_deref()
        };
        let n = Netns::create("cstls", tbf)?;
        if let Some(m) = a.mtu {
            n.set_mtu(m)?;
        }
        Some(n)
    } else {
        None
    };
    let mut network = match (&netns, &a.rate) {
        (Some(n), Some(r)) if mechanism == Some(netem::Mechanism::Netem) => {
            format!("veth between namespaces {} and {}, netem rate {r}", n.a, n.b)
        }
        (Some(n), Some(r)) => format!("veth between namespaces {} and {}, tbf {r}", n.a, n.b),
        (Some(n), None) => format!("veth between namespaces {} and {}", n.a, n.b),
        _ => "loopback".to_string(),
    };
    if let Some(m) = a.mtu {
        network += &format!(", MTU {m}");
    }
    Ok((netns, network))
}

/// p25, p50, p75 and p95 of the connection times the load generator kept (with `--count`),
/// each with its distribution-free 95 % interval.
pub(crate) fn latency_of(m: &Measurement) -> Option<cryptoscope_model::apps::tls::Latency> {
    use cryptoscope_measure::stats::{quantile_ci_order_stats, quantile_sorted};
    let each = m.rest.get("connection_ns_each")?.as_array()?;
    let mut v: Vec<f64> = each.iter().filter_map(Value::as_f64).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let percentiles = [25u8, 50, 75, 95]
        .into_iter()
        .map(|p| {
            let q = p as f64 / 100.0;
            let (lo, hi) = quantile_ci_order_stats(&v, q);
            cryptoscope_model::apps::tls::Percentile {
                p,
                ns: quantile_sorted(&v, q),
                low_ns: lo,
                high_ns: hi,
            }
        })
        .collect();
    Some(cryptoscope_model::apps::tls::Latency {
        handshakes: v.len() as u64,
        percentiles,
        interval: "95 %, distribution-free: order statistics at ranks n·q ± 1.96·√(n·q·(1−q)) (Conover)".into(),
    })
}

/// Sequential handshakes per configuration and (delay, loss) cell when the user names no
/// count: Paquin, Stebila and Tamvada timed 50 × 100 per cell; 200 keeps the paper's grid
/// (4 delays × 8 loss rates) within hours on two cores while giving p95 ten handshakes above it.
pub const DEFAULT_COUNT_UNDER_CONDITIONS: u64 = 200;

/// The (delay, loss) cells of `--delay` × `--loss`, delays outer; none without either.
pub(crate) fn cells(a: &TlsArgs) -> Result<Vec<netem::Conditions>> {
    if a.delay.is_none() && a.loss.is_none() {
        return Ok(Vec::new());
    }
    let delays = match &a.delay {
        Some(d) => netem::parse_list(d, netem::parse_delay).map_err(|e| anyhow::anyhow!("--delay: {e}"))?,
        None => vec![Duration::ZERO],
    };
    let losses = match &a.loss {
        Some(l) => netem::parse_list(l, netem::parse_loss).map_err(|e| anyhow::anyhow!("--loss: {e}"))?,
        None => vec![0.0],
    };
    Ok(delays
        .iter()
        .flat_map(|&delay| {
            losses.iter().map(move |&loss| netem::Conditions {
                delay,
                loss,
                seed: a.seed,
            })
        })
        .collect())
}

/// How each configuration is loaded: warm-up and duration (seconds), clients, handshakes
/// per client under delay or loss (`conditions`), and server threads.
pub(crate) fn load(a: &TlsArgs, conditions: bool) -> Result<(f64, f64, usize, Option<u64>, usize)> {
    let (warmup, duration) = (
        a.warmup.unwrap_or(if a.quick { 0.3 } else { 2.0 }),
        a.duration.unwrap_or(if a.quick { 1.0 } else { 10.0 }),
    );
    if duration.is_nan() || duration <= 0.0 || warmup.is_nan() || warmup < 0.0 {
        bail!("--duration must be positive and --warmup not negative");
    }
    if a.pace.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        bail!("--pace must be a positive number of handshakes a second per client");
    }
    if a.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let clients = a.clients.unwrap_or(if conditions { 1 } else { 10 });
    let count = a.count.or(conditions.then_some(DEFAULT_COUNT_UNDER_CONDITIONS));
    let threads = a
        .server_threads
        .unwrap_or(if a.peer == "openssl" { cpus } else { clients.max(cpus) });
    Ok((warmup, duration, clients, count, threads))
}
