//! One cell of the OpenVPN server study (a server, its clients, one window), and the run
//! of every cell.

use super::clients::{self, Connection, Outcome, Shared};
use super::{
    accel, check, check_alive, children_cpu, client_args, load, mpsc, nap, pin, run_cmd, server_args, spawn_logged,
    times, version_of, wait_for, wrong_channels, Arc, AtomicBool, AtomicU64, Command, Duration, Instant, Netns,
    OnceLock, OpenvpnServerArgs, Ordering, Pace, Path, Procs, Result, Row, Setup, Status, Study, DATA_CHANNEL,
    MASK_AES, SERVER_LIMITS, TLS_CIPHER,
};
use cryptoscope_engine::context::Ctx;

/// The window's bounds and what was read at them.
struct Window {
    from: Instant,
    to: Instant,
    server_cpu_s: f64,
    clients_cpu_s: f64,
}

impl Window {
    fn holds(&self, t: Instant) -> bool {
        t >= self.from && t <= self.to
    }
    fn seconds(&self) -> f64 {
        (self.to - self.from).as_secs_f64()
    }
}

/// Starts the server in namespace B; waits until it serves.
fn server(s: &Study, n: &Netns, dir: &Path, bits: u32, soft: bool, tag: &str) -> Result<Procs> {
    let log = dir.join(format!("server-{tag}.log"));
    let mut cmd = n.wrap('b', Path::new("openvpn"));
    cmd.args(server_args(
        &dir.join(format!("rsa-{bits}")),
        &dir.join("ffdhe2048.pem"),
        bits,
    ));
    pin(&mut cmd, &s.server_cpu.into_iter().collect::<Vec<_>>());
    let mut procs = Procs::default();
    procs.push(spawn_logged(cmd, &log, soft)?);
    let logs = [log.clone()];
    wait_for("the OpenVPN server", Duration::from_secs(30), || {
        check_alive(&mut procs, &logs)?;
        Ok(std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Initialization Sequence Completed"))
    })?;
    Ok(procs)
}

/// Measures one cell: fresh namespaces, server and clients; all stopped at its end.
fn cell(s: &Study, dir: &Path, bits: u32, soft: bool, pace: Option<f64>) -> Result<Row> {
    let tag = format!("rsa-{bits}-{}-{}", accel(soft), load(pace).replace('/', ""));
    let n = Netns::create("csovpn", None)?;
    let mut srv = server(s, &n, dir, bits, soft, &tag)?;
    let pid = srv[0].id();
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        completed: AtomicU64::new(0),
        from: OnceLock::new(),
    });
    let (tx, rx) = mpsc::channel();
    let reaper = clients::reaper(rx);
    let keys = dir.join(format!("rsa-{bits}"));
    let args = Arc::new(client_args(&keys, bits));
    let t0 = Instant::now();
    let mut threads = Vec::new();
    for i in 0..s.clients as usize {
        let p = match pace {
            Some(r) => Pace::new(r, i, s.clients as usize),
            None => Pace::unpaced(),
        };
        let (shared, args, tx) = (shared.clone(), args.clone(), tx.clone());
        let ns = n.a.clone();
        let cpus = s.client_cpus.clone();
        threads.push(std::thread::spawn(move || {
            let command = || {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &ns, "openvpn"]).args(args.iter());
                pin(&mut c, &cpus);
                if soft {
                    c.env("OPENSSL_ia32cap", MASK_AES);
                }
                c
            };
            clients::client(p, t0, shared, command, tx)
        }));
    }
    drop(tx);
    nap(s.warmup);
    let from = Instant::now();
    shared.from.set(from).ok();
    let cpu0 = crate::netns::process_cpu(pid);
    let ch0 = children_cpu();
    nap(s.window);
    let cap = from + Duration::from_secs_f64(s.window + 120.0);
    while shared.completed.load(Ordering::Relaxed) < s.min
        && Instant::now() < cap
        && !crate::stop::requested()
        && !threads.iter().all(|t| t.is_finished())
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let to = Instant::now();
    let cpu1 = crate::netns::process_cpu(pid);
    let ch1 = children_cpu();
    shared.stop.store(true, Ordering::Relaxed);
    let mut all = Outcome::default();
    let mut first_error = None;
    for t in threads {
        match t.join() {
            Ok(Ok(o)) => {
                all.done.extend(o.done);
                all.failed.extend(o.failed);
                all.late.extend(o.late);
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(format!("a client could not start: {e:#}"));
            }
            Err(_) => {
                first_error.get_or_insert("a client thread panicked".to_string());
            }
        }
    }
    let alive = check_alive(&mut srv, &[dir.join(format!("server-{tag}.log"))]);
    drop(srv);
    let _ = reaper.join();
    drop(n);
    alive?;
    let w = Window {
        from,
        to,
        server_cpu_s: match (cpu0, cpu1) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        },
        clients_cpu_s: ch1 - ch0,
    };
    Ok(row(s, bits, soft, pace, &w, all, first_error))
}

