//! The hashes the module offers: the catalogue's streaming subjects (what the `rustcrypto`
//! and `cryptoscope` workers measure), then hashlib's guaranteed algorithms the catalogue
//! does not measure (MD5, SHA-1, SHA-224, SHA-384, SHA3-224, SHA3-384: RustCrypto's crates,
//! linked here only), and BLAKE2 with hashlib's parameters (`blake2b_simd`, `blake2s_simd`).

use cryptoscope_catalogue::traits::{HashState, Subject};
use std::sync::OnceLock;

/// Where an algorithm's running states come from.
pub enum Source {
    Subject(Subject),
    Local(fn() -> Box<dyn HashState>),
}

pub struct Algorithm {
    /// Catalogue name ("SHA3-256"); for the local ones the same style ("SHA3-224").
    pub catalogue: String,
    pub source: Source,
    pub digest_size: usize,
    pub block_size: usize,
    pub xof: bool,
    /// Crate and version ("sha3 0.12.0").
    pub version: String,
}

impl Algorithm {
    pub fn start(&self) -> Box<dyn HashState> {
        match &self.source {
            Source::Subject(Subject::Hash(h)) => h.start(),
            Source::Subject(_) => unreachable!("only hashes are listed"),
            Source::Local(f) => f(),
        }
    }

    /// Keccak's capacity/rate split and domain-separation suffix, for SHA-3 and SHAKE
    /// (hashlib's `_rate_bits`, `_capacity_bits`, `_suffix`).
    pub fn keccak(&self) -> Option<(usize, u8)> {
        let suffix = if self.catalogue.starts_with("SHA3-") {
            0x06
        } else if self.catalogue.starts_with("SHAKE") {
            0x1f
        } else {
            return None;
        };
        Some((self.block_size * 8, suffix))
    }
}

/// A `Digest` type's running state.
struct DigestState<D>(D);

impl<D: sha2::Digest + Clone + Send + 'static> HashState for DigestState<D> {
    fn update(&mut self, data: &[u8]) {
        sha2::Digest::update(&mut self.0, data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        out.copy_from_slice(&self.0.finalize());
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(DigestState(self.0.clone()))
    }
}

/// The exact version of a crate this module links (recorded by build.rs from Cargo.lock).
pub fn crate_version(name: &str) -> String {
    env!("CRYPTOSCOPE_PY_CRATE_VERSIONS")
        .split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
        .map(|v| format!("{name} {v}"))
        .unwrap_or_else(|| format!("{name} (version unknown)"))
}

fn local(
    catalogue: &str,
    krate: &str,
    digest_size: usize,
    block_size: usize,
    start: fn() -> Box<dyn HashState>,
) -> Algorithm {
    Algorithm {
        catalogue: catalogue.into(),
        source: Source::Local(start),
        digest_size,
        block_size,
        xof: false,
        version: crate_version(krate),
    }
}

/// hashlib's guaranteed algorithms that the catalogue has no subject for. Block sizes are
/// the standards' (FIPS 180-4, FIPS 202 rates; RFC 1321).
fn locals() -> Vec<Algorithm> {
    vec![
        local("MD5", "md-5", 16, 64, || Box::new(DigestState(md5::Md5::default()))),
        local("SHA-1", "sha1", 20, 64, || Box::new(DigestState(sha1::Sha1::default()))),
        local("SHA-224", "sha2", 28, 64, || {
            Box::new(DigestState(sha2::Sha224::default()))
        }),
        local("SHA-384", "sha2", 48, 128, || {
            Box::new(DigestState(sha2::Sha384::default()))
        }),
        local("SHA3-224", "sha3", 28, 144, || {
            Box::new(DigestState(sha3::Sha3_224::default()))
        }),
        local("SHA3-384", "sha3", 48, 104, || {
            Box::new(DigestState(sha3::Sha3_384::default()))
        }),
    ]
}

pub fn catalogue() -> &'static [Algorithm] {
    static ALGS: OnceLock<Vec<Algorithm>> = OnceLock::new();
    ALGS.get_or_init(|| {
        let mut v: Vec<Algorithm> = cryptoscope_provider_rustcrypto::subjects()
            .into_iter()
            .chain(cryptoscope_provider_cryptoscope::hash_subjects())
            .filter(|s| matches!(s, Subject::Hash(_)))
            .filter_map(|s| {
                let d = s.descriptor();
                let info = cryptoscope_catalogue::names::algorithm(&d.algorithm)?;
                Some(Algorithm {
                    catalogue: d.algorithm.clone(),
                    digest_size: d.sizes.shared_secret,
                    block_size: info.block_size,
                    xof: d.algorithm.starts_with("SHAKE"),
                    version: d.provider_version.clone(),
                    source: Source::Subject(s),
                })
            })
            .collect();
        // The catalogue's own subject wins where both exist.
        for a in locals() {
            if !v.iter().any(|b| b.catalogue == a.catalogue) {
                v.push(a);
            }
        }
        v
    })
}

/// BLAKE2's parameter block as hashlib's blake2b/blake2s take it (already range-checked).
pub struct Blake2Params<'a> {
    pub digest_size: usize,
    pub key: &'a [u8],
    pub salt: &'a [u8],
    pub person: &'a [u8],
    pub fanout: u8,
    pub depth: u8,
    pub leaf_size: u32,
    pub node_offset: u64,
    pub node_depth: u8,
    pub inner_size: usize,
    pub last_node: bool,
}

/// A BLAKE2 state of one of the two crates, which share their API: its `HashState`, and
/// its construction from every parameter of RFC 7693's parameter block.
macro_rules! blake2_state {
    ($state:ident, $krate:ident) => {
        #[derive(Clone)]
        struct $state($krate::State);

        impl HashState for $state {
            fn update(&mut self, data: &[u8]) {
                self.0.update(data);
            }
            fn finish(self: Box<Self>, out: &mut [u8]) {
                out.copy_from_slice(self.0.finalize().as_bytes());
            }
            fn copy(&self) -> Box<dyn HashState> {
                Box::new(self.clone())
            }
        }

        impl $state {
            fn with(p: &Blake2Params) -> Box<dyn HashState> {
                let mut b = $krate::Params::new();
                b.hash_length(p.digest_size)
                    .key(p.key)
                    .salt(p.salt)
                    .personal(p.person)
                    .fanout(p.fanout)
                    .max_depth(p.depth)
                    .max_leaf_length(p.leaf_size)
                    .node_offset(p.node_offset)
                    .node_depth(p.node_depth)
                    .inner_hash_length(p.inner_size)
                    .last_node(p.last_node);
                Box::new($state(b.to_state()))
            }
        }
    };
}

blake2_state!(Blake2bState, blake2b_simd);
blake2_state!(Blake2sState, blake2s_simd);

/// A BLAKE2b (`big`) or BLAKE2s state with every parameter of RFC 7693's parameter block.
pub fn blake2(big: bool, p: &Blake2Params) -> Box<dyn HashState> {
    if big {
        Blake2bState::with(p)
    } else {
        Blake2sState::with(p)
    }
}
