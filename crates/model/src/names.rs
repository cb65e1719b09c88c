//! Canonical names: algorithms, providers, suites, and "did you mean" for typos.

use crate::descriptor::Family;

/// Canonical provider names, in display order.
/// `build` holds what this machine compiled itself (`cryptoscope build`, `cryptoscope add`).
/// `cryptoscope` is the project's own code (the block cipher strategies).
/// A provider that exists in several versions side by side has one entry per version
/// beside its system build ([`VERSIONED`]).
pub const PROVIDERS: &[&str] = &[
    "liboqs",
    "pqclean",
    "aws-lc",
    "rustcrypto",
    "openssl",
    "openssl-3.5",
    "openssl-4.0",
    "build",
    "cryptoscope",
];

/// Providers of deliberately broken subjects (`testbed`: faults and leaks that prove the
/// tool's handling of them). Discovered like the others but selected only when named with
/// `--provider`; never part of a default run, a suite or a report ranking.
pub const TEST_PROVIDERS: &[&str] = &["testbed"];

/// Internal functions Seed 001 monitored, by short name (PQClean's namespace prefix
/// removed): NTRU's polynomial arithmetic and Classic McEliece's key generation, error
/// sampling, syndrome and root finding. `profile` and `micro` report them by name.
pub const MONITORED_FUNCTIONS: &[&str] = &[
    "poly_Rq_mul",
    "poly_S3_inv",
    "poly_R2_inv",
    "poly_Rq_inv",
    "poly_Sq_mul",
    "pk_gen",
    "gen_e",
    "syndrome",
    "root",
    "synd",
];

/// Providers with versions side by side: the bare name is the build the system has (the
/// distribution's library, whatever its version), `NAME-X.Y` a version built from vendored
/// sources, its own worker. `--provider NAME-X.Y` also names the system build when that is
/// its version (`openssl-3.0` on Debian 12).
pub const VERSIONED: &[&str] = &["openssl"];

/// The versions of a versioned provider other than the system's, as listed in [`PROVIDERS`].
pub fn versions_of(base: &str) -> impl Iterator<Item = &'static str> + '_ {
    PROVIDERS.iter().copied().filter(move |p| {
        p.strip_prefix(base)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(is_version)
    })
}

/// A version of a versioned provider other than the system's (`openssl-3.5`): selected only
/// when named with `--provider`, never by a default run, a suite or `--all`.
pub fn is_extra_version(p: &str) -> bool {
    PROVIDERS.contains(&p) && versioned_name(p).is_some()
}

/// `X.Y`: a major and a minor version number.
fn is_version(s: &str) -> bool {
    let mut parts = s.split('.');
    let num = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    num(parts.next()) && num(parts.next()) && parts.next().is_none()
}

/// `NAME-X.Y` of a versioned provider: (NAME, X.Y).
pub fn versioned_name(p: &str) -> Option<(&'static str, &str)> {
    VERSIONED.iter().find_map(|base| {
        let v = p.strip_prefix(base)?.strip_prefix('-')?;
        is_version(v).then_some((*base, v))
    })
}

/// The first `X.Y` in a library's version string ("OpenSSL 3.0.19 27 Jan 2026" → "3.0").
pub fn major_minor(version: &str) -> Option<String> {
    version
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|w| {
            let mut it = w.split('.');
            let (a, b) = (it.next()?, it.next()?);
            (!a.is_empty() && !b.is_empty()).then(|| format!("{a}.{b}"))
        })
}

/// Worker binary for a provider (`cryptoscope-worker-<name without dashes or dots>`:
/// `openssl-3.5` → `cryptoscope-worker-openssl35`).
pub fn worker_binary(provider: &str) -> String {
    format!("cryptoscope-worker-{}", provider.replace(['-', '.'], ""))
}

/// An algorithm the project knows, with its family, claimed security and whether the
/// default suite includes it.
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub family: Family,
    pub nist_level: Option<u8>,
    pub classical_bits: Option<u16>,
    pub default_suite: bool,
    /// Hash functions: digest and block (rate) size in bytes; block ciphers: block size;
    /// 0 otherwise.
    pub digest_size: usize,
    pub block_size: usize,
}

