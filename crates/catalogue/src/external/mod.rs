//! Known-answer files brought by the user (`cryptoscope verify --vectors FILE`): NIST CAVP
//! hash response files, NIST KEM KAT response files and these Wycheproof schemas:
//! `xdh_comp_schema`, `ecdh_ecpoint_test_schema`, `ecdh_test_schema` (the peer key as a DER
//! SubjectPublicKeyInfo), `mlkem_test_schema`, `aead_test_schema` (AES-GCM and
//! ChaCha20-Poly1305), and in [`mlkem`] `mlkem_encaps_test_schema`,
//! `mlkem_keygen_seed_test_schema` and `mlkem_semi_expanded_decaps_test_schema`, and in
//! [`sig`] the signature schemas `eddsa_verify_schema` (Ed25519), `ecdsa_verify_schema`
//! (ECDSA P-256 with SHA-256, DER signatures), `mldsa_verify_schema`,
//! `mldsa_sign_seed_schema` and `mldsa_sign_noseed_schema`. The AEAD gate runs the
//! repository's own Wycheproof AEAD files through [`run_aead`] too, the signature gate its
//! signature files through [`run_sig`].
//!
//! [`load`] recognises a file by its content and parses all of it up front, so a malformed
//! file is one error naming the file and the line or test id, before anything runs. The
//! `run_*` functions put one implementation through every test of a parsed file and count
//! what passed, failed and had to be skipped, with the ids of the failures. Expected values
//! come only from the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use thiserror::Error;

use crate::descriptor::{KatPrngKind, Randomness};
use crate::gate::{canaries, decaps, exchange, hash_of, keypair_encaps, Guarded, KemBufs};
use crate::rng::{install_kat, kat_prng, KatPrng};
use crate::traits::{Aead, Hash, Kem, Kex};

/// What is supported, for the message about a file that is not.
pub const SUPPORTED: &str = "supported are NIST CAVP hash .rsp files (Len/Msg/MD), NIST KEM KAT .rsp files \
(count/seed/pk/sk/ct/ss) and the Wycheproof schemas xdh_comp_schema (curve25519), ecdh_ecpoint_test_schema \
and ecdh_test_schema (secp256r1), mlkem_test_schema, mlkem_encaps_test_schema, mlkem_keygen_seed_test_schema and \
mlkem_semi_expanded_decaps_test_schema (ML-KEM-512/768/1024), aead_test_schema (AES-GCM, CHACHA20-POLY1305), \
eddsa_verify_schema (edwards25519), ecdsa_verify_schema (secp256r1 with SHA-256, DER signatures) and \
mldsa_verify_schema, mldsa_sign_seed_schema and mldsa_sign_noseed_schema (ML-DSA-44/65/87)";

/// A vector file that cannot be used.
#[derive(Debug, Error)]
pub enum ExternalError {
    #[error("cannot read vector file {}: {source}", one_line(&.path.display().to_string()))]
    Io { path: PathBuf, source: std::io::Error },
    #[error("malformed vector file {}: {}", one_line(&.path.display().to_string()), one_line(.detail))]
    Malformed { path: PathBuf, detail: String },
    /// A well-formed file of a kind we cannot run, or a file we do not recognise.
    #[error("{}", one_line(.0))]
    Unsupported(String),
}

