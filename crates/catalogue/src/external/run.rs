//! Running one implementation through every test of a parsed file: what passed, failed and
//! had to be skipped, with the ids of the failures.

use super::*;

pub use cryptoscope_model::events::{FileOutcome, TestFailure};

/// Counts with the reasons for skips gathered into notes.
#[derive(Default)]
pub(super) struct Tally {
    out: FileOutcome,
    skips: BTreeMap<String, usize>,
    acceptable_rejected: usize,
}

impl Tally {
    pub(super) fn pass(&mut self, expect: Expect, rejected: bool) {
        if expect == Expect::Acceptable {
            self.out.acceptable += 1;
            if rejected {
                self.acceptable_rejected += 1;
            }
        } else {
            self.out.passed += 1;
        }
    }
    pub(super) fn fail(&mut self, id: impl ToString, detail: impl Into<String>) {
        self.out.failed += 1;
        self.out.failures.push(TestFailure {
            id: id.to_string(),
            detail: detail.into(),
        });
    }
    pub(super) fn skip(&mut self, why: &str) {
        self.out.skipped += 1;
        *self.skips.entry(why.to_string()).or_default() += 1;
    }
    /// A line for the outcome's notes (what was checked only in part, and why).
    pub(super) fn note(&mut self, line: impl Into<String>) {
        self.out.notes.push(line.into());
    }
    pub(super) fn finish(mut self) -> FileOutcome {
        if self.out.acceptable > 0 {
            self.out.notes.push(format!(
                "{} acceptable tests: {} accepted with the expected result, {} rejected",
                self.out.acceptable,
                self.out.acceptable - self.acceptable_rejected,
                self.acceptable_rejected
            ));
        }
        for (why, n) in self.skips {
            self.out.notes.push(format!("{n} skipped: {why}"));
        }
        self.out
    }
}

/// One message's digest in one update, finished into a buffer with canaries around it.
pub(super) fn guarded_digest(h: &dyn Hash, msg: &[u8]) -> Result<Vec<u8>, String> {
    let input = Guarded::from(msg);
    let mut out = Guarded::new(h.descriptor().sizes.shared_secret);
    let mut s = h.start();
    s.update(input.get());
    s.finish(out.get_mut());
    canaries("finish", &[("digest", &out), ("message", &input)])?;
    Ok(out.get().to_vec())
}

/// Puts a hash implementation through a CAVP file's records (one update, then again in
/// 7-byte pieces). Published outputs shorter than the digest (SHAKE's) are compared as
/// prefixes; bit-level records are skipped.
pub fn run_hash(h: &dyn Hash, records: &[HashRecord]) -> FileOutcome {
    let n = h.descriptor().sizes.shared_secret;
    let mut t = Tally::default();
    let mut prefix = 0;
    for r in records {
        if r.bit_level() {
            t.skip("`Len` is not a multiple of 8 (bit-level input; the Hash trait takes whole bytes)");
            continue;
        }
        if r.digest.len() > n {
            t.skip(&format!(
                "the published output is longer than the subject's {n}-byte digest"
            ));
            continue;
        }
        let k = r.digest.len();
        if k < n {
            prefix += 1;
        }
        let whole = match guarded_digest(h, &r.message) {
            Ok(w) => w,
            Err(e) => {
                t.fail(r.id, format!("Len = {}: {e}", r.message.len() * 8));
                continue;
            }
        };
        if whole[..k] != r.digest[..] {
            t.fail(
                r.id,
                format!(
                    "Len = {}: got {}, expected {}",
                    r.message.len() * 8,
                    hex::encode(&whole[..k]),
                    hex::encode(&r.digest)
                ),
            );
        } else if hash_of(h, &r.message, 7)[..k] != r.digest[..] {
            t.fail(
                r.id,
                format!(
                    "Len = {}: right in one update, wrong in 7-byte pieces",
                    r.message.len() * 8
                ),
            );
        } else {
            t.pass(Expect::Valid, false);
        }
    }
    if prefix > 0 {
        t.out.notes.push(format!(
            "{prefix} published outputs are shorter than the {n}-byte digest and were compared as prefixes"
        ));
    }
    t.finish()
}

