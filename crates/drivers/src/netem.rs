//! Network conditions on the veth pair between two namespaces: one-way delay and packet loss.
//!
//! Where the kernel has netem (`sch_netem`), `tc qdisc … netem` does it. Where it has not
//! (our machines), this module's emulator does, built on what the kernel has: an iptables
//! rule in each namespace's raw PREROUTING hook hands every IPv4 packet arriving on the veth
//! to an NFQUEUE, and a thread of ours, living in that namespace, holds each packet for the
//! delay before accepting it, or drops it when the loss generator says so. Only the delay
//! is written here; queueing, fragmentation and delivery stay the kernel's.
//!
//! Traps avoided on purpose:
//! - Arriving packets are delayed (the receiver's PREROUTING), not departing ones: a delay
//!   on the sender's way out would hold its socket buffers and TCP small queues would
//!   throttle it.
//! - The kernel queue is sized for the bandwidth-delay product ([`queue_len`]); it fails
//!   closed (no `bypass`, no fail-open), and every packet the kernel dropped because the
//!   queue or our socket was full is counted ([`DirectionStats::overflowed`]), so a result
//!   can never hide a loss that was not asked for.
//! - Losses come from a seeded generator ([`LossPattern`]): the n-th packet in a direction
//!   is dropped or not whatever the group, so every group meets the same pattern.

use crate::flights::Flows;
use anyhow::{bail, Context, Result};
use std::collections::VecDeque;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// A one-way delay, e.g. `20ms`, `2.684ms`, `1s`, `500us` (a bare number is milliseconds).
pub fn parse_delay(s: &str) -> Result<Duration> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1e-3)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("`{s}` is not a delay (e.g. 20ms, 2.684ms, 1s)"))?;
    if !v.is_finite() || v < 0.0 {
        bail!("delay `{s}` must be a finite time of at least 0");
    }
    let secs = v * scale;
    if secs > 10.0 {
        bail!("delay `{s}` is over 10 s: no handshake would finish");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A loss rate in percent, e.g. `1`, `2.5%`, `0`; below 100.
pub fn parse_loss(s: &str) -> Result<f64> {
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("`{s}` is not a loss rate in percent (e.g. 0, 1, 2.5%)"))?;
    if !v.is_finite() || !(0.0..100.0).contains(&v) {
        bail!("loss `{s}` must be at least 0 % and below 100 %");
    }
    Ok(v)
}

/// A comma-separated list of values, each parsed by `one`; at least one value.
pub fn parse_list<T>(s: &str, one: fn(&str) -> Result<T>) -> Result<Vec<T>> {
    let items: Vec<&str> = s.split(',').map(str::trim).filter(|x| !x.is_empty()).collect();
    if items.is_empty() {
        bail!("`{s}` is an empty list");
    }
    items.into_iter().map(one).collect()
}

/// Which packets to drop: the n-th packet of a direction is dropped when the n-th
/// little-endian 32-bit word of a ChaCha20 keystream (RFC 8439; key = the seed as 8
/// little-endian bytes then zeros, nonce = the direction's number, counter from 0) is below
/// `loss × 2³²`. The same seed, direction and rate drop the same packets every time.
pub struct LossPattern {
    cipher: chacha20::ChaCha20,
    threshold: u64,
}

impl LossPattern {
    /// `loss` in percent.
    pub fn new(seed: u64, direction: u8, loss: f64) -> LossPattern {
        use chacha20::cipher::KeyIvInit;
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut nonce = [0u8; 12];
        nonce[0] = direction;
        LossPattern {
            cipher: chacha20::ChaCha20::new(&key.into(), &nonce.into()),
            threshold: (loss / 100.0 * 4_294_967_296.0).round() as u64,
        }
    }

    /// The next packet's draw (for the tests).
    pub fn next_word(&mut self) -> u32 {
        use chacha20::cipher::StreamCipher;
        let mut w = [0u8; 4];
        self.cipher.apply_keystream(&mut w);
        u32::from_le_bytes(w)
    }

    /// Whether the next packet is dropped.
    pub fn drops_next(&mut self) -> bool {
        (self.next_word() as u64) < self.threshold
    }
}

/// The emulator's kernel queue length: twice the packets in flight over the delay at the
/// link's rate (full-size 1,500-byte packets; 1 Gbit/s when no rate is set), at least the
/// kernel's default of 1,024. A 1 Gbit/s link delayed 100 ms one way holds 8,334 packets.
pub fn queue_len(delay: Duration, rate_bits: Option<f64>) -> u32 {
    let rate = rate_bits.unwrap_or(1e9);
    let in_flight = rate * delay.as_secs_f64() / (8.0 * 1500.0);
    ((2.0 * in_flight).ceil() as u64).clamp(1024, 1 << 20) as u32
}

