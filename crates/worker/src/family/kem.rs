//! Key encapsulation: a key pair and a ciphertext prepared once; the KAT gate (with the
//! cross-checks of subjects that draw their own randomness); NIST `.rsp` and Wycheproof
//! ML-KEM files (the combined schema and those of encapsulation, key generation and
//! decapsulation alone); under memcheck the randomness of `keypair` and `encaps` and the
//! secret key's secret parts in `decaps`; dudect's fixed against random seeds, ciphertexts
//! and modified ciphertexts.

use super::{read_json, timed, unsupported, write_json, Family, GateAsk, KeyFiles, OpCall, Prepared};
use crate::ct::dudect::{keypair_classes, Classes, Setup, POOL};
use crate::ct::{err, keypair_with_secret_randomness, public, secret, seeded, with_secret_randomness};
use cryptoscope_catalogue::external::{self, External, FileOutcome};
use cryptoscope_catalogue::gate::{self, Check, Encapsulation, GateReport, KatEntry};
use cryptoscope_catalogue::{Descriptor, Kem, OpError, Operation};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A KEM subject.
pub struct KemFamily<'a>(pub &'a dyn Kem);

/// A key pair and a ciphertext to it (`pk`, `sk`, `ct`), and the buffers measured calls
/// write into.
struct Inputs<'a> {
    k: &'a dyn Kem,
    pk: Vec<u8>,
    sk: Vec<u8>,
    ct: Vec<u8>,
    pk2: Vec<u8>,
    sk2: Vec<u8>,
    ct2: Vec<u8>,
    ss2: Vec<u8>,
}

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let Inputs {
            k,
            pk,
            sk,
            ct,
            pk2,
            sk2,
            ct2,
            ss2,
        } = self;
        let k: &dyn Kem = *k;
        Ok(match op {
            Operation::Keypair => Box::new(move || k.keypair(pk2, sk2)),
            Operation::Encaps => Box::new(move || k.encaps(ct2, ss2, pk)),
            Operation::Decaps => {
                let mut dec = k.decapsulator(sk)?;
                Box::new(move || dec.decaps(ss2, ct))
            }
            _ => return Err(unsupported(k.descriptor(), op)),
        })
    }
}

impl<'a> Family<'a> for KemFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    fn order(&self) -> Vec<Operation> {
        vec![Operation::Encaps, Operation::Decaps, Operation::Keypair]
    }

    fn prepare(&self, note: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        let (k, s) = (self.0, &self.0.descriptor().sizes);
        let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
        let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
        timed(note, Operation::Keypair, &mut || k.keypair(&mut pk, &mut sk))?;
        timed(note, Operation::Encaps, &mut || k.encaps(&mut ct, &mut ss, &pk))?;
        Ok(Box::new(Inputs {
            k,
            pk,
            sk,
            ct,
            pk2: vec![0u8; s.public_key],
            sk2: vec![0u8; s.secret_key],
            ct2: vec![0u8; s.ciphertext],
            ss2: ss,
        }))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        let refs: Option<Vec<KatEntry>> = ask.reference.map(|p| read_json(p)).transpose()?;
        let g = gate::gate_kem(self.0, ask.vectors, ask.depth, ask.keep, refs.as_deref());
        if let (Some(p), false) = (ask.entries_out, g.entries.is_empty()) {
            write_json(p, &g.entries)?;
        }
        if let (Some(p), false) = (ask.encaps_out, g.encapsulations.is_empty()) {
            write_json(p, &g.encapsulations)?;
        }
        Ok(g.report)
    }

    fn check_crosscheck(&self, reference: &Path, produced: &Path) -> Option<Result<Check, String>> {
        Some((|| {
            let entries: Vec<KatEntry> = read_json(reference)?;
            let encs: Vec<Encapsulation> = read_json(produced)?;
            Ok(gate::verify_encapsulations(self.0, &entries, &encs))
        })())
    }

    fn verify_file(&self, file: &External, keys: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        Some(match file {
            External::Kem { records, .. } => Ok(external::run_kem_kat(self.0, records)),
            External::Mlkem(tests) => (|| {
                let given = keys.keys_in.map(read_keys).transpose()?;
                let (outcome, derived) = external::run_mlkem(self.0, tests, given.as_ref());
                if let Some(p) = keys.keys_out {
                    let text: BTreeMap<u64, String> = derived.iter().map(|(k, v)| (*k, hex::encode(v))).collect();
                    let text = serde_json::to_string(&text).map_err(|e| e.to_string())?;
                    std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
                }
                Ok(outcome)
            })(),
            // Each test of these files carries its own keys: nothing passes between subjects.
            External::MlkemEncaps(tests) => Ok(external::run_mlkem_encaps(self.0, tests)),
            External::MlkemKeygen(tests) => Ok(external::run_mlkem_keygen(self.0, tests)),
            External::MlkemDecaps(tests) => Ok(external::run_mlkem_decaps(self.0, tests)),
            _ => return None,
        })
    }

    fn memcheck(&self, op: &str, material: Option<&Path>) -> Result<String, String> {
        let (k, d) = (self.0, self.0.descriptor());
        let material = || match material {
            Some(p) => read_material(p, d),
            None => kem_material(k),
        };
        match op {
            "keypair" => keypair_with_secret_randomness(d, &mut |pk, sk| k.keypair(pk, sk)),
            "encaps" => {
                let pk = material()?.0;
                let s = &d.sizes;
                let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
                let (r, drawn) = with_secret_randomness(|| cryptoscope_ct_op_encaps(k, &mut ct, &mut ss, &pk));
                public(&ct);
                public(&ss);
                r?;
                Ok(format!("the randomness encapsulation drew ({drawn} bytes)"))
            }
            "decaps" | "decaps-rejected" => {
                let (_pk, sk, ct) = material()?;
                let (ranges, what) = secret_ranges(&d.algorithm, sk.len());
                let mut ss = vec![0u8; d.sizes.shared_secret];
                for r in &ranges {
                    secret(&sk[r.clone()]);
                }
                let r = if op == "decaps" {
                    cryptoscope_ct_op_decaps(k, &sk, &ct, &mut ss)
                } else {
                    cryptoscope_ct_op_decaps_rejected(k, &sk, &ct, &mut ss)
                };
                public(&ss);
                public(&sk);
                r?;
                Ok(what)
            }
            _ => Err(self.not_audited(op)),
        }
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        let (k, d) = (self.0, self.0.descriptor());
        match op {
            "keypair" => keypair_classes(d, Box::new(move |pk, sk| k.keypair(pk, sk))),
            "encaps" => encaps_classes(k, d),
            "decaps" | "decaps-rejected" => decaps_classes(k, d, op),
            _ => Err(self.not_audited(op)),
        }
    }
}

