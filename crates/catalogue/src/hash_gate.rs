//! The gate of hash functions: known answers (CAVP, the SHA-3 candidates' KATs), digest
//! buffers inside canaries, one update against many, copies of a state, long and extremely
//! long messages. Expected values only from vector files.

use crate::gate::{canaries, Check, GateReport, Guarded, KatDepth};
use crate::vectors;
use std::path::Path;

/// One message's digest through a fresh state, fed in pieces of `chunk` bytes (all at once
/// for 0).
pub(crate) fn hash_of(h: &dyn crate::traits::Hash, msg: &[u8], chunk: usize) -> Vec<u8> {
    let mut s = h.start();
    if chunk == 0 {
        s.update(msg);
    } else {
        for piece in msg.chunks(chunk) {
            s.update(piece);
        }
    }
    // Inside a canary-guarded buffer, so that an overrun corrupts nothing of ours; the
    // "digest buffer" check is the one that looks at the canaries.
    let mut out = Guarded::new(h.descriptor().sizes.shared_secret);
    s.finish(out.get_mut());
    out.get().to_vec()
}

/// Every digest is written inside its buffer: messages of several lengths, finished into
/// buffers with canary bytes on both sides (checked first, so that an overrun is named
/// as such rather than as a wrong digest).
fn hash_buffers(h: &dyn crate::traits::Hash) -> Check {
    let n = h.descriptor().sizes.shared_secret;
    for len in [0usize, 1, 55, 56, 64, 200, 1000] {
        let msg = pattern(len, 7);
        let input = Guarded::from(&msg);
        let mut s = h.start();
        s.update(input.get());
        let mut out = Guarded::new(n);
        s.finish(out.get_mut());
        if let Err(e) = canaries("finish", &[("digest", &out), ("message", &input)]) {
            return Check::fail("digest buffer", format!("{e} (a {len}-byte message)"));
        }
    }
    Check::pass(
        "digest buffer",
        format!("canaries around the {n}-byte digest and the message intact"),
    )
}

/// A fixed, non-repeating test message (no expected value depends on it).
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 11) as u8
        })
        .collect()
}

/// Known answers from the algorithm's vector files: every record, one-shot; every fifth
/// also fed in 7-byte pieces. A published digest shorter than ours (SHAKE128's 16-byte
/// CAVP outputs against our 32) is compared as a prefix, and the check says so.
fn hash_known_answers(h: &dyn crate::traits::Hash, dir: &Path) -> Check {
    let d = h.descriptor();
    let files = vectors::hash_files(&d.algorithm);
    if files.is_empty() {
        return Check::fail(
            "known answers",
            format!("no vector files for {} in vectors/hash", d.algorithm),
        );
    }
    let n = d.sizes.shared_secret;
    let (mut count, mut prefix) = (0usize, 0usize);
    for f in files {
        let path = dir.join("hash").join(f);
        let list = match vectors::hash_vectors(&path) {
            Ok(l) => l,
            Err(e) => return Check::fail("known answers", e.to_string()),
        };
        for v in &list {
            let k = v.digest.len().min(n);
            if v.digest.len() < n {
                prefix += 1;
            }
            let got = hash_of(h, &v.message, 0);
            if got[..k] != v.digest[..k] {
                return Check::fail(
                    "known answers",
                    format!(
                        "{f} record {} ({} bytes): got {}, expected {}",
                        v.index,
                        v.message.len(),
                        hex::encode(&got[..k]),
                        hex::encode(&v.digest[..k])
                    ),
                );
            }
            if v.index % 5 == 0 && hash_of(h, &v.message, 7)[..k] != v.digest[..k] {
                return Check::fail(
                    "known answers",
                    format!("{f} record {}: right in one piece, wrong in 7-byte pieces", v.index),
                );
            }
            count += 1;
        }
    }
    let note = if prefix > 0 {
        format!(" ({prefix} published outputs shorter than ours, compared as prefixes)")
    } else {
        String::new()
    };
    Check::pass(
        "known answers",
        format!("{count} vectors from {}{note}", files.join(", ")),
    )
}

