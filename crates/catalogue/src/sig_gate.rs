//! The signature gate: correct before fast.
//!
//! - **Known answers.** A subject that draws its randomness through the harness reproduces
//!   liboqs's signature KAT procedure (`tests/kat_sig.c`: per entry a 48-byte seed and a
//!   message of 33·(count+1) bytes from the outer NIST CTR_DRBG, then key generation and
//!   signing under a DRBG seeded with that seed; `sm` is signature ‖ message, or Falcon's
//!   own layout) and must match the published SHA-256 digest of its output.
//! - **Cross-check.** A subject with its own randomness verifies the signatures of a subject
//!   that matched its digest, and signs the same messages for that subject to verify.
//! - **Every subject:** a round trip with canaries around every buffer; a flipped bit in the
//!   message or the signature, a truncated signature and another key's signature rejected;
//!   two key pairs that differ; signing as deterministic or randomized as the descriptor
//!   says; context strings bound (where the scheme has them) or refused (where it has not);
//!   and the Wycheproof files of the algorithm in `vectors/wycheproof/`.
//! - **SLH-DSA** (FIPS 205): NIST's ACVP key generation vectors and signatures equal to a
//!   second FIPS 205 implementation's (`fips205_gate`), so that SPHINCS+ never passes for it.
//!
//! Expected values come only from vector files, never from the code under test.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::Path;

use crate::descriptor::{Descriptor, KatPrngKind, Randomness, Signing};
use crate::gate::{canaries, Check, GateReport, Guarded, KatDepth};
use crate::rng::{install_kat, kat_prng};
use crate::traits::{OpError, Sig};
use crate::vectors;

/// The message of the gate's round trip: 59 bytes, as the measured `sign:59`.
const ROUND_TRIP_BYTES: usize = 59;

/// One signed message, kept so that other implementations can be cross-checked on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SigEntry {
    pub count: usize,
    pub pk: String,
    pub msg: String,
    pub sig: String,
}

/// What the signature gate produced.
#[derive(Debug, Default)]
pub struct SigGate {
    pub report: GateReport,
    /// KAT entries kept (when the digest matched) for cross-checking other subjects.
    pub entries: Vec<SigEntry>,
    /// This subject's own signatures of a reference's messages, for the reference to verify.
    pub signatures: Vec<SigEntry>,
}

/// Number of entries the published `all` digest covers (liboqs's `max_kats`: 100).
pub fn sig_kat_entries(depth: KatDepth) -> usize {
    match depth {
        KatDepth::Single => 1,
        KatDepth::All => 100,
    }
}

/// A key pair into guarded buffers of the descriptor's sizes, cut to what was written.
pub(crate) fn keypair(s: &dyn Sig) -> Result<(Vec<u8>, Vec<u8>), String> {
    let d = s.descriptor();
    let (mut pk, mut sk) = (Guarded::new(d.sizes.public_key), Guarded::new(d.sizes.secret_key));
    let r = s.keypair(pk.get_mut(), sk.get_mut());
    canaries("keypair", &[("pk", &pk), ("sk", &sk)])?;
    let (np, ns) = r.map_err(|e| e.to_string())?;
    if np > pk.get().len() || ns > sk.get().len() || np == 0 || ns == 0 {
        return Err(format!(
            "keypair reported {np} and {ns} bytes for buffers of {} and {}",
            pk.get().len(),
            sk.get().len()
        ));
    }
    Ok((pk.get()[..np].to_vec(), sk.get()[..ns].to_vec()))
}

