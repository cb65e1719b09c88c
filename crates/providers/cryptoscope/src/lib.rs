//! The project's own code as a provider: every block cipher strategy of
//! `cryptoscope-ciphers` (GIFT-64, GIFT-128, GIFTb-128, Camellia-128/256; naive,
//! table-driven, vector-permute, bitsliced/fixsliced, AES-instruction byte-sliced), and the
//! SHA-3 second-round candidates of `cryptoscope-sha3r2` as hash subjects.
//!
//! The gate checks each strategy against the published vectors and, on random keys and
//! blocks, against independent implementations: the cipher's `naive` strategy (a direct
//! transcription of the specification, itself checked against the vectors), RustCrypto's
//! `camellia`/`gift-cipher` and OpenSSL's Camellia where they implement the same cipher.

use cryptoscope_catalogue::descriptor::{Availability, CipherInfo, Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{check_len, BlockCipher, Hash, HashState, KeyedCipher, OpError, Subject};
use cryptoscope_ciphers::{Func, Keyed, Strategy};

/// Canonical provider name.
pub const PROVIDER: &str = "cryptoscope";

struct Subj {
    desc: Descriptor,
    strategy: Box<dyn Strategy>,
}

struct KeyedSubj {
    keyed: Box<dyn Keyed>,
    key_bytes: usize,
    block_bytes: usize,
}

fn func(name: &str) -> Result<Func, OpError> {
    Func::parse(name).ok_or_else(|| OpError::Unavailable(format!("no inner function {name}")))
}

impl BlockCipher for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError> {
        let i = self.strategy.info();
        check_len("keysched", "key", key.len(), i.key_bytes)?;
        if !self.strategy.available() {
            return Err(OpError::Unavailable(format!(
                "cpu lacks one of {}",
                i.features.join(", ")
            )));
        }
        Ok(Box::new(KeyedSubj {
            keyed: self.strategy.schedule(key),
            key_bytes: i.key_bytes,
            block_bytes: i.block_bytes,
        }))
    }
    fn references(&self) -> Vec<(String, Box<dyn BlockCipher>)> {
        let alg = &self.desc.algorithm;
        let mut refs: Vec<(String, Box<dyn BlockCipher>)> = Vec::new();
        if self.desc.implementation != "naive" {
            if let Some(Subject::Cipher(c)) = subjects()
                .into_iter()
                .find(|s| s.descriptor().algorithm == *alg && s.descriptor().implementation == "naive")
            {
                refs.push(("cryptoscope/naive".into(), c));
            }
        }
        let others = cryptoscope_provider_rustcrypto::ciphers::subjects()
            .into_iter()
            .chain(cryptoscope_provider_openssl::ciphers::subjects());
        for s in others {
            if s.descriptor().algorithm == *alg {
                let name = format!("{}/{}", s.descriptor().provider, s.descriptor().provider_version);
                if let Subject::Cipher(c) = s {
                    refs.push((name, c));
                }
            }
        }
        refs
    }
}

impl KeyedCipher for KeyedSubj {
    fn rekey(&mut self, key: &[u8]) -> Result<(), OpError> {
        check_len("keysched", "key", key.len(), self.key_bytes)?;
        self.keyed.rekey(key);
        Ok(())
    }
    fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError> {
        if !blocks.len().is_multiple_of(self.block_bytes) {
            return Err(OpError::failed(
                "encrypt",
                format!("{} bytes is not whole blocks", blocks.len()),
            ));
        }
        self.keyed.encrypt(blocks);
        Ok(())
    }
    fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError> {
        check_len("ctr", "iv", iv.len(), self.block_bytes)?;
        self.keyed.ctr(iv, data);
        Ok(())
    }
    fn state_bytes(&self) -> usize {
        self.keyed.state_bytes()
    }
    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        self.keyed.load(blocks, state)
    }
    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        self.keyed.store(state, blocks)
    }
    fn call(&self, name: &str, state: &mut [u8], round: usize) -> Result<(), OpError> {
        let f = func(name)?;
        if !self.keyed.functions().contains(&f) {
            return Err(OpError::Unavailable(format!("no inner function {name}")));
        }
        check_len("call", "state", state.len(), self.keyed.state_bytes())?;
        self.keyed.call(f, state, round);
        Ok(())
    }
}

/// A SHA-3 round-2 candidate as a streaming hash subject.
struct Candidate {
    desc: Descriptor,
    c: Box<dyn cryptoscope_sha3r2::Candidate>,
}

struct CandidateState(Box<dyn cryptoscope_sha3r2::State>);

