//! What makes a subject SLH-DSA (FIPS 205) and not SPHINCS+ round 3.1, whose message
//! encoding differs: FIPS 205 data and a second FIPS 205 implementation.
//!
//! - **NIST ACVP key generation**: each test's SK.seed ‖ SK.prf ‖ PK.seed is handed out as
//!   the harness's randomness (FIPS 205 Algorithm 21, slh_keygen, draws them in that order);
//!   the subject must give the test's public and secret keys
//!   (`vectors/sig/slh-dsa-keygen-acvp.json`: the ACVP server's sample vectors).
//! - **Signatures against another implementation**: keys from fixed seeds and a fixed
//!   `opt_rand` (FIPS 205 Algorithm 22, slh_sign, draws n bytes when hedged), a message and a
//!   context; the subject's signature must equal, byte for byte, the one IntegrityChain's
//!   `fips205` crate makes from the same inputs. Signing covers what distinguishes FIPS 205
//!   from SPHINCS+: M′ = 0 ‖ |ctx| ‖ ctx ‖ M and H_msg.
//!
//! Both need the subject's randomness to come from the harness; a subject with its own
//! cannot be checked against FIPS 205 data and fails.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fips205::traits::{KeyGen, SerDes, Signer as _};

use crate::descriptor::Randomness;
use crate::gate::Check;
use crate::rng::{install_kat, KatPrng};
use crate::sig_gate;
use crate::traits::Sig;

/// The ACVP file under `vectors/sig/`.
const ACVP_KEYGEN: &str = "slh-dsa-keygen-acvp.json";

/// n, the security parameter in bytes, of the 128-bit parameter sets.
const N: usize = 16;

/// Randomness handed out from a script; counts every byte asked for.
struct Script {
    bytes: Vec<u8>,
    drawn: Arc<AtomicUsize>,
}

impl KatPrng for Script {
    fn fill(&mut self, out: &mut [u8]) {
        let at = self.drawn.fetch_add(out.len(), Ordering::SeqCst);
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.bytes.get(at + i).copied().unwrap_or(0);
        }
    }
}

/// Runs `f` with `bytes` as the harness's randomness; returns its result and how many bytes
/// it drew.
fn scripted<R>(bytes: Vec<u8>, f: impl FnOnce() -> R) -> (R, usize) {
    let drawn = Arc::new(AtomicUsize::new(0));
    let r = {
        let _g = install_kat(Box::new(Script {
            bytes,
            drawn: drawn.clone(),
        }));
        f()
    };
    (r, drawn.load(Ordering::SeqCst))
}

/// The `fips205` crate's generator interface over fixed bytes.
struct Fixed(Vec<u8>, usize);

impl fips205::RngCore for Fixed {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, out: &mut [u8]) {
        for b in out {
            *b = self.0.get(self.1).copied().unwrap_or(0);
            self.1 += 1;
        }
    }
    fn try_fill_bytes(&mut self, out: &mut [u8]) -> Result<(), fips205::RngError> {
        self.fill_bytes(out);
        Ok(())
    }
}

impl fips205::CryptoRng for Fixed {}

/// The FIPS 205 checks of an SLH-DSA subject.
pub(crate) fn checks(s: &dyn Sig, dir: &Path) -> Vec<Check> {
    if s.descriptor().randomness != Randomness::Harness {
        return vec![Check::fail(
            "fips205",
            "its randomness cannot be injected: no FIPS 205 data can be reproduced, so it cannot be called SLH-DSA",
        )];
    }
    vec![
        match acvp_keygen(s, dir) {
            Ok(d) => Check::pass("fips205 keygen", d),
            Err(e) => Check::fail("fips205 keygen", e),
        },
        match against_fips205(s) {
            Ok(d) => Check::pass("fips205 sign", d),
            Err(e) => Check::fail("fips205 sign", e),
        },
    ]
}

#[derive(serde::Deserialize)]
struct AcvpFile {
    #[serde(rename = "vsId")]
    vs_id: u64,
    #[serde(rename = "testGroups")]
    groups: Vec<AcvpGroup>,
}

#[derive(serde::Deserialize)]
struct AcvpGroup {
    #[serde(rename = "parameterSet")]
    parameter_set: String,
    tests: Vec<AcvpTest>,
}

#[derive(serde::Deserialize)]
struct AcvpTest {
    #[serde(rename = "tcId")]
    tc_id: u64,
    #[serde(rename = "skSeed")]
    sk_seed: String,
    #[serde(rename = "skPrf")]
    sk_prf: String,
    #[serde(rename = "pkSeed")]
    pk_seed: String,
    sk: String,
    pk: String,
}

