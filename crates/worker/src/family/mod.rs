//! One module per algorithm family: everything the worker does that depends on the family,
//! together — inputs prepared and operations called for every measurement (timing, memory,
//! counters, probes, scale, external tools), the correctness gate, vector files brought by
//! the user, and the constant-time audit (what is marked secret under memcheck, dudect's two
//! classes of input).
//!
//! A family is registered once, in [`of`]; the rest of the worker goes through [`Family`]
//! and [`Prepared`] and names no family. Adding one (ARCHITECTURE.md, "Add an algorithm
//! family"): its module here, its arm in [`of`] and its variant of `Subject`.

pub mod aead;
pub mod cipher;
pub mod hash;
pub mod kem;
pub mod kex;
pub mod sig;

use crate::ct::dudect::Setup;
use cryptoscope_catalogue::external::{External, FileOutcome};
use cryptoscope_catalogue::gate::{Check, GateReport, KatDepth};
use cryptoscope_catalogue::{Descriptor, OpError, Operation, Subject};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One call of an operation on prepared inputs.
pub type OpCall<'a> = dyn FnMut() -> Result<(), OpError> + 'a;

/// A subject's inputs, prepared untimed (a key pair, a ciphertext, a keyed instance), from
/// which each operation can be called again and again: calls write into buffers of their
/// own, so the inputs stay valid for every call.
pub trait Prepared {
    /// One call of `op`, ready to be repeated (anything `op` alone needs, such as a
    /// decapsulator or a message, is made here, untimed).
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError>;
}

/// What a gate request asks besides the subject.
pub struct GateAsk<'p> {
    /// The directory of known-answer files.
    pub vectors: &'p Path,
    pub depth: KatDepth,
    /// KEMs and signatures: KAT entries to keep (written to `entries_out`) for
    /// cross-checking.
    pub keep: usize,
    pub entries_out: Option<&'p PathBuf>,
    /// KEMs and signatures: KAT entries of a subject that passed, for one with its own
    /// randomness.
    pub reference: Option<&'p PathBuf>,
    /// Where to write what this subject made for the reference to check (a KEM's
    /// encapsulations to the reference's keys, a signature scheme's signatures).
    pub encaps_out: Option<&'p PathBuf>,
}

/// Key files of a vector file's run (ML-KEM's Wycheproof files: keys derived by one subject,
/// checked against another's).
pub struct KeyFiles<'p> {
    pub keys_in: Option<&'p Path>,
    pub keys_out: Option<&'p Path>,
}

/// What the worker does with a subject, as its family does it.
pub trait Family<'a> {
    fn descriptor(&self) -> &Descriptor;

    /// The operations in the order they are measured (fast first, so a slow one does not
    /// eat the budget of the others).
    fn order(&self) -> Vec<Operation> {
        self.descriptor().operations()
    }

    /// The operations a timing request measures: those of [`Family::order`] in `only`, or
    /// all of them.
    fn measured(&self, only: Option<&[Operation]>) -> Vec<Operation> {
        self.order()
            .into_iter()
            .filter(|o| only.is_none_or(|l| l.contains(o)))
            .collect()
    }

    /// Inputs for every operation, made once, untimed; `note` sees each preparing call's
    /// operation and how long it took.
    fn prepare(&self, note: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError>;

    /// The correctness gate.
    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String>;

    /// A cross-check's second half, run by the reference: checks what a subject with its own
    /// randomness produced from the reference's KAT entries (a KEM's encapsulations to the
    /// reference's keys, a signature scheme's signatures of its messages). `None`: the
    /// family has no cross-checks.
    fn check_crosscheck(&self, reference: &Path, produced: &Path) -> Option<Result<Check, String>> {
        let _ = (reference, produced);
        None
    }

    /// A vector file brought by the user (`None`: not a file of this family).
    fn verify_file(&self, file: &External, keys: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        let _ = (file, keys);
        None
    }

    /// memcheck: `op` run once with its secrets marked; returns what was marked.
    /// `material`: a KEM's key pair and ciphertext made outside valgrind.
    fn memcheck(&self, op: &str, material: Option<&Path>) -> Result<String, String>;

    /// dudect: the two classes of secret input of `op`, what they are, and the timed call.
    fn dudect(&self, op: &str) -> Result<Setup<'a>, String>;

    /// The refusal of an operation this family does not audit.
    fn not_audited(&self, op: &str) -> String {
        format!("operation `{op}` is not audited for {}", self.descriptor().id)
    }
}

/// The family of a subject: the one place that lists them.
pub fn of(s: &Subject) -> Box<dyn Family<'_> + '_> {
    match s {
        Subject::Kem(k) => Box::new(kem::KemFamily(k.as_ref())),
        Subject::Kex(k) => Box::new(kex::KexFamily(k.as_ref())),
        Subject::Hash(h) => Box::new(hash::HashFamily(h.as_ref())),
        Subject::Cipher(c) => Box::new(cipher::CipherFamily(c.as_ref())),
        Subject::Aead(a) => Box::new(aead::AeadFamily(a.as_ref())),
        Subject::Sig(s) => Box::new(sig::SigFamily(s.as_ref())),
    }
}

/// The refusal of an operation a subject does not have.
pub fn unsupported(d: &Descriptor, op: Operation) -> OpError {
    OpError::Unavailable(format!("{} has no operation {}", d.id, op.as_str()))
}

/// Runs one preparing call, noting how long it took.
pub(crate) fn timed(
    note: &mut dyn FnMut(Operation, Duration),
    op: Operation,
    f: &mut dyn FnMut() -> Result<(), OpError>,
) -> Result<(), OpError> {
    let t = Instant::now();
    let r = f();
    note(op, t.elapsed());
    r
}

/// A fixed byte pattern for keys and messages of the symmetric benches (no result depends on
/// its values).
pub(crate) fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(167) ^ seed) as u8).collect()
}

/// A JSON file the gate's cross-checks pass between workers, read.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("malformed {}: {e}", p.display()))
}

/// A JSON file the gate's cross-checks pass between workers, written.
pub(crate) fn write_json<T: serde::Serialize>(p: &Path, v: &T) -> Result<(), String> {
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
}
