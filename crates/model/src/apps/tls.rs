//! The TLS study's items: the set-up (item `setup`) and one [`Configuration`] per
//! configuration (`PEER GROUP CERT accel|soft`, or `PEER GROUP - -` for a group whose key
//! shares do not fit), measured, failed or "does not fit".
//!
//! A key the writer leaves out in some items is optional and left out again when absent; a
//! key it always writes, possibly as null, is written back as null. `measurement` and
//! `group_info` come from the TLS driver binary, so keys of theirs not named here are kept as
//! they came (`rest`).

use super::{present, Item};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The driver's name.
pub const DRIVER: &str = "tls";

/// The study's set-up: what every configuration of the run shares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// `rustls` or `openssl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The server software, with its threads or workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The client software.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Concurrent clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    /// Measured seconds per configuration; null when a count was measured instead.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Handshakes measured per configuration; null when a duration was (absent before
    /// `--count`).
    #[serde(default)]
    pub count: Option<u64>,
    /// Bytes each client echoed after the handshake (0: handshake only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Whether the kernel has netem, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumption: Option<String>,
    /// How the measured window is chosen, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// How server CPU is measured, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// The OPENSSL_ia32cap of the soft configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<String>,
    /// Catalogue KEMs that failed their gate, not measured.
    #[serde(default)]
    pub gate_failed: Vec<String>,
    /// Each client's pace in handshakes a second (`--pace`); absent: back to back. Each
    /// measurement then has `pace` and `late_starts` (paced starts in the window taken
    /// after they were due).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<f64>,
    /// Times each configuration was measured, in interleaved rounds (`--repeats`); absent
    /// with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// Whether Ctrl-C ended the run early.
    #[serde(default)]
    pub interrupted: bool,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// What a group name resolved to: the TLS driver binary's answer (`standard` and
/// `experimental` groups), or just the name for the OpenSSL peer (kind `openssl`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupInfo {
    pub name: String,
    /// `standard`, `experimental` (a catalogue KEM) or `openssl`.
    pub kind: String,
    /// The TLS NamedGroup code point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// Key share sizes in bytes: client (public key) and server (ciphertext).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_share: Option<u64>,
    /// The catalogue subject behind an experimental group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Whether both key shares fit in a TLS 1.3 key_share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fits: Option<bool>,
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

/// A distribution over the handshakes of the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub min: u64,
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
}

/// One configuration's window, as the load generator reported it, with the server CPU
/// figures derived from it. A number that could not be computed is null.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Measurement {
    /// `rustls` or `openssl`.
    pub client: String,
    pub clients: u64,
    pub window_s: f64,
    pub warmup_s: f64,
    /// Handshakes completed in the window.
    pub handshakes: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub handshakes_per_s: Option<f64>,
    pub handshakes_per_min: Option<f64>,
    /// Connect plus handshake at the client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_ns: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_connect_ns: Option<Summary>,
    /// TLS bytes each way up to the end of the handshake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_client_to_server: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_server_to_client: Option<Summary>,
    /// Times the client waited for an answer during the handshake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<Summary>,
    /// The server processes' CPU seconds over the window; null without a server process.
    pub server_cpu_s: Option<f64>,
    pub client_cpu_s: f64,
    /// The three below are present only with `server_cpu_s`, each null when it could not be
    /// computed. Server CPU in percent of one core.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub server_cpu_pct: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub server_cpu_s_per_handshake: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub handshakes_per_min_per_cpu_pct: Option<Option<f64>>,
    /// The share of the CPUs' time the hypervisor gave to others during the window.
    pub steal_pct: Option<f64>,
    pub cpu_source: String,
    /// The protocol version and cipher suite negotiated.
    pub version: String,
    pub cipher: String,
    pub request_bytes: u64,
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

