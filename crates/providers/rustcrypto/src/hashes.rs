//! RustCrypto's hash crates (`sha2`, `sha3`, `shake`, `blake2`, `k12`, `ascon-hash`) and the
//! BLAKE3 team's `blake3` crate (SIMD code chosen at run time) as streaming subjects.

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{Hash, HashState, Subject};
use sha2::Digest;
use sha3::digest::{ExtendableOutput, Update};

/// A `Digest` type's running state.
struct DigestState<D>(D);

impl<D: Digest + Clone + Send + 'static> HashState for DigestState<D> {
    fn update(&mut self, data: &[u8]) {
        Digest::update(&mut self.0, data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        out.copy_from_slice(&self.0.finalize());
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(DigestState(self.0.clone()))
    }
}

/// An extendable-output function's running state, read to the output's length.
struct XofState<X>(X);

impl<X: Update + ExtendableOutput + Clone + Send + 'static> HashState for XofState<X> {
    fn update(&mut self, data: &[u8]) {
        Update::update(&mut self.0, data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        self.0.finalize_xof_into(out);
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(XofState(self.0.clone()))
    }
}

/// SHA-256d: SHA-256 of the SHA-256 digest.
#[derive(Clone)]
struct DoubleState(sha2::Sha256);

impl HashState for DoubleState {
    fn update(&mut self, data: &[u8]) {
        Digest::update(&mut self.0, data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        let inner = self.0.finalize();
        out.copy_from_slice(&sha2::Sha256::digest(inner));
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(self.clone())
    }
}

/// The `blake3` crate's hasher.
#[derive(Clone)]
struct Blake3State(blake3::Hasher);

impl HashState for Blake3State {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        out.copy_from_slice(self.0.finalize().as_bytes());
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(self.clone())
    }
}

struct Subj {
    desc: Descriptor,
    start: fn() -> Box<dyn HashState>,
}

impl Hash for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        (self.start)()
    }
}

fn subject(alg: &str, krate: &str, start: fn() -> Box<dyn HashState>) -> Subject {
    let info = cryptoscope_catalogue::names::algorithm(alg).expect("catalogued hash");
    let build = format!(
        "{} opt-level={} (generic x86_64 target, run-time feature detection)",
        cryptoscope_worker::build_info::RUSTC,
        cryptoscope_worker::build_info::OPT_LEVEL
    );
    let version = cryptoscope_worker::build_info::crate_version(krate);
    let desc = Descriptor::catalogued(
        alg,
        crate::PROVIDER,
        "default",
        version,
        build,
        Sizes::digest(info.digest_size),
        Randomness::Harness,
    );
    Subject::Hash(Box::new(Subj { desc, start }))
}

/// Every hash RustCrypto's crates offer from the catalogue.
pub fn subjects() -> Vec<Subject> {
    vec![
        subject("SHA-256", "sha2", || Box::new(DigestState(sha2::Sha256::new()))),
        subject("SHA-256d", "sha2", || Box::new(DoubleState(sha2::Sha256::new()))),
        subject("SHA-512", "sha2", || Box::new(DigestState(sha2::Sha512::new()))),
        subject("SHA-512/256", "sha2", || Box::new(DigestState(sha2::Sha512_256::new()))),
        subject("SHA3-256", "sha3", || Box::new(DigestState(sha3::Sha3_256::new()))),
        subject("SHA3-512", "sha3", || Box::new(DigestState(sha3::Sha3_512::new()))),
        subject("SHAKE128", "shake", || Box::new(XofState(shake::Shake128::default()))),
        subject("SHAKE256", "shake", || Box::new(XofState(shake::Shake256::default()))),
        subject("BLAKE2b-256", "blake2", || {
            Box::new(DigestState(blake2::Blake2b::<blake2::digest::consts::U32>::new()))
        }),
        subject("BLAKE2b-512", "blake2", || {
            Box::new(DigestState(blake2::Blake2b512::new()))
        }),
        subject("BLAKE2s-256", "blake2", || {
            Box::new(DigestState(blake2::Blake2s256::new()))
        }),
        subject("BLAKE3", "blake3", || Box::new(Blake3State(blake3::Hasher::new()))),
        subject("KangarooTwelve", "k12", || Box::new(XofState(k12::Kt128::default()))),
        subject("Ascon-Hash256", "ascon-hash", || {
            Box::new(DigestState(ascon_hash::AsconHash256::new()))
        }),
    ]
}