const fn kem(name: &'static str, level: u8, default_suite: bool) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Kem,
        nist_level: Some(level),
        classical_bits: None,
        default_suite,
        digest_size: 0,
        block_size: 0,
    }
}

const fn kex(name: &'static str, bits: u16) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Kex,
        nist_level: None,
        classical_bits: Some(bits),
        default_suite: true,
        digest_size: 0,
        block_size: 0,
    }
}

const fn sig(name: &'static str, level: Option<u8>, bits: Option<u16>, default_suite: bool) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Sig,
        nist_level: level,
        classical_bits: bits,
        default_suite,
        digest_size: 0,
        block_size: 0,
    }
}

const fn cipher(name: &'static str, block: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Cipher,
        nist_level: None,
        classical_bits: None,
        default_suite: false,
        digest_size: 0,
        block_size: block,
    }
}

const fn aead(name: &'static str, bits: u16) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Aead,
        nist_level: None,
        classical_bits: Some(bits),
        default_suite: false,
        digest_size: 0,
        block_size: 0,
    }
}

const fn hash(name: &'static str, digest_size: usize, block_size: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        family: Family::Hash,
        nist_level: None,
        classical_bits: None,
        default_suite: false,
        digest_size,
        block_size,
    }
}

/// Every algorithm in the catalogue. NIST levels are the ones the submissions claim (as
/// liboqs reports them); classical strengths: X25519 and P-256 ≈128 bits (RFC 7748,
/// SP 800-57), FFDHE-2048 ≈103 bits (RFC 7919 §A.1).
pub const ALGORITHMS: &[AlgorithmInfo] = &[
    kem("ML-KEM-512", 1, true),
    kem("ML-KEM-768", 3, true),
    kem("ML-KEM-1024", 5, true),
    kem("Kyber512", 1, false),
    kem("Kyber768", 3, false),
    kem("Kyber1024", 5, false),
    kem("Classic-McEliece-348864", 1, true),
    kem("Classic-McEliece-348864f", 1, false),
    kem("Classic-McEliece-460896", 3, false),
    kem("Classic-McEliece-460896f", 3, false),
    kem("Classic-McEliece-6688128", 5, false),
    kem("Classic-McEliece-6688128f", 5, false),
    kem("Classic-McEliece-6960119", 5, true),
    kem("Classic-McEliece-6960119f", 5, true),
    kem("Classic-McEliece-8192128", 5, true),
    kem("Classic-McEliece-8192128f", 5, true),
    kem("NTRU-HPS-2048-509", 1, true),
    kem("NTRU-HPS-2048-677", 3, true),
    kem("NTRU-HPS-4096-821", 5, true),
    kem("NTRU-HPS-4096-1229", 5, true),
    kem("NTRU-HRSS-701", 3, true),
    kem("NTRU-HRSS-1373", 5, true),
    kem("HQC-128", 1, true),
    kem("HQC-192", 3, true),
    kem("HQC-256", 5, true),
    kem("BIKE-L1", 1, true),
    kem("BIKE-L3", 3, true),
    kem("BIKE-L5", 5, true),
    kem("FrodoKEM-640-AES", 1, true),
    kem("FrodoKEM-640-SHAKE", 1, true),
    kem("FrodoKEM-976-AES", 3, true),
    kem("FrodoKEM-976-SHAKE", 3, true),
    kem("FrodoKEM-1344-AES", 5, true),
    kem("FrodoKEM-1344-SHAKE", 5, true),
    kem("sntrup761", 2, true),
    kex("X25519", 128),
    kex("P-256", 128),
    kex("FFDHE-2048", 103),
    // Signatures (`--suite sig` takes those marked true; the rest by `--alg` or `--all`).
    // SLH-DSA is FIPS 205; SPHINCS+ is the round-3.1 submission liboqs 0.13 and PQClean
    // ship, whose message encoding differs (their KATs differ): never one for the other.
    // RSA strengths: SP 800-57 Part 1 Table 2 (2048: 112, 3072: 128); 4096: 152, from the
    // general-number-field-sieve formula of FIPS 140-3 Implementation Guidance D.B. RSA-4096
    // (keygen takes seconds) is measured when named.
    sig("ML-DSA-44", Some(2), None, true),
    sig("ML-DSA-65", Some(3), None, true),
    sig("ML-DSA-87", Some(5), None, true),
    sig("SLH-DSA-SHA2-128f", Some(1), None, true),
    sig("SLH-DSA-SHA2-128s", Some(1), None, true),
    sig("SLH-DSA-SHAKE-128f", Some(1), None, true),
    sig("SLH-DSA-SHAKE-128s", Some(1), None, true),
    sig("SPHINCS+-SHA2-128f-simple", Some(1), None, true),
    sig("SPHINCS+-SHA2-128s-simple", Some(1), None, true),
    sig("SPHINCS+-SHAKE-128f-simple", Some(1), None, true),
    sig("SPHINCS+-SHAKE-128s-simple", Some(1), None, true),
    sig("SPHINCS+-SHA2-192f-simple", Some(3), None, false),
    sig("SPHINCS+-SHA2-192s-simple", Some(3), None, false),
    sig("SPHINCS+-SHA2-256f-simple", Some(5), None, false),
    sig("SPHINCS+-SHA2-256s-simple", Some(5), None, false),
    sig("SPHINCS+-SHAKE-192f-simple", Some(3), None, false),
    sig("SPHINCS+-SHAKE-192s-simple", Some(3), None, false),
    sig("SPHINCS+-SHAKE-256f-simple", Some(5), None, false),
    sig("SPHINCS+-SHAKE-256s-simple", Some(5), None, false),
    sig("Falcon-512", Some(1), None, true),
    sig("Falcon-1024", Some(5), None, true),
    sig("Falcon-padded-512", Some(1), None, false),
    sig("Falcon-padded-1024", Some(5), None, false),
    sig("MAYO-1", Some(1), None, false),
    sig("MAYO-2", Some(1), None, false),
    sig("MAYO-3", Some(3), None, false),
    sig("MAYO-5", Some(5), None, false),
    sig("cross-rsdp-128-fast", Some(1), None, false),
    sig("cross-rsdpg-128-fast", Some(1), None, false),
    sig("OV-Is", Some(1), None, false),
    sig("Ed25519", None, Some(128), true),
    sig("ECDSA-P256-SHA256", None, Some(128), true),
    sig("RSA-2048-PKCS1-SHA256", None, Some(112), true),
    sig("RSA-3072-PKCS1-SHA256", None, Some(128), true),
    sig("RSA-4096-PKCS1-SHA256", None, Some(152), false),
    sig("RSA-2048-PSS-SHA256", None, Some(112), true),
    sig("RSA-3072-PSS-SHA256", None, Some(128), true),
    sig("RSA-4096-PSS-SHA256", None, Some(152), false),
    // Hash functions (`--suite hash`), digest and block size in bytes. SHAKE's "block" is
    // its rate; SHAKE128/256 are used with 32-byte output. SHA-256d is Tahoe-LAFS's (and
    // Bitcoin's) SHA-256 of SHA-256.
    hash("SHA-256", 32, 64),
    hash("SHA-256d", 32, 64),
    hash("SHA-512", 64, 128),
    hash("SHA-512/256", 32, 128),
    hash("SHA3-256", 32, 136),
    hash("SHA3-512", 64, 72),
    hash("SHAKE128", 32, 168),
    hash("SHAKE256", 32, 136),
    hash("BLAKE2b-256", 32, 128),
    hash("BLAKE2b-512", 64, 128),
    hash("BLAKE2s-256", 32, 64),
    hash("BLAKE3", 32, 64),
    hash("KangarooTwelve", 32, 168),
    hash("Ascon-Hash256", 32, 8),
    // The fourteen second-round SHA-3 candidates at 256-bit output, round-2 versions (our
    // own code, provider `cryptoscope`); block = message block or rate, bytes.
    hash("BLAKE-256-r2", 32, 64),
    hash("BMW-256-r2", 32, 64),
    hash("CubeHash-256-r2", 32, 32),
    hash("ECHO-256-r2", 32, 192),
    hash("Fugue-256-r2", 32, 4),
    hash("Groestl-256-r2", 32, 64),
    hash("Hamsi-256-r2", 32, 4),
    hash("JH-256-r2", 32, 64),
    hash("Keccak-256-r2", 32, 136),
    hash("Luffa-256-r2", 32, 32),
    hash("Shabal-256-r2", 32, 64),
    hash("SHAvite-3-256-r2", 32, 64),
    hash("SIMD-256-r2", 32, 64),
    // Skein: the shared `skein` KAT files need the v1.3 (round-3) key-schedule constant.
    hash("Skein-512-256-v1.3", 32, 64),
    // Block ciphers (`--suite cipher`), block size in bytes. GIFT-128 is the original
    // convention of the GIFT paper; GIFTb-128 the bit ordering GIFT-COFB uses.
    cipher("GIFT-64", 8),
    cipher("GIFT-128", 16),
    cipher("GIFTb-128", 16),
    cipher("Camellia-128", 16),
    cipher("Camellia-256", 16),
    // AEADs (`--suite aead`): classical strength = key length; 12-byte nonces, 16-byte
    // tags (AES-GCM: NIST SP 800-38D; ChaCha20-Poly1305: RFC 8439).
    aead("AES-128-GCM", 128),
    aead("AES-256-GCM", 256),
    aead("ChaCha20-Poly1305", 256),
];