/// A message on one line: text from the file (a Wycheproof `schema`, a `result` string)
/// and the path may hold line breaks and other control characters, which are shown
/// escaped (`\n`), so that a hostile file cannot add lines to the CLI's one-line error.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The formats [`load`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    CavpHash,
    KemKat,
    WycheproofX25519,
    WycheproofP256,
    WycheproofEcdhSpki,
    WycheproofMlkem,
    WycheproofAead,
    WycheproofMlkemEncaps,
    WycheproofMlkemKeygen,
    WycheproofMlkemDecaps,
    /// `mldsa_sign_seed_schema` and `mldsa_sign_noseed_schema`.
    WycheproofMldsaSign,
    WycheproofMldsaVerify,
    WycheproofEddsa,
    WycheproofEcdsa,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::CavpHash => "cavp-hash",
            Format::KemKat => "nist-kem-kat",
            Format::WycheproofX25519 => "wycheproof-x25519",
            Format::WycheproofP256 => "wycheproof-p256",
            Format::WycheproofEcdhSpki => "wycheproof-ecdh-spki",
            Format::WycheproofMlkem => "wycheproof-mlkem",
            Format::WycheproofAead => "wycheproof-aead",
            Format::WycheproofMlkemEncaps => "wycheproof-mlkem-encaps",
            Format::WycheproofMlkemKeygen => "wycheproof-mlkem-keygen",
            Format::WycheproofMlkemDecaps => "wycheproof-mlkem-decaps",
            Format::WycheproofMldsaSign => "wycheproof-mldsa-sign",
            Format::WycheproofMldsaVerify => "wycheproof-mldsa-verify",
            Format::WycheproofEddsa => "wycheproof-eddsa",
            Format::WycheproofEcdsa => "wycheproof-ecdsa",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        [
            Format::CavpHash,
            Format::KemKat,
            Format::WycheproofX25519,
            Format::WycheproofP256,
            Format::WycheproofEcdhSpki,
            Format::WycheproofMlkem,
            Format::WycheproofAead,
            Format::WycheproofMlkemEncaps,
            Format::WycheproofMlkemKeygen,
            Format::WycheproofMlkemDecaps,
            Format::WycheproofMldsaSign,
            Format::WycheproofMldsaVerify,
            Format::WycheproofEddsa,
            Format::WycheproofEcdsa,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
    }

    /// The family of subjects a file of this format runs on.
    pub fn family(self) -> crate::Family {
        use crate::Family;
        match self {
            Format::CavpHash => Family::Hash,
            Format::KemKat | Format::WycheproofMlkem => Family::Kem,
            Format::WycheproofMlkemEncaps | Format::WycheproofMlkemKeygen | Format::WycheproofMlkemDecaps => {
                Family::Kem
            }
            Format::WycheproofX25519 | Format::WycheproofP256 | Format::WycheproofEcdhSpki => Family::Kex,
            Format::WycheproofAead => Family::Aead,
            Format::WycheproofMldsaSign
            | Format::WycheproofMldsaVerify
            | Format::WycheproofEddsa
            | Format::WycheproofEcdsa => Family::Sig,
        }
    }

    /// What a test is called in this format: the record's place in a hash file, the
    /// `count` of a KEM KAT entry, Wycheproof's `tcId`.
    pub fn id_kind(self) -> &'static str {
        match self {
            Format::CavpHash => "record",
            Format::KemKat => "count",
            _ => "tcId",
        }
    }
}

/// One record of a CAVP hash file.
#[derive(Debug, Clone)]
pub struct HashRecord {
    /// 1-based place in the file.
    pub id: usize,
    /// `Len` in bits, when given.
    pub bits: Option<usize>,
    /// The message (cut to `Len` when it is whole bytes).
    pub message: Vec<u8>,
    pub digest: Vec<u8>,
}

impl HashRecord {
    /// Whether `Len` is not whole bytes (bit-level input the Hash trait cannot take).
    pub fn bit_level(&self) -> bool {
        self.bits.is_some_and(|b| b % 8 != 0)
    }
}

/// One entry of a NIST KEM KAT file.
#[derive(Debug, Clone)]
pub struct KemRecord {
    pub count: String,
    pub seed: [u8; 48],
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub ct: Vec<u8>,
    pub ss: Vec<u8>,
}

/// Wycheproof's verdict on a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Valid,
    Invalid,
    Acceptable,
}

