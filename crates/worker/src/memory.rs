//! The memory pass: heap and stack of one operation, measured apart from timing.
//!
//! - Heap: the worker runs with the preload library [`HEAP_PRELOAD`] (`LD_PRELOAD`), whose
//!   malloc family counts between `cryptoscope_heap_begin` and `cryptoscope_heap_end`.
//!   C code and Rust code (the system allocator calls malloc) are both seen.
//! - Stack: the operation runs on a thread whose stack we allocate and paint with a
//!   pattern (the pqm4 method). A first call lets initialisation happen; the stack below
//!   the thread's stack pointer is then painted again and the operation called a second
//!   time. The lowest overwritten word marks the high-water mark; the stack pointer on
//!   entry to the measured call is the top. The
//!   harness's own frames (the call through the closure) are measured with an empty
//!   operation and subtracted; [`calibrate`] runs functions of known stack use through
//!   the same path to state the method's error.

use serde::{Deserialize, Serialize};
use std::ffi::c_void;

/// The heap-counting preload library, built from `shim/heapcount.c`.
pub const HEAP_PRELOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcryptoscope-heap.so"));

pub use cryptoscope_model::events::HeapStats;

type Begin = unsafe extern "C" fn();
type End = unsafe extern "C" fn(*mut HeapStats);

/// The counter of the preload library, if this process was started with it.
#[derive(Clone, Copy)]
pub struct HeapCounter {
    begin: Begin,
    end: End,
}

impl HeapCounter {
    /// Finds the preload library's entry points; `None` without `LD_PRELOAD`.
    pub fn find() -> Option<HeapCounter> {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names; the symbols, when
        // present, have exactly these signatures (shim/heapcount.c).
        unsafe {
            let b = libc::dlsym(libc::RTLD_DEFAULT, c"cryptoscope_heap_begin".as_ptr());
            let e = libc::dlsym(libc::RTLD_DEFAULT, c"cryptoscope_heap_end".as_ptr());
            if b.is_null() || e.is_null() {
                return None;
            }
            Some(HeapCounter {
                begin: std::mem::transmute::<*mut c_void, Begin>(b),
                end: std::mem::transmute::<*mut c_void, End>(e),
            })
        }
    }

    /// Starts counting (and forgets the previous window).
    pub fn begin(&self) {
        // SAFETY: see `find`.
        unsafe { (self.begin)() }
    }

    /// Stops counting and returns the window's figures.
    pub fn end(&self) -> HeapStats {
        let mut s = HeapStats::default();
        // SAFETY: see `find`; `s` is a valid, writable HeapStats.
        unsafe { (self.end)(&mut s) };
        s
    }
}

/// Bytes of stack given to the painted thread (Classic McEliece reference code keeps
/// megabyte matrices on the stack).
pub const STACK_SIZE: usize = 64 << 20;
const PATTERN: u64 = 0xc5c5_3a3a_5c5c_a3a3;
const GUARD: usize = 4096;

/// What one call on the painted stack used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Bytes between the stack pointer on entry and the lowest word written.
    pub stack_bytes: u64,
    /// Heap use of the counted call, when counted.
    pub heap: Option<HeapStats>,
}

/// A painted stack, reused between calls (repainted before each).
pub struct PaintedStack {
    base: *mut u8,
    len: usize,
}

impl PaintedStack {
    pub fn new() -> std::io::Result<PaintedStack> {
        let len = STACK_SIZE + GUARD;
        // SAFETY: a fresh private anonymous mapping; checked for failure.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // A guard page below the stack: an overflow is a SIGSEGV, not silent corruption.
        // SAFETY: the first page of our own mapping.
        if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(PaintedStack { base: base.cast(), len })
    }

    fn words(&mut self) -> &mut [u64] {
        // SAFETY: the mapping after the guard page is ours, readable and writable, and
        // page-aligned; no thread runs on it while we hold `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(GUARD).cast::<u64>(), STACK_SIZE / 8) }
    }

    /// Runs `f` twice on a fresh thread on this stack and measures the second call: its
    /// stack high-water mark (the stack below the call is repainted after the first call)
    /// and, with `heap`, its heap use. The first call lets one-time and per-thread
    /// initialisation (tables, CPU dispatch, OpenSSL's and AWS-LC's thread state) happen
    /// outside the figures, as it would in a long-running program.
    pub fn measure(&mut self, heap: Option<HeapCounter>, f: &mut dyn FnMut()) -> std::io::Result<Usage> {
        self.words().fill(PATTERN);
        let mut call = Call {
            f,
            heap,
            paint_from: self.base as usize + GUARD,
            sp: 0,
            stats: None,
        };
        // SAFETY: the attribute and thread use our mapping as the stack; we join before
        // returning, so `call` (borrowed by the thread) outlives it.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            check(libc::pthread_attr_init(&mut attr))?;
            let r = libc::pthread_attr_setstack(&mut attr, self.base.add(GUARD).cast(), STACK_SIZE);
            if r != 0 {
                libc::pthread_attr_destroy(&mut attr);
                return Err(std::io::Error::from_raw_os_error(r));
            }
            let mut t: libc::pthread_t = 0;
            let r = libc::pthread_create(&mut t, &attr, trampoline, (&mut call as *mut Call).cast());
            libc::pthread_attr_destroy(&mut attr);
            check(r)?;
            check(libc::pthread_join(t, std::ptr::null_mut()))?;
        }
        let lowest = self
            .words()
            .iter()
            .position(|&w| w != PATTERN)
            .unwrap_or(STACK_SIZE / 8);
        let lowest_addr = self.base as usize + GUARD + lowest * 8;
        Ok(Usage {
            stack_bytes: call.sp.saturating_sub(lowest_addr) as u64,
            heap: call.stats,
        })
    }
}

