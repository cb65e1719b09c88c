//! The correctness gate of a block cipher strategy.
//!
//! 1. Known answers: every vector of `vectors/block-ciphers/` for the cipher and its byte
//!    convention (GIFT-128's little-endian rows byte-reversed).
//! 2. Modes: ECB over 1, `batch`, `batch + 3` and `2·batch + 1` blocks equals block-by-block
//!    encryption; CTR over 4 KiB + 5 bytes, starting just below a carry, equals a counter
//!    mode built here from single-block encryptions; `rekey` equals a fresh schedule.
//! 3. Canaries: 64 bytes on each side of every buffer handed to the implementation stay
//!    untouched (vector code writes through raw pointers).
//! 4. Inner functions: `store(load(x)) = x` for the exposed state, and each function is a
//!    permutation-like change (it alters the state and is deterministic).
//! 5. Cross-checks: 10,000 random (key, block) pairs against each independent
//!    implementation the provider names ([`BlockCipher::references`]).

use crate::gate::{Check, GateReport};
use crate::traits::{BlockCipher, KeyedCipher};
use std::path::Path;

/// Random (key, block) pairs compared with each reference.
pub const CROSS_CHECK_PAIRS: usize = 10_000;

/// A small deterministic generator for test inputs (no expected value depends on it).
struct XorShift(u64);

impl XorShift {
    fn fill(&mut self, out: &mut [u8]) {
        for b in out {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            *b = (self.0 >> 32) as u8;
        }
    }
}

/// Runs `f` on a buffer with 64 canary bytes on each side; fails if one changed.
fn guarded<R>(data: &[u8], f: impl FnOnce(&mut [u8]) -> R) -> Result<(R, Vec<u8>), String> {
    const PAD: usize = 64;
    const CANARY: u8 = 0xa5;
    let mut buf = vec![CANARY; data.len() + 2 * PAD];
    buf[PAD..PAD + data.len()].copy_from_slice(data);
    let r = f(&mut buf[PAD..PAD + data.len()]);
    if buf[..PAD].iter().chain(&buf[PAD + data.len()..]).any(|&b| b != CANARY) {
        return Err(format!("wrote outside its {}-byte buffer", data.len()));
    }
    Ok((r, buf[PAD..PAD + data.len()].to_vec()))
}

fn encrypt_one(k: &mut dyn KeyedCipher, block: &[u8]) -> Result<Vec<u8>, String> {
    let (r, out) = guarded(block, |b| k.encrypt(b))?;
    r.map_err(|e| e.to_string())?;
    Ok(out)
}

fn check_known_answers(c: &dyn BlockCipher, dir: &Path) -> Check {
    const NAME: &str = "known answers";
    let d = c.descriptor();
    let vectors = match crate::vectors::block_cipher_vectors(dir, &d.algorithm) {
        Ok(v) if v.is_empty() => {
            return Check::fail(NAME, format!("no vectors for {} in vectors/block-ciphers", d.algorithm))
        }
        Ok(v) => v,
        Err(e) => return Check::fail(NAME, e.to_string()),
    };
    for v in &vectors {
        let got = c
            .keyed(&v.key)
            .map_err(|e| e.to_string())
            .and_then(|mut k| encrypt_one(k.as_mut(), &v.plaintext));
        match got {
            Ok(ct) if ct == v.ciphertext => {}
            Ok(ct) => {
                return Check::fail(
                    NAME,
                    format!(
                        "{}: got {}, expected {}",
                        v.label,
                        hex::encode(ct),
                        hex::encode(&v.ciphertext)
                    ),
                )
            }
            Err(e) => return Check::fail(NAME, format!("{}: {e}", v.label)),
        }
    }
    Check::pass(NAME, format!("{} published vectors", vectors.len()))
}

/// Block count, block size and batch of a subject.
fn shape(c: &dyn BlockCipher) -> (usize, usize, usize) {
    let info = c.descriptor().cipher.as_ref();
    let bs = info.map_or(16, |i| i.block_bytes);
    let ks = info.map_or(16, |i| i.key_bytes);
    let batch = info.map_or(1, |i| i.batch.max(1));
    (bs, ks, batch)
}

