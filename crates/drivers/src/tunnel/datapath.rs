//! Which data path a tunnel takes: the kernel's where it has one (IPsec ESP through xfrm,
//! WireGuard as a kernel device), user space otherwise (strongSwan's kernel-libipsec,
//! wireguard-go). OpenVPN (DCO off) and OpenSSH are user space everywhere.
//!
//! What the kernel offers is found by trying it, in a network namespace of its own that
//! goes with the probe (`unshare --net`): adding an ESP state with `ip xfrm`, which loads
//! esp4 and xfrm_user where they are modules, and a device of type wireguard. A module list
//! would miss what is built in and what cannot load. The answer, and the choice it leads
//! to, are decided apart from the probe ([`interpret`], [`choose`]) so that both cases are
//! tested on any kernel.

use std::process::Command;

/// The kernel's answer for one data path: `Ok(how it was found)` or `Err(why not)`.
pub type Found = Result<String, String>;

/// What the running kernel offers the tunnels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// IPsec ESP through xfrm.
    pub esp: Found,
    /// WireGuard as a kernel device.
    pub wireguard: Found,
}

/// Which path a user asked for (`--data-path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The kernel's where it has one, user space otherwise.
    Auto,
    Kernel,
    User,
}

impl Want {
    pub fn parse(s: &str) -> Option<Want> {
        match s {
            "auto" => Some(Want::Auto),
            "kernel" => Some(Want::Kernel),
            "user" => Some(Want::User),
            _ => None,
        }
    }
}

/// The path one tunnel takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Kernel,
    User,
}

/// The ESP trial: one tunnel-mode state with a throwaway key (the namespace goes with it).
const ESP_TRIAL: [&str; 21] = [
    "ip",
    "xfrm",
    "state",
    "add",
    "src",
    "192.0.2.1",
    "dst",
    "192.0.2.2",
    "proto",
    "esp",
    "spi",
    "0x100",
    "mode",
    "tunnel",
    "enc",
    "cbc(aes)",
    "0x000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f",
    "auth-trunc",
    "hmac(sha256)",
    "0x000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f",
    "128",
];

const WIREGUARD_TRIAL: [&str; 6] = ["ip", "link", "add", "cswgprobe", "type", "wireguard"];

/// What a run without ipsec and wireguard records: nothing was tried.
pub fn not_probed() -> Kernel {
    let why = || Err("not probed: no ipsec or wireguard in this run".to_string());
    Kernel {
        esp: why(),
        wireguard: why(),
    }
}

/// Tries both paths, each in a network namespace that ends with the trial.
pub fn probe() -> Kernel {
    let trial = |args: &[&str]| {
        let out = Command::new("unshare").arg("--net").args(args).output();
        match out {
            Ok(o) => interpret(o.status.success(), &String::from_utf8_lossy(&o.stderr)),
            Err(e) => Err(format!("cannot run unshare: {e}")),
        }
    };
    Kernel {
        esp: trial(&ESP_TRIAL).map(|()| "an ESP state (AES-CBC, HMAC-SHA256) was accepted by xfrm".to_string()),
        wireguard: trial(&WIREGUARD_TRIAL).map(|()| "a device of type wireguard was created".to_string()),
    }
}

/// A trial's outcome: accepted, or the kernel's reason in its own words (the last line
/// `ip` printed, e.g. "Error: Requested type not found.").
pub fn interpret(success: bool, stderr: &str) -> Result<(), String> {
    if success {
        return Ok(());
    }
    let why = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("refused without a message");
    Err(format!("the kernel refused: {why}"))
}

/// The path `tunnel` takes given the kernel and what was asked, or why it cannot run.
pub fn choose(tunnel: &str, kernel: &Kernel, want: Want) -> Result<Path, String> {
    let found = match tunnel {
        "ipsec" => &kernel.esp,
        "wireguard" => &kernel.wireguard,
        // OpenVPN (DCO off) and OpenSSH: user space whatever was asked.
        _ => return Ok(Path::User),
    };
    match (want, found) {
        (Want::User, _) => Ok(Path::User),
        (_, Ok(_)) => Ok(Path::Kernel),
        (Want::Auto, Err(_)) => Ok(Path::User),
        (Want::Kernel, Err(why)) => Err(format!(
            "{tunnel}: the kernel has no {} data path ({why}); use --data-path user or auto",
            if tunnel == "ipsec" { "ESP" } else { "WireGuard" }
        )),
    }
}

/// How a row names the path it took.
pub fn label(tunnel: &str, path: Path) -> &'static str {
    match (tunnel, path) {
        ("ipsec", Path::Kernel) => "kernel: ESP through xfrm (strongSwan's kernel-netlink)",
        ("ipsec", Path::User) => "user space: strongSwan's kernel-libipsec over a TUN device",
        ("wireguard", Path::Kernel) => "kernel: the wireguard module",
        ("wireguard", Path::User) => "user space: wireguard-go over a TUN device",
        ("openvpn-static" | "openvpn-tls", _) => "user space: openvpn over a TUN device (DCO off)",
        ("ssh", _) => "user space: sshd and ssh (TCP forwarding)",
        _ => "user space",
    }
}