/// A Diffie–Hellman test (X25519 or ECDH).
#[derive(Debug, Clone)]
pub struct DhTest {
    pub tc_id: u64,
    pub private: Vec<u8>,
    pub public: Vec<u8>,
    pub shared: Vec<u8>,
    pub result: Expect,
}

/// An ML-KEM test: key pair from `seed` (d ‖ z), `ek` expected, decapsulate `c` to `k`.
#[derive(Debug, Clone)]
pub struct MlkemTest {
    pub tc_id: u64,
    pub parameter_set: String,
    pub seed: Vec<u8>,
    pub ek: Option<Vec<u8>>,
    pub c: Vec<u8>,
    pub k: Vec<u8>,
    pub result: Expect,
}

/// An AEAD test: seal `msg` with `key`, `iv` and `aad` to `ct` ‖ `tag` (`valid`), or
/// refuse to open `ct` with `tag` (`invalid`).
#[derive(Debug, Clone)]
pub struct AeadTest {
    pub tc_id: u64,
    pub key: Vec<u8>,
    pub iv: Vec<u8>,
    pub aad: Vec<u8>,
    pub msg: Vec<u8>,
    pub ct: Vec<u8>,
    pub tag: Vec<u8>,
    pub result: Expect,
}

/// The catalogue AEAD a Wycheproof `algorithm` and key length stand for (`None` when the
/// catalogue has no such AEAD, e.g. AES-192-GCM).
pub fn aead_algorithm(wycheproof: &str, key_bytes: usize) -> Option<&'static str> {
    match (wycheproof, key_bytes) {
        ("AES-GCM", 16) => Some("AES-128-GCM"),
        ("AES-GCM", 32) => Some("AES-256-GCM"),
        ("CHACHA20-POLY1305", 32) => Some("ChaCha20-Poly1305"),
        _ => None,
    }
}

/// A parsed vector file.
#[derive(Debug, Clone)]
pub enum External {
    Hash {
        /// The algorithm the file name names (`SHA256ShortMsg.rsp` → SHA-256), if it does.
        name_algorithm: Option<String>,
        /// `[L = n]` (SHA-2: bytes; SHA-3: bits), if present.
        l: Option<usize>,
        records: Vec<HashRecord>,
    },
    Kem {
        /// An algorithm named by a `# NAME` header line, if one is.
        header_algorithm: Option<String>,
        records: Vec<KemRecord>,
    },
    X25519(Vec<DhTest>),
    P256(Vec<DhTest>),
    /// P-256 ECDH with the peer key as a DER SubjectPublicKeyInfo (`ecdh_test_schema`).
    EcdhSpki(Vec<DhTest>),
    Mlkem(Vec<MlkemTest>),
    Aead {
        /// Wycheproof's `algorithm`: "AES-GCM" or "CHACHA20-POLY1305".
        algorithm: String,
        tests: Vec<AeadTest>,
    },
    MlkemEncaps(Vec<MlkemEncapsTest>),
    MlkemKeygen(Vec<MlkemKeygenTest>),
    MlkemDecaps(Vec<MlkemDecapsTest>),
    /// Signature verification (`eddsa_verify_schema`, `ecdsa_verify_schema`,
    /// `mldsa_verify_schema`).
    SigVerify(SigVerifyFile),
    /// ML-DSA signing (`mldsa_sign_seed_schema`, `mldsa_sign_noseed_schema`).
    MldsaSign(MldsaSignFile),
}

impl External {
    pub fn format(&self) -> Format {
        match self {
            External::Hash { .. } => Format::CavpHash,
            External::Kem { .. } => Format::KemKat,
            External::X25519(_) => Format::WycheproofX25519,
            External::P256(_) => Format::WycheproofP256,
            External::EcdhSpki(_) => Format::WycheproofEcdhSpki,
            External::Mlkem(_) => Format::WycheproofMlkem,
            External::Aead { .. } => Format::WycheproofAead,
            External::MlkemEncaps(_) => Format::WycheproofMlkemEncaps,
            External::MlkemKeygen(_) => Format::WycheproofMlkemKeygen,
            External::MlkemDecaps(_) => Format::WycheproofMlkemDecaps,
            External::SigVerify(f) => match f.schema {
                VerifySchema::Eddsa => Format::WycheproofEddsa,
                VerifySchema::Ecdsa => Format::WycheproofEcdsa,
                VerifySchema::Mldsa => Format::WycheproofMldsaVerify,
            },
            External::MldsaSign(_) => Format::WycheproofMldsaSign,
        }
    }

