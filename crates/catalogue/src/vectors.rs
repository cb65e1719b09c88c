//! Loading known-answer data files from the `vectors/` directory.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A vector file could not be used.
#[derive(Debug, Error)]
pub enum VectorError {
    /// The file could not be read.
    #[error("cannot read vector file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The file is not what its format promises.
    #[error("malformed vector file {path}: {detail}")]
    Malformed { path: PathBuf, detail: String },
    /// The file has no entry for this algorithm.
    #[error("vector file {path} has no entry `{key}`")]
    Missing { path: PathBuf, key: String },
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io {
        path: path.into(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| VectorError::Malformed {
        path: path.into(),
        detail: e.to_string(),
    })
}

/// Decodes a hex field, naming the file and field on failure.
pub fn unhex(path: &Path, field: &str, s: &str) -> Result<Vec<u8>, VectorError> {
    hex::decode(s).map_err(|e| VectorError::Malformed {
        path: path.into(),
        detail: format!("field `{field}`: {e}"),
    })
}

/// SHA-256 digests of a KAT file: first entry only, and all entries.
#[derive(Debug, Clone, Deserialize)]
pub struct KatDigest {
    pub single: String,
    pub all: String,
}

/// Reads the digest pair for `name` from `dir/kem/file`.
pub fn kat_digest(dir: &Path, file: &str, name: &str) -> Result<KatDigest, VectorError> {
    kat_digest_in(dir, "kem", file, name)
}

/// [`kat_digest`] for the family whose digests are under `dir/family/` (`kem`, `sig`).
pub fn kat_digest_in(dir: &Path, family: &str, file: &str, name: &str) -> Result<KatDigest, VectorError> {
    let path = dir.join(family).join(file);
    let map: std::collections::BTreeMap<String, KatDigest> = read_json(&path)?;
    let d = map.get(name).cloned().ok_or(VectorError::Missing {
        path: path.clone(),
        key: name.into(),
    })?;
    for (field, v) in [("single", &d.single), ("all", &d.all)] {
        if v.len() != 64 || hex::decode(v).is_err() {
            return Err(VectorError::Malformed {
                path,
                detail: format!("`{name}.{field}` is not a SHA-256 hex digest"),
            });
        }
    }
    Ok(d)
}

/// RFC 7748 X25519 vectors.
#[derive(Debug, Deserialize)]
pub struct X25519Vectors {
    pub scalar_mult: Vec<X25519ScalarMult>,
    pub iterated: Vec<X25519Iterated>,
    pub dh: Vec<X25519Dh>,
}

#[derive(Debug, Deserialize)]
pub struct X25519ScalarMult {
    pub id: String,
    pub scalar: String,
    pub u: String,
    pub output: String,
}

#[derive(Debug, Deserialize)]
pub struct X25519Iterated {
    pub iterations: u64,
    pub k: String,
}

#[derive(Debug, Deserialize)]
pub struct X25519Dh {
    pub id: String,
    pub alice_private: String,
    pub alice_public: String,
    pub bob_private: String,
    pub bob_public: String,
    pub shared: String,
}

pub fn x25519(dir: &Path) -> Result<(PathBuf, X25519Vectors), VectorError> {
    let p = dir.join("kex/x25519-rfc7748.json");
    let v = read_json(&p)?;
    Ok((p, v))
}

/// ECDH vectors: private scalar, peer public point, expected shared x-coordinate.
#[derive(Debug, Deserialize)]
pub struct EcdhVectors {
    pub tests: Vec<EcdhTest>,
}

#[derive(Debug, Deserialize)]
pub struct EcdhTest {
    pub id: String,
    pub peer_public: String,
    pub private: String,
    pub own_public: Option<String>,
    pub shared: String,
}

pub fn p256(dir: &Path) -> Result<(PathBuf, EcdhVectors), VectorError> {
    let p = dir.join("kex/p256-ecdh.json");
    let v = read_json(&p)?;
    Ok((p, v))
}

/// A finite-field Diffie–Hellman group.
#[derive(Debug, Deserialize)]
pub struct FfdhGroup {
    pub p: String,
    pub g: u32,
}

pub fn ffdhe2048(dir: &Path) -> Result<(PathBuf, FfdhGroup), VectorError> {
    let p = dir.join("kex/ffdhe2048-rfc7919.json");
    let v = read_json(&p)?;
    Ok((p, v))
}

/// Checks that every file the gate reads parses, so a broken vectors directory is reported
/// once, up front, as bad input.
pub fn validate_dir(dir: &Path) -> Result<(), VectorError> {
    for f in ["liboqs-kats.json", "liboqs-0.13.0-kats.json"] {
        let path = dir.join("kem").join(f);
        let map: std::collections::BTreeMap<String, KatDigest> = read_json(&path)?;
        for (name, d) in &map {
            for (field, v) in [("single", &d.single), ("all", &d.all)] {
                if v.len() != 64 || hex::decode(v).is_err() {
                    return Err(VectorError::Malformed {
                        path: path.clone(),
                        detail: format!("`{name}.{field}` is not a SHA-256 hex digest"),
                    });
                }
            }
        }
    }
    x25519(dir)?;
    p256(dir)?;
    ffdhe2048(dir)?;
    // Hash known answers, when the directory has them (copies made for KEM tests may not).
    if dir.join("hash").is_dir() {
        for alg in crate::names::ALGORITHMS
            .iter()
            .filter(|a| a.family == crate::Family::Hash)
        {
            for f in hash_files(alg.name) {
                hash_vectors(&dir.join("hash").join(f))?;
            }
        }
    }
    // Block cipher known answers, likewise.
    if dir.join("block-ciphers").is_dir() {
        for alg in crate::names::ALGORITHMS
            .iter()
            .filter(|a| a.family == crate::Family::Cipher)
        {
            block_cipher_vectors(dir, alg.name)?;
        }
    }
    Ok(())
}

/// One row of `vectors/block-ciphers/*.json`, as written there.
#[derive(Deserialize)]
struct CipherRow {
    cipher: String,
    #[serde(default)]
    convention: Option<String>,
    #[serde(default)]
    source: Option<String>,
    key: String,
    plaintext: String,
    ciphertext: String,
}

#[derive(Deserialize)]
struct CipherFile {
    vectors: Vec<CipherRow>,
}

/// A block cipher known answer, in the byte convention of the algorithm it is for.
#[derive(Debug, Clone, PartialEq)]
pub struct CipherVector {
    pub key: Vec<u8>,
    pub plaintext: Vec<u8>,
    pub ciphertext: Vec<u8>,
    /// "row N (source)", for failure messages.
    pub label: String,
}

/// The known answers for a block cipher (`GIFT-64`, `GIFT-128`, `GIFTb-128`,
/// `Camellia-128`, `Camellia-256`) from `vectors/block-ciphers/`: GIFT-128 and GIFT-64 take
/// the `original` rows and the `little-endian` rows byte-reversed; GIFTb-128 the `giftb`
/// rows of GIFT-128. Every row of the file must parse, whichever algorithm it is for.
pub fn block_cipher_vectors(dir: &Path, algorithm: &str) -> Result<Vec<CipherVector>, VectorError> {
    let file = if algorithm.starts_with("GIFT") {
        "gift.json"
    } else {
        "camellia.json"
    };
    let path = dir.join("block-ciphers").join(file);
    let rows: CipherFile = read_json(&path)?;
    let mut out = Vec::new();
    for (i, r) in rows.vectors.iter().enumerate() {
        let (key, pt, ct) = (
            unhex(&path, "key", &r.key)?,
            unhex(&path, "plaintext", &r.plaintext)?,
            unhex(&path, "ciphertext", &r.ciphertext)?,
        );
        if pt.len() != ct.len() || !(pt.len() == 8 || pt.len() == 16) {
            return Err(VectorError::Malformed {
                path: path.clone(),
                detail: format!(
                    "row {}: plaintext and ciphertext must be one 8- or 16-byte block",
                    i + 1
                ),
            });
        }
        let convention = r.convention.as_deref().unwrap_or("original");
        let (wanted, reversed) = match (algorithm, r.cipher.as_str(), convention) {
            ("GIFTb-128", "GIFT-128", "giftb") => (true, false),
            ("GIFT-128", "GIFT-128", "original") | ("GIFT-64", "GIFT-64", "original") => (true, false),
            ("GIFT-128", "GIFT-128", "little-endian") | ("GIFT-64", "GIFT-64", "little-endian") => (true, true),
            (a, c, _) if !a.starts_with("GIFT") => (a == c, false),
            _ => (false, false),
        };
        if !wanted {
            continue;
        }
        let (mut key, mut plaintext, mut ciphertext) = (key, pt, ct);
        if reversed {
            key.reverse();
            plaintext.reverse();
            ciphertext.reverse();
        }
        out.push(CipherVector {
            key,
            plaintext,
            ciphertext,
            label: format!("row {} ({})", i + 1, r.source.as_deref().unwrap_or(convention)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    #[test]
    fn repository_vectors_are_well_formed() {
        validate_dir(&dir()).unwrap();
        let (_, x) = x25519(&dir()).unwrap();
        assert_eq!(x.scalar_mult.len(), 2);
        let (_, p) = p256(&dir()).unwrap();
        assert_eq!(p.tests.len(), 25);
        let (_, g) = ffdhe2048(&dir()).unwrap();
        assert_eq!(g.p.len(), 512, "2048-bit prime");
    }

    #[test]
    fn malformed_and_missing_files_are_named() {
        let t = std::env::temp_dir().join(format!("cs-vec-{}", std::process::id()));
        std::fs::create_dir_all(t.join("kem")).unwrap();
        std::fs::write(t.join("kem/liboqs-kats.json"), "{ not json").unwrap();
        let e = validate_dir(&t).unwrap_err().to_string();
        assert!(
            e.contains("malformed vector file") && e.contains("liboqs-kats.json"),
            "{e}"
        );
        std::fs::write(
            t.join("kem/liboqs-kats.json"),
            r#"{"X": {"single": "zz", "all": "00"}}"#,
        )
        .unwrap();
        let e = validate_dir(&t).unwrap_err().to_string();
        assert!(e.contains("not a SHA-256 hex digest"), "{e}");
        std::fs::remove_dir_all(&t).unwrap();
        let e = kat_digest(&t, "liboqs-kats.json", "ML-KEM-768")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read vector file"), "{e}");
    }
}

/// One known answer for a hash function.
#[derive(Debug, Clone, PartialEq)]
pub struct HashVector {
    /// 1-based position in its file, for failure messages.
    pub index: usize,
    pub message: Vec<u8>,
    /// The published digest (for SHAKE, possibly shorter than our output: a prefix).
    pub digest: Vec<u8>,
}

/// The files (under `vectors/hash/`) with known answers for a hash algorithm.
pub fn hash_files(algorithm: &str) -> &'static [&'static str] {
    match algorithm {
        "SHA-256" => &["cavp/SHA256ShortMsg.rsp", "cavp/SHA256LongMsg.rsp"],
        "SHA-256d" => &["sha256d/sha256d.txt"],
        "SHA-512" => &["cavp/SHA512ShortMsg.rsp", "cavp/SHA512LongMsg.rsp"],
        "SHA-512/256" => &["cavp/SHA512_256ShortMsg.rsp", "cavp/SHA512_256LongMsg.rsp"],
        "SHA3-256" => &["cavp/SHA3_256ShortMsg.rsp", "cavp/SHA3_256LongMsg.rsp"],
        "SHA3-512" => &["cavp/SHA3_512ShortMsg.rsp", "cavp/SHA3_512LongMsg.rsp"],
        "SHAKE128" => &["cavp/SHAKE128ShortMsg.rsp", "cavp/SHAKE128LongMsg.rsp"],
        "SHAKE256" => &["cavp/SHAKE256ShortMsg.rsp", "cavp/SHAKE256LongMsg.rsp"],
        "BLAKE2b-256" => &["blake2/blake2b256.txt"],
        "BLAKE2b-512" => &["blake2/blake2b.txt"],
        "BLAKE2s-256" => &["blake2/blake2s.txt"],
        "Ascon-Hash256" => &["ascon/asconhash.txt"],
        "BLAKE3" => &["blake3/blake3.txt"],
        "KangarooTwelve" => &["k12/kt128.txt"],
        "BLAKE-256-r2" => &[
            "sha3-round2/blake/ShortMsgKAT_256.txt",
            "sha3-round2/blake/LongMsgKAT_256.txt",
        ],
        "BMW-256-r2" => &[
            "sha3-round2/bmw/ShortMsgKAT_256.txt",
            "sha3-round2/bmw/LongMsgKAT_256.txt",
        ],
        "CubeHash-256-r2" => &[
            "sha3-round2/cubehash/ShortMsgKAT_256.txt",
            "sha3-round2/cubehash/LongMsgKAT_256.txt",
        ],
        "ECHO-256-r2" => &[
            "sha3-round2/echo/ShortMsgKAT_256.txt",
            "sha3-round2/echo/LongMsgKAT_256.txt",
        ],
        "Fugue-256-r2" => &[
            "sha3-round2/fugue/ShortMsgKAT_256.txt",
            "sha3-round2/fugue/LongMsgKAT_256.txt",
        ],
        "Groestl-256-r2" => &[
            "sha3-round2/groestl/ShortMsgKAT_256.txt",
            "sha3-round2/groestl/LongMsgKAT_256.txt",
        ],
        "Hamsi-256-r2" => &[
            "sha3-round2/hamsi/ShortMsgKAT_256.txt",
            "sha3-round2/hamsi/LongMsgKAT_256.txt",
        ],
        "JH-256-r2" => &[
            "sha3-round2/jh/ShortMsgKAT_256.txt",
            "sha3-round2/jh/LongMsgKAT_256.txt",
        ],
        "Keccak-256-r2" => &[
            "sha3-round2/keccak/ShortMsgKAT_256.txt",
            "sha3-round2/keccak/LongMsgKAT_256.txt",
        ],
        "Luffa-256-r2" => &[
            "sha3-round2/luffa/ShortMsgKAT_256.txt",
            "sha3-round2/luffa/LongMsgKAT_256.txt",
        ],
        "Shabal-256-r2" => &[
            "sha3-round2/shabal/ShortMsgKAT_256.txt",
            "sha3-round2/shabal/LongMsgKAT_256.txt",
        ],
        "SHAvite-3-256-r2" => &[
            "sha3-round2/shavite3/ShortMsgKAT_256.txt",
            "sha3-round2/shavite3/LongMsgKAT_256.txt",
        ],
        "SIMD-256-r2" => &[
            "sha3-round2/simd/ShortMsgKAT_256.txt",
            "sha3-round2/simd/LongMsgKAT_256.txt",
        ],
        "Skein-512-256-v1.3" => &[
            "sha3-round2/skein/ShortMsgKAT_256.txt",
            "sha3-round2/skein/LongMsgKAT_256.txt",
        ],
        _ => &[],
    }
}

/// Whether a hash vector file may hold records whose `Len` is not whole bytes: the SHA-3
/// competition's KAT files do (the NIST API takes lengths in bits). The byte-oriented gate
/// skips those records; the candidates' own tests check them.
pub fn partial_bytes_allowed(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "sha3-round2")
}

/// The SHA-3 competition's ExtremelyLongMsgKAT file of a round-2 candidate: `Text`
/// repeated `Repeat` times, and its digest.
pub fn extremely_long(path: &Path) -> Result<(usize, Vec<u8>, Vec<u8>), VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io {
        path: path.into(),
        source,
    })?;
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(k).map(str::trim))
            .ok_or_else(|| VectorError::Malformed {
                path: path.into(),
                detail: format!("no `{k}` line"),
            })
    };
    let repeat = field("Repeat =")?.parse().map_err(|_| VectorError::Malformed {
        path: path.into(),
        detail: "`Repeat` is not a number".into(),
    })?;
    let piece = field("Text =")?.as_bytes().to_vec();
    let md = unhex(path, "MD", field("MD =")?)?;
    Ok((repeat, piece, md))
}