/// Why a soft (AES masked) configuration means nothing on the kernel path: the mask is
/// OpenSSL's, and the kernel's crypto uses its own AES-NI code.
pub fn soft_note(tunnel: &str, path: Path) -> Option<&'static str> {
    match (tunnel, path) {
        ("ipsec", Path::Kernel) => {
            Some("the kernel's ESP uses the kernel's own AES-NI code: OPENSSL_ia32cap cannot mask it")
        }
        ("wireguard", Path::Kernel) => Some("the kernel's WireGuard uses ChaCha20-Poly1305, no AES: nothing to mask"),
        ("wireguard", Path::User) => Some("wireguard-go's ChaCha20-Poly1305 uses no AES instructions: nothing to mask"),
        _ => None,
    }
}

/// The probe's findings as the set-up records them.
pub fn describe(k: &Kernel) -> String {
    let one = |what: &str, f: &Found| match f {
        Ok(how) => format!("{what}: yes ({how})"),
        Err(why) => format!("{what}: no ({why})"),
    };
    format!("{}; {}", one("ESP", &k.esp), one("WireGuard", &k.wireguard))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ours: no esp4, no wireguard module (what `ip` printed on our CI machine's kernel).
    fn without() -> Kernel {
        Kernel {
            esp: interpret(false, "Error: Requested type not found.\n").map(|()| String::new()),
            wireguard: interpret(false, "Error: Unknown device type.\n").map(|()| String::new()),
        }
    }

    /// A distribution kernel: both load as modules.
    fn with() -> Kernel {
        Kernel {
            esp: interpret(true, "").map(|()| "accepted".to_string()),
            wireguard: interpret(true, "").map(|()| "created".to_string()),
        }
    }

    #[test]
    fn the_kernels_refusal_is_kept_in_its_words() {
        assert_eq!(
            without().esp.unwrap_err(),
            "the kernel refused: Error: Requested type not found."
        );
        assert_eq!(
            interpret(false, ""),
            Err("the kernel refused: refused without a message".into())
        );
        assert_eq!(
            interpret(false, "warning\nError: Unknown device type.\n\n"),
            Err("the kernel refused: Error: Unknown device type.".into())
        );
    }

    #[test]
    fn auto_takes_the_kernel_where_it_has_the_path_and_user_space_otherwise() {
        for t in ["ipsec", "wireguard"] {
            assert_eq!(choose(t, &with(), Want::Auto), Ok(Path::Kernel), "{t}");
            assert_eq!(choose(t, &without(), Want::Auto), Ok(Path::User), "{t}");
            assert_eq!(choose(t, &with(), Want::User), Ok(Path::User), "{t}");
        }
        // One path present, the other not: each tunnel follows its own.
        let mixed = Kernel {
            esp: with().esp,
            wireguard: without().wireguard,
        };
        assert_eq!(choose("ipsec", &mixed, Want::Auto), Ok(Path::Kernel));
        assert_eq!(choose("wireguard", &mixed, Want::Auto), Ok(Path::User));
        for t in ["openvpn-static", "openvpn-tls", "ssh"] {
            assert_eq!(choose(t, &with(), Want::Auto), Ok(Path::User), "{t}");
        }
    }

    #[test]
    fn asking_for_a_kernel_path_that_is_missing_says_why() {
        let e = choose("ipsec", &without(), Want::Kernel).unwrap_err();
        assert!(
            e.contains("no ESP data path") && e.contains("Requested type not found") && e.contains("--data-path user"),
            "{e}"
        );
        let e = choose("wireguard", &without(), Want::Kernel).unwrap_err();
        assert!(
            e.contains("no WireGuard data path") && e.contains("Unknown device type"),
            "{e}"
        );
        // The others have no kernel path: user space, whatever was asked.
        assert_eq!(choose("ssh", &with(), Want::Kernel), Ok(Path::User));
        assert_eq!(choose("openvpn-tls", &without(), Want::Kernel), Ok(Path::User));
        assert_eq!(choose("wireguard", &with(), Want::Kernel), Ok(Path::Kernel));
    }

    #[test]
    fn labels_and_soft_notes_follow_the_path() {
        assert!(label("ipsec", Path::Kernel).starts_with("kernel: ESP through xfrm"));
        assert!(label("ipsec", Path::User).contains("kernel-libipsec"));
        assert!(label("wireguard", Path::User).contains("wireguard-go"));
        assert!(soft_note("ipsec", Path::Kernel).unwrap().contains("cannot mask"));
        assert_eq!(soft_note("ipsec", Path::User), None);
        assert_eq!(soft_note("openvpn-tls", Path::User), None);
        assert!(describe(&without()).starts_with("ESP: no (the kernel refused: Error: Requested type not found."));
        assert_eq!(Want::parse("kernel"), Some(Want::Kernel));
        assert_eq!(Want::parse("fast"), None);
    }
}