    /// Number of tests in the file.
    pub fn tests(&self) -> usize {
        match self {
            External::Hash { records, .. } => records.len(),
            External::Kem { records, .. } => records.len(),
            External::X25519(t) | External::P256(t) | External::EcdhSpki(t) => t.len(),
            External::Mlkem(t) => t.len(),
            External::Aead { tests, .. } => tests.len(),
            External::MlkemEncaps(t) => t.len(),
            External::MlkemKeygen(t) => t.len(),
            External::MlkemDecaps(t) => t.len(),
            External::SigVerify(f) => f.groups.iter().map(|g| g.tests.len()).sum(),
            External::MldsaSign(f) => f.groups.iter().map(|g| g.tests.len()).sum(),
        }
    }

    /// The algorithms the file's own content or name states (empty: the user must say).
    pub fn stated_algorithms(&self) -> Vec<String> {
        let mut v: Vec<String> = match self {
            External::Hash { name_algorithm, .. } => name_algorithm.iter().cloned().collect(),
            External::Kem { header_algorithm, .. } => header_algorithm.iter().cloned().collect(),
            External::X25519(_) => vec!["X25519".into()],
            External::P256(_) | External::EcdhSpki(_) => vec!["P-256".into()],
            External::Mlkem(t) => t.iter().map(|t| t.parameter_set.clone()).collect(),
            // The catalogue AEADs among the file's key lengths (others are skipped).
            External::Aead { algorithm, tests } => tests
                .iter()
                .filter_map(|t| aead_algorithm(algorithm, t.key.len()))
                .map(String::from)
                .collect(),
            External::MlkemEncaps(t) => t.iter().map(|t| t.case.parameter_set.clone()).collect(),
            External::MlkemKeygen(t) => t.iter().map(|t| t.case.parameter_set.clone()).collect(),
            External::MlkemDecaps(t) => t.iter().map(|t| t.case.parameter_set.clone()).collect(),
            External::SigVerify(f) => vec![f.algorithm.clone()],
            External::MldsaSign(f) => vec![f.algorithm.clone()],
        };
        v.sort();
        v.dedup();
        v
    }
}

fn malformed(path: &Path, detail: impl Into<String>) -> ExternalError {
    ExternalError::Malformed {
        path: path.into(),
        detail: detail.into(),
    }
}

/// Reads, recognises and parses a vector file.
pub fn load(path: &Path) -> Result<External, ExternalError> {
    let bytes = std::fs::read(path).map_err(|source| ExternalError::Io {
        path: path.into(),
        source,
    })?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(ExternalError::Unsupported(format!(
            "unsupported vector file {}: not a text file; {SUPPORTED}",
            path.display()
        )));
    };
    // JSON is an object (Wycheproof) or an array; a response file may begin with a section
    // line such as `[L = 32]`.
    let start = text.trim_start();
    let section = start
        .lines()
        .next()
        .is_some_and(|l| l.starts_with('[') && l.contains('='));
    if start.starts_with('{') || (start.starts_with('[') && !section) {
        return load_json(path, &text);
    }
    load_rsp(path, &text)
}

/// One `Key = value` line.
struct Field {
    key: String,
    value: String,
    line: usize,
}

/// A blank-line separated group of fields.
struct Record {
    line: usize,
    fields: Vec<Field>,
}

