//! Subject descriptors: everything about a subject that is known without running it.

use serde::{Deserialize, Serialize};

/// Kind of primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Key encapsulation: keypair / encaps / decaps.
    Kem,
    /// Key exchange: keypair / exchange.
    Kex,
    /// Hash function (streaming: init / update / finalize / copy).
    Hash,
    /// Block cipher: key schedule, inner functions, one block, ECB and CTR.
    Cipher,
    /// Authenticated encryption with associated data: seal / open.
    Aead,
    /// Digital signatures: keypair / sign / verify.
    Sig,
}

/// What the model knows of a family, in one place: its name (also the `--suite` that
/// selects it), its operations, which of them the constant-time audit covers, and whether
/// the default run includes it.
#[derive(Debug)]
pub struct FamilyInfo {
    pub name: &'static str,
    /// Operations in the order a protocol runs them ([`Operation::of`]).
    pub operations: &'static [Operation],
    /// Operations the constant-time audit covers when the harness supplies the randomness
    /// ([`Descriptor::ct_operations`]).
    pub ct_operations: &'static [&'static str],
    /// Those of them that need the harness's randomness (key generation, encapsulation):
    /// left out for a library with its own generator.
    pub ct_needs_randomness: &'static [&'static str],
    /// Audited with dudect a second time with the caches evicted: table-driven code shows
    /// best that way (block ciphers, an AEAD's encryption: software AES is often T-tables).
    pub ct_cold: &'static [&'static str],
    /// Measured by a plain `run`; otherwise its suite must be named (`--suite hash`).
    pub in_default_run: bool,
    /// For a family whose work grows with a message's length: the operations one length of
    /// `run --lengths` measures (a hash: `hash:N`; a signature: `sign:N` and `verify:N`). `None`: `--lengths` leaves it as it is.
    pub at_length: Option<fn(u32) -> Vec<Operation>>,
}

impl Family {
    /// Every family, in the catalogue's order.
    pub const ALL: [Family; 6] = [
        Family::Kem,
        Family::Kex,
        Family::Sig,
        Family::Hash,
        Family::Cipher,
        Family::Aead,
    ];

    /// The family's facts; the one place a family is described.
    pub fn info(self) -> &'static FamilyInfo {
        match self {
            Family::Kem => &FamilyInfo {
                name: "kem",
                operations: &[Operation::Keypair, Operation::Encaps, Operation::Decaps],
                ct_operations: &["keypair", "encaps", "decaps", "decaps-rejected"],
                ct_needs_randomness: &["keypair", "encaps"],
                ct_cold: &[],
                in_default_run: true,
                at_length: None,
            },
            Family::Kex => &FamilyInfo {
                name: "kex",
                operations: &[
                    Operation::Keypair,
                    Operation::Derive,
                    Operation::Validate,
                    Operation::Exchange,
                ],
                ct_operations: &["keypair", "exchange"],
                ct_needs_randomness: &["keypair"],
                ct_cold: &[],
                in_default_run: true,
                at_length: None,
            },
            Family::Hash => &FamilyInfo {
                name: "hash",
                operations: HASH_OPS,
                ct_operations: &["hash"],
                ct_needs_randomness: &[],
                ct_cold: &[],
                in_default_run: false,
                at_length: Some(|n| vec![Operation::Hash(n)]),
            },
            Family::Cipher => &FamilyInfo {
                name: "cipher",
                operations: &[Operation::KeySchedule],
                ct_operations: &["key-schedule", "encrypt"],
                ct_needs_randomness: &[],
                ct_cold: &["key-schedule", "encrypt"],
                in_default_run: false,
                at_length: None,
            },
            Family::Aead => &FamilyInfo {
                name: "aead",
                operations: AEAD_OPS,
                ct_operations: &["seal", "open", "open-forged"],
                ct_needs_randomness: &[],
                ct_cold: &["seal"],
                in_default_run: false,
                at_length: None,
            },
            // Signing's secret is the key (and, for hedged and randomized schemes, the
            // randomness); verifying handles only public data and is not audited.
            Family::Sig => &FamilyInfo {
                name: "sig",
                operations: &[
                    Operation::Keypair,
                    Operation::Sign(SIG_MESSAGE_BYTES),
                    Operation::Verify(SIG_MESSAGE_BYTES),
                ],
                ct_operations: &["keypair", "sign"],
                ct_needs_randomness: &["keypair"],
                ct_cold: &[],
                in_default_run: false,
                at_length: Some(|n| vec![Operation::Sign(n), Operation::Verify(n)]),
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }
}

/// A measurable operation. Hash operations carry the message length in bytes: `hash:N`
/// is one update of N bytes, `stream:N` the same message in 64-byte updates. Cipher
/// operations carry the bytes one call processes: `block:N` encrypts one N-byte block
/// (latency), `ecb:N` and `ctr:N` encrypt N bytes (throughput), `subcells:N` etc. run one
/// inner function ([`CIPHER_FUNCTIONS`]) on the strategy's state of N bytes; `keysched`
/// expands one key. AEAD operations carry the message length: `seal:N` encrypts and
/// authenticates N bytes (with [`AEAD_AAD_BYTES`] of associated data), `open:N` checks and
/// decrypts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    Keypair,
    Encaps,
    Decaps,
    /// Key exchange: the shared secret from an own key and a peer key already parsed and
    /// validated (what `openssl speed`, eBACS and liboqs report as a key exchange).
    Derive,
    /// Key exchange: the peer's public key read from its wire encoding and checked as the
    /// library's own TLS stack checks it, without deriving anything.
    Validate,
    /// Key exchange as a TLS server runs it: the peer's public key parsed and validated,
    /// then the shared secret derived (`validate` + `derive`, with the library's own
    /// per-call set-up).
    Exchange,
    Hash(u32),
    Stream(u32),
    KeySchedule,
    /// Index into [`CIPHER_FUNCTIONS`], bytes of state.
    Func(u8, u32),
    Block(u32),
    Ecb(u32),
    Ctr(u32),
    Seal(u32),
    Open(u32),
    /// Signs a message of N bytes with a prepared secret key (hashing the message is part
    /// of it, as the scheme defines).
    Sign(u32),
    /// Verifies a signature on a message of N bytes with a prepared public key.
    Verify(u32),
}