/// A tc rate (`100mbit`, `1gbit`, `512kbit`, `10mbps`) in bits per second.
pub fn parse_rate(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, unit) = t.split_at(split);
    let v: f64 = n.parse().ok()?;
    let m = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        _ => return None,
    };
    Some(v * m)
}

pub use cryptoscope_model::apps::tls::DirectionStats;

/// The conditions of one cell of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    pub delay: Duration,
    /// Percent.
    pub loss: f64,
    pub seed: u64,
}

impl Conditions {
    /// The delay in milliseconds as it was written: 39.224, not the 39.224000000000004 that
    /// seconds × 1000 makes of it (one division of exact integers rounds once).
    pub fn millis(&self) -> f64 {
        self.delay.as_nanos() as f64 / 1e6
    }
}

/// The NFQUEUE emulator on one namespace's end of the veth pair: packets arriving there
/// are delayed and dropped. Stopped (rules removed, thread joined) on [`Emulator::stop`] or
/// drop.
pub struct Emulator {
    ns: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<DirectionStats>>>,
}

impl Emulator {
    /// Starts delaying and dropping the IPv4 packets that arrive on `dev` in namespace `ns`.
    /// `direction`: 0 for a→b, 1 for b→a (the loss generator's nonce).
    /// `qlen`: the kernel queue's length ([`queue_len`]). `flows`: where the TCP packets
    /// are counted flight by flight, shared with the other direction's emulator.
    pub fn start(
        ns: &str,
        dev: &str,
        direction: u8,
        c: Conditions,
        qlen: u32,
        flows: Arc<Mutex<Flows>>,
    ) -> Result<Emulator> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let name = if direction == 0 { "a→b" } else { "b→a" }.to_string();
        let (ns_t, stop_t) = (ns.to_string(), stop.clone());
        let thread = std::thread::Builder::new()
            .name(format!("emulator {name}"))
            .spawn(move || emulate(&ns_t, (direction, name), c, qlen, &stop_t, &flows, ready_tx))
            .context("cannot start the emulator's thread")?;
        let mut e = Emulator {
            ns: ns.to_string(),
            stop,
            thread: Some(thread),
        };
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                let _ = e.stop();
                return Err(err);
            }
            Err(_) => {
                let r = e.stop();
                bail!(
                    "the emulator did not start: {}",
                    r.err()
                        .map(|x| format!("{x:#}"))
                        .unwrap_or_else(|| "no answer in 10 s".into())
                );
            }
        }
        // Only now that a reader is bound: packets queued with nobody reading are dropped
        // (no --queue-bypass), never let through. iptables (xtables' NFQUEUE target through
        // nf_tables' compatibility layer), not an nft `queue` rule: kernels like ours build
        // the one and not the other (CONFIG_NFT_QUEUE unset).
        let added = iptables(
            ns,
            &["-I", "PREROUTING", "-i", dev, "-j", "NFQUEUE", "--queue-num", "0"],
        );
        if let Err(err) = added {
            let _ = e.stop();
            return Err(err.context("adding the emulator's NFQUEUE rule (iptables; scripts/setup.sh installs it)"));
        }
        Ok(e)
    }

    /// Removes the rule, stops the thread (releasing what it holds) and returns what it did.
    pub fn stop(&mut self) -> Result<DirectionStats> {
        let _ = iptables(&self.ns, &["-F", "PREROUTING"]);
        self.stop.store(true, Ordering::SeqCst);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the emulator's thread panicked"))?,
            None => bail!("the emulator was already stopped"),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
        }
    }
}

/// How delay and loss are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// Ours: iptables' NFQUEUE target and a thread of ours (this module).
    Nfqueue,
    /// The kernel's `sch_netem` on each end's way out.
    Netem,
}

impl Mechanism {
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Nfqueue => "nfqueue emulator",
            Mechanism::Netem => "tc netem",
        }
    }
}

/// Whether the kernel has netem: tries it on the loopback of a throw-away namespace.
pub fn netem_available() -> bool {
    let ns = format!("csnetemprobe{}", std::process::id());
    if crate::netns::run_cmd(Command::new("ip").args(["netns", "add", &ns])).is_err() {
        return false;
    }
    let ok = crate::netns::run_cmd(Command::new("ip").args([
        "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
    ]))
    .is_ok();
    let _ = Command::new("ip").args(["netns", "del", &ns]).status();
    ok
}