impl Record {
    fn get(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// A response file split up: its records, comment lines and section lines (`[L = 32]`).
type RspParts = (Vec<Record>, Vec<String>, Vec<String>);

/// Splits a response file into records, comment lines and section lines.
fn rsp_records(path: &Path, text: &str) -> Result<RspParts, ExternalError> {
    let (mut records, mut comments, mut sections) = (Vec::new(), Vec::new(), Vec::new());
    let mut current: Option<Record> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            records.extend(current.take());
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            comments.push(c.trim().to_string());
            continue;
        }
        if line.starts_with('[') {
            records.extend(current.take());
            sections.push(line.trim_matches(['[', ']']).trim().to_string());
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(malformed(
                path,
                format!("line {}: expected `Key = value`, found `{line:.40}`", n + 1),
            ));
        };
        current
            .get_or_insert_with(|| Record {
                line: n + 1,
                fields: Vec::new(),
            })
            .fields
            .push(Field {
                key: key.trim().to_string(),
                value: value.trim().to_string(),
                line: n + 1,
            });
    }
    records.extend(current);
    Ok((records, comments, sections))
}

fn hex_field(path: &Path, f: &Field) -> Result<Vec<u8>, ExternalError> {
    hex::decode(&f.value).map_err(|e| malformed(path, format!("line {}: `{}` is not hex ({e})", f.line, f.key)))
}

fn load_rsp(path: &Path, text: &str) -> Result<External, ExternalError> {
    let (records, comments, sections) = rsp_records(path, text)?;
    let has = |k: &str| records.iter().any(|r| r.get(k).is_some());
    if has("ss") || has("ct") {
        return load_kem(path, &records, &comments);
    }
    if has("Msg") {
        return load_hash(path, &records, &sections);
    }
    if has("Seed") && has("MD") {
        return Err(ExternalError::Unsupported(format!(
            "unsupported vector file {}: a CAVP Monte Carlo file, which cannot be run through a streaming hash; {SUPPORTED}",
            path.display()
        )));
    }
    Err(ExternalError::Unsupported(format!(
        "unsupported vector file {}: not a recognised vector file (no Msg/MD records, no count/seed/pk/sk/ct/ss entries); {SUPPORTED}",
        path.display()
    )))
}

/// The catalogue name of the algorithm a CAVP file name names: `SHA256ShortMsg.rsp` is
/// SHA-256, `SHA3_256LongMsg.rsp` SHA3-256, `SHAKE128ShortMsg.rsp` SHAKE128. Names outside
/// the catalogue (SHA-224, SHA-1) are still returned, for the caller to refuse by name.
pub fn hash_algorithm_from_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let prefix = ["ShortMsg", "LongMsg", "VariableOut", "Monte"]
        .iter()
        .find_map(|k| stem.find(k).map(|i| &stem[..i]))?;
    let name = match prefix.to_ascii_uppercase().as_str() {
        "SHA1" => "SHA-1",
        "SHA224" => "SHA-224",
        "SHA256" => "SHA-256",
        "SHA384" => "SHA-384",
        "SHA512" => "SHA-512",
        "SHA512_224" => "SHA-512/224",
        "SHA512_256" => "SHA-512/256",
        "SHA3_224" => "SHA3-224",
        "SHA3_256" => "SHA3-256",
        "SHA3_384" => "SHA3-384",
        "SHA3_512" => "SHA3-512",
        "SHAKE128" => "SHAKE128",
        "SHAKE256" => "SHAKE256",
        _ => return None,
    };
    Some(name.to_string())
}

