//! The TLS 1.3 server: rustls with AWS-LC, one key-exchange group, full handshakes only
//! (no tickets, no session cache), a fixed pool of threads each accepting connections.
//! Hostile clients (garbage, stalls, connections opened and dropped) cost a thread at most
//! [`HANDSHAKE_DEADLINE`] each and never stop the server.

use anyhow::{Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::NoServerSessionStorage;
use rustls::sign::{CertifiedKey, SigningKey, SingleCertAndKey};
use rustls::{ServerConfig, ServerConnection};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub fn provider(group: &'static dyn rustls::crypto::SupportedKxGroup) -> Arc<rustls::crypto::CryptoProvider> {
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    p.kx_groups = vec![group];
    Arc::new(p)
}

pub fn config(dir: &Path, group: &'static dyn rustls::crypto::SupportedKxGroup) -> Result<Arc<ServerConfig>> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("chain.pem"))
        .context("reading chain.pem")?
        .collect::<Result<_, _>>()
        .context("parsing chain.pem")?;
    let certified = CertifiedKey::new(chain, signing_key(dir)?);
    certified.keys_match().context("the certificate and key")?;
    let mut cfg = ServerConfig::builder_with_provider(provider(group))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
    cfg.send_tls13_tickets = 0;
    cfg.session_storage = Arc::new(NoServerSessionStorage {});
    Ok(Arc::new(cfg))
}

/// The server's private key, parsed so that no copy of it outlives the parse: the PEM and
/// DER bytes are ours and wiped here, and rustls's AWS-LC provider parses a borrowed DER
/// into AWS-LC's own key object (which AWS-LC cleanses when it frees it).
/// `with_single_cert` would take an owned DER and drop it unwiped.
fn signing_key(dir: &Path) -> Result<Arc<dyn SigningKey>> {
    use zeroize::Zeroize;
    let pem = zeroize::Zeroizing::new(std::fs::read(dir.join("key.pem")).context("reading key.pem")?);
    let mut der = PrivateKeyDer::from_pem_slice(&pem).context("parsing key.pem")?;
    let key = rustls::crypto::aws_lc_rs::sign::any_supported_type(&der);
    der.zeroize();
    key.context("the server key")
}

/// The longest a client may take to complete its handshake: a client that stalls, or
/// trickles one byte at a time, holds a server thread no longer than this.
pub const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(3);
/// The longest a connection may sit idle after its handshake.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// A socket whose first bytes were already read (by the waiting room): reads return them
/// first.
#[derive(Debug)]
pub(crate) struct Prefixed {
    pub(crate) prefix: Vec<u8>,
    pub(crate) pos: usize,
    pub(crate) sock: TcpStream,
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.prefix.len() {
            let n = buf.len().min(self.prefix.len() - self.pos);
            buf[..n].copy_from_slice(&self.prefix[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        self.sock.read(buf)
    }
}

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.sock.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.sock.flush()
    }
}

fn handle(cfg: &Arc<ServerConfig>, sock: TcpStream, prefix: Vec<u8>, deadline: std::time::Instant) -> Result<()> {
    let mut sock = Prefixed { prefix, pos: 0, sock };
    handle_inner(cfg, &mut sock, deadline).inspect_err(|_| {
        // Garbage, a stall or a dropped connection: end it at once, without TIME_WAIT.
        abortive_close(&sock.sock);
    })
}

fn handle_inner(cfg: &Arc<ServerConfig>, sock: &mut Prefixed, deadline: std::time::Instant) -> Result<()> {
    sock.sock.set_nodelay(true)?;
    // A client that stops reading cannot block a write for long either.
    sock.sock.set_write_timeout(Some(IDLE_TIMEOUT))?;
    let mut conn = ServerConnection::new(cfg.clone())?;
    while conn.is_handshaking() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            anyhow::bail!("handshake not completed within {HANDSHAKE_DEADLINE:?}");
        }
        sock.sock.set_read_timeout(Some(left))?;
        conn.complete_io(sock)?;
    }
    sock.sock.set_read_timeout(Some(IDLE_TIMEOUT))?;
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    // Serve until the client's close_notify (or EOF), answering an optional request:
    // the client may send N bytes and read N back.
    let mut buf = [0u8; 16384];
    loop {
        let mut s = rustls::Stream::new(&mut conn, &mut *sock);
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                s.write_all(&buf[..n])?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e.into()),
        }
    }
    conn.send_close_notify();
    while conn.wants_write() {
        if conn.write_tls(sock).is_err() {
            break;
        }
    }
    // Both close_notify messages are exchanged; end the TCP connection with a reset so no
    // TIME_WAIT entry is left. At thousands of connections per second those pile up by the
    // ten thousand within a minute and make every later connect() slower: a long run would
    // measure the port table, not TLS.
    abortive_close(&sock.sock);
    Ok(())
}

