//! AWS-LC's digests (`aws_lc_rs::digest::Context`) as streaming subjects.

use aws_lc_rs::digest::{self, Context};
use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{Hash, HashState, Subject};

#[derive(Clone)]
struct State {
    ctx: Context,
    /// SHA-256d: SHA-256 of the digest.
    double: bool,
}

impl HashState for State {
    fn update(&mut self, data: &[u8]) {
        self.ctx.update(data);
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        let d = self.ctx.finish();
        if self.double {
            out.copy_from_slice(digest::digest(&digest::SHA256, d.as_ref()).as_ref());
        } else {
            out.copy_from_slice(d.as_ref());
        }
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(self.clone())
    }
}

struct Subj {
    desc: Descriptor,
    alg: &'static digest::Algorithm,
    double: bool,
}

impl Hash for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        Box::new(State {
            ctx: Context::new(self.alg),
            double: self.double,
        })
    }
}

/// The catalogue's hashes that aws-lc-rs exposes (it has no SHAKE, BLAKE2 or Ascon API).
pub fn subjects() -> Vec<Subject> {
    [
        ("SHA-256", &digest::SHA256, false),
        ("SHA-256d", &digest::SHA256, true),
        ("SHA-512", &digest::SHA512, false),
        ("SHA-512/256", &digest::SHA512_256, false),
        ("SHA3-256", &digest::SHA3_256, false),
        ("SHA3-512", &digest::SHA3_512, false),
    ]
    .into_iter()
    .map(|(alg, a, double)| {
        let info = cryptoscope_catalogue::names::algorithm(alg).expect("catalogued hash");
        let desc = Descriptor::catalogued(
            alg,
            crate::PROVIDER,
            "default",
            crate::version(),
            crate::build(),
            Sizes::digest(info.digest_size),
            Randomness::Internal,
        );
        Subject::Hash(Box::new(Subj { desc, alg: a, double }))
    })
    .collect()
}
