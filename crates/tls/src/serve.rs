//! The TLS 1.3 server: rustls with AWS-LC, one key-exchange group, full handshakes only
//! (no tickets, no session cache), a fixed pool of threads each accepting connections.

use anyhow::{Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::NoServerSessionStorage;
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
    let key = PrivateKeyDer::from_pem_file(dir.join("key.pem")).context("reading key.pem")?;
    let mut cfg = ServerConfig::builder_with_provider(provider(group))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and key")?;
    cfg.send_tls13_tickets = 0;
    cfg.session_storage = Arc::new(NoServerSessionStorage {});
    Ok(Arc::new(cfg))
}

fn handle(cfg: &Arc<ServerConfig>, mut sock: TcpStream) -> Result<()> {
    sock.set_nodelay(true)?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut conn = ServerConnection::new(cfg.clone())?;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    while conn.wants_write() {
        conn.write_tls(&mut sock)?;
    }
    // Serve until the client's close_notify (or EOF), answering an optional request:
    // the client may send N bytes and read N back.
    let mut buf = [0u8; 16384];
    loop {
        let mut s = rustls::Stream::new(&mut conn, &mut sock);
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
        if conn.write_tls(&mut sock).is_err() {
            break;
        }
    }
    // Both close_notify messages are exchanged; end the TCP connection with a reset so no
    // TIME_WAIT entry is left. At thousands of connections per second those pile up by the
    // ten thousand within a minute and make every later connect() slower: a long run would
    // measure the port table, not TLS.
    abortive_close(&sock);
    Ok(())
}

fn abortive_close(sock: &TcpStream) {
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

/// Binds, prints one JSON line `{"ready":true,"addr":..}` and serves until killed.
pub fn serve(cfg: Arc<ServerConfig>, listen: &str, threads: usize) -> Result<()> {
    let listener = TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let listener = Arc::new(listener);
    // Ready only once every thread has seeded its generators (see `warm_thread`).
    crate::warm_thread();
    let ready = Arc::new(std::sync::Barrier::new(threads.max(1) + 1));
    let mut hs = Vec::new();
    for _ in 0..threads.max(1) {
        let l = listener.clone();
        let cfg = cfg.clone();
        let ready = ready.clone();
        hs.push(std::thread::spawn(move || {
            crate::warm_thread();
            ready.wait();
            loop {
                match l.accept() {
                    Ok((sock, _)) => {
                        // A failed handshake (the load generator stopping mid-connection) is
                        // the client's to report; the server keeps serving.
                        let _ = handle(&cfg, sock);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
        }));
    }
    ready.wait();
    println!(
        "{}",
        serde_json::json!({"ready": true, "addr": addr.to_string(), "pid": std::process::id()})
    );
    std::io::stdout().flush()?;
    for h in hs {
        let _ = h.join();
    }
    Ok(())
}
