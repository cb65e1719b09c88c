//! Drives the measurement of one subject: its family prepares the inputs (a key pair, a
//! ciphertext) outside timing (`crate::family`), then each operation is sampled, counted,
//! probed, measured for memory or run on threads.

use crate::family::{self, Prepared};
use crate::protocol::{
    ClockInfo, CounterReading, Event, OpCounters, OpMeasurement, OpMemory, OpProbes, ProbedFunction, ScaleRun,
};
use cryptoscope_catalogue::{Operation, Subject};
use cryptoscope_measure::sampler::{sample, Plan};
use cryptoscope_measure::Clock;
use std::time::{Duration, Instant};

/// Inputs a long-lived worker keeps between visits of one subject (`serve`): prepared once,
/// with how long each preparing call took.
pub struct Kept<'a> {
    prepared: Box<dyn Prepared + 'a>,
    warm: Vec<(Operation, Duration)>,
}

/// The kept inputs of every subject a long-lived worker has measured, by subject.
pub type KeptInputs<'a> = std::collections::HashMap<String, Kept<'a>>;

/// Measures the operations of `subject` (all, or `only`) within `budget` in total: each
/// operation gets an equal share of what is left, so time a fast operation does not use
/// passes to the slower ones measured after it. Fast operations are measured first. With
/// `kept`, inputs prepared on an earlier visit are used again, and this visit's are kept.
#[allow(clippy::too_many_arguments)]
pub fn measure_subject<'a>(
    subject: &'a Subject,
    clock: &Clock,
    plan: &Plan,
    budget: Duration,
    only: Option<&[Operation]>,
    cpu: Option<usize>,
    kept: Option<&mut KeptInputs<'a>>,
    emit: &mut dyn FnMut(Event),
) {
    let d = subject.descriptor();
    let family = family::of(subject);
    let ops = family.measured(only);
    let info = ClockInfo {
        cycle_source: clock.source(),
        tsc_hz: clock.tsc_hz(),
        overhead_cycles: clock.overhead_cycles(),
        overhead_ns: clock.overhead_ns(),
        perf_status: clock.perf_status().to_string(),
    };
    // Inputs every operation needs, made once, untimed. How long each preparing call took
    // is noted: an operation already run here that takes longer than the warm-up time
    // needs no warm-up call of its own (that call would only double the cost of slow
    // operations like Classic McEliece key generation).
    let mut fresh = None;
    let inputs: &mut Kept<'a> = match kept {
        Some(k) if k.contains_key(&d.id) => k.get_mut(&d.id).expect("present"),
        kept => {
            let mut warm = Vec::new();
            let prepared = match family.prepare(&mut |op, t| warm.push((op, t))) {
                Ok(p) => p,
                Err(e) => {
                    for o in &ops {
                        emit(Event::OpFailed {
                            subject: d.id.clone(),
                            operation: *o,
                            error: format!("preparing inputs: {e}"),
                        });
                    }
                    return;
                }
            };
            let k = Kept { prepared, warm };
            match kept {
                Some(all) => all.entry(d.id.clone()).or_insert(k),
                None => fresh.insert(k),
            }
        }
    };
    // The budget is for measuring; preparing inputs does not use it up.
    let start = Instant::now();
    for (i, &op) in ops.iter().enumerate() {
        let left = budget.saturating_sub(start.elapsed());
        let share = left / (ops.len() - i) as u32;
        let mut p = plan.clone();
        p.budget = share;
        if inputs.warm.iter().any(|&(o, t)| o == op && t >= p.warmup) {
            p.warmup = Duration::ZERO;
        }
        let r = inputs.prepared.call(op).and_then(|call| sample(clock, &p, call));
        match r {
            Ok(samples) => emit(Event::Measured(OpMeasurement {
                subject: d.id.clone(),
                operation: op,
                clock: info.clone(),
                cpu,
                samples,
            })),
            Err(e) => emit(Event::OpFailed {
                subject: d.id.clone(),
                operation: op,
                error: e.to_string(),
            }),
        }
    }
}

/// Size of the heap block `run_loop` allocates just before its loop (with `marker`).
pub const MARK_BEFORE: usize = 777_777;
/// Size of the heap block `run_loop` allocates just after its loop (with `marker`).
pub const MARK_AFTER: usize = 888_888;

