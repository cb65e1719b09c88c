//! The signature gate must be able to fail: a toy scheme (no real cryptography: a keyed
//! SHA-256 whose "public key" is the key itself) passes the checks a scheme's logic
//! decides, and each deliberate fault is caught by the check that names it.

use super::*;
use crate::descriptor::{KatRef, SigInfo};
use crate::traits::{Signer, Verifier};
use std::path::PathBuf;

fn vectors() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
}

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Every signature verifies.
    AcceptsAll,
    /// Signing writes one byte past the signature buffer.
    Overflow,
    /// Said deterministic, but signs with fresh randomness.
    Randomizes,
    /// Takes a context and ignores it.
    IgnoresContext,
}

/// sig = r ‖ SHA-256(sk ‖ r ‖ ctx ‖ msg), r 16 bytes (random, or zero when deterministic);
/// pk = sk.
struct Toy {
    desc: Descriptor,
    fault: Fault,
}

fn toy(fault: Fault, signing: Signing, context: bool) -> Toy {
    let info = SigInfo {
        signature_bytes: 48,
        variable_length: false,
        signing,
        context,
        scheme: "toy".into(),
        encoding: "toy".into(),
    };
    let desc = Descriptor::signature(
        "ML-DSA-44",
        "toy",
        "broken",
        "0".into(),
        "-".into(),
        [32, 32],
        Randomness::Harness,
        info,
    );
    Toy { desc, fault }
}

impl Toy {
    fn tag(&self, sk: &[u8], r: &[u8], ctx: &[u8], msg: &[u8]) -> [u8; 32] {
        let ctx: &[u8] = if self.fault == Fault::IgnoresContext { &[] } else { ctx };
        Sha256::digest([sk, r, ctx, msg].concat()).into()
    }
}

impl Sig for Toy {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        crate::rng::fill(sk);
        pk.copy_from_slice(sk);
        Ok((32, 32))
    }
    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        Ok(Box::new(ToyKey {
            toy: self,
            key: sk.to_vec(),
        }))
    }
    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        Ok(Box::new(ToyKey {
            toy: self,
            key: pk.to_vec(),
        }))
    }
}

struct ToyKey<'a> {
    toy: &'a Toy,
    key: Vec<u8>,
}

impl Signer for ToyKey<'_> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        let info = self.toy.desc.sig.as_ref().expect("sig info");
        if !ctx.is_empty() && !info.context {
            return Err(OpError::Unavailable("no contexts".into()));
        }
        if ctx.len() > 255 {
            return Err(OpError::failed("sign", "context too long"));
        }
        let mut r = [0u8; 16];
        if info.signing != Signing::Deterministic || self.toy.fault == Fault::Randomizes {
            crate::rng::fill(&mut r);
        }
        let tag = self.toy.tag(&self.key, &r, ctx, msg);
        if self.toy.fault == Fault::Overflow {
            // Writes past the end through the slice's pointer, as a C library would.
            unsafe { *sig.as_mut_ptr().add(sig.len()) = 0 };
        }
        sig[..16].copy_from_slice(&r);
        sig[16..48].copy_from_slice(&tag);
        Ok(48)
    }
}

impl Verifier for ToyKey<'_> {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        if self.toy.fault == Fault::AcceptsAll {
            return Ok(true);
        }
        if sig.len() != 48 {
            return Ok(false);
        }
        Ok(self.toy.tag(&self.key, &sig[..16], ctx, msg)[..] == sig[16..])
    }
}

fn check<'a>(g: &'a SigGate, name: &str) -> &'a Check {
    g.report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check `{name}` in {:?}", g.report.checks))
}

fn gate(t: &Toy) -> SigGate {
    gate_sig(t, &vectors(), KatDepth::Single, 0, None)
}

#[test]
fn a_correct_toy_passes_every_logic_check() {
    let _serial = crate::rng::serial();
    for (signing, context) in [(Signing::Deterministic, false), (Signing::Hedged, true)] {
        let g = gate(&toy(Fault::None, signing, context));
        for name in ["round trip", "tampering", "signing", "context"] {
            assert!(check(&g, name).ok, "{name}: {}", check(&g, name).detail);
        }
    }
}

#[test]
fn a_verifier_that_accepts_everything_fails_tampering() {
    let _serial = crate::rng::serial();
    let g = gate(&toy(Fault::AcceptsAll, Signing::Deterministic, false));
    assert!(!check(&g, "tampering").ok);
    assert!(!g.report.passed());
}

#[test]
fn writing_past_the_signature_is_caught_by_the_canaries() {
    let _serial = crate::rng::serial();
    let g = gate(&toy(Fault::Overflow, Signing::Deterministic, false));
    let c = check(&g, "round trip");
    assert!(!c.ok && c.detail.contains("canar"), "{}", c.detail);
}