#[inline(never)]
fn cryptoscope_ct_op_encaps(k: &dyn Kem, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), String> {
    k.encaps(ct, ss, pk).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_decaps(k: &dyn Kem, sk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), String> {
    let mut d = k.decapsulator(sk).map_err(err)?;
    d.decaps(ss, ct).map_err(err)
}

/// Decapsulation of a valid ciphertext with its first bit flipped (different code from
/// [`cryptoscope_ct_op_decaps`], so the two are never merged into one symbol).
#[inline(never)]
fn cryptoscope_ct_op_decaps_rejected(k: &dyn Kem, sk: &[u8], valid_ct: &[u8], ss: &mut [u8]) -> Result<(), String> {
    let mut ct = valid_ct.to_vec();
    ct[0] ^= 1;
    let mut d = k.decapsulator(sk).map_err(err)?;
    // Some implementations (HQC) return an error for a rejected ciphertext while still
    // computing the implicit-rejection secret: that is the path audited, not a failure.
    let _ = d.decaps(ss, &ct);
    Ok(())
}

/// The byte ranges of a secret key that are secret. ML-KEM's decapsulation key (FIPS 203
/// §7.1), like Kyber's, is dk_PKE ‖ ek ‖ H(ek) ‖ z: dk_PKE (384·k bytes) and z (32) are
/// secret; ek and its hash are public, and marking them would report the rejection sampling
/// of the public matrix. Other algorithms: the whole key.
pub fn secret_ranges(algorithm: &str, sk_len: usize) -> (Vec<std::ops::Range<usize>>, String) {
    // Kyber (round 3) lays its key out the same way.
    let k = match algorithm {
        "ML-KEM-512" | "Kyber512" => Some(2),
        "ML-KEM-768" | "Kyber768" => Some(3),
        "ML-KEM-1024" | "Kyber1024" => Some(4),
        _ => None,
    };
    match k {
        Some(k) if sk_len == 768 * k + 96 => (
            vec![0..384 * k, sk_len - 32..sk_len],
            format!(
                "dk_PKE (bytes 0..{}) and z (the last 32 bytes) of the secret key",
                384 * k
            ),
        ),
        _ => (std::iter::once(0..sk_len).collect(), "the whole secret key".into()),
    }
}

/// A public key, its secret key and a ciphertext to it.
type KemMaterial = (Vec<u8>, Vec<u8>, Vec<u8>);

/// A KEM key pair and one of its ciphertexts, made without any marking.
fn kem_material(k: &dyn Kem) -> Result<KemMaterial, String> {
    let s = &k.descriptor().sizes;
    let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
    k.keypair(&mut pk, &mut sk).map_err(err)?;
    let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
    k.encaps(&mut ct, &mut ss, &pk).map_err(err)?;
    Ok((pk, sk, ct))
}

/// A KEM key pair and ciphertext made outside valgrind (key generation under memcheck is
/// 50–100 times slower: minutes for Classic McEliece), as hex JSON.
pub fn write_material(k: &dyn Kem, path: &Path) -> Result<(), String> {
    let (pk, sk, ct) = kem_material(k)?;
    let v = serde_json::json!({ "pk": hex::encode(pk), "sk": hex::encode(sk), "ct": hex::encode(ct) });
    std::fs::write(path, v.to_string()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn read_material(path: &Path, d: &Descriptor) -> Result<KemMaterial, String> {
    #[derive(serde::Deserialize)]
    struct Material {
        pk: String,
        sk: String,
        ct: String,
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let m: Material = serde_json::from_str(&text).map_err(|e| format!("malformed {}: {e}", path.display()))?;
    let unhex = |f: &str, s: &str, len: usize| -> Result<Vec<u8>, String> {
        let b = hex::decode(s).map_err(|_| format!("{}: `{f}` is not hex", path.display()))?;
        if b.len() != len {
            return Err(format!(
                "{}: `{f}` has {} bytes, expected {len}",
                path.display(),
                b.len()
            ));
        }
        Ok(b)
    };
    Ok((
        unhex("pk", &m.pk, d.sizes.public_key)?,
        unhex("sk", &m.sk, d.sizes.secret_key)?,
        unhex("ct", &m.ct, d.sizes.ciphertext)?,
    ))
}

fn encaps_classes<'a>(k: &'a dyn Kem, d: &Descriptor) -> Result<Setup<'a>, String> {
    let pk = kem_material(k)?.0;
    let sz = &d.sizes;
    let (mut ct, mut ss) = (vec![0u8; sz.ciphertext], vec![0u8; sz.shared_secret]);
    Ok((
        Classes::new(vec![0u8; 48], crate::ct::dudect::pool(48)),
        "one fixed randomness (a 48-byte DRBG seed) against 64 random ones (same public key)".into(),
        Box::new(move |seed: &mut [u8]| {
            let _g = seeded(seed)?;
            k.encaps(&mut ct, &mut ss, &pk).map_err(err)
        }),
    ))
}

fn decaps_classes<'a>(k: &'a dyn Kem, d: &Descriptor, op: &str) -> Result<Setup<'a>, String> {
    let (pk, sk, ct) = kem_material(k)?;
    let mut others = Vec::with_capacity(POOL);
    for _ in 0..POOL {
        let (mut c, mut ss) = (vec![0u8; d.sizes.ciphertext], vec![0u8; d.sizes.shared_secret]);
        k.encaps(&mut c, &mut ss, &pk).map_err(err)?;
        if op == "decaps-rejected" {
            // A modified ciphertext: the implicit-rejection path.
            let i = others.len() % c.len();
            c[i] ^= 1 << (others.len() % 8);
        }
        others.push(c);
    }
    let what = if op == "decaps" {
        "one valid ciphertext against 64 other valid ones (same key)".to_string()
    } else {
        "one valid ciphertext against 64 modified ones (implicit rejection)".to_string()
    };
    let mut dec = k.decapsulator(&sk).map_err(err)?;
    let mut ss = vec![0u8; d.sizes.shared_secret];
    let rejected = op == "decaps-rejected";
    Ok((
        Classes::new(ct, others),
        what,
        Box::new(move |c: &mut [u8]| match dec.decaps(&mut ss, c) {
            // HQC reports a rejected ciphertext as an error (after computing the
            // implicit-rejection secret): part of the path being timed.
            Err(_) if rejected => Ok(()),
            r => r.map_err(err),
        }),
    ))
}

/// ML-KEM keys (by test id) derived by another subject.
fn read_keys(p: &Path) -> Result<BTreeMap<u64, Vec<u8>>, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let map: BTreeMap<u64, String> =
        serde_json::from_str(&text).map_err(|e| format!("malformed key file {}: {e}", p.display()))?;
    map.into_iter()
        .map(|(k, v)| {
            hex::decode(&v)
                .map(|b| (k, b))
                .map_err(|e| format!("malformed key file {}: tcId {k}: {e}", p.display()))
        })
        .collect()
}