pub(crate) fn abortive_close(sock: &TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// A connection in the waiting room: accepted, not yet holding a complete first record.
struct Waiting {
    sock: TcpStream,
    buf: Vec<u8>,
    deadline: std::time::Instant,
}

/// What the first bytes of a connection say.
enum FirstRecord {
    /// A whole TLS handshake record has arrived: hand the connection to a server thread.
    Complete,
    /// Not yet.
    Partial,
    /// Not TLS: drop it.
    Garbage,
}

fn first_record(buf: &[u8]) -> FirstRecord {
    if buf.is_empty() {
        return FirstRecord::Partial;
    }
    // A handshake record (22) of TLS 1.0–1.3 record versions, at most 2^14 + 2048 bytes.
    if buf[0] != 22 || (buf.len() >= 2 && buf[1] != 3) {
        return FirstRecord::Garbage;
    }
    if buf.len() < 5 {
        return FirstRecord::Partial;
    }
    let len = u16::from_be_bytes([buf[3], buf[4]]) as usize;
    if len == 0 || len > 16384 + 2048 {
        return FirstRecord::Garbage;
    }
    if buf.len() >= 5 + len {
        FirstRecord::Complete
    } else {
        FirstRecord::Partial
    }
}

/// The waiting room: one thread accepts every connection and holds it, without a server
/// thread, until its first record (the ClientHello) is complete. Clients that stall or
/// trickle bytes wait here and are dropped at the handshake deadline, so they cannot
/// occupy the server threads (a Slowloris attack); garbage is dropped on its first bytes.
fn waiting_room(listener: TcpListener, to_workers: std::sync::mpsc::SyncSender<(TcpStream, Vec<u8>)>) {
    use std::os::fd::AsRawFd;
    /// Connections held at once; beyond this, the oldest is dropped.
    const MAX_WAITING: usize = 4096;
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let mut waiting: Vec<Waiting> = Vec::new();
    loop {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(waiting.len() + 1);
        fds.push(libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for w in &waiting {
            fds.push(libc::pollfd {
                fd: w.sock.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 50) };
        if n < 0 {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let now = std::time::Instant::now();
        // New connections.
        if fds[0].revents != 0 {
            while let Ok((sock, _)) = listener.accept() {
                if sock.set_nonblocking(true).is_err() {
                    continue;
                }
                if waiting.len() >= MAX_WAITING {
                    let old = waiting.remove(0);
                    abortive_close(&old.sock);
                }
                waiting.push(Waiting {
                    sock,
                    buf: Vec::new(),
                    deadline: now + HANDSHAKE_DEADLINE,
                });
            }
        }
        // Bytes from waiting connections (indices shift by one: fds[0] is the listener).
        let mut keep = Vec::with_capacity(waiting.len());
        for (i, mut w) in waiting.drain(..).enumerate() {
            let readable = fds.get(i + 1).is_some_and(|f| f.revents != 0);
            let mut closed = false;
            if readable {
                let mut chunk = [0u8; 4096];
                loop {
                    match w.sock.read(&mut chunk) {
                        Ok(0) => {
                            closed = true;
                            break;
                        }
                        Ok(k) => {
                            w.buf.extend_from_slice(&chunk[..k]);
                            if w.buf.len() > 32768 {
                                break;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => {
                            closed = true;
                            break;
                        }
                    }
                }
            }
            match first_record(&w.buf) {
                FirstRecord::Complete if !closed => {
                    if w.sock.set_nonblocking(false).is_ok() {
                        // Blocks only when every server thread is busy and the queue full:
                        // then new connections wait in the kernel's backlog, as they would
                        // without the waiting room.
                        let _ = to_workers.send((w.sock, w.buf));
                    }
                }
                FirstRecord::Partial if !closed && now < w.deadline => keep.push(w),
                _ => abortive_close(&w.sock),
            }
        }
        waiting = keep;
    }
}

/// What a server thread does with a connection whose first record has arrived: the
/// socket, the bytes already read, and the handshake's deadline. Errors are the client's
/// to report; the server keeps serving.
pub type Handler = Arc<dyn Fn(TcpStream, Vec<u8>, std::time::Instant) + Send + Sync>;

/// The rustls server: binds, prints one JSON line `{"ready":true,"addr":..}` and serves
/// until killed.
pub fn serve(cfg: Arc<ServerConfig>, listen: &str, threads: usize) -> Result<()> {
    let handler: Handler = Arc::new(move |sock, prefix, deadline| {
        let _ = handle(&cfg, sock, prefix, deadline);
    });
    serve_with(handler, listen, threads, serde_json::json!("rustls (aws-lc-rs)"))
}

/// Binds, prints one JSON line `{"ready":true,"addr":..,"library":..}` and serves with
/// `handler` on `threads` threads behind the waiting room until killed.
pub fn serve_with(handler: Handler, listen: &str, threads: usize, library: serde_json::Value) -> Result<()> {
    let listener = TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    // Ready only once every thread has seeded its generators (see `warm_thread`).
    crate::warm_thread();
    let threads = threads.max(1);
    let ready = Arc::new(std::sync::Barrier::new(threads + 1));
    let (tx, rx) = std::sync::mpsc::sync_channel::<(TcpStream, Vec<u8>)>(threads * 4);
    let rx = Arc::new(std::sync::Mutex::new(rx));
    let mut hs = Vec::new();
    for _ in 0..threads {
        let handler = handler.clone();
        let ready = ready.clone();
        let rx = rx.clone();
        hs.push(std::thread::spawn(move || {
            crate::warm_thread();
            ready.wait();
            loop {
                let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                match next {
                    // The rest of the handshake gets its own deadline from here.
                    Ok((sock, prefix)) => handler(sock, prefix, std::time::Instant::now() + HANDSHAKE_DEADLINE),
                    Err(_) => return,
                }
            }
        }));
    }
    hs.push(std::thread::spawn(move || waiting_room(listener, tx)));
    ready.wait();
    println!(
        "{}",
        serde_json::json!({"ready": true, "addr": addr.to_string(), "pid": std::process::id(), "library": library})
    );
    std::io::stdout().flush()?;
    for h in hs {
        let _ = h.join();
    }
    Ok(())
}
