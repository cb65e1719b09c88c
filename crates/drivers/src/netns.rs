//! Two network namespaces joined by a veth pair (10.99.0.1 and 10.99.0.2), created for one
//! measurement and removed on drop, with everything inside them (deleting a namespace
//! deletes its end of the pair and any tunnel device in it).

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// Runs a command; its stdout, or an error with its stderr.
pub fn run_cmd(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{:?} failed: {}",
            cmd.get_program(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Like [`run_cmd`], for a command that prints a secret (`wg genkey`): the output is moved,
/// not copied, into a string that is wiped when dropped.
pub fn run_cmd_secret(cmd: &mut Command) -> Result<zeroize::Zeroizing<String>> {
    use zeroize::Zeroize;
    let mut out = cmd
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        out.stdout.zeroize();
        bail!(
            "{:?} failed: {}",
            cmd.get_program(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    match String::from_utf8(std::mem::take(&mut out.stdout)) {
        Ok(s) => Ok(zeroize::Zeroizing::new(s)),
        Err(e) => {
            e.into_bytes().zeroize();
            bail!("{:?} printed something that is not text", cmd.get_program())
        }
    }
}

/// Two namespaces and a veth pair; removed on drop.
pub struct Netns {
    pub a: String,
    pub b: String,
}

pub const ADDR_A: &str = "10.99.0.1";
pub const ADDR_B: &str = "10.99.0.2";

impl Netns {
    /// `prefix` names the namespaces (`PREFIX<pid>a`, `PREFIX<pid>b`); `rate` adds a tc tbf
    /// rate limit on both ends.
    pub fn create(prefix: &str, rate: Option<&str>) -> Result<Netns> {
        let tag = std::process::id();
        let n = Netns {
            a: format!("{prefix}{tag}a"),
            b: format!("{prefix}{tag}b"),
        };
        let ip = |args: &[&str]| run_cmd(Command::new("ip").args(args));
        ip(&["netns", "add", &n.a])?;
        ip(&["netns", "add", &n.b])?;
        let (va, vb) = (format!("cv{tag}a"), format!("cv{tag}b"));
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])?;
        ip(&["link", "set", &va, "netns", &n.a])?;
        ip(&["link", "set", &vb, "netns", &n.b])?;
        ip(&["-n", &n.a, "addr", "add", &format!("{ADDR_A}/24"), "dev", &va])?;
        ip(&["-n", &n.b, "addr", "add", &format!("{ADDR_B}/24"), "dev", &vb])?;
        for (ns, dev) in [(&n.a, &va), (&n.b, &vb)] {
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        if let Some(r) = rate {
            for (ns, dev) in [(&n.a, &va), (&n.b, &vb)] {
                run_cmd(Command::new("ip").args([
                    "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", r, "burst", "64kb",
                    "latency", "50ms",
                ]))
                .with_context(|| format!("rate limit {r} with tc tbf"))?;
            }
        }
        Ok(n)
    }

    /// Adds a second address to side `a`'s or `b`'s end of the veth pair.
    pub fn add_address(&self, side: char, addr: &str) -> Result<()> {
        let tag = std::process::id();
        let (ns, dev) = if side == 'a' {
            (&self.a, format!("cv{tag}a"))
        } else {
            (&self.b, format!("cv{tag}b"))
        };
        run_cmd(Command::new("ip").args(["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", &dev]))?;
        Ok(())
    }

    /// (namespace, veth device) of side `a` or `b`.
    pub fn end(&self, side: char) -> (&str, String) {
        let tag = std::process::id();
        if side == 'a' {
            (&self.a, format!("cv{tag}a"))
        } else {
            (&self.b, format!("cv{tag}b"))
        }
    }

    /// Sets the MTU of both ends of the veth pair.
    pub fn set_mtu(&self, mtu: u32) -> Result<()> {
        for side in ['a', 'b'] {
            let (ns, dev) = self.end(side);
            run_cmd(Command::new("ip").args(["-n", ns, "link", "set", "dev", &dev, "mtu", &mtu.to_string()]))
                .with_context(|| format!("MTU {mtu}"))?;
        }
        Ok(())
    }

    /// `cmd` to run in namespace `a` or `b`.
    pub fn wrap(&self, side: char, cmd: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", if side == 'a' { &self.a } else { &self.b }])
            .arg(cmd);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// The processes whose parent is `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
                if let Some(rest) = s.rfind(')').map(|i| &s[i + 1..]) {
                    if rest.split_whitespace().nth(1).and_then(|x| x.parse::<u32>().ok()) == Some(pid) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// CPU time (user + system) of a process in seconds, from /proc/PID/stat (clock ticks).
pub fn process_cpu(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / if hz > 0.0 { hz } else { 100.0 })
}

#[cfg(test)]
mod secret_output_tests {
    use super::*;

    #[test]
    fn a_secret_output_is_returned_whole_and_a_failure_is_an_error() {
        let s = run_cmd_secret(Command::new("printf").arg("k3y")).unwrap();
        assert_eq!(s.as_str(), "k3y");
        assert!(run_cmd_secret(&mut Command::new("false")).is_err());
        assert!(run_cmd_secret(Command::new("printf").arg("\\377")).is_err());
    }
}