fn load_hash(path: &Path, records: &[Record], sections: &[String]) -> Result<External, ExternalError> {
    let mut out = Vec::new();
    for r in records {
        let msg = r
            .get("Msg")
            .ok_or_else(|| malformed(path, format!("record at line {} has no `Msg`", r.line)))?;
        let md = r
            .get("MD")
            .or_else(|| r.get("Output"))
            .ok_or_else(|| malformed(path, format!("record at line {} has no `MD` (or `Output`)", r.line)))?;
        let mut message = hex_field(path, msg)?;
        let digest = hex_field(path, md)?;
        let bits = match r.get("Len") {
            None => None,
            Some(f) => Some(
                f.value
                    .parse::<usize>()
                    .map_err(|_| malformed(path, format!("line {}: `Len = {}` is not a number", f.line, f.value)))?,
            ),
        };
        if let Some(b) = bits {
            if b.div_ceil(8) > message.len() {
                return Err(malformed(
                    path,
                    format!("line {}: `Len = {b}` but `Msg` has {} bytes", msg.line, message.len()),
                ));
            }
            if b % 8 == 0 {
                message.truncate(b / 8);
            }
        }
        out.push(HashRecord {
            id: out.len() + 1,
            bits,
            message,
            digest,
        });
    }
    if out.is_empty() {
        return Err(malformed(path, "no records"));
    }
    let l = sections
        .iter()
        .find_map(|s| s.strip_prefix("L").and_then(|v| v.trim().strip_prefix('=')))
        .and_then(|v| v.trim().parse().ok());
    Ok(External::Hash {
        name_algorithm: hash_algorithm_from_name(path),
        l,
        records: out,
    })
}

fn load_kem(path: &Path, records: &[Record], comments: &[String]) -> Result<External, ExternalError> {
    let mut out = Vec::new();
    for r in records {
        let count = r.get("count").map(|f| f.value.clone()).ok_or_else(|| {
            malformed(
                path,
                format!(
                    "record at line {} has no `count` (a KEM KAT entry begins with one)",
                    r.line
                ),
            )
        })?;
        let field = |k: &str| {
            r.get(k)
                .ok_or_else(|| {
                    malformed(
                        path,
                        format!(
                            "count {count} (line {}) has no `{k}`: truncated or not a KEM KAT entry",
                            r.line
                        ),
                    )
                })
                .and_then(|f| hex_field(path, f))
        };
        let seed = field("seed")?;
        let seed: [u8; 48] = seed.as_slice().try_into().map_err(|_| {
            malformed(
                path,
                format!(
                    "count {count} (line {}): `seed` has {} bytes, not 48",
                    r.line,
                    seed.len()
                ),
            )
        })?;
        out.push(KemRecord {
            seed,
            pk: field("pk")?,
            sk: field("sk")?,
            ct: field("ct")?,
            ss: field("ss")?,
            count,
        });
    }
    if out.is_empty() {
        return Err(malformed(path, "no records"));
    }
    let header_algorithm = comments
        .iter()
        .find_map(|c| crate::names::algorithm(c.trim()))
        .map(|a| a.name.to_string());
    Ok(External::Kem {
        header_algorithm,
        records: out,
    })
}

fn load_json(path: &Path, text: &str) -> Result<External, ExternalError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| malformed(path, format!("not valid JSON: {e}")))?;
    let Some(schema) = v.get("schema").and_then(|s| s.as_str()) else {
        return Err(ExternalError::Unsupported(format!(
            "unsupported vector file {}: JSON without a Wycheproof `schema` field; {SUPPORTED}",
            path.display()
        )));
    };
    let groups = v
        .get("testGroups")
        .and_then(|g| g.as_array())
        .ok_or_else(|| malformed(path, "no `testGroups` array"))?;
    let unsupported = |why: String| unsupported(path, why);
    if schema.starts_with("xdh_comp_schema")
        || schema.starts_with("ecdh_ecpoint_test_schema")
        || schema.starts_with("ecdh_test_schema")
    {
        return load_dh(path, schema, groups);
    }
    if schema.starts_with("mlkem_test_schema") {
        return load_mlkem(path, groups);
    }
    if schema.starts_with("aead_test_schema") {
        return load_aead(path, &v, groups);
    }
    match mlkem::load_schema(path, schema, groups)? {
        Some(parsed) => Ok(parsed),
        None => sig::load_schema(path, schema, &v, groups)?
            .ok_or_else(|| unsupported(format!("Wycheproof schema `{schema}` is not supported"))),
    }
}

