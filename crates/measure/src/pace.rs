//! Paced load: when each client of a load generator starts its next connection.
//!
//! A paced client at `rate` connections a second has its `k`-th start due `offset + k / rate`
//! after the load's common start; `offset` spreads the clients evenly over one interval, so
//! that ten clients at one a second start a connection every 100 ms rather than ten at once.
//! A start is never taken before it is due. One that comes due while the client's previous
//! connection is still running is taken as soon as that ends, and counted as late; the
//! schedule does not shift, so a client that fell behind catches up where its connections
//! allow. The rate a client is given is therefore an upper bound of what it does (at most
//! `1 + rate × t` starts in `t` seconds), and also what it does while its connections take
//! less than the interval.
//!
//! An unpaced client ([`Pace::unpaced`]) starts every connection as soon as the last ended.

use std::time::Duration;

/// One client's schedule.
#[derive(Debug, Clone)]
pub struct Pace {
    /// `None`: unpaced.
    interval: Option<Duration>,
    offset: Duration,
    /// Starts taken so far.
    taken: u64,
    late: u64,
    /// Whether the client was told to wait for the start now due (then it is on time,
    /// however late the wake-up).
    waited: bool,
}

/// When the next start may be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait this long, then start.
    Wait(Duration),
    /// Start now: it is due, or came due while the last connection ran (`late`).
    Now { late: bool },
}

impl Pace {
    /// Client `client` of `clients`, each at `rate` connections a second.
    ///
    /// # Panics
    /// If `rate` is not a positive finite number or `client >= clients`.
    pub fn new(rate: f64, client: usize, clients: usize) -> Pace {
        assert!(rate.is_finite() && rate > 0.0, "a pace is a positive rate");
        assert!(client < clients, "client {client} of {clients}");
        let interval = Duration::from_secs_f64(1.0 / rate);
        Pace {
            interval: Some(interval),
            offset: interval.mul_f64(client as f64 / clients as f64),
            taken: 0,
            late: 0,
            waited: false,
        }
    }

    /// A client that starts each connection as soon as the last ended.
    pub fn unpaced() -> Pace {
        Pace {
            interval: None,
            offset: Duration::ZERO,
            taken: 0,
            late: 0,
            waited: false,
        }
    }

    /// When the next start is due, `since` being the time since the common start.
    pub fn due(&self) -> Option<Duration> {
        self.interval
            .map(|i| self.offset + i.saturating_mul(u32::try_from(self.taken).unwrap_or(u32::MAX)))
    }

    /// What to do at `since` (time since the common start); a `Now` is counted as taken.
    /// A client asks again after a `Wait`.
    pub fn next(&mut self, since: Duration) -> Next {
        let Some(due) = self.due() else {
            self.taken += 1;
            return Next::Now { late: false };
        };
        if since < due {
            self.waited = true;
            return Next::Wait(due - since);
        }
        // Late: the slot had passed when the last connection ended (asked at once, without
        // a wait before it). A client that waited and woke up after the slot is not late:
        // a sleep ends a little after its deadline on a busy machine.
        let late = self.taken > 0 && !std::mem::take(&mut self.waited);
        self.taken += 1;
        self.late += u64::from(late);
        Next::Now { late }
    }

    /// Starts taken.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Starts taken after they were due, because the previous connection overran.
    pub fn late(&self) -> u64 {
        self.late
    }
}

