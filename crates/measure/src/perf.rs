//! Hardware cycle counting through `perf_event_open(2)`.
//!
//! Real core cycles are the best clock a machine offers, but many virtual machines (ours
//! included) expose no PMU. This module only opens and reads a counter; when the kernel
//! refuses, it returns the kernel's reason so that callers can report "not supported: ..."
//! instead of a zero. It must never pretend a counter exists.

use std::io;

/// A user-space-only counter of one perf event for the calling thread.
#[derive(Debug)]
pub struct CycleCounter {
    fd: libc::c_int,
}

/// Any perf event counter (the type is the same; the name says what it counts).
pub type Counter = CycleCounter;

const PERF_TYPE_SOFTWARE: u32 = 1;

/// The events `--counters` accepts: perf(1)'s names, `perf_event_open(2)` type and config.
pub const EVENTS: &[(&str, u32, u64)] = &[
    ("cycles", PERF_TYPE_HARDWARE, 0),
    ("instructions", PERF_TYPE_HARDWARE, 1),
    ("cache-references", PERF_TYPE_HARDWARE, 2),
    ("cache-misses", PERF_TYPE_HARDWARE, 3),
    ("branches", PERF_TYPE_HARDWARE, 4),
    ("branch-misses", PERF_TYPE_HARDWARE, 5),
    ("task-clock", PERF_TYPE_SOFTWARE, 1),
    ("page-faults", PERF_TYPE_SOFTWARE, 2),
    ("context-switches", PERF_TYPE_SOFTWARE, 3),
    ("cpu-migrations", PERF_TYPE_SOFTWARE, 4),
    ("minor-faults", PERF_TYPE_SOFTWARE, 5),
    ("major-faults", PERF_TYPE_SOFTWARE, 6),
];

// Constants from <linux/perf_event.h>.
const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
/// Bits in the attr flags word: disabled(0) inherit(1) pinned(2) exclusive(3)
/// exclude_user(4) exclude_kernel(5) exclude_hv(6).
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;

/// `struct perf_event_attr` up to PERF_ATTR_SIZE_VER5 (112 bytes); the remaining fields
/// are zero, which the kernel accepts for a simple counting event.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
}

impl CycleCounter {
    /// Opens a counter of core cycles in user mode for this thread on any CPU.
    ///
    /// Returns the kernel's reason when it refuses (no PMU in a VM, `perf_event_paranoid`,
    /// seccomp), e.g. "No such file or directory (os error 2)".
    pub fn open() -> Result<Self, String> {
        Self::open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)
    }

    /// Opens the event of that perf name (see [`EVENTS`]); `Err` carries the kernel's
    /// reason, or "unknown event" for a name not in the list.
    pub fn open_named(name: &str) -> Result<Self, String> {
        let &(_, type_, config) = EVENTS
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| format!("unknown event `{name}`"))?;
        Self::open_event(type_, config)
    }

    /// Opens any counting event (`type`, `config` as in `perf_event_open(2)`) for this
    /// thread, user mode only; a hardware event must be seen to advance.
    fn open_event(type_: u32, config: u64) -> Result<Self, String> {
        // Under qemu-user the counters would be the host's, counting the emulator.
        if let Some(e) = crate::emulation::detect() {
            return Err(format!("switched off under emulation ({e})"));
        }
        let mut attr = PerfEventAttr {
            type_,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config,
            flags: FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            ..Default::default()
        };
        // SAFETY: `attr` is a valid, fully initialised perf_event_attr of the size we
        // declare; the syscall does not retain the pointer.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &mut attr as *mut PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                0 as libc::c_ulong,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error().to_string());
        }
        let counter = CycleCounter { fd: fd as libc::c_int };
        // Software events (page faults, context switches) may rightly stay still.
        if type_ != PERF_TYPE_HARDWARE {
            return Ok(counter);
        }
        // Some hypervisors accept the open but never count: treat that as unsupported.
        let a = counter.read();
        let mut x = 0u64;
        for i in 0..10_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        if counter.read() == a {
            return Err("counter opened but does not advance".into());
        }
        Ok(counter)
    }

    /// Reads the current count (one `read(2)` system call).
    #[inline]
    pub fn read(&self) -> u64 {
        let mut value: u64 = 0;
        // SAFETY: reading 8 bytes into a u64 we own from a perf fd we opened.
        let n = unsafe {
            libc::read(
                self.fd,
                &mut value as *mut u64 as *mut libc::c_void,
                std::mem::size_of::<u64>(),
            )
        };
        if n != 8 {
            return 0;
        }
        value
    }
}

impl Drop for CycleCounter {
    fn drop(&mut self) {
        // SAFETY: closing the fd we own exactly once.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// Probes whether this machine counts core cycles; `Err` carries the kernel's reason.
///
/// The same plumbing is exercised on machines without a PMU by the software task-clock
/// event in the tests below.
pub fn probe_core_cycles() -> Result<(), String> {
    CycleCounter::open().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;

    #[test]
    fn named_events_open_or_give_a_reason() {
        if let Some(e) = crate::emulation::detect() {
            return cryptoscope_testkit::skip(&format!("perf counters are switched off under emulation ({e})"));
        }
        assert!(Counter::open_named("task-clock").is_ok());
        assert!(Counter::open_named("page-faults").is_ok());
        assert_eq!(Counter::open_named("bogus").unwrap_err(), "unknown event `bogus`");
        // A hardware event either counts or says why not; never a silent zero.
        if let Err(why) = Counter::open_named("instructions") {
            assert!(!why.is_empty());
        }
    }

    /// Page faults are counted: touching fresh pages of a new mapping faults them in.
    #[test]
    fn page_faults_count_fresh_pages() {
        if let Some(e) = crate::emulation::detect() {
            return cryptoscope_testkit::skip(&format!("perf counters are switched off under emulation ({e})"));
        }
        let c = Counter::open_named("page-faults").unwrap();
        let a = c.read();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let b = c.read();
        // 16,384 pages touched; transparent huge pages may serve several per fault.
        assert!(b - a >= 16, "{a} -> {b}");
    }

    /// The attr layout, open, read and close path works (a software event exists on every
    /// Linux kernel, PMU or not), so the hardware path differs only in the event asked for.
    #[test]
    fn software_task_clock_counts() {
        if let Some(e) = crate::emulation::detect() {
            return cryptoscope_testkit::skip(&format!("perf counters are switched off under emulation ({e})"));
        }
        let c = CycleCounter::open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK)
            .expect("task-clock is available on Linux");
        let a = c.read();
        let t = std::time::Instant::now();
        // task-clock counts nanoseconds of this thread's CPU time. Spin until it shows 1 ms
        // (on a loaded machine the thread may wait for its CPU), for at most 5 s of wall
        // time: a counter that does not move fails.
        let mut b = a;
        while b - a < 1_000_000 && t.elapsed() < std::time::Duration::from_secs(5) {
            for _ in 0..1000 {
                std::hint::spin_loop();
            }
            b = c.read();
        }
        let wall = t.elapsed().as_nanos() as u64;
        assert!(b - a >= 1_000_000, "{a} -> {b} in {wall} ns");
        // One thread's CPU time cannot exceed the wall time it spanned (plus the reads).
        assert!(b - a <= wall + 1_000_000, "{a} -> {b} in {wall} ns");
    }
}