#[test]
fn the_signing_kind_must_be_what_the_descriptor_says() {
    let _serial = crate::rng::serial();
    let g = gate(&toy(Fault::Randomizes, Signing::Deterministic, false));
    assert!(!check(&g, "signing").ok);
    // A deterministic scheme said to be hedged is caught the other way round.
    let mut t = toy(Fault::None, Signing::Deterministic, false);
    let det = gate(&t);
    assert!(check(&det, "signing").ok);
    t.desc.sig.as_mut().expect("info").signing = Signing::Hedged;
    // The toy signs deterministically only when its descriptor says so: make it repeat.
    t.fault = Fault::None;
    let g = gate_sig(&Repeats(t), &vectors(), KatDepth::Single, 0, None);
    assert!(!check(&g, "signing").ok);
}

/// A toy whose signer always signs deterministically, whatever its descriptor says.
struct Repeats(Toy);

impl Sig for Repeats {
    fn descriptor(&self) -> &Descriptor {
        &self.0.desc
    }
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.0.keypair(pk, sk)
    }
    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        Ok(Box::new(Fixed(ToyKey {
            toy: &self.0,
            key: sk.to_vec(),
        })))
    }
    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        self.0.verifier(pk)
    }
}

struct Fixed<'a>(ToyKey<'a>);

impl Signer for Fixed<'_> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        let tag = self.0.toy.tag(&self.0.key, &[0u8; 16], ctx, msg);
        sig[..16].fill(0);
        sig[16..48].copy_from_slice(&tag);
        Ok(48)
    }
}

#[test]
fn an_ignored_context_fails_the_context_check() {
    let _serial = crate::rng::serial();
    let g = gate(&toy(Fault::IgnoresContext, Signing::Hedged, true));
    assert!(!check(&g, "context").ok);
}

#[test]
fn a_toy_cannot_reproduce_the_published_kat_digest() {
    let _serial = crate::rng::serial();
    let mut t = toy(Fault::None, Signing::Hedged, true);
    t.desc.kat = Some(KatRef {
        file: "liboqs-0.13.0-sig-kats.json".into(),
        name: "ML-DSA-44".into(),
        prng: KatPrngKind::AesCtrDrbg,
    });
    let g = gate(&t);
    let c = check(&g, "kat");
    assert!(!c.ok && c.detail.contains("mismatch"), "{}", c.detail);
}

#[test]
fn the_kat_text_follows_liboqs_kat_sig() {
    let _serial = crate::rng::serial();
    // The procedure's shape (not its values, which only a real ML-DSA can give): entry 0
    // has a 33-byte message and sm = sig ‖ msg.
    let t = toy(Fault::None, Signing::Hedged, true);
    let (text, kept) = sig_kat_procedure(&t, KatPrngKind::AesCtrDrbg, 2, 2).expect("procedure");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "count = 0");
    assert!(lines[1].starts_with("seed = ") && lines[1].len() == 7 + 96);
    assert_eq!(lines[2], "mlen = 33");
    assert_eq!(lines[6], format!("smlen = {}", 48 + 33));
    assert_eq!(lines[8], "", "a blank line between entries");
    assert_eq!(lines[11], "mlen = 66");
    assert_eq!(kept.len(), 2);
    // The seed of entry 0 is the first 48 bytes of NIST's CTR_DRBG seeded with 0..47, the
    // value every PQCgenKAT_sign .rsp file starts with.
    assert!(lines[1]
        .ends_with("061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1"));
}

#[test]
fn falcon_signed_messages_take_the_nist_layout() {
    let _serial = crate::rng::serial();
    let sig: Vec<u8> = (0..60u8).collect();
    let msg = [0xaa, 0xbb];
    let sm = signed_message("Falcon-512", &sig, &msg).expect("layout");
    assert_eq!(&sm[..2], &[0, 20], "length of header and compressed signature");
    assert_eq!(&sm[2..42], &sig[1..41], "nonce");
    assert_eq!(&sm[42..44], &msg);
    assert_eq!(sm[44], 0x29);
    assert_eq!(&sm[45..], &sig[41..]);
    assert_eq!(
        signed_message("ML-DSA-44", &sig, &msg).expect("plain"),
        [&sig[..], &msg[..]].concat()
    );
}

#[test]
fn cross_checks_verify_the_references_signatures_and_hand_back_their_own() {
    let _serial = crate::rng::serial();
    let t = toy(Fault::None, Signing::Hedged, true);
    let (_, kept) = sig_kat_procedure(&t, KatPrngKind::AesCtrDrbg, 2, 2).expect("procedure");
    let g = gate_sig(&t, &vectors(), KatDepth::Single, 0, Some(&kept));
    assert!(check(&g, "crosscheck").ok, "{}", check(&g, "crosscheck").detail);
    assert_eq!(g.signatures.len(), 2);
    assert!(verify_signatures(&t, &kept, &g.signatures).ok);
    let mut forged = g.signatures.clone();
    forged[1].sig = forged[0].sig.clone();
    assert!(!verify_signatures(&t, &kept, &forged).ok);
    // A subject that rejects the reference's signatures fails.
    let broken = toy(Fault::IgnoresContext, Signing::Hedged, true);
    let mut other = kept.clone();
    other[0].sig = hex::encode([0u8; 48]);
    let g = gate_sig(&broken, &vectors(), KatDepth::Single, 0, Some(&other));
    assert!(!check(&g, "crosscheck").ok);
}
