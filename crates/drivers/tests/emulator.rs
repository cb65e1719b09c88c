//! The nfqueue emulator on a real veth pair between two namespaces (needs root and
//! iptables; skipped, never passed, without them).
//!
//! Decided on logic, never on speed: which pings come back is checked against the loss
//! generator's words, counted by `ping` itself; that every released packet was held at
//! least the delay is the emulator's own timestamps; an overflowing queue is counted, and
//! nothing beyond it gets through undelayed.

use cryptoscope_drivers::netem::{Conditions, Emulation, Emulator, LossPattern, Mechanism};
use cryptoscope_drivers::netns::{Netns, ADDR_A};
// One namespace pair at a time, in this file and in every test binary running beside it.
use cryptoscope_testkit::serial;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

fn ready() -> bool {
    if !cryptoscope_testkit::needs_root("the emulator (namespaces, iptables, NFQUEUE)") {
        return false;
    }
    for tool in ["iptables", "ping"] {
        if std::process::Command::new(tool).arg("-V").output().is_err()
            && std::process::Command::new(tool).arg("--version").output().is_err()
        {
            cryptoscope_testkit::needs_setup(tool);
            return false;
        }
    }
    true
}

/// The icmp_seq of every reply `ping` printed.
fn replies(out: &std::process::Output) -> BTreeSet<u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("bytes from"))
        .filter_map(|l| {
            let i = l.find("icmp_seq=")? + 9;
            l[i..].split_whitespace().next()?.parse().ok()
        })
        .collect()
}

#[test]
fn seeded_losses_are_exactly_the_generators_and_every_packet_is_held_the_delay() {
    let _serial = serial();
    if !ready() {
        return;
    }
    let n = Netns::create("csemu", None).unwrap();
    let c = Conditions {
        delay: Duration::from_millis(10),
        loss: 20.0,
        seed: 42,
    };
    let (a, b) = (n.end('a'), n.end('b'));
    let e = Emulation::start((a.0, &a.1), (b.0, &b.1), c, None, Mechanism::Nfqueue).unwrap();
    // 100 echo requests from b to a, 20 ms apart (ping numbers them from 1); a late reply
    // still counts.
    let count = 100u64;
    let out = n
        .wrap('b', Path::new("ping"))
        .args(["-n", "-c", &count.to_string(), "-i", "0.02", "-W", "2", ADDR_A])
        .output()
        .unwrap();
    let link = e.finish().unwrap();

    // What the generator says: requests travel b→a (direction 1), each delivered request is
    // answered, and the answers travel a→b (direction 0) in the same order.
    let mut requests = LossPattern::new(42, 1, 20.0);
    let mut answers = LossPattern::new(42, 0, 20.0);
    let mut expected = BTreeSet::new();
    let (mut lost_requests, mut lost_answers) = (Vec::new(), Vec::new());
    let mut delivered = 0u64;
    for seq in 1..=count {
        if requests.drops_next() {
            lost_requests.push(seq - 1);
            continue;
        }
        if answers.drops_next() {
            lost_answers.push(delivered);
        } else {
            expected.insert(seq);
        }
        delivered += 1;
    }
    assert!(
        !lost_requests.is_empty() && !lost_answers.is_empty(),
        "a pattern with losses both ways"
    );
    assert_eq!(
        replies(&out),
        expected,
        "the replies ping saw: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    let dir = |name: &str| link.directions.iter().find(|d| d.direction == name).unwrap();
    let (ab, ba) = (dir("a→b"), dir("b→a"));
    assert_eq!(ba.packets, count);
    assert_eq!(ba.dropped_indices, lost_requests);
    assert_eq!(ab.packets, delivered);
    assert_eq!(ab.dropped_indices, lost_answers);
    for d in [ab, ba] {
        assert_eq!(d.released + d.dropped, d.packets, "{d:?}");
        assert!(d.min_hold_us.unwrap() >= 10_000.0, "released early: {d:?}");
        assert_eq!(d.overflowed(), 0, "{d:?}");
    }
    assert_eq!(link.mechanism, "nfqueue emulator");
    assert_eq!(link.delay_ms, 10.0);
}

#[test]
fn a_full_queue_is_counted_and_lets_nothing_through_undelayed() {
    let _serial = serial();
    if !ready() {
        return;
    }
    let n = Netns::create("csemq", None).unwrap();
    let c = Conditions {
        delay: Duration::from_millis(300),
        loss: 0.0,
        seed: 1,
    };
    // Only the requests' direction, with room for 4 packets: a flood of 100 pings in well
    // under the delay overflows it.
    let a = n.end('a');
    let mut e = Emulator::start(a.0, &a.1, 1, c, 4, Default::default()).unwrap();
    let out = n
        .wrap('b', Path::new("ping"))
        .args(["-n", "-q", "-U", "-f", "-c", "100", "-w", "3", ADDR_A])
        .output()
        .unwrap();
    let st = e.stop().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(st.queue_dropped > 0, "{st:?}");
    assert!(st.max_held <= 4, "{st:?}");
    assert_eq!(st.released, st.packets, "{st:?}");
    // Every reply came back through the emulator: none more than it released, and none
    // faster than the delay (ping's own minimum round trip).
    let received: u64 = text
        .split(", ")
        .find_map(|p| p.strip_suffix(" received").and_then(|x| x.trim().parse().ok()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(received <= st.released, "{received} replies, {st:?}");
    if received > 0 {
        let min_ms: f64 = text
            .split("= ")
            .nth(1)
            .and_then(|x| x.split('/').next())
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("{text}"));
        assert!(min_ms >= 300.0, "a reply in {min_ms} ms: {text}");
    }
}

/// The benchmark of BENCHMARKS.md, "Delay and loss": ping's round trip through the emulator
/// against twice the set delay, for a few delays; run it on a quiet machine and under
/// `stress-ng --cpu 2`. Prints, decides nothing (timing is the machine's):
/// `cargo test --release -p cryptoscope-drivers --test emulator -- --ignored --nocapture`.
#[test]
#[ignore]
fn ping_round_trip_against_the_set_delay() {
    let _serial = serial();
    if !ready() {
        return;
    }
    println!("| set one-way delay | expected RTT | ping min | avg | max | mdev | max hold (emulator) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for delay_ms in [0u64, 1, 2, 10, 50] {
        let n = Netns::create("csemb", None).unwrap();
        let c = Conditions {
            delay: Duration::from_millis(delay_ms),
            loss: 0.0,
            seed: 1,
        };
        let (a, b) = (n.end('a'), n.end('b'));
        let e = Emulation::start((a.0, &a.1), (b.0, &b.1), c, None, Mechanism::Nfqueue).unwrap();
        let out = n
            .wrap('b', Path::new("ping"))
            .args(["-n", "-q", "-U", "-c", "200", "-i", "0.01", ADDR_A])
            .output()
            .unwrap();
        let link = e.finish().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let stats: Vec<&str> = text
            .split("= ")
            .nth(1)
            .map(|x| x.split_whitespace().next().unwrap_or("").split('/').collect())
            .unwrap_or_default();
        let max_hold = link
            .directions
            .iter()
            .filter_map(|d| d.max_hold_us)
            .fold(0.0f64, f64::max);
        println!(
            "| {delay_ms} ms | {} ms | {} ms | {} ms | {} ms | {} ms | {:.3} ms |",
            2 * delay_ms,
            stats.first().unwrap_or(&"?"),
            stats.get(1).unwrap_or(&"?"),
            stats.get(2).unwrap_or(&"?"),
            stats.get(3).unwrap_or(&"?"),
            max_hold / 1e3
        );
    }
}