/// The inner functions of block ciphers a strategy can expose, by name (GIFT's layers,
/// one Camellia Feistel round, Camellia's FL/FL⁻¹ layer).
pub const CIPHER_FUNCTIONS: &[&str] = &["subcells", "permbits", "addroundkey", "feistel", "fl"];

/// Bytes the bulk cipher operations (`ecb:N`, `ctr:N`) encrypt per call: 4 KiB, a page,
/// as SUPERCOP and the seed measured "long" messages (it stays in L1).
pub const CIPHER_BULK_BYTES: u32 = 4096;

/// Update size of the `stream:N` operations.
pub const STREAM_PIECE: usize = 64;

/// Message lengths of the AEAD operations: a tiny message, SUPERCOP's 64 and 576 bytes, an
/// Ethernet-sized packet and a full TLS record (2^14 bytes, RFC 8446 §5.1).
pub const AEAD_LENGTHS: &[u32] = &[16, 64, 576, 1536, 16384];

/// Associated data of every measured AEAD call: 13 bytes, TLS 1.2's record header and
/// sequence number (RFC 5246 §6.2.3.3), as `openssl speed -aead` uses.
pub const AEAD_AAD_BYTES: usize = 13;

const AEAD_OPS: &[Operation] = &[
    Operation::Seal(16),
    Operation::Seal(64),
    Operation::Seal(576),
    Operation::Seal(1536),
    Operation::Seal(16384),
    Operation::Open(16),
    Operation::Open(64),
    Operation::Open(576),
    Operation::Open(1536),
    Operation::Open(16384),
];

/// Bytes of the message a signature operation signs by default: 59, the length eBACS
/// (SUPERCOP's crypto_sign) and pqm4 publish their signing and verifying figures for.
/// `run --lengths` sweeps others (TLS 1.3's CertificateVerify signs 130 bytes with SHA-256).
pub const SIG_MESSAGE_BYTES: u32 = 59;

/// SUPERCOP's message lengths for hash functions, and a long (1 MiB) message.
pub const HASH_LENGTHS: &[u32] = &[8, 64, 576, 1536, 4096, 1 << 20];

const HASH_OPS: &[Operation] = &[
    Operation::Hash(8),
    Operation::Hash(64),
    Operation::Hash(576),
    Operation::Hash(1536),
    Operation::Hash(4096),
    Operation::Hash(1 << 20),
    Operation::Stream(8),
    Operation::Stream(64),
    Operation::Stream(576),
    Operation::Stream(1536),
    Operation::Stream(4096),
    Operation::Stream(1 << 20),
];

