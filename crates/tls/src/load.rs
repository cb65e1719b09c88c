//! The load generator: N clients, each doing full handshakes back to back or on a pace (TCP
//! connect, handshake, optional request, close_notify, close) for a warm-up and then a
//! measured window. Counts what crosses the wire and the CPU time of the server's processes
//! during the window.

use crate::wire::{own_cpu, process_cpu, Counting};
use anyhow::{bail, Context, Result};
use cryptoscope_measure::pace::{Next, Pace};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// Server address (IP:PORT).
    #[arg(long)]
    pub connect: SocketAddr,
    /// CA certificate (PEM) the server's chain must verify against.
    #[arg(long)]
    pub ca: PathBuf,
    /// The client's TLS library: rustls (AWS-LC) or openssl (the system's libssl).
    #[arg(long, default_value = "rustls", value_parser = ["rustls", "openssl"])]
    pub client: String,
    /// rustls: the one key-exchange group offered.
    #[arg(long)]
    pub group: Option<String>,
    /// rustls: offer X25519 first, with its key share, and --group second, so that a server
    /// that accepts only --group answers with a HelloRetryRequest.
    #[arg(long)]
    pub hello_retry: bool,
    /// openssl: TLS 1.2 with this cipher list (e.g. DHE-RSA-AES256-GCM-SHA384).
    #[arg(long)]
    pub tls12_ciphers: Option<String>,
    /// openssl: TLS 1.3 with these groups (e.g. ffdhe2048).
    #[arg(long)]
    pub openssl_groups: Option<String>,
    #[arg(long, default_value_t = 10)]
    pub clients: usize,
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Bytes each client sends after the handshake and reads back (0: handshake only).
    #[arg(long, default_value_t = 0)]
    pub request: usize,
    /// The window lasts until at least this many handshakes completed in it (at most 60 s
    /// more than --duration): a busy or stolen machine still gives a figure.
    #[arg(long, default_value_t = 20)]
    pub min_handshakes: u64,
    /// Measure this many handshakes instead of a duration (at most 10 minutes and 10 s per
    /// handshake).
    #[arg(long)]
    pub count: Option<u64>,
    /// Processes whose CPU time is the server's (repeatable).
    #[arg(long)]
    pub server_pid: Vec<u32>,
    /// Each client's pace in handshakes a second, spread evenly over the clients
    /// (`cryptoscope_measure::pace`); default: back to back.
    #[arg(long)]
    pub pace: Option<f64>,
}

#[derive(Default, Clone, Copy)]
struct Record {
    done: Option<Instant>,
    conn_ns: u64,
    tcp_ns: u64,
    sent: u64,
    received: u64,
    turns: u32,
    /// Segments the client retransmitted up to the end of the handshake.
    retrans: u32,
}

struct Shared {
    stop: AtomicBool,
    /// Handshakes completed inside the window (from `from` on): what a count counts.
    completed: std::sync::atomic::AtomicU64,
    from: OnceLock<Instant>,
    window: OnceLock<(Instant, Instant)>,
    start: OnceLock<Instant>,
}

enum Client {
    /// The measured configuration, and one whose verifier notes the signature scheme, for
    /// each client's first handshake (so measured handshakes run rustls's verifier as is).
    Rustls {
        cfg: Arc<ClientConfig>,
        probe: Arc<ClientConfig>,
        noted: Arc<NoteScheme>,
    },
    Openssl(openssl::ssl::SslConnector),
}

/// rustls's WebPKI server verifier, noting the signature scheme of the server's
/// CertificateVerify it checked.
#[derive(Debug)]
pub struct NoteScheme {
    inner: Arc<WebPkiServerVerifier>,
    scheme: OnceLock<SignatureScheme>,
}

impl NoteScheme {
    pub fn new(inner: Arc<WebPkiServerVerifier>) -> Self {
        Self {
            inner,
            scheme: OnceLock::new(),
        }
    }

    /// The scheme of the first CertificateVerify that verified.
    pub fn scheme(&self) -> Option<SignatureScheme> {
        self.scheme.get().copied()
    }
}

