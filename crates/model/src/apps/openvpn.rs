//! The OpenVPN server study's items (`cryptoscope openvpn-server`): the set-up (item
//! `setup`) and one [`Row`] per cell (item `rsa-BITS ACCEL LOAD`): connection time, the
//! connections a minute and the server's CPU, for one certificate size, with the AES
//! instructions or with them masked, under paced or unpaced clients.

use super::Item;
use serde::{Deserialize, Serialize};

/// The driver's name.
pub const DRIVER: &str = "openvpn-server";

/// The study's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// OpenVPN's version line.
    pub software: String,
    /// Concurrent clients, each a loop of whole OpenVPN client processes.
    pub clients: u32,
    /// Seconds the clients ran before the window opened.
    pub warmup_s: f64,
    /// The shortest measured window, seconds; it lasts until `min_connections` completed.
    pub window_s: f64,
    pub min_connections: u64,
    /// The control channel the server allows: TLS version, cipher suites, DH group.
    pub control_channel: String,
    /// The data channel both ends name.
    pub data_channel: String,
    /// The server's settings that matter for the load (connect-freq, max-clients).
    pub server: String,
    /// Where the server and the clients run, and on which CPUs.
    pub placement: String,
    /// What a connection's time is, from which clock.
    pub connection_time: String,
    /// How CPU is measured.
    pub cpu: String,
    /// The `OPENSSL_ia32cap` value of the soft cells, and what it does not reach.
    pub mask: String,
    /// Whether the run was interrupted (Ctrl-C); what was measured before is kept.
    pub interrupted: bool,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// What became of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "ok")]
    Ok,
    /// The server did not start, no connection completed, or a connection's log showed
    /// another control or data channel than the one asked for (`error` says which).
    #[serde(rename = "failed")]
    Failed,
}

/// Times in milliseconds over the connections completed in the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Times {
    pub n: u64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
}

/// One cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The RSA modulus of the server's and the clients' certificates and of the CA.
    pub rsa_bits: u32,
    /// `true`: AES-NI and PCLMULQDQ masked in the server and every client.
    pub soft: bool,
    /// Connections a second each client was paced at; `None`: unpaced (back to back).
    pub pace: Option<f64>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Measured window, seconds.
    #[serde(default)]
    pub window_s: f64,
    /// Connections completed in the window.
    #[serde(default)]
    pub connections: u64,
    /// Client processes that ended or timed out without completing.
    #[serde(default)]
    pub failed: u64,
    /// Paced starts taken after they were due, because the client's previous connection
    /// was still running: the pace did not hold for those.
    #[serde(default)]
    pub late_starts: u64,
    /// Connections completed in the window, per minute.
    #[serde(default)]
    pub per_minute: f64,
    /// From the client's first packet to its "Initialization Sequence Completed", by the
    /// client's own log stamps: the TLS handshake, the pushed options, the TUN device.
    #[serde(default)]
    pub connect: Times,
    /// From starting the client process to the same line, by our monotonic clock: adds the
    /// process start and the reading of keys and certificates.
    #[serde(default)]
    pub start_to_ready: Times,
    /// The server's CPU over the window, % of one core (OpenVPN's server is one thread).
    #[serde(default)]
    pub server_cpu_pct: f64,
    /// The server's CPU time per completed connection, milliseconds.
    #[serde(default)]
    pub server_cpu_ms_per_connection: f64,
    /// The clients' CPU time per completed connection (processes that ended in the window),
    /// milliseconds.
    #[serde(default)]
    pub client_cpu_ms_per_connection: f64,
    /// The clients' CPU over the window, % of the CPUs they ran on: near 100 the clients,
    /// not the server, set the pace.
    #[serde(default)]
    pub client_cpu_pct: f64,
    /// The control channel every connection's client logged (the same for all, or the cell
    /// failed).
    #[serde(default)]
    pub control_channel: String,
    /// The data channel every connection's client logged.
    #[serde(default)]
    pub data_channel: String,
}

impl Item for Row {
    const DRIVER: &'static str = DRIVER;
}

impl Row {
    /// The item's name: `rsa-2048 on paced-1/s`.
    pub fn item(&self) -> String {
        format!("rsa-{} {} {}", self.rsa_bits, accel(self.soft), load(self.pace))
    }
}

/// `on` or `off`.
pub fn accel(soft: bool) -> &'static str {
    if soft {
        "off"
    } else {
        "on"
    }
}

/// `paced-1/s` or `unpaced`.
pub fn load(pace: Option<f64>) -> String {
    match pace {
        Some(r) => format!("paced-{r}/s"),
        None => "unpaced".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written_and_names_its_cell() {
        let r = Row {
            rsa_bits: 2048,
            soft: true,
            pace: Some(1.0),
            status: Status::Ok,
            error: None,
            window_s: 30.0,
            connections: 290,
            failed: 0,
            late_starts: 0,
            per_minute: 580.0,
            connect: Times {
                n: 290,
                min_ms: 20.0,
                p50_ms: 25.0,
                p95_ms: 40.0,
                max_ms: 90.0,
            },
            start_to_ready: Times::default(),
            server_cpu_pct: 40.0,
            server_cpu_ms_per_connection: 4.1,
            client_cpu_ms_per_connection: 9.0,
            client_cpu_pct: 50.0,
            control_channel: "TLSv1.2, cipher TLSv1.2 DHE-RSA-AES256-GCM-SHA384".into(),
            data_channel: "cipher 'AES-256-CBC', auth 'SHA256'".into(),
        };
        let back = Row::from_app(&r.to_app(r.item())).expect("reads back");
        assert_eq!(back, r);
        assert_eq!(r.item(), "rsa-2048 off paced-1/s");
        assert_eq!(load(None), "unpaced");
    }
}
