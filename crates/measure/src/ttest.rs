//! Welch's t-test between two classes of timings, the statistic of dudect (Reparaz, Balasch
//! and Verbauwhede, "Dude, is my code constant time?", DATE 2017).
//!
//! Timings of one operation are collected for two classes of secret input, a fixed value
//! and fresh random values, interleaved in random order so that drift of the machine falls
//! on both alike. If the operation's time does not depend on the secret, the two means are
//! equal and Welch's t stays small; |t| above 4.5 rejects equality with overwhelming
//! confidence (dudect's threshold). As in dudect, the test also runs on the samples below
//! a series of percentiles of the pilot data ("cropping"), because a leak can hide under
//! heavy-tailed noise, and on the centred squares of cropped samples (second order), and
//! the largest |t| is reported with its sample counts.
//!
//! The second-order test centres each class on its own mean over all its samples, from
//! central moments kept in one pass (Schneider and Moradi, "Leakage Assessment
//! Methodology", CHES 2015, §4; the update formulas are Pébay's, Sandia report
//! SAND2008-6212). Centring on means estimated early in the run instead turns any later
//! drift of the machine into a difference between the classes: the two early estimates
//! differ by their sampling error, and a shift of the whole distribution multiplies it.

use serde::{Deserialize, Serialize};

/// dudect's decision threshold on |t|.
pub const THRESHOLD: f64 = 4.5;

/// Running mean and variance of one class (Welford's method).
#[derive(Debug, Clone, Copy, Default)]
pub struct Moments {
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    pub fn mean(&self) -> f64 {
        self.mean
    }
    /// Sample variance (n − 1 in the denominator).
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.m2 / (self.n - 1) as f64
        }
    }
}

/// Running central moments of one class up to the fourth (one pass; Pébay's update of
/// the second, third and fourth central sums).
#[derive(Debug, Clone, Copy, Default)]
pub struct CentralMoments {
    n: u64,
    mean: f64,
    m2: f64,
    m3: f64,
    m4: f64,
}

impl CentralMoments {
    pub fn push(&mut self, x: f64) {
        let n1 = self.n as f64;
        self.n += 1;
        let n = self.n as f64;
        let delta = x - self.mean;
        let dn = delta / n;
        let dn2 = dn * dn;
        let term = delta * dn * n1;
        self.mean += dn;
        self.m4 += term * dn2 * (n * n - 3.0 * n + 3.0) + 6.0 * dn2 * self.m2 - 4.0 * dn * self.m3;
        self.m3 += term * dn * (n - 2.0) - 3.0 * dn * self.m2;
        self.m2 += term;
    }

    /// The class's samples as the second-order test sees them, (x − mean)², summarised
    /// as moments: their mean is the second central moment, their variance the fourth
    /// central moment minus the square of the second.
    pub fn squared_deviations(&self) -> Moments {
        if self.n == 0 {
            return Moments::default();
        }
        let n = self.n as f64;
        let cm2 = self.m2 / n;
        let var = (self.m4 / n - cm2 * cm2).max(0.0);
        Moments {
            n: self.n,
            mean: cm2,
            // Moments keeps the sum of squared deviations with n − 1 as the divisor.
            m2: var * n,
        }
    }
}

/// Welch's t statistic of two classes; 0 when either has fewer than two samples or both
/// have zero variance and equal means.
pub fn welch_t(a: &Moments, b: &Moments) -> f64 {
    if a.n < 2 || b.n < 2 {
        return 0.0;
    }
    let se = (a.variance() / a.n as f64 + b.variance() / b.n as f64).sqrt();
    if se == 0.0 {
        return if a.mean() == b.mean() { 0.0 } else { f64::INFINITY };
    }
    (a.mean() - b.mean()) / se
}

/// One of the tests of a [`Leakage`] analysis.
#[derive(Debug, Clone, Copy)]
struct Test {
    /// Samples above this are left out (f64::INFINITY: none).
    crop: f64,
    /// Second order: the test is on (x − class mean)² of cropped samples, each class
    /// centred on its own mean over all its cropped samples (`central`).
    second_order: bool,
    classes: [Moments; 2],
    central: [CentralMoments; 2],
}

impl Test {
    /// The two classes as the test compares them.
    fn pair(&self) -> [Moments; 2] {
        if self.second_order {
            [
                self.central[0].squared_deviations(),
                self.central[1].squared_deviations(),
            ]
        } else {
            self.classes
        }
    }
}

/// The outcome, for reports and the store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TResult {
    /// Largest |t| over all tests.
    pub max_t: f64,
    /// Which test gave it: "uncropped", "cropped below p.. percentile", "second order ...".
    pub test: String,
    /// Samples of each class in that test (fixed, random).
    pub n_fixed: u64,
    pub n_random: u64,
    /// Samples measured in all (both classes, before cropping).
    pub samples: u64,
    /// Means of each class in the uncropped test (same unit as the input).
    pub mean_fixed: f64,
    pub mean_random: f64,
    /// |t| > 4.5.
    pub leak: bool,
}

