//! Hostile traffic against a tunnel's server while well-behaved clients are measured:
//! garbage datagrams, handshakes started and never finished, TCP connections opened and
//! dropped, stalled after the banner, or fed garbage. Everything is bounded (rates, the
//! number of connections held open) and is sent from inside one of the tool's own network
//! namespaces to an address in the other, never anywhere else.

use anyhow::{Context, Result};
use cryptoscope_model::apps::tunnel::Traffic;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The first message a real client would send on a UDP port, so junk reaches the parser's
/// handshake path, not just its "unknown packet" drop.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// WireGuard handshake initiation: type 1, 148 bytes.
    WireGuard,
    /// OpenVPN P_CONTROL_HARD_RESET_CLIENT_V2 (opcode 7, key id 0) with a session id.
    OpenVpn,
    /// IKEv2 IKE_SA_INIT request header (initiator flag, fresh SPI) with a junk body.
    Ike,
    /// ESP-in-UDP (port 4500): a non-zero SPI and sequence number, junk after.
    EspInUdp,
}

/// Where the hostile traffic goes.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: Ipv4Addr,
    pub udp: Vec<(u16, Shape)>,
    /// A TCP server port (SSH): connections opened and dropped, stalled after a client
    /// banner, or fed garbage.
    pub tcp: Option<u16>,
    /// The hostile client's own source address, beside the well-behaved client's.
    pub from: Ipv4Addr,
    /// Also send half the datagrams with this forged source (the real peer's address and
    /// port), for servers that drop everything from other addresses before parsing it
    /// (OpenVPN in point-to-point mode): an on-path attacker can do that much.
    pub spoof: Option<SocketAddrV4>,
}

/// Limits: at most this many datagrams and TCP connections per second, and at most this
/// many connections held open at once (below sshd's default MaxStartups of 10, so a
/// well-behaved newcomer is never refused because of us).
const DATAGRAMS_PER_S: u64 = 2_000;
const CONNECTIONS_PER_S: u64 = 40;
const HELD_AT_ONCE: usize = 6;
const HOLD_FOR: Duration = Duration::from_secs(3);

#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    garbage_datagrams: u64,
    spoofed: u64,
    half_handshakes: u64,
    replies_received: u64,
    opened_and_dropped: u64,
    stalled_after_banner: u64,
    garbage_connections: u64,
    refused_or_failed: u64,
}

/// Hostile traffic running on its own threads until [`Hostile::stop`].
pub struct Hostile {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<Counts>>>,
    started: Instant,
}

struct Rng(u64);

impl Rng {
    fn new(salt: u64) -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Rng((t ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let x = self.next().to_le_bytes();
            c.copy_from_slice(&x[..c.len()]);
        }
    }
}

