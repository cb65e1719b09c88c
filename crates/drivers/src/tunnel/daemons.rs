//! The tunnels' daemons: configuration, keys and start-up of OpenVPN (static key and TLS),
//! WireGuard, strongSwan and OpenSSH between the two namespaces, each returned as a
//! [`Running`] whose drop stops everything it started.

use super::{
    bail, run_cmd, Child, Command, Context, Duration, Instant, Netns, Path, PathBuf, Result, Stdio, ADDR_A, ADDR_B,
    INNER_A, INNER_B, MASK_AES,
};

/// Started processes, stopped (SIGTERM, then SIGKILL after 3 s) and reaped when dropped:
/// whatever way a set-up ends (ready, interrupted, timed out, a daemon died), nothing it
/// started outlives it.
#[derive(Default)]
pub(crate) struct Procs(Vec<Child>);

impl Procs {
    fn stop(&mut self) {
        for c in self.0.iter_mut() {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        }
        let t = Instant::now();
        for c in self.0.iter_mut() {
            while t.elapsed() < Duration::from_secs(3) {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        self.0.clear();
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::ops::Deref for Procs {
    type Target = Vec<Child>;
    fn deref(&self) -> &Vec<Child> {
        &self.0
    }
}

impl std::ops::DerefMut for Procs {
    fn deref_mut(&mut self) -> &mut Vec<Child> {
        &mut self.0
    }
}

/// The processes of a tunnel endpoint, killed and reaped on drop.
pub(super) struct Running {
    pub(super) children: Procs,
    /// Processes whose CPU is endpoint A's / B's (found after start-up).
    pub(super) pids_a: Vec<u32>,
    pub(super) pids_b: Vec<u32>,
    /// Where A sends pings and the transfer, and from which source address.
    pub(super) target: String,
    pub(super) source: Option<String>,
    pub(super) port: u16,
    /// Whether IP packets cross it (ssh forwards TCP only).
    pub(super) pings: bool,
    pub(super) software: String,
    pub(super) cleanup: Vec<PathBuf>,
    /// How to start a fresh session, with a new handshake, between the ends (none for
    /// OpenVPN's static key, which has no handshake, and SSH, whose new logins are tested).
    pub(super) renew: Option<Renew>,
}

/// How a tunnel gets a fresh session while B is under attack: the hostile measurement's
/// new handshake.
pub(super) enum Renew {
    /// Commands run in A's namespace, in order (IPsec: terminate the IKE SA and initiate
    /// again; WireGuard: remove B as a peer and set it again, so that the next packet needs a
    /// handshake).
    Commands(Vec<Vec<String>>),
    /// A signal to a process that restarts its session (OpenVPN: SIGUSR1, a soft restart
    /// with a new TLS handshake), done when its log shows `marker` once more.
    Signal {
        pid: u32,
        signal: i32,
        log: PathBuf,
        marker: &'static str,
    },
}

impl Drop for Running {
    fn drop(&mut self) {
        self.children.stop();
        for p in &self.cleanup {
            let _ = std::fs::remove_file(p);
        }
    }
}

pub(crate) fn spawn_logged(mut cmd: Command, log: &Path, soft: bool) -> Result<Child> {
    if soft {
        cmd.env("OPENSSL_ia32cap", MASK_AES);
    }
    let f = std::fs::File::create(log)?;
    let g = f.try_clone()?;
    cmd.stdin(Stdio::null()).stdout(f).stderr(g);
    cmd.spawn()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))
}

pub(crate) fn wait_for(what: &str, timeout: Duration, mut ready: impl FnMut() -> Result<bool>) -> Result<()> {
    let t = Instant::now();
    loop {
        if ready()? {
            return Ok(());
        }
        if t.elapsed() > timeout {
            bail!("{what}: not ready after {} s", timeout.as_secs());
        }
        if crate::stop::requested() {
            bail!("interrupted");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn check_alive(children: &mut [Child], logs: &[PathBuf]) -> Result<()> {
    for (c, log) in children.iter_mut().zip(logs) {
        if let Ok(Some(st)) = c.try_wait() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let last: Vec<&str> = text.lines().rev().filter(|l| !l.trim().is_empty()).take(2).collect();
            bail!(
                "{:?} exited ({st}): {}",
                log.file_name().unwrap_or_default(),
                last.into_iter().rev().collect::<Vec<_>>().join(" | ")
            );
        }
    }
    Ok(())
}

pub(crate) fn version_of(cmd: &mut Command, pick: impl Fn(&str) -> bool) -> String {
    cmd.output()
        .ok()
        .map(|o| {
            let t = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            t.lines().find(|l| pick(l)).unwrap_or("").trim().to_string()
        })
        .unwrap_or_default()
}

/// The options both OpenVPN ends share: the tun device over UDP, and the data channel's
/// cipher and keys (TLS with certificates the tool makes, with `tls_crypt` the control
/// channel wrapped too; or a static key).
fn openvpn_options(dir: &Path, tls: bool, tls_crypt: bool, couple: &str, driver: &Path) -> Result<Vec<String>> {
    let mut common: Vec<String> = vec![
        "--dev".into(),
        "tun0".into(),
        "--dev-type".into(),
        "tun".into(),
        "--proto".into(),
        "udp".into(),
        "--disable-dco".into(),
        "--verb".into(),
        "3".into(),
    ];
    if tls {
        run_cmd(
            Command::new(driver)
                .args(["certs", "--alg", "ecdsa-p256", "--dir"])
                .arg(dir),
        )?;
        // The control channel authenticated and encrypted with a shared key, as OpenVPN
        // recommends: without it, datagrams forged with the peer's address reach the TLS
        // state machine (with --hostile they desynchronise the keys and the data channel
        // stops).
        if tls_crypt {
            let key = dir.join("tls-crypt.key");
            run_cmd(Command::new("openvpn").args(["--genkey", "tls-crypt"]).arg(&key))?;
            common.extend(["--tls-crypt".into(), key.display().to_string()]);
        }
        match couple {
            "aes-256-gcm" => common.extend(["--data-ciphers".into(), "AES-256-GCM".into()]),
            "chacha20-poly1305" => common.extend(["--data-ciphers".into(), "CHACHA20-POLY1305".into()]),
            _ => common.extend([
                "--data-ciphers".into(),
                "AES-256-CBC".into(),
                "--auth".into(),
                "SHA256".into(),
            ]),
        }
    } else {
        run_cmd(
            Command::new("openvpn")
                .args(["--genkey", "secret"])
                .arg(dir.join("static.key")),
        )?;
        let (c, h) = match couple {
            "none:none" => ("none", "none"),
            "aes-256-cbc:none" => ("AES-256-CBC", "none"),
            _ => ("AES-256-CBC", "SHA256"),
        };
        common.extend(["--cipher".into(), c.into(), "--auth".into(), h.into()]);
    }
    Ok(common)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn openvpn(
    n: &Netns,
    dir: &Path,
    tls: bool,
    tls_crypt: bool,
    couple: &str,
    soft: bool,
    driver: &Path,
) -> Result<Running> {
    let common = openvpn_options(dir, tls, tls_crypt, couple, driver)?;
    let mut children = Procs::default();
    let mut logs = Vec::new();
    for (side, local, remote, me, peer) in [
        ('a', ADDR_A, ADDR_B, INNER_A, INNER_B),
        ('b', ADDR_B, ADDR_A, INNER_B, INNER_A),
    ] {
        let mut cmd = n.wrap(side, Path::new("openvpn"));
        cmd.args(&common)
            .args(["--local", local, "--remote", remote, "--ifconfig", me, peer]);
        if tls {
            let d = dir.display();
            // Point to point: both ends present the one certificate the tool made; each
            // verifies the other's chain against the CA, the client also the name.
            if side == 'a' {
                cmd.args(["--tls-server", "--dh", "none"]);
            } else {
                cmd.args(["--tls-client", "--verify-x509-name", "localhost", "name"]);
            }
            cmd.arg("--ca")
                .arg(format!("{d}/ca.pem"))
                .arg("--cert")
                .arg(format!("{d}/chain.pem"))
                .arg("--key")
                .arg(format!("{d}/key.pem"));
        } else {
            cmd.arg("--secret")
                .arg(dir.join("static.key"))
                .arg(if side == 'a' { "0" } else { "1" });
        }
        let log = dir.join(format!("openvpn-{side}.log"));
        children.push(spawn_logged(cmd, &log, soft)?);
        logs.push(log);
    }
    wait_for("openvpn", Duration::from_secs(30), || {
        check_alive(&mut children, &logs)?;
        Ok(logs.iter().all(|l| {
            std::fs::read_to_string(l)
                .unwrap_or_default()
                .contains("Initialization Sequence Completed")
        }))
    })?;
    let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
    Ok(Running {
        pids_a: vec![pids[0]],
        pids_b: vec![pids[1]],
        children,
        target: INNER_B.into(),
        source: Some(INNER_A.into()),
        port: 5201,
        pings: true,
        software: version_of(Command::new("openvpn").arg("--version"), |l| l.starts_with("OpenVPN "))
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" "),
        cleanup: Vec::new(),
        // B is the TLS client (and the attacked end): SIGUSR1 makes it start a new session
        // with a new TLS handshake.
        renew: tls.then(|| Renew::Signal {
            pid: pids[1],
            signal: libc::SIGUSR1,
            log: logs[1].clone(),
            marker: "Initialization Sequence Completed",
        }),
    })
}

/// WireGuard between the namespaces: the kernel's module (`kernel`) or wireguard-go, set up
/// alike with `wg`.
pub(super) fn wireguard(n: &Netns, dir: &Path, kernel: bool) -> Result<Running> {
    let tag = std::process::id();
    let mut keys = Vec::new();
    for side in ['a', 'b'] {
        let private = crate::netns::run_cmd_secret(Command::new("wg").arg("genkey"))?;
        let key = dir.join(format!("wg-{side}.key"));
        std::fs::write(&key, private.as_bytes())?;
        let mut p = Command::new("wg");
        p.arg("pubkey").stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut ch = p.spawn()?;
        std::io::Write::write_all(ch.stdin.as_mut().expect("piped"), private.as_bytes())?;
        let out = ch.wait_with_output()?;
        keys.push((key, String::from_utf8_lossy(&out.stdout).trim().to_string()));
    }
    let mut children = Procs::default();
    let mut cleanup = Vec::new();
    let mut logs = Vec::new();
    for (i, (side, me, peer, peer_addr)) in [('a', INNER_A, INNER_B, ADDR_B), ('b', INNER_B, INNER_A, ADDR_A)]
        .into_iter()
        .enumerate()
    {
        let dev = format!("wcs{tag}{side}");
        let ns = if side == 'a' { &n.a } else { &n.b };
        if kernel {
            // The device goes with its namespace.
            run_cmd(Command::new("ip").args(["-n", ns, "link", "add", &dev, "type", "wireguard"]))?;
        } else {
            let mut cmd = n.wrap(side, Path::new("wireguard-go"));
            cmd.args(["-f", &dev]);
            let log = dir.join(format!("wireguard-{side}.log"));
            children.push(spawn_logged(cmd, &log, false)?);
            logs.push(log);
            cleanup.push(PathBuf::from(format!("/var/run/wireguard/{dev}.sock")));
            wait_for("wireguard-go", Duration::from_secs(10), || {
                check_alive(&mut children, &logs)?;
                Ok(Command::new("ip")
                    .args(["-n", ns, "link", "show", &dev])
                    .output()
                    .map(|o| o.status.success())
                    .unwrap_or(false))
            })?;
        }
        run_cmd(
            n.wrap(side, Path::new("wg"))
                .args(["set", &dev, "listen-port", "51820", "private-key"])
                .arg(&keys[i].0)
                .args([
                    "peer",
                    &keys[1 - i].1,
                    "endpoint",
                    &format!("{peer_addr}:51820"),
                    "allowed-ips",
                    &format!("{peer}/32"),
                ]),
        )?;
        run_cmd(Command::new("ip").args(["-n", ns, "addr", "add", &format!("{me}/24"), "dev", &dev]))?;
        run_cmd(Command::new("ip").args(["-n", ns, "link", "set", &dev, "up"]))?;
    }
    let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
    let dev_a = format!("wcs{tag}a");
    let software = if kernel {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        format!("the wireguard module of Linux {}", release.trim())
    } else {
        format!(
            "wireguard-go {}",
            version_of(Command::new("wireguard-go").arg("--version"), |l| l
                .starts_with("wireguard-go"))
            .trim_start_matches("wireguard-go ")
        )
    };
    Ok(Running {
        // The kernel's WireGuard has no process whose CPU could be read.
        pids_a: pids.first().copied().into_iter().collect(),
        pids_b: pids.get(1).copied().into_iter().collect(),
        children,
        target: INNER_B.into(),
        source: Some(INNER_A.into()),
        port: 5201,
        pings: true,
        software,
        cleanup,
        // A forgets B and learns it again: no session keys, so the next packet needs a
        // new handshake with the attacked B.
        renew: Some(Renew::Commands(vec![
            vec![
                "wg".into(),
                "set".into(),
                dev_a.clone(),
                "peer".into(),
                keys[1].1.clone(),
                "remove".into(),
            ],
            vec![
                "wg".into(),
                "set".into(),
                dev_a,
                "peer".into(),
                keys[1].1.clone(),
                "endpoint".into(),
                format!("{ADDR_B}:51820"),
                "allowed-ips".into(),
                format!("{INNER_B}/32"),
            ],
        ])),
    })
}

/// IPsec between the namespaces with strongSwan: ESP in the kernel through xfrm (`kernel`:
/// kernel-netlink installs the SAs) or in charon's kernel-libipsec over a TUN device.
pub(super) fn ipsec(n: &Netns, dir: &Path, couple: &str, soft: bool, kernel: bool) -> Result<Running> {
    let esp = match couple {
        "aes-256-gcm" => "aes256gcm16",
        "chacha20-poly1305" => "chacha20poly1305",
        _ => "aes256-sha256",
    };
    let mut children = Procs::default();
    let mut logs = Vec::new();
    let psk = hex_secret();
    // Without kernel-libipsec, kernel-netlink installs the SAs and policies in xfrm.
    let plugins = if kernel {
        "random nonce openssl pem pkcs1 x509 pubkey kdf curve25519 kernel-netlink socket-default vici"
    } else {
        "random nonce openssl pem pkcs1 x509 pubkey kdf curve25519 kernel-libipsec kernel-netlink socket-default vici"
    };
    for (side, local, remote, me, peer) in [
        ('a', ADDR_A, ADDR_B, INNER_A, INNER_B),
        ('b', ADDR_B, ADDR_A, INNER_B, INNER_A),
    ] {
        let d = dir.join(format!("ipsec-{side}"));
        std::fs::create_dir_all(d.join("run"))?;
        let vici = format!("unix://{}/charon.vici", d.display());
        std::fs::write(
            d.join("strongswan.conf"),
            format!(
                "charon {{\n  load_modular = no\n  load = {plugins}\n  install_routes = yes\n  filelog {{\n    log {{\n      path = {}/charon.log\n      default = 1\n    }}\n  }}\n  plugins {{\n    vici {{\n      socket = {vici}\n    }}\n  }}\n}}\n",
                d.display()
            ),
        )?;
        let (my_id, peer_id) = if side == 'a' {
            ("a.cryptoscope", "b.cryptoscope")
        } else {
            ("b.cryptoscope", "a.cryptoscope")
        };
        // The configuration holds the pre-shared key: wiped once written.
        let conf = zeroize::Zeroizing::new(format!(
                "connections {{\n  t {{\n    local_addrs = {local}\n    remote_addrs = {remote}\n    proposals = aes256-sha256-x25519\n    encap = yes\n    local {{\n      auth = psk\n      id = {my_id}\n    }}\n    remote {{\n      auth = psk\n      id = {peer_id}\n    }}\n    children {{\n      t {{\n        local_ts = {me}/32\n        remote_ts = {peer}/32\n        esp_proposals = {esp}\n      }}\n    }}\n  }}\n}}\nsecrets {{\n  ike-t {{\n    id-a = a.cryptoscope\n    id-b = b.cryptoscope\n    secret = \"{psk}\"\n  }}\n}}\n",
            psk = psk.as_str()
        ));
        std::fs::write(d.join("swanctl.conf"), conf.as_bytes())?;
        let ns = if side == 'a' { &n.a } else { &n.b };
        run_cmd(Command::new("ip").args(["-n", ns, "addr", "add", &format!("{me}/32"), "dev", "lo"]))?;
        // charon's pid file and sockets live under /run: give each its own.
        let mut cmd = n.wrap(side, Path::new("unshare"));
        cmd.args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount --bind {}/run /run && exec /usr/lib/ipsec/charon",
                d.display()
            ))
            .env("STRONGSWAN_CONF", d.join("strongswan.conf"));
        let log = d.join("charon.out");
        children.push(spawn_logged(cmd, &log, soft)?);
        logs.push(log);
        let sock = d.join("charon.vici");
        wait_for("charon", Duration::from_secs(15), || {
            check_alive(&mut children, &logs)?;
            Ok(sock.exists())
        })?;
        run_cmd(
            n.wrap(side, Path::new("swanctl"))
                .args(["--load-all", "--file"])
                .arg(d.join("swanctl.conf"))
                .args(["--uri", &vici]),
        )
        .context("swanctl --load-all")?;
    }
    let vici_a = format!("unix://{}/ipsec-a/charon.vici", dir.display());
    let out = n
        .wrap('a', Path::new("swanctl"))
        .args(["--initiate", "--child", "t", "--timeout", "20", "--uri", &vici_a])
        .output()?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout);
        let why: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("[IKE]") || l.contains("[CFG]"))
            .collect();
        bail!(
            "IKE negotiation failed: {}",
            why.iter().rev().take(2).rev().cloned().collect::<Vec<_>>().join(" | ")
        );
    }
    let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
    Ok(Running {
        pids_a: vec![pids[0]],
        pids_b: vec![pids[1]],
        children,
        target: INNER_B.into(),
        source: Some(INNER_A.into()),
        port: 5201,
        pings: true,
        software: format!(
            "strongSwan {} ({}, openssl plugin for IKE)",
            version_of(Command::new("swanctl").arg("--version"), |l| l.contains("strongSwan"))
                .split_whitespace()
                .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                .unwrap_or("?"),
            if kernel { "ESP in the kernel" } else { "kernel-libipsec" }
        ),
        cleanup: Vec::new(),
        // A closes the IKE SA and initiates a new one (IKE_SA_INIT and IKE_AUTH to the
        // attacked B); `--initiate` returns once the child SA is up.
        renew: Some(Renew::Commands(
            [vec!["--terminate", "--ike", "t"], vec!["--initiate", "--child", "t"]]
                .into_iter()
                .map(|args| {
                    std::iter::once("swanctl".to_string())
                        .chain(args.into_iter().map(String::from))
                        .chain(["--timeout".into(), "20".into(), "--uri".into(), vici_a.clone()])
                        .collect()
                })
                .collect(),
        )),
    })
}

