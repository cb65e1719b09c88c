//! TLS 1.3 key-exchange groups: rustls's own (AWS-LC) and any KEM of our catalogue as an
//! experimental group with a private-use code point.

use cryptoscope_catalogue::{Availability, Kem, Subject};
use rustls::crypto::aws_lc_rs::kx_group;
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};
use serde::Serialize;

/// The largest key share a TLS 1.3 handshake can carry: `key_exchange<1..2^16-1>` in a
/// KeyShareEntry (RFC 8446 §4.2.8), inside an extension block and a ClientHello that are
/// themselves limited to 2^16-1 bytes in rustls.
pub const KEY_SHARE_LIMIT: usize = 65_535;

/// The groups rustls offers with AWS-LC, with the key-share sizes (client, server) the
/// drafts and RFCs fix.
pub const STANDARD: &[(&str, usize, usize)] = &[
    ("X25519", 32, 32),
    ("secp256r1", 65, 65),
    ("secp384r1", 97, 97),
    ("X25519MLKEM768", 1216, 1120),
    ("secp256r1MLKEM768", 1249, 1153),
    ("MLKEM768", 1184, 1088),
    ("MLKEM1024", 1568, 1568),
];

fn standard_group(name: &str) -> Option<&'static dyn SupportedKxGroup> {
    Some(match name {
        "X25519" => kx_group::X25519,
        "secp256r1" => kx_group::SECP256R1,
        "secp384r1" => kx_group::SECP384R1,
        "X25519MLKEM768" => kx_group::X25519MLKEM768,
        "secp256r1MLKEM768" => kx_group::SECP256R1MLKEM768,
        "MLKEM768" => kx_group::MLKEM768,
        "MLKEM1024" => kx_group::MLKEM1024,
        _ => return None,
    })
}

/// What a group name resolved to.
#[derive(Debug, Clone, Serialize)]
pub struct GroupInfo {
    pub name: String,
    /// TLS NamedGroup code point.
    pub code: u16,
    /// "standard" (rustls/AWS-LC) or "experimental" (a catalogue KEM).
    pub kind: &'static str,
    /// Key share sizes in bytes: client (public key) and server (ciphertext).
    pub client_share: usize,
    pub server_share: usize,
    /// For experimental groups: the catalogue subject behind it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Whether both key shares fit in a TLS 1.3 key_share.
    pub fits: bool,
}

/// A private-use code point (0xFE00..=0xFEFF, RFC 8446 §4.2.7) derived from the algorithm
/// name, so client and server processes agree without a table.
pub fn private_code(algorithm: &str) -> u16 {
    // FNV-1a, folded to one byte.
    let mut h: u32 = 0x811c_9dc5;
    for b in algorithm.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    0xFE00 | ((h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) & 0xFF) as u16
}

/// A catalogue KEM as a TLS 1.3 group: the client's share is a fresh public key, the
/// server encapsulates to it and answers with the ciphertext.
pub struct KemGroup {
    kem: &'static dyn Kem,
    code: u16,
}

impl std::fmt::Debug for KemGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KemGroup({}, {:#06x})", self.kem.descriptor().id, self.code)
    }
}

struct ActiveKem {
    kem: &'static dyn Kem,
    code: u16,
    pk: Vec<u8>,
    sk: Vec<u8>,
}

impl Drop for ActiveKem {
    fn drop(&mut self) {
        // The ephemeral secret key dies with the handshake.
        for b in self.sk.iter_mut() {
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

fn failed(e: impl std::fmt::Display) -> Error {
    Error::General(e.to_string())
}

impl SupportedKxGroup for KemGroup {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let s = &self.kem.descriptor().sizes;
        let mut pk = vec![0u8; s.public_key];
        let mut sk = vec![0u8; s.secret_key];
        self.kem.keypair(&mut pk, &mut sk).map_err(failed)?;
        Ok(Box::new(ActiveKem {
            kem: self.kem,
            code: self.code,
            pk,
            sk,
        }))
    }

    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        let s = &self.kem.descriptor().sizes;
        if client_share.len() != s.public_key {
            return Err(Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare));
        }
        let mut ct = vec![0u8; s.ciphertext];
        let mut ss = vec![0u8; s.shared_secret];
        self.kem.encaps(&mut ct, &mut ss, client_share).map_err(failed)?;
        Ok(CompletedKeyExchange {
            group: self.name(),
            pub_key: ct,
            secret: SharedSecret::from(ss),
        })
    }

    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        None
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::Unknown(self.code)
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

impl ActiveKeyExchange for ActiveKem {
    fn complete(self: Box<Self>, ciphertext: &[u8]) -> Result<SharedSecret, Error> {
        let s = &self.kem.descriptor().sizes;
        if ciphertext.len() != s.ciphertext {
            return Err(Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare));
        }
        let mut ss = vec![0u8; s.shared_secret];
        let mut d = self.kem.decapsulator(&self.sk).map_err(failed)?;
        d.decaps(&mut ss, ciphertext).map_err(failed)?;
        Ok(SharedSecret::from(ss))
    }