/// The dudect analysis over a stream of (class, timing) pairs. Class 0 is the fixed input,
/// class 1 the random input.
pub struct Leakage {
    pilot: Vec<(usize, f64)>,
    tests: Vec<Test>,
    samples: u64,
}

/// Samples kept to set the crop thresholds before testing starts.
const PILOT: usize = 1000;
/// Crop thresholds: dudect's 1 − 0.5^(10·(i+1)/N) percentiles, N of them.
const CROPS: usize = 20;

impl Default for Leakage {
    fn default() -> Self {
        Leakage::new()
    }
}

impl Leakage {
    pub fn new() -> Leakage {
        Leakage {
            pilot: Vec::with_capacity(PILOT),
            tests: Vec::new(),
            samples: 0,
        }
    }

    /// Adds one timing of class 0 (fixed) or 1 (random).
    pub fn push(&mut self, class: usize, x: f64) {
        assert!(class < 2, "two classes");
        self.samples += 1;
        if self.tests.is_empty() {
            self.pilot.push((class, x));
            if self.pilot.len() == PILOT {
                self.start_tests();
            }
            return;
        }
        self.feed(class, x);
    }

    fn start_tests(&mut self) {
        let mut sorted: Vec<f64> = self.pilot.iter().map(|p| p.1).collect();
        sorted.sort_by(f64::total_cmp);
        let test = |crop: f64, second_order: bool| Test {
            crop,
            second_order,
            classes: Default::default(),
            central: Default::default(),
        };
        let mut tests = vec![test(f64::INFINITY, false)];
        for i in 0..CROPS {
            let p = 1.0 - 0.5f64.powf(10.0 * (i + 1) as f64 / CROPS as f64);
            let idx = ((p * sorted.len() as f64) as usize).min(sorted.len() - 1);
            tests.push(test(sorted[idx], false));
        }
        // Second order on the samples below the median (the spikes above it would dominate
        // the squares).
        tests.push(test(sorted[sorted.len() / 2], true));
        self.tests = tests;
        let pilot = std::mem::take(&mut self.pilot);
        for (c, x) in pilot {
            self.feed(c, x);
        }
    }

    fn feed(&mut self, class: usize, x: f64) {
        for t in &mut self.tests {
            if x > t.crop {
                continue;
            }
            if t.second_order {
                t.central[class].push(x);
            } else {
                t.classes[class].push(x);
            }
        }
    }