/// Prepares inputs like [`measure_subject`], then runs `op` `n` times without timing.
/// External tools (callgrind, `perf stat`, hyperfine) measure the process instead; the
/// difference between two iteration counts isolates the cost of the operation. With
/// `marker`, a heap block of [`MARK_BEFORE`] bytes is allocated and freed just before the
/// loop and one of [`MARK_AFTER`] bytes just after it, so a heap profiler's timeline
/// (valgrind massif) shows where the loop starts and ends; one extra call before the first
/// marker keeps one-time initialisation out of the marked window.
pub fn run_loop(
    subject: &Subject,
    op: Operation,
    n: u64,
    warmup: u64,
    marker: bool,
) -> Result<(), cryptoscope_catalogue::OpError> {
    let mark = |bytes: usize| {
        if marker {
            drop(std::hint::black_box(vec![1u8; bytes]));
        }
    };
    // Warm-up calls run before the marker and outside `cryptoscope_profiled_op`, so
    // one-time initialisation stays outside the marked or profiled window.
    let warm = warmup.max(u64::from(marker));
    let mut inputs = family::of(subject).prepare(&mut |_, _| {})?;
    let mut call = inputs.call(op)?;
    for i in 0..n + warm {
        if i == warm {
            mark(MARK_BEFORE);
        }
        if i < warm {
            call()?
        } else {
            cryptoscope_profiled_op(&mut call)?
        }
    }
    mark(MARK_AFTER);
    Ok(())
}

/// Counts `events` (perf_event_open names) around each of `calls` calls of every selected
/// operation, after one warm-up call, net of the counting overhead (the median of the
/// same reads around an empty call). Events the kernel refuses are reported with its reason.
pub fn counters_subject(
    subject: &Subject,
    events: &[String],
    calls: usize,
    only: Option<&[Operation]>,
    emit: &mut dyn FnMut(Event),
) -> Result<(), String> {
    use cryptoscope_measure::perf::Counter;
    let d = subject.descriptor();
    let opened: Vec<(String, Result<Counter, String>)> =
        events.iter().map(|e| (e.clone(), Counter::open_named(e))).collect();
    let ops: Vec<Operation> = d
        .operations()
        .iter()
        .copied()
        .filter(|o| only.is_none_or(|l| l.contains(o)))
        .collect();
    let Some(mut inputs) = prepare_or_report(subject, &ops, emit) else {
        return Ok(());
    };
    // Deltas of every open counter around `f`, `n` times.
    let around = |n: usize, f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>| {
        let mut deltas: Vec<Vec<f64>> = vec![Vec::with_capacity(n); opened.len()];
        let mut before = vec![0u64; opened.len()];
        for _ in 0..n {
            for (k, (_, c)) in opened.iter().enumerate() {
                if let Ok(c) = c {
                    before[k] = c.read();
                }
            }
            let r = f();
            for (k, (_, c)) in opened.iter().enumerate().rev() {
                if let Ok(c) = c {
                    deltas[k].push(c.read().wrapping_sub(before[k]) as f64);
                }
            }
            r?;
        }
        Ok::<_, cryptoscope_catalogue::OpError>(deltas)
    };
    let overhead = around(calls.max(31), &mut || Ok(())).map_err(|e| e.to_string())?;
    for op in ops {
        let result = inputs.call(op).and_then(|mut call| {
            call()?;
            around(calls, &mut call)
        });
        match result {
            Ok(deltas) => {
                let readings = opened
                    .iter()
                    .enumerate()
                    .map(|(k, (name, c))| match c {
                        Err(why) => CounterReading {
                            event: name.clone(),
                            status: format!("not supported: {why}"),
                            median: None,
                            mean: None,
                            overhead: None,
                        },
                        Ok(_) => {
                            let o = median(&overhead[k]);
                            CounterReading {
                                event: name.clone(),
                                status: "ok".into(),
                                median: Some((median(&deltas[k]) - o).max(0.0)),
                                mean: Some(
                                    (deltas[k].iter().sum::<f64>() / deltas[k].len().max(1) as f64 - o).max(0.0),
                                ),
                                overhead: Some(o),
                            }
                        }
                    })
                    .collect();
                emit(Event::Counters(OpCounters {
                    subject: d.id.clone(),
                    operation: op,
                    calls,
                    readings,
                }));
            }
            Err(e) => emit(Event::OpFailed {
                subject: d.id.clone(),
                operation: op,
                error: e.to_string(),
            }),
        }
    }
    Ok(())
}