/// Moves the calling thread into the named network namespace (`ip netns` makes
/// /run/netns/NAME); only this thread moves.
fn enter(netns: &str) -> Result<()> {
    let path = format!("/run/netns/{netns}");
    let f = std::fs::File::open(&path).with_context(|| format!("cannot open {path}"))?;
    let rc = unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&f), libc::CLONE_NEWNET) };
    if rc != 0 {
        anyhow::bail!(
            "cannot enter network namespace {netns}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// Sleeps until `done` events since `started` are within `per_s` a second.
fn pace(started: Instant, done: u64, per_s: u64) {
    let due = Duration::from_micros(done * 1_000_000 / per_s);
    if let Some(wait) = due.checked_sub(started.elapsed()) {
        std::thread::sleep(wait);
    }
}

fn shaped(shape: Shape, rng: &mut Rng) -> Vec<u8> {
    match shape {
        Shape::WireGuard => {
            let mut m = vec![0u8; 148];
            rng.fill(&mut m);
            m[..4].copy_from_slice(&[1, 0, 0, 0]);
            m
        }
        Shape::OpenVpn => {
            // opcode 7 << 3 | key id 0, 8-byte session id, 0 acks, packet id 0, junk.
            let mut m = vec![0u8; 14 + (rng.next() % 64) as usize];
            rng.fill(&mut m);
            m[0] = 7 << 3;
            m[9] = 0;
            m[10..14].copy_from_slice(&[0, 0, 0, 0]);
            m
        }
        Shape::Ike => {
            let len = 28 + (rng.next() % 300) as usize;
            let mut m = vec![0u8; len];
            rng.fill(&mut m);
            m[8..16].fill(0); // responder SPI: zero in IKE_SA_INIT
            m[16] = 33; // next payload: SA
            m[17] = 0x20; // version 2.0
            m[18] = 34; // exchange: IKE_SA_INIT
            m[19] = 0x08; // initiator
            m[20..24].fill(0); // message id 0
            m[24..28].copy_from_slice(&(len as u32).to_be_bytes());
            m
        }
        Shape::EspInUdp => {
            let mut m = vec![0u8; 16 + (rng.next() % 200) as usize];
            rng.fill(&mut m);
            if m[..4] == [0, 0, 0, 0] {
                m[0] = 1; // a zero SPI would mean an IKE message, not ESP
            }
            m
        }
    }
}

fn udp_socket(from: Ipv4Addr) -> Result<UdpSocket> {
    let s =
        UdpSocket::bind(SocketAddrV4::new(from, 0)).with_context(|| format!("cannot open a UDP socket on {from}"))?;
    s.set_nonblocking(true)?;
    Ok(s)
}

/// An IPv4 header (RFC 791; checksum left 0 for the kernel) and a UDP header (RFC 768;
/// checksum 0: none) around `payload`.
fn udp_packet(from: SocketAddrV4, to: SocketAddrV4, payload: &[u8], id: u16) -> Vec<u8> {
    let total = 20 + 8 + payload.len();
    let mut p = Vec::with_capacity(total);
    p.extend_from_slice(&[0x45, 0]);
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, 17, 0, 0]); // don't fragment, TTL 64, UDP
    p.extend_from_slice(&from.ip().octets());
    p.extend_from_slice(&to.ip().octets());
    p.extend_from_slice(&from.port().to_be_bytes());
    p.extend_from_slice(&to.port().to_be_bytes());
    p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    p
}

/// A raw IPv4 socket for datagrams with a forged source; we write the IP header
/// (IPPROTO_RAW implies IP_HDRINCL; the kernel fills in the header checksum).
struct Raw(std::os::fd::OwnedFd);