/// A file of a kind we do not read, with the kinds we do.
fn unsupported(path: &Path, why: String) -> ExternalError {
    ExternalError::Unsupported(format!(
        "unsupported vector file {}: {why}; {SUPPORTED}",
        path.display()
    ))
}

/// `xdh_comp_schema` (X25519), `ecdh_ecpoint_test_schema` and `ecdh_test_schema` (P-256,
/// raw points and SubjectPublicKeyInfo).
fn load_dh(path: &Path, schema: &str, groups: &[serde_json::Value]) -> Result<External, ExternalError> {
    let spki = schema.starts_with("ecdh_test_schema");
    let x25519 = schema.starts_with("xdh");
    let want = if x25519 { "curve25519" } else { "secp256r1" };
    let mut tests = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let curve = g.get("curve").and_then(|c| c.as_str()).unwrap_or("");
        if curve != want {
            return Err(unsupported(
                path,
                format!(
                    "test group {} is for curve `{curve}`, only {want} is supported in {schema}",
                    gi + 1
                ),
            ));
        }
        for t in tests_of(path, g, gi)? {
            let id = tc_id(path, t)?;
            tests.push(DhTest {
                tc_id: id,
                private: hex_json(path, t, id, "private")?,
                public: hex_json(path, t, id, "public")?,
                shared: hex_json(path, t, id, "shared")?,
                result: result_of(path, t, id)?,
            });
        }
    }
    Ok(if x25519 {
        External::X25519(tests)
    } else if spki {
        External::EcdhSpki(tests)
    } else {
        External::P256(tests)
    })
}

/// `mlkem_test_schema`: key pairs from seeds, decapsulation of the given ciphertexts.
fn load_mlkem(path: &Path, groups: &[serde_json::Value]) -> Result<External, ExternalError> {
    let mut tests = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let ps = g.get("parameterSet").and_then(|c| c.as_str()).unwrap_or("");
        if !matches!(ps, "ML-KEM-512" | "ML-KEM-768" | "ML-KEM-1024") {
            return Err(malformed(
                path,
                format!(
                    "test group {}: `parameterSet` is `{ps}`, not ML-KEM-512, ML-KEM-768 or ML-KEM-1024",
                    gi + 1
                ),
            ));
        }
        for t in tests_of(path, g, gi)? {
            let id = tc_id(path, t)?;
            let ek = match t.get("ek") {
                None => None,
                Some(_) => Some(hex_json(path, t, id, "ek")?),
            };
            tests.push(MlkemTest {
                tc_id: id,
                parameter_set: ps.to_string(),
                seed: hex_json(path, t, id, "seed")?,
                ek,
                c: hex_json(path, t, id, "c")?,
                k: hex_json(path, t, id, "K")?,
                result: result_of(path, t, id)?,
            });
        }
    }
    Ok(External::Mlkem(tests))
}

