//! The correctness gate of an AEAD implementation.
//!
//! 1. Known answers: every Wycheproof test in `vectors/aead/` for the subject's algorithm
//!    and key length with 96-bit nonces: `valid` tests seal to the file's ciphertext and
//!    tag and open back; `invalid` ones (modified tags, edge cases) are refused
//!    ([`crate::external::run_aead`]).
//! 2. Round trips over message lengths around block and chunk boundaries (0 to 4,101
//!    bytes): open(seal(m)) = m, sealing is deterministic, and a fresh key expansion
//!    agrees with the first.
//! 3. Forgeries: a flipped bit in the ciphertext, the tag, the associated data or the nonce
//!    is refused.
//! 4. Canaries: 32 bytes on each side of every output buffer stay untouched.
//!
//! Expected values come only from the vector files; the round-trip and forgery checks
//! compare the implementation with itself, which cannot make a wrong answer pass the
//! known-answer check.

use std::path::Path;

use crate::external::{self, External};
use crate::gate::{canaries, Check, GateReport, Guarded};
use crate::traits::{Aead, AeadKey};

/// The Wycheproof file holding an algorithm's tests, under `vectors/aead/`.
pub fn vector_file(algorithm: &str) -> Option<&'static str> {
    match algorithm {
        "AES-128-GCM" | "AES-256-GCM" => Some("aes_gcm_test.json"),
        "ChaCha20-Poly1305" => Some("chacha20_poly1305_test.json"),
        _ => None,
    }
}

/// Message lengths of the round-trip checks: empty, around the 16-byte block and the
/// 64-byte ChaCha20 block, and a long message that ends in a partial block.
const LENGTHS: &[usize] = &[0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 1000, 4101];

/// A small deterministic generator for inputs (no expected value depends on it).
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn check_known_answers(a: &dyn Aead, dir: &Path) -> Check {
    const NAME: &str = "known answers";
    let d = a.descriptor();
    let Some(file) = vector_file(&d.algorithm) else {
        return Check::fail(NAME, format!("no vector file for {} in vectors/aead", d.algorithm));
    };
    let path = dir.join("aead").join(file);
    let (algorithm, tests) = match external::load(&path) {
        Ok(External::Aead { algorithm, tests }) => (algorithm, tests),
        Ok(_) => return Check::fail(NAME, format!("{} is not a Wycheproof AEAD file", path.display())),
        Err(e) => return Check::fail(NAME, e.to_string()),
    };
    let o = external::run_aead(a, &algorithm, &tests);
    if let Some(f) = o.failures.first() {
        return Check::fail(
            NAME,
            format!(
                "{} of the Wycheproof tests in {file} failed; first, tcId {}: {}",
                o.failed, f.id, f.detail
            ),
        );
    }
    if o.passed == 0 {
        return Check::fail(NAME, format!("no test in {file} could be run"));
    }
    Check::pass(
        NAME,
        format!(
            "{} Wycheproof tests ({file}) pass, valid ones sealed and opened, invalid ones refused; {} with nonces or tags of other lengths skipped",
            o.passed, o.skipped
        ),
    )
}

/// Seals `msg` into guarded buffers.
fn seal(
    k: &mut dyn AeadKey,
    nonce: &[u8],
    aad: &[u8],
    msg: &[u8],
    tag_bytes: usize,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut data = Guarded::from(msg);
    let mut tag = Guarded::new(tag_bytes);
    k.seal(nonce, aad, data.get_mut(), tag.get_mut())
        .map_err(|e| format!("seal of {} bytes: {e}", msg.len()))?;
    canaries("seal", &[("data", &data), ("tag", &tag)])?;
    Ok((data.get().to_vec(), tag.get().to_vec()))
}

/// Opens into a guarded buffer: Ok(Some(plaintext)), Ok(None) when refused, Err on an
/// overrun.
fn open(k: &mut dyn AeadKey, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Guarded::new(ct.len());
    let r = k.open(nonce, aad, ct, tag, out.get_mut());
    canaries("open", &[("out", &out)])?;
    Ok(r.ok().map(|_| out.get().to_vec()))
}

