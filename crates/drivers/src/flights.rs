//! A handshake's flights, counted from the TCP headers of the packets the emulator sees.
//!
//! A flight is the data one side sends before the other side sends any: in TLS 1.3 the
//! client's first flight is its ClientHello, the server's answer runs from ServerHello to
//! its Finished. A post-quantum key share that no longer fits one packet shows up here as a
//! flight of two packets, whatever the delay and loss, which timing cannot say reliably.
//!
//! Per connection (its two address:port ends), each direction's highest sequence number
//! sent so far tells new data from retransmitted data. A packet carrying new data opens a
//! flight when the last new data went the other way; a retransmission belongs to its
//! direction's latest flight (a spurious ClientHello retransmission that crosses the
//! server's answer does not open a third flight). Packets are counted before the loss
//! generator decides: a dropped packet was sent.

use cryptoscope_model::apps::tls::Flight;
use std::collections::HashMap;

/// What the emulator reads of a TCP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub src: ([u8; 4], u16),
    pub dst: ([u8; 4], u16),
    pub seq: u32,
    pub syn: bool,
    pub ack: bool,
    /// TCP payload bytes (the IP total length less both headers).
    pub payload: u32,
}

/// Reads an IPv4 TCP packet's addresses, ports, sequence number, SYN and ACK flags and
/// payload length from its first bytes (the IP header and the TCP header's first 14 bytes
/// are enough); `None` for anything else or a packet cut too short.
pub fn parse(ip: &[u8]) -> Option<Segment> {
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 6 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let tcp = ip.get(ihl..ihl + 14)?;
    let total = u32::from(u16::from_be_bytes([ip[2], ip[3]]));
    let doff = u32::from(tcp[12] >> 4) * 4;
    let addr = |o: usize| [ip[o], ip[o + 1], ip[o + 2], ip[o + 3]];
    Some(Segment {
        src: (addr(12), u16::from_be_bytes([tcp[0], tcp[1]])),
        dst: (addr(16), u16::from_be_bytes([tcp[2], tcp[3]])),
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        syn: tcp[13] & 0x02 != 0,
        ack: tcp[13] & 0x10 != 0,
        payload: total.saturating_sub(ihl as u32 + doff),
    })
}

type Key = (([u8; 4], u16), ([u8; 4], u16));

/// One connection's first two flights.
#[derive(Debug, Default, Clone)]
struct Flow {
    /// Per direction (the emulator's 0 and 1): the sequence number after the highest byte
    /// sent so far.
    next: [Option<u32>; 2],
    /// The direction of the last new data, the flights opened so far, and each direction's
    /// latest flight.
    last: Option<u8>,
    flights: u8,
    latest: [u8; 2],
    /// Flights 1 and 2: direction, packets with new data, new bytes, retransmissions.
    dir: [Option<u8>; 2],
    segments: [u64; 2],
    bytes: [u64; 2],
    retransmitted: [u64; 2],
}

/// The flights of every connection seen in both directions of one emulation.
#[derive(Debug, Default)]
pub struct Flows {
    open: HashMap<Key, Flow>,
    closed: Vec<Flow>,
}

/// The lengths of a wrapping sequence-number interval, negative when `b` is before `a`.
fn ahead(a: u32, b: u32) -> i64 {
    i64::from(b.wrapping_sub(a) as i32)
}

impl Flows {
    /// Counts one packet going in `direction` (0: a→b, 1: b→a). Returns whether it opened
    /// a connection this way (a SYN, or the SYN-ACK answering one).
    pub fn see(&mut self, direction: u8, s: &Segment) -> bool {
        let d = usize::from(direction & 1);
        let key = if (s.src.0, s.src.1) <= (s.dst.0, s.dst.1) {
            (s.src, s.dst)
        } else {
            (s.dst, s.src)
        };
        if s.syn {
            let isn_next = s.seq.wrapping_add(1);
            let f = self.open.entry(key).or_default();
            let opened = match f.next[d] {
                None => true,
                // The same SYN again: a retransmission.
                Some(n) if n == isn_next => false,
                // A new connection on the same ends (ports reused): the old one is done.
                Some(_) => {
                    let old = std::mem::take(f);
                    self.closed.push(old);
                    true
                }
            };
            let f = self.open.entry(key).or_default();
            f.next[d] = Some(isn_next);
            return opened;
        }
        if s.payload == 0 {
            return false;
        }
        let f = self.open.entry(key).or_default();
        let next = *f.next[d].get_or_insert(s.seq);
        let end = s.seq.wrapping_add(s.payload);
        let new = ahead(next, end);
        if new > 0 {
            if f.last != Some(direction) {
                f.last = Some(direction);
                f.flights = f.flights.saturating_add(1);
                f.latest[d] = f.flights;
            }
            let i = usize::from(f.flights) - 1;
            if i < 2 {
                f.dir[i] = Some(direction);
                f.segments[i] += 1;
                f.bytes[i] += new.min(i64::from(s.payload)) as u64;
            }
            f.next[d] = Some(end);
        } else {
            let latest = usize::from(f.latest[d]);
            if (1..=2).contains(&latest) {
                f.retransmitted[latest - 1] += 1;
            }
        }
        false
    }