impl Raw {
    fn open() -> Result<Raw> {
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
        if fd < 0 {
            anyhow::bail!("cannot open a raw socket: {}", std::io::Error::last_os_error());
        }
        Ok(Raw(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }))
    }

    /// Sends `payload` as one UDP datagram from `from` to `to` (UDP checksum 0: none, which
    /// IPv4 allows).
    fn send(&self, from: SocketAddrV4, to: SocketAddrV4, payload: &[u8], id: u16) -> bool {
        let p = udp_packet(from, to, payload, id);
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(to.ip().octets()),
            },
            sin_zero: [0; 8],
        };
        let n = unsafe {
            libc::sendto(
                std::os::fd::AsRawFd::as_raw_fd(&self.0),
                p.as_ptr().cast(),
                p.len(),
                0,
                (&sa as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        n == p.len() as isize
    }
}

fn udp_loop(netns: String, t: Target, stop: Arc<AtomicBool>) -> Result<Counts> {
    enter(&netns)?;
    let raw = t.spoof.map(|_| Raw::open()).transpose()?;
    let mut rng = Rng::new(1);
    let mut c = Counts::default();
    let mut buf = [0u8; 2048];
    let started = Instant::now();
    let mut sent = 0u64;
    // A handful of sockets (source ports) for junk; a fresh one per half handshake, so
    // each looks like a new client to the server.
    let junk: Vec<UdpSocket> = (0..4).map(|_| udp_socket(t.from)).collect::<Result<_>>()?;
    while !stop.load(Ordering::Relaxed) {
        let (port, shape) = t.udp[(rng.next() % t.udp.len() as u64) as usize];
        let to = SocketAddr::V4(SocketAddrV4::new(t.addr, port));
        if let (Some(raw), Some(from), true) = (&raw, t.spoof, rng.next().is_multiple_of(2)) {
            let m = if rng.next().is_multiple_of(4) {
                shaped(shape, &mut rng)
            } else {
                let mut m = vec![0u8; 1 + (rng.next() % 1400) as usize];
                rng.fill(&mut m);
                m
            };
            if raw.send(from, SocketAddrV4::new(t.addr, port), &m, rng.next() as u16) {
                c.spoofed += 1;
            }
        } else if rng.next().is_multiple_of(4) {
            let s = udp_socket(t.from)?;
            let _ = s.send_to(&shaped(shape, &mut rng), to);
            c.half_handshakes += 1;
            // Whatever the server answers is read and ignored; the handshake is never
            // continued.
            std::thread::sleep(Duration::from_millis(1));
            while s.recv_from(&mut buf).is_ok() {
                c.replies_received += 1;
            }
        } else {
            let n = 1 + (rng.next() % 1400) as usize;
            rng.fill(&mut buf[..n]);
            let s = &junk[(rng.next() % junk.len() as u64) as usize];
            if s.send_to(&buf[..n], to).is_ok() {
                c.garbage_datagrams += 1;
            }
            while s.recv_from(&mut buf).is_ok() {
                c.replies_received += 1;
            }
        }
        sent += 1;
        pace(started, sent, DATAGRAMS_PER_S);
    }
    Ok(c)
}

/// A TCP connection from `from` to `to`.
fn connect(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(from, 0)).into())?;
    s.connect_timeout(&to.into(), Duration::from_secs(2))?;
    Ok(s.into())
}

fn tcp_loop(netns: String, from: Ipv4Addr, addr: Ipv4Addr, port: u16, stop: Arc<AtomicBool>) -> Result<Counts> {
    enter(&netns)?;
    let mut rng = Rng::new(2);
    let mut c = Counts::default();
    let to = SocketAddr::V4(SocketAddrV4::new(addr, port));
    let mut held: Vec<(TcpStream, Instant)> = Vec::new();
    let started = Instant::now();
    let mut opened = 0u64;
    while !stop.load(Ordering::Relaxed) {
        held.retain(|(_, since)| since.elapsed() < HOLD_FOR);
        let kind = rng.next() % 3;
        match connect(from, to) {
            Err(_) => c.refused_or_failed += 1,
            Ok(mut s) => match kind {
                0 => {
                    // Open and drop at once.
                    drop(s);
                    c.opened_and_dropped += 1;
                }
                1 if held.len() < HELD_AT_ONCE => {
                    // Say hello and then nothing: a handshake stalled after the banner.
                    let _ = s.write_all(b"SSH-2.0-cryptoscope_hostile\r\n");
                    held.push((s, Instant::now()));
                    c.stalled_after_banner += 1;
                }
                _ => {
                    let mut junk = vec![0u8; 1 + (rng.next() % 4096) as usize];
                    rng.fill(&mut junk);
                    let _ = s.write_all(&junk);
                    c.garbage_connections += 1;
                }
            },
        }
        opened += 1;
        pace(started, opened, CONNECTIONS_PER_S);
    }
    Ok(c)
}

