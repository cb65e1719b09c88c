//! dudect (Reparaz, Balasch, Verbauwhede): per family, two classes of secret inputs — one
//! fixed, 64 random — the call timed on each, drawn in random order, and Welch's t between
//! the classes' times.

use super::*;

/// Settings of a dudect measurement.
pub struct DudectPlan {
    pub samples: u64,
    pub budget: Duration,
    /// Evict the caches (write an 8 MiB buffer) before every call, so that the number of
    /// distinct table lines an input touches shows in its time.
    pub cold: bool,
    /// Write every call's class and time here (`CLASS TIME` lines): a test fixture.
    pub record: Option<std::path::PathBuf>,
}

/// A small xorshift generator for the class sequence (its statistics are all that matter).
pub(crate) struct ClassRng(u64);

impl ClassRng {
    fn bit(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as usize & 1
    }
}

/// The inputs of one call: class 0 gets the fixed input, class 1 one drawn from a pool of
/// random inputs (prepared before timing, so that preparing them is never timed). The fixed
/// input is kept in as many copies as the pool has entries, at their own addresses, so that
/// fetching an input moves the same amount of memory through the caches for both classes
/// (a 64 KiB pool against one hot buffer was itself a class difference).
pub struct Classes {
    fixed: Vec<Vec<u8>>,
    pool: Vec<Vec<u8>>,
}

impl Classes {
    pub fn new(fixed: Vec<u8>, pool: Vec<Vec<u8>>) -> Classes {
        Classes {
            fixed: vec![fixed; pool.len()],
            pool,
        }
    }
    fn input(&self, class: usize, i: u64) -> &[u8] {
        let list = if class == 0 { &self.fixed } else { &self.pool };
        &list[i as usize % list.len()]
    }
}

/// The timed call on one input, which the harness has copied into the same working buffer
/// for both classes (so that where an input lives in memory is never a class difference).
pub type Call<'a> = Box<dyn FnMut(&mut [u8]) -> Result<(), String> + 'a>;

/// Inputs per random class of a dudect test.
pub const POOL: usize = 64;

/// `POOL` random inputs of `n` bytes.
pub fn pool(n: usize) -> Vec<Vec<u8>> {
    (0..POOL).map(|_| random(n)).collect()
}

/// Key generation and encapsulation draw their randomness from NIST's CTR_DRBG seeded with
/// the input (installed inside the call: the same work for both classes).
pub(crate) fn seeded(seed: &[u8]) -> Result<cryptoscope_catalogue::rng::KatGuard, String> {
    let seed: [u8; 48] = seed.try_into().map_err(|_| "a 48-byte seed".to_string())?;
    Ok(install_kat(kat_prng(KatPrngKind::AesCtrDrbg, &seed)))
}

/// A dudect test's two classes, what they are, and the timed call.
pub type Setup<'a> = (Classes, String, Call<'a>);

/// Key generation (a KEM's or a key exchange's): the input is the 48-byte seed of the
/// randomness the call draws, one fixed seed against 64 random ones.
pub(crate) fn keypair_classes<'a>(d: &Descriptor, mut keypair: Box<KeypairFn<'a>>) -> Result<Setup<'a>, String> {
    let sz = &d.sizes;
    let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
    Ok((
        Classes::new(vec![0u8; 48], pool(48)),
        "one fixed randomness (a 48-byte DRBG seed) against 64 random ones".into(),
        Box::new(move |seed: &mut [u8]| {
            let _g = seeded(seed)?;
            keypair(&mut pk, &mut sk).map_err(err)
        }),
    ))
}

/// dudect mode: Welch's t between fixed and random secret inputs of one operation.
pub fn dudect(s: &Subject, op: &str, plan: &DudectPlan, clock: &cryptoscope_measure::Clock) -> Result<CtStat, String> {
    let d = s.descriptor();
    let (classes, what, mut call) = crate::family::of(s).dudect(op)?;
    let mut seed = [0u8; 8];
    cryptoscope_catalogue::rng::fill(&mut seed);
    let (result, seconds) = measure_classes(&classes, &mut call, plan, clock, u64::from_le_bytes(seed))?;
    Ok(CtStat {
        subject: d.id.clone(),
        operation: op.to_string(),
        classes: what,
        cold: plan.cold,
        unit: if clock.tsc_hz().is_some() {
            "TSC ticks".into()
        } else {
            "ns".into()
        },
        seconds,
        result,
    })
}