/// One configuration: `status` is `ok`, `failed` or `does not fit`. A measured or failed
/// one has `peer`, `cert`, `accel`, `mask`, `network`, `group_info` and `measurement` (or
/// `error`, when it failed before measuring); one that does not fit has the key share sizes,
/// the limit and the subject instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    /// `rustls` or `openssl`; absent where it does not fit (the set-up's peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    pub group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    /// `accel`, or `soft` with AES-NI and PCLMULQDQ masked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// The OPENSSL_ia32cap of a soft configuration, empty otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_info: Option<GroupInfo>,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// Why it failed before a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Key share sizes in bytes of a group that does not fit, and the limit they exceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_share: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// The catalogue subject of a group that does not fit: present there only, null when
    /// the group has none.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub subject: Option<Option<String>>,
    /// The network conditions this configuration was measured under (`--delay`, `--loss`);
    /// absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<LinkConditions>,
    /// Percentiles of the handshakes' connection times with their intervals, where every
    /// handshake's time was kept (`--count`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// Whether the client offered X25519 first so the server answered with a
    /// HelloRetryRequest (`--hello-retry`); absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hello_retry: Option<bool>,
    /// The handshake rate over the repeats (`--repeats`, more than one); `measurement` is
    /// then the median repeat's. Absent with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
}

/// A configuration's handshakes a second over its repeats, each a warm-up and a window of
/// its own, interleaved with the other configurations'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    /// Repeats that completed handshakes.
    pub n: u32,
    pub handshakes_per_s: super::tunnel::Spread,
}

/// Percentiles of connection time (TCP connect + handshake at the client) over a
/// configuration's handshakes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Handshakes the percentiles are of.
    pub handshakes: u64,
    /// p25, p50, p75 and p95.
    pub percentiles: Vec<Percentile>,
    /// How the intervals are made, in words.
    pub interval: String,
}

/// One percentile and its distribution-free 95 % interval, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// 25, 50, 75 or 95.
    pub p: u8,
    pub ns: f64,
    pub low_ns: f64,
    pub high_ns: f64,
}

impl Latency {
    /// The percentile `p`, if kept.
    pub fn at(&self, p: u8) -> Option<&Percentile> {
        self.percentiles.iter().find(|x| x.p == p)
    }
}

/// Delay and loss on the veth pair, how they were made, and what the emulator did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkConditions {
    /// `nfqueue emulator` (ours: iptables NFQUEUE + a thread, see docs/tls-handshakes.md) or
    /// `tc netem`.
    pub mechanism: String,
    /// Added one-way delay, each direction, in milliseconds.
    pub delay_ms: f64,
    /// Packet loss in percent, each direction.
    pub loss_pct: f64,
    /// The loss generator's seed (the emulator's; netem has its own generator).
    pub seed: u64,
    /// Per direction, what the emulator did (empty with netem).
    #[serde(default)]
    pub directions: Vec<DirectionStats>,
    /// The handshake's first two flights (the client's ClientHello, the server's answer),
    /// counted per connection by the emulator from the TCP headers (empty with netem, and
    /// in results stored before they were counted).
    #[serde(default)]
    pub flights: Vec<Flight>,
}

/// One flight of a handshake: the data one side sends before the other side sends any,
/// counted per TCP connection from the sequence numbers and lengths of the packets the
/// emulator saw (before its losses, so a dropped packet counts as sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Flight {
    /// 1: the client's first flight (ClientHello); 2: the server's (ServerHello to its
    /// Finished).
    pub flight: u8,
    /// `b→a` (client to server) or `a→b`, as in [`DirectionStats`].
    pub direction: String,
    /// Connections that sent this flight.
    pub connections: u64,
    /// Packets that carried new data in the flight, per connection: fewest, median, most.
    pub segments_min: u64,
    pub segments_median: f64,
    pub segments_max: u64,
    /// The flight's TCP payload in bytes, median per connection.
    pub bytes_median: f64,
    /// Packets that carried only data already sent in the flight (retransmissions), over
    /// all connections.
    pub retransmitted: u64,
}