/// Prepares inputs; when that fails, reports every operation in `ops` as failed with the
/// reason and returns `None`.
fn prepare_or_report<'a>(
    subject: &'a Subject,
    ops: &[Operation],
    emit: &mut dyn FnMut(Event),
) -> Option<Box<dyn Prepared + 'a>> {
    match family::of(subject).prepare(&mut |_, _| {}) {
        Ok(i) => Some(i),
        Err(e) => {
            for o in ops {
                emit(Event::OpFailed {
                    subject: subject.descriptor().id.clone(),
                    operation: *o,
                    error: format!("preparing inputs: {e}"),
                });
            }
            None
        }
    }
}

/// Reads the timing probes compiled into `subject` around each of `calls` calls of every
/// selected operation (after one warm-up call): per probed function, calls per operation
/// and ticks per call net of the probe's own cost; and the whole operation's ticks, read
/// with the same clock around it.
pub fn probes_subject(
    subject: &Subject,
    calls: usize,
    only: Option<&[Operation]>,
    emit: &mut dyn FnMut(Event),
) -> Result<(), String> {
    let d = subject.descriptor();
    // Only `cryptoscope build` libraries have probes, and they are KEMs.
    let probes = match subject {
        Subject::Kem(k) => k.probes(),
        _ => None,
    }
    .ok_or_else(|| format!("{} has no timing probes (only `cryptoscope build` libraries do)", d.id))?;
    let names = probes.names();
    let overhead = probes.overhead() as f64;
    let ops: Vec<Operation> = d
        .operations()
        .iter()
        .copied()
        .filter(|o| only.is_none_or(|l| l.contains(o)))
        .collect();
    let Some(mut inputs) = prepare_or_report(subject, &ops, emit) else {
        return Ok(());
    };
    let clock = cryptoscope_measure::Clock::new(cryptoscope_measure::clock::ClockChoice::Tsc);
    for op in ops {
        let result = inputs.call(op).and_then(|mut call| {
            call()?;
            // Per operation: (calls, ticks) deltas of each function, and the whole call.
            let mut per_op: Vec<Vec<(u64, u64)>> = Vec::with_capacity(calls);
            let mut whole = Vec::with_capacity(calls);
            for _ in 0..calls {
                let before = probes.read();
                let t0 = clock.start();
                call()?;
                let t1 = clock.stop();
                let after = probes.read();
                whole.push((clock.elapsed(t0, t1).1 as f64 - clock.overhead_ticks()).max(0.0));
                per_op.push(
                    before
                        .iter()
                        .zip(&after)
                        .map(|(b, a)| (a.0 - b.0, a.1.wrapping_sub(b.1)))
                        .collect(),
                );
            }
            Ok::<_, cryptoscope_catalogue::OpError>((per_op, whole))
        });
        match result {
            Ok((per_op, whole)) => {
                let functions = names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| {
                        let total_calls: u64 = per_op.iter().map(|v| v[k].0).sum();
                        let called: Vec<&(u64, u64)> = per_op.iter().map(|v| &v[k]).filter(|x| x.0 > 0).collect();
                        let per_call: Vec<f64> = called
                            .iter()
                            .map(|(c, t)| (*t as f64 / *c as f64 - overhead).max(0.0))
                            .collect();
                        let per_op_ticks: Vec<f64> = per_op
                            .iter()
                            .map(|v| (v[k].1 as f64 - v[k].0 as f64 * overhead).max(0.0))
                            .collect();
                        ProbedFunction {
                            function: name.clone(),
                            calls_per_op: total_calls as f64 / calls.max(1) as f64,
                            ticks_per_call: (!per_call.is_empty()).then(|| median(&per_call)),
                            ticks_per_op: (total_calls > 0).then(|| median(&per_op_ticks)),
                        }
                    })
                    .collect();
                emit(Event::Probes(OpProbes {
                    subject: d.id.clone(),
                    operation: op,
                    calls,
                    unit: probes.unit().into(),
                    overhead,
                    op_ticks: median(&whole),
                    functions,
                }));
            }
            Err(e) => emit(Event::OpFailed {
                subject: d.id.clone(),
                operation: op,
                error: e.to_string(),
            }),
        }
    }
    Ok(())
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One call of the operation under study. Profilers switch on collection for this
/// function only (`valgrind --tool=callgrind --toggle-collect=cryptoscope_profiled_op`),
/// so input preparation and warm-up calls stay out of the counts. The unmangled name is
/// part of the worker's interface; it must never be inlined.
#[inline(never)]
#[no_mangle]
pub fn cryptoscope_profiled_op(
    call: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>,
) -> Result<(), cryptoscope_catalogue::OpError> {
    let r = call();
    std::hint::black_box(&r);
    r
}

