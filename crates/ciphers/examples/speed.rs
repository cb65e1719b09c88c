//! A quick developer's view of every available strategy's speed on this machine, in TSC
//! ticks per byte (median of 101 runs). The real measurements are `cryptoscope run
//! --suite cipher`; this is for working on an implementation.
//!
//! cargo run --release -p cryptoscope-ciphers --example speed [FILTER]

use cryptoscope_ciphers::{strategies, Func};
use std::hint::black_box;

#[cfg(target_arch = "x86_64")]
fn ticks() -> u64 {
    unsafe { std::arch::x86_64::_rdtsc() }
}
#[cfg(not(target_arch = "x86_64"))]
fn ticks() -> u64 {
    use std::time::Instant;
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Median ticks of `reps` calls of `f`, each call run `inner` times.
fn median(inner: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<u64> = (0..101)
        .map(|_| {
            let t = ticks();
            for _ in 0..inner {
                f();
            }
            ticks() - t
        })
        .collect();
    v.sort_unstable();
    v[50] as f64 / inner as f64
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    println!(
        "{:<14} {:<18} {:>9} {:>9} {:>9} {:>9}  inner functions (ticks per call)",
        "cipher", "strategy", "key", "1 block", "ecb 4K", "ctr 4K"
    );
    for s in strategies() {
        let i = s.info().clone();
        let label = format!("{} {}", i.cipher, i.strategy);
        if !label.to_lowercase().contains(&filter.to_lowercase()) {
            continue;
        }
        if !s.available() {
            println!("{:<14} {:<18} (not available on this CPU)", i.cipher, i.strategy);
            continue;
        }
        let key: Vec<u8> = (0..i.key_bytes as u8).collect();
        let mut k = s.schedule(&key);
        let ks = median(10, || k.rekey(black_box(&key)));
        let mut one = vec![7u8; i.block_bytes];
        let b1 = median(10, || k.encrypt(black_box(&mut one))) / i.block_bytes as f64;
        let mut buf = vec![3u8; 4096];
        let ecb = median(4, || k.encrypt(black_box(&mut buf))) / 4096.0;
        let iv = vec![0u8; i.block_bytes];
        let ctr = median(4, || k.ctr(&iv, black_box(&mut buf))) / 4096.0;
        let mut state = vec![0u8; k.state_bytes()];
        let funcs: Vec<String> = Func::ALL
            .iter()
            .filter(|f| k.functions().contains(f))
            .map(|&f| format!("{} {:.0}", f.name(), median(10, || k.call(f, black_box(&mut state), 1))))
            .collect();
        println!(
            "{:<14} {:<18} {:>9.0} {:>9.1} {:>9.2} {:>9.2}  {}",
            i.cipher,
            i.strategy,
            ks,
            b1,
            ecb,
            ctr,
            funcs.join(", ")
        );
    }
    println!("(key: ticks per key schedule; 1 block / ecb / ctr: ticks per byte)");
}
