//! OpenSSL's message digests (EVP_MD through the `openssl` crate's `Hasher`) as streaming
//! subjects. Copies are `EVP_MD_CTX_copy_ex`; SHAKE is read with `EVP_DigestFinalXOF`.

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{Hash, HashState, Subject};
use openssl::hash::{Hasher, MessageDigest};

/// How a digest is finished.
#[derive(Clone, Copy)]
enum Finish {
    Plain,
    /// SHA-256 of the SHA-256 digest.
    Double,
    Xof,
}

struct State {
    h: Hasher,
    finish: Finish,
}

// An EVP_MD_CTX is owned by this state alone and never shared between threads at once.
unsafe impl Send for State {}

impl HashState for State {
    fn update(&mut self, data: &[u8]) {
        // OpenSSL fails an update only on memory exhaustion or a broken context.
        self.h.update(data).expect("EVP_DigestUpdate");
    }
    fn finish(mut self: Box<Self>, out: &mut [u8]) {
        match self.finish {
            Finish::Plain => out.copy_from_slice(&self.h.finish().expect("EVP_DigestFinal")),
            Finish::Double => {
                let inner = self.h.finish().expect("EVP_DigestFinal");
                let outer = openssl::hash::hash(MessageDigest::sha256(), &inner).expect("EVP_Digest");
                out.copy_from_slice(&outer);
            }
            Finish::Xof => self.h.finish_xof(out).expect("EVP_DigestFinalXOF"),
        }
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(State {
            h: self.h.clone(),
            finish: self.finish,
        })
    }
}

struct Subj {
    desc: Descriptor,
    md: MessageDigest,
    finish: Finish,
}

impl Hash for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        Box::new(State {
            h: Hasher::new(self.md).expect("EVP_DigestInit"),
            finish: self.finish,
        })
    }
}

/// Every catalogue hash this libcrypto offers (a digest it cannot fetch is left out).
pub fn subjects() -> Vec<Subject> {
    // By EVP name, as `openssl dgst` knows them.
    let list: [(&str, &str, Finish); 10] = [
        ("SHA-256", "SHA256", Finish::Plain),
        ("SHA-256d", "SHA256", Finish::Double),
        ("SHA-512", "SHA512", Finish::Plain),
        ("SHA-512/256", "SHA512-256", Finish::Plain),
        ("SHA3-256", "SHA3-256", Finish::Plain),
        ("SHA3-512", "SHA3-512", Finish::Plain),
        ("SHAKE128", "SHAKE128", Finish::Xof),
        ("SHAKE256", "SHAKE256", Finish::Xof),
        ("BLAKE2b-512", "BLAKE2B512", Finish::Plain),
        ("BLAKE2s-256", "BLAKE2S256", Finish::Plain),
    ];
    let version = openssl::version::version().to_string();
    let build = format!("system libcrypto ({version}), {}", openssl::version::built_on());
    list.into_iter()
        .filter_map(|(alg, name, finish)| {
            let md = MessageDigest::from_name(name).filter(|md| Hasher::new(*md).is_ok())?;
            let info = cryptoscope_catalogue::names::algorithm(alg).expect("catalogued hash");
            let desc = Descriptor::catalogued(
                alg,
                crate::PROVIDER,
                "default",
                version.clone(),
                build.clone(),
                Sizes::digest(info.digest_size),
                Randomness::Internal,
            );
            Some(Subject::Hash(Box::new(Subj { desc, md, finish })))
        })
        .collect()
}