/// The most starts a client at `rate` can take in a window of `seconds` from the common
/// start: what "pacing holds the rate" bounds.
pub fn most_starts(rate: f64, seconds: f64) -> u64 {
    (rate * seconds).floor() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client driven on a clock the test controls: each connection lasts `lasts(k)`; the
    /// start times up to `window`.
    fn simulate(mut p: Pace, window: Duration, lasts: impl Fn(u64) -> Duration) -> Vec<Duration> {
        let mut now = Duration::ZERO;
        let mut starts = Vec::new();
        while now < window {
            match p.next(now) {
                Next::Wait(d) => now += d,
                Next::Now { .. } => {
                    starts.push(now);
                    now += lasts(starts.len() as u64 - 1);
                }
            }
        }
        starts
    }

    #[test]
    fn connections_shorter_than_the_interval_start_exactly_on_the_schedule() {
        // 1 a second, client 3 of 10: due at 0.3 s, 1.3 s, ...; each lasts 0.2 s.
        let p = Pace::new(1.0, 3, 10);
        let starts = simulate(p.clone(), Duration::from_secs(60), |_| Duration::from_millis(200));
        assert_eq!(starts.len(), 60, "60 starts in a minute at one a second");
        for (k, s) in starts.iter().enumerate() {
            assert_eq!(*s, Duration::from_millis(300 + 1000 * k as u64));
        }
    }

    #[test]
    fn ten_clients_at_one_a_second_start_600_connections_a_minute_spread_evenly() {
        let mut all: Vec<Duration> = (0..10)
            .flat_map(|c| {
                simulate(Pace::new(1.0, c, 10), Duration::from_secs(60), |_| {
                    Duration::from_millis(40)
                })
            })
            .collect();
        assert_eq!(all.len(), 600);
        all.sort();
        for (i, s) in all.iter().enumerate() {
            assert_eq!(*s, Duration::from_millis(100 * i as u64), "one start every 100 ms");
        }
    }

    #[test]
    fn a_client_never_starts_early_and_never_exceeds_its_rate() {
        // Connections of every length around the interval, including much longer ones.
        for ms in [10u64, 499, 500, 501, 900, 1700] {
            let mut p = Pace::new(2.0, 1, 4);
            let window = Duration::from_secs(30);
            let mut now = Duration::ZERO;
            let mut starts = 0u64;
            while now < window {
                let due = p.due().expect("paced");
                match p.next(now) {
                    Next::Wait(d) => now += d,
                    Next::Now { .. } => {
                        assert!(now >= due, "{ms} ms: a start at {now:?} before its slot {due:?}");
                        starts += 1;
                        now += Duration::from_millis(ms);
                    }
                }
            }
            assert!(starts <= most_starts(2.0, 30.0), "{ms} ms: {starts} starts");
        }
    }

    #[test]
    fn connections_longer_than_the_interval_run_back_to_back_and_are_counted_late() {
        // 1 a second, each lasting 2.5 s: 25 s hold 10 starts, every one after the first late.
        let mut p = Pace::new(1.0, 0, 1);
        let mut now = Duration::ZERO;
        let mut starts = Vec::new();
        while now < Duration::from_secs(25) {
            match p.next(now) {
                Next::Wait(d) => now += d,
                Next::Now { .. } => {
                    starts.push(now);
                    now += Duration::from_millis(2500);
                }
            }
        }
        assert_eq!(starts.len(), 10);
        assert!(starts.windows(2).all(|w| w[1] - w[0] == Duration::from_millis(2500)));
        assert_eq!(p.late(), 9);
    }

    #[test]
    fn a_client_that_fell_behind_catches_up_on_the_same_schedule() {
        // The third connection stalls 3.5 s; the next start at 5.5 s is late, then the
        // missed slots (4, 5 s) follow back to back, and from 6 s it is on the schedule again.
        let starts = simulate(Pace::new(1.0, 0, 1), Duration::from_secs(10), |k| {
            Duration::from_millis(if k == 2 { 3500 } else { 100 })
        });
        let ms: Vec<u64> = starts.iter().map(|d| d.as_millis() as u64).collect();
        assert_eq!(ms, vec![0, 1000, 2000, 5500, 5600, 5700, 6000, 7000, 8000, 9000]);
    }

    #[test]
    fn a_client_that_waited_and_woke_up_after_its_slot_is_not_late() {
        let mut p = Pace::new(1.0, 0, 1);
        assert_eq!(p.next(Duration::ZERO), Next::Now { late: false });
        // The connection ended at 0.1 s; told to wait 0.9 s, the client wakes at 1.05 s.
        assert_eq!(
            p.next(Duration::from_millis(100)),
            Next::Wait(Duration::from_millis(900))
        );
        assert_eq!(p.next(Duration::from_millis(1050)), Next::Now { late: false });
        // This connection runs to 2.2 s, past the slot at 2 s: late.
        assert_eq!(p.next(Duration::from_millis(2200)), Next::Now { late: true });
        assert_eq!(p.late(), 1);
    }

    #[test]
    fn an_unpaced_client_starts_as_soon_as_the_last_connection_ended() {
        let starts = simulate(Pace::unpaced(), Duration::from_secs(1), |_| Duration::from_millis(300));
        assert_eq!(starts, [0, 300, 600, 900].map(Duration::from_millis).to_vec());
    }

    #[test]
    fn the_bound_counts_the_start_at_zero() {
        assert_eq!(most_starts(1.0, 60.0), 61);
        assert_eq!(most_starts(2.0, 0.4), 1);
        assert_eq!(most_starts(0.5, 10.0), 6);
    }
}
