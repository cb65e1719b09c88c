//! The TLS 1.3 server of an OpenSSL peer (`cryptoscope tls --peer openssl-3.5`): libssl
//! through the `openssl` crate, behind the same waiting room and thread pool as the rustls
//! server (serve.rs), with the same rules: full handshakes only (no tickets, no session
//! cache), the groups named, a handshake deadline, an optional echo, close_notify both
//! ways, then a reset. Which OpenSSL it is depends on the binary that links it:
//! `cryptoscope-tls-openssl35` (crates/tls-openssl35) links OpenSSL 3.5 built from
//! vendored sources, where nginx would need a build of its own.

use crate::serve::{abortive_close, serve_with, Handler, Prefixed, IDLE_TIMEOUT};
use anyhow::{Context, Result};
use openssl::ssl::{ErrorCode, SslAcceptor, SslFiletype, SslMethod, SslOptions, SslSessionCacheMode, SslVersion};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The acceptor: chain.pem and key.pem from `dir`, TLS 1.3 only, `groups` in OpenSSL's
/// names (e.g. `X25519MLKEM768`), no session resumption of any kind.
pub fn acceptor(dir: &Path, groups: &str) -> Result<SslAcceptor> {
    let mut b = SslAcceptor::mozilla_modern_v5(SslMethod::tls_server()).context("SSL_CTX_new")?;
    b.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_certificate_chain_file(dir.join("chain.pem"))
        .context("loading chain.pem")?;
    b.set_private_key_file(dir.join("key.pem"), SslFiletype::PEM)
        .context("loading key.pem (this OpenSSL may not know the key's type)")?;
    b.check_private_key().context("the certificate and key")?;
    b.set_groups_list(groups)
        .with_context(|| format!("groups `{groups}` (unknown to {})", openssl::version::version()))?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    b.set_options(SslOptions::NO_TICKET);
    b.set_num_tickets(0)?;
    Ok(b.build())
}

fn handle(acc: &SslAcceptor, sock: TcpStream, prefix: Vec<u8>, deadline: Instant) -> Result<()> {
    let raw = sock.try_clone()?;
    handle_inner(acc, Prefixed { prefix, pos: 0, sock }, deadline).inspect_err(|_| abortive_close(&raw))
}

fn handle_inner(acc: &SslAcceptor, sock: Prefixed, deadline: Instant) -> Result<()> {
    sock.sock.set_nodelay(true)?;
    sock.sock.set_write_timeout(Some(IDLE_TIMEOUT))?;
    let left = deadline.saturating_duration_since(Instant::now());
    anyhow::ensure!(!left.is_zero(), "handshake deadline passed in the queue");
    // A blocking handshake whose every read waits at most until the deadline.
    sock.sock.set_read_timeout(Some(left))?;
    let mut tls = acc.accept(sock).map_err(|e| anyhow::anyhow!("handshake: {e}"))?;
    tls.get_ref().sock.set_read_timeout(Some(IDLE_TIMEOUT))?;
    // Serve until the client's close_notify (or EOF), echoing an optional request.
    let mut buf = [0u8; 16384];
    loop {
        match tls.ssl_read(&mut buf) {
            Ok(0) => break,
            Ok(n) => tls.write_all(&buf[..n])?,
            Err(e) if e.code() == ErrorCode::ZERO_RETURN => break,
            Err(e) => return Err(anyhow::anyhow!("reading: {e}")),
        }
    }
    let _ = tls.shutdown();
    // As the rustls server: no TIME_WAIT entries (serve.rs, `handle_inner`).
    abortive_close(&tls.get_ref().sock);
    Ok(())
}

/// Serves with OpenSSL until killed (see [`serve_with`]).
pub fn serve(acc: SslAcceptor, listen: &str, threads: usize) -> Result<()> {
    let acc = Arc::new(acc);
    let handler: Handler = Arc::new(move |sock, prefix, deadline| {
        let _ = handle(&acc, sock, prefix, deadline);
    });
    serve_with(handler, listen, threads, serde_json::json!(openssl::version::version()))
}