/// The study's basic tests: any split of a message into updates gives the same digest;
/// the empty message differs from one NUL byte; NUL bytes inside and at the end of data
/// are hashed.
fn hash_basic(h: &dyn crate::traits::Hash) -> Check {
    let block = crate::names::algorithm(&h.descriptor().algorithm).map_or(64, |a| a.block_size.max(1));
    let msg = pattern(3 * block + 5, 1);
    let whole = hash_of(h, &msg, 0);
    for cut in 0..=msg.len() {
        let mut s = h.start();
        s.update(&msg[..cut]);
        s.update(&[]);
        s.update(&msg[cut..]);
        let mut out = vec![0u8; whole.len()];
        s.finish(&mut out);
        if out != whole {
            return Check::fail("basic", format!("two updates split at byte {cut} differ from one"));
        }
    }
    for chunk in 1..=block + 1 {
        if hash_of(h, &msg, chunk) != whole {
            return Check::fail("basic", format!("{chunk}-byte updates differ from one update"));
        }
    }
    let cases: [(&[u8], &[u8], &str); 4] = [
        (b"", b"\0", "the empty message and one NUL byte"),
        (b"ab\0cd", b"abcd", "a NUL inside the data and none"),
        (b"abc", b"abc\0", "a trailing NUL and none"),
        (b"\0", b"\0\0", "one NUL and two"),
    ];
    for (a, b, what) in cases {
        if hash_of(h, a, 0) == hash_of(h, b, 0) {
            return Check::fail("basic", format!("{what} hash to the same digest"));
        }
    }
    Check::pass(
        "basic",
        format!(
            "every split of {} bytes, 1..={} -byte updates, NUL handling",
            msg.len(),
            block + 1
        ),
    )
}

/// The study's copy tests: a copy after a common prefix; the copy and the original diverge
/// independently; a copy taken and advanced leaves the original untouched.
fn hash_copy(h: &dyn crate::traits::Hash) -> Check {
    let (p, a, b) = (pattern(100, 2), pattern(37, 3), pattern(200, 4));
    let cat = |x: &[u8], y: &[u8]| [x, y].concat();
    let n = h.descriptor().sizes.shared_secret;
    let mut orig = h.start();
    orig.update(&p);
    let mut c1 = orig.copy();
    let c2 = orig.copy();
    c1.update(&b);
    orig.update(&a);
    let mut out = vec![0u8; n];
    c1.finish(&mut out);
    if out != hash_of(h, &cat(&p, &b), 0) {
        return Check::fail(
            "copy",
            "a copy after a common prefix, then updated, gives a wrong digest",
        );
    }
    orig.finish(&mut out);
    if out != hash_of(h, &cat(&p, &a), 0) {
        return Check::fail("copy", "updating a copy changed the original");
    }
    c2.finish(&mut out);
    if out != hash_of(h, &p, 0) {
        return Check::fail("copy", "an untouched copy no longer gives the prefix's digest");
    }
    Check::pass("copy", "copies diverge independently and leave the original untouched")
}

/// A long message streamed in 64-byte updates (the ExtremelyLong KAT's shape, shortened to
/// 8 MiB) gives the same digest as one update of the whole.
fn hash_long(h: &dyn crate::traits::Hash) -> Check {
    let msg = pattern(8 << 20, 5);
    if hash_of(h, &msg, 64) != hash_of(h, &msg, 0) {
        return Check::fail("long message", "8 MiB in 64-byte updates differs from one update");
    }
    Check::pass("long message", "8 MiB in 131,072 64-byte updates equals one update")
}

/// A SHA-3 round-2 candidate's ExtremelyLongMsgKAT: the 64-byte text repeated 16,777,216
/// times (1 GiB), fed in 64-byte updates.
fn hash_extremely_long(h: &dyn crate::traits::Hash, path: &Path) -> Check {
    const NAME: &str = "extremely long message";
    let (repeat, piece, md) = match vectors::extremely_long(path) {
        Ok(x) => x,
        Err(e) => return Check::fail(NAME, e.to_string()),
    };
    let mut s = h.start();
    for _ in 0..repeat {
        s.update(&piece);
    }
    let mut out = vec![0u8; h.descriptor().sizes.shared_secret];
    s.finish(&mut out);
    let agrees = out[..md.len().min(out.len())] == md[..md.len().min(out.len())];
    if let (false, Some(why)) = (agrees, vectors::disputed(path)) {
        return Check::pass(
            NAME,
            format!(
                "not gating, the file's entry is disputed: it says {}, this implementation gives {} ({why})",
                hex::encode(&md),
                hex::encode(&out)
            ),
        );
    }
    if !agrees {
        return Check::fail(NAME, format!("{}: got {}", path.display(), hex::encode(&out)));
    }
    Check::pass(
        NAME,
        format!(
            "{} bytes in {repeat} updates of {} bytes",
            repeat * piece.len(),
            piece.len()
        ),
    )
}

/// The gate of a hash function: published known answers, then the basic, copy and
/// long-message tests; for a SHA-3 round-2 candidate at depth `All` also its
/// ExtremelyLongMsgKAT (1 GiB; `--quick` runs gate at depth `Single` and skip it).
pub fn gate_hash(h: &dyn crate::traits::Hash, vectors_dir: &Path, depth: KatDepth) -> GateReport {
    let mut report = GateReport::default();
    report.checks.push(hash_buffers(h));
    report.checks.push(hash_known_answers(h, vectors_dir));
    let round2 = vectors::hash_files(&h.descriptor().algorithm)
        .first()
        .filter(|f| f.starts_with("sha3-round2/") && depth == KatDepth::All);
    if let Some(short) = round2 {
        let path = vectors_dir
            .join("hash")
            .join(short)
            .with_file_name("ExtremelyLongMsgKAT_256.txt");
        report.checks.push(hash_extremely_long(h, &path));
    }
    report.checks.push(hash_basic(h));
    report.checks.push(hash_copy(h));
    report.checks.push(hash_long(h));
    report
}