/// Names of the hash operations, made once per distinct length (a run uses a handful).
fn interned(kind: &'static str, len: u32) -> &'static str {
    static NAMES: std::sync::Mutex<std::collections::BTreeMap<(&'static str, u32), &'static str>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut m = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    m.entry((kind, len))
        .or_insert_with(|| Box::leak(format!("{kind}:{len}").into_boxed_str()))
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Keypair => "keypair",
            Operation::Encaps => "encaps",
            Operation::Decaps => "decaps",
            Operation::Exchange => "exchange",
            Operation::Derive => "derive",
            Operation::Validate => "validate",
            Operation::Hash(n) => interned("hash", n),
            Operation::Stream(n) => interned("stream", n),
            Operation::KeySchedule => "keysched",
            Operation::Func(f, n) => interned(CIPHER_FUNCTIONS.get(usize::from(f)).copied().unwrap_or("func"), n),
            Operation::Block(n) => interned("block", n),
            Operation::Ecb(n) => interned("ecb", n),
            Operation::Ctr(n) => interned("ctr", n),
            Operation::Seal(n) => interned("seal", n),
            Operation::Open(n) => interned("open", n),
            Operation::Sign(n) => interned("sign", n),
            Operation::Verify(n) => interned("verify", n),
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "keypair" => Some(Operation::Keypair),
            "encaps" => Some(Operation::Encaps),
            "decaps" => Some(Operation::Decaps),
            "exchange" => Some(Operation::Exchange),
            "derive" => Some(Operation::Derive),
            "validate" => Some(Operation::Validate),
            "keysched" => Some(Operation::KeySchedule),
            _ => {
                let (kind, n) = s.split_once(':')?;
                let n: u32 = n.parse().ok()?;
                match kind {
                    "hash" => Some(Operation::Hash(n)),
                    "stream" => Some(Operation::Stream(n)),
                    "block" => Some(Operation::Block(n)),
                    "ecb" => Some(Operation::Ecb(n)),
                    "ctr" => Some(Operation::Ctr(n)),
                    "seal" => Some(Operation::Seal(n)),
                    "open" => Some(Operation::Open(n)),
                    "sign" => Some(Operation::Sign(n)),
                    "verify" => Some(Operation::Verify(n)),
                    f => CIPHER_FUNCTIONS
                        .iter()
                        .position(|&c| c == f)
                        .map(|i| Operation::Func(i as u8, n)),
                }
            }
        }
    }

    /// Bytes hashed, encrypted or signed by one call (hash, cipher, AEAD and signature
    /// operations; not `keysched`).
    pub fn message_bytes(self) -> Option<u64> {
        match self {
            Operation::Hash(n)
            | Operation::Stream(n)
            | Operation::Func(_, n)
            | Operation::Block(n)
            | Operation::Ecb(n)
            | Operation::Ctr(n)
            | Operation::Seal(n)
            | Operation::Open(n)
            | Operation::Sign(n)
            | Operation::Verify(n) => Some(u64::from(n)),
            _ => None,
        }
    }

    /// Whether this is a hash operation (`hash:N`, `stream:N`).
    pub fn is_hash(self) -> bool {
        matches!(self, Operation::Hash(_) | Operation::Stream(_))
    }

    /// The inner cipher function's name, for `subcells:N` and the like.
    pub fn function(self) -> Option<&'static str> {
        match self {
            Operation::Func(f, _) => CIPHER_FUNCTIONS.get(usize::from(f)).copied(),
            _ => None,
        }
    }

    /// Operations of a family, in the order a protocol runs them (hashes: every SUPERCOP
    /// length, one update then 64-byte updates). A cipher's operations depend on the
    /// strategy: see [`Descriptor::operations`]; here only the key schedule.
    pub fn of(family: Family) -> &'static [Operation] {
        family.info().operations
    }
}

impl Serialize for Operation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Operation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Operation, D::Error> {
        let s = String::deserialize(d)?;
        Operation::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown operation `{s}`")))
    }
}

/// Byte lengths of every buffer an operation reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    pub public_key: usize,
    pub secret_key: usize,
    /// KEM ciphertext; 0 for key exchange (the peer's public key plays its role).
    pub ciphertext: usize,
    pub shared_secret: usize,
}

impl Sizes {
    /// The sizes of a hash function: only its digest (in `shared_secret`).
    pub fn digest(bytes: usize) -> Sizes {
        Sizes {
            public_key: 0,
            secret_key: 0,
            ciphertext: 0,
            shared_secret: bytes,
        }
    }