fn check_modes(c: &dyn BlockCipher) -> Check {
    const NAME: &str = "ecb and ctr";
    let (bs, ks, batch) = shape(c);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut run = || -> Result<String, String> {
        let mut key = vec![0u8; ks];
        rng.fill(&mut key);
        let mut k = c.keyed(&key).map_err(|e| e.to_string())?;
        let mut counts = vec![1, batch, batch + 3, 2 * batch + 1];
        counts.dedup();
        for &n in &counts {
            let mut data = vec![0u8; n * bs];
            rng.fill(&mut data);
            let (r, bulk) = guarded(&data, |b| k.encrypt(b))?;
            r.map_err(|e| e.to_string())?;
            for (i, block) in data.chunks(bs).enumerate() {
                if encrypt_one(k.as_mut(), block)? != bulk[i * bs..(i + 1) * bs] {
                    return Err(format!("ECB of {n} blocks differs from block {i} encrypted alone"));
                }
            }
        }
        // CTR from just below a carry out of the low 16 bits.
        let mut iv = vec![0u8; bs];
        rng.fill(&mut iv);
        iv[bs - 2..].copy_from_slice(&[0xff, 0xfb]);
        let mut data = vec![0u8; 4096 + 5];
        rng.fill(&mut data);
        let (r, got) = guarded(&data, |b| k.ctr(&iv, b))?;
        r.map_err(|e| e.to_string())?;
        let mut counter = iv.clone();
        for (i, chunk) in data.chunks(bs).enumerate() {
            let ks = encrypt_one(k.as_mut(), &counter)?;
            let want: Vec<u8> = chunk.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
            if got[i * bs..i * bs + chunk.len()] != want[..] {
                return Err(format!("CTR block {i} differs from the encrypted counter XOR the data"));
            }
            for b in counter.iter_mut().rev() {
                *b = b.wrapping_add(1);
                if *b != 0 {
                    break;
                }
            }
        }
        // rekey equals a fresh schedule.
        let mut other = vec![0u8; ks];
        rng.fill(&mut other);
        let mut block = vec![0u8; bs];
        rng.fill(&mut block);
        k.rekey(&other).map_err(|e| e.to_string())?;
        let mut fresh = c.keyed(&other).map_err(|e| e.to_string())?;
        if encrypt_one(k.as_mut(), &block)? != encrypt_one(fresh.as_mut(), &block)? {
            return Err("after rekey, encryption differs from a fresh key schedule".into());
        }
        let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
        Ok(format!(
            "ECB of {} blocks; CTR over 4101 bytes across a carry; rekey",
            counts.join("/")
        ))
    };
    match run() {
        Ok(d) => Check::pass(NAME, d),
        Err(e) => Check::fail(NAME, e),
    }
}

fn check_functions(c: &dyn BlockCipher) -> Option<Check> {
    const NAME: &str = "inner functions";
    let info = c.descriptor().cipher.as_ref()?;
    if info.functions.is_empty() {
        return None;
    }
    let (bs, ks, batch) = shape(c);
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut run = || -> Result<String, String> {
        let mut key = vec![0u8; ks];
        rng.fill(&mut key);
        let k = c.keyed(&key).map_err(|e| e.to_string())?;
        let mut blocks = vec![0u8; bs * batch];
        rng.fill(&mut blocks);
        let mut state = vec![0u8; k.state_bytes()];
        let mut back = vec![0u8; blocks.len()];
        k.load(&blocks, &mut state);
        k.store(&state, &mut back);
        if back != blocks {
            return Err("store(load(blocks)) does not give the blocks back".into());
        }
        for f in &info.functions {
            let (r, a) = guarded(&state, |s| k.call(f, s, 1))?;
            r.map_err(|e| e.to_string())?;
            let mut b = state.clone();
            k.call(f, &mut b, 1).map_err(|e| e.to_string())?;
            if a == state {
                return Err(format!("{f} left the state unchanged"));
            }
            if a != b {
                return Err(format!("{f} is not deterministic"));
            }
        }
        Ok(format!(
            "load/store round trip; {} change the state deterministically",
            info.functions.join(", ")
        ))
    };
    Some(match run() {
        Ok(d) => Check::pass(NAME, d),
        Err(e) => Check::fail(NAME, e),
    })
}

