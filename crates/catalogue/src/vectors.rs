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
    let path = dir.join("kem").join(file);
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
    Ok(())
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