/// Every ACVP key generation test of the subject's parameter set.
fn acvp_keygen(s: &dyn Sig, dir: &Path) -> Result<String, String> {
    let path = dir.join("sig").join(ACVP_KEYGEN);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: AcvpFile = serde_json::from_str(&text).map_err(|e| format!("malformed {}: {e}", path.display()))?;
    let alg = &s.descriptor().algorithm;
    let tests: Vec<&AcvpTest> = file
        .groups
        .iter()
        .filter(|g| &g.parameter_set == alg)
        .flat_map(|g| &g.tests)
        .collect();
    if tests.is_empty() {
        return Err(format!("{} has no test of {alg}", path.display()));
    }
    let unhex =
        |t: &AcvpTest, v: &str| hex::decode(v).map_err(|_| format!("{ACVP_KEYGEN}: tcId {} is not hex", t.tc_id));
    for t in &tests {
        let seeds = [unhex(t, &t.sk_seed)?, unhex(t, &t.sk_prf)?, unhex(t, &t.pk_seed)?].concat();
        let want = seeds.len();
        let (pair, drawn) = scripted(seeds, || sig_gate::keypair(s));
        let (pk, sk) = pair.map_err(|e| format!("tcId {}: {e}", t.tc_id))?;
        if drawn != want {
            return Err(format!(
                "tcId {}: key generation drew {drawn} bytes of randomness, not SK.seed ‖ SK.prf ‖ PK.seed ({want})",
                t.tc_id
            ));
        }
        if pk != unhex(t, &t.pk)? || sk != unhex(t, &t.sk)? {
            return Err(format!(
                "tcId {}: another key pair than ACVP's from the same seeds",
                t.tc_id
            ));
        }
    }
    Ok(format!(
        "{} NIST ACVP key generation tests reproduced (vsId {}, sig/{ACVP_KEYGEN})",
        tests.len(),
        file.vs_id
    ))
}

/// The `fips205` crate's public key and signature from the same seeds, `opt_rand`, message
/// and context.
fn reference(
    alg: &str,
    seeds: &[[u8; N]; 3],
    opt_rand: &[u8],
    msg: &[u8],
    ctx: &[u8],
) -> Result<(Vec<u8>, Vec<u8>), String> {
    macro_rules! with {
        ($m:ident) => {{
            let (pk, sk) = <fips205::$m::KG as KeyGen>::keygen_from_seed(&seeds[0], &seeds[1], &seeds[2]);
            let sig = sk
                .try_sign_with_rng(&mut Fixed(opt_rand.to_vec(), 0), msg, ctx, true)
                .map_err(|e| format!("fips205: {e}"))?;
            (pk.into_bytes().to_vec(), sig.to_vec())
        }};
    }
    Ok(match alg {
        "SLH-DSA-SHA2-128f" => with!(slh_dsa_sha2_128f),
        "SLH-DSA-SHA2-128s" => with!(slh_dsa_sha2_128s),
        "SLH-DSA-SHAKE-128f" => with!(slh_dsa_shake_128f),
        "SLH-DSA-SHAKE-128s" => with!(slh_dsa_shake_128s),
        other => return Err(format!("no FIPS 205 reference for {other}")),
    })
}