    /// Checks the buffers of `keypair` against these sizes.
    pub fn check_keypair(&self, pk: &[u8], sk: &[u8]) -> Result<(), crate::error::OpError> {
        use crate::error::check_len;
        check_len("keypair", "pk", pk.len(), self.public_key)?;
        check_len("keypair", "sk", sk.len(), self.secret_key)
    }

    /// Checks the buffers of `encaps` against these sizes.
    pub fn check_encaps(&self, ct: &[u8], ss: &[u8], pk: &[u8]) -> Result<(), crate::error::OpError> {
        use crate::error::check_len;
        check_len("encaps", "ct", ct.len(), self.ciphertext)?;
        check_len("encaps", "ss", ss.len(), self.shared_secret)?;
        check_len("encaps", "pk", pk.len(), self.public_key)
    }

    /// Checks the buffers of `decaps` against these sizes.
    pub fn check_decaps(&self, ss: &[u8], ct: &[u8]) -> Result<(), crate::error::OpError> {
        use crate::error::check_len;
        check_len("decaps", "ss", ss.len(), self.shared_secret)?;
        check_len("decaps", "ct", ct.len(), self.ciphertext)
    }
}

/// Whether a subject can run on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Availability {
    Available,
    /// e.g. "cpu lacks avx2".
    Unavailable(String),
}

/// Where an implementation's randomness comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Randomness {
    /// Drawn through the harness (`cryptoscope_catalogue::rng::fill`): KATs can be reproduced.
    Harness,
    /// The library's own generator, not replaceable: the gate cross-checks against a
    /// verified implementation instead.
    Internal,
}

/// Which PRNG a KAT procedure uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KatPrngKind {
    /// NIST AES-256 CTR_DRBG (PQCgenKAT).
    AesCtrDrbg,
    /// HQC's SHAKE-256 PRNG with the given domain byte.
    Shake256 { domain: u8 },
}

/// Which published KAT digest a subject must reproduce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KatRef {
    /// File under `vectors/kem/` (KEMs) or `vectors/sig/` (signatures).
    pub file: String,
    /// Key in that file.
    pub name: String,
    pub prng: KatPrngKind,
}

impl KatRef {
    /// The digest a PQClean-derived implementation of `alg` must reproduce: liboqs's
    /// current KAT digests, except HQC, whose PQClean code (pqcrypto-hqc 0.2) is the HQC
    /// of liboqs 0.13 (SHAKE-256 PRNG, domain byte 1).
    pub fn liboqs_digest(alg: &str) -> KatRef {
        if alg.starts_with("HQC") {
            KatRef {
                file: "liboqs-0.13.0-kats.json".into(),
                name: alg.into(),
                prng: KatPrngKind::Shake256 { domain: 1 },
            }
        } else {
            KatRef {
                file: "liboqs-kats.json".into(),
                name: alg.into(),
                prng: KatPrngKind::AesCtrDrbg,
            }
        }
    }
}

/// Everything known about a subject before running it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptor {
    /// `algorithm/provider/implementation`, unique.
    pub id: String,
    /// Canonical algorithm name ("ML-KEM-768", "X25519").
    pub algorithm: String,
    pub family: Family,
    /// Canonical provider name ("liboqs", "pqclean", "aws-lc", "rustcrypto", "openssl").
    pub provider: String,
    pub provider_version: String,
    /// Implementation variant ("clean", "avx2", "dispatch", "default").
    pub implementation: String,
    /// Version of the algorithm as the provider states it (e.g. liboqs `alg_version`).
    pub algorithm_version: String,
    /// Compiler and flags the implementation was built with.
    pub build: String,
    /// NIST security category claimed for post-quantum schemes.
    pub nist_level: Option<u8>,
    /// Classical security in bits for pre-quantum schemes.
    pub classical_bits: Option<u16>,
    pub sizes: Sizes,
    pub availability: Availability,
    pub randomness: Randomness,
    pub kat: Option<KatRef>,
    /// Block ciphers: what the strategy is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<CipherInfo>,
    /// AEADs: key, nonce and tag sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aead: Option<AeadInfo>,
    /// Signatures: what is signed, how, and in which encodings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<SigInfo>,
}

/// How a signature scheme draws the randomness of signing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signing {
    /// The same key and message always give the same signature (Ed25519, RSA PKCS#1 v1.5,
    /// ECDSA with RFC 6979 nonces, ML-DSA's deterministic variant).
    Deterministic,
    /// Fresh randomness mixed with key and message (FIPS 204's default ML-DSA, FIPS 205's
    /// SLH-DSA with `opt_rand`): a weak generator does not expose the key.
    Hedged,
    /// Fresh randomness only (ECDSA with a random nonce, RSA-PSS's salt, Falcon's sampler).
    Randomized,
}