    /// Flights 1 and 2 over every connection that sent them.
    pub fn summary(&self) -> Vec<Flight> {
        let all: Vec<&Flow> = self.closed.iter().chain(self.open.values()).collect();
        let mut out = Vec::new();
        for i in 0..2 {
            let with: Vec<&&Flow> = all.iter().filter(|f| f.dir[i].is_some()).collect();
            if with.is_empty() {
                continue;
            }
            let mut seg: Vec<u64> = with.iter().map(|f| f.segments[i]).collect();
            let mut bytes: Vec<u64> = with.iter().map(|f| f.bytes[i]).collect();
            seg.sort_unstable();
            bytes.sort_unstable();
            // The direction most connections sent this flight in.
            let ones = with.iter().filter(|f| f.dir[i] == Some(1)).count();
            let direction = if ones * 2 >= with.len() { "b→a" } else { "a→b" };
            out.push(Flight {
                flight: i as u8 + 1,
                direction: direction.into(),
                connections: with.len() as u64,
                segments_min: seg[0],
                segments_median: median(&seg),
                segments_max: seg[seg.len() - 1],
                bytes_median: median(&bytes),
                retransmitted: with.iter().map(|f| f.retransmitted[i]).sum(),
            });
        }
        out
    }
}

fn median(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: ([u8; 4], u16) = ([10, 77, 0, 2], 40_000);
    const SERVER: ([u8; 4], u16) = ([10, 77, 0, 1], 4433);

    /// An IPv4 TCP packet's first 40 bytes, built by hand from RFC 791 and RFC 9293's
    /// layouts (20-byte headers, no options).
    fn packet(src: ([u8; 4], u16), dst: ([u8; 4], u16), seq: u32, flags: u8, payload: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(40 + payload).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&src.0);
        p[16..20].copy_from_slice(&dst.0);
        p[20..22].copy_from_slice(&src.1.to_be_bytes());
        p[22..24].copy_from_slice(&dst.1.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = flags;
        p
    }

    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const PSH_ACK: u8 = 0x18;

    /// Feeds packets: (from the client?, sequence number, flags, payload bytes). The client
    /// is in namespace b, so its packets go b→a (direction 1).
    fn feed(flows: &mut Flows, packets: &[(bool, u32, u8, u16)]) -> u64 {
        let mut opened = 0;
        for &(from_client, seq, flags, len) in packets {
            let (src, dst, dir) = if from_client {
                (CLIENT, SERVER, 1)
            } else {
                (SERVER, CLIENT, 0)
            };
            let s = parse(&packet(src, dst, seq, flags, len)).expect("a TCP packet");
            opened += u64::from(flows.see(dir, &s));
        }
        opened
    }

    #[test]
    fn the_parser_reads_what_the_headers_say() {
        let s = parse(&packet(CLIENT, SERVER, 0xfffffff0, PSH_ACK, 1228)).unwrap();
        assert_eq!(s.src, CLIENT);
        assert_eq!(s.dst, SERVER);
        assert_eq!(s.seq, 0xfffffff0);
        assert!(!s.syn && s.ack);
        assert_eq!(s.payload, 1228);
        // With 12 bytes of TCP options (data offset 8 words), less payload.
        let mut p = packet(CLIENT, SERVER, 1, PSH_ACK, 100);
        p[32] = 8 << 4;
        assert_eq!(parse(&p).unwrap().payload, 88);
        // Not TCP, not IPv4, cut short.
        let mut udp = packet(CLIENT, SERVER, 1, 0, 10);
        udp[9] = 17;
        assert_eq!(parse(&udp), None);
        let mut v6 = packet(CLIENT, SERVER, 1, 0, 10);
        v6[0] = 0x60;
        assert_eq!(parse(&v6), None);
        assert_eq!(parse(&packet(CLIENT, SERVER, 1, 0, 10)[..30]), None);
    }

    /// A ClientHello in two packets, a server flight in four, then the client's Finished:
    /// flights 1 and 2 are counted, the third is not, ACKs carry no flight.
    #[test]
    fn a_handshake_is_counted_flight_by_flight() {
        let mut f = Flows::default();
        let c0 = 0xffff_fff0u32; // the client's sequence numbers wrap during its hello
        let s0 = 7_000u32;
        let opened = feed(
            &mut f,
            &[
                (true, c0, SYN, 0),
                (false, s0, SYN | ACK, 0),
                (true, c0 + 1, ACK, 0),
                (true, c0.wrapping_add(1), PSH_ACK, 1228),
                (true, c0.wrapping_add(1229), PSH_ACK, 300),
                (false, s0 + 1, ACK, 0),
                (false, s0 + 1, PSH_ACK, 1228),
                (false, s0 + 1229, PSH_ACK, 1228),
                (false, s0 + 2457, PSH_ACK, 1228),
                (false, s0 + 3685, PSH_ACK, 500),
                (true, c0.wrapping_add(1529), PSH_ACK, 64),
            ],
        );
        assert_eq!(opened, 2, "the SYN one way, the SYN-ACK the other");
        let s = f.summary();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].flight, s[0].direction.as_str()), (1, "b→a"));
        assert_eq!(
            (s[0].segments_min, s[0].segments_max, s[0].bytes_median),
            (2, 2, 1528.0)
        );
        assert_eq!((s[1].flight, s[1].direction.as_str()), (2, "a→b"));
        assert_eq!((s[1].segments_median, s[1].bytes_median), (4.0, 4184.0));
        assert_eq!((s[0].retransmitted, s[1].retransmitted), (0, 0));
    }

    /// Retransmissions: the ClientHello's second packet sent again counts against flight 1;
    /// a spurious copy of the first that arrives after the server began answering still
    /// belongs to flight 1 and does not open a third.
    #[test]
    fn retransmissions_stay_in_their_flight() {
        let mut f = Flows::default();
        feed(
            &mut f,
            &[
                (true, 100, SYN, 0),
                (false, 900, SYN | ACK, 0),
                (true, 101, PSH_ACK, 1000),
                (true, 1101, PSH_ACK, 400),
                (true, 1101, PSH_ACK, 400),
                (false, 901, PSH_ACK, 1000),
                (true, 101, PSH_ACK, 1000),
                (false, 1901, PSH_ACK, 200),
                (false, 901, PSH_ACK, 1000),
            ],
        );
        let s = f.summary();
        assert_eq!((s[0].segments_max, s[0].retransmitted), (2, 2));
        assert_eq!(
            (s[1].segments_max, s[1].retransmitted, s[1].bytes_median),
            (2, 1, 1200.0)
        );
    }

    /// Three connections, one of them on reused ports: medians, extremes and the number of
    /// connections are over connections, and a repeated SYN opens nothing.
    #[test]
    fn connections_are_summarised_and_reused_ports_start_a_new_one() {
        let mut f = Flows::default();
        let hs = |f: &mut Flows, c: u32, s: u32, hello: &[u16]| {
            let mut p = vec![(true, c, SYN, 0), (true, c, SYN, 0), (false, s, SYN | ACK, 0)];
            let mut at = c + 1;
            for &n in hello {
                p.push((true, at, PSH_ACK, n));
                at += u32::from(n);
            }
            p.push((false, s + 1, PSH_ACK, 900));
            feed(f, &p)
        };
        assert_eq!(hs(&mut f, 1_000, 50_000, &[250]), 2);
        assert_eq!(hs(&mut f, 9_000_000, 60_000, &[1228, 200]), 2);
        assert_eq!(hs(&mut f, 20_000_000, 70_000, &[1228, 1228, 1228]), 2);
        let s = f.summary();
        assert_eq!(s[0].connections, 3);
        assert_eq!(
            (s[0].segments_min, s[0].segments_median, s[0].segments_max),
            (1, 2.0, 3)
        );
        assert_eq!(s[0].bytes_median, 1428.0);
        assert_eq!((s[1].connections, s[1].segments_median), (3, 1.0));
    }
}