fn check_references(c: &dyn BlockCipher, pairs: usize) -> Vec<Check> {
    let (bs, ks, _) = shape(c);
    c.references()
        .into_iter()
        .map(|(name, r)| {
            let label = format!("cross-check {name}");
            let mut rng = XorShift(0x5851_f42d_4c95_7f2d);
            let mut run = || -> Result<(), String> {
                let (mut key, mut block) = (vec![0u8; ks], vec![0u8; bs]);
                rng.fill(&mut key);
                let mut mine = c.keyed(&key).map_err(|e| e.to_string())?;
                let mut theirs = r.keyed(&key).map_err(|e| format!("{name}: {e}"))?;
                for i in 0..pairs {
                    // A new key every 16 blocks: key schedules are compared too.
                    if i % 16 == 15 {
                        rng.fill(&mut key);
                        mine.rekey(&key).map_err(|e| e.to_string())?;
                        theirs.rekey(&key).map_err(|e| format!("{name}: {e}"))?;
                    }
                    rng.fill(&mut block);
                    let a = encrypt_one(mine.as_mut(), &block)?;
                    let mut b = block.clone();
                    theirs.encrypt(&mut b).map_err(|e| format!("{name}: {e}"))?;
                    if a != b {
                        return Err(format!(
                            "pair {i}: key {} block {}: ours {}, {name} {}",
                            hex::encode(&key),
                            hex::encode(&block),
                            hex::encode(a),
                            hex::encode(b)
                        ));
                    }
                }
                Ok(())
            };
            match run() {
                Ok(()) => Check::pass(&label, format!("{pairs} random (key, block) pairs agree with {name}")),
                Err(e) => Check::fail(&label, e),
            }
        })
        .collect()
}

/// The gate of a block cipher implementation (see the module documentation).
pub fn gate_cipher(c: &dyn BlockCipher, vectors_dir: &Path) -> GateReport {
    let mut report = GateReport::default();
    report.checks.push(check_known_answers(c, vectors_dir));
    report.checks.push(check_modes(c));
    report.checks.extend(check_functions(c));
    report.checks.extend(check_references(c, CROSS_CHECK_PAIRS));
    report
}

