//! The tunnel study's items (`cryptoscope tunnel`): the set-up (item `setup`) and one [`Row`]
//! per configuration (item `TUNNEL COUPLE ACCEL`), the first being the baseline without a
//! tunnel (`none - -`).
//!
//! A figure that could not be measured is NaN here and null in the stored JSON, as the writer
//! has always stored it (serde_json writes a number that is not finite as null); reading
//! turns the null back into NaN. A key the writer leaves out is `None` here and is left out
//! again when written.

use super::Item;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// The driver's name.
pub const DRIVER: &str = "tunnel";

/// The study's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// The path between the two namespaces, with its rate limit if any.
    pub network: String,
    pub pings_per_size: u32,
    /// Ping payload sizes in bytes, in the order given.
    pub sizes: Vec<u32>,
    /// Bytes of each bulk transfer.
    pub transfer_bytes: u64,
    /// How the transfer is made.
    pub transfer: String,
    /// How the endpoints' CPU is measured.
    pub cpu: String,
    /// The `OPENSSL_ia32cap` value of the soft configurations.
    pub mask: String,
    /// Whether openvpn-tls ran with `--tls-crypt` (written since `--hostile` exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openvpn_tls_crypt: Option<bool>,
    /// Whether each configuration was also measured under hostile traffic (written since
    /// `--hostile` exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostile: Option<bool>,
    /// The data paths the kernel offered (ESP through xfrm, WireGuard), as its probe found
    /// them, when ipsec or wireguard ran (written since `--data-path` exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Times each configuration (and the baseline) was measured, in interleaved rounds
    /// (written since `--repeats` exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// Whether the run was interrupted (Ctrl-C); what was measured before is kept.
    pub interrupted: bool,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// What became of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Measured.
    #[serde(rename = "ok")]
    Ok,
    /// The tunnel cannot carry the couple, or masking changes nothing (`reason` says which).
    #[serde(rename = "not supported")]
    NotSupported,
    /// The set-up or a measurement failed (`error` says why).
    #[serde(rename = "failed")]
    Failed,
}

/// The pings of one payload size; times in milliseconds, NaN when no reply came back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ping {
    pub sent: u64,
    pub received: u64,
    #[serde(deserialize_with = "nan_if_null")]
    pub mean_ms: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub p50_ms: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub p95_ms: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub p99_ms: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub max_ms: f64,
}

/// Pings by payload size in bytes (stored with the size as the key, `"64"`).
pub type Pings = BTreeMap<u32, Ping>;

/// One bulk transfer with iperf3.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// Bytes received as iperf3's receiver counts them: it stops at the sender's end
    /// message, so a few segments still in flight may be missing.
    pub bytes: f64,
    /// Bytes sent: the whole file (null when iperf3 did not say).
    #[serde(default)]
    pub bytes_sent: Option<u64>,
    #[serde(deserialize_with = "nan_if_null")]
    pub seconds: f64,
    /// Received bytes per second, in millions.
    #[serde(deserialize_with = "nan_if_null")]
    pub mb_per_s: f64,
    /// Null when iperf3 did not say.
    #[serde(default)]
    pub sender_retransmits: Option<u64>,
    /// CPU of endpoint A's (the sender's) tunnel processes, % of one core; absent for the
    /// baseline, which has none.
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_a_pct: Option<f64>,
    /// The same for endpoint B (the receiver).
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_b_pct: Option<f64>,
}

/// What the hostile third party sent the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// How long it ran.
    pub seconds: f64,
    pub garbage_datagrams: u64,
    /// Protocol-shaped first messages of handshakes never finished.
    pub half_handshakes: u64,
    /// Datagrams with the peer's forged source address.
    pub spoofed_datagrams: u64,
    pub server_replies: u64,
    pub tcp_opened_and_dropped: u64,
    pub tcp_stalled_after_banner: u64,
    pub tcp_garbage: u64,
    pub tcp_refused_or_failed: u64,
    /// The rates and connections it was held to.
    pub limits: String,
}

/// One figure over a configuration's repeats: each repeat's value (in the order measured,
/// the unmeasurable ones left out), their median and a distribution-free interval of it
/// from order statistics, with the interval's exact coverage (with few repeats it is below
/// 95 %: 93.75 % for the range of 5, 96.9 % for the range of 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub values: Vec<f64>,
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub coverage: f64,
}