/// `--emulator auto|netem|nfqueue`: netem where the kernel has it, ours elsewhere.
pub fn choose(wanted: &str) -> Result<Mechanism> {
    match wanted {
        "nfqueue" => Ok(Mechanism::Nfqueue),
        "netem" if netem_available() => Ok(Mechanism::Netem),
        "netem" => bail!("this kernel has no netem (sch_netem); --emulator nfqueue (or auto) uses ours"),
        "auto" if netem_available() => Ok(Mechanism::Netem),
        "auto" => Ok(Mechanism::Nfqueue),
        other => bail!("unknown emulator `{other}` (auto, netem, nfqueue)"),
    }
}

/// Delay and loss on both directions of a veth pair, for one configuration: started fresh,
/// so the loss generator starts over and every configuration meets the same pattern.
pub struct Emulation {
    mechanism: Mechanism,
    conditions: Conditions,
    emulators: Vec<Emulator>,
    flows: Arc<Mutex<Flows>>,
    /// (namespace, device) of each end, where netem was added.
    netem: Vec<(String, String)>,
}

impl Emulation {
    /// `a` and `b`: (namespace, device) of each end. With netem, `rate` (a tc rate) rides
    /// on netem's own rate option, replacing the tbf the pair was made with.
    pub fn start(
        a: (&str, &str),
        b: (&str, &str),
        c: Conditions,
        rate: Option<&str>,
        mechanism: Mechanism,
    ) -> Result<Emulation> {
        let mut e = Emulation {
            mechanism,
            conditions: c,
            emulators: Vec::new(),
            flows: Arc::default(),
            netem: Vec::new(),
        };
        match mechanism {
            Mechanism::Nfqueue => {
                let qlen = queue_len(c.delay, rate.and_then(parse_rate));
                // a→b arrives at b; b→a at a.
                e.emulators
                    .push(Emulator::start(b.0, b.1, 0, c, qlen, e.flows.clone())?);
                e.emulators
                    .push(Emulator::start(a.0, a.1, 1, c, qlen, e.flows.clone())?);
            }
            Mechanism::Netem => {
                for (ns, dev) in [a, b] {
                    let mut args: Vec<String> = [
                        "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "netem",
                    ]
                    .map(String::from)
                    .to_vec();
                    args.push("delay".into());
                    args.push(format!("{}us", c.delay.as_micros()));
                    args.push("loss".into());
                    args.push(format!("{}%", c.loss));
                    // Room for the bandwidth-delay product (netem's default limit is 1,000).
                    args.push("limit".into());
                    args.push(queue_len(c.delay, rate.and_then(parse_rate)).to_string());
                    if let Some(r) = rate {
                        args.push("rate".into());
                        args.push(r.into());
                    }
                    crate::netns::run_cmd(Command::new("ip").args(&args)).context("adding netem")?;
                    e.netem.push((ns.to_string(), dev.to_string()));
                }
            }
        }
        Ok(e)
    }

    /// Stops the emulation and says what it did.
    pub fn finish(mut self) -> Result<cryptoscope_model::apps::tls::LinkConditions> {
        let mut directions = Vec::new();
        for e in &mut self.emulators {
            directions.push(e.stop()?);
        }
        self.emulators.clear();
        let flights = self.flows.lock().map(|f| f.summary()).unwrap_or_default();
        Ok(cryptoscope_model::apps::tls::LinkConditions {
            mechanism: self.mechanism.name().into(),
            delay_ms: self.conditions.millis(),
            loss_pct: self.conditions.loss,
            seed: self.conditions.seed,
            directions,
            flights,
        })
    }
}

impl Drop for Emulation {
    fn drop(&mut self) {
        for (ns, dev) in self.netem.drain(..) {
            let _ = Command::new("ip")
                .args(["netns", "exec", &ns, "tc", "qdisc", "del", "dev", &dev, "root"])
                .status();
        }
    }
}

/// Runs `iptables -w -t raw ARGS` inside namespace `ns` (the raw table's PREROUTING hook
/// comes first, at priority -300, before connection tracking).
fn iptables(ns: &str, args: &[&str]) -> Result<()> {
    crate::netns::run_cmd(
        Command::new("ip")
            .args(["netns", "exec", ns, "iptables", "-w", "-t", "raw"])
            .args(args),
    )
    .map(|_| ())
}

