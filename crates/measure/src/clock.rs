//! Clocks: what a "cycle" means in a result, and how it was read.
//!
//! Sources, best first:
//! 1. `PerfCoreCycles` — real core cycles from the PMU via `perf_event_open`.
//! 2. `Tsc` — the time-stamp counter, read with `lfence; rdtsc` before and `rdtscp` after
//!    the measured code (after Paoloni 2010, "How to Benchmark Code Execution Times on
//!    Intel IA-32 and IA-64", with `lfence` in place of the `cpuid` that traps to the
//!    hypervisor in a VM). These are
//!    *reference* cycles at the TSC's constant frequency, not core cycles; we calibrate
//!    that frequency and report it.
//! 3. `GenericTimer` — on AArch64, the architected generic timer's virtual count
//!    (`CNTVCT_EL0`, read after an `isb`) at the rate the firmware states (`CNTFRQ_EL0`,
//!    commonly 24 MHz to 1 GHz): ticks of a constant-rate clock, like the TSC's reference
//!    cycles, and like them labelled as what they are.
//! 4. `Nanoseconds` — `CLOCK_MONOTONIC` only, elsewhere.
//!
//! Nanoseconds are always available: from the TSC at its calibrated frequency on x86_64,
//! from the generic timer on AArch64, from `CLOCK_MONOTONIC` elsewhere. The timer's own overhead (an empty measurement) is
//! measured once per clock and subtracted from every sample by the sampler.
//!
//! This module holds the only `unsafe` timing intrinsics in the project; it must never
//! allocate or take locks between `start` and `stop`.

use serde::{Deserialize, Serialize};

use crate::perf::CycleCounter;

/// Where the `*_cycles` figures of a result come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CycleSource {
    /// Core cycles counted by the PMU (`perf_event_open`, user mode only).
    PerfCoreCycles,
    /// Reference cycles of the constant-rate TSC (`rdtsc`/`rdtscp` with `lfence`).
    TscReferenceCycles,
    /// Ticks of AArch64's generic timer (`CNTVCT_EL0` at `CNTFRQ_EL0`).
    GenericTimerTicks,
    /// No cycle counter: `*_cycles` figures are absent, only nanoseconds are reported.
    MonotonicNs,
}

impl CycleSource {
    /// Short human label.
    pub fn label(self) -> &'static str {
        match self {
            CycleSource::PerfCoreCycles => "core cycles (perf)",
            CycleSource::TscReferenceCycles => "TSC reference cycles",
            CycleSource::GenericTimerTicks => "generic timer ticks (CNTVCT_EL0)",
            CycleSource::MonotonicNs => "CLOCK_MONOTONIC ns",
        }
    }
}

/// Which clock the caller wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChoice {
    /// Best available: PMU core cycles, else TSC, else nanoseconds.
    Auto,
    /// Force the TSC (reference cycles) even if a PMU is present.
    Tsc,
}

/// A reading at one instant: the cycle counter and the time base (TSC ticks or ns).
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    cycles: u64,
    time: u64,
}

/// The time base stamps are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Tsc,
    GenericTimer,
    Monotonic,
}

/// A calibrated clock.
#[derive(Debug)]
pub struct Clock {
    source: CycleSource,
    base: Base,
    // Read on the architectures with a cycle counter path (x86-64, AArch64) only.
    #[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
    counter: Option<CycleCounter>,
    /// Why the PMU is not used (kernel's reason), when it is not.
    perf_status: String,
    /// Ticks of the time base per second (TSC frequency, or 1e9 for ns).
    time_hz: f64,
    overhead_cycles: f64,
    overhead_time: f64,
}

#[cfg(target_arch = "x86_64")]
mod tsc {
    use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