impl Hostile {
    /// Starts hostile traffic from inside namespace `netns` towards `t`.
    pub fn start(netns: &str, t: &Target) -> Result<Hostile> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        if !t.udp.is_empty() {
            let (n, t, s) = (netns.to_string(), t.clone(), stop.clone());
            threads.push(std::thread::spawn(move || udp_loop(n, t, s)));
        }
        if let Some(port) = t.tcp {
            let (n, f, a, s) = (netns.to_string(), t.from, t.addr, stop.clone());
            threads.push(std::thread::spawn(move || tcp_loop(n, f, a, port, s)));
        }
        Ok(Hostile {
            stop,
            threads,
            started: Instant::now(),
        })
    }

    /// Stops the traffic (closing every connection held) and says what was sent.
    pub fn stop(self) -> Result<Traffic> {
        self.stop.store(true, Ordering::Relaxed);
        let mut c = Counts::default();
        for t in self.threads {
            let x = t
                .join()
                .map_err(|_| anyhow::anyhow!("the hostile traffic thread panicked"))??;
            c.garbage_datagrams += x.garbage_datagrams;
            c.spoofed += x.spoofed;
            c.half_handshakes += x.half_handshakes;
            c.replies_received += x.replies_received;
            c.opened_and_dropped += x.opened_and_dropped;
            c.stalled_after_banner += x.stalled_after_banner;
            c.garbage_connections += x.garbage_connections;
            c.refused_or_failed += x.refused_or_failed;
        }
        Ok(Traffic {
            seconds: self.started.elapsed().as_secs_f64(),
            garbage_datagrams: c.garbage_datagrams,
            half_handshakes: c.half_handshakes,
            spoofed_datagrams: c.spoofed,
            server_replies: c.replies_received,
            tcp_opened_and_dropped: c.opened_and_dropped,
            tcp_stalled_after_banner: c.stalled_after_banner,
            tcp_garbage: c.garbage_connections,
            tcp_refused_or_failed: c.refused_or_failed,
            limits: format!(
                "≤{DATAGRAMS_PER_S} datagrams/s, ≤{CONNECTIONS_PER_S} connections/s, ≤{HELD_AT_ONCE} held open for {} s each",
                HOLD_FOR.as_secs()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_messages_have_their_protocols_headers() {
        let mut rng = Rng::new(7);
        for _ in 0..50 {
            // WireGuard (whitepaper §5.4.2): type 1, three reserved zero bytes, 148 bytes.
            let m = shaped(Shape::WireGuard, &mut rng);
            assert_eq!((m.len(), &m[..4]), (148, &[1u8, 0, 0, 0][..]));
            // OpenVPN: opcode P_CONTROL_HARD_RESET_CLIENT_V2 (7) in the top 5 bits, key id 0.
            let m = shaped(Shape::OpenVpn, &mut rng);
            assert_eq!(m[0], 0x38);
            // IKEv2 (RFC 7296 §3.1): responder SPI 0, next payload SA (33), version 2.0,
            // IKE_SA_INIT (34), initiator flag, message id 0, length = the whole message.
            let m = shaped(Shape::Ike, &mut rng);
            assert_eq!(&m[8..16], &[0u8; 8]);
            assert_eq!(&m[16..20], &[33, 0x20, 34, 0x08]);
            assert_eq!(&m[20..24], &[0u8; 4]);
            assert_eq!(u32::from_be_bytes(m[24..28].try_into().unwrap()) as usize, m.len());
            // ESP in UDP (RFC 3948 §2.2): a zero SPI would mark an IKE message instead.
            let m = shaped(Shape::EspInUdp, &mut rng);
            assert_ne!(&m[..4], &[0u8; 4]);
        }
    }

    #[test]
    fn forged_datagrams_carry_the_forged_source() {
        let from = SocketAddrV4::new(Ipv4Addr::new(10, 99, 0, 1), 1194);
        let to = SocketAddrV4::new(Ipv4Addr::new(10, 99, 0, 2), 1194);
        let p = udp_packet(from, to, b"abc", 0x1234);
        assert_eq!(p.len(), 31);
        assert_eq!(&p[..4], &[0x45, 0, 0, 31]); // IPv4, IHL 5, total length 31
        assert_eq!(&p[4..6], &[0x12, 0x34]);
        assert_eq!(p[9], 17); // UDP
        assert_eq!(&p[12..16], &[10, 99, 0, 1]);
        assert_eq!(&p[16..20], &[10, 99, 0, 2]);
        assert_eq!(&p[20..28], &[0x04, 0xaa, 0x04, 0xaa, 0, 11, 0, 0]); // ports 1194, length 11
        assert_eq!(&p[28..], b"abc");
    }
}
