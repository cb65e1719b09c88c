//! Known-answer files brought by the user (`cryptoscope verify --vectors FILE`): NIST CAVP
//! hash response files, NIST KEM KAT response files and four Wycheproof schemas
//! (`xdh_comp_schema`, `ecdh_ecpoint_test_schema`, `mlkem_test_schema`, `aead_test_schema`
//! for AES-GCM and ChaCha20-Poly1305). The AEAD gate runs the repository's own Wycheproof
//! AEAD files through [`run_aead`] too.
//!
//! [`load`] recognises a file by its content and parses all of it up front, so a malformed
//! file is one error naming the file and the line or test id, before anything runs. The
//! `run_*` functions put one implementation through every test of a parsed file and count
//! what passed, failed and had to be skipped, with the ids of the failures. Expected values
//! come only from the file.

use serde::{Deserialize, Serialize};
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
(secp256r1), mlkem_test_schema (ML-KEM-512/768/1024) and aead_test_schema (AES-GCM, CHACHA20-POLY1305)";

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
    WycheproofMlkem,
    WycheproofAead,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::CavpHash => "cavp-hash",
            Format::KemKat => "nist-kem-kat",
            Format::WycheproofX25519 => "wycheproof-x25519",
            Format::WycheproofP256 => "wycheproof-p256",
            Format::WycheproofMlkem => "wycheproof-mlkem",
            Format::WycheproofAead => "wycheproof-aead",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        [
            Format::CavpHash,
            Format::KemKat,
            Format::WycheproofX25519,
            Format::WycheproofP256,
            Format::WycheproofMlkem,
            Format::WycheproofAead,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
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
    Mlkem(Vec<MlkemTest>),
    Aead {
        /// Wycheproof's `algorithm`: "AES-GCM" or "CHACHA20-POLY1305".
        algorithm: String,
        tests: Vec<AeadTest>,
    },
}

impl External {
    pub fn format(&self) -> Format {
        match self {
            External::Hash { .. } => Format::CavpHash,
            External::Kem { .. } => Format::KemKat,
            External::X25519(_) => Format::WycheproofX25519,
            External::P256(_) => Format::WycheproofP256,
            External::Mlkem(_) => Format::WycheproofMlkem,
            External::Aead { .. } => Format::WycheproofAead,
        }
    }

    /// Number of tests in the file.
    pub fn tests(&self) -> usize {
        match self {
            External::Hash { records, .. } => records.len(),
            External::Kem { records, .. } => records.len(),
            External::X25519(t) | External::P256(t) => t.len(),
            External::Mlkem(t) => t.len(),
            External::Aead { tests, .. } => tests.len(),
        }
    }