pub(super) fn differing(pairs: &[(&str, &[u8], &[u8])]) -> Vec<String> {
    pairs
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(n, _, _)| n.to_string())
        .collect()
}

/// Reproduces NIST KEM KAT entries: with injectable randomness, keypair and encapsulation
/// under the KAT generator seeded from `seed` (the subject's own KAT generator, else NIST's
/// AES-256 CTR_DRBG) must give `pk`, `sk`, `ct` and `ss`; every subject must decapsulate
/// `ct` with `sk` to `ss`. Without injectable randomness only the latter is possible.
pub fn run_kem_kat(kem: &dyn Kem, records: &[KemRecord]) -> FileOutcome {
    let d = kem.descriptor();
    let harness = d.randomness == Randomness::Harness;
    let prng = d.kat.as_ref().map_or(KatPrngKind::AesCtrDrbg, |k| k.prng);
    let mut t = Tally::default();
    for r in records {
        let sizes = [
            ("pk", r.pk.len(), d.sizes.public_key),
            ("sk", r.sk.len(), d.sizes.secret_key),
            ("ct", r.ct.len(), d.sizes.ciphertext),
            ("ss", r.ss.len(), d.sizes.shared_secret),
        ];
        if let Some((name, got, want)) = sizes.iter().find(|(_, g, w)| g != w) {
            t.fail(
                &r.count,
                format!("`{name}` has {got} bytes, {} uses {want}", d.algorithm),
            );
            continue;
        }
        if harness {
            let mut b = KemBufs::new(d);
            let made = {
                let _g = install_kat(kat_prng(prng, &r.seed));
                keypair_encaps(kem, &mut b)
            };
            if let Err(e) = made {
                t.fail(&r.count, e);
                continue;
            }
            let bad = differing(&[
                ("pk", b.pk.get(), &r.pk),
                ("sk", b.sk.get(), &r.sk),
                ("ct", b.ct.get(), &r.ct),
                ("ss", b.ss.get(), &r.ss),
            ]);
            if !bad.is_empty() {
                t.fail(
                    &r.count,
                    format!("from this seed the subject gives a different {}", bad.join(", ")),
                );
                continue;
            }
        }
        match decaps(kem, &r.sk, &r.ct, d.sizes.shared_secret) {
            Ok(ss) if ss == r.ss => t.pass(Expect::Valid, false),
            Ok(ss) => t.fail(
                &r.count,
                format!(
                    "decaps(sk, ct) gives {}, the file's ss is {}",
                    hex::encode(ss),
                    hex::encode(&r.ss)
                ),
            ),
            Err(e) => t.fail(&r.count, e),
        }
    }
    if !harness {
        t.out.notes.push(
            "randomness not injectable: only decaps(sk, ct) = ss was checked, not key generation or encapsulation"
                .into(),
        );
    }
    t.finish()
}

/// The private scalar as the Kex trait takes it: X25519's 32 bytes as they are; a P-256
/// scalar (Wycheproof writes it as a minimal signed big-endian integer) left-padded or
/// stripped of leading zeros to 32 bytes. `None` if it does not fit.
pub(super) fn private_scalar(p256: bool, raw: &[u8]) -> Option<Vec<u8>> {
    if !p256 {
        return (raw.len() == 32).then(|| raw.to_vec());
    }
    let digits: Vec<u8> = raw.iter().copied().skip_while(|&b| b == 0).collect();
    if digits.len() > 32 {
        return None;
    }
    let mut out = vec![0u8; 32 - digits.len()];
    out.extend(digits);
    Some(out)
}

/// One Diffie–Hellman test's verdict from what the subject did with the peer's `what`:
/// `valid` must give the shared secret, `invalid` must be rejected (a canary overwritten is
/// never a rejection), `acceptable` may be either (a secret given must still be the file's).
fn judge_dh(t: &mut Tally, x: &DhTest, got: Result<Vec<u8>, String>, what: &str) {
    match (got, x.result) {
        (Ok(ss), Expect::Valid | Expect::Acceptable) if ss == x.shared => t.pass(x.result, false),
        (Ok(ss), Expect::Valid | Expect::Acceptable) => t.fail(
            x.tc_id,
            format!("shared secret {}, expected {}", hex::encode(ss), hex::encode(&x.shared)),
        ),
        (Ok(ss), Expect::Invalid) => t.fail(
            x.tc_id,
            format!(
                "accepted an invalid {what} ({} bytes) and derived {}",
                x.public.len(),
                hex::encode(ss)
            ),
        ),
        (Err(e), _) if e.contains("canary") => t.fail(x.tc_id, e),
        (Err(e), Expect::Valid) => t.fail(x.tc_id, format!("rejected a valid test: {e}")),
        (Err(_), expect) => t.pass(expect, true),
    }
}

