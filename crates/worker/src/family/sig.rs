//! Signatures: a key pair prepared once, a signer and a verifier made from it per operation
//! (untimed: a server holds its key, a client parses a certificate once); `sign:N` signs an
//! N-byte message, `verify:N` verifies a signature of it made beforehand. The gate
//! (`sig_gate`: KAT digest or cross-check, round trip, tampering, signing kind, contexts,
//! Wycheproof); the Wycheproof signature files; under memcheck the randomness of `keypair`
//! and the secret key (and signing randomness) in `sign`; dudect's fixed against random
//! seeds and messages.

use super::{pattern, read_json, timed, unsupported, write_json, Family, GateAsk, KeyFiles, OpCall, Prepared};
use crate::ct::dudect::{keypair_classes, pool, Classes, Setup};
use crate::ct::{err, keypair_with_secret_randomness, public, secret, with_secret_randomness};
use cryptoscope_catalogue::external::{self, External, FileOutcome};
use cryptoscope_catalogue::gate::{Check, GateReport};
use cryptoscope_catalogue::sig_gate::{self, SigEntry};
use cryptoscope_catalogue::{Descriptor, OpError, Operation, Sig};
use std::path::Path;
use std::time::Duration;

/// A signature subject.
pub struct SigFamily<'a>(pub &'a dyn Sig);

/// A key pair (cut to the lengths written) and the buffers measured calls write into.
struct Inputs<'a> {
    s: &'a dyn Sig,
    pk: Vec<u8>,
    sk: Vec<u8>,
    pk2: Vec<u8>,
    sk2: Vec<u8>,
    sig: Vec<u8>,
}

/// The message of `sign:N` and `verify:N`.
fn message(n: u32) -> Vec<u8> {
    pattern(n as usize, 0x53)
}

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let Inputs {
            s,
            pk,
            sk,
            pk2,
            sk2,
            sig,
        } = self;
        let s: &dyn Sig = *s;
        Ok(match op {
            Operation::Keypair => Box::new(move || s.keypair(pk2, sk2).map(|_| ())),
            Operation::Sign(n) => {
                let msg = message(n);
                let mut signer = s.signer(sk)?;
                Box::new(move || signer.sign(sig, &msg, &[]).map(|_| ()))
            }
            Operation::Verify(n) => {
                let msg = message(n);
                let len = s.signer(sk)?.sign(sig, &msg, &[])?;
                let signed = sig[..len].to_vec();
                let mut verifier = s.verifier(pk)?;
                Box::new(move || match verifier.verify(&msg, &[], &signed) {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(OpError::failed("verify", "rejected a valid signature")),
                    Err(e) => Err(e),
                })
            }
            _ => return Err(unsupported(s.descriptor(), op)),
        })
    }
}