/// The cell's row from what its clients saw in the window.
fn row(s: &Study, bits: u32, soft: bool, pace: Option<f64>, w: &Window, all: Outcome, error: Option<String>) -> Row {
    let done: Vec<&Connection> = all.done.iter().filter(|c| w.holds(c.ready)).collect();
    let k = done.len() as u64;
    let secs = w.seconds();
    let per_conn = |cpu: f64| if k > 0 { cpu * 1000.0 / k as f64 } else { f64::NAN };
    // Every connection, warm-up included, must have had the study's channels.
    let wrong = all.done.iter().find_map(|c| wrong_channels(&c.control, &c.data, bits));
    let first = all.done.first();
    let failed_in = all.failed.iter().filter(|(t, _)| w.holds(*t)).count() as u64;
    let error = error.or(wrong).or_else(|| {
        (k == 0).then(|| match all.failed.first() {
            Some((_, why)) => format!("no connection completed in the window; a client {why}"),
            None => "no connection completed in the window".into(),
        })
    });
    Row {
        rsa_bits: bits,
        soft,
        pace,
        status: if error.is_some() { Status::Failed } else { Status::Ok },
        error,
        window_s: secs,
        connections: k,
        failed: failed_in,
        late_starts: all.late.iter().filter(|t| w.holds(**t)).count() as u64,
        per_minute: k as f64 * 60.0 / secs,
        connect: times(done.iter().map(|c| c.connect_ms).collect()),
        start_to_ready: times(done.iter().map(|c| c.start_ms).collect()),
        server_cpu_pct: 100.0 * w.server_cpu_s / secs,
        server_cpu_ms_per_connection: per_conn(w.server_cpu_s),
        client_cpu_ms_per_connection: per_conn(w.clients_cpu_s),
        client_cpu_pct: 100.0 * w.clients_cpu_s / secs / s.client_cpus.len().max(1) as f64,
        control_channel: first.map(|c| c.control.clone()).unwrap_or_default(),
        data_channel: first.map(|c| c.data.clone()).unwrap_or_default(),
    }
}

/// The certificates of every size (the tool's `certs` helper) and the RFC 7919 group.
fn keys(ctx: &Ctx, s: &Study, dir: &Path) -> Result<()> {
    let driver = ctx.workers.dir().join("cryptoscope-tls");
    for bits in &s.rsa {
        std::fs::create_dir_all(dir.join(format!("rsa-{bits}")))?;
        run_cmd(
            Command::new(&driver)
                .args(["certs", "--alg", &format!("rsa-{bits}"), "--dir"])
                .arg(dir.join(format!("rsa-{bits}"))),
        )?;
    }
    run_cmd(
        Command::new("openssl")
            .args([
                "genpkey",
                "-genparam",
                "-algorithm",
                "DH",
                "-pkeyopt",
                "group:ffdhe2048",
                "-out",
            ])
            .arg(dir.join("ffdhe2048.pem")),
    )?;
    Ok(())
}

