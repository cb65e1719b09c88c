//! The TLS server keeps serving well-behaved clients while others send garbage, stall in
//! the middle of a handshake, trickle bytes, or open and drop connections (bounded counts
//! and durations, loopback only).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cryptoscope-tls"))
}

fn start(dir: &std::path::Path, threads: usize) -> (Server, SocketAddr) {
    let o = tool()
        .args(["certs", "--alg", "ecdsa-p256", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut child = tool()
        .args([
            "serve",
            "--group",
            "X25519",
            "--listen",
            "127.0.0.1:0",
            "--threads",
            &threads.to_string(),
            "--dir",
        ])
        .arg(dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    (Server(child), v["addr"].as_str().unwrap().parse().unwrap())
}

fn client_config(dir: &std::path::Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_file_iter(dir.join("ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// One well-behaved connection: handshake, 100 bytes echoed, close. Its duration.
fn good(cfg: &Arc<rustls::ClientConfig>, addr: SocketAddr) -> Result<Duration, String> {
    let t = Instant::now();
    let mut sock = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(cfg.clone(), name).map_err(|e| e.to_string())?;
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    let msg = [0x5au8; 100];
    tls.write_all(&msg).map_err(|e| e.to_string())?;
    let mut back = [0u8; 100];
    tls.read_exact(&mut back).map_err(|e| e.to_string())?;
    if back != msg {
        return Err("echo differs".into());
    }
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Ok(t.elapsed())
}

/// The first bytes of a TLS 1.3 ClientHello record header, then nothing: a stalled handshake.
const PARTIAL_HELLO: &[u8] = &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03];

fn hostile(addr: SocketAddr, kind: usize, stop: &AtomicBool) {
    let mut x = 0x2545_f491_4f6c_dd1du64 ^ kind as u64;
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = TcpStream::connect(addr) else { continue };
        ATTACKS.fetch_add(1, Ordering::Relaxed);
        match kind % 4 {
            // Garbage: 4 KiB of noise.
            0 => {
                let junk: Vec<u8> = (0..4096)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect();
                let _ = s.write_all(&junk);
            }
            // A stalled handshake: half a ClientHello, then silence for 2 s.
            1 => {
                let _ = s.write_all(PARTIAL_HELLO);
                std::thread::sleep(Duration::from_secs(2));
            }
            // Trickle: one byte of the hello every 400 ms.
            2 => {
                for b in PARTIAL_HELLO {
                    if stop.load(Ordering::Relaxed) || s.write_all(&[*b]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(400));
                }
            }
            // Open and drop.
            _ => drop(s),
        }
    }
}

/// Connections the hostile clients have opened so far.
static ATTACKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn well_behaved_clients_are_served_under_attack() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = start(dir.path(), 4);
    let cfg = client_config(dir.path());
    // Before: it works.
    good(&cfg, addr).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Eight hostile clients: two of each kind (two stalls and two trickles at a time hold at
    // most four connections, bounded by the server's handshake deadline).
    let attackers: Vec<_> = (0..8)
        .map(|k| {
            let stop = stop.clone();
            std::thread::spawn(move || hostile(addr, k, &stop))
        })
        .collect();
    // The attack is under way once the attackers have opened eight connections (polled,
    // not slept for).
    let t = Instant::now();
    while ATTACKS.load(Ordering::Relaxed) < 8 {
        assert!(t.elapsed() < Duration::from_secs(60), "the attackers never connected");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Twenty well-behaved clients, one after another, while the attack goes on: each must
    // be served (a client that is not gives up after 20 s and fails the test). How long
    // they wait is the machine's load to decide, so it is printed, not asserted.
    let mut worst = Duration::ZERO;
    let mut served = 0;
    while served < 20 {
        match good(&cfg, addr) {
            Ok(d) => {
                worst = worst.max(d);
                served += 1;
            }
            Err(e) => panic!("a well-behaved client failed under attack after {served}: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    for a in attackers {
        a.join().unwrap();
    }
    eprintln!("{served} well-behaved connections under attack, the slowest {worst:?}");
    // After: still serving.
    good(&cfg, addr).unwrap();
}