/// A random pre-shared key in hex, wiped when dropped (its random bytes too).
pub(super) fn hex_secret() -> zeroize::Zeroizing<String> {
    use zeroize::Zeroize;
    let mut b = [0u8; 24];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b));
    let mut s = zeroize::Zeroizing::new(String::with_capacity(48));
    for x in b {
        s.push(char::from_digit(u32::from(x >> 4), 16).unwrap_or('0'));
        s.push(char::from_digit(u32::from(x & 15), 16).unwrap_or('0'));
    }
    b.zeroize();
    s
}

pub(super) fn descendants(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let kids = crate::netns::children_of(out[i]);
        out.extend(kids);
        i += 1;
    }
    out
}

/// `ssh` in namespace A with the configuration's key, no user configuration, no host-key
/// prompt and no password prompt.
pub(super) fn ssh_client(n: &Netns, dir: &Path) -> Command {
    let mut c = n.wrap('a', Path::new("ssh"));
    c.args(["-F", "/dev/null", "-i"]).arg(dir.join("id")).args([
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
    ]);
    c
}

pub(super) fn ssh(n: &Netns, dir: &Path, couple: &str, soft: bool) -> Result<Running> {
    let cipher = match couple {
        "aes-256-gcm" => "aes256-gcm@openssh.com",
        "chacha20-poly1305" => "chacha20-poly1305@openssh.com",
        _ => "aes256-cbc",
    };
    for k in ["host", "id"] {
        run_cmd(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(k)),
        )?;
    }
    std::fs::copy(dir.join("id.pub"), dir.join("authorized_keys"))?;
    // sshd insists on its privilege-separation directory.
    std::fs::create_dir_all("/run/sshd").ok();
    let d = dir.display();
    std::fs::write(
        dir.join("sshd_config"),
        format!(
            "Port 22022\nListenAddress {ADDR_B}\nHostKey {d}/host\nPidFile {d}/sshd.pid\nUsePAM no\nStrictModes no\nPermitRootLogin yes\nAuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nCiphers aes256-cbc,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com\nMACs hmac-sha2-256\nAllowTcpForwarding yes\n"
        ),
    )?;
    let mut children = Procs::default();
    let mut logs = Vec::new();
    let mut sshd = n.wrap('b', Path::new("/usr/sbin/sshd"));
    sshd.args(["-D", "-e", "-f"]).arg(dir.join("sshd_config"));
    let log = dir.join("sshd.log");
    children.push(spawn_logged(sshd, &log, soft)?);
    logs.push(log);
    wait_for("sshd", Duration::from_secs(10), || {
        check_alive(&mut children, &logs)?;
        Ok(std::fs::read_to_string(dir.join("sshd.log"))
            .unwrap_or_default()
            .contains("Server listening"))
    })?;
    let mut client = ssh_client(n, dir);
    client
        .args(["-N", "-o", "ExitOnForwardFailure=yes"])
        .args([
            "-o",
            &format!("Ciphers={cipher}"),
            "-o",
            "MACs=hmac-sha2-256",
            "-o",
            "Compression=no",
        ])
        .args([
            "-L",
            "127.0.0.1:15201:127.0.0.1:5201",
            "-p",
            "22022",
            &format!("root@{ADDR_B}"),
        ]);
    let log = dir.join("ssh.log");
    children.push(spawn_logged(client, &log, soft)?);
    logs.push(log);
    wait_for("ssh", Duration::from_secs(15), || {
        check_alive(&mut children, &logs)?;
        let out = run_cmd(n.wrap('a', Path::new("ss")).args(["-ltnH"]))?;
        Ok(out.contains("127.0.0.1:15201"))
    })?;
    let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
    Ok(Running {
        pids_a: vec![pids[1]],
        pids_b: descendants(pids[0]),
        children,
        target: "127.0.0.1".into(),
        source: None,
        port: 15201,
        pings: false,
        software: version_of(Command::new("ssh").arg("-V"), |l| l.contains("OpenSSH")),
        cleanup: Vec::new(),
        renew: None,
    })
}