    /// Reads the TSC at the start of a measured region: `lfence` makes earlier instructions
    /// complete first. No second fence: on our VMs it adds ~20 cycles to every sample, and
    /// a measured operation starting a few cycles early is absorbed by the overhead
    /// correction, which measures exactly this pair.
    #[inline(always)]
    pub fn start() -> u64 {
        // SAFETY: lfence/rdtsc have no memory effects; x86_64 always has SSE2 and TSC.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }

    /// Reads the TSC at the end: `rdtscp` waits for the measured code to finish.
    #[inline(always)]
    pub fn stop() -> u64 {
        let mut aux = 0u32;
        // SAFETY: as above; `aux` receives IA32_TSC_AUX.
        unsafe { __rdtscp(&mut aux) }
    }

    /// Whether `rdtscp` exists (CPUID.80000001H:EDX[27]).
    pub fn has_rdtscp() -> bool {
        core::arch::x86_64::__cpuid(0x8000_0001).edx & (1 << 27) != 0
    }
}

#[cfg(target_arch = "aarch64")]
mod timer {
    /// The generic timer's virtual count; the `isb` makes earlier instructions complete
    /// before it is read, at the start and the end of a region alike.
    #[inline(always)]
    pub fn read() -> u64 {
        let v: u64;
        // SAFETY: reads a system register user space may read (the kernel enables EL0
        // access to CNTVCT_EL0 on Linux); no memory is touched.
        unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack)) };
        v
    }

    /// Its rate in Hz, as the firmware set `CNTFRQ_EL0`.
    pub fn frequency() -> u64 {
        let f: u64;
        // SAFETY: as above.
        unsafe { core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack)) };
        f
    }
}

/// The AArch64 generic timer's rate (`CNTFRQ_EL0`, Hz); `None` elsewhere or when the
/// firmware left it at zero.
pub fn generic_timer_hz() -> Option<f64> {
    #[cfg(target_arch = "aarch64")]
    {
        Some(timer::frequency() as f64).filter(|f| *f > 0.0)
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        None
    }
}

