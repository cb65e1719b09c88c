//! The testbed: SHA-256 subjects with one deliberate defect each, so that every promise
//! cryptoscope makes about faults and leaks is shown to hold on a subject that breaks it.
//! The tool never selects this provider unless asked (`--provider testbed`).
//!
//! | implementation        | defect                                                       |
//! |-----------------------|--------------------------------------------------------------|
//! | `sound`               | none (the control: passes, is measured)                      |
//! | `wrong-digest`        | flips one bit of every digest (fails its gate)               |
//! | `segfault`            | writes through a null pointer in `finish`                    |
//! | `abort`               | calls `abort()` in `update`                                  |
//! | `hang`                | never returns from `finish`                                  |
//! | `out-of-memory`       | allocates and touches memory until allocation fails          |
//! | `overrun`             | writes one byte past the digest buffer                       |
//! | `crash-when-measured` | correct in the gate, `SIGSEGV` as soon as it is measured     |
//! | `early-exit`          | correct, but compares each input block with a cached block   |
//! |                       | byte by byte and stops at the first difference (a leak)      |
//! | `constant-compare`    | the same cache check without a branch (no leak)              |
//!
//! And two ChaCha20-Poly1305 subjects ([`aead`]): `early-exit-tag` compares the tag byte by
//! byte (a leak), `constant-tag` without a branch (no leak).

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{Hash, HashState, Subject};
use sha2::Digest;

mod aead;

/// Canonical provider name.
pub const PROVIDER: &str = "testbed";

#[derive(Clone, Copy, PartialEq, Debug)]
enum Defect {
    Sound,
    WrongDigest,
    Segfault,
    Abort,
    Hang,
    OutOfMemory,
    Overrun,
    CrashWhenMeasured,
    EarlyExit,
    ConstantCompare,
}

const DEFECTS: &[(Defect, &str, &str)] = &[
    (Defect::Sound, "sound", "correct SHA-256 (the control)"),
    (Defect::WrongDigest, "wrong-digest", "flips one bit of every digest"),
    (
        Defect::Segfault,
        "segfault",
        "writes through a null pointer when finishing",
    ),
    (Defect::Abort, "abort", "calls abort() in update"),
    (Defect::Hang, "hang", "never returns from finish"),
    (
        Defect::OutOfMemory,
        "out-of-memory",
        "allocates and touches memory until allocation fails",
    ),
    (Defect::Overrun, "overrun", "writes one byte past the digest buffer"),
    (
        Defect::CrashWhenMeasured,
        "crash-when-measured",
        "correct in the gate, segfaults when measured",
    ),
    (
        Defect::EarlyExit,
        "early-exit",
        "correct, but compares every 64-byte block with a cached block and stops at the first difference",
    ),
    (
        Defect::ConstantCompare,
        "constant-compare",
        "correct; the same cache check folded in without a branch",
    ),
];

/// The cached block of `early-exit` and `constant-compare`: the all-zero block, as a
/// sparse-file shortcut would cache it.
const CACHED: [u8; 64] = [0; 64];

#[derive(Clone)]
struct State {
    h: sha2::Sha256,
    defect: Defect,
    /// Cache hits seen (kept so the comparison cannot be optimised away).
    hits: u64,
}

/// Byte-by-byte comparison that returns at the first difference: its running time tells
/// how long a prefix of the block matched. Never inlined, so the leak has a function name.
#[inline(never)]
fn early_exit_equal(a: &[u8], b: &[u8]) -> bool {
    for i in 0..a.len() {
        if a[i] != b[i] {
            return false;
        }
    }
    true
}

/// The same comparison without a branch on the data: every byte is read, and the result is
/// a 0/1 integer the caller adds, never tests.
#[inline(never)]
fn constant_equal(a: &[u8], b: &[u8]) -> u64 {
    let mut diff = 0u8;
    for i in 0..a.len() {
        diff |= a[i] ^ b[i];
    }
    // 1 when diff == 0, without a branch.
    (((diff as u64).wrapping_sub(1)) >> 63) & 1
}

impl HashState for State {
    fn update(&mut self, data: &[u8]) {
        match self.defect {
            Defect::Abort => std::process::abort(),
            Defect::OutOfMemory => exhaust_memory(),
            Defect::EarlyExit => {
                for block in data.chunks_exact(64) {
                    if early_exit_equal(block, &CACHED) {
                        self.hits += 1;
                    }
                }
            }
            Defect::ConstantCompare => {
                for block in data.chunks_exact(64) {
                    self.hits += constant_equal(block, &CACHED);
                }
            }
            _ => {}
        }
        self.h.update(data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        let digest = self.h.finalize();
        out.copy_from_slice(&digest);
        std::hint::black_box(self.hits);
        match self.defect {
            Defect::WrongDigest => out[31] ^= 1,
            Defect::Segfault => unsafe {
                // SAFETY: none; the defect is the point. A volatile write through null is a
                // SIGSEGV on Linux.
                std::ptr::write_volatile(std::ptr::null_mut::<u8>(), 1)
            },
            Defect::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            },
            Defect::Overrun => unsafe {
                // SAFETY: none; the gate hands every implementation a buffer with canary
                // bytes after it, so this byte lands in the gate's own allocation, where
                // the canary check sees it.
                *out.as_mut_ptr().add(out.len()) ^= 0x5a
            },
            _ => {}
        }
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(self.clone())
    }
}

/// Allocates 64 MiB blocks and touches every page until the allocator gives up, which
/// under the worker's memory limit aborts the process ("memory allocation of N bytes
/// failed").
fn exhaust_memory() -> ! {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut v = Vec::<u8>::with_capacity(64 << 20);
        v.resize(64 << 20, 1);
        kept.push(std::hint::black_box(v));
    }
}

struct Subj {
    desc: Descriptor,
    defect: Defect,
}

impl Hash for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        if self.defect == Defect::CrashWhenMeasured && measuring() {
            unsafe {
                // SAFETY: none; see `Defect::Segfault`.
                std::ptr::write_volatile(std::ptr::null_mut::<u8>(), 1)
            }
        }
        Box::new(State {
            h: sha2::Sha256::new(),
            defect: self.defect,
            hits: 0,
        })
    }
}

/// Whether this worker is measuring (not gating): the command it runs now.
fn measuring() -> bool {
    cryptoscope_worker::command() == "measure"
}

/// Every testbed subject.
pub fn subjects() -> Vec<Subject> {
    let build = format!(
        "{} opt-level={}",
        cryptoscope_worker::build_info::RUSTC,
        cryptoscope_worker::build_info::OPT_LEVEL
    );
    let mut all: Vec<Subject> = DEFECTS
        .iter()
        .map(|&(defect, name, about)| {
            let mut desc = Descriptor::catalogued(
                "SHA-256",
                PROVIDER,
                name,
                format!("testbed {} on sha2", env!("CARGO_PKG_VERSION")),
                build.clone(),
                Sizes::digest(32),
                Randomness::Harness,
            );
            desc.algorithm_version = format!("FIPS 180-4; testbed defect: {about}");
            Subject::Hash(Box::new(Subj { desc, defect }))
        })
        .collect();
    all.extend(aead::subjects(&build));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_compares_agree() {
        let z = [0u8; 64];
        let mut x = [0u8; 64];
        assert!(early_exit_equal(&z, &CACHED));
        assert_eq!(constant_equal(&z, &CACHED), 1);
        for i in 0..64 {
            x[i] = 1 << (i % 8);
            assert!(!early_exit_equal(&x, &CACHED));
            assert_eq!(constant_equal(&x, &CACHED), 0);
            x[i] = 0;
        }
    }
}