fn setup(a: &OpenvpnServerArgs, s: &Study) -> Setup {
    let cpus = |v: &[usize]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    Setup {
        software: version_of(Command::new("openvpn").arg("--version"), |l| l.starts_with("OpenVPN ")),
        clients: s.clients,
        warmup_s: s.warmup,
        window_s: s.window,
        min_connections: s.min,
        control_channel: format!(
            "TLS 1.2 only, {TLS_CIPHER}, DH group ffdhe2048 (RFC 7919, --dh file); RSA certificates (CA, server, clients) of the cell's size, SHA-256 signatures"
        ),
        data_channel: format!("{DATA_CHANNEL} (--data-ciphers AES-256-CBC --auth SHA256)"),
        server: format!("OpenVPN UDP server, topology subnet, one certificate for every client (--duplicate-cn), {}", SERVER_LIMITS.join(" ")),
        placement: match s.server_cpu {
            Some(c) => format!(
                "server in one network namespace, clients in another, joined by a veth pair; the server on CPU {c}, the clients on CPU {}",
                cpus(&s.client_cpus)
            ),
            None => "server and clients in two network namespaces joined by a veth pair, sharing the one CPU".into(),
        },
        connection_time: "from the client's first packet (its `UDPv4 link remote` line) to its `Initialization Sequence Completed`, by the client's own log stamps (--machine-readable-output, µs): TLS handshake, pushed options, TUN device; `start_to_ready` adds the process start, by our monotonic clock".into(),
        cpu: "server: /proc/PID/stat utime+stime over the window; clients: getrusage(RUSAGE_CHILDREN) of the client processes reaped in the window".into(),
        mask: format!(
            "{MASK_AES} (AES-NI and PCLMULQDQ off, in the server and every client{}); RSA and Diffie-Hellman run the same code either way",
            if a.accel == "on" { "; not used: --accel on" } else { "" }
        ),
        interrupted: crate::stop::requested(),
    }
}

fn say(row: &Row) -> String {
    match row.status {
        Status::Ok => format!(
            "{} connections in {:.1} s ({:.0}/min), connect p50 {:.1} ms p95 {:.1} ms; server {:.0} % CPU, {:.2} ms a connection{}",
            row.connections,
            row.window_s,
            row.per_minute,
            row.connect.p50_ms,
            row.connect.p95_ms,
            row.server_cpu_pct,
            row.server_cpu_ms_per_connection,
            if row.late_starts > 0 { format!("; {} starts late", row.late_starts) } else { String::new() }
        ),
        Status::Failed => format!("failed: {}", row.error.as_deref().unwrap_or("?")),
    }
}

/// Runs the study; returns (setup, rows, exit code).
pub fn run(a: &OpenvpnServerArgs, ctx: &Ctx) -> Result<(Setup, Vec<Row>, i32)> {
    let quiet = ctx.quiet;
    let s = check(a)?;
    let (dir, _private) = cryptoscope_engine::util::work_dir(a.workdir.as_deref(), "openvpn-server")?;
    keys(ctx, &s, &dir)?;
    let catching = crate::stop::catch();
    let mut plan: Vec<(u32, bool, Option<f64>)> = Vec::new();
    for b in &s.rsa {
        for m in &s.modes {
            plan.extend(s.paces.iter().map(|p| (*b, *m, *p)));
        }
    }
    let mut rows = Vec::new();
    let mut code = 0;
    for (i, (bits, soft, pace)) in plan.iter().enumerate() {
        if crate::stop::requested() {
            break;
        }
        let label = format!("rsa-{bits} {} {}", accel(*soft), load(*pace));
        if !quiet {
            errln!(ctx, "[{}/{}] {label} ...", i + 1, plan.len());
        }
        let r = cell(&s, &dir, *bits, *soft, *pace).unwrap_or_else(|e| Row {
            status: Status::Failed,
            error: Some(format!("{e:#}")),
            ..row(
                &s,
                *bits,
                *soft,
                *pace,
                &Window {
                    from: Instant::now(),
                    to: Instant::now(),
                    server_cpu_s: f64::NAN,
                    clients_cpu_s: f64::NAN,
                },
                Outcome::default(),
                None,
            )
        });
        if crate::stop::requested() {
            break; // a window cut short by Ctrl-C is not kept
        }
        if r.status == Status::Failed {
            code = 1;
            errln!(ctx, "error: {label}: {}", r.error.as_deref().unwrap_or("?"));
        } else if !quiet {
            errln!(ctx, "  {}", say(&r));
        }
        rows.push(r);
    }
    drop(catching);
    if crate::stop::requested() {
        code = 1;
        errln!(
            ctx,
            "interrupted: servers, clients and namespaces removed; what was measured is kept"
        );
    }
    Ok((setup(a, &s), rows, code))
}