fn check_round_trips(a: &dyn Aead) -> Check {
    const NAME: &str = "round trips";
    let Some(info) = a.descriptor().aead else {
        return Check::fail(NAME, "no AEAD description");
    };
    let run = || -> Result<(), String> {
        let key = pattern(info.key_bytes, 1);
        let mut k = a.keyed(&key).map_err(|e| format!("keyed: {e}"))?;
        let mut fresh = a.keyed(&key).map_err(|e| format!("keyed: {e}"))?;
        for (i, &n) in LENGTHS.iter().enumerate() {
            let nonce = pattern(info.nonce_bytes, 100 + i as u64);
            let aad = pattern(if i % 3 == 0 { 0 } else { 13 + i }, 200 + i as u64);
            let msg = pattern(n, 300 + i as u64);
            let (ct, tag) = seal(k.as_mut(), &nonce, &aad, &msg, info.tag_bytes)?;
            if n > 0 && ct == msg {
                return Err(format!("seal of {n} bytes left the message unchanged"));
            }
            if seal(k.as_mut(), &nonce, &aad, &msg, info.tag_bytes)? != (ct.clone(), tag.clone()) {
                return Err(format!("sealing {n} bytes twice gave two results"));
            }
            if seal(fresh.as_mut(), &nonce, &aad, &msg, info.tag_bytes)? != (ct.clone(), tag.clone()) {
                return Err(format!("two expansions of one key seal {n} bytes differently"));
            }
            match open(k.as_mut(), &nonce, &aad, &ct, &tag)? {
                Some(m) if m == msg => {}
                Some(_) => return Err(format!("open(seal(m)) ≠ m for {n} bytes")),
                None => return Err(format!("open refused its own seal of {n} bytes")),
            }
        }
        Ok(())
    };
    match run() {
        Ok(()) => Check::pass(
            NAME,
            format!(
                "open(seal(m)) = m, deterministic, key expansion repeatable, {} lengths 0..4101 bytes",
                LENGTHS.len()
            ),
        ),
        Err(e) => Check::fail(NAME, e),
    }
}