impl Drop for PaintedStack {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no thread uses it any more.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

fn check(r: i32) -> std::io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(r))
    }
}

struct Call<'a> {
    f: &'a mut dyn FnMut(),
    heap: Option<HeapCounter>,
    /// Lowest address of the painted stack.
    paint_from: usize,
    sp: usize,
    stats: Option<HeapStats>,
}

extern "C" fn trampoline(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the `Call` that `measure` keeps alive until it has joined us.
    let call = unsafe { &mut *arg.cast::<Call>() };
    enter(call.f);
    if let Some(h) = call.heap {
        h.begin();
    }
    // Everything below this frame is dead now: paint it again, without using the stack.
    let sp = stack_pointer();
    // SAFETY: [paint_from, sp) is this thread's own stack below its stack pointer, which
    // no live frame uses; the routine writes no stack itself.
    unsafe { paint_below(call.paint_from, sp) };
    call.sp = stack_pointer();
    enter(call.f);
    if let Some(h) = call.heap {
        call.stats = Some(h.end());
    }
    std::ptr::null_mut()
}

/// Fills [from, to) with the pattern in straight-line machine code that touches no stack.
#[cfg(target_arch = "x86_64")]
unsafe fn paint_below(from: usize, to: usize) {
    let words = (to.saturating_sub(from)) / 8;
    // SAFETY: the caller guarantees [from, to) is writable and unused; the direction flag
    // is clear by the ABI.
    unsafe {
        std::arch::asm!(
            "rep stosq",
            inout("rdi") from => _,
            inout("rcx") words => _,
            in("rax") PATTERN,
            options(nostack, preserves_flags)
        );
    }
}

/// Fills [from, to) with the pattern in straight-line machine code that touches no stack.
#[cfg(target_arch = "aarch64")]
unsafe fn paint_below(from: usize, to: usize) {
    let end = from + (to.saturating_sub(from)) / 8 * 8;
    if end <= from {
        return;
    }
    // SAFETY: the caller guarantees [from, to) is writable and unused.
    unsafe {
        std::arch::asm!(
            "2:",
            "str {p}, [{a}], #8",
            "cmp {a}, {e}",
            "b.lo 2b",
            a = inout(reg) from => _,
            e = in(reg) end,
            p = in(reg) PATTERN,
            options(nostack)
        );
    }
}

/// Fills [from, to) with the pattern in straight-line machine code that touches no stack.
#[cfg(target_arch = "s390x")]
unsafe fn paint_below(from: usize, to: usize) {
    let end = from + (to.saturating_sub(from)) / 8 * 8;
    if end <= from {
        return;
    }
    // SAFETY: the caller guarantees [from, to) is writable and unused. `reg_addr` keeps the
    // address out of r0, which as a base register reads as zero.
    unsafe {
        std::arch::asm!(
            "2:",
            "stg {p}, 0({a})",
            "la {a}, 8({a})",
            "clgr {a}, {e}",
            "jl 2b",
            a = inout(reg_addr) from => _,
            e = in(reg) end,
            p = in(reg) PATTERN,
            options(nostack)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "s390x")))]
unsafe fn paint_below(_from: usize, _to: usize) {
    compile_error!("the painted-stack method needs a repaint routine for this architecture");
}

#[inline(never)]
fn enter(f: &mut dyn FnMut()) {
    f();
    std::hint::black_box(());
}

#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads the stack pointer register only.
    unsafe {
        std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: reads the stack pointer register only.
    unsafe {
        std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "s390x")]
    // SAFETY: reads the stack pointer register (r15) only.
    unsafe {
        std::arch::asm!("lgr {}, %r15", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "s390x")))]
    {
        let x = 0u8;
        sp = std::hint::black_box(&x) as *const u8 as usize;
    }
    sp
}

/// Stack used by the harness itself (the call through `enter` and the closure) with an
/// empty operation; subtracted from every figure.
pub fn harness_bytes(stack: &mut PaintedStack) -> std::io::Result<u64> {
    Ok(stack.measure(None, &mut || {})?.stack_bytes)
}

/// Writes `N` bytes of stack and nothing else (beyond its own small frame).
#[inline(never)]
fn touch<const N: usize>() {
    let mut buf = [0u8; N];
    std::hint::black_box(&mut buf);
}

/// The method's error: for functions that write 1 KiB, 16 KiB and 256 KiB of stack,
/// (requested, measured after subtracting the harness). The difference is the function's
/// own frame plus the method's error.
pub fn calibrate(stack: &mut PaintedStack) -> std::io::Result<Vec<(u64, u64)>> {
    let harness = harness_bytes(stack)?;
    let mut out = Vec::new();
    for (n, f) in [
        (1024u64, touch::<1024> as fn()),
        (16 * 1024, touch::<16384>),
        (256 * 1024, touch::<262144>),
    ] {
        let u = stack.measure(None, &mut || f())?;
        out.push((n, u.stack_bytes.saturating_sub(harness)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_of_known_functions_is_measured_within_a_small_error() {
        let mut s = PaintedStack::new().unwrap();
        for (want, got) in calibrate(&mut s).unwrap() {
            // The function's own frame (return address, saved registers, alignment)
            // comes on top of its array; nothing else may. On s390x the ELF ABI has every
            // frame hold a 160-byte register save area for its callees (measured: 152 over
            // the array under qemu-s390x, where x86-64 and AArch64 stay within 128).
            let slack = if cfg!(target_arch = "s390x") { 128 + 160 } else { 128 };
            assert!(got >= want && got <= want + slack, "wanted {want}, measured {got}");
        }
    }

    #[test]
    fn no_heap_counter_without_the_preload_library() {
        assert!(HeapCounter::find().is_none());
    }
}