    fn pub_key(&self) -> &[u8] {
        &self.pk
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::Unknown(self.code)
    }
}

/// A resolved group: its facts and, when it fits, the rustls object.
pub struct Resolved {
    pub info: GroupInfo,
    pub group: Option<&'static dyn SupportedKxGroup>,
}

/// Resolves a group name: a standard group (exact or case-insensitive), or a KEM of this
/// binary's catalogue by algorithm name or full subject id (`NAME/provider/impl`).
pub fn resolve(name: &str, subjects: &[Subject]) -> Result<Resolved, String> {
    if let Some((std, c, s)) = STANDARD.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)) {
        let g = standard_group(std).expect("listed");
        return Ok(Resolved {
            info: GroupInfo {
                name: std.to_string(),
                code: u16::from(g.name()),
                kind: "standard",
                client_share: *c,
                server_share: *s,
                subject: None,
                fits: true,
            },
            group: Some(g),
        });
    }
    let kems: Vec<&Box<dyn Kem>> = subjects
        .iter()
        .filter_map(|s| match s {
            Subject::Kem(k) => Some(k),
            _ => None,
        })
        .filter(|k| {
            let d = k.descriptor();
            d.algorithm.eq_ignore_ascii_case(name) || d.id.eq_ignore_ascii_case(name)
        })
        .collect();
    // Prefer an available optimised implementation ("avx2") over "clean".
    let pick = kems
        .iter()
        .filter(|k| k.descriptor().availability == Availability::Available)
        .max_by_key(|k| (k.descriptor().implementation != "clean") as u8)
        .ok_or_else(|| {
            if kems.is_empty() {
                format!(
                    "unknown group `{name}` (standard: {}; or a KEM of the catalogue)",
                    standard_names()
                )
            } else {
                format!("`{name}` has no implementation available on this machine")
            }
        })?;
    let d = pick.descriptor();
    let fits = d.sizes.public_key <= KEY_SHARE_LIMIT && d.sizes.ciphertext <= KEY_SHARE_LIMIT;
    let code = private_code(&d.algorithm);
    let info = GroupInfo {
        name: d.algorithm.clone(),
        code,
        kind: "experimental",
        client_share: d.sizes.public_key,
        server_share: d.sizes.ciphertext,
        subject: Some(d.id.clone()),
        fits,
    };
    let group: Option<&'static dyn SupportedKxGroup> = if fits {
        // The subject lives as long as the process: leak one copy of the catalogue entry.
        let kem: &'static dyn Kem = leak_kem(subjects, &d.id);
        Some(Box::leak(Box::new(KemGroup { kem, code })))
    } else {
        None
    };
    Ok(Resolved { info, group })
}

fn leak_kem(_subjects: &[Subject], id: &str) -> &'static dyn Kem {
    // Subjects are not Clone: take a fresh catalogue from the provider and keep the one.
    let fresh = (crate::provider_subjects())();
    for s in fresh {
        if let Subject::Kem(k) = s {
            if k.descriptor().id == id {
                return Box::leak(k);
            }
        }
    }
    unreachable!("subject {id} vanished from its own catalogue")
}

pub fn standard_names() -> String {
    STANDARD.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_codes_are_private_use() {
        for n in ["HQC-128", "FrodoKEM-640-AES", "NTRU-HRSS-701", "sntrup761"] {
            let c = private_code(n);
            assert!((0xFE00..=0xFEFF).contains(&c), "{n}: {c:#x}");
        }
    }

    #[test]
    fn standard_code_points_are_the_registered_ones() {
        // IANA TLS Supported Groups registry.
        let want = [
            ("X25519", 0x001d),
            ("secp256r1", 0x0017),
            ("secp384r1", 0x0018),
            ("X25519MLKEM768", 0x11ec),
            ("secp256r1MLKEM768", 0x11eb),
            ("MLKEM768", 0x0201),
            ("MLKEM1024", 0x0202),
        ];
        for (n, c) in want {
            let r = resolve(n, &[]).unwrap();
            assert_eq!(r.info.code, c, "{n}");
        }
    }
}