impl Signing {
    pub fn as_str(self) -> &'static str {
        match self {
            Signing::Deterministic => "deterministic",
            Signing::Hedged => "hedged",
            Signing::Randomized => "randomized",
        }
    }
}

/// What a signature subject signs and how: its largest signature (in
/// [`Sizes::ciphertext`] too), its signing randomness, whether it takes a context string,
/// and the scheme and encodings as they are (so SPHINCS+ round 3 never passes for FIPS 205).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigInfo {
    /// The largest signature, in bytes (ECDSA's DER and Falcon's compressed signatures are
    /// shorter most of the time).
    pub signature_bytes: usize,
    /// Whether the signature's length varies from one signing to the next.
    pub variable_length: bool,
    pub signing: Signing,
    /// Takes a context string (FIPS 204 and 205 pure signing: up to 255 bytes).
    pub context: bool,
    /// The scheme as implemented: "FIPS 204 ML-DSA, pure", "SPHINCS+ round 3.1, simple
    /// (not FIPS 205)", "RSASSA-PSS with SHA-256, MGF1, 32-byte salt".
    pub scheme: String,
    /// The encodings of the public key, the secret key and the signature.
    pub encoding: String,
}

/// The buffers of an AEAD, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AeadInfo {
    pub key_bytes: usize,
    pub nonce_bytes: usize,
    pub tag_bytes: usize,
}

/// What a block cipher subject is: its sizes, how many blocks it processes together, the
/// inner functions it exposes and whether it indexes memory with secret data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CipherInfo {
    pub block_bytes: usize,
    pub key_bytes: usize,
    /// Blocks processed together (1 for single-block strategies).
    pub batch: usize,
    /// Indexes memory (tables) with secret data: `Some(true)` for table strategies,
    /// `Some(false)` for bitsliced and byte-sliced ones, `None` when not known
    /// (third-party code).
    pub secret_indexing: Option<bool>,
    /// Inner functions ([`CIPHER_FUNCTIONS`] names) measurable separately.
    pub functions: Vec<String>,
    /// One line on the technique.
    pub about: String,
}