    /// The algorithms the file's own content or name states (empty: the user must say).
    pub fn stated_algorithms(&self) -> Vec<String> {
        let mut v: Vec<String> = match self {
            External::Hash { name_algorithm, .. } => name_algorithm.iter().cloned().collect(),
            External::Kem { header_algorithm, .. } => header_algorithm.iter().cloned().collect(),
            External::X25519(_) => vec!["X25519".into()],
            External::P256(_) => vec!["P-256".into()],
            External::Mlkem(t) => t.iter().map(|t| t.parameter_set.clone()).collect(),
            // The catalogue AEADs among the file's key lengths (others are skipped).
            External::Aead { algorithm, tests } => tests
                .iter()
                .filter_map(|t| aead_algorithm(algorithm, t.key.len()))
                .map(String::from)
                .collect(),
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
    let unsupported = |why: String| {
        ExternalError::Unsupported(format!(
            "unsupported vector file {}: {why}; {SUPPORTED}",
            path.display()
        ))
    };
    if schema.starts_with("xdh_comp_schema") || schema.starts_with("ecdh_ecpoint_test_schema") {
        let x25519 = schema.starts_with("xdh");
        let want = if x25519 { "curve25519" } else { "secp256r1" };
        let mut tests = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let curve = g.get("curve").and_then(|c| c.as_str()).unwrap_or("");
            if curve != want {
                return Err(unsupported(format!(
                    "test group {} is for curve `{curve}`, only {want} is supported in {schema}",
                    gi + 1
                )));
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
        return Ok(if x25519 {
            External::X25519(tests)
        } else {
            External::P256(tests)
        });
    }
    if schema.starts_with("mlkem_test_schema") {
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
        return Ok(External::Mlkem(tests));
    }
    if schema.starts_with("aead_test_schema") {
        let algorithm = v.get("algorithm").and_then(|a| a.as_str()).unwrap_or("");
        if !matches!(algorithm, "AES-GCM" | "CHACHA20-POLY1305") {
            return Err(unsupported(format!(
                "Wycheproof AEAD file for `{algorithm}`: only AES-GCM and CHACHA20-POLY1305 are in the catalogue"
            )));
        }
        let mut tests = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let bits = |k: &str| g.get(k).and_then(|x| x.as_u64());
            let (Some(key_bits), Some(iv_bits), Some(tag_bits)) = (bits("keySize"), bits("ivSize"), bits("tagSize"))
            else {
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
        return Ok(External::Aead {
            algorithm: algorithm.to_string(),
            tests,
        });
    }
    Err(unsupported(format!("Wycheproof schema `{schema}` is not supported")))
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

/// A test that failed, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    pub id: String,
    pub detail: String,
}

/// One implementation's result on one file. Every test is counted once: passed (valid and
/// invalid tests answered as expected), acceptable (Wycheproof `acceptable` tests, which
/// pass accepted or rejected), failed, or skipped (the harness cannot present the test).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutcome {
    pub passed: usize,
    pub acceptable: usize,
    pub failed: usize,
    pub skipped: usize,
    pub failures: Vec<TestFailure>,
    /// What was skipped or checked only in part, and why; one line each.
    pub notes: Vec<String>,
}

/// Counts with the reasons for skips gathered into notes.
#[derive(Default)]
struct Tally {
    out: FileOutcome,
    skips: BTreeMap<String, usize>,
    acceptable_rejected: usize,
}

impl Tally {
    fn pass(&mut self, expect: Expect, rejected: bool) {
        if expect == Expect::Acceptable {
            self.out.acceptable += 1;
            if rejected {
                self.acceptable_rejected += 1;
            }
        } else {
            self.out.passed += 1;
        }
    }
    fn fail(&mut self, id: impl ToString, detail: impl Into<String>) {
        self.out.failed += 1;
        self.out.failures.push(TestFailure {
            id: id.to_string(),
            detail: detail.into(),
        });
    }
    fn skip(&mut self, why: &str) {
        self.out.skipped += 1;
        *self.skips.entry(why.to_string()).or_default() += 1;
    }
    fn finish(mut self) -> FileOutcome {
        if self.out.acceptable > 0 {
            self.out.notes.push(format!(
                "{} acceptable tests: {} accepted with the expected result, {} rejected",
                self.out.acceptable,
                self.out.acceptable - self.acceptable_rejected,
                self.acceptable_rejected
            ));
        }
        for (why, n) in self.skips {
            self.out.notes.push(format!("{n} skipped: {why}"));
        }
        self.out
    }
}

/// One message's digest in one update, finished into a buffer with canaries around it.
fn guarded_digest(h: &dyn Hash, msg: &[u8]) -> Result<Vec<u8>, String> {
    let input = Guarded::from(msg);
    let mut out = Guarded::new(h.descriptor().sizes.shared_secret);
    let mut s = h.start();
    s.update(input.get());
    s.finish(out.get_mut());
    canaries("finish", &[("digest", &out), ("message", &input)])?;
    Ok(out.get().to_vec())
}

/// Puts a hash implementation through a CAVP file's records (one update, then again in
/// 7-byte pieces). Published outputs shorter than the digest (SHAKE's) are compared as
/// prefixes; bit-level records are skipped.
pub fn run_hash(h: &dyn Hash, records: &[HashRecord]) -> FileOutcome {
    let n = h.descriptor().sizes.shared_secret;
    let mut t = Tally::default();
    let mut prefix = 0;
    for r in records {
        if r.bit_level() {
            t.skip("`Len` is not a multiple of 8 (bit-level input; the Hash trait takes whole bytes)");
            continue;
        }
        if r.digest.len() > n {
            t.skip(&format!(
                "the published output is longer than the subject's {n}-byte digest"
            ));
            continue;
        }
        let k = r.digest.len();
        if k < n {
            prefix += 1;
        }
        let whole = match guarded_digest(h, &r.message) {
            Ok(w) => w,
            Err(e) => {
                t.fail(r.id, format!("Len = {}: {e}", r.message.len() * 8));
                continue;
            }
        };
        if whole[..k] != r.digest[..] {
            t.fail(
                r.id,
                format!(
                    "Len = {}: got {}, expected {}",
                    r.message.len() * 8,
                    hex::encode(&whole[..k]),
                    hex::encode(&r.digest)
                ),
            );
        } else if hash_of(h, &r.message, 7)[..k] != r.digest[..] {
            t.fail(
                r.id,
                format!(
                    "Len = {}: right in one update, wrong in 7-byte pieces",
                    r.message.len() * 8
                ),
            );
        } else {
            t.pass(Expect::Valid, false);
        }
    }
    if prefix > 0 {
        t.out.notes.push(format!(
            "{prefix} published outputs are shorter than the {n}-byte digest and were compared as prefixes"
        ));
    }
    t.finish()
}

fn differing(pairs: &[(&str, &[u8], &[u8])]) -> Vec<String> {
    pairs
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(n, _, _)| n.to_string())
        .collect()
}

/// Reproduces NIST KEM KAT entries: with injectable randomness, keypair and encapsulation
/// under the KAT generator seeded from `seed` (the subject's own KAT generator, else NIST's
/// AES-256 CTR_DRBG) must give `pk`, `sk`, `ct` and `ss`; every subject must decapsulate
/// `ct` with `sk` to `ss`. Without injectable randomness only the latter is possible.
pub fn run_kem_kat(kem: &dyn Kem, records: &[KemRecord]) -> FileOutcome {
    let d = kem.descriptor();
    let harness = d.randomness == Randomness::Harness;
    let prng = d.kat.as_ref().map_or(KatPrngKind::AesCtrDrbg, |k| k.prng);
    let mut t = Tally::default();
    for r in records {
        let sizes = [
            ("pk", r.pk.len(), d.sizes.public_key),
            ("sk", r.sk.len(), d.sizes.secret_key),
            ("ct", r.ct.len(), d.sizes.ciphertext),
            ("ss", r.ss.len(), d.sizes.shared_secret),
        ];
        if let Some((name, got, want)) = sizes.iter().find(|(_, g, w)| g != w) {
            t.fail(
                &r.count,
                format!("`{name}` has {got} bytes, {} uses {want}", d.algorithm),
            );
            continue;
        }
        if harness {
            let mut b = KemBufs::new(d);
            let made = {
                let _g = install_kat(kat_prng(prng, &r.seed));
                keypair_encaps(kem, &mut b)
            };
            if let Err(e) = made {
                t.fail(&r.count, e);
                continue;
            }
            let bad = differing(&[
                ("pk", b.pk.get(), &r.pk),
                ("sk", b.sk.get(), &r.sk),
                ("ct", b.ct.get(), &r.ct),
                ("ss", b.ss.get(), &r.ss),
            ]);
            if !bad.is_empty() {
                t.fail(
                    &r.count,
                    format!("from this seed the subject gives a different {}", bad.join(", ")),
                );
                continue;
            }
        }
        match decaps(kem, &r.sk, &r.ct, d.sizes.shared_secret) {
            Ok(ss) if ss == r.ss => t.pass(Expect::Valid, false),
            Ok(ss) => t.fail(
                &r.count,
                format!(
                    "decaps(sk, ct) gives {}, the file's ss is {}",
                    hex::encode(ss),
                    hex::encode(&r.ss)
                ),
            ),
            Err(e) => t.fail(&r.count, e),
        }
    }
    if !harness {
        t.out.notes.push(
            "randomness not injectable: only decaps(sk, ct) = ss was checked, not key generation or encapsulation"
                .into(),
        );
    }
    t.finish()
}

/// The private scalar as the Kex trait takes it: X25519's 32 bytes as they are; a P-256
/// scalar (Wycheproof writes it as a minimal signed big-endian integer) left-padded or
/// stripped of leading zeros to 32 bytes. `None` if it does not fit.
fn private_scalar(p256: bool, raw: &[u8]) -> Option<Vec<u8>> {
    if !p256 {
        return (raw.len() == 32).then(|| raw.to_vec());
    }
    let digits: Vec<u8> = raw.iter().copied().skip_while(|&b| b == 0).collect();
    if digits.len() > 32 {
        return None;
    }
    let mut out = vec![0u8; 32 - digits.len()];
    out.extend(digits);
    Some(out)
}

/// Runs Wycheproof X25519 or P-256 (uncompressed-point) ECDH tests: `valid` must give the
/// shared secret, `invalid` must be rejected, `acceptable` may be either (a value given
/// must still be the file's).
pub fn run_dh(kex: &dyn Kex, tests: &[DhTest]) -> FileOutcome {
    let p256 = kex.descriptor().algorithm == "P-256";
    let mut t = Tally::default();
    for x in tests {
        let Some(sk) = private_scalar(p256, &x.private) else {
            t.skip("the private key does not fit the subject's 32-byte scalar");
            continue;
        };
        match (exchange(kex, &sk, &x.public), x.result) {
            (Ok(ss), Expect::Valid | Expect::Acceptable) if ss == x.shared => t.pass(x.result, false),
            (Ok(ss), Expect::Valid | Expect::Acceptable) => t.fail(
                x.tc_id,
                format!("shared secret {}, expected {}", hex::encode(ss), hex::encode(&x.shared)),
            ),
            (Ok(ss), Expect::Invalid) => t.fail(
                x.tc_id,
                format!(
                    "accepted an invalid public key ({} bytes) and derived {}",
                    x.public.len(),
                    hex::encode(ss)
                ),
            ),
            (Err(e), Expect::Valid) => t.fail(x.tc_id, format!("rejected a valid test: {e}")),
            (Err(_), expect) => t.pass(expect, true),
        }
    }
    t.finish()
}

/// A generator that hands out a seed's bytes in order and counts what was asked for.
struct SeedFeed {
    seed: Vec<u8>,
    drawn: Arc<AtomicUsize>,
}

impl KatPrng for SeedFeed {
    fn fill(&mut self, out: &mut [u8]) {
        let at = self.drawn.fetch_add(out.len(), Ordering::SeqCst);
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.seed.get(at + i).copied().unwrap_or(0);
        }
    }
}

/// Runs Wycheproof ML-KEM tests of the subject's parameter set. With injectable randomness
/// the key pair comes from the 64-byte seed d ‖ z handed out as the harness's randomness,
/// and must give `ek`; otherwise `keys` supplies the decapsulation key per tcId (derived by
/// an injectable implementation whose `ek` matched the file). Then `c` must decapsulate to
/// `K` (`valid`, implicit rejection included) or be rejected (`invalid`).
///
/// Returns the outcome and the decapsulation keys this subject derived (tcId → key) for
/// the tests whose `ek` it reproduced.
pub fn run_mlkem(
    kem: &dyn Kem,
    tests: &[MlkemTest],
    keys: Option<&BTreeMap<u64, Vec<u8>>>,
) -> (FileOutcome, BTreeMap<u64, Vec<u8>>) {
    let d = kem.descriptor();
    let harness = d.randomness == Randomness::Harness;
    let mut derived = BTreeMap::new();
    let mut t = Tally::default();
    for x in tests.iter().filter(|x| x.parameter_set == d.algorithm) {
        if x.seed.len() != 64 {
            t.skip(
                "the seed is not 64 bytes: keys come from 64 bytes of injected randomness, so a seed of another \
                 length cannot be presented to the implementation",
            );
            continue;
        }
        let sk = if harness {
            let mut pk = vec![0u8; d.sizes.public_key];
            let mut sk = vec![0u8; d.sizes.secret_key];
            let drawn = Arc::new(AtomicUsize::new(0));
            let r = {
                let _g = install_kat(Box::new(SeedFeed {
                    seed: x.seed.clone(),
                    drawn: drawn.clone(),
                }));
                kem.keypair(&mut pk, &mut sk)
            };
            if let Err(e) = r {
                t.fail(x.tc_id, format!("key generation from the seed failed: {e}"));
                continue;
            }
            let n = drawn.load(Ordering::SeqCst);
            if n != 64 {
                t.fail(
                    x.tc_id,
                    format!("key generation drew {n} bytes of randomness, not the 64 of d ‖ z"),
                );
                continue;
            }
            if let Some(ek) = &x.ek {
                if ek != &pk {
                    t.fail(x.tc_id, "key generation from the seed gives a different ek");
                    continue;
                }
                derived.insert(x.tc_id, sk.clone());
            }
            sk
        } else {
            match keys.and_then(|k| k.get(&x.tc_id)) {
                Some(sk) => sk.clone(),
                None => {
                    t.skip(
                        "randomness not injectable and no decapsulation key was derived for this test by an \
                         implementation that reproduced its ek",
                    );
                    continue;
                }
            }
        };
        match (decaps(kem, &sk, &x.c, d.sizes.shared_secret), x.result) {
            (Ok(k), Expect::Valid | Expect::Acceptable) if k == x.k => t.pass(x.result, false),
            (Ok(k), Expect::Valid | Expect::Acceptable) => t.fail(
                x.tc_id,
                format!(
                    "decapsulation gives K = {}, expected {}",
                    hex::encode(k),
                    hex::encode(&x.k)
                ),
            ),
            (Ok(_), Expect::Invalid) => t.fail(
                x.tc_id,
                format!("accepted an invalid ciphertext of {} bytes", x.c.len()),
            ),
            (Err(e), Expect::Valid) => t.fail(x.tc_id, format!("rejected a valid test: {e}")),
            (Err(_), expect) => t.pass(expect, true),
        }
    }
    (t.finish(), derived)
}

/// Seals `msg` into buffers with canaries around them; returns ciphertext and tag.
fn guarded_seal(
    k: &mut dyn crate::traits::AeadKey,
    t: &AeadTest,
    tag_bytes: usize,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut data = Guarded::from(&t.msg);
    let mut tag = Guarded::new(tag_bytes);
    k.seal(&t.iv, &t.aad, data.get_mut(), tag.get_mut())
        .map_err(|e| e.to_string())?;
    canaries("seal", &[("data", &data), ("tag", &tag)])?;
    Ok((data.get().to_vec(), tag.get().to_vec()))
}

/// Opens a test's ciphertext into a buffer with canaries around it.
fn guarded_open(k: &mut dyn crate::traits::AeadKey, t: &AeadTest) -> Result<Vec<u8>, String> {
    let mut out = Guarded::new(t.ct.len());
    let r = k.open(&t.iv, &t.aad, &t.ct, &t.tag, out.get_mut());
    canaries("open", &[("out", &out)])?;
    r.map_err(|e| e.to_string())?;
    Ok(out.get().to_vec())
}

/// Runs Wycheproof AEAD tests (`algorithm` is the file's, "AES-GCM" or
/// "CHACHA20-POLY1305") of the subject's algorithm, that is its key length: `valid` tests
/// must seal to the file's ciphertext and tag and open back to the message; `invalid` ones
/// must be refused by `open`, or, when the file gives no tag (nothing can be sealed with
/// that nonce), by `seal`. A valid test whose nonce or tag length the subject does not take
/// (it takes the descriptor's: 12 and 16 bytes) is skipped; an invalid one is still
/// presented, and must be refused.
pub fn run_aead(aead: &dyn Aead, algorithm: &str, tests: &[AeadTest]) -> FileOutcome {
    let d = aead.descriptor();
    let mut t = Tally::default();
    let Some(info) = d.aead else {
        t.fail("-", format!("{} has no AEAD description", d.id));
        return t.finish();
    };
    let mine: Vec<&AeadTest> = tests
        .iter()
        .filter(|x| aead_algorithm(algorithm, x.key.len()) == Some(d.algorithm.as_str()))
        .collect();
    let others = tests.len() - mine.len();
    for x in mine {
        let mut k = match aead.keyed(&x.key) {
            Ok(k) => k,
            Err(e) => {
                t.fail(x.tc_id, format!("the key was refused: {e}"));
                continue;
            }
        };
        let shape_ok = x.iv.len() == info.nonce_bytes && x.tag.len() == info.tag_bytes;
        match x.result {
            Expect::Valid | Expect::Acceptable if !shape_ok => t.skip(&format!(
                "a nonce or tag of a length the subject does not take (it takes {}-byte nonces, {}-byte tags)",
                info.nonce_bytes, info.tag_bytes
            )),
            Expect::Valid | Expect::Acceptable => {
                let sealed = match guarded_seal(k.as_mut(), x, info.tag_bytes) {
                    Ok(s) => s,
                    Err(_) if x.result == Expect::Acceptable => {
                        t.pass(x.result, true);
                        continue;
                    }
                    Err(e) => {
                        t.fail(x.tc_id, format!("seal failed: {e}"));
                        continue;
                    }
                };
                if sealed.0 != x.ct || sealed.1 != x.tag {
                    t.fail(
                        x.tc_id,
                        format!(
                            "seal gives ct {} tag {}, expected ct {} tag {}",
                            short_hex(&sealed.0),
                            hex::encode(&sealed.1),
                            short_hex(&x.ct),
                            hex::encode(&x.tag)
                        ),
                    );
                    continue;
                }
                match guarded_open(k.as_mut(), x) {
                    Ok(m) if m == x.msg => t.pass(x.result, false),
                    Ok(m) => t.fail(
                        x.tc_id,
                        format!("open gives {}, expected {}", short_hex(&m), short_hex(&x.msg)),
                    ),
                    Err(e) => t.fail(x.tc_id, format!("open refused a valid ciphertext: {e}")),
                }
            }
            Expect::Invalid if x.tag.is_empty() => match guarded_seal(k.as_mut(), x, info.tag_bytes) {
                Ok(_) => t.fail(x.tc_id, format!("sealed with an invalid {}-byte nonce", x.iv.len())),
                Err(e) if e.contains("canary") => t.fail(x.tc_id, e),
                Err(_) => t.pass(Expect::Invalid, true),
            },
            Expect::Invalid => match guarded_open(k.as_mut(), x) {
                Ok(_) => t.fail(
                    x.tc_id,
                    format!(
                        "opened an invalid ciphertext ({}-byte nonce, {} bytes)",
                        x.iv.len(),
                        x.ct.len()
                    ),
                ),
                Err(e) if e.contains("canary") => t.fail(x.tc_id, e),
                Err(_) => t.pass(Expect::Invalid, true),
            },
        }
    }
    if others > 0 {
        t.out.notes.push(format!(
            "{others} tests of the file are for other key lengths or algorithms than {}",
            d.algorithm
        ));
    }
    t.finish()
}

/// Hex of at most 32 bytes, with the length when cut.
fn short_hex(b: &[u8]) -> String {
    if b.len() <= 32 {
        hex::encode(b)
    } else {
        format!("{}… ({} bytes)", hex::encode(&b[..32]), b.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn err(p: &Path) -> String {
        load(p).unwrap_err().to_string()
    }

    #[test]
    fn recognises_by_content_not_name() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "whatever.txt",
            "# c\n[L = 32]\n\nLen = 0\nMsg = 00\nMD = aa\n\nLen = 12\nMsg = abc0\nMD = bb\n",
        );
        let f = load(&p).unwrap();
        assert_eq!(f.format(), Format::CavpHash);
        assert!(f.stated_algorithms().is_empty());
        let External::Hash { records, l, .. } = f else { panic!() };
        assert_eq!(l, Some(32));
        assert!(records[0].message.is_empty() && !records[0].bit_level());
        assert!(records[1].bit_level());
        let p = write(d.path(), "SHA3_256ShortMsg.rsp", "Len = 8\nMsg = 01\nMD = aa\n");
        assert_eq!(load(&p).unwrap().stated_algorithms(), ["SHA3-256"]);
        let seed = "00".repeat(48);
        let p = write(
            d.path(),
            "k.rsp",
            &format!("# ML-KEM-768\n\ncount = 0\nseed = {seed}\npk = 01\nsk = 02\nct = 03\nss = 04\n"),
        );
        let f = load(&p).unwrap();
        assert_eq!(f.format(), Format::KemKat);
        assert_eq!(f.stated_algorithms(), ["ML-KEM-768"]);
    }

    #[test]
    fn malformed_files_name_file_and_place() {
        let d = tempfile::tempdir().unwrap();
        let seed = "00".repeat(48);
        let cases = [
            ("a.rsp", "Len = 8\nMsg = 0g\nMD = aa\n".to_string(), "line 2"),
            ("b.rsp", "Len = 8\nMsg = 01\n".to_string(), "no `MD`"),
            ("c.rsp", "Len = 8\nMsg = 01\nMD = aa\ngarbage\n".to_string(), "line 4"),
            (
                "d.rsp",
                format!("count = 0\nseed = {seed}\npk = 01\nsk = 02\nct = 03\nss = 04\n\ncount = 1\nseed = {seed}\npk = 01\n"),
                "count 1 (line 8) has no `sk`",
            ),
            ("e.json", "{\"schema\": \"xdh_comp_schema_v1.json\", \"testGroups\": [".into(), "not valid JSON"),
            (
                "f.json",
                r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":7,"public":"00","private":"zz","shared":"","result":"valid"}]}]}"#.into(),
                "tcId 7: `private` is not hex",
            ),
            (
                "g.json",
                r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":8,"public":"00","private":"00","result":"valid"}]}]}"#.into(),
                "tcId 8: no `shared`",
            ),
            (
                "h.json",
                r#"{"algorithm":"AES-GCM","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":128,"ivSize":96,"tagSize":128,"tests":[{"tcId":3,"key":"00000000000000000000000000000000","iv":"000000000000000000000000","aad":"","msg":"","ct":"","tag":"00","result":"valid"}]}]}"#.into(),
                "tcId 3: `tag` has 8 bits, its group says 128",
            ),
            (
                "i.json",
                r#"{"algorithm":"CHACHA20-POLY1305","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":256,"tagSize":128,"tests":[]}]}"#.into(),
                "test group 1 lacks a numeric keySize, ivSize or tagSize",
            ),
            (
                "j.json",
                r#"{"algorithm":"AES-GCM","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":128,"ivSize":96,"tagSize":128,"tests":[{"tcId":4,"key":"00000000000000000000000000000000","iv":"000000000000000000000000","aad":"","msg":"00","ct":"","tag":"00000000000000000000000000000000","result":"valid"}]}]}"#.into(),
                "tcId 4: `ct` has 0 bytes, `msg` 1",
            ),
        ];
        for (name, text, want) in cases {
            let p = write(d.path(), name, &text);
            let e = load(&p).unwrap_err();
            assert!(matches!(e, ExternalError::Malformed { .. }), "{name}: {e}");
            let e = e.to_string();
            assert!(e.contains(name) && e.contains(want), "{name}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn errors_stay_on_one_line_whatever_the_file_holds() {
        // Found by fuzzing (`external_vectors`): a `schema` with a line break was quoted
        // as it was into the error.
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "x.json",
            r#"{"algorithm":"ML-KEM","schema":"mlkem_test\nFAKE LINE\r","testGroups":[]}"#,
        );
        let e = err(&p);
        assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
        assert!(e.contains("mlkem_test\\nFAKE LINE\\r"), "{e}");
        let p = write(
            d.path(),
            "y.json",
            r#"{"algorithm":"X25519","schema":"xdh_comp_schema.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":1,"public":"00","private":"00","shared":"00","result":"valid\n2"}]}]}"#,
        );
        let e = err(&p);
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn unsupported_files_say_what_is_supported() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "aead.json",
            r#"{"algorithm":"AES-CCM","schema":"aead_test_schema_v1.json","testGroups":[]}"#,
        );
        let e = err(&p);
        assert!(
            e.contains("AES-CCM") && e.contains("only AES-GCM and CHACHA20-POLY1305") && e.contains("supported are"),
            "{e}"
        );
        let p = write(
            d.path(),
            "ecdsa.json",
            r#"{"algorithm":"ECDSA","schema":"ecdsa_verify_schema.json","testGroups":[]}"#,
        );
        assert!(err(&p).contains("`ecdsa_verify_schema.json` is not supported"));
        let p = write(
            d.path(),
            "x448.json",
            r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve448","tests":[]}]}"#,
        );
        assert!(err(&p).contains("curve448"));
        let p = write(
            d.path(),
            "SHA256Monte.rsp",
            "[L = 32]\n\nSeed = 00\n\nCOUNT = 0\nMD = aa\n",
        );
        assert!(err(&p).contains("Monte Carlo"));
        let p = write(d.path(), "notes.txt", "Key = 1\n");
        assert!(matches!(load(&p).unwrap_err(), ExternalError::Unsupported(_)));
    }

    #[test]
    fn file_names_give_hash_algorithms() {
        for (f, a) in [
            ("SHA256ShortMsg.rsp", Some("SHA-256")),
            ("SHA3_256LongMsg.rsp", Some("SHA3-256")),
            ("SHA512_256ShortMsg.rsp", Some("SHA-512/256")),
            ("SHAKE128VariableOut.rsp", Some("SHAKE128")),
            ("SHA224ShortMsg.rsp", Some("SHA-224")),
            ("vectors.rsp", None),
        ] {
            assert_eq!(hash_algorithm_from_name(Path::new(f)).as_deref(), a, "{f}");
        }
    }

    #[test]
    fn p256_scalars_are_normalised() {
        assert_eq!(
            private_scalar(true, &[0, 1]).unwrap(),
            [vec![0u8; 31], vec![1]].concat()
        );
        let mut k = vec![0u8];
        k.extend([0xff; 32]);
        assert_eq!(private_scalar(true, &k).unwrap(), vec![0xff; 32]);
        assert!(private_scalar(true, &[1; 33]).is_none());
        assert!(private_scalar(false, &[1; 31]).is_none());
    }

    #[test]
    fn seed_feed_hands_out_the_seed_in_order_and_counts() {
        let drawn = Arc::new(AtomicUsize::new(0));
        let mut f = SeedFeed {
            seed: (0..64).collect(),
            drawn: drawn.clone(),
        };
        let (mut a, mut b, mut c) = ([0u8; 32], [0u8; 32], [0u8; 4]);
        f.fill(&mut a);
        f.fill(&mut b);
        f.fill(&mut c);
        assert_eq!(a[0], 0);
        assert_eq!(b[31], 63);
        assert_eq!(c, [0; 4]);
        assert_eq!(drawn.load(Ordering::SeqCst), 68);
    }
}