/// The measured part of a dudect test: each call's class drawn at random (from `seed`),
/// its input copied into the working buffer, the call timed with `timer`, and every
/// (class, time) given to the analysis. Generic over the timer so that the calibration
/// cases are tested on timings the test controls (tests below); the time budget and the
/// "too slow" rule read the real clock. Returns the result and the seconds spent.
pub(crate) fn measure_classes<T: Timer>(
    classes: &Classes,
    call: &mut Call,
    plan: &DudectPlan,
    timer: &T,
    seed: u64,
) -> Result<(cryptoscope_measure::ttest::TResult, f64), String> {
    let mut rng = ClassRng(seed | 1);
    let mut evict = if plan.cold { vec![0u8; 8 << 20] } else { Vec::new() };
    let mut leak = Leakage::new();
    let mut work = classes.fixed[0].clone();
    // Room for the recording, made before timing starts (the loop must not allocate).
    let mut recorded: Vec<(u8, u64)> = Vec::with_capacity(if plan.record.is_some() {
        plan.samples.min(10_000_000) as usize
    } else {
        0
    });
    // Warm-up: one call of each class (first-call effects are not a class difference).
    // The faster of the two is the call's cost: one call stalled by a neighbour on a
    // shared machine does not make a fast operation too slow to test.
    let mut per_call = Duration::MAX;
    for class in [0, 1] {
        work.copy_from_slice(classes.input(class, 0));
        let t = Instant::now();
        call(&mut work)?;
        per_call = per_call.min(t.elapsed());
    }
    // The test needs at least 200 calls; an operation whose call takes more than a twentieth
    // of the budget (Classic McEliece's key generation) would take over ten times as long
    // as asked.
    if per_call > plan.budget / 20 {
        return Err(format!(
            "{TOO_SLOW}: one call takes {:.3} s, and the test needs at least 200 calls (budget {:.0} s)",
            per_call.as_secs_f64(),
            plan.budget.as_secs_f64()
        ));
    }
    let started = Instant::now();
    let mut i = 0u64;
    // At least 200 calls (100 per class on average), however slow the operation.
    while i < plan.samples && (i < 200 || started.elapsed() < plan.budget) {
        let class = rng.bit();
        work.copy_from_slice(classes.input(class, i));
        if plan.cold {
            for b in evict.iter_mut().step_by(64) {
                *b = b.wrapping_add(1);
            }
            std::hint::black_box(&evict);
        }
        let a = timer.start();
        let r = call(&mut work);
        let b = timer.stop();
        r?;
        let (_, ticks) = timer.elapsed(a, b);
        leak.push(class, ticks as f64);
        if plan.record.is_some() && recorded.len() < recorded.capacity() {
            recorded.push((class as u8, ticks));
        }
        i += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &plan.record {
        let text: String = recorded.iter().map(|(c, t)| format!("{c} {t}\n")).collect();
        std::fs::write(path, text).map_err(|e| format!("--record {}: {e}", path.display()))?;
    }
    Ok((leak.result(), seconds))
}

#[cfg(test)]
mod tests {
    //! dudect's calibration cases on timings the test controls. A model of each case
    //! (what the code does with its input, from how it is written) sets the cost of every
    //! call; a scripted timer hands that cost, with seeded noise and a preempted call's
    //! heavy tail, to the worker's real measuring loop and analysis. The verdicts below
    //! are the calibration the live audit (crates/cli/tests/ct.rs) used to assert on a
    //! shared machine's timing: now they hold on any machine under any load.
    use super::*;
    use cryptoscope_measure::ScriptedTimer;
    use cryptoscope_testkit::Samples;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    const PLAN: DudectPlan = DudectPlan {
        samples: 20_000,
        budget: Duration::from_secs(3600),
        cold: false,
        record: None,
    };

    /// Runs the worker's loop over `classes` with a call whose cost is `model(input)` plus
    /// noise (sd 40 ticks) and, one call in fifty, a preemption of 3,000 ticks on average.
    fn run(
        classes: Classes,
        seed: u64,
        model: impl Fn(&[u8], u64) -> f64 + 'static,
    ) -> cryptoscope_measure::ttest::TResult {
        // The call sets its cost; the timer reads it as the region ends.
        let cost = Rc::new(Cell::new(0.0));
        let noise = Rc::new(RefCell::new(Samples::new(seed)));
        let (c, calls) = (cost.clone(), Rc::new(Cell::new(0u64)));
        let mut call: Call = Box::new(move |input: &mut [u8]| {
            let k = calls.get();
            calls.set(k + 1);
            let extra = noise.borrow_mut().timing(0.0, 40.0, 0.02, 3000.0);
            c.set(model(input, k) + extra);
            Ok(())
        });
        let timer = ScriptedTimer::new(move || cost.get());
        let (r, _) = measure_classes(&classes, &mut call, &PLAN, &timer, seed).unwrap();
        assert_eq!(r.samples, PLAN.samples, "every planned call measured");
        r
    }

    /// Pseudo-random 16-byte inputs for the random class.
    fn pool(seed: u64) -> Vec<Vec<u8>> {
        let mut g = Samples::new(seed);
        (0..64)
            .map(|_| (0..16).map(|_| (g.uniform() * 256.0) as u8).collect())
            .collect()
    }

    /// The testbed's tag compare (crates/providers/testbed): bytes compared until the
    /// first difference against the valid tag, about 2 ticks each, on a 5,500-tick open.
    fn early_exit(valid: &[u8], input: &[u8]) -> f64 {
        let same = valid.iter().zip(input).take_while(|(a, b)| a == b).count();
        5500.0 + 2.0 * (same + 1).min(valid.len()) as f64
    }

    #[test]
    fn an_early_exit_compare_is_flagged_and_the_constant_one_is_not() {
        for seed in 1..=5 {
            let valid: Vec<u8> = (0..16).collect();
            // dudect's forged-tag classes: the last byte flipped (all 16 compared) against
            // random tags (one compare, mostly).
            let mut fixed = valid.clone();
            fixed[15] ^= 0x80;
            let v = valid.clone();
            let leaky = run(Classes::new(fixed.clone(), pool(seed)), seed, move |t, _| {
                early_exit(&v, t)
            });
            assert!(leaky.leak, "seed {seed}: the early exit missed: {leaky:?}");
            assert!(leaky.mean_fixed > leaky.mean_random, "seed {seed}: {leaky:?}");
            let constant = run(Classes::new(fixed, pool(seed)), seed, |_, _| 5500.0 + 32.0);
            assert!(
                !constant.leak,
                "seed {seed}: a constant-time compare flagged: {constant:?}"
            );
        }
    }

    #[test]
    fn a_secret_indexed_table_is_flagged_and_a_bitsliced_cipher_is_not() {
        // A table strategy's time grows with the distinct cache lines its input touches
        // (16 entries per line, cold): one fixed all-zero block (one line) against random
        // blocks (up to 16 lines).
        for seed in 1..=5 {
            let table = |b: &[u8], _: u64| {
                let mut lines: Vec<u8> = b.iter().map(|x| x >> 4).collect();
                lines.sort_unstable();
                lines.dedup();
                900.0 + 60.0 * lines.len() as f64
            };
            let t = run(Classes::new(vec![0u8; 16], pool(seed)), seed, table);
            assert!(t.leak, "seed {seed}: {t:?}");
            let b = run(Classes::new(vec![0u8; 16], pool(seed)), seed, |_, _| 1400.0);
            assert!(!b.leak, "seed {seed}: {b:?}");
        }
    }

    /// A recording of `ct-dudect --record` (fixtures/dudect/README.md): (class, time).
    fn recording(name: &str) -> Vec<(usize, f64)> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/dudect")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(|l| {
                let (c, t) = l.split_once(' ').expect("CLASS TIME");
                (c.parse().unwrap(), t.parse().unwrap())
            })
            .collect()
    }

    /// The calibration pairs as timed once on a real machine: the analysis flags the
    /// early-exit compare and the table strategy, and not their constant-time fixes. (What
    /// each must give comes from how the code is written; the recording only fixes the
    /// samples, so the verdict no longer depends on the machine the test runs on.)
    #[test]
    fn recorded_timings_of_the_calibration_pairs() {
        for (file, leak) in [
            ("early-exit-hash.txt", true),
            ("constant-compare-hash.txt", false),
            ("gift64-table-encrypt-cold.txt", true),
            ("gift64-fixsliced-encrypt-cold.txt", false),
        ] {
            let samples = recording(file);
            assert_eq!(samples.len(), 10_000, "{file}");
            let mut l = Leakage::new();
            for (class, t) in samples {
                l.push(class, t);
            }
            let r = l.result();
            assert_eq!(r.leak, leak, "{file}: {r:?}");
        }
    }

    #[test]
    fn a_neighbour_slowing_the_machine_is_not_a_leak() {
        // The classes are interleaved at random, so a stretch of slow calls (a neighbour,
        // frequency scaling) lands on both: a constant-time operation stays clean.
        for seed in 1..=5 {
            let r = run(Classes::new(vec![0u8; 16], pool(seed)), seed, |_, k| {
                if (5_000..9_000).contains(&k) {
                    3000.0
                } else {
                    2000.0 + (k as f64) * 0.01 // and a slow drift
                }
            });
            assert!(!r.leak, "seed {seed}: {r:?}");
        }
    }

    #[test]
    fn a_difference_in_spread_alone_is_found() {
        // Same mean, but the fixed input's time varies ten times as much (a data-dependent
        // number of rounds around the same average): the second-order test sees it.
        for seed in 1..=5 {
            let g = RefCell::new(Samples::new(seed ^ 0xabc));
            let r = run(Classes::new(vec![0u8; 16], pool(seed)), seed, move |x, _| {
                let sd = if x == [0u8; 16] { 400.0 } else { 40.0 };
                3000.0 + sd * g.borrow_mut().normal()
            });
            assert!(r.leak, "seed {seed}: {r:?}");
        }
    }
}
