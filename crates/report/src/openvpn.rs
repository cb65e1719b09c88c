//! OpenVPN server results (`cryptoscope openvpn-server`): stored items, the terminal table
//! (connection time, connections a minute and CPU per RSA size, AES on or masked, and load)
//! and the report's section.

use crate::table::render;
use crate::AppResult;
pub use cryptoscope_model::apps::openvpn::DRIVER;
use cryptoscope_model::apps::openvpn::{accel, load, Row, Setup, Status};
use cryptoscope_model::apps::Item;

/// Items to store: `setup`, then one per cell.
pub fn items(setup: &Setup, rows: &[Row]) -> Vec<AppResult> {
    std::iter::once(setup.to_app("setup"))
        .chain(rows.iter().map(|r| r.to_app(r.item())))
        .collect()
}

/// The run's set-up, typed.
pub fn setup(apps: &[AppResult]) -> Option<Setup> {
    apps.iter().filter(|a| a.item == "setup").find_map(Setup::from_app)
}

/// The run's cells, typed, in order.
pub fn cells(apps: &[AppResult]) -> impl Iterator<Item = Row> + '_ {
    apps.iter().filter(|a| a.item != "setup").filter_map(Row::from_app)
}

fn n(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "-".into()
    }
}

const HEADER: &[&str] = &[
    "RSA",
    "AES",
    "load",
    "conn/min",
    "connect p50",
    "p95",
    "start→ready p50",
    "server CPU",
    "server ms/conn",
    "clients CPU",
    "late",
    "failed",
];

/// Header and cells, one row per cell.
pub fn rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let out = cells(apps)
        .map(|r| {
            let mut v = vec![format!("rsa-{}", r.rsa_bits), accel(r.soft).into(), load(r.pace)];
            match r.status {
                Status::Ok => v.extend([
                    n(r.per_minute, 0),
                    format!("{} ms", n(r.connect.p50_ms, 1)),
                    format!("{} ms", n(r.connect.p95_ms, 1)),
                    format!("{} ms", n(r.start_to_ready.p50_ms, 1)),
                    format!("{} %", n(r.server_cpu_pct, 0)),
                    n(r.server_cpu_ms_per_connection, 2),
                    format!("{} %", n(r.client_cpu_pct, 0)),
                    r.late_starts.to_string(),
                    r.failed.to_string(),
                ]),
                Status::Failed => {
                    v.push(format!("failed: {}", r.error.as_deref().unwrap_or("?")));
                    v.extend(std::iter::repeat_n(String::new(), HEADER.len() - 4));
                }
            }
            v
        })
        .collect();
    (HEADER.to_vec(), out)
}

/// The terminal table (`None` without cells).
pub fn table(apps: &[AppResult]) -> Option<String> {
    let (h, r) = rows(apps);
    if r.is_empty() {
        return None;
    }
    let right: Vec<bool> = (0..h.len()).map(|i| i >= 3).collect();
    Some(render(&h, &r, &right))
}

/// The set-up, one line per setting.
pub fn setup_lines(apps: &[AppResult]) -> Vec<String> {
    let Some(s) = setup(apps) else {
        return Vec::new();
    };
    let mut v = vec![
        format!("server: {}", s.software),
        format!("control channel: {}", s.control_channel),
        format!("data channel: {}", s.data_channel),
        format!("{} ({} concurrent clients)", s.server, s.clients),
        s.placement.clone(),
        format!(
            "window: at least {} s and {} connections a cell, after {} s of warm-up; connection time: {}",
            s.window_s, s.min_connections, s.warmup_s, s.connection_time
        ),
        format!("CPU: {}", s.cpu),
        format!("AES off: {}", s.mask),
    ];
    if s.interrupted {
        v.push("INTERRUPTED: the cells below were measured before Ctrl-C".into());
    }
    v
}

/// What the command prints at its end.
pub fn summary(apps: &[AppResult]) -> String {
    let mut s: String = setup_lines(apps).into_iter().map(|l| l + "\n").collect();
    s += &table(apps).unwrap_or_default();
    s += "\nconn/min: connections completed in the window, per minute (paced at R a second, each client makes at most R × 60). late: paced starts that came due while the client's last connection still ran. clients CPU: % of the clients' CPUs; near 100 % the clients, not the server, set the rate.\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_model::apps::openvpn::Times;

    fn row(bits: u32, soft: bool, pace: Option<f64>, status: Status) -> Row {
        Row {
            rsa_bits: bits,
            soft,
            pace,
            status,
            error: (status == Status::Failed).then(|| "no connection completed in the window".into()),
            window_s: 30.0,
            connections: 300,
            failed: 0,
            late_starts: 2,
            per_minute: 600.0,
            connect: Times {
                n: 300,
                min_ms: 20.0,
                p50_ms: 25.04,
                p95_ms: 41.0,
                max_ms: 80.0,
            },
            start_to_ready: Times::default(),
            server_cpu_pct: 40.0,
            server_cpu_ms_per_connection: 4.0,
            client_cpu_ms_per_connection: 8.0,
            client_cpu_pct: 80.0,
            control_channel: String::new(),
            data_channel: String::new(),
        }
    }

    #[test]
    fn each_cell_is_a_row_and_a_failed_one_says_why() {
        let apps: Vec<AppResult> = [
            row(2048, false, Some(1.0), Status::Ok),
            row(4096, true, None, Status::Failed),
        ]
        .iter()
        .map(|r| r.to_app(r.item()))
        .collect();
        let (h, r) = rows(&apps);
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|c| c.len() == h.len()));
        assert_eq!(&r[0][..5], ["rsa-2048", "on", "paced-1/s", "600", "25.0 ms"]);
        assert_eq!(
            &r[1][..4],
            [
                "rsa-4096",
                "off",
                "unpaced",
                "failed: no connection completed in the window"
            ]
        );
        assert!(table(&apps).unwrap().contains("conn/min"));
    }
}