/// Runs Wycheproof X25519 or P-256 (uncompressed-point) ECDH tests: `valid` must give the
/// shared secret, `invalid` must be rejected, `acceptable` may be either (a value given
/// must still be the file's).
pub fn run_dh(kex: &dyn Kex, tests: &[DhTest]) -> FileOutcome {
    let p256 = kex.descriptor().algorithm == "P-256";
    let mut t = Tally::default();
    for x in tests {
        let Some(sk) = private_scalar(p256, &x.private) else {
            t.skip("the private key does not fit the subject's 32-byte scalar");
            continue;
        };
        judge_dh(&mut t, x, exchange(kex, &sk, &x.public), "public key");
    }
    t.finish()
}

/// One exchange with the peer key as a DER SubjectPublicKeyInfo, in buffers with canaries
/// around them. `Ok(None)`: the library reads no SubjectPublicKeyInfo (the reason).
fn spki_exchange(kex: &dyn Kex, sk: &[u8], der: &[u8]) -> Result<Result<Vec<u8>, String>, String> {
    let mut ex = match kex.exchanger(sk) {
        Ok(ex) => ex,
        Err(e) => return Ok(Err(format!("the private key was refused: {e}"))),
    };
    let peer = Guarded::from(der);
    let mut ss = Guarded::new(kex.descriptor().sizes.shared_secret);
    let r = ex.exchange_spki(ss.get_mut(), peer.get());
    if let Err(e) = canaries("exchange", &[("ss", &ss), ("peer", &peer)]) {
        return Ok(Err(e));
    }
    match r {
        Ok(()) => Ok(Ok(ss.get().to_vec())),
        Err(crate::traits::OpError::Unavailable(why)) => Err(why),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// Runs Wycheproof `ecdh_test_schema` tests (P-256): the peer's key is a DER
/// SubjectPublicKeyInfo, read by the library's own decoder, so that invalid encodings,
/// keys on other curves, explicit curve parameters and points off the curve all reach the
/// library. `valid` must give the shared secret, `invalid` must be rejected, `acceptable`
/// may be either (a secret given must still be the file's).
pub fn run_dh_spki(kex: &dyn Kex, tests: &[DhTest]) -> FileOutcome {
    let mut t = Tally::default();
    for x in tests {
        let Some(sk) = private_scalar(true, &x.private) else {
            t.skip("the private key does not fit the subject's 32-byte scalar");
            continue;
        };
        let got = match spki_exchange(kex, &sk, &x.public) {
            Ok(r) => r,
            Err(why) => {
                t.skip(&why);
                continue;
            }
        };
        judge_dh(&mut t, x, got, "SubjectPublicKeyInfo");
    }
    t.finish()
}

/// A generator that hands out a seed's bytes in order and counts what was asked for.
pub(super) struct SeedFeed {
    pub(super) seed: Vec<u8>,
    pub(super) drawn: Arc<AtomicUsize>,
}

impl KatPrng for SeedFeed {
    fn fill(&mut self, out: &mut [u8]) {
        let at = self.drawn.fetch_add(out.len(), Ordering::SeqCst);
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.seed.get(at + i).copied().unwrap_or(0);
        }
    }
}

/// Runs Wycheproof ML-KEM tests of the subject's parameter set. With injectable randomness
/// the key pair comes from the 64-byte seed d ‖ z handed out as the harness's randomness,
/// and must give `ek`; otherwise `keys` supplies the decapsulation key per tcId (derived by
/// an injectable implementation whose `ek` matched the file). Then `c` must decapsulate to
/// `K` (`valid`, implicit rejection included) or be rejected (`invalid`).
///
/// Returns the outcome and the decapsulation keys this subject derived (tcId → key) for
/// the tests whose `ek` it reproduced.
pub fn run_mlkem(
    kem: &dyn Kem,
    tests: &[MlkemTest],
    keys: Option<&BTreeMap<u64, Vec<u8>>>,
) -> (FileOutcome, BTreeMap<u64, Vec<u8>>) {
    let d = kem.descriptor();
    let harness = d.randomness == Randomness::Harness;
    let mut derived = BTreeMap::new();
    let mut t = Tally::default();
    for x in tests.iter().filter(|x| x.parameter_set == d.algorithm) {
        if x.seed.len() != 64 {
            t.skip(
                "the seed is not 64 bytes: keys come from 64 bytes of injected randomness, so a seed of another \
                 length cannot be presented to the implementation",
            );
            continue;
        }
        let sk = if harness {
            let mut pk = vec![0u8; d.sizes.public_key];
            let mut sk = vec![0u8; d.sizes.secret_key];
            let drawn = Arc::new(AtomicUsize::new(0));
            let r = {
                let _g = install_kat(Box::new(SeedFeed {
                    seed: x.seed.clone(),
                    drawn: drawn.clone(),
                }));
                kem.keypair(&mut pk, &mut sk)
            };
            if let Err(e) = r {
                t.fail(x.tc_id, format!("key generation from the seed failed: {e}"));
                continue;
            }
            let n = drawn.load(Ordering::SeqCst);
            if n != 64 {
                t.fail(
                    x.tc_id,
                    format!("key generation drew {n} bytes of randomness, not the 64 of d ‖ z"),
                );
                continue;
            }
            if let Some(ek) = &x.ek {
                if ek != &pk {
                    t.fail(x.tc_id, "key generation from the seed gives a different ek");
                    continue;
                }
                derived.insert(x.tc_id, sk.clone());
            }
            sk
        } else {
            match keys.and_then(|k| k.get(&x.tc_id)) {
                Some(sk) => sk.clone(),
                None => {
                    t.skip(
                        "randomness not injectable and no decapsulation key was derived for this test by an \
                         implementation that reproduced its ek",
                    );
                    continue;
                }
            }
        };
        match (decaps(kem, &sk, &x.c, d.sizes.shared_secret), x.result) {
            (Ok(k), Expect::Valid | Expect::Acceptable) if k == x.k => t.pass(x.result, false),
            (Ok(k), Expect::Valid | Expect::Acceptable) => t.fail(
                x.tc_id,
                format!(
                    "decapsulation gives K = {}, expected {}",
                    hex::encode(k),
                    hex::encode(&x.k)
                ),
            ),
            (Ok(_), Expect::Invalid) => t.fail(
                x.tc_id,
                format!("accepted an invalid ciphertext of {} bytes", x.c.len()),
            ),
            (Err(e), Expect::Valid) => t.fail(x.tc_id, format!("rejected a valid test: {e}")),
            (Err(_), expect) => t.pass(expect, true),
        }
    }
    (t.finish(), derived)
}

/// Seals `msg` into buffers with canaries around them; returns ciphertext and tag.
pub(super) fn guarded_seal(
    k: &mut dyn crate::traits::AeadKey,
    t: &AeadTest,
    tag_bytes: usize,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut data = Guarded::from(&t.msg);
    let mut tag = Guarded::new(tag_bytes);
    k.seal(&t.iv, &t.aad, data.get_mut(), tag.get_mut())
        .map_err(|e| e.to_string())?;
    canaries("seal", &[("data", &data), ("tag", &tag)])?;
    Ok((data.get().to_vec(), tag.get().to_vec()))
}

/// Opens a test's ciphertext into a buffer with canaries around it.
pub(super) fn guarded_open(k: &mut dyn crate::traits::AeadKey, t: &AeadTest) -> Result<Vec<u8>, String> {
    let mut out = Guarded::new(t.ct.len());
    let r = k.open(&t.iv, &t.aad, &t.ct, &t.tag, out.get_mut());
    canaries("open", &[("out", &out)])?;
    r.map_err(|e| e.to_string())?;
    Ok(out.get().to_vec())
}

/// Runs Wycheproof AEAD tests (`algorithm` is the file's, "AES-GCM" or
/// "CHACHA20-POLY1305") of the subject's algorithm, that is its key length: `valid` tests
/// must seal to the file's ciphertext and tag and open back to the message; `invalid` ones
/// must be refused by `open`, or, when the file gives no tag (nothing can be sealed with
/// that nonce), by `seal`. A valid test whose nonce or tag length the subject does not take
/// (it takes the descriptor's: 12 and 16 bytes) is skipped; an invalid one is still
/// presented, and must be refused.
pub fn run_aead(aead: &dyn Aead, algorithm: &str, tests: &[AeadTest]) -> FileOutcome {
    let d = aead.descriptor();
    let mut t = Tally::default();
    let Some(info) = d.aead else {
        t.fail("-", format!("{} has no AEAD description", d.id));
        return t.finish();
    };
    let mine: Vec<&AeadTest> = tests
        .iter()
        .filter(|x| aead_algorithm(algorithm, x.key.len()) == Some(d.algorithm.as_str()))
        .collect();
    let others = tests.len() - mine.len();
    for x in mine {
        let mut k = match aead.keyed(&x.key) {
            Ok(k) => k,
            Err(e) => {
                t.fail(x.tc_id, format!("the key was refused: {e}"));
                continue;
            }
        };
        let shape_ok = x.iv.len() == info.nonce_bytes && x.tag.len() == info.tag_bytes;
        match x.result {
            Expect::Valid | Expect::Acceptable if !shape_ok => t.skip(&format!(
                "a nonce or tag of a length the subject does not take (it takes {}-byte nonces, {}-byte tags)",
                info.nonce_bytes, info.tag_bytes
            )),
            Expect::Valid | Expect::Acceptable => {
                let sealed = match guarded_seal(k.as_mut(), x, info.tag_bytes) {
                    Ok(s) => s,
                    Err(_) if x.result == Expect::Acceptable => {
                        t.pass(x.result, true);
                        continue;
                    }
                    Err(e) => {
                        t.fail(x.tc_id, format!("seal failed: {e}"));
                        continue;
                    }
                };
                if sealed.0 != x.ct || sealed.1 != x.tag {
                    t.fail(
                        x.tc_id,
                        format!(
                            "seal gives ct {} tag {}, expected ct {} tag {}",
                            short_hex(&sealed.0),
                            hex::encode(&sealed.1),
                            short_hex(&x.ct),
                            hex::encode(&x.tag)
                        ),
                    );
                    continue;
                }
                match guarded_open(k.as_mut(), x) {
                    Ok(m) if m == x.msg => t.pass(x.result, false),
                    Ok(m) => t.fail(
                        x.tc_id,
                        format!("open gives {}, expected {}", short_hex(&m), short_hex(&x.msg)),
                    ),
                    Err(e) => t.fail(x.tc_id, format!("open refused a valid ciphertext: {e}")),
                }
            }
            Expect::Invalid if x.tag.is_empty() => match guarded_seal(k.as_mut(), x, info.tag_bytes) {
                Ok(_) => t.fail(x.tc_id, format!("sealed with an invalid {}-byte nonce", x.iv.len())),
                Err(e) if e.contains("canary") => t.fail(x.tc_id, e),
                Err(_) => t.pass(Expect::Invalid, true),
            },
            Expect::Invalid => match guarded_open(k.as_mut(), x) {
                Ok(_) => t.fail(
                    x.tc_id,
                    format!(
                        "opened an invalid ciphertext ({}-byte nonce, {} bytes)",
                        x.iv.len(),
                        x.ct.len()
                    ),
                ),
                Err(e) if e.contains("canary") => t.fail(x.tc_id, e),
                Err(_) => t.pass(Expect::Invalid, true),
            },
        }
    }
    if others > 0 {
        t.out.notes.push(format!(
            "{others} tests of the file are for other key lengths or algorithms than {}",
            d.algorithm
        ));
    }
    t.finish()
}

/// Hex of at most 32 bytes, with the length when cut.
pub(super) fn short_hex(b: &[u8]) -> String {
    if b.len() <= 32 {
        hex::encode(b)
    } else {
        format!("{}… ({} bytes)", hex::encode(&b[..32]), b.len())
    }
}