/// Prepares inputs like [`measure_subject`], then measures each operation of `subject`
/// (all, or `only`) `calls` times (once when a measurement takes over five seconds): stack
/// and heap of a second call on a fresh thread with a painted stack, the first letting
/// one-time and per-thread initialisation happen outside the figures; the largest figure
/// of each kind is kept.
pub fn memory_subject(
    subject: &Subject,
    calls: usize,
    only: Option<&[Operation]>,
    emit: &mut dyn FnMut(Event),
) -> Result<(), String> {
    use crate::memory::{harness_bytes, HeapCounter, PaintedStack};
    let d = subject.descriptor();
    let heap =
        HeapCounter::find().ok_or("heap counting needs the preload library (run through `cryptoscope memory`)")?;
    let mut stack = PaintedStack::new().map_err(|e| format!("cannot map a stack: {e}"))?;
    let harness = harness_bytes(&mut stack).map_err(|e| e.to_string())?;
    let ops: Vec<Operation> = d
        .operations()
        .iter()
        .copied()
        .filter(|o| only.is_none_or(|l| l.contains(o)))
        .collect();
    let Some(mut inputs) = prepare_or_report(subject, &ops, emit) else {
        return Ok(());
    };
    for op in ops {
        let mut result: Result<(), cryptoscope_catalogue::OpError> = Ok(());
        let mut worst = OpMemory {
            subject: d.id.clone(),
            operation: op,
            calls: 0,
            stack_bytes: 0,
            harness_stack_bytes: harness,
            heap: Default::default(),
        };
        // The call, made outside the measurement (a hash's message, a decapsulator).
        let mut op_call = match inputs.call(op) {
            Ok(c) => c,
            Err(e) => {
                emit(Event::OpFailed {
                    subject: d.id.clone(),
                    operation: op,
                    error: e.to_string(),
                });
                continue;
            }
        };
        // One measurement of the operation on the painted stack: stack and heap of a
        // second call on a fresh thread.
        let mut call = |f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>,
                        stack: &mut PaintedStack|
         -> Result<Option<crate::memory::Usage>, String> {
            let mut r = Ok(());
            let mut g = || {
                if r.is_ok() {
                    r = f();
                }
            };
            let u = stack
                .measure(Some(heap), &mut g)
                .map_err(|e| format!("cannot run on a painted stack: {e}"))?;
            match r {
                Ok(()) => Ok(Some(u)),
                Err(e) => {
                    result = Err(e);
                    Ok(None)
                }
            }
        };
        let mut per_call = |stack: &mut PaintedStack| call(&mut op_call, stack);
        // The first measurement's duration decides how many there are.
        let t = Instant::now();
        let mut failure = None;
        let mut n = calls.max(1);
        let mut i = 0;
        while i < n && failure.is_none() {
            match per_call(&mut stack) {
                Ok(Some(u)) => {
                    worst.calls += 1;
                    worst.stack_bytes = worst.stack_bytes.max(u.stack_bytes.saturating_sub(harness));
                    let h = u.heap.unwrap_or_default();
                    let w = &mut worst.heap;
                    w.allocations = w.allocations.max(h.allocations);
                    w.frees = w.frees.max(h.frees);
                    w.bytes_requested = w.bytes_requested.max(h.bytes_requested);
                    w.peak_live = w.peak_live.max(h.peak_live);
                    w.live_at_end = w.live_at_end.max(h.live_at_end);
                    w.untracked = w.untracked.max(h.untracked);
                }
                Ok(None) => break,
                Err(e) => failure = Some(e),
            }
            if i == 0 && t.elapsed() > Duration::from_secs(5) {
                n = 1;
            }
            i += 1;
        }
        let failure = failure.or_else(|| result.err().map(|e| e.to_string()));
        match failure {
            Some(error) => emit(Event::OpFailed {
                subject: d.id.clone(),
                operation: op,
                error,
            }),
            None => emit(Event::Memory(worst)),
        }
    }
    Ok(())
}