/// Moves the calling thread into the network namespace `ns` (created by `ip netns add`).
fn enter_namespace(ns: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(format!("/run/netns/{ns}")).with_context(|| format!("namespace {ns}"))?;
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        bail!("cannot enter namespace {ns}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// The kernel's counters of queue 0 in this thread's namespace: (queue_dropped,
/// user_dropped).
fn kernel_counters() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/net/netfilter/nfnetlink_queue").ok()?;
    // queue number, peer port id, queue total, copy mode, copy range, queue dropped,
    // user dropped, last id, 1.
    s.lines().find_map(|l| {
        let f: Vec<u64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        (f.len() >= 7 && f[0] == 0).then(|| (f[5], f[6]))
    })
}

struct Held {
    received: Instant,
    msg: nfq::Message,
}

/// This thread's NFQUEUE 0 in namespace `ns`, holding up to `qlen` packets; whether it
/// opened is also sent on `ready`, which the caller waits on before it starts traffic.
fn open_queue(ns: &str, qlen: u32, ready: &mpsc::Sender<Result<()>>) -> Result<nfq::Queue> {
    let setup = || -> Result<nfq::Queue> {
        enter_namespace(ns)?;
        let mut q = nfq::Queue::open().context("cannot open an NFQUEUE socket (needs root)")?;
        q.bind(0).context("binding NFQUEUE 0")?;
        // The IP header and the TCP header's first bytes are all we read.
        q.set_copy_range(0, 64)?;
        q.set_queue_max_len(0, qlen)?;
        q.set_fail_open(0, false)?;
        q.set_recv_enobufs(true)?;
        q.set_nonblocking(true);
        Ok(q)
    };
    match setup() {
        Ok(q) => {
            let _ = ready.send(Ok(()));
            Ok(q)
        }
        Err(e) => {
            let msg = format!("{e:#}");
            let _ = ready.send(Err(e));
            bail!("{msg}");
        }
    }
}

/// `way`: the direction's number (the loss generator's nonce) and name.
fn emulate(
    ns: &str,
    way: (u8, String),
    c: Conditions,
    qlen: u32,
    stop: &AtomicBool,
    flows: &Mutex<Flows>,
    ready: mpsc::Sender<Result<()>>,
) -> Result<DirectionStats> {
    let (direction, name) = way;
    let mut q = open_queue(ns, qlen, &ready)?;
    let mut st = DirectionStats {
        direction: name,
        queue_len: qlen,
        ..DirectionStats::default()
    };
    let mut loss = LossPattern::new(c.seed, direction, c.loss);
    let mut held: VecDeque<Held> = VecDeque::new();
    let release = |q: &mut nfq::Queue, h: Held, st: &mut DirectionStats| -> Result<()> {
        let hold = h.received.elapsed().as_secs_f64() * 1e6;
        let mut msg = h.msg;
        msg.set_verdict(nfq::Verdict::Accept);
        q.verdict(msg).context("releasing a packet")?;
        st.released += 1;
        st.min_hold_us = Some(st.min_hold_us.map_or(hold, |m| m.min(hold)));
        st.max_hold_us = Some(st.max_hold_us.map_or(hold, |m| m.max(hold)));
        Ok(())
    };
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let mut busy = false;
        // Everything that arrived.
        loop {
            match q.recv() {
                Ok(mut msg) => {
                    busy = true;
                    let received = Instant::now();
                    let ip = msg.get_payload();
                    let len = if ip.len() >= 4 {
                        u16::from_be_bytes([ip[2], ip[3]]) as u64
                    } else {
                        msg.get_original_len() as u64
                    };
                    let index = st.packets;
                    st.packets += 1;
                    st.bytes += len;
                    st.largest = st.largest.max(len);
                    if let Some(seg) = crate::flights::parse(ip) {
                        if flows.lock().is_ok_and(|mut f| f.see(direction, &seg)) {
                            st.connections += 1;
                        }
                    }
                    if msg.is_seg_offloaded() {
                        st.offloaded += 1;
                    }
                    if loss.drops_next() {
                        st.dropped += 1;
                        if st.dropped_indices.len() < 10_000 {
                            st.dropped_indices.push(index);
                        }
                        msg.set_verdict(nfq::Verdict::Drop);
                        q.verdict(msg).context("dropping a packet")?;
                    } else {
                        held.push_back(Held { received, msg });
                        st.max_held = st.max_held.max(held.len() as u64);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    st.socket_overruns += 1;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(anyhow::Error::new(e).context("reading the NFQUEUE")),
            }
        }
        // Everything due (or everything, when stopping: the rule is gone by then).
        let now = Instant::now();
        while held
            .front()
            .is_some_and(|h| stopping || now.duration_since(h.received) >= c.delay)
        {
            let h = held.pop_front().expect("front exists");
            release(&mut q, h, &mut st)?;
            busy = true;
        }
        if stopping && held.is_empty() {
            break;
        }
        if !busy {
            // No readiness to wait on (the queue's socket is private to the crate): sleep a
            // little, never past the next release.
            let mut nap = Duration::from_micros(50);
            if let Some(h) = held.front() {
                nap = nap.min((h.received + c.delay).saturating_duration_since(Instant::now()));
            }
            std::thread::sleep(nap);
        }
    }
    if let Some((queue_dropped, user_dropped)) = kernel_counters() {
        st.queue_dropped = queue_dropped;
        st.user_dropped = user_dropped;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_losses_and_lists_parse_and_bad_ones_are_one_line_errors() {
        assert_eq!(parse_delay("20ms").unwrap(), Duration::from_millis(20));
        assert_eq!(parse_delay("2.684ms").unwrap(), Duration::from_micros(2684));
        assert_eq!(parse_delay("97.73").unwrap(), Duration::from_micros(97730));
        assert_eq!(parse_delay("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_delay("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_delay("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_loss("2.5%").unwrap(), 2.5);
        assert_eq!(parse_loss("0").unwrap(), 0.0);
        assert_eq!(
            parse_list("2.684ms, 15.458ms", parse_delay).unwrap(),
            vec![Duration::from_micros(2684), Duration::from_micros(15458)]
        );
        assert_eq!(parse_list("0,1,3,5,10,20", parse_loss).unwrap().len(), 6);
        for bad in ["fast", "-1ms", "NaNms", "inf", "11s", "20 parsecs"] {
            let e = parse_delay(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && !e.contains('\n'), "{bad}: {e}");
        }
        for bad in ["100", "100%", "-1", "x", "150%", "NaN"] {
            let e = parse_loss(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && !e.contains('\n'), "{bad}: {e}");
        }
        assert!(parse_list(" , ", parse_loss).is_err());
    }

    /// RFC 8439 appendix A.1, test vector #1: the ChaCha20 block of the all-zero key and
    /// nonce at counter 0 begins 76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28. Seed 0
    /// in direction 0 is that key and nonce, so the first draws are those words.
    #[test]
    fn the_loss_generator_is_rfc_8439_chacha20() {
        let mut p = LossPattern::new(0, 0, 50.0);
        assert_eq!(p.next_word(), 0xade0_b876);
        assert_eq!(p.next_word(), 0x903d_f1a0);
        assert_eq!(p.next_word(), 0xe56a_5d40);
        assert_eq!(p.next_word(), 0x28bd_8653);
        // Drop iff the word is below loss × 2^32: at 60 % (threshold 0x9999_999a) the four
        // words above say keep, drop, keep, drop.
        let mut p = LossPattern::new(0, 0, 60.0);
        let got: Vec<bool> = (0..4).map(|_| p.drops_next()).collect();
        assert_eq!(got, [false, true, false, true]);
        // No loss drops nothing; the other direction and another seed are other streams.
        let mut none = LossPattern::new(7, 1, 0.0);
        assert!((0..10_000).all(|_| !none.drops_next()));
        let first = |seed, dir| {
            let mut p = LossPattern::new(seed, dir, 50.0);
            (0..4).map(|_| p.next_word()).collect::<Vec<_>>()
        };
        assert_ne!(first(0, 0), first(0, 1));
        assert_ne!(first(0, 0), first(1, 0));
        assert_eq!(first(5, 1), first(5, 1));
    }

    #[test]
    fn delays_print_as_written() {
        for (s, ms) in [
            ("39.224ms", "39.224"),
            ("2.684ms", "2.684"),
            ("97.73ms", "97.73"),
            ("15.458", "15.458"),
            ("1s", "1000"),
        ] {
            let c = Conditions {
                delay: parse_delay(s).unwrap(),
                loss: 0.0,
                seed: 1,
            };
            assert_eq!(c.millis().to_string(), ms, "{s}");
        }
    }

    #[test]
    fn the_queue_holds_twice_the_bandwidth_delay_product() {
        // 1 Gbit/s for 100 ms one way: 1e9 × 0.1 / 12,000 = 8,333.3 packets in flight.
        assert_eq!(queue_len(Duration::from_millis(100), None), 16_667);
        assert_eq!(queue_len(Duration::from_millis(100), Some(1e9)), 16_667);
        assert_eq!(queue_len(Duration::from_millis(1), Some(1e6)), 1024);
        assert_eq!(parse_rate("100mbit"), Some(1e8));
        assert_eq!(parse_rate("1gbit"), Some(1e9));
        assert_eq!(parse_rate("10mbps"), Some(8e7));
        assert_eq!(parse_rate("fast"), None);
    }
}