/// What the emulator did in one direction over one configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DirectionStats {
    /// `b→a` (client to server: namespace b holds the clients) or `a→b`: delayed on
    /// arrival at the second.
    pub direction: String,
    /// Packets handed to the emulator, and their bytes (IP length).
    pub packets: u64,
    pub bytes: u64,
    /// TCP connections whose first packet (SYN, or SYN-ACK the other way) came this way:
    /// the divisor of per-handshake counts, warm-up handshakes included.
    pub connections: u64,
    /// The largest packet (IP length), and the packets that came as offloaded segments.
    pub largest: u64,
    pub offloaded: u64,
    /// Packets the loss generator dropped, with their indices in arrival order from 0 (the
    /// first 10,000).
    pub dropped: u64,
    pub dropped_indices: Vec<u64>,
    /// Packets accepted after the delay.
    pub released: u64,
    /// Shortest and longest hold of a released packet by the emulator's clock, µs.
    pub min_hold_us: Option<f64>,
    pub max_hold_us: Option<f64>,
    /// The most packets held at once, and the kernel queue's length.
    pub max_held: u64,
    pub queue_len: u32,
    /// Packets the kernel dropped because the queue or the emulator's socket was full, and
    /// the socket's overrun reports: loss nobody asked for, so a configuration with any is
    /// failed.
    pub queue_dropped: u64,
    pub user_dropped: u64,
    pub socket_overruns: u64,
}

impl DirectionStats {
    /// Packets lost to the emulator's own limits rather than to the set loss.
    pub fn overflowed(&self) -> u64 {
        self.queue_dropped + self.user_dropped + self.socket_overruns
    }
}

impl Item for Configuration {
    const DRIVER: &'static str = DRIVER;
}