/// Throughput of `op` on `threads` threads for about `duration`: every thread prepares its
/// own inputs (keys, buffers), all start together at a barrier, and each counts the calls
/// it completes until the deadline (finishing the call in progress) and its own elapsed
/// time, so an operation slower than the duration still gets a rate.
pub fn scale_subject(subject: &Subject, op: Operation, threads: usize, duration: Duration) -> Result<ScaleRun, String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Barrier;
    let d = subject.descriptor();
    if !d.operations().contains(&op) {
        return Err(format!("{} has no operation {}", d.id, op.as_str()));
    }
    let barrier = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let one_thread = || -> Result<(u64, f64), String> {
        let family = family::of(subject);
        let prep = family.prepare(&mut |_, _| {});
        // Every thread reaches the barrier, even after a failure, so none waits forever.
        barrier.wait();
        let start = Instant::now();
        let mut inputs = prep.map_err(|e| format!("preparing inputs: {e}"))?;
        let mut call = inputs.call(op).map_err(|e| e.to_string())?;
        let mut n = 0u64;
        // At least one call per thread, however late the thread starts (a busy machine
        // may not schedule it inside a short window); the stop finishes the call in progress.
        loop {
            call().map_err(|e| e.to_string())?;
            n += 1;
            if stop.load(Ordering::Relaxed) {
                break;
            }
        }
        Ok((n, start.elapsed().as_secs_f64()))
    };
    let results: Vec<Result<(u64, f64), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(one_thread)).collect();
        barrier.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect()
    });
    let mut per_thread = Vec::with_capacity(threads);
    let mut seconds = Vec::with_capacity(threads);
    for r in results {
        let (n, t) = r?;
        per_thread.push(n);
        seconds.push(t);
    }
    Ok(ScaleRun {
        subject: d.id.clone(),
        operation: op,
        threads,
        per_thread,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_catalogue::{Decapsulator, Descriptor, Kem, OpError, Randomness, Sizes};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A KEM that counts its key generations (its results are never looked at).
    struct Counting {
        d: Descriptor,
        keypairs: Arc<AtomicUsize>,
    }

    struct Decaps;

    impl Decapsulator for Decaps {
        fn decaps(&mut self, _: &mut [u8], _: &[u8]) -> Result<(), OpError> {
            Ok(())
        }
    }

    impl Kem for Counting {
        fn descriptor(&self) -> &Descriptor {
            &self.d
        }
        fn keypair(&self, _: &mut [u8], _: &mut [u8]) -> Result<(), OpError> {
            self.keypairs.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn encaps(&self, _: &mut [u8], _: &mut [u8], _: &[u8]) -> Result<(), OpError> {
            Ok(())
        }
        fn decapsulator<'a>(&'a self, _: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
            Ok(Box::new(Decaps))
        }
    }

    /// Two visits measuring `encaps`, whose inputs include a key pair: how many key pairs
    /// were made, and how many operations were measured.
    fn two_visits(keep: bool) -> (usize, usize) {
        let count = Arc::new(AtomicUsize::new(0));
        let sizes = Sizes {
            public_key: 8,
            secret_key: 8,
            ciphertext: 8,
            shared_secret: 8,
        };
        let d = Descriptor::catalogued(
            "ML-KEM-768",
            "test",
            "counting",
            "0".into(),
            "-".into(),
            sizes,
            Randomness::Harness,
        );
        let s = Subject::Kem(Box::new(Counting {
            d,
            keypairs: count.clone(),
        }));
        let clock = Clock::new(cryptoscope_measure::clock::ClockChoice::Auto);
        let plan = Plan::quick(Duration::from_millis(5));
        let mut kept = KeptInputs::new();
        let mut measured = 0;
        for _ in 0..2 {
            let mut emit = |e: Event| measured += usize::from(matches!(e, Event::Measured(_)));
            let only = [Operation::Encaps];
            let visit_kept = keep.then_some(&mut kept);
            measure_subject(
                &s,
                &clock,
                &plan,
                Duration::from_millis(20),
                Some(&only),
                None,
                visit_kept,
                &mut emit,
            );
        }
        (count.load(Ordering::SeqCst), measured)
    }

    #[test]
    fn kept_inputs_are_prepared_once_for_every_visit() {
        assert_eq!(two_visits(true), (1, 2), "one key pair serves both visits");
        assert_eq!(
            two_visits(false),
            (2, 2),
            "without keeping, each visit prepares its own"
        );
    }
}