/// A configuration's figures over its repeats (`--repeats`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    pub n: u32,
    /// Received MB/s of each transfer.
    pub mb_per_s: Spread,
    /// Each repeat's ping p50 in ms, by payload size (none through SSH).
    pub ping_p50_ms: BTreeMap<u32, Spread>,
    /// Throughput against the baseline's: `slower` or `faster` only where the two
    /// intervals do not overlap, `no difference shown` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_plain: Option<String>,
}

/// A configuration measured again under hostile traffic (`--hostile`). Everything but
/// `served` is absent when the measurement stopped before reaching it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hostile {
    /// Whether the well-behaved client was still served.
    pub served: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<Traffic>,
    /// The share of pings lost, over all sizes.
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub ping_loss: Option<f64>,
    /// p50 of the smallest size over the calm measurement's.
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency_vs_calm: Option<f64>,
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub throughput_vs_calm: Option<f64>,
    /// As [`Row::ping`].
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub ping: Option<Option<Pings>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    /// Seconds until a new SSH login succeeded, and in how many attempts.
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub new_login_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_login_attempts: Option<u64>,
    /// Seconds from a new handshake until traffic crossed the new session (the UDP tunnels
    /// with a handshake; written since the new session was measured).
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub new_handshake_s: Option<f64>,
}

impl Hostile {
    /// The pings, when some were sent.
    pub fn pings(&self) -> Option<&Pings> {
        self.ping.as_ref()?.as_ref()
    }
}

/// One configuration (tunnel, couple, accel), or the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The tunnel; `none` for the baseline.
    pub tunnel: String,
    /// The cipher:MAC couple; `-` for the baseline.
    pub couple: String,
    /// `accel`, `soft` (the AES instructions masked), or `-` (the baseline, and a couple the
    /// tunnel cannot carry).
    pub accel: String,
    /// The endpoints' `OPENSSL_ia32cap`: the mask when soft, empty when accelerated; absent
    /// for the baseline and what was not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<String>,
    pub status: Status,
    /// Why it was not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Pings by size: absent when nothing was measured, `Some(None)` (stored as null) where
    /// the tunnel carries no IP packets (SSH).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub ping: Option<Option<Pings>>,
    /// Why there are no pings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    /// The tunnel's software and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software: Option<String>,
    /// The data path it took: `kernel: …` or `user space: …` (written since `--data-path`
    /// exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_path: Option<String>,
    /// Throughput over the baseline's (every measured row but the baseline).
    #[serde(
        default,
        deserialize_with = "some_nan_if_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub throughput_vs_plain: Option<f64>,
    /// Per size, p50 over the baseline's p50 (rows with pings).
    #[serde(
        default,
        deserialize_with = "nan_if_null_values",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency_vs_plain: Option<BTreeMap<u32, f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostile: Option<Hostile>,
    /// Its figures over the repeats (written since `--repeats` exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
}

impl Item for Row {
    const DRIVER: &'static str = DRIVER;
}

impl Row {
    /// A row with nothing measured yet.
    pub fn new(tunnel: &str, couple: &str, accel: &str, status: Status) -> Row {
        Row {
            tunnel: tunnel.into(),
            couple: couple.into(),
            accel: accel.into(),
            mask: None,
            status,
            reason: None,
            error: None,
            ping: None,
            ping_note: None,
            transfer: None,
            software: None,
            data_path: None,
            throughput_vs_plain: None,
            latency_vs_plain: None,
            hostile: None,
            repeats: None,
        }
    }

    /// Its key among the run's items: `TUNNEL COUPLE ACCEL`.
    pub fn key(&self) -> String {
        format!("{} {} {}", self.tunnel, self.couple, self.accel)
    }

    /// The pings, when some were sent.
    pub fn pings(&self) -> Option<&Pings> {
        self.ping.as_ref()?.as_ref()
    }
}

/// A figure stored as a number, or as null when it was NaN.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The same for a figure whose key may be absent (`None`).
fn some_nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    nan_if_null(d).map(Some)
}

/// Figures by size, each stored as a number or null.
fn nan_if_null_values<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BTreeMap<u32, f64>>, D::Error> {
    let m = BTreeMap::<u32, Option<f64>>::deserialize(d)?;
    Ok(Some(m.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect()))
}

/// A key that is present, as null (`Some(None)`) or a value; an absent one is `None` through
/// `#[serde(default)]`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}
