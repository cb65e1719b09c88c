//! The versioned OpenSSL peers of `cryptoscope tls`: `--peer openssl-X.Y` is our OpenSSL
//! server and client (crates/tls: `serve --openssl`, `load --client openssl`) linked to
//! that OpenSSL — `openssl-3.5` and `openssl-4.0` from vendored sources
//! (`cryptoscope-tls-openssl35`, `-openssl40`), or the
//! system's own version (`openssl-3.0` on Debian 12, `cryptoscope-tls`). Unlike
//! `--peer openssl` (nginx), server and client are the same code in every version, so the
//! versions' handshakes compare like for like; with `--client rustls` the clients are
//! rustls against that server.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// The versions built from vendored sources, with their driver binary.
pub const VENDORED: &[(&str, &str)] = &[
    ("openssl-3.5", "cryptoscope-tls-openssl35"),
    ("openssl-4.0", "cryptoscope-tls-openssl40"),
];

/// TLS 1.3 groups by OpenSSL's names: the classical ones every OpenSSL 3 has, and the
/// post-quantum ones from 3.5 on.
pub const CLASSICAL: &[&str] = &["X25519", "P-256", "P-384", "X448", "ffdhe2048", "ffdhe3072"];
pub const POST_QUANTUM: &[&str] = &[
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
];

/// A versioned OpenSSL peer: its name, the driver binary that links it, and whether it
/// has the post-quantum groups and ML-DSA.
pub struct Peer {
    pub name: String,
    pub binary: PathBuf,
    pub post_quantum: bool,
}

/// `openssl-X.Y`, if `peer` names one: a vendored version's binary, or the system's
/// (`cryptoscope-tls`), checked to link OpenSSL X.Y.
pub fn versioned(peer: &str, dir: &Path) -> Result<Option<Peer>> {
    let Some(version) = peer.strip_prefix("openssl-") else {
        return Ok(None);
    };
    let bin = VENDORED
        .iter()
        .find(|(p, _)| *p == peer)
        .map(|(_, b)| *b)
        .unwrap_or("cryptoscope-tls");
    let binary = dir.join(bin);
    if !binary.is_file() {
        bail!(
            "--peer {peer} needs {} (scripts/setup.sh builds it: cargo build --release --manifest-path crates/tls-{}/Cargo.toml)",
            binary.display(),
            bin.trim_start_matches("cryptoscope-tls-")
        );
    }
    // The library it links must be the version asked for (the system's may be any).
    let out = std::process::Command::new(&binary).arg("openssl-version").output()?;
    let library = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        bail!("{} could not say which OpenSSL it links", binary.display());
    }
    check_library(peer, &library)?;
    let post_quantum = version
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .is_some_and(|v| v >= (3, 5));
    Ok(Some(Peer {
        name: peer.to_string(),
        binary,
        post_quantum,
    }))
}

/// The group by OpenSSL's name, case-insensitively, if this peer offers it.
pub fn group(p: &Peer, g: &str) -> Result<&'static str> {
    let known = CLASSICAL
        .iter()
        .chain(if p.post_quantum { POST_QUANTUM } else { &[] })
        .find(|n| n.eq_ignore_ascii_case(g));
    match known {
        Some(n) => Ok(n),
        None => {
            let all: Vec<&str> = CLASSICAL
                .iter()
                .chain(if p.post_quantum { POST_QUANTUM } else { &[] })
                .copied()
                .collect();
            bail!("unknown group `{g}` for --peer {} (one of: {})", p.name, all.join(", "))
        }
    }
}

/// rustls's name for an OpenSSL group, for rustls clients against an OpenSSL server.
pub fn rustls_name(g: &str) -> Option<&'static str> {
    Some(match g {
        "X25519" => "X25519",
        "P-256" => "secp256r1",
        "P-384" => "secp384r1",
        "X25519MLKEM768" => "X25519MLKEM768",
        "SecP256r1MLKEM768" => "secp256r1MLKEM768",
        "MLKEM768" => "MLKEM768",
        "MLKEM1024" => "MLKEM1024",
        _ => return None,
    })
}

/// The server's library (its ready line) must be the version `peer` (`openssl-X.Y`) asks
/// for.
pub fn check_library(peer: &str, library: &str) -> Result<()> {
    let version = peer.strip_prefix("openssl-").unwrap_or(peer);
    if library.starts_with(&format!("OpenSSL {version}.")) {
        Ok(())
    } else {
        bail!(
            "--peer {peer}: no OpenSSL {version} here (the system's is {library}; the versions built from vendored sources: {})",
            VENDORED.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(", ")
        )
    }
}