impl ServerCertVerifier for NoteScheme {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let ok = self.inner.verify_tls12_signature(message, cert, dss)?;
        let _ = self.scheme.set(dss.scheme);
        Ok(ok)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let ok = self.inner.verify_tls13_signature(message, cert, dss)?;
        let _ = self.scheme.set(dss.scheme);
        Ok(ok)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

/// The measured client configuration for `roots` and `group`, and a copy whose verifier is
/// a [`NoteScheme`] around the same WebPKI verifier.
pub fn client_configs(
    roots: RootCertStore,
    group: &'static dyn rustls::crypto::SupportedKxGroup,
    hello_retry: bool,
) -> Result<(Arc<ClientConfig>, Arc<ClientConfig>, Arc<NoteScheme>)> {
    let mut provider = crate::serve::provider(group);
    if hello_retry {
        // rustls sends a key share for its first group only: X25519's, which a server of
        // `group` alone answers with a HelloRetryRequest. With resumption disabled no hint
        // of the group is kept, so every connection retries.
        let mut p = (*provider).clone();
        p.kx_groups = vec![rustls::crypto::aws_lc_rs::kx_group::X25519, group];
        provider = Arc::new(p);
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build()?;
    let mut cfg = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_webpki_verifier(verifier.clone())
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    let noted = Arc::new(NoteScheme::new(verifier));
    let mut probe = cfg.clone();
    probe.dangerous().set_certificate_verifier(noted.clone());
    Ok((Arc::new(cfg), Arc::new(probe), noted))
}

fn rustls_client(a: &LoadArgs) -> Result<Client> {
    let name = a
        .group
        .as_deref()
        .context("--group is required with the rustls client")?;
    let subjects = (crate::provider_subjects())();
    let r = crate::groups::resolve(name, &subjects).map_err(anyhow::Error::msg)?;
    let g = r
        .group
        .with_context(|| format!("{name} does not fit in a TLS key share"))?;
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&a.ca).context("reading the CA")? {
        roots.add(c.context("parsing the CA")?)?;
    }
    if a.hello_retry && g.name() == rustls::NamedGroup::X25519 {
        bail!("--hello-retry offers X25519 first: choose another --group");
    }
    let (cfg, probe, noted) = client_configs(roots, g, a.hello_retry)?;
    Ok(Client::Rustls { cfg, probe, noted })
}

fn openssl_connector(a: &LoadArgs) -> Result<openssl::ssl::SslConnector> {
    use openssl::ssl::{SslConnector, SslMethod, SslSessionCacheMode, SslVersion};
    let mut b = SslConnector::builder(SslMethod::tls_client())?;
    // The study's RSA-1024 and DHE: allowed explicitly, as the 2010s allowed them.
    b.set_security_level(0);
    b.set_ca_file(&a.ca).context("loading the CA")?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    if let Some(c) = &a.tls12_ciphers {
        b.set_min_proto_version(Some(SslVersion::TLS1_2))?;
        b.set_max_proto_version(Some(SslVersion::TLS1_2))?;
        b.set_cipher_list(&format!("{c}:@SECLEVEL=0")).context("cipher list")?;
    } else {
        b.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    }
    if let Some(g) = &a.openssl_groups {
        b.set_groups_list(g).context("groups")?;
    }
    Ok(b.build())
}

/// Facts of the session learned from the first handshake.
#[derive(Default, Clone)]
struct Facts {
    version: String,
    cipher: String,
    /// The server's CertificateVerify scheme (rustls client; the OpenSSL client for ML-DSA
    /// certificates).
    signature_scheme: Option<String>,
}

fn one(client: &Client, addr: SocketAddr, request: &[u8], facts: &mut Option<Facts>) -> Result<Record> {
    let t0 = Instant::now();
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    let t1 = Instant::now();
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut s = Counting::new(tcp);
    let mut buf = vec![0u8; request.len().max(1)];
    let rec;
    match client {
        Client::Rustls { cfg, probe, noted } => {
            let cfg = if facts.is_none() { probe } else { cfg };
            let mut conn = ClientConnection::new(cfg.clone(), ServerName::try_from("localhost")?)?;
            while conn.is_handshaking() {
                conn.complete_io(&mut s)?;
            }
            while conn.wants_write() {
                conn.write_tls(&mut s)?;
            }
            let t2 = Instant::now();
            rec = record(t0, t1, t2, &s);
            if facts.is_none() {
                *facts = Some(Facts {
                    version: format!(
                        "{:?}",
                        conn.protocol_version().unwrap_or(rustls::ProtocolVersion::Unknown(0))
                    ),
                    cipher: conn
                        .negotiated_cipher_suite()
                        .map(|c| format!("{:?}", c.suite()))
                        .unwrap_or_default(),
                    signature_scheme: noted.scheme().map(|s| format!("{s:?}")),
                });
            }
            let mut st = rustls::Stream::new(&mut conn, &mut s);
            if !request.is_empty() {
                st.write_all(request)?;
                st.read_exact(&mut buf)?;
            }
            st.conn.send_close_notify();
            while st.conn.wants_write() {
                st.conn.write_tls(st.sock)?;
            }
            // Wait for the server's close_notify: proof it finished its side.
            loop {
                match st.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    // The server resets the connection once its close_notify is out
                    // (no TIME_WAIT); the reset may overtake the record.
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                        ) =>
                    {
                        break
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Client::Openssl(conn) => {
            let mut cfg = conn.configure()?;
            cfg.set_verify_hostname(true);
            let mut ssl = cfg
                .connect("localhost", s)
                .map_err(|e| anyhow::anyhow!("handshake: {e}"))?;
            let t2 = Instant::now();
            rec = record(t0, t1, t2, ssl.get_ref());
            if facts.is_none() {
                *facts = Some(Facts {
                    version: ssl.ssl().version_str().to_string(),
                    cipher: ssl
                        .ssl()
                        .current_cipher()
                        .map(|c| c.name().to_string())
                        .unwrap_or_default(),
                    signature_scheme: ml_dsa_scheme(ssl.ssl()),
                });
            }
            if !request.is_empty() {
                ssl.write_all(request)?;
                ssl.read_exact(&mut buf)?;
            }
            let _ = ssl.shutdown();
            loop {
                match ssl.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
    }
    Ok(rec)
}

/// With an ML-DSA certificate, the scheme the server's CertificateVerify used, named as
/// rustls names it (`ML_DSA_65`). In TLS 1.3 that signature is made with the certificate's
/// key, and an ML-DSA key signs only with its own parameter set, so the key's type says it;
/// the `openssl` crate has no call for the peer's signature scheme itself.
fn ml_dsa_scheme(ssl: &openssl::ssl::SslRef) -> Option<String> {
    use foreign_types::ForeignTypeRef;
    extern "C" {
        // libcrypto 3.0 and later.
        fn EVP_PKEY_get0_type_name(key: *const openssl_sys::EVP_PKEY) -> *const std::ffi::c_char;
    }
    let key = ssl.peer_certificate()?.public_key().ok()?;
    // SAFETY: a live EVP_PKEY; the name is a static string of the key's type, or NULL.
    let name = unsafe { EVP_PKEY_get0_type_name(key.as_ptr()) };
    if name.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated, owned by libcrypto.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
    name.starts_with("ML-DSA-").then(|| name.replace('-', "_"))
}

fn record(t0: Instant, t1: Instant, t2: Instant, s: &Counting) -> Record {
    Record {
        done: Some(t2),
        conn_ns: (t2 - t0).as_nanos() as u64,
        tcp_ns: (t1 - t0).as_nanos() as u64,
        sent: s.sent,
        received: s.received,
        turns: s.turns,
        retrans: s.retransmits().unwrap_or(0),
    }
}

/// (total, steal) jiffies of all CPUs from /proc/stat: the share of time the hypervisor
/// gave our virtual CPUs to someone else.
fn cpu_times() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().next()?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    Some((v.iter().take(8).sum(), *v.get(7)?))
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(mut v: Vec<u64>) -> Value {
    v.sort_unstable();
    let n = v.len().max(1) as f64;
    json!({
        "min": v.first().copied().unwrap_or(0),
        "p50": percentile(&v, 50.0),
        "p95": percentile(&v, 95.0),
        "p99": percentile(&v, 99.0),
        "max": v.last().copied().unwrap_or(0),
        "mean": v.iter().sum::<u64>() as f64 / n,
    })
}

/// What one client thread saw: its handshakes, errors (count, first), the facts of its
/// first handshake, and when its paced starts were late.
type ClientOutcome = (Vec<Record>, u64, Option<String>, Option<Facts>, Vec<Instant>);

/// One client: handshakes on its pace until `stop`.
fn client_loop(client: &Client, addr: SocketAddr, request: &[u8], shared: &Shared, mut pace: Pace) -> ClientOutcome {
    let t0 = Instant::now();
    let mut late = Vec::new();
    let mut recs = Vec::new();
    let mut errors = 0u64;
    let mut first_error = None;
    let mut facts = None;
    let mut consecutive = 0u32;
    while !shared.stop.load(Ordering::Relaxed) {
        match pace.next(t0.elapsed()) {
            Next::Wait(d) => {
                std::thread::sleep(d.min(Duration::from_millis(50)));
                continue;
            }
            Next::Now { late: true } => late.push(Instant::now()),
            Next::Now { late: false } => {}
        }
        match one(client, addr, request, &mut facts) {
            Ok(r) => {
                consecutive = 0;
                // Counted when it ended in the window, as only those are kept.
                let from = shared.from.get();
                if from.is_some_and(|f| r.done.is_some_and(|d| d >= *f)) {
                    shared.completed.fetch_add(1, Ordering::Relaxed);
                }
                recs.push(r)
            }
            Err(e) => {
                errors += 1;
                consecutive += 1;
                first_error.get_or_insert_with(|| format!("{e:#}"));
                if consecutive >= 50 {
                    break; // the server is not answering: no point hammering it
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    (recs, errors, first_error, facts, late)
}

pub fn load(a: &LoadArgs) -> Result<Value> {
    if a.clients == 0 || a.duration <= 0.0 || a.warmup < 0.0 {
        bail!("--clients and --duration must be positive");
    }
    if a.pace.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        bail!("--pace must be a positive number of handshakes a second");
    }
    let client = Arc::new(match a.client.as_str() {
        "openssl" => Client::Openssl(openssl_connector(a)?),
        _ => rustls_client(a)?,
    });
    // Which library the clients ran: the OpenSSL this binary links, or rustls.
    let library = match &*client {
        Client::Openssl(_) => openssl::version::version().to_string(),
        Client::Rustls { .. } => "rustls (aws-lc-rs)".to_string(),
    };
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        completed: std::sync::atomic::AtomicU64::new(0),
        from: OnceLock::new(),
        window: OnceLock::new(),
        start: OnceLock::new(),
    });
    let request = Arc::new(vec![0x5au8; a.request]);
    // The warm-up starts when every client thread has seeded its generators.
    crate::warm_thread();
    let ready = Arc::new(std::sync::Barrier::new(a.clients + 1));
    let mut threads = Vec::new();
    for i in 0..a.clients {
        let (client, shared, request, addr) = (client.clone(), shared.clone(), request.clone(), a.connect);
        let ready = ready.clone();
        let pace = match a.pace {
            Some(r) => Pace::new(r, i, a.clients),
            None => Pace::unpaced(),
        };
        threads.push(std::thread::spawn(move || {
            crate::warm_thread();
            ready.wait();
            client_loop(&client, addr, &request, &shared, pace)
        }));
    }
    ready.wait();
    let begin = Instant::now();
    shared.start.set(begin).ok();
    std::thread::sleep(Duration::from_secs_f64(a.warmup));
    let cpu0: Vec<Option<f64>> = a.server_pid.iter().map(|p| process_cpu(*p)).collect();
    let own0 = own_cpu();
    let stat0 = cpu_times();
    let w0 = Instant::now();
    shared.from.set(w0).ok();
    wait_for_window(a, &shared, &threads);
    let w1 = Instant::now();
    let stat1 = cpu_times();
    let own1 = own_cpu();
    let cpu1: Vec<Option<f64>> = a.server_pid.iter().map(|p| process_cpu(*p)).collect();
    shared.window.set((w0, w1)).ok();
    shared.stop.store(true, Ordering::Relaxed);
    let (mut recs, mut errors, mut first_error, mut facts) = (Vec::new(), 0u64, None, None);
    let mut late_starts = 0u64;
    for t in threads {
        let (r, e, fe, f, late) = t.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))?;
        recs.extend(r.into_iter().filter(|r| r.done.is_some_and(|d| d >= w0 && d <= w1)));
        late_starts += late.iter().filter(|t| **t >= w0 && **t <= w1).count() as u64;
        errors += e;
        if first_error.is_none() {
            first_error = fe;
        }
        if facts.is_none() {
            facts = f;
        }
    }
    let window = (w1 - w0).as_secs_f64();
    let server_cpu = cpu_between(&cpu0, &cpu1)?;
    let n = recs.len();
    let facts = facts.unwrap_or_default();
    Ok(json!({
        "client": a.client,
        "client_library": library,
        "clients": a.clients,
        "window_s": window,
        "warmup_s": a.warmup,
        "handshakes": n,
        "errors": errors,
        "first_error": first_error,
        "handshakes_per_s": n as f64 / window,
        "connection_ns": summary(recs.iter().map(|r| r.conn_ns).collect()),
        "tcp_connect_ns": summary(recs.iter().map(|r| r.tcp_ns).collect()),
        "bytes_client_to_server": summary(recs.iter().map(|r| r.sent).collect()),
        "bytes_server_to_client": summary(recs.iter().map(|r| r.received).collect()),
        "round_trips": summary(recs.iter().map(|r| r.turns as u64).collect()),
        "client_retransmits": summary(recs.iter().map(|r| r.retrans as u64).collect()),
        "client_retransmits_total": recs.iter().map(|r| r.retrans as u64).sum::<u64>(),
        // Every handshake's time, in the order they completed, when a count was asked for.
        "connection_ns_each": a.count.map(|_| recs.iter().map(|r| r.conn_ns).collect::<Vec<u64>>()),
        "server_cpu_s": server_cpu,
        "client_cpu_s": own1 - own0,
        "steal_pct": match (stat0, stat1) {
            (Some((t0, s0)), Some((t1, s1))) if t1 > t0 => Some(100.0 * (s1 - s0) as f64 / (t1 - t0) as f64),
            _ => None,
        },
        "cpu_source": "/proc/PID/stat utime+stime (clock ticks) for the server; getrusage for the clients",
        "version": facts.version,
        "cipher": facts.cipher,
        "signature_scheme": facts.signature_scheme,
        "request_bytes": a.request,
        "pace": a.pace,
        // Paced starts in the window taken after they were due (the last handshake overran).
        "late_starts": a.pace.map(|_| late_starts),
    }))
}

/// Waits until the measured window is over: `--count` handshakes made (or a cap passed),
/// else `--duration` seconds and at least `--min-handshakes`; sooner when every client
/// thread has ended.
fn wait_for_window<T>(a: &LoadArgs, shared: &Shared, threads: &[std::thread::JoinHandle<T>]) {
    let (wanted, cap) = match a.count {
        // Ten minutes, and ten seconds more per handshake: 200 at 20 % loss on a 200 ms
        // round trip take minutes (a dead server ends the clients sooner).
        Some(n) => (n, Instant::now() + Duration::from_secs(600 + 10 * n)),
        None => {
            std::thread::sleep(Duration::from_secs_f64(a.duration));
            (a.min_handshakes, Instant::now() + Duration::from_secs(60))
        }
    };
    while shared.completed.load(Ordering::Relaxed) < wanted && Instant::now() < cap {
        if threads.iter().all(|t| t.is_finished()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(if a.count.is_some() { 2 } else { 20 }));
    }
}

/// The servers' CPU seconds between two readings (none without a server process; an error
/// when one went away in between).
fn cpu_between(cpu0: &[Option<f64>], cpu1: &[Option<f64>]) -> Result<Option<f64>> {
    if cpu0.is_empty() {
        return Ok(None);
    }
    let mut sum = 0.0;
    for (a0, a1) in cpu0.iter().zip(cpu1) {
        match (a0, a1) {
            (Some(x), Some(y)) => sum += y - x,
            _ => bail!("a server process went away during the measurement"),
        }
    }
    Ok(Some(sum))
}
