//! AEADs: a keyed instance, a nonce, associated data and a message per operation (`seal:N`,
//! `open:N`); the known-answer, round-trip and forgery gate; Wycheproof AEAD files; under
//! memcheck the key and the plaintext (`seal`) or the key (`open`, `open-forged`); dudect's
//! all-zero against random plaintexts, ciphertexts and tags.

use super::{pattern, unsupported, Family, GateAsk, KeyFiles, OpCall, Prepared};
use crate::ct::dudect::{pool, Classes, Setup};
use crate::ct::{err, public, random, secret};
use cryptoscope_catalogue::external::{self, External, FileOutcome};
use cryptoscope_catalogue::gate::GateReport;
use cryptoscope_catalogue::{Aead, Descriptor, OpError, Operation};
use std::path::Path;
use std::time::Duration;

/// Bytes of plaintext the AEAD audit seals and opens.
const AEAD_AUDIT_BYTES: usize = 1000;

/// An AEAD subject.
pub struct AeadFamily<'a>(pub &'a dyn Aead);

/// Nothing is shared between an AEAD's operations: each keys its own instance.
struct Inputs<'a>(&'a dyn Aead);

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let mut b = AeadBench::new(self.0, op)?;
        Ok(Box::new(move || b.run()))
    }
}

impl<'a> Family<'a> for AeadFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    fn prepare(&self, _: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        Ok(Box::new(Inputs(self.0)))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        Ok(cryptoscope_catalogue::aead_gate::gate_aead(self.0, ask.vectors))
    }

    fn verify_file(&self, file: &External, _: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        match file {
            External::Aead { algorithm, tests } => Some(Ok(external::run_aead(self.0, algorithm, tests))),
            _ => None,
        }
    }

    fn memcheck(&self, op: &str, _: Option<&Path>) -> Result<String, String> {
        if !matches!(op, "seal" | "open" | "open-forged") {
            return Err(self.not_audited(op));
        }
        let (a, d) = (self.0, self.0.descriptor());
        let info = d.aead.ok_or("AEAD without AEAD information")?;
        let key = random(info.key_bytes);
        let nonce = random(info.nonce_bytes);
        let aad = random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES);
        let mut data = random(AEAD_AUDIT_BYTES);
        let mut tag = vec![0u8; info.tag_bytes];
        if op == "seal" {
            secret(&key);
            secret(&data);
            let r = cryptoscope_ct_op_seal(a, &key, &nonce, &aad, &mut data, &mut tag);
            public(&data);
            public(&tag);
            public(&key);
            r?;
            Ok(format!(
                "the key (its expansion included) and {AEAD_AUDIT_BYTES} plaintext bytes"
            ))
        } else {
            // The ciphertext is made unmarked; the expanded key then comes from the
            // marked key, so everything derived from it inside `open` is secret.
            a.keyed(&key)
                .map_err(err)?
                .seal(&nonce, &aad, &mut data, &mut tag)
                .map_err(err)?;
            secret(&key);
            let mut out = vec![0u8; data.len()];
            let r = if op == "open" {
                cryptoscope_ct_op_open(a, &key, &nonce, &aad, &data, &tag, &mut out)
            } else {
                cryptoscope_ct_op_open_forged(a, &key, &nonce, &aad, &data, &tag, &mut out)
            };
            public(&out);
            public(&key);
            r?;
            Ok(if op == "open" {
                format!("the key, opening a valid {AEAD_AUDIT_BYTES}-byte ciphertext")
            } else {
                format!("the key, opening a {AEAD_AUDIT_BYTES}-byte ciphertext whose tag's last byte is flipped")
            })
        }
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        let (a, d) = (self.0, self.0.descriptor());
        match op {
            "seal" => seal_classes(a, d),
            "open" => open_classes(a, d),
            "open-forged" => forged_classes(a, d),
            _ => Err(self.not_audited(op)),
        }
    }
}

#[inline(never)]
fn cryptoscope_ct_op_seal(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    data: &mut [u8],
    tag: &mut [u8],
) -> Result<(), String> {
    let mut k = a.keyed(key).map_err(err)?;
    k.seal(nonce, aad, data, tag).map_err(err)
}

/// Opening (the key's expansion included, so that all of it is inside the operation).
#[inline(never)]
fn cryptoscope_ct_op_open(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    tag: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let mut k = a.keyed(key).map_err(err)?;
    k.open(nonce, aad, ct, tag, out).map_err(err)
}

/// Opening with the valid tag's last byte flipped (different code from
/// [`cryptoscope_ct_op_open`], so the two are never merged into one symbol). A refusal is
/// the expected outcome; opening is an error.
#[inline(never)]
fn cryptoscope_ct_op_open_forged(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    valid_tag: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let mut tag = valid_tag.to_vec();
    let last = tag.len() - 1;
    tag[last] ^= 0x80;
    let mut k = a.keyed(key).map_err(err)?;
    match k.open(nonce, aad, ct, &tag, out) {
        Ok(()) => Err("opened a ciphertext with a forged tag".into()),
        Err(_) => Ok(()),
    }
}