/// Signs `msg` under `ctx` with `sk` into a guarded buffer; the signature, cut to its length.
pub(crate) fn sign(s: &dyn Sig, sk: &[u8], msg: &[u8], ctx: &[u8]) -> Result<Vec<u8>, OpError> {
    let d = s.descriptor();
    let (gsk, gmsg, gctx) = (Guarded::from(sk), Guarded::from(msg), Guarded::from(ctx));
    let mut sig = Guarded::new(d.sizes.ciphertext);
    let r = s
        .signer(gsk.get())
        .and_then(|mut signer| signer.sign(sig.get_mut(), gmsg.get(), gctx.get()));
    canaries("sign", &[("sig", &sig), ("sk", &gsk), ("msg", &gmsg), ("ctx", &gctx)])
        .map_err(|e| OpError::failed("sign", e))?;
    let n = r?;
    if n == 0 || n > sig.get().len() {
        return Err(OpError::failed(
            "sign",
            format!("reported a signature of {n} bytes for a buffer of {}", sig.get().len()),
        ));
    }
    Ok(sig.get()[..n].to_vec())
}

/// Whether `sig` verifies for `msg` under `ctx` and `pk`; a key the library refuses is a
/// rejection, canaries broken an error.
pub(crate) fn verify(s: &dyn Sig, pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, String> {
    let (gpk, gmsg, gctx, gsig) = (
        Guarded::from(pk),
        Guarded::from(msg),
        Guarded::from(ctx),
        Guarded::from(sig),
    );
    let r = match s.verifier(gpk.get()) {
        Ok(mut v) => v.verify(gmsg.get(), gctx.get(), gsig.get()),
        Err(OpError::Unavailable(e)) => Err(OpError::Unavailable(e)),
        Err(_) => Ok(false),
    };
    canaries(
        "verify",
        &[("pk", &gpk), ("msg", &gmsg), ("ctx", &gctx), ("sig", &gsig)],
    )?;
    r.map_err(|e| e.to_string())
}

/// `sm` as liboqs's `kat_sig.c` forms it: Falcon's compressed signatures in the NIST
/// submission's layout (length, nonce, message, header byte, compressed signature), CROSS's
/// and UOV's message ‖ signature (their submissions' order), every other scheme's
/// signature ‖ message.
fn signed_message(algorithm: &str, sig: &[u8], msg: &[u8]) -> Result<Vec<u8>, String> {
    let header = match algorithm {
        "Falcon-512" => Some(0x29u8),
        "Falcon-1024" => Some(0x2a),
        _ => None,
    };
    if algorithm.starts_with("cross-") || algorithm.starts_with("OV-") {
        return Ok([msg, sig].concat());
    }
    Ok(match header {
        Some(h) => {
            if sig.len() < 42 {
                return Err(format!("a Falcon signature of {} bytes", sig.len()));
            }
            let len = u16::try_from(sig.len() - 40).map_err(|_| "a Falcon signature too long".to_string())?;
            let mut sm = Vec::with_capacity(2 + sig.len() + msg.len());
            sm.extend_from_slice(&len.to_be_bytes());
            sm.extend_from_slice(&sig[1..41]);
            sm.extend_from_slice(msg);
            sm.push(h);
            sm.extend_from_slice(&sig[41..]);
            sm
        }
        None => [sig, msg].concat(),
    })
}

/// Runs liboqs's signature KAT procedure for `n` entries; returns its text and the first
/// `keep` entries.
pub fn sig_kat_procedure(
    s: &dyn Sig,
    prng: KatPrngKind,
    n: usize,
    keep: usize,
) -> Result<(String, Vec<SigEntry>), String> {
    let d = s.descriptor();
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut outer = kat_prng(prng, &entropy);
    let mut text = String::new();
    let mut kept = Vec::new();
    for count in 0..n {
        let mut seed = [0u8; 48];
        outer.fill(&mut seed);
        let mut msg = vec![0u8; 33 * (count + 1)];
        outer.fill(&mut msg);
        let (pk, sk, sig) = {
            let _g = install_kat(kat_prng(prng, &seed));
            let (pk, sk) = keypair(s).map_err(|e| format!("KAT count {count}: {e}"))?;
            let sig = sign(s, &sk, &msg, &[]).map_err(|e| format!("KAT count {count}: {e}"))?;
            (pk, sk, sig)
        };
        if !verify(s, &pk, &msg, &[], &sig).map_err(|e| format!("KAT count {count}: {e}"))? {
            return Err(format!("KAT count {count}: the signature does not verify"));
        }
        let sm = signed_message(&d.algorithm, &sig, &msg)?;
        if count > 0 {
            text.push('\n');
        }
        let _ = writeln!(text, "count = {count}");
        let _ = writeln!(text, "seed = {}", hex::encode_upper(seed));
        let _ = writeln!(text, "mlen = {}", msg.len());
        let _ = writeln!(text, "msg = {}", hex::encode_upper(&msg));
        let _ = writeln!(text, "pk = {}", hex::encode_upper(&pk));
        let _ = writeln!(text, "sk = {}", hex::encode_upper(&sk));
        let _ = writeln!(text, "smlen = {}", sm.len());
        let _ = writeln!(text, "sm = {}", hex::encode_upper(&sm));
        if count < keep {
            kept.push(SigEntry {
                count,
                pk: hex::encode(&pk),
                msg: hex::encode(&msg),
                sig: hex::encode(&sig),
            });
        }
    }
    Ok((text, kept))
}

/// Gates a signature subject. `keep` KAT entries are returned for cross-checks if the
/// digest matches; `reference` gives the entries of a subject that matched its digest, for
/// a subject with its own randomness.
pub fn gate_sig(
    s: &dyn Sig,
    vectors_dir: &Path,
    depth: KatDepth,
    keep: usize,
    reference: Option<&[SigEntry]>,
) -> SigGate {
    let d = s.descriptor();
    let mut out = SigGate::default();
    match (d.randomness, &d.kat, reference) {
        (Randomness::Harness, Some(kat), _) => {
            let check = kat_check(s, vectors_dir, kat, depth, keep, &mut out.entries);
            out.report.checks.push(check);
        }
        (_, _, Some(entries)) => {
            let (check, signed) = crosscheck(s, entries);
            out.report.checks.push(check);
            out.signatures = signed;
        }
        _ => {}
    }
    match keypair(s) {
        Err(e) => out.report.checks.push(Check::fail("round trip", e)),
        Ok(pair) => {
            for (name, r) in [
                ("round trip", round_trip(s, &pair)),
                ("tampering", tampering(s, &pair)),
                ("signing", signing_kind(s, &pair)),
                ("context", context(s, &pair)),
            ] {
                out.report.checks.push(match r {
                    Ok(detail) => Check::pass(name, detail),
                    Err(e) => Check::fail(name, e),
                });
            }
        }
    }
    if d.algorithm.starts_with("SLH-DSA") {
        out.report.checks.extend(crate::fips205_gate::checks(s, vectors_dir));
    }
    let (checks, input_check) = wycheproof(s, vectors_dir);
    out.report.checks.extend(checks);
    out.report.input_check = input_check;
    out
}

fn kat_check(
    s: &dyn Sig,
    dir: &Path,
    kat: &crate::descriptor::KatRef,
    depth: KatDepth,
    keep: usize,
    kept_out: &mut Vec<SigEntry>,
) -> Check {
    let expected = match vectors::kat_digest_in(dir, "sig", &kat.file, &kat.name) {
        Ok(e) => e,
        Err(e) => return Check::fail("kat", e.to_string()),
    };
    let n = sig_kat_entries(depth);
    match sig_kat_procedure(s, kat.prng, n, keep) {
        Err(e) => Check::fail("kat", e),
        Ok((text, kept)) => {
            let got = hex::encode(Sha256::digest(text.as_bytes()));
            let want = match depth {
                KatDepth::Single => &expected.single,
                KatDepth::All => &expected.all,
            };
            if got.eq_ignore_ascii_case(want) {
                *kept_out = kept;
                let entries = if n == 1 { "entry" } else { "entries" };
                Check::pass(
                    "kat",
                    format!("KAT digest matches {} in sig/{} ({n} {entries})", kat.name, kat.file),
                )
            } else {
                Check::fail(
                    "kat",
                    format!(
                        "KAT digest mismatch for {} in sig/{} ({n} entries): got {}…, expected {}…",
                        kat.name,
                        kat.file,
                        &got[..16],
                        &want[..16]
                    ),
                )
            }
        }
    }
}

/// Verifies the reference's signatures (and rejects them with a flipped bit); signs the
/// reference's messages with a key of this subject's own, for the reference to verify.
fn crosscheck(s: &dyn Sig, entries: &[SigEntry]) -> (Check, Vec<SigEntry>) {
    let mut signed = Vec::new();
    let r = (|| -> Result<String, String> {
        if entries.is_empty() {
            return Err("the reference kept no entries".into());
        }
        let (pk, sk) = keypair(s)?;
        for e in entries {
            let unhex =
                |f: &str, v: &str| hex::decode(v).map_err(|_| format!("reference entry {}: `{f}` is not hex", e.count));
            let (rpk, msg, mut rsig) = (unhex("pk", &e.pk)?, unhex("msg", &e.msg)?, unhex("sig", &e.sig)?);
            if !verify(s, &rpk, &msg, &[], &rsig)? {
                return Err(format!("rejects the reference's signature of KAT count {}", e.count));
            }
            rsig[0] ^= 1;
            if verify(s, &rpk, &msg, &[], &rsig)? {
                return Err(format!(
                    "accepts the reference's signature of KAT count {} with a flipped bit",
                    e.count
                ));
            }
            let sig = sign(s, &sk, &msg, &[]).map_err(|e| e.to_string())?;
            signed.push(SigEntry {
                count: e.count,
                pk: hex::encode(&pk),
                msg: e.msg.clone(),
                sig: hex::encode(sig),
            });
        }
        Ok(format!("verifies the reference's {} KAT signatures", entries.len()))
    })();
    match r {
        Ok(d) => (Check::pass("crosscheck", d), signed),
        Err(e) => (Check::fail("crosscheck", e), Vec::new()),
    }
}

/// A reference's check of the signatures another subject made of its messages.
pub fn verify_signatures(s: &dyn Sig, entries: &[SigEntry], signed: &[SigEntry]) -> Check {
    let r = (|| -> Result<String, String> {
        if signed.len() != entries.len() {
            return Err(format!(
                "{} signatures for {} reference messages",
                signed.len(),
                entries.len()
            ));
        }
        for (e, x) in entries.iter().zip(signed) {
            let unhex =
                |f: &str, v: &str| hex::decode(v).map_err(|_| format!("signature {}: `{f}` is not hex", x.count));
            if x.msg != e.msg {
                return Err(format!("signature {} is of another message", x.count));
            }
            let (pk, msg, sig) = (unhex("pk", &x.pk)?, unhex("msg", &x.msg)?, unhex("sig", &x.sig)?);
            if !verify(s, &pk, &msg, &[], &sig)? {
                return Err(format!("the reference rejects its signature of KAT count {}", x.count));
            }
        }
        Ok(format!("its {} signatures verify with the reference", signed.len()))
    })();
    match r {
        Ok(d) => Check::pass("crosscheck", d),
        Err(e) => Check::fail("crosscheck", e),
    }
}

fn message(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

fn round_trip(s: &dyn Sig, (pk, sk): &(Vec<u8>, Vec<u8>)) -> Result<String, String> {
    let d = s.descriptor();
    let info = sig_info(d)?;
    let msg = message(ROUND_TRIP_BYTES, 0x3c);
    let sig = sign(s, sk, &msg, &[]).map_err(|e| e.to_string())?;
    if !info.variable_length && sig.len() != info.signature_bytes {
        return Err(format!(
            "a signature of {} bytes; the descriptor says {}",
            sig.len(),
            info.signature_bytes
        ));
    }
    if !verify(s, pk, &msg, &[], &sig)? {
        return Err("its own signature does not verify".into());
    }
    let (pk2, _) = keypair(s)?;
    if pk2 == *pk {
        return Err("two key generations gave the same public key".into());
    }
    Ok(format!(
        "sign and verify a {ROUND_TRIP_BYTES}-byte message ({} bytes signed), two key pairs differ",
        sig.len()
    ))
}

fn tampering(s: &dyn Sig, (pk, sk): &(Vec<u8>, Vec<u8>)) -> Result<String, String> {
    let msg = message(ROUND_TRIP_BYTES, 0x5a);
    let sig = sign(s, sk, &msg, &[]).map_err(|e| e.to_string())?;
    let mut tried = 0;
    for i in [0, msg.len() / 2, msg.len() - 1] {
        let mut m = msg.clone();
        m[i] ^= 0x01;
        tried += 1;
        if verify(s, pk, &m, &[], &sig)? {
            return Err(format!("accepts the signature for the message with byte {i} changed"));
        }
    }
    for i in [0, sig.len() / 3, sig.len() / 2, sig.len() - 2] {
        let mut x = sig.clone();
        x[i] ^= 0x04;
        tried += 1;
        if verify(s, pk, &msg, &[], &x)? {
            return Err(format!("accepts the signature with bit 2 of byte {i} flipped"));
        }
    }
    tried += 2;
    if verify(s, pk, &msg, &[], &sig[..sig.len() - 1])? {
        return Err("accepts the signature without its last byte".into());
    }
    if verify(s, pk, &msg, &[], &[])? {
        return Err("accepts an empty signature".into());
    }
    let (pk2, _) = keypair(s)?;
    tried += 1;
    if verify(s, &pk2, &msg, &[], &sig)? {
        return Err("accepts the signature under another key".into());
    }
    Ok(format!("{tried} altered messages, signatures and keys rejected"))
}

/// Signs one message twice: deterministic schemes must repeat themselves, randomized and
/// hedged ones must not.
fn signing_kind(s: &dyn Sig, (_, sk): &(Vec<u8>, Vec<u8>)) -> Result<String, String> {
    let info = sig_info(s.descriptor())?;
    let msg = message(ROUND_TRIP_BYTES, 0x77);
    let a = sign(s, sk, &msg, &[]).map_err(|e| e.to_string())?;
    let b = sign(s, sk, &msg, &[]).map_err(|e| e.to_string())?;
    match (info.signing, a == b) {
        (Signing::Deterministic, true) => {
            Ok("deterministic: the same message signed twice gives the same signature".into())
        }
        (Signing::Deterministic, false) => {
            Err("said to be deterministic, but one message signed twice gave two signatures".into())
        }
        (kind, false) => Ok(format!(
            "{}: the same message signed twice gives two signatures",
            kind.as_str()
        )),
        (kind, true) => Err(format!(
            "said to be {}, but one message signed twice gave the same signature",
            kind.as_str()
        )),
    }
}

/// Schemes with contexts bind them; schemes without refuse a non-empty one rather than
/// ignore it.
fn context(s: &dyn Sig, (pk, sk): &(Vec<u8>, Vec<u8>)) -> Result<String, String> {
    let info = sig_info(s.descriptor())?;
    let msg = message(ROUND_TRIP_BYTES, 0x11);
    let ctx = b"cryptoscope gate";
    let signed = sign(s, sk, &msg, ctx);
    if !info.context {
        return match signed {
            Err(OpError::Unavailable(_)) => Ok("no contexts: a non-empty one is refused".into()),
            Err(e) => Err(format!(
                "a non-empty context should be refused as unavailable, not: {e}"
            )),
            Ok(_) => Err("the scheme has no contexts, yet signing with one succeeded".into()),
        };
    }
    let sig = signed.map_err(|e| e.to_string())?;
    if !verify(s, pk, &msg, ctx, &sig)? {
        return Err("a signature with a context does not verify with it".into());
    }
    if verify(s, pk, &msg, &[], &sig)? || verify(s, pk, &msg, b"cryptoscope gatf", &sig)? {
        return Err("a signature with a context verifies under another context".into());
    }
    let long = vec![0u8; 256];
    if sign(s, sk, &msg, &long).is_ok() {
        return Err("signs with a 256-byte context (at most 255 bytes)".into());
    }
    Ok("a context is bound to the signature; 256 bytes refused".into())
}

fn sig_info(d: &Descriptor) -> Result<&crate::descriptor::SigInfo, String> {
    d.sig
        .as_ref()
        .ok_or_else(|| format!("{} has no signature description", d.id))
}

/// The repository's Wycheproof files for an algorithm, under `vectors/wycheproof/`: for
/// ML-DSA, the three schemas (seeded signing, signing with expanded keys, verification)
/// at every level.
pub fn wycheproof_files(algorithm: &str) -> Vec<String> {
    let mldsa = |level: &str| {
        ["sign_seed", "sign_noseed", "verify"]
            .iter()
            .map(|schema| format!("mldsa_{level}_{schema}_test.json"))
            .collect()
    };
    match algorithm {
        "ML-DSA-44" => mldsa("44"),
        "ML-DSA-65" => mldsa("65"),
        "ML-DSA-87" => mldsa("87"),
        "Ed25519" => vec!["ed25519_test.json".into()],
        "ECDSA-P256-SHA256" => vec!["ecdsa_secp256r1_sha256_test.json".into()],
        _ => Vec::new(),
    }
}

/// The Wycheproof flag of tests that present a malformed secret key (ML-DSA's s1 or s2 out
/// of range). FIPS 204 leaves checking a secret key's encoding to the implementation (the
/// key comes from its own key generation), so, like an ML-KEM library that leaves the
/// encapsulation key's modulus check to its caller, a signer that does not refuse one is
/// still correct: its answer is recorded beside the gate ([`GateReport::input_check`]).
const INVALID_SECRET_KEY: &str = "InvalidPrivateKey";

/// One check per Wycheproof file of the algorithm: every test passes, or the check fails
/// naming the tests that did not; and the verdict on malformed secret keys, where a file
/// presents them.
fn wycheproof(s: &dyn Sig, dir: &Path) -> (Vec<Check>, Option<String>) {
    use crate::wycheproof_gate::{file_check, flagged, Beside};
    let d = s.descriptor();
    let mut input_check = None;
    let checks = wycheproof_files(&d.algorithm)
        .iter()
        .map(|f| {
            let path = dir.join("wycheproof").join(f);
            let name = format!("wycheproof {f}");
            let file = match crate::external::load(&path) {
                Ok(x) => x,
                Err(e) => return Check::fail(&name, e.to_string()),
            };
            let Some(o) = crate::external::run_sig(s, &file) else {
                return Check::fail(&name, format!("{f} is not a signature file"));
            };
            // Only signing presents secret keys (a verification file's tests flagged so are
            // valid signatures made with such keys).
            let ids = match file {
                crate::external::External::MldsaSign(_) => flagged(&file, INVALID_SECRET_KEY),
                _ => Default::default(),
            };
            let beside = Beside {
                ids,
                what: "malformed secret keys",
                why: "s1 or s2 out of range; FIPS 204 leaves that check to the implementation",
            };
            let (check, validated) = file_check(f, &file, &o, &beside);
            if let Some(ok) = validated {
                input_check = Some(if ok { "sk checked" } else { "does not validate sk" }.to_string());
            }
            check
        })
        .collect();
    (checks, input_check)
}

#[cfg(test)]
#[path = "sig_gate_tests.rs"]
mod tests;