/// Two signatures (an empty and a non-empty context) equal to the reference's.
fn against_fips205(s: &dyn Sig) -> Result<String, String> {
    let alg = s.descriptor().algorithm.clone();
    let cases: [(usize, &[u8]); 2] = [(59, b""), (130, b"cryptoscope fips205 cross-check")];
    for (i, (len, ctx)) in cases.iter().enumerate() {
        let seeds: [[u8; N]; 3] = core::array::from_fn(|k| [(0x11 * (k + 1) + i) as u8; N]);
        let opt_rand = [0xa5 ^ i as u8; N];
        let msg: Vec<u8> = (0..*len).map(|j| (j * 7 + i) as u8).collect();
        let (pair, _) = scripted(seeds.concat(), || sig_gate::keypair(s));
        let (pk, sk) = pair?;
        let (signed, drawn) = scripted(opt_rand.to_vec(), || sig_gate::sign(s, &sk, &msg, ctx));
        let sig = signed.map_err(|e| e.to_string())?;
        if drawn != N {
            return Err(format!("signing drew {drawn} bytes of randomness, not opt_rand's {N}"));
        }
        let (want_pk, want_sig) = reference(&alg, &seeds, &opt_rand, &msg, ctx)?;
        if pk != want_pk {
            return Err(format!(
                "case {i}: another public key than fips205's from the same seeds"
            ));
        }
        if sig != want_sig {
            let at = sig
                .iter()
                .zip(&want_sig)
                .position(|(a, b)| a != b)
                .unwrap_or(sig.len().min(want_sig.len()));
            return Err(format!(
                "case {i} ({len}-byte message, {}-byte context): another signature than fips205's, first difference at byte {at}",
                ctx.len()
            ));
        }
    }
    Ok(
        "2 signatures equal to those of IntegrityChain's fips205 0.5 from the same keys, opt_rand, message and context"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    //! The checks on a subject built over the `fips205` crate itself: the ACVP key
    //! generation vectors (published data) must pass, and each fault — seeds drawn in
    //! another order, a context left out of M′ as SPHINCS+ would, randomness drawn where
    //! FIPS 205 draws none — must fail the check that names it.
    use super::*;
    use crate::descriptor::{Descriptor, SigInfo, Signing};
    use crate::traits::{OpError, Signer, Verifier};
    use fips205::slh_dsa_sha2_128f as p;
    use fips205::traits::Verifier as _;

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        SeedOrder,
        DropsContext,
    }

    struct Wrapped(Descriptor, Fault);

    fn wrapped(fault: Fault) -> Wrapped {
        let info = SigInfo {
            signature_bytes: p::SIG_LEN,
            variable_length: false,
            signing: Signing::Hedged,
            context: true,
            scheme: "test".into(),
            encoding: "test".into(),
        };
        let d = Descriptor::signature(
            "SLH-DSA-SHA2-128f",
            "toy",
            "fips205",
            "0".into(),
            "-".into(),
            [p::PK_LEN, p::SK_LEN],
            Randomness::Harness,
            info,
        );
        Wrapped(d, fault)
    }

    fn draw() -> [u8; N] {
        let mut b = [0u8; N];
        crate::rng::fill(&mut b);
        b
    }

    impl Sig for Wrapped {
        fn descriptor(&self) -> &Descriptor {
            &self.0
        }
        fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
            let (a, b, c) = (draw(), draw(), draw());
            let (seed, prf, pub_seed) = if self.1 == Fault::SeedOrder {
                (c, b, a)
            } else {
                (a, b, c)
            };
            let (k, s) = <p::KG as KeyGen>::keygen_from_seed(&seed, &prf, &pub_seed);
            pk.copy_from_slice(&k.into_bytes());
            sk.copy_from_slice(&s.into_bytes());
            Ok((p::PK_LEN, p::SK_LEN))
        }
        fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
            Ok(Box::new(Key(sk.to_vec(), self.1)))
        }
        fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
            Ok(Box::new(Key(pk.to_vec(), self.1)))
        }
    }

    struct Key(Vec<u8>, Fault);

    impl Signer for Key {
        fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
            let sk = p::PrivateKey::try_from_bytes(self.0.clone().try_into().expect("length")).expect("key");
            let ctx: &[u8] = if self.1 == Fault::DropsContext { &[] } else { ctx };
            let s = sk
                .try_sign_with_rng(&mut Fixed(draw().to_vec(), 0), msg, ctx, true)
                .expect("sign");
            sig.copy_from_slice(&s);
            Ok(p::SIG_LEN)
        }
    }

    impl Verifier for Key {
        fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
            let pk = p::PublicKey::try_from_bytes(self.0.clone().try_into().expect("length")).expect("key");
            Ok(sig.try_into().is_ok_and(|s| pk.verify(msg, &s, ctx)))
        }
    }

    fn vectors() -> std::path::PathBuf {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    fn check(c: &[Check], name: &str) -> Check {
        c.iter().find(|x| x.name == name).cloned().expect(name)
    }

    #[test]
    fn a_fips_205_signer_passes_and_each_fault_fails_its_check() {
        let _serial = crate::rng::serial();
        let ok = checks(&wrapped(Fault::None), &vectors());
        assert!(check(&ok, "fips205 keygen").ok, "{ok:?}");
        assert!(
            check(&ok, "fips205 keygen").detail.starts_with("10 NIST ACVP"),
            "{ok:?}"
        );
        assert!(check(&ok, "fips205 sign").ok, "{ok:?}");
        let order = checks(&wrapped(Fault::SeedOrder), &vectors());
        assert!(!check(&order, "fips205 keygen").ok, "{order:?}");
        let ctx = checks(&wrapped(Fault::DropsContext), &vectors());
        let c = check(&ctx, "fips205 sign");
        assert!(!c.ok && c.detail.contains("case 1"), "{c:?}");
        let mut internal = wrapped(Fault::None);
        internal.0.randomness = Randomness::Internal;
        assert!(!checks(&internal, &vectors())[0].ok);
    }
}