/// `aead_test_schema` for AES-GCM and ChaCha20-Poly1305, each test's sizes checked against
/// its group's.
fn load_aead(path: &Path, v: &serde_json::Value, groups: &[serde_json::Value]) -> Result<External, ExternalError> {
    let algorithm = v.get("algorithm").and_then(|a| a.as_str()).unwrap_or("");
    if !matches!(algorithm, "AES-GCM" | "CHACHA20-POLY1305") {
        return Err(unsupported(
            path,
            format!("Wycheproof AEAD file for `{algorithm}`: only AES-GCM and CHACHA20-POLY1305 are in the catalogue"),
        ));
    }
    let mut tests = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let bits = |k: &str| g.get(k).and_then(|x| x.as_u64());
        let (Some(key_bits), Some(iv_bits), Some(tag_bits)) = (bits("keySize"), bits("ivSize"), bits("tagSize")) else {
            return Err(malformed(
                path,
                format!("test group {} lacks a numeric keySize, ivSize or tagSize", gi + 1),
            ));
        };
        for t in tests_of(path, g, gi)? {
            let id = tc_id(path, t)?;
            let x = AeadTest {
                tc_id: id,
                key: hex_json(path, t, id, "key")?,
                iv: hex_json(path, t, id, "iv")?,
                aad: hex_json(path, t, id, "aad")?,
                msg: hex_json(path, t, id, "msg")?,
                ct: hex_json(path, t, id, "ct")?,
                tag: hex_json(path, t, id, "tag")?,
                result: result_of(path, t, id)?,
            };
            // The group's sizes must be the test's (a truncated or corrupt file shows
            // here rather than as a failure of the implementation). An invalid test
            // may have no tag at all: Wycheproof gives none where nothing can be sealed
            // (a nonce of a length the algorithm does not define).
            let no_tag = x.result == Expect::Invalid && x.tag.is_empty();
            for (what, got, want) in [
                ("key", x.key.len() * 8, key_bits),
                ("iv", x.iv.len() * 8, iv_bits),
                ("tag", x.tag.len() * 8, if no_tag { 0 } else { tag_bits }),
            ] {
                if got as u64 != want {
                    return Err(malformed(
                        path,
                        format!("tcId {id}: `{what}` has {got} bits, its group says {want}"),
                    ));
                }
            }
            if x.ct.len() != x.msg.len() {
                return Err(malformed(
                    path,
                    format!("tcId {id}: `ct` has {} bytes, `msg` {}", x.ct.len(), x.msg.len()),
                ));
            }
            tests.push(x);
        }
    }
    Ok(External::Aead {
        algorithm: algorithm.to_string(),
        tests,
    })
}

fn tests_of<'a>(path: &Path, g: &'a serde_json::Value, gi: usize) -> Result<&'a Vec<serde_json::Value>, ExternalError> {
    g.get("tests")
        .and_then(|t| t.as_array())
        .ok_or_else(|| malformed(path, format!("test group {} has no `tests` array", gi + 1)))
}

fn tc_id(path: &Path, t: &serde_json::Value) -> Result<u64, ExternalError> {
    t.get("tcId")
        .and_then(|x| x.as_u64())
        .ok_or_else(|| malformed(path, format!("a test has no numeric `tcId`: {:.80}", t.to_string())))
}

fn hex_json(path: &Path, t: &serde_json::Value, id: u64, key: &str) -> Result<Vec<u8>, ExternalError> {
    let s = t
        .get(key)
        .and_then(|x| x.as_str())
        .ok_or_else(|| malformed(path, format!("tcId {id}: no `{key}` string")))?;
    hex::decode(s).map_err(|e| malformed(path, format!("tcId {id}: `{key}` is not hex ({e})")))
}

fn result_of(path: &Path, t: &serde_json::Value, id: u64) -> Result<Expect, ExternalError> {
    match t.get("result").and_then(|x| x.as_str()) {
        Some("valid") => Ok(Expect::Valid),
        Some("invalid") => Ok(Expect::Invalid),
        Some("acceptable") => Ok(Expect::Acceptable),
        Some(other) => Err(malformed(
            path,
            format!("tcId {id}: `result` is `{other}`, not valid, invalid or acceptable"),
        )),
        None => Err(malformed(path, format!("tcId {id}: no `result` string"))),
    }
}

pub mod mlkem;
pub mod sig;
pub use sig::{run_mldsa_sign, run_sig, run_sig_verify, MldsaSignFile, SigVerifyFile, VerifySchema};
mod run;
pub use mlkem::{
    run_mlkem_decaps, run_mlkem_encaps, run_mlkem_keygen, MlkemDecapsTest, MlkemEncapsTest, MlkemKeygenTest,
};
pub use run::*;

#[cfg(test)]
mod tests;
