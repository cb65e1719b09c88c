//! The strategies written for another architecture than this build's: x86-64's SSSE3, AVX2,
//! AVX-512, AES-NI, VAES and GFNI code on AArch64, and AArch64's NEON code on x86-64. Their
//! code is not compiled here, so they cannot run; they are listed, so that a catalogue read
//! on one machine names everything the project has and says why a subject is missing.
//!
//! The table below states what each strategy is (batch, key, block, features); a test holds
//! it to the strategies this build does compile, so it cannot drift from the code.

use crate::{Info, Keyed, Strategy};

/// One strategy of another architecture: `arch` as in `std::env::consts::ARCH`.
struct Entry {
    arch: &'static str,
    strategy: &'static str,
    features: &'static [&'static str],
    /// (cipher, block bytes, key bytes, batch) for each cipher the strategy covers.
    ciphers: &'static [(&'static str, usize, usize, usize)],
}

const GIFT_BATCH_4: &[(&str, usize, usize, usize)] =
    &[("GIFT-64", 8, 16, 4), ("GIFT-128", 16, 16, 4), ("GIFTb-128", 16, 16, 4)];

const TABLE: &[Entry] = &[
    Entry {
        arch: "x86_64",
        strategy: "vperm-ssse3",
        features: &["ssse3"],
        ciphers: GIFT_BATCH_4,
    },
    Entry {
        arch: "x86_64",
        strategy: "bitsliced-avx2",
        features: &["avx2"],
        ciphers: &[
            ("GIFT-64", 8, 16, 32),
            ("GIFT-128", 16, 16, 16),
            ("GIFTb-128", 16, 16, 16),
        ],
    },
    Entry {
        arch: "x86_64",
        strategy: "bitsliced-avx512",
        features: &["avx512f", "avx512bw"],
        ciphers: &[
            ("GIFT-64", 8, 16, 64),
            ("GIFT-128", 16, 16, 32),
            ("GIFTb-128", 16, 16, 32),
        ],
    },
    Entry {
        arch: "x86_64",
        strategy: "aesni-avx",
        features: &["aes", "avx", "ssse3"],
        ciphers: &[("Camellia-128", 16, 16, 16), ("Camellia-256", 16, 32, 16)],
    },
    Entry {
        arch: "x86_64",
        strategy: "vaes-avx2",
        features: &["vaes", "avx2", "aes"],
        ciphers: &[("Camellia-128", 16, 16, 32), ("Camellia-256", 16, 32, 32)],
    },
    Entry {
        arch: "x86_64",
        strategy: "gfni-avx512",
        features: &["gfni", "avx512f", "avx512bw"],
        ciphers: &[("Camellia-128", 16, 16, 64), ("Camellia-256", 16, 32, 64)],
    },
    Entry {
        arch: "aarch64",
        strategy: "vperm-neon",
        features: &["neon"],
        ciphers: GIFT_BATCH_4,
    },
];

/// A strategy whose code exists for `arch` only.
struct Elsewhere {
    info: Info,
    arch: &'static str,
}

impl Strategy for Elsewhere {
    fn info(&self) -> &Info {
        &self.info
    }
    fn available(&self) -> bool {
        false
    }
    fn schedule(&self, _key: &[u8]) -> Box<dyn Keyed> {
        panic!(
            "{} {} is {} code, not in this {} build",
            self.info.cipher,
            self.info.strategy,
            self.arch,
            std::env::consts::ARCH
        )
    }
    fn built_for(&self) -> Option<&'static str> {
        Some(self.arch)
    }
}

/// Every strategy of another architecture than this build's (never available).
pub fn strategies() -> Vec<Box<dyn Strategy>> {
    entries(|arch| arch != std::env::consts::ARCH)
}

/// The table's strategies whose architecture `pick` accepts, one per cipher.
fn entries(pick: impl Fn(&str) -> bool) -> Vec<Box<dyn Strategy>> {
    let mut v: Vec<Box<dyn Strategy>> = Vec::new();
    for e in TABLE.iter().filter(|e| pick(e.arch)) {
        for &(cipher, block_bytes, key_bytes, batch) in e.ciphers {
            let info = Info {
                cipher,
                strategy: e.strategy,
                block_bytes,
                key_bytes,
                batch,
                secret_indexing: false,
                features: e.features,
                about: "code for another architecture: listed, not built here",
            };
            v.push(Box::new(Elsewhere { info, arch: e.arch }));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's rows for this build's architecture are exactly the strategies it compiles
    /// beyond the portable ones, with the same shape: what another build lists is true.
    #[test]
    fn the_table_matches_the_strategies_this_architecture_compiles() {
        let portable = ["naive", "table", "fixsliced"];
        let key = |i: &Info| {
            (
                i.cipher,
                i.strategy,
                i.block_bytes,
                i.key_bytes,
                i.batch,
                i.secret_indexing,
                i.features.to_vec(),
            )
        };
        let mut compiled: Vec<_> = crate::strategies()
            .iter()
            .map(|s| s.info().clone())
            .filter(|i| !portable.contains(&i.strategy))
            .map(|i| key(&i))
            .collect();
        let mut listed: Vec<_> = entries(|arch| arch == std::env::consts::ARCH)
            .iter()
            .map(|s| key(s.info()))
            .collect();
        compiled.sort();
        listed.sort();
        assert_eq!(compiled, listed);
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert!(
                !listed.is_empty(),
                "no vector strategy compiled on {}",
                std::env::consts::ARCH
            );
        }
    }

    #[test]
    fn other_architectures_are_listed_unavailable_and_never_here() {
        let here = strategies();
        assert!(here
            .iter()
            .all(|s| !s.available() && s.built_for().is_some_and(|a| a != std::env::consts::ARCH)));
        let names: Vec<_> = here.iter().map(|s| s.info().strategy).collect();
        if cfg!(target_arch = "aarch64") {
            assert!(
                names.contains(&"bitsliced-avx2") && names.contains(&"gfni-avx512") && !names.contains(&"vperm-neon")
            );
        }
        if cfg!(target_arch = "x86_64") {
            assert_eq!(names, ["vperm-neon"; 3]);
        }
    }
}