impl Hash for Candidate {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        Box::new(CandidateState(self.c.start()))
    }
}

impl HashState for CandidateState {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data)
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        let mut d = [0u8; 32];
        self.0.finish(&mut d);
        out.copy_from_slice(&d[..out.len()]);
    }
    fn copy(&self) -> Box<dyn HashState> {
        Box::new(CandidateState(self.0.copy()))
    }
}

/// How this provider was compiled.
fn build_line() -> String {
    format!(
        "{} opt-level={} (generic target, run-time CPU feature selection)",
        cryptoscope_worker::build_info::RUSTC,
        cryptoscope_worker::build_info::OPT_LEVEL
    )
}

/// Every strategy of every cipher (those this CPU cannot run, and those written for another
/// architecture, are listed as unavailable),
/// then every SHA-3 round-2 candidate.
pub fn subjects() -> Vec<Subject> {
    let mut v = cipher_subjects();
    v.extend(hash_subjects());
    v
}

/// The SHA-3 round-2 candidates as hash subjects (also what the Python package links).
pub fn hash_subjects() -> Vec<Subject> {
    cryptoscope_sha3r2::candidates()
        .into_iter()
        .map(|c| {
            // The implementation is the path the candidate takes on this CPU (x86-64 vector
            // code where present, the portable code otherwise), chosen at run time.
            let mut desc = Descriptor::catalogued(
                c.name(),
                PROVIDER,
                c.path(),
                format!("cryptoscope-sha3r2 {}", env!("CARGO_PKG_VERSION")),
                format!(
                    "{}; the candidate chooses at run time between its x86-64 vector paths (SSE2, AVX2, \
                     AVX-512, AES-NI, VAES, GFNI, BMI as present) and portable Rust",
                    build_line()
                ),
                Sizes::digest(32),
                Randomness::Harness,
            );
            desc.algorithm_version = c.label().to_string();
            Subject::Hash(Box::new(Candidate { desc, c }))
        })
        .collect()
}

fn cipher_subjects() -> Vec<Subject> {
    let build = build_line();
    cryptoscope_ciphers::strategies()
        .into_iter()
        .chain(cryptoscope_ciphers::other_architectures())
        .map(|strategy| {
            let i = strategy.info().clone();
            // The functions a keyed instance exposes are the strategy's, whatever the key.
            let functions = if strategy.available() {
                let k = strategy.schedule(&vec![0u8; i.key_bytes]);
                Func::ALL
                    .iter()
                    .filter(|f| k.functions().contains(f))
                    .map(|f| f.name().to_string())
                    .collect()
            } else {
                Vec::new()
            };
            let info = CipherInfo {
                block_bytes: i.block_bytes,
                key_bytes: i.key_bytes,
                batch: i.batch,
                secret_indexing: Some(i.secret_indexing),
                functions,
                about: i.about.to_string(),
            };
            let mut desc = Descriptor::block_cipher(
                i.cipher,
                PROVIDER,
                i.strategy,
                format!("cryptoscope-ciphers {}", env!("CARGO_PKG_VERSION")),
                build.clone(),
                info,
            );
            desc.algorithm_version = match i.cipher {
                "GIFTb-128" => "GIFT-128, GIFT-COFB bit ordering".into(),
                c if c.starts_with("GIFT") => "GIFT (CHES 2017), original convention".into(),
                _ => "RFC 3713".into(),
            };
            if let Some(arch) = strategy.built_for() {
                desc.availability = Availability::Unavailable(format!(
                    "{arch} code, not in this {} build (needs {})",
                    std::env::consts::ARCH,
                    i.features.join(", ")
                ));
            } else if !strategy.available() {
                desc.availability = Availability::Unavailable(format!("cpu lacks one of {}", i.features.join(", ")));
            }
            Subject::Cipher(Box::new(Subj { desc, strategy }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_candidate_is_a_catalogued_hash_with_its_kat_files() {
        use cryptoscope_catalogue::names;
        for c in cryptoscope_sha3r2::candidates() {
            let a = names::algorithm(c.name()).unwrap_or_else(|| panic!("{} is not in the catalogue", c.name()));
            assert_eq!(a.family, cryptoscope_catalogue::Family::Hash, "{}", c.name());
            assert_eq!(a.block_size, c.block_bytes(), "{}", c.name());
            let files = cryptoscope_catalogue::vectors::hash_files(c.name());
            assert!(
                files.iter().all(|f| f.contains(&format!("/{}/", c.kat_dir()))),
                "{}: {files:?}",
                c.name()
            );
        }
    }
}
