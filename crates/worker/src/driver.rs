//! Drives the measurement of one subject: allocate every buffer from the descriptor,
//! prepare inputs (a key pair, a ciphertext) outside timing, then sample each operation.

use crate::protocol::{ClockInfo, Event, OpMeasurement};
use cryptoscope_catalogue::{Operation, Subject};
use cryptoscope_measure::sampler::{sample, Plan};
use cryptoscope_measure::Clock;
use std::time::{Duration, Instant};

/// Measures the operations of `subject` (all, or `only`) within `budget` in total: each
/// operation gets an equal share of what is left, so time a fast operation does not use
/// passes to the slower ones measured after it. Fast operations are measured first.
pub fn measure_subject(
    subject: &Subject,
    clock: &Clock,
    plan: &Plan,
    budget: Duration,
    only: Option<&[Operation]>,
    cpu: Option<usize>,
    emit: &mut dyn FnMut(Event),
) {
    let d = subject.descriptor();
    let order: &[Operation] = match subject {
        Subject::Kem(_) => &[Operation::Encaps, Operation::Decaps, Operation::Keypair],
        Subject::Kex(_) => &[Operation::Exchange, Operation::Keypair],
    };
    let ops: Vec<Operation> = order
        .iter()
        .copied()
        .filter(|o| only.is_none_or(|l| l.contains(o)))
        .collect();
    let info = ClockInfo {
        cycle_source: clock.source(),
        tsc_hz: clock.tsc_hz(),
        overhead_cycles: clock.overhead_cycles(),
        overhead_ns: clock.overhead_ns(),
        perf_status: clock.perf_status().to_string(),
    };
    let s = &d.sizes;
    let mut pk = vec![0u8; s.public_key];
    let mut sk = vec![0u8; s.secret_key];
    let mut pk2 = vec![0u8; s.public_key];
    let mut sk2 = vec![0u8; s.secret_key];
    let mut ct = vec![0u8; s.ciphertext];
    let mut ss = vec![0u8; s.shared_secret];
    let mut ct2 = vec![0u8; s.ciphertext];
    let mut ss2 = vec![0u8; s.shared_secret];

    let failed = |emit: &mut dyn FnMut(Event), op: Operation, e: String| {
        for o in &ops {
            if *o == op || op == Operation::Keypair {
                emit(Event::OpFailed {
                    subject: d.id.clone(),
                    operation: *o,
                    error: e.clone(),
                });
            }
        }
    };
    // Inputs every operation needs, made once, untimed. How long each preparing call took
    // is noted: an operation already run here that takes longer than the warm-up time
    // needs no warm-up call of its own (that call would only double the cost of slow
    // operations like Classic McEliece key generation).
    let mut warm: Vec<(Operation, Duration)> = Vec::new();
    let mut timed = |op: Operation, f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>| {
        let t = Instant::now();
        let r = f();
        warm.push((op, t.elapsed()));
        r
    };
    let prep = match subject {
        Subject::Kem(k) => timed(Operation::Keypair, &mut || k.keypair(&mut pk, &mut sk))
            .and_then(|_| timed(Operation::Encaps, &mut || k.encaps(&mut ct, &mut ss, &pk))),
        Subject::Kex(k) => timed(Operation::Keypair, &mut || k.keypair(&mut pk, &mut sk))
            .and_then(|_| timed(Operation::Keypair, &mut || k.keypair(&mut pk2, &mut sk2))),
    };
    if let Err(e) = prep {
        failed(emit, Operation::Keypair, format!("preparing inputs: {e}"));
        return;
    }
    // The budget is for measuring; preparing inputs does not use it up.
    let start = Instant::now();
    for (i, &op) in ops.iter().enumerate() {
        let left = budget.saturating_sub(start.elapsed());
        let share = left / (ops.len() - i) as u32;
        let mut p = plan.clone();
        p.budget = share;
        if warm.iter().any(|&(o, t)| o == op && t >= p.warmup) {
            p.warmup = Duration::ZERO;
        }
        let r = match (subject, op) {
            (Subject::Kem(k), Operation::Keypair) => sample(clock, &p, || k.keypair(&mut pk2, &mut sk2)),
            (Subject::Kem(k), Operation::Encaps) => sample(clock, &p, || k.encaps(&mut ct2, &mut ss2, &pk)),
            (Subject::Kem(k), Operation::Decaps) => match k.decapsulator(&sk) {
                Ok(mut dec) => sample(clock, &p, || dec.decaps(&mut ss2, &ct)),
                Err(e) => Err(e),
            },
            (Subject::Kex(k), Operation::Keypair) => sample(clock, &p, || k.keypair(&mut pk2, &mut sk2)),
            (Subject::Kex(k), Operation::Exchange) => match k.exchanger(&sk) {
                Ok(mut ex) => sample(clock, &p, || ex.exchange(&mut ss2, &pk2)),
                Err(e) => Err(e),
            },
            _ => continue,
        };
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

/// Prepares inputs like [`measure_subject`], then runs `op` `n` times without timing.
/// External tools (callgrind, `perf stat`, hyperfine) measure the process instead; the
/// difference between two iteration counts isolates the cost of the operation.
pub fn run_loop(subject: &Subject, op: Operation, n: u64) -> Result<(), cryptoscope_catalogue::OpError> {
    let s = &subject.descriptor().sizes;
    let (mut pk, mut sk, mut pk2, mut sk2) = (
        vec![0u8; s.public_key],
        vec![0u8; s.secret_key],
        vec![0u8; s.public_key],
        vec![0u8; s.secret_key],
    );
    let (mut ct, mut ss, mut ct2, mut ss2) = (
        vec![0u8; s.ciphertext],
        vec![0u8; s.shared_secret],
        vec![0u8; s.ciphertext],
        vec![0u8; s.shared_secret],
    );
    let unsupported = || {
        cryptoscope_catalogue::OpError::Unavailable(format!(
            "{} has no operation {}",
            subject.descriptor().id,
            op.as_str()
        ))
    };
    match subject {
        Subject::Kem(k) => {
            k.keypair(&mut pk, &mut sk)?;
            k.encaps(&mut ct, &mut ss, &pk)?;
            let mut dec = k.decapsulator(&sk)?;
            for _ in 0..n {
                match op {
                    Operation::Keypair => k.keypair(&mut pk2, &mut sk2)?,
                    Operation::Encaps => k.encaps(&mut ct2, &mut ss2, &pk)?,
                    Operation::Decaps => dec.decaps(&mut ss2, &ct)?,
                    Operation::Exchange => return Err(unsupported()),
                }
                std::hint::black_box(&ss2);
            }
        }
        Subject::Kex(k) => {
            k.keypair(&mut pk, &mut sk)?;
            k.keypair(&mut pk2, &mut sk2)?;
            let mut ex = k.exchanger(&sk)?;
            let (mut pk3, mut sk3) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
            for _ in 0..n {
                match op {
                    Operation::Keypair => k.keypair(&mut pk3, &mut sk3)?,
                    Operation::Exchange => ex.exchange(&mut ss2, &pk2)?,
                    _ => return Err(unsupported()),
                }
                std::hint::black_box(&ss2);
            }
        }
    }
    Ok(())
}