/// A forged input: what was changed, then nonce, associated data, ciphertext and tag.
type Forgery = (&'static str, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

fn check_forgeries(a: &dyn Aead) -> Check {
    const NAME: &str = "forgeries";
    let Some(info) = a.descriptor().aead else {
        return Check::fail(NAME, "no AEAD description");
    };
    let run = || -> Result<usize, String> {
        let mut k = a
            .keyed(&pattern(info.key_bytes, 7))
            .map_err(|e| format!("keyed: {e}"))?;
        let mut refused = 0;
        for (i, &n) in [0usize, 1, 16, 100, 1000].iter().enumerate() {
            let nonce = pattern(info.nonce_bytes, 400 + i as u64);
            let aad = pattern(13, 500 + i as u64);
            let msg = pattern(n, 600 + i as u64);
            let (ct, tag) = seal(k.as_mut(), &nonce, &aad, &msg, info.tag_bytes)?;
            let flip = |v: &[u8], at: usize| {
                let mut v = v.to_vec();
                let n = v.len();
                v[at % n] ^= 1 << (at % 8);
                v
            };
            let mut forged: Vec<Forgery> = vec![
                ("tag", nonce.clone(), aad.clone(), ct.clone(), flip(&tag, 5 + i)),
                (
                    "tag's last byte",
                    nonce.clone(),
                    aad.clone(),
                    ct.clone(),
                    flip(&tag, tag.len() - 1),
                ),
                ("associated data", nonce.clone(), flip(&aad, i), ct.clone(), tag.clone()),
                ("nonce", flip(&nonce, 3 * i), aad.clone(), ct.clone(), tag.clone()),
                (
                    "associated data removed",
                    nonce.clone(),
                    Vec::new(),
                    ct.clone(),
                    tag.clone(),
                ),
            ];
            if n > 0 {
                forged.push((
                    "ciphertext",
                    nonce.clone(),
                    aad.clone(),
                    flip(&ct, 7 * i + n / 2),
                    tag.clone(),
                ));
            }
            for (what, nn, ad, c, t) in forged {
                if open(k.as_mut(), &nn, &ad, &c, &t)?.is_some() {
                    return Err(format!("opened a {n}-byte message with a modified {what}"));
                }
                refused += 1;
            }
        }
        Ok(refused)
    };
    match run() {
        Ok(n) => Check::pass(
            NAME,
            format!("{n} forgeries refused (a bit flipped in the tag, its last byte, the data, the nonce or the ciphertext; data removed)"),
        ),
        Err(e) => Check::fail(NAME, e),
    }
}

/// The gate of an AEAD implementation (see the module documentation).
pub fn gate_aead(a: &dyn Aead, vectors_dir: &Path) -> GateReport {
    let mut report = GateReport::default();
    report.checks.push(check_known_answers(a, vectors_dir));
    report.checks.push(check_round_trips(a));
    report.checks.push(check_forgeries(a));
    report
}

#[cfg(test)]
mod tests {
    //! The AEAD gate must be able to fail. A toy "AEAD" that passes everything but the
    //! known answers (its tag is a keyed checksum, not GHASH) fails there; one that ignores
    //! the associated data fails the forgery check; one that writes past its tag fails the
    //! canaries. The vectors are the repository's.
    use super::*;
    use crate::descriptor::{AeadInfo, Descriptor};
    use crate::traits::OpError;
    use std::path::PathBuf;

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        IgnoresAad,
        OverrunsTag,
    }

    struct Toy {
        desc: Descriptor,
        fault: Fault,
    }

    struct ToyKey {
        key: Vec<u8>,
        fault: Fault,
    }

    /// Keystream: the key and nonce bytes mixed with the position (not a cipher; only its
    /// determinism and invertibility matter here).
    fn stream(key: &[u8], nonce: &[u8], i: usize) -> u8 {
        key[i % key.len()] ^ nonce[i % nonce.len()].rotate_left((i % 7) as u32) ^ (i as u8).wrapping_mul(29)
    }

    impl ToyKey {
        fn tag(&self, nonce: &[u8], aad: &[u8], ct: &[u8]) -> [u8; 16] {
            let mut t = [0u8; 16];
            let aad: &[u8] = if self.fault == Fault::IgnoresAad { &[] } else { aad };
            for (i, b) in nonce.iter().chain(aad).chain(ct).enumerate() {
                t[i % 16] = t[i % 16].rotate_left(3) ^ b ^ self.key[i % self.key.len()];
            }
            t[15] ^= aad.len() as u8;
            t[14] ^= ct.len() as u8;
            t
        }
    }

    impl AeadKey for ToyKey {
        fn seal(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError> {
            if nonce.len() != 12 {
                return Err(OpError::failed("seal", "nonce"));
            }
            for (i, b) in data.iter_mut().enumerate() {
                *b ^= stream(&self.key, nonce, i);
            }
            tag.copy_from_slice(&self.tag(nonce, aad, data));
            if self.fault == Fault::OverrunsTag {
                // SAFETY: deliberately writes one byte past the tag (inside the gate's
                // canary padding, which is what the test checks).
                unsafe { *tag.as_mut_ptr().add(tag.len()) = 0 };
            }
            Ok(())
        }
        fn open(&mut self, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
            if nonce.len() != 12 || tag != self.tag(nonce, aad, ct) {
                return Err(OpError::failed("open", "authentication failed"));
            }
            for (i, (o, c)) in out.iter_mut().zip(ct).enumerate() {
                *o = c ^ stream(&self.key, nonce, i);
            }
            Ok(())
        }
    }

    impl Aead for Toy {
        fn descriptor(&self) -> &Descriptor {
            &self.desc
        }
        fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
            Ok(Box::new(ToyKey {
                key: key.to_vec(),
                fault: self.fault,
            }))
        }
    }

    fn toy(fault: Fault) -> Toy {
        let info = AeadInfo {
            key_bytes: 32,
            nonce_bytes: 12,
            tag_bytes: 16,
        };
        Toy {
            desc: Descriptor::aead("ChaCha20-Poly1305", "toy", "toy", "0".into(), "-".into(), info),
            fault,
        }
    }

    fn vectors() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    fn check<'a>(r: &'a GateReport, name: &str) -> &'a Check {
        r.checks.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn a_toy_that_is_not_chacha20_poly1305_fails_only_the_known_answers() {
        let r = gate_aead(&toy(Fault::None), &vectors());
        let ka = check(&r, "known answers");
        assert!(!ka.ok && ka.detail.contains("tcId"), "{ka:?}");
        assert!(check(&r, "round trips").ok, "{r:?}");
        assert!(check(&r, "forgeries").ok, "{r:?}");
        assert!(!r.passed());
    }

    #[test]
    fn ignoring_the_associated_data_is_a_forgery() {
        let r = gate_aead(&toy(Fault::IgnoresAad), &vectors());
        let f = check(&r, "forgeries");
        assert!(!f.ok && f.detail.contains("associated data"), "{f:?}");
    }

    #[test]
    fn writing_past_the_tag_trips_the_canaries() {
        let r = gate_aead(&toy(Fault::OverrunsTag), &vectors());
        let f = check(&r, "round trips");
        assert!(!f.ok && f.detail.contains("canary"), "{f:?}");
    }
}