/// Core clock cycles per TSC tick, estimated without performance counters: a chain of
/// 20 million dependent register-register additions (one cycle of latency each on every
/// x86-64 core; unlike `add reg, imm` chains, which recent Intel cores fold at rename) is
/// timed with the TSC, seven times after a warm-up, and the median ratio returned.
/// Multiplying TSC reference cycles by it gives (estimated) core cycles: on a machine
/// whose core runs at 2.6 GHz against a 2.0 GHz TSC it is about 1.3. `None` off x86-64.
pub fn core_cycles_per_tick() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const ADDS: u64 = 20_000_000;
        let trial = || {
            let (mut x, mut n) = (1u64, ADDS);
            let t0 = tsc::start();
            // SAFETY: register arithmetic and a loop on the two operands only; no memory,
            // no stack. `n` is a multiple of 8, so the loop ends at zero.
            unsafe {
                core::arch::asm!(
                    "2:",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "add {x}, {x}",
                    "sub {n}, 8",
                    "jnz 2b",
                    x = inout(reg) x,
                    n = inout(reg) n,
                    options(nomem, nostack)
                );
            }
            let t1 = tsc::stop();
            std::hint::black_box((x, n));
            ADDS as f64 / t1.saturating_sub(t0).max(1) as f64
        };
        trial();
        let mut r: Vec<f64> = (0..7).map(|_| trial()).collect();
        r.sort_by(f64::total_cmp);
        Some(r[3])
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Clock {
    /// Builds and calibrates a clock (≈0.15 s: TSC frequency and timer overhead).
    pub fn new(choice: ClockChoice) -> Clock {
        Clock::with_tsc_hz(choice, None)
    }

    /// Builds a clock; a TSC frequency calibrated earlier (by the parent process on the same
    /// machine) can be passed in to skip recalibration.
    pub fn with_tsc_hz(choice: ClockChoice, known_tsc_hz: Option<f64>) -> Clock {
        let perf = if choice == ClockChoice::Auto {
            CycleCounter::open()
        } else {
            Err("not requested (--clock tsc)".into())
        };
        let perf_status = match &perf {
            Ok(_) => "available".to_string(),
            Err(e) => format!("not supported: {e}"),
        };
        let have_tsc = cfg!(target_arch = "x86_64") && tsc_usable();
        let timer_hz = generic_timer_hz();
        let base = if have_tsc {
            Base::Tsc
        } else if timer_hz.is_some() {
            Base::GenericTimer
        } else {
            Base::Monotonic
        };
        let (source, counter) = match (perf, base) {
            (Ok(c), _) => (CycleSource::PerfCoreCycles, Some(c)),
            (Err(_), Base::Tsc) => (CycleSource::TscReferenceCycles, None),
            (Err(_), Base::GenericTimer) => (CycleSource::GenericTimerTicks, None),
            (Err(_), Base::Monotonic) => (CycleSource::MonotonicNs, None),
        };
        let time_hz = match (base, known_tsc_hz) {
            (Base::Tsc, Some(hz)) if hz > 0.0 => hz,
            (Base::Tsc, _) => calibrate_tsc_hz(),
            (Base::GenericTimer, _) => timer_hz.unwrap_or(1e9),
            (Base::Monotonic, _) => 1e9,
        };
        let mut clock = Clock {
            source,
            base,
            counter,
            perf_status,
            time_hz,
            overhead_cycles: 0.0,
            overhead_time: 0.0,
        };
        let (oc, ot) = clock.measure_overhead();
        clock.overhead_cycles = oc;
        clock.overhead_time = ot;
        clock
    }

    /// The source of cycle figures.
    pub fn source(&self) -> CycleSource {
        self.source
    }

    /// "available" or "not supported: REASON" (the kernel's reason) for the PMU.
    pub fn perf_status(&self) -> &str {
        &self.perf_status
    }

    /// Calibrated TSC frequency in Hz, if the time base is the TSC.
    pub fn tsc_hz(&self) -> Option<f64> {
        (self.base == Base::Tsc).then_some(self.time_hz)
    }

    /// The generic timer's rate in Hz, if the time base is AArch64's generic timer.
    pub fn timer_hz(&self) -> Option<f64> {
        (self.base == Base::GenericTimer).then_some(self.time_hz)
    }

    /// Median cost of an empty measurement, in cycles of `source()`.
    pub fn overhead_cycles(&self) -> f64 {
        self.overhead_cycles
    }

    /// Median cost of an empty measurement, in nanoseconds.
    pub fn overhead_ns(&self) -> f64 {
        self.overhead_time * 1e9 / self.time_hz
    }

    /// Reads the clock at the start of a measured region.
    #[inline(always)]
    pub fn start(&self) -> Stamp {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(c) = &self.counter {
                let cycles = c.read();
                return Stamp {
                    cycles,
                    time: tsc::start(),
                };
            }
            if self.base == Base::Tsc {
                let t = tsc::start();
                return Stamp { cycles: t, time: t };
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.base == Base::GenericTimer {
                if let Some(c) = &self.counter {
                    let cycles = c.read();
                    return Stamp {
                        cycles,
                        time: timer::read(),
                    };
                }
                let t = timer::read();
                return Stamp { cycles: t, time: t };
            }
        }
        let t = monotonic_ns();
        Stamp { cycles: t, time: t }
    }

    /// Reads the clock at the end of a measured region.
    #[inline(always)]
    pub fn stop(&self) -> Stamp {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(c) = &self.counter {
                let time = tsc::stop();
                return Stamp { cycles: c.read(), time };
            }
            if self.base == Base::Tsc {
                let t = tsc::stop();
                return Stamp { cycles: t, time: t };
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.base == Base::GenericTimer {
                let time = timer::read();
                let cycles = self.counter.as_ref().map_or(time, |c| c.read());
                return Stamp { cycles, time };
            }
        }
        let t = monotonic_ns();
        Stamp { cycles: t, time: t }
    }

    /// Raw (cycles, time-base ticks) between two stamps, before overhead correction.
    #[inline(always)]
    pub fn elapsed(&self, a: Stamp, b: Stamp) -> (u64, u64) {
        (b.cycles.wrapping_sub(a.cycles), b.time.wrapping_sub(a.time))
    }

    /// Converts time-base ticks to nanoseconds.
    pub fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks * 1e9 / self.time_hz
    }

    /// Overhead in time-base ticks.
    pub fn overhead_ticks(&self) -> f64 {
        self.overhead_time
    }

    /// Median of 20,000 empty measurements after a warm-up: the constant the sampler
    /// subtracts from every sample (criterion.rs and SUPERCOP do the same).
    fn measure_overhead(&self) -> (f64, f64) {
        const N: usize = 20_000;
        let mut cyc = Vec::with_capacity(N);
        let mut tim = Vec::with_capacity(N);
        for i in 0..(N + 2_000) {
            let a = self.start();
            let b = self.stop();
            if i >= 2_000 {
                let (c, t) = self.elapsed(a, b);
                cyc.push(c as f64);
                tim.push(t as f64);
            }
        }
        (crate::stats::median(&mut cyc), crate::stats::median(&mut tim))
    }
}