impl<'a> Family<'a> for SigFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    fn order(&self) -> Vec<Operation> {
        fast_first(self.descriptor().operations())
    }

    /// `run --lengths` lists `sign:N` and `verify:N` at lengths of its own: all of them.
    fn measured(&self, only: Option<&[Operation]>) -> Vec<Operation> {
        only.map_or_else(|| self.order(), |l| fast_first(l.to_vec()))
    }

    fn prepare(&self, note: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        let (s, z) = (self.0, &self.0.descriptor().sizes);
        let (mut pk, mut sk) = (vec![0u8; z.public_key], vec![0u8; z.secret_key]);
        let mut lens = (0, 0);
        timed(note, Operation::Keypair, &mut || {
            lens = s.keypair(&mut pk, &mut sk)?;
            Ok(())
        })?;
        pk.truncate(lens.0);
        sk.truncate(lens.1);
        Ok(Box::new(Inputs {
            s,
            pk,
            sk,
            pk2: vec![0u8; z.public_key],
            sk2: vec![0u8; z.secret_key],
            sig: vec![0u8; z.ciphertext],
        }))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        let refs: Option<Vec<SigEntry>> = ask.reference.map(|p| read_json(p)).transpose()?;
        let g = sig_gate::gate_sig(self.0, ask.vectors, ask.depth, ask.keep, refs.as_deref());
        if let (Some(p), false) = (ask.entries_out, g.entries.is_empty()) {
            write_json(p, &g.entries)?;
        }
        if let (Some(p), false) = (ask.encaps_out, g.signatures.is_empty()) {
            write_json(p, &g.signatures)?;
        }
        Ok(g.report)
    }

    fn check_crosscheck(&self, reference: &Path, produced: &Path) -> Option<Result<Check, String>> {
        Some((|| {
            let entries: Vec<SigEntry> = read_json(reference)?;
            let signed: Vec<SigEntry> = read_json(produced)?;
            Ok(sig_gate::verify_signatures(self.0, &entries, &signed))
        })())
    }

    fn verify_file(&self, file: &External, _keys: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        external::run_sig(self.0, file).map(Ok)
    }

    fn memcheck(&self, op: &str, _material: Option<&Path>) -> Result<String, String> {
        let (s, d) = (self.0, self.0.descriptor());
        match op {
            "keypair" => keypair_with_secret_randomness(d, &mut |pk, sk| s.keypair(pk, sk).map(|_| ())),
            "sign" => {
                let (pk, mut sk) = (vec![0u8; d.sizes.public_key], vec![0u8; d.sizes.secret_key]);
                let (_, n) = s.keypair(&mut vec![0u8; pk.len()], &mut sk).map_err(err)?;
                sk.truncate(n);
                let (ranges, what) = secret_ranges(&d.algorithm, sk.len());
                for r in &ranges {
                    secret(&sk[r.clone()]);
                }
                let msg = message(cryptoscope_catalogue::descriptor::SIG_MESSAGE_BYTES);
                let mut sig = vec![0u8; d.sizes.ciphertext];
                let (r, drawn) = with_secret_randomness(|| cryptoscope_ct_op_sign(s, &sk, &msg, &mut sig));
                public(&sig);
                public(&sk);
                r?;
                let drew = if drawn > 0 {
                    format!(", and the randomness signing drew ({drawn} bytes)")
                } else {
                    String::new()
                };
                Ok(format!("{what}{drew}"))
            }
            _ => Err(self.not_audited(op)),
        }
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        let (s, d) = (self.0, self.0.descriptor());
        match op {
            "keypair" => keypair_classes(d, Box::new(move |pk, sk| s.keypair(pk, sk).map(|_| ()))),
            "sign" => sign_classes(s, d),
            _ => Err(self.not_audited(op)),
        }
    }
}

/// Verify and sign before key generation (RSA's takes seconds), keeping each kind's order.
fn fast_first(mut ops: Vec<Operation>) -> Vec<Operation> {
    ops.sort_by_key(|o| match o {
        Operation::Verify(_) => 0,
        Operation::Sign(_) => 1,
        _ => 2,
    });
    ops
}

#[inline(never)]
fn cryptoscope_ct_op_sign(s: &dyn Sig, sk: &[u8], msg: &[u8], sig: &mut [u8]) -> Result<(), String> {
    let mut signer = s.signer(sk).map_err(err)?;
    signer.sign(sig, msg, &[]).map(|_| ()).map_err(err)
}

/// The byte ranges of a secret key that are secret. ML-DSA's (FIPS 204 §7.2, skEncode) is
/// ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0: ρ (32 bytes, the public matrix's seed) and tr (64, the public
/// key's hash) are public, and marking them would report the rejection sampling of the
/// public matrix; K, s1, s2 and t0 are secret. Other schemes: the whole key.
pub fn secret_ranges(algorithm: &str, sk_len: usize) -> (Vec<std::ops::Range<usize>>, String) {
    let mldsa = matches!(algorithm, "ML-DSA-44" | "ML-DSA-65" | "ML-DSA-87");
    if mldsa && sk_len > 128 {
        (
            vec![32..64, 128..sk_len],
            format!("K (bytes 32..64) and s1, s2, t0 (bytes 128..{sk_len}) of the secret key"),
        )
    } else {
        (std::iter::once(0..sk_len).collect(), "the whole secret key".into())
    }
}

/// Signing one fixed message against 64 random ones of the same length, with the same key.
fn sign_classes<'a>(s: &'a dyn Sig, d: &Descriptor) -> Result<Setup<'a>, String> {
    let (mut pk, mut sk) = (vec![0u8; d.sizes.public_key], vec![0u8; d.sizes.secret_key]);
    let (_, n) = s.keypair(&mut pk, &mut sk).map_err(err)?;
    sk.truncate(n);
    let mut signer = s.signer(&sk).map_err(err)?;
    let len = cryptoscope_catalogue::descriptor::SIG_MESSAGE_BYTES as usize;
    let mut sig = vec![0u8; d.sizes.ciphertext];
    Ok((
        Classes::new(vec![0u8; len], pool(len)),
        format!("one fixed {len}-byte message against 64 random ones (same key)"),
        Box::new(move |msg: &mut [u8]| signer.sign(&mut sig, msg, &[]).map(|_| ()).map_err(err)),
    ))
}
