//! The application drivers' renderings, one entry per driver ([`DRIVERS`]): what `show`
//! prints of a run's items, what the driver's own command prints when it ends, and its
//! section of the HTML report. `show`, the commands and the HTML report go through this
//! list, so a new driver is one module here and one entry.

use crate::html;
use cryptoscope_model::{AppResult, RunFile};

/// How one driver's items are rendered.
pub struct Rendering {
    /// The driver's name: the key of its items (`AppResult::driver`) and its subcommand.
    pub driver: &'static str,
    /// The tables `show` prints (none when the run has no items of this driver).
    pub tables: fn(&[AppResult]) -> Vec<String>,
    /// What the driver's command prints when it ends: its set-up, tables and ratios.
    pub summary: fn(&[AppResult]) -> String,
    /// Its section of the HTML report of run number `ri`.
    pub html: fn(usize, &RunFile) -> String,
}

/// Every application driver, in the order their renderings appear.
pub const DRIVERS: &[Rendering] = &[
    Rendering {
        driver: "tahoe",
        tables: |apps| crate::tahoe::table(apps).into_iter().collect(),
        summary: tahoe_summary,
        html: html::tahoe_section,
    },
    Rendering {
        driver: crate::ct::DRIVER,
        tables: |apps| vec![crate::ct::table(apps)],
        summary: crate::ct::table,
        html: |_, run| html::ct_section(run),
    },
    Rendering {
        driver: "tls",
        tables: |apps| {
            [crate::tls::table(apps), crate::tls::conditions_table(apps)]
                .into_iter()
                .flatten()
                .collect()
        },
        summary: tls_summary,
        html: html::tls_section,
    },
    Rendering {
        driver: "tunnel",
        tables: |apps| {
            [crate::tunnel::table(apps), crate::tunnel::hostile_table(apps)]
                .into_iter()
                .flatten()
                .collect()
        },
        summary: tunnel_summary,
        html: html::tunnel_section,
    },
    Rendering {
        driver: crate::openvpn::DRIVER,
        tables: |apps| crate::openvpn::table(apps).into_iter().collect(),
        summary: crate::openvpn::summary,
        html: html::openvpn_section,
    },
    Rendering {
        driver: cryptoscope_model::apps::ab::DRIVER,
        tables: |apps| crate::ab::table(apps).into_iter().collect(),
        summary: crate::ab::summary,
        html: html::ab_section,
    },
];

/// The rendering of `driver`.
pub fn rendering(driver: &str) -> Option<&'static Rendering> {
    DRIVERS.iter().find(|r| r.driver == driver)
}

/// Every driver's tables for `apps`, as `show` prints them (empty ones left out).
pub fn tables(apps: &[AppResult]) -> Vec<String> {
    DRIVERS
        .iter()
        .flat_map(|r| (r.tables)(apps))
        .filter(|t| !t.is_empty())
        .collect()
}

fn lines(setup: Vec<String>) -> String {
    let mut s: String = setup.into_iter().map(|l| l + "\n").collect();
    s.push('\n');
    s
}

fn tahoe_summary(apps: &[AppResult]) -> String {
    lines(crate::tahoe::setup_lines(apps)) + &crate::tahoe::table(apps).unwrap_or_default()
}

fn tls_summary(apps: &[AppResult]) -> String {
    let mut s = lines(crate::tls::setup_lines(apps)) + &crate::tls::table(apps).unwrap_or_default();
    if let Some(t) = crate::tls::conditions_table(apps) {
        s += &format!("\nUnder network conditions (sequential handshakes; connect + handshake at the client):\n{t}");
    }
    if let Some(t) = crate::tls::ratio_table(apps) {
        s += &format!("\nSoftware versus accelerated (AES-NI and PCLMULQDQ masked):\n{t}");
    }
    s
}

fn tunnel_summary(apps: &[AppResult]) -> String {
    let mut s = lines(crate::tunnel::setup_lines(apps)) + &crate::tunnel::table(apps).unwrap_or_default();
    if let Some(t) = crate::tunnel::ratio_table(apps) {
        s += &format!("\nSoftware versus accelerated (AES-NI and PCLMULQDQ masked):\n{t}");
    }
    if let Some(t) = crate::tunnel::hostile_table(apps) {
        s += &format!("\nUnder hostile traffic (× compares with the calm measurement of the same configuration):\n{t}");
    }
    s
}