/// Why a known-answer file's entry is disputed, when it is: a `.disputed` file beside it
/// (same name, extension replaced) whose first line gives the reason. A disputed entry is
/// computed and reported but does not gate; `vectors/README.md` records the evidence.
pub fn disputed(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path.with_extension("disputed")).ok()?;
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// Reads a NIST-style known-answer file: records of `Key = value` lines separated by blank
/// lines; `#` comments and `[section]` lines are skipped. A record's message is `Msg`
/// (hex), cut to `Len` bits when `Len` is given (CAVP writes `Msg = 00` for `Len = 0`); its
/// answer is `MD` or `Output`. Length values must be whole bytes. `Ptn = N` instead of
/// `Msg` stands for N bytes of the repeating pattern 00 01 .. FA (RFC 9861's `ptn(N)`, also
/// the BLAKE3 vectors' input), for messages too long to write out.
pub fn hash_vectors(path: &Path) -> Result<Vec<HashVector>, VectorError> {
    let partial = partial_bytes_allowed(path);
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io {
        path: path.into(),
        source,
    })?;
    let bad = |detail: String| VectorError::Malformed {
        path: path.into(),
        detail,
    };
    let mut out = Vec::new();
    let mut records = 0usize;
    // Bytes of every `Ptn` message so far: 1 GiB in all, not per record.
    let mut ptn_bytes = 0usize;
    let (mut len, mut msg, mut md): (Option<usize>, Option<Vec<u8>>, Option<Vec<u8>>) = (None, None, None);
    let mut flush = |len: &mut Option<usize>,
                     msg: &mut Option<Vec<u8>>,
                     md: &mut Option<Vec<u8>>,
                     line: usize|
     -> Result<(), VectorError> {
        match (msg.take(), md.take()) {
            (None, None) => {}
            (Some(mut m), Some(d)) => {
                records += 1;
                if let Some(bits) = len.take() {
                    if bits % 8 != 0 && partial {
                        *len = None;
                        return Ok(());
                    }
                    if bits % 8 != 0 {
                        return Err(bad(format!(
                            "record ending at line {line}: Len = {bits} is not whole bytes"
                        )));
                    }
                    if bits / 8 > m.len() {
                        return Err(bad(format!(
                            "record ending at line {line}: Len = {bits} but Msg has {} bytes",
                            m.len()
                        )));
                    }
                    m.truncate(bits / 8);
                }
                out.push(HashVector {
                    index: records,
                    message: m,
                    digest: d,
                });
            }
            _ => return Err(bad(format!("record ending at line {line} lacks Msg or MD/Output"))),
        }
        *len = None;
        Ok(())
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            flush(&mut len, &mut msg, &mut md, n + 1)?;
            continue;
        }
        if line.starts_with('#') || line.starts_with('[') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(bad(format!("line {}: expected `Key = value`", n + 1)));
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "Len" => {
                len = Some(
                    value
                        .parse()
                        .map_err(|_| bad(format!("line {}: Len `{value}` is not a number", n + 1)))?,
                )
            }
            "Msg" => msg = Some(unhex(path, &format!("Msg (line {})", n + 1), value)?),
            "Ptn" => {
                let len: usize = value
                    .parse()
                    .ok()
                    .filter(|&l| l <= (1 << 30) - ptn_bytes)
                    .ok_or_else(|| {
                        bad(format!(
                            "line {}: Ptn `{value}` is not a length that keeps the file's Ptn messages within 1 GiB",
                            n + 1
                        ))
                    })?;
                ptn_bytes += len;
                msg = Some((0..len).map(|i| (i % 251) as u8).collect());
            }
            "MD" | "Output" => md = Some(unhex(path, &format!("{key} (line {})", n + 1), value)?),
            _ => {}
        }
    }
    flush(&mut len, &mut msg, &mut md, text.lines().count())?;
    if out.is_empty() {
        return Err(bad("no records".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod hash_vector_tests {
    use super::*;

    #[test]
    fn records_lengths_and_errors() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v.rsp");
        std::fs::write(
            &p,
            "# comment\n[L = 32]\n\nLen = 0\nMsg = 00\nMD = aa\n\nLen = 16\nMsg = 0102\nMD = bb\n\nCount = 1\nMsg = \nMD = CC\n",
        )
        .unwrap();
        let v = hash_vectors(&p).unwrap();
        assert_eq!(v.len(), 3);
        assert!(v[0].message.is_empty());
        assert_eq!(v[1].message, [1, 2]);
        assert!(v[2].message.is_empty());
        assert_eq!(v[2].digest, [0xcc]);
        std::fs::write(&p, "Ptn = 253\nMD = dd\n").unwrap();
        let v = hash_vectors(&p).unwrap();
        assert_eq!((v[0].message[250], v[0].message[251], v[0].message[252]), (250, 0, 1));
        for bad in [
            "Len = 4\nMsg = 00\nMD = aa\n",
            "Ptn = x\nMD = aa\n",
            "Len = 24\nMsg = 00\nMD = aa\n",
            "Msg = 0g\nMD = aa\n",
            "Msg = 00\n",
            "garbage\n",
            "",
        ] {
            std::fs::write(&p, bad).unwrap();
            let e = hash_vectors(&p).unwrap_err();
            assert!(matches!(e, VectorError::Malformed { .. }), "{bad:?}: {e}");
        }
    }
}