#[cfg(test)]
mod tests {
    //! The hash gate must be able to fail: SHA-256 wrapped correctly passes against the
    //! CAVP files; wrappers with one deliberate fault each fail the right check.
    use super::*;
    use crate::descriptor::{Descriptor, Randomness, Sizes};
    use crate::traits::{Hash, HashState};
    use sha2::Digest;
    use std::path::PathBuf;

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        /// Drops NUL bytes (a C-string bug).
        DropsNul,
        /// `copy` hands out a fresh state instead of a copy.
        CopyIsFresh,
        /// Forgets all but the last update.
        LastUpdateOnly,
    }

    #[derive(Clone)]
    struct St(sha2::Sha256, Fault);

    impl HashState for St {
        fn update(&mut self, data: &[u8]) {
            match self.1 {
                Fault::DropsNul => {
                    let kept: Vec<u8> = data.iter().copied().filter(|&b| b != 0).collect();
                    sha2::Digest::update(&mut self.0, &kept);
                }
                Fault::LastUpdateOnly if !data.is_empty() => {
                    self.0 = sha2::Sha256::new();
                    sha2::Digest::update(&mut self.0, data);
                }
                _ => sha2::Digest::update(&mut self.0, data),
            }
        }
        fn finish(self: Box<Self>, out: &mut [u8]) {
            out.copy_from_slice(&sha2::Digest::finalize(self.0));
        }
        fn copy(&self) -> Box<dyn HashState> {
            if self.1 == Fault::CopyIsFresh {
                Box::new(St(sha2::Sha256::new(), self.1))
            } else {
                Box::new(self.clone())
            }
        }
    }

    struct Toy(Descriptor, Fault);

    impl Hash for Toy {
        fn descriptor(&self) -> &Descriptor {
            &self.0
        }
        fn start(&self) -> Box<dyn HashState> {
            Box::new(St(sha2::Sha256::new(), self.1))
        }
    }

    fn toy(f: Fault) -> Toy {
        let d = Descriptor::catalogued(
            "SHA-256",
            "test",
            "toy",
            "0".into(),
            "-".into(),
            Sizes::digest(32),
            Randomness::Internal,
        );
        Toy(d, f)
    }

    fn vectors() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    fn failed(r: &GateReport) -> Vec<&str> {
        r.checks.iter().filter(|c| !c.ok).map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn a_correct_sha256_passes_everything() {
        let r = gate_hash(&toy(Fault::None), &vectors(), KatDepth::All);
        assert!(r.passed(), "{}", r.detail());
        assert!(r.detail().contains("129 vectors"), "{}", r.detail());
    }

    #[test]
    fn each_fault_fails_its_check() {
        let r = gate_hash(&toy(Fault::DropsNul), &vectors(), KatDepth::All);
        assert!(failed(&r).contains(&"basic"), "{}", r.detail());
        let r = gate_hash(&toy(Fault::CopyIsFresh), &vectors(), KatDepth::All);
        assert_eq!(failed(&r), ["copy"], "{}", r.detail());
        let r = gate_hash(&toy(Fault::LastUpdateOnly), &vectors(), KatDepth::All);
        assert!(
            failed(&r).contains(&"basic") && failed(&r).contains(&"long message"),
            "{}",
            r.detail()
        );
    }

    #[test]
    fn a_wrong_published_digest_fails_known_answers() {
        let d = tempfile::tempdir().unwrap();
        let cavp = d.path().join("hash/cavp");
        std::fs::create_dir_all(&cavp).unwrap();
        for f in ["SHA256ShortMsg.rsp", "SHA256LongMsg.rsp"] {
            std::fs::copy(vectors().join("hash/cavp").join(f), cavp.join(f)).unwrap();
        }
        let p = cavp.join("SHA256ShortMsg.rsp");
        let text = std::fs::read_to_string(&p).unwrap();
        // Record 2 (Len = 8): flip the first hex digit of its MD.
        let at = text.match_indices("MD = ").nth(1).unwrap().0 + 5;
        let mut b = text.into_bytes();
        b[at] = if b[at] == b'0' { b'1' } else { b'0' };
        std::fs::write(&p, b).unwrap();
        let r = gate_hash(&toy(Fault::None), d.path(), KatDepth::All);
        assert_eq!(failed(&r), ["known answers"], "{}", r.detail());
        assert!(r.detail().contains("record 2"), "{}", r.detail());
    }
}