#[cfg(target_arch = "x86_64")]
fn tsc_usable() -> bool {
    tsc::has_rdtscp()
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_usable() -> bool {
    false
}

/// TSC ticks per second, from three 40 ms windows against `CLOCK_MONOTONIC`; the median
/// of the three is kept. A constant, invariant TSC (`constant_tsc`, `nonstop_tsc`) is
/// assumed and reported by the environment capture.
fn calibrate_tsc_hz() -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::time::{Duration, Instant};
        let mut rates = Vec::new();
        for _ in 0..3 {
            let t0 = Instant::now();
            let c0 = tsc::start();
            while t0.elapsed() < Duration::from_millis(40) {
                std::hint::spin_loop();
            }
            let c1 = tsc::stop();
            let dt = t0.elapsed().as_secs_f64();
            rates.push((c1 - c0) as f64 / dt);
        }
        crate::stats::median(&mut rates)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn tsc_frequency_is_plausible_and_overhead_small() {
        let c = Clock::new(ClockChoice::Tsc);
        if let Some(hz) = c.tsc_hz() {
            assert!(hz > 1e8 && hz < 1e10, "tsc {hz}");
            assert_eq!(c.source(), CycleSource::TscReferenceCycles);
            // An empty measurement is a few dozen cycles; 10,000 would mean a trap.
            assert!(c.overhead_cycles() < 10_000.0, "{}", c.overhead_cycles());
        } else {
            cryptoscope_testkit::skip("no usable TSC on this machine");
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_core_clock_estimate_is_a_plausible_ratio() {
        // Plumbing only: an estimate arrives and is a positive ratio. How plausible it is
        // depends on the machine and its load (a 1-6 GHz core against a 1-4 GHz TSC gives
        // 0.25-6; `cryptoscope env` shows it), so no range is asserted here.
        let r = core_cycles_per_tick().expect("x86-64 has an estimate");
        assert!(r.is_finite() && r > 0.0, "{r}");
    }

    #[test]
    fn elapsed_grows_with_work() {
        let c = Clock::new(ClockChoice::Tsc);
        let a = c.start();
        std::thread::sleep(Duration::from_millis(5));
        let b = c.stop();
        let (_, t) = c.elapsed(a, b);
        let ns = c.ticks_to_ns(t as f64);
        assert!(ns >= 4.0e6, "slept 5 ms, measured {ns} ns");
    }

    /// On AArch64 the generic timer is the time base, at the rate CNTFRQ_EL0 states (the
    /// architecture leaves it to the firmware: 1 MHz to a few GHz covers every part).
    #[test]
    #[cfg(target_arch = "aarch64")]
    fn the_generic_timer_is_the_time_base() {
        let c = Clock::new(ClockChoice::Tsc);
        assert_eq!(c.source(), CycleSource::GenericTimerTicks);
        let hz = c.timer_hz().expect("CNTFRQ_EL0 is set");
        assert!((1e6..1e10).contains(&hz), "{hz}");
        assert_eq!(c.tsc_hz(), None);
    }

    #[test]
    fn perf_status_is_explicit() {
        let c = Clock::new(ClockChoice::Auto);
        match c.source() {
            CycleSource::PerfCoreCycles => assert_eq!(c.perf_status(), "available"),
            _ => assert!(c.perf_status().starts_with("not supported: "), "{}", c.perf_status()),
        }
    }
}