    /// The largest |t| so far (tests with fewer than 100 samples per class are ignored,
    /// as dudect does). Before the pilot is complete, an uncropped test over the pilot.
    pub fn result(&self) -> TResult {
        if self.tests.is_empty() {
            let mut m = [Moments::default(); 2];
            for &(c, x) in &self.pilot {
                m[c].push(x);
            }
            let t = welch_t(&m[0], &m[1]);
            return TResult {
                max_t: t.abs(),
                test: "uncropped (pilot only)".into(),
                n_fixed: m[0].n,
                n_random: m[1].n,
                samples: self.samples,
                mean_fixed: m[0].mean(),
                mean_random: m[1].mean(),
                leak: t.abs() > THRESHOLD,
            };
        }
        let uncropped = &self.tests[0];
        let mut best = (0.0f64, 0usize);
        for (i, t) in self.tests.iter().enumerate() {
            let [a, b] = t.pair();
            if a.n < 100 || b.n < 100 {
                continue;
            }
            let v = welch_t(&a, &b).abs();
            if v > best.0 {
                best = (v, i);
            }
        }
        let t = &self.tests[best.1];
        let [a, b] = t.pair();
        let what = match (best.1, t.second_order) {
            (0, _) => "uncropped".to_string(),
            (_, true) => "second order, below the median".to_string(),
            (i, false) => format!(
                "cropped at the {:.1}th percentile",
                100.0 * (1.0 - 0.5f64.powf(10.0 * i as f64 / CROPS as f64))
            ),
        };
        TResult {
            max_t: best.0,
            test: what,
            n_fixed: a.n,
            n_random: b.n,
            samples: self.samples,
            mean_fixed: uncropped.classes[0].mean(),
            mean_random: uncropped.classes[1].mean(),
            leak: best.0 > THRESHOLD,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_by_hand() {
        // Means 2 and 5, variances 1 and 1, n = 3 each: t = −3 / √(1/3 + 1/3) = −3.674…
        let mut a = Moments::default();
        let mut b = Moments::default();
        [1.0, 2.0, 3.0].iter().for_each(|&x| a.push(x));
        [4.0, 5.0, 6.0].iter().for_each(|&x| b.push(x));
        assert!((a.variance() - 1.0).abs() < 1e-12);
        let t = welch_t(&a, &b);
        assert!((t + 3.0 / (2.0f64 / 3.0).sqrt()).abs() < 1e-12, "{t}");
        // Unequal sizes and variances: a = {0, 10} (mean 5, var 50), b = {1, 2, 3, 4, 5}
        // (mean 3, var 2.5): t = 2 / √(25 + 0.5) = 0.39605…
        let mut a = Moments::default();
        let mut b = Moments::default();
        [0.0, 10.0].iter().for_each(|&x| a.push(x));
        [1.0, 2.0, 3.0, 4.0, 5.0].iter().for_each(|&x| b.push(x));
        assert!((welch_t(&a, &b) - 2.0 / 25.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn central_moments_by_hand() {
        // {1, 2, 3, 4}: mean 2.5, deviations ±0.5 and ±1.5; second central moment
        // (0.25·2 + 2.25·2)/4 = 1.25, fourth (0.0625·2 + 5.0625·2)/4 = 2.5625, third 0.
        let mut c = CentralMoments::default();
        [1.0, 2.0, 3.0, 4.0].iter().for_each(|&x| c.push(x));
        assert!((c.mean - 2.5).abs() < 1e-12);
        assert!((c.m2 / 4.0 - 1.25).abs() < 1e-12);
        assert!(c.m3.abs() < 1e-12);
        assert!((c.m4 / 4.0 - 2.5625).abs() < 1e-12);
        // The squared deviations {2.25, 0.25, 0.25, 2.25}: mean 1.25, sample variance
        // (1 + 1 + 1 + 1)/3.
        let q = c.squared_deviations();
        assert_eq!(q.n, 4);
        assert!((q.mean() - 1.25).abs() < 1e-12);
        assert!((q.variance() - 4.0 / 3.0).abs() < 1e-12);
        // Skewed, pushed in another order: {4, 0, 0, 0}: mean 1, deviations 3, −1, −1, −1;
        // central moments 12/4 = 3, 24/4 = 6 and 84/4 = 21.
        let mut c = CentralMoments::default();
        [4.0, 0.0, 0.0, 0.0].iter().for_each(|&x| c.push(x));
        assert!((c.m2 / 4.0 - 3.0).abs() < 1e-12);
        assert!((c.m3 / 4.0 - 6.0).abs() < 1e-12);
        assert!((c.m4 / 4.0 - 21.0).abs() < 1e-12);
    }

    #[test]
    fn a_shift_of_both_classes_after_the_pilot_is_not_a_leak() {
        // Both classes alike, but the first 1,000 calls (the pilot) ran 300 units slower
        // than the rest, as a worker's first calls can. Centring the second-order test on
        // means taken from the pilot made this a 'leak' (the classes' pilot means differ by
        // their sampling error, which the shift multiplies).
        for seed in [1u64, 2, 3, 4, 5, 6, 7, 8] {
            let mut r = Rng(0x2545f4914f6cdd1d ^ seed);
            let mut l = Leakage::new();
            for i in 0..60_000u64 {
                let class = (r.next() < 0.5) as usize;
                let slow = if i < PILOT as u64 { 300.0 } else { 0.0 };
                l.push(class, 1000.0 + slow + 100.0 * r.next());
            }
            let res = l.result();
            assert!(!res.leak, "seed {seed}: {res:?}");
        }
    }

    /// A small xorshift generator: noise for the tests below (no expected value depends on
    /// its exact output, only on its distribution).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        /// Heavy-tailed noise: mostly uniform, sometimes a large spike (an interrupt).
        fn noise(&mut self) -> f64 {
            let spike = if self.next() < 0.01 { 5000.0 * self.next() } else { 0.0 };
            100.0 * self.next() + spike
        }
    }

    #[test]
    fn equal_distributions_stay_below_the_threshold() {
        let mut r = Rng(0x9e3779b97f4a7c15);
        let mut l = Leakage::new();
        for i in 0..50_000 {
            l.push(i % 2, 1000.0 + r.noise());
        }
        let res = l.result();
        assert!(!res.leak, "{res:?}");
        assert_eq!(res.samples, 50_000);
    }

    #[test]
    fn a_small_shift_under_heavy_noise_is_found() {
        // Class 1 is 3 units slower: 3 % of the uniform noise's range, far below the spikes.
        let mut r = Rng(12345);
        let mut l = Leakage::new();
        for i in 0..50_000 {
            let c = i % 2;
            l.push(c, 1000.0 + 3.0 * c as f64 + r.noise());
        }
        let res = l.result();
        assert!(res.leak, "{res:?}");
    }

    #[test]
    fn a_difference_in_spread_alone_is_found() {
        // Same mean, class 1 twice as spread out.
        let mut r = Rng(777);
        let mut l = Leakage::new();
        for i in 0..40_000 {
            let c = i % 2;
            let u = r.next() - 0.5;
            l.push(c, 1000.0 + u * 100.0 * (1 + c) as f64);
        }
        let res = l.result();
        // Cropping turns a difference in spread into one of means, so either kind of test
        // may be the one that finds it.
        assert!(res.leak, "{res:?}");
    }
}