impl Descriptor {
    /// The operations the constant-time audit (`cryptoscope ct`) covers: those whose secret
    /// input the harness can mark. Key generation and encapsulation only where the harness
    /// supplies the randomness, the secret input they are audited with; `decaps-rejected`
    /// decapsulates a ciphertext that fails its check, `open-forged` opens a forged tag.
    pub fn ct_operations(&self) -> Vec<&'static str> {
        let info = self.family.info();
        let harness = self.randomness == Randomness::Harness;
        info.ct_operations
            .iter()
            .copied()
            .filter(|op| harness || !info.ct_needs_randomness.contains(op))
            .collect()
    }

    pub fn make_id(algorithm: &str, provider: &str, implementation: &str) -> String {
        format!("{algorithm}/{provider}/{implementation}")
    }

    /// A descriptor for a catalogued algorithm: family and claimed security come from
    /// [`crate::names::ALGORITHMS`]; available, no KAT reference, algorithm version "-".
    /// Providers then set what they know better (KAT, randomness, availability).
    ///
    /// # Panics
    /// If `algorithm` is not a catalogue name (a programming error in a provider).
    pub fn catalogued(
        algorithm: &str,
        provider: &str,
        implementation: &str,
        provider_version: String,
        build: String,
        sizes: Sizes,
        randomness: Randomness,
    ) -> Descriptor {
        let info = crate::names::algorithm(algorithm).unwrap_or_else(|| panic!("{algorithm} is not in the catalogue"));
        Descriptor {
            id: Descriptor::make_id(info.name, provider, implementation),
            algorithm: info.name.to_string(),
            family: info.family,
            provider: provider.into(),
            provider_version,
            implementation: implementation.into(),
            algorithm_version: "-".into(),
            build,
            nist_level: info.nist_level,
            classical_bits: info.classical_bits,
            sizes,
            availability: Availability::Available,
            randomness,
            kat: None,
            cipher: None,
            aead: None,
            sig: None,
        }
    }

    /// A descriptor for a signature implementation: the public and secret keys' sizes
    /// (the largest, for encodings that vary, such as RSA's DER), the signature's largest
    /// in `ciphertext`, no shared secret.
    #[allow(clippy::too_many_arguments)]
    pub fn signature(
        algorithm: &str,
        provider: &str,
        implementation: &str,
        provider_version: String,
        build: String,
        [public_key, secret_key]: [usize; 2],
        randomness: Randomness,
        info: SigInfo,
    ) -> Descriptor {
        let sizes = Sizes {
            public_key,
            secret_key,
            ciphertext: info.signature_bytes,
            shared_secret: 0,
        };
        let mut d = Descriptor::catalogued(
            algorithm,
            provider,
            implementation,
            provider_version,
            build,
            sizes,
            randomness,
        );
        d.sig = Some(info);
        d
    }

    /// A descriptor for an AEAD implementation: the key's size in `secret_key`, the tag's
    /// in `ciphertext` (the bytes sealing adds), harness randomness (none is used).
    pub fn aead(
        algorithm: &str,
        provider: &str,
        implementation: &str,
        provider_version: String,
        build: String,
        info: AeadInfo,
    ) -> Descriptor {
        let mut d = Descriptor::symmetric(
            [algorithm, provider, implementation],
            provider_version,
            build,
            info.key_bytes,
            info.tag_bytes,
        );
        d.aead = Some(info);
        d
    }

    /// A keyed symmetric primitive: the key's size in `secret_key`, `ciphertext` bytes in
    /// `ciphertext`, nothing else, harness randomness (none is used).
    fn symmetric(
        [algorithm, provider, implementation]: [&str; 3],
        provider_version: String,
        build: String,
        key_bytes: usize,
        ciphertext: usize,
    ) -> Descriptor {
        let sizes = Sizes {
            public_key: 0,
            secret_key: key_bytes,
            ciphertext,
            shared_secret: 0,
        };
        Descriptor::catalogued(
            algorithm,
            provider,
            implementation,
            provider_version,
            build,
            sizes,
            Randomness::Harness,
        )
    }

    /// A descriptor for a block cipher implementation: the key's size in `secret_key`, the
    /// block's in `ciphertext`, harness randomness (none is used).
    pub fn block_cipher(
        algorithm: &str,
        provider: &str,
        implementation: &str,
        provider_version: String,
        build: String,
        info: CipherInfo,
    ) -> Descriptor {
        let mut d = Descriptor::symmetric(
            [algorithm, provider, implementation],
            provider_version,
            build,
            info.key_bytes,
            info.block_bytes,
        );
        d.cipher = Some(info);
        d
    }

    /// The operations this subject is measured on. For a block cipher: the key schedule,
    /// each exposed inner function on its whole state (`batch` blocks), one block, and
    /// [`CIPHER_BULK_BYTES`] in ECB and in CTR mode.
    pub fn operations(&self) -> Vec<Operation> {
        match (&self.family, &self.cipher) {
            (Family::Cipher, Some(c)) => {
                let mut v = vec![Operation::KeySchedule];
                let state = (c.block_bytes * c.batch) as u32;
                for f in &c.functions {
                    if let Some(i) = CIPHER_FUNCTIONS.iter().position(|x| x == f) {
                        v.push(Operation::Func(i as u8, state));
                    }
                }
                v.push(Operation::Block(c.block_bytes as u32));
                v.push(Operation::Ecb(CIPHER_BULK_BYTES));
                v.push(Operation::Ctr(CIPHER_BULK_BYTES));
                v
            }
            _ => Operation::of(self.family).to_vec(),
        }
    }

    pub fn is_available(&self) -> bool {
        self.availability == Availability::Available
    }
}

/// `Unavailable("cpu lacks X")` for the first CPU feature of `needed` this CPU lacks.
pub fn require_cpu(needed: &[&str]) -> Availability {
    #[cfg(target_arch = "x86_64")]
    {
        for f in needed {
            let ok = match *f {
                "avx2" => std::arch::is_x86_feature_detected!("avx2"),
                "bmi1" => std::arch::is_x86_feature_detected!("bmi1"),
                "bmi2" => std::arch::is_x86_feature_detected!("bmi2"),
                "aes" => std::arch::is_x86_feature_detected!("aes"),
                "popcnt" => std::arch::is_x86_feature_detected!("popcnt"),
                "pclmulqdq" => std::arch::is_x86_feature_detected!("pclmulqdq"),
                "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
                _ => false,
            };
            if !ok {
                return Availability::Unavailable(format!("cpu lacks {f}"));
            }
        }
        Availability::Available
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        match needed.first() {
            Some(f) => Availability::Unavailable(format!("cpu lacks {f} (not x86_64)")),
            None => Availability::Available,
        }
    }
}