#[cfg(test)]
mod tests {
    //! The cipher gate must be able to fail: RustCrypto's Camellia-128 wrapped correctly
    //! passes against RFC 3713's vectors; wrappers with one deliberate fault each fail the
    //! right check.
    use super::*;
    use crate::descriptor::{CipherInfo, Descriptor};
    use crate::traits::{ctr_from_ecb, OpError};
    use camellia::cipher::{Array, BlockCipherEncrypt, KeyInit};
    use std::path::PathBuf;

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        /// Writes one byte past the end of the buffer it is given.
        Overrun,
        /// ECB of several blocks leaves the last one alone.
        SkipsLastBlock,
        /// Differs from the real cipher on one block in 4096.
        Rare,
    }

    struct Toy {
        desc: Descriptor,
        fault: Fault,
    }

    struct ToyKeyed {
        c: camellia::Camellia128,
        fault: Fault,
    }

    impl BlockCipher for Toy {
        fn descriptor(&self) -> &Descriptor {
            &self.desc
        }
        fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError> {
            Ok(Box::new(ToyKeyed {
                c: camellia::Camellia128::new_from_slice(key).unwrap(),
                fault: self.fault,
            }))
        }
        fn references(&self) -> Vec<(String, Box<dyn BlockCipher>)> {
            if self.fault == Fault::Rare {
                vec![("real".into(), Box::new(toy(Fault::None)))]
            } else {
                Vec::new()
            }
        }
    }

    impl KeyedCipher for ToyKeyed {
        fn rekey(&mut self, key: &[u8]) -> Result<(), OpError> {
            self.c = camellia::Camellia128::new_from_slice(key).unwrap();
            Ok(())
        }
        fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError> {
            let n = blocks.len() / 16;
            for (i, b) in blocks.chunks_exact_mut(16).enumerate() {
                if self.fault == Fault::SkipsLastBlock && n > 1 && i == n - 1 {
                    break;
                }
                let rare = self.fault == Fault::Rare && b[0] == 0 && b[1] < 16;
                let block: &mut Array<u8, _> = b.try_into().unwrap();
                self.c.encrypt_block(block);
                if rare {
                    b[15] ^= 1;
                }
            }
            if self.fault == Fault::Overrun {
                // SAFETY: deliberately wrong, inside the gate's guarded allocation: the
                // byte after the slice is the gate's first trailing canary.
                unsafe { *blocks.as_mut_ptr().add(blocks.len()) = 0 };
            }
            Ok(())
        }
        fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError> {
            ctr_from_ecb(&mut |b| self.encrypt(b), iv, data)
        }
    }

    fn toy(fault: Fault) -> Toy {
        let info = CipherInfo {
            block_bytes: 16,
            key_bytes: 16,
            batch: 4,
            secret_indexing: None,
            functions: Vec::new(),
            about: "test".into(),
        };
        Toy {
            desc: Descriptor::block_cipher("Camellia-128", "test", "toy", String::new(), String::new(), info),
            fault,
        }
    }

    fn vectors() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    fn failed(r: &GateReport) -> Vec<String> {
        r.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect()
    }

    #[test]
    fn a_correct_cipher_passes_and_each_fault_fails_its_check() {
        let ok = gate_cipher(&toy(Fault::None), &vectors());
        assert!(ok.passed(), "{:?}", failed(&ok));
        assert!(ok.checks[0].detail.contains("published vectors"), "{:?}", ok.checks);

        let r = gate_cipher(&toy(Fault::Overrun), &vectors());
        assert!(
            failed(&r).iter().any(|f| f.contains("wrote outside")),
            "{:?}",
            failed(&r)
        );

        let r = gate_cipher(&toy(Fault::SkipsLastBlock), &vectors());
        let f = failed(&r);
        assert!(
            f.iter()
                .any(|f| f.starts_with("ecb and ctr") && f.contains("ECB of 4 blocks")),
            "{f:?}"
        );

        // Wrong on about one block in 4096: the published vectors miss it, the 10,000
        // random pairs of the cross-check do not.
        let r = gate_cipher(&toy(Fault::Rare), &vectors());
        let f = failed(&r);
        assert!(f.iter().any(|f| f.starts_with("cross-check real")), "{f:?}");
    }

    #[test]
    fn a_wrong_published_answer_fails_and_a_malformed_file_is_named() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("block-ciphers")).unwrap();
        let text = std::fs::read_to_string(vectors().join("block-ciphers/camellia.json")).unwrap();
        let wrong = text.replacen(
            "67673138549669730857065648eabe43",
            "67673138549669730857065648eabe44",
            1,
        );
        assert_ne!(wrong, text);
        std::fs::write(t.path().join("block-ciphers/camellia.json"), wrong).unwrap();
        let r = gate_cipher(&toy(Fault::None), t.path());
        let f = failed(&r);
        assert!(
            f.iter().any(|f| f.starts_with("known answers") && f.contains("row 1")),
            "{f:?}"
        );

        std::fs::write(
            t.path().join("block-ciphers/camellia.json"),
            "{\"vectors\": [{\"cipher\": 1}]}",
        )
        .unwrap();
        let e = crate::vectors::block_cipher_vectors(t.path(), "Camellia-128")
            .unwrap_err()
            .to_string();
        assert!(e.contains("camellia.json"), "{e}");
    }
}