/// Looks up an algorithm by canonical name, case-insensitively.
pub fn algorithm(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}

/// Suites a user can name with `--suite`: one per family.
pub fn suites() -> Vec<&'static str> {
    crate::descriptor::Family::ALL.iter().map(|f| f.as_str()).collect()
}

/// Levenshtein distance, for suggestions.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest of `candidates` to `input`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let (best, d) = candidates
        .into_iter()
        .map(|c| (c, distance(input, c)))
        .min_by_key(|&(_, d)| d)?;
    let lower_in = input.to_lowercase();
    let contains = best.to_lowercase().contains(&lower_in) && lower_in.len() >= 3;
    (d <= (best.len() / 3).max(2) || contains).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_providers() {
        assert_eq!(worker_binary("openssl-3.5"), "cryptoscope-worker-openssl35");
        assert_eq!(worker_binary("aws-lc"), "cryptoscope-worker-awslc");
        assert_eq!(
            versions_of("openssl").collect::<Vec<_>>(),
            ["openssl-3.5", "openssl-4.0"]
        );
        assert_eq!(versioned_name("openssl-3.0"), Some(("openssl", "3.0")));
        assert_eq!(versioned_name("openssl-3"), None);
        assert_eq!(versioned_name("openssl-3.x"), None);
        assert_eq!(versioned_name("liboqs-0.13"), None);
        assert!(is_extra_version("openssl-4.0") && !is_extra_version("openssl") && !is_extra_version("openssl-3.0"));
        assert_eq!(major_minor("OpenSSL 3.0.19 27 Jan 2026").as_deref(), Some("3.0"));
        assert_eq!(major_minor("OpenSSL 4.0.3 1 Apr 2026").as_deref(), Some("4.0"));
        assert_eq!(major_minor("no digits"), None);
    }

    #[test]
    fn suggestions() {
        let names = ALGORITHMS.iter().map(|a| a.name);
        assert_eq!(did_you_mean("ML-KEM-786", names.clone()), Some("ML-KEM-768"));
        assert_eq!(did_you_mean("x25519", names.clone()), Some("X25519"));
        assert_eq!(did_you_mean("qwertyuiop-zzz", names), None);
    }

    #[test]
    fn names_are_unique_and_found() {
        for a in ALGORITHMS {
            assert_eq!(ALGORITHMS.iter().filter(|b| b.name == a.name).count(), 1);
            assert_eq!(algorithm(&a.name.to_lowercase()).unwrap().name, a.name);
        }
        assert_eq!(worker_binary("aws-lc"), "cryptoscope-worker-awslc");
    }
}
