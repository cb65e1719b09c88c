//! `cryptoscope tls --repeats N`: every configuration measured once per round, N rounds
//! interleaved (as `run --rounds` and `tunnel --repeats` do), so that a slow spell of the
//! machine falls on all of them alike; each row then carries its handshake rate's median
//! with a distribution-free interval, and its measurement is the median repeat's.

use super::{netem, peer_label, Config, TlsArgs, MASK_AES};
use crate::tunnel::repeats::spread;
use cryptoscope_model::apps::tls::{Configuration, LinkConditions, Measurement, Repeats};

/// What the rounds gathered for one configuration.
#[derive(Default)]
pub(super) struct Gathered {
    /// Measurements that completed handshakes, in the order measured, each with the link
    /// conditions it met (under `--delay`/`--loss`).
    pub(super) ok: Vec<(Measurement, Option<LinkConditions>)>,
    /// Whether it was measured at all (not cut short by Ctrl-C before its turn).
    pub(super) tried: bool,
}

/// A configuration's row before it is measured.
pub(super) fn template(
    a: &TlsArgs,
    c: &Config,
    cell: Option<netem::Conditions>,
    network: &str,
    mechanism: Option<netem::Mechanism>,
) -> Configuration {
    let mut row = Configuration {
        peer: Some(peer_label(a)),
        group: c.group.clone(),
        cert: Some(c.cert.clone()),
        accel: Some(if c.soft { "soft" } else { "accel" }.into()),
        mask: Some(if c.soft { MASK_AES } else { "" }.into()),
        network: Some(network.to_string()),
        group_info: Some(c.info.clone()),
        ..Configuration::default()
    };
    if let Some(cell) = cell {
        row.conditions = Some(LinkConditions {
            mechanism: mechanism.map(|m| m.name()).unwrap_or_default().into(),
            delay_ms: cell.millis(),
            loss_pct: cell.loss,
            seed: cell.seed,
            directions: Vec::new(),
            flights: Vec::new(),
        });
    }
    if a.hello_retry {
        row.hello_retry = Some(true);
    }
    row
}

/// The index of the median repeat by handshakes a second (the lower of two middles).
pub(super) fn median_repeat(rates: &[f64]) -> usize {
    let mut idx: Vec<usize> = (0..rates.len()).collect();
    idx.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]));
    idx[(idx.len() - 1) / 2]
}

/// Puts the gathered repeats into the row: the median repeat's measurement, and with more
/// than one round the spread of the rates. A row whose every repeat failed keeps what its
/// failure left.
pub(super) fn finish(row: &mut Configuration, mut g: Gathered, rounds: u32) {
    if g.ok.is_empty() {
        return;
    }
    let rates: Vec<f64> =
        g.ok.iter()
            .map(|(m, _)| m.handshakes_per_s.unwrap_or(f64::NAN))
            .collect();
    let (shown, link) = g.ok.swap_remove(median_repeat(&rates));
    row.latency = crate::tls_checks::latency_of(&shown);
    row.measurement = Some(shown);
    if link.is_some() {
        row.conditions = link;
    }
    row.status = "ok".into();
    row.error = None;
    if rounds > 1 {
        row.repeats = spread(&rates).map(|s| Repeats {
            n: s.values.len() as u32,
            handshakes_per_s: s,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(hs: f64) -> Measurement {
        Measurement {
            handshakes: 10,
            handshakes_per_s: Some(hs),
            ..Measurement::default()
        }
    }

    #[test]
    fn the_row_shows_the_median_repeat_and_the_spread_of_all() {
        let mut row = Configuration {
            status: "failed".into(),
            error: Some("round 2: the server did not start".into()),
            ..Configuration::default()
        };
        let g = Gathered {
            ok: [900.0, 1100.0, 1000.0, 950.0].map(|r| (m(r), None)).to_vec(),
            tried: true,
        };
        finish(&mut row, g, 5);
        assert_eq!(row.status, "ok");
        assert_eq!(row.error, None);
        assert_eq!(
            row.measurement.as_ref().unwrap().handshakes_per_s,
            Some(950.0),
            "the lower middle"
        );
        let r = row.repeats.unwrap();
        assert_eq!(r.n, 4, "the failed round adds no value");
        assert_eq!(r.handshakes_per_s.median, 975.0);
        assert_eq!((r.handshakes_per_s.low, r.handshakes_per_s.high), (900.0, 1100.0));
    }

    #[test]
    fn one_round_has_no_spread_and_a_row_that_never_measured_is_left_as_it_was() {
        let mut row = Configuration::default();
        finish(
            &mut row,
            Gathered {
                ok: vec![(m(500.0), None)],
                tried: true,
            },
            1,
        );
        assert!(row.repeats.is_none());
        assert_eq!(row.measurement.unwrap().handshakes_per_s, Some(500.0));
        let mut failed = Configuration {
            status: "failed".into(),
            ..Configuration::default()
        };
        finish(&mut failed, Gathered::default(), 3);
        assert_eq!(failed.status, "failed");
        assert!(failed.measurement.is_none());
    }
}