fn seal_classes<'a>(a: &'a dyn cryptoscope_catalogue::Aead, d: &Descriptor) -> Result<Setup<'a>, String> {
    let info = d.aead.ok_or("AEAD without AEAD information")?;
    let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
    let (nonce, aad) = (
        random(info.nonce_bytes),
        random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
    );
    let mut tag = vec![0u8; info.tag_bytes];
    Ok((
        Classes::new(vec![0u8; AEAD_AUDIT_BYTES], pool(AEAD_AUDIT_BYTES)),
        format!("{AEAD_AUDIT_BYTES} all-zero plaintext bytes against random ones (one random key)"),
        Box::new(move |m: &mut [u8]| k.seal(&nonce, &aad, m, &mut tag).map_err(err)),
    ))
}

fn open_classes<'a>(a: &'a dyn cryptoscope_catalogue::Aead, d: &Descriptor) -> Result<Setup<'a>, String> {
    // Each input is a ciphertext and its tag: of the all-zero message, or of one of
    // 64 random messages (same key and nonce).
    let info = d.aead.ok_or("AEAD without AEAD information")?;
    let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
    let (nonce, aad) = (
        random(info.nonce_bytes),
        random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
    );
    let mut sealed = |m: Vec<u8>| -> Result<Vec<u8>, String> {
        let mut data = m;
        let mut tag = vec![0u8; info.tag_bytes];
        k.seal(&nonce, &aad, &mut data, &mut tag).map_err(err)?;
        data.extend(tag);
        Ok(data)
    };
    let fixed = sealed(vec![0u8; AEAD_AUDIT_BYTES])?;
    let others = pool(AEAD_AUDIT_BYTES)
        .into_iter()
        .map(&mut sealed)
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = vec![0u8; AEAD_AUDIT_BYTES];
    Ok((
        Classes::new(fixed, others),
        format!("the ciphertext of {AEAD_AUDIT_BYTES} zero bytes against those of random messages (one key)"),
        Box::new(move |w: &mut [u8]| {
            let (ct, tag) = w.split_at(AEAD_AUDIT_BYTES);
            k.open(&nonce, &aad, ct, tag, &mut out).map_err(err)
        }),
    ))
}

fn forged_classes<'a>(a: &'a dyn cryptoscope_catalogue::Aead, d: &Descriptor) -> Result<Setup<'a>, String> {
    // dudect's comparison test: one ciphertext, and tags that differ from its valid
    // tag only in the last byte (fixed) or anywhere (random): a compare that stops
    // at the first difference takes longer on the fixed class.
    let info = d.aead.ok_or("AEAD without AEAD information")?;
    let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
    let (nonce, aad) = (
        random(info.nonce_bytes),
        random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
    );
    let mut ct = random(16);
    let mut tag = vec![0u8; info.tag_bytes];
    k.seal(&nonce, &aad, &mut ct, &mut tag).map_err(err)?;
    let mut fixed = tag.clone();
    let last = fixed.len() - 1;
    fixed[last] ^= 0x80;
    let mut out = vec![0u8; ct.len()];
    Ok((
        Classes::new(fixed, pool(info.tag_bytes)),
        "a 16-byte ciphertext with its tag's last byte flipped against random tags".into(),
        Box::new(move |t: &mut [u8]| match k.open(&nonce, &aad, &ct, t, &mut out) {
            Ok(()) => Err("opened a ciphertext with a forged tag".into()),
            Err(_) => Ok(()),
        }),
    ))
}

/// One AEAD operation, ready to be called again and again: a keyed instance (key made
/// from a fixed pattern), a nonce, [`cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES`]
/// of associated data and the message, prepared untimed. `seal:N` seals the N-byte buffer
/// in place (its content changes from call to call, as a chain of encryptions under one
/// nonce: the work is the same); `open:N` opens one valid ciphertext of N bytes, sealed
/// beforehand, into a separate buffer, every call (a failure to open it is an error).
pub struct AeadBench {
    key: Box<dyn cryptoscope_catalogue::AeadKey>,
    open: bool,
    nonce: Vec<u8>,
    aad: Vec<u8>,
    data: Vec<u8>,
    tag: Vec<u8>,
    out: Vec<u8>,
}

impl AeadBench {
    pub fn new(
        a: &dyn cryptoscope_catalogue::Aead,
        op: Operation,
    ) -> Result<AeadBench, cryptoscope_catalogue::OpError> {
        let d = a.descriptor();
        let info = d
            .aead
            .ok_or_else(|| cryptoscope_catalogue::OpError::Unavailable(format!("{} has no AEAD description", d.id)))?;
        let (open, n) = match op {
            Operation::Seal(n) => (false, n as usize),
            Operation::Open(n) => (true, n as usize),
            _ => return Err(unsupported(d, op)),
        };
        let mut key = a.keyed(&pattern(info.key_bytes, 0x3c))?;
        let nonce = pattern(info.nonce_bytes, 0x11);
        let aad = pattern(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES, 0x22);
        let mut data = pattern(n, 0x69);
        let mut tag = vec![0u8; info.tag_bytes];
        if open {
            key.seal(&nonce, &aad, &mut data, &mut tag)?;
        }
        Ok(AeadBench {
            key,
            open,
            nonce,
            aad,
            out: vec![0u8; n],
            data,
            tag,
        })
    }

    /// One call of the operation.
    pub fn run(&mut self) -> Result<(), cryptoscope_catalogue::OpError> {
        let r = if self.open {
            self.key
                .open(&self.nonce, &self.aad, &self.data, &self.tag, &mut self.out)
        } else {
            self.key.seal(&self.nonce, &self.aad, &mut self.data, &mut self.tag)
        };
        std::hint::black_box((&self.data, &self.out, &self.tag));
        r
    }
}