impl Configuration {
    /// Its key among the run's items: `PEER GROUP CERT ACCEL`, the set-up's peer where it
    /// has none, `-` for a missing certificate or mode.
    pub fn key(&self, setup: &Setup) -> String {
        let base = format!(
            "{} {} {} {}",
            self.peer.as_deref().or(setup.peer.as_deref()).unwrap_or("?"),
            self.group,
            self.cert.as_deref().unwrap_or("-"),
            self.accel.as_deref().unwrap_or("-")
        );
        let base = if self.hello_retry == Some(true) {
            format!("{base} hrr")
        } else {
            base
        };
        match &self.conditions {
            Some(c) => format!("{base} {}ms {}%", c.delay_ms, c.loss_pct),
            None => base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppResult;

    /// The set-up and items of one `cryptoscope tls --quick --accel both` run, as the version
    /// before these types stored them (copied from its database): a rustls configuration, a
    /// group that does not fit, an OpenSSL configuration, and a set-up with a count.
    const SETUP: &str = r#"{"client":"rustls (AWS-LC)","clients":2,"count":null,"cpu":"server CPU = utime+stime of its processes over the window (/proc/PID/stat, clock ticks); CPU % is of one core","duration_s":1.0,"gate_failed":[],"interrupted":false,"mask":"~0x200000200000000:~0x0","netem":"not available on this kernel (no sch_netem): no delay or loss sweeps; --rate (tc tbf) is what exists","network":"loopback","peer":"rustls","request_bytes":0,"resumption":"off (full handshakes only; no tickets, no session cache)","server":"rustls 0.23 (AWS-LC), 2 threads","warmup_s":0.3,"window":"at least the duration, extended until 20 handshakes completed in it (60 s at most); steal = share of the CPUs' time the hypervisor gave to others during the window (/proc/stat), noted from 10 %"}"#;
    const SETUP_COUNT: &str = r#"{"client":"OpenSSL (system libssl) via the openssl crate","clients":2,"count":40,"cpu":"server CPU = utime+stime of its processes over the window (/proc/PID/stat, clock ticks); CPU % is of one core","duration_s":null,"gate_failed":[],"interrupted":false,"mask":"~0x200000200000000:~0x0","netem":"not available on this kernel (no sch_netem): no delay or loss sweeps; --rate (tc tbf) is what exists","network":"loopback","peer":"openssl","request_bytes":0,"resumption":"off (full handshakes only; no tickets, no session cache)","server":"nginx (2 workers), system OpenSSL","warmup_s":0.2,"window":"at least the duration, extended until 20 handshakes completed in it (60 s at most); steal = share of the CPUs' time the hypervisor gave to others during the window (/proc/stat), noted from 10 %"}"#;
    const NTRU: &str = r#"{"accel":"soft","cert":"ed25519","group":"NTRU-HRSS-701","group_info":{"client_share":1138,"code":65106,"fits":true,"kind":"experimental","name":"NTRU-HRSS-701","server_share":1138,"subject":"NTRU-HRSS-701/pqclean/avx2"},"mask":"~0x200000200000000:~0x0","measurement":{"bytes_client_to_server":{"max":1406,"mean":1406.0,"min":1406,"p50":1406,"p95":1406,"p99":1406},"bytes_server_to_client":{"max":2040,"mean":2040.0,"min":2040,"p50":2040,"p95":2040,"p99":2040},"cipher":"TLS13_AES_256_GCM_SHA384","client":"rustls","client_cpu_s":0.695632,"clients":2,"connection_ns":{"max":5902165,"mean":480297.60330033005,"min":256396,"p50":435022,"p95":691022,"p99":1698238},"cpu_source":"/proc/PID/stat utime+stime (clock ticks) for the server; getrusage for the clients","errors":0,"first_error":null,"handshakes":3030,"handshakes_per_min":181778.5690338252,"handshakes_per_min_per_cpu_pct":4784.210526315789,"handshakes_per_s":3029.64281723042,"request_bytes":0,"round_trips":{"max":2,"mean":1.0633663366336634,"min":1,"p50":1,"p95":2,"p99":2},"server_cpu_pct":37.99552048011748,"server_cpu_s":0.38,"server_cpu_s_per_handshake":0.0001254125412541254,"steal_pct":0.0,"tcp_connect_ns":{"max":2816756,"mean":31146.694719471947,"min":6523,"p50":14603,"p95":142360,"p99":158581},"version":"TLSv1_3","warmup_s":0.3,"window_s":1.000117896},"network":"loopback","peer":"rustls","status":"ok"}"#;
    const MCELIECE: &str = r#"{"client_share":261120,"group":"Classic-McEliece-348864","limit":65535,"server_share":96,"status":"does not fit","subject":"Classic-McEliece-348864/liboqs/dispatch"}"#;
    const DHE: &str = r#"{"accel":"accel","cert":"rsa-1024","group":"DHE","group_info":{"kind":"openssl","name":"DHE"},"mask":"","measurement":{"bytes_client_to_server":{"max":454,"mean":454.0,"min":454,"p50":454,"p95":454,"p99":454},"bytes_server_to_client":{"max":1827,"mean":1827.0,"min":1827,"p50":1827,"p95":1827,"p99":1827},"cipher":"DHE-RSA-AES256-GCM-SHA384","client":"openssl","client_cpu_s":0.17608000000000004,"clients":2,"connection_ns":{"max":23817187,"mean":9941931.461538462,"min":6655923,"p50":8668373,"p95":17047675,"p99":23817187},"cpu_source":"/proc/PID/stat utime+stime (clock ticks) for the server; getrusage for the clients","errors":0,"first_error":null,"handshakes":39,"handshakes_per_min":11412.342380981474,"handshakes_per_min_per_cpu_pct":260.0,"handshakes_per_s":190.20570634969124,"request_bytes":0,"round_trips":{"max":2,"mean":2.0,"min":2,"p50":2,"p95":2,"p99":2},"server_cpu_pct":43.89362454223644,"server_cpu_s":0.09,"server_cpu_s_per_handshake":0.0023076923076923075,"steal_pct":0.0,"tcp_connect_ns":{"max":174613,"mean":39805.8717948718,"min":18178,"p50":33683,"p95":68634,"p99":174613},"version":"TLSv1.2","warmup_s":0.2,"window_s":0.205041167},"network":"loopback","peer":"openssl","status":"ok"}"#;
    /// A configuration with no handshake, written by hand from that version's code: the
    /// derived figures that divide by handshakes or by server CPU are null, not absent.
    const NONE_COMPLETED: &str = r#"{"accel":"accel","cert":"ed25519","group":"X25519","group_info":{"client_share":32,"code":29,"fits":true,"kind":"standard","name":"X25519","server_share":32},"mask":"","measurement":{"bytes_client_to_server":{"max":0,"mean":0.0,"min":0,"p50":0,"p95":0,"p99":0},"bytes_server_to_client":{"max":0,"mean":0.0,"min":0,"p50":0,"p95":0,"p99":0},"cipher":"","client":"rustls","client_cpu_s":0.01,"clients":2,"connection_ns":{"max":0,"mean":0.0,"min":0,"p50":0,"p95":0,"p99":0},"cpu_source":"/proc/PID/stat utime+stime (clock ticks) for the server; getrusage for the clients","errors":100,"first_error":"Connection refused (os error 111)","handshakes":0,"handshakes_per_min":0.0,"handshakes_per_min_per_cpu_pct":null,"handshakes_per_s":0.0,"request_bytes":0,"round_trips":{"max":0,"mean":0.0,"min":0,"p50":0,"p95":0,"p99":0},"server_cpu_pct":0.0,"server_cpu_s":0.0,"server_cpu_s_per_handshake":null,"steal_pct":null,"tcp_connect_ns":{"max":0,"mean":0.0,"min":0,"p50":0,"p95":0,"p99":0},"version":"","warmup_s":0.3,"window_s":1.0},"network":"loopback","peer":"rustls","status":"failed"}"#;
    /// A configuration that failed before measuring (hand-written likewise).
    const FAILED: &str = r#"{"accel":"soft","cert":"ecdsa-p256","error":"the TLS server did not start: address in use","group":"X25519","group_info":{"client_share":32,"code":29,"fits":true,"kind":"standard","name":"X25519","server_share":32},"mask":"~0x200000200000000:~0x0","network":"veth between namespaces cstls1a and cstls1b, tbf 100mbit","peer":"rustls","status":"failed"}"#;

    fn app(item: &str, json: &str) -> AppResult {
        AppResult {
            driver: DRIVER.into(),
            item: item.into(),
            data: serde_json::from_str(json).unwrap(),
        }
    }

    /// Reads `json` as `T` and checks that it is written back unchanged.
    fn round_trip<T: Item + std::fmt::Debug>(item: &str, json: &str) -> T {
        let a = app(item, json);
        let t = T::from_app(&a).unwrap_or_else(|| panic!("{item} reads"));
        assert_eq!(t.to_app(item).data, a.data, "{item}: written back exactly as stored");
        t
    }

    #[test]
    fn stored_set_ups_read_back_and_are_written_with_the_same_keys() {
        let s: Setup = round_trip("setup", SETUP);
        assert_eq!(s.peer.as_deref(), Some("rustls"));
        assert_eq!(
            (s.clients, s.warmup_s, s.duration_s, s.count),
            (Some(2), Some(0.3), Some(1.0), None)
        );
        assert_eq!(s.request_bytes, Some(0));
        assert_eq!(s.mask.as_deref(), Some("~0x200000200000000:~0x0"));
        assert!(!s.interrupted && s.gate_failed.is_empty());
        let c: Setup = round_trip("setup", SETUP_COUNT);
        assert_eq!((c.duration_s, c.count), (None, Some(40)));
        assert_eq!(c.server.as_deref(), Some("nginx (2 workers), system OpenSSL"));
        // A set-up from before `--count` has no key `count`.
        let mut old: Value = serde_json::from_str(SETUP).unwrap();
        old.as_object_mut().unwrap().remove("count");
        let o: Setup = serde_json::from_value(old).unwrap();
        assert_eq!((o.count, o.duration_s), (None, Some(1.0)));
    }

    #[test]
    fn stored_configurations_read_back_and_are_written_with_the_same_keys() {
        let n: Configuration = round_trip("rustls NTRU-HRSS-701 ed25519 soft", NTRU);
        assert_eq!(n.key(&Setup::default()), "rustls NTRU-HRSS-701 ed25519 soft");
        assert_eq!((n.status.as_str(), n.accel.as_deref()), ("ok", Some("soft")));
        let g = n.group_info.as_ref().unwrap();
        assert_eq!(
            (g.kind.as_str(), g.code, g.fits),
            ("experimental", Some(0xfe52), Some(true))
        );
        assert_eq!(g.subject.as_deref(), Some("NTRU-HRSS-701/pqclean/avx2"));
        let m = n.measurement.as_ref().unwrap();
        assert_eq!((m.handshakes, m.errors, m.first_error.as_deref()), (3030, 0, None));
        assert_eq!(m.handshakes_per_s, Some(3029.64281723042));
        assert_eq!(m.server_cpu_s_per_handshake, Some(Some(0.0001254125412541254)));
        assert_eq!(m.steal_pct, Some(0.0));
        let c = m.connection_ns.as_ref().unwrap();
        assert_eq!(
            (c.min, c.p50, c.p95, c.p99, c.max),
            (256396, 435022, 691022, 1698238, 5902165)
        );
        assert_eq!(m.bytes_client_to_server.as_ref().unwrap().mean, 1406.0);
        assert_eq!(m.round_trips.as_ref().unwrap().p50, 1);
        assert_eq!(
            (m.version.as_str(), m.cipher.as_str()),
            ("TLSv1_3", "TLS13_AES_256_GCM_SHA384")
        );
        assert!(m.rest.is_empty() && g.rest.is_empty() && n.subject.is_none());

        let d: Configuration = round_trip("openssl DHE rsa-1024 accel", DHE);
        let g = d.group_info.as_ref().unwrap();
        assert_eq!((g.name.as_str(), g.kind.as_str(), g.code), ("DHE", "openssl", None));
        assert_eq!(d.measurement.as_ref().unwrap().round_trips.as_ref().unwrap().p50, 2);

        let f: Configuration = round_trip("rustls Classic-McEliece-348864 - -", MCELIECE);
        let peer = Setup {
            peer: Some("rustls".into()),
            ..Setup::default()
        };
        assert_eq!(f.key(&peer), "rustls Classic-McEliece-348864 - -");
        assert_eq!(f.status, "does not fit");
        assert_eq!(
            (f.client_share, f.server_share, f.limit),
            (Some(261120), Some(96), Some(65535))
        );
        assert_eq!(f.subject, Some(Some("Classic-McEliece-348864/liboqs/dispatch".into())));
        assert!(f.measurement.is_none() && f.group_info.is_none() && f.cert.is_none());
        // A group without a subject: the key is kept, as null.
        let _: Configuration = round_trip(
            "rustls X - -",
            &MCELIECE.replace(r#""Classic-McEliece-348864/liboqs/dispatch""#, "null"),
        );
    }

    #[test]
    fn failed_configurations_keep_their_nulls_and_absences() {
        let z: Configuration = round_trip("rustls X25519 ed25519 accel", NONE_COMPLETED);
        let m = z.measurement.unwrap();
        assert_eq!((m.handshakes, m.errors), (0, 100));
        assert_eq!(m.first_error.as_deref(), Some("Connection refused (os error 111)"));
        assert_eq!(m.server_cpu_pct, Some(Some(0.0)));
        assert_eq!(
            (m.server_cpu_s_per_handshake, m.handshakes_per_min_per_cpu_pct),
            (Some(None), Some(None))
        );
        assert_eq!(m.steal_pct, None);
        let e: Configuration = round_trip("rustls X25519 ecdsa-p256 soft", FAILED);
        assert_eq!(e.error.as_deref(), Some("the TLS server did not start: address in use"));
        assert!(e.measurement.is_none());
        // Without a server process there is no server CPU, and none of its derived figures.
        let mut v: Value = serde_json::from_str(NONE_COMPLETED).unwrap();
        let m = v["measurement"].as_object_mut().unwrap();
        for k in [
            "server_cpu_pct",
            "server_cpu_s_per_handshake",
            "handshakes_per_min_per_cpu_pct",
        ] {
            m.remove(k);
        }
        m.insert("server_cpu_s".into(), Value::Null);
        let c: Configuration = round_trip("rustls X25519 ed25519 accel", &v.to_string());
        let m = c.measurement.unwrap();
        assert_eq!(
            (m.server_cpu_s, m.server_cpu_pct, m.server_cpu_s_per_handshake),
            (None, None, None)
        );
    }

    #[test]
    fn keys_a_later_driver_adds_are_kept_and_other_drivers_items_are_not_tls() {
        let mut v: Value = serde_json::from_str(DHE).unwrap();
        v["measurement"]["alpn"] = "h2".into();
        v["group_info"]["provider"] = "openssl".into();
        let c: Configuration = round_trip("openssl DHE rsa-1024 accel", &v.to_string());
        assert_eq!(c.measurement.unwrap().rest["alpn"], "h2");
        assert_eq!(c.group_info.unwrap().rest["provider"], "openssl");
        let other = AppResult {
            driver: "tunnel".into(),
            ..app("openssl DHE rsa-1024 accel", DHE)
        };
        assert!(Configuration::from_app(&other).is_none());
    }
}
