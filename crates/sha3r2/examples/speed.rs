//! A quick development loop for the candidates' speed (the figures we record come from
//! `cryptoscope run --suite hash --provider cryptoscope`, with provenance):
//! `cargo run --release -p cryptoscope-sha3r2 --example speed [NAME-SUBSTRING...]`.
//! Prints MB/s (10^6 bytes per second) for one 1 MiB update and for 64-byte messages, the
//! best of several repetitions, beside the sphlib figures the SHA-3 issue quotes.

use std::time::Instant;

/// The sphlib figures (portable C, gcc -O2, 1 MiB), MB/s.
const SPHLIB: [(&str, f64); 14] = [
    ("BLAKE", 392.0),
    ("BMW", 557.0),
    ("CubeHash", 108.0),
    ("ECHO", 161.0),
    ("Fugue", 135.0),
    ("Groestl", 138.0),
    ("Hamsi", 74.0),
    ("JH", 75.0),
    ("Keccak", 242.0),
    ("Luffa", 169.0),
    ("Shabal", 498.0),
    ("SHAvite-3", 189.0),
    ("SIMD", 109.0),
    ("Skein", 538.0),
];

fn best(reps: usize, bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / best / 1e6
}

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).map(|s| s.to_lowercase()).collect();
    let big: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    println!(
        "{:<20} {:>10} {:>10} {:>8} {:>7}",
        "candidate", "1MiB MB/s", "64B MB/s", "sphlib", "ratio"
    );
    for c in cryptoscope_sha3r2::candidates() {
        if !filter.is_empty() && !filter.iter().any(|f| c.name().to_lowercase().contains(f)) {
            continue;
        }
        let mut out = [0u8; 32];
        let long = best(15, big.len(), || {
            let mut s = c.start();
            s.update(&big);
            s.finish(&mut out);
        });
        let short = best(15, 64 * 20_000, || {
            for i in 0..20_000 {
                let mut s = c.start();
                s.update(&big[i..i + 64]);
                s.finish(&mut out);
            }
        });
        let theirs = SPHLIB
            .iter()
            .find(|(n, _)| c.name().starts_with(n))
            .map_or(f64::NAN, |x| x.1);
        println!(
            "{:<20} {long:>10.0} {short:>10.1} {theirs:>8.0} {:>7.2}",
            c.name(),
            long / theirs
        );
    }
}
