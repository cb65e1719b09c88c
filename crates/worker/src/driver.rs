//! Drives the measurement of one subject: allocate every buffer from the descriptor,
//! prepare inputs (a key pair, a ciphertext) outside timing, then sample each operation.

use crate::protocol::{
    ClockInfo, CounterReading, Event, OpCounters, OpMeasurement, OpMemory, OpProbes, ProbedFunction, ScaleRun,
};
use cryptoscope_catalogue::{Operation, Subject};
use cryptoscope_measure::sampler::{sample, Plan};
use cryptoscope_measure::Clock;
use std::time::{Duration, Instant};

/// The buffers of one subject's operations, sized from its descriptor: the prepared inputs
/// (a key pair `pk`/`sk`, and for a KEM a ciphertext `ct` with its secret `ss`; for a key
/// exchange a second key pair `pk2`/`sk2`) and the outputs measured calls write into.
pub struct Inputs {
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub pk2: Vec<u8>,
    pub sk2: Vec<u8>,
    pub ct: Vec<u8>,
    pub ss: Vec<u8>,
    pub ct2: Vec<u8>,
    pub ss2: Vec<u8>,
}

impl Inputs {
    /// Prepares the inputs of `subject`'s operations, untimed; `note` sees each preparing
    /// call's operation and how long it took.
    pub fn prepare(
        subject: &Subject,
        note: &mut dyn FnMut(Operation, Duration),
    ) -> Result<Inputs, cryptoscope_catalogue::OpError> {
        let s = &subject.descriptor().sizes;
        let mut i = Inputs {
            pk: vec![0u8; s.public_key],
            sk: vec![0u8; s.secret_key],
            pk2: vec![0u8; s.public_key],
            sk2: vec![0u8; s.secret_key],
            ct: vec![0u8; s.ciphertext],
            ss: vec![0u8; s.shared_secret],
            ct2: vec![0u8; s.ciphertext],
            ss2: vec![0u8; s.shared_secret],
        };
        let mut timed = |op: Operation, f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>| {
            let t = Instant::now();
            let r = f();
            note(op, t.elapsed());
            r
        };
        match subject {
            Subject::Kem(k) => {
                timed(Operation::Keypair, &mut || k.keypair(&mut i.pk, &mut i.sk))?;
                timed(Operation::Encaps, &mut || k.encaps(&mut i.ct, &mut i.ss, &i.pk))?;
            }
            Subject::Kex(k) => {
                timed(Operation::Keypair, &mut || k.keypair(&mut i.pk, &mut i.sk))?;
                timed(Operation::Keypair, &mut || k.keypair(&mut i.pk2, &mut i.sk2))?;
            }
            // A hash's input is its message, made by the hash driver; a cipher's key and
            // blocks are made by `CipherBench`, an AEAD's by `AeadBench`.
            Subject::Hash(_) | Subject::Cipher(_) | Subject::Aead(_) => {}
        }
        Ok(i)
    }
}

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
        Subject::Hash(_) | Subject::Cipher(_) | Subject::Aead(_) => &d.operations(),
    };
    let ops: Vec<Operation> = match (subject, only) {
        // A hash is measured at whatever lengths the parent asks for (`run --lengths`).
        (Subject::Hash(_), Some(l)) => l.to_vec(),
        _ => order
            .iter()
            .copied()
            .filter(|o| only.is_none_or(|l| l.contains(o)))
            .collect(),
    };
    let info = ClockInfo {
        cycle_source: clock.source(),
        tsc_hz: clock.tsc_hz(),
        overhead_cycles: clock.overhead_cycles(),
        overhead_ns: clock.overhead_ns(),
        perf_status: clock.perf_status().to_string(),
    };
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
    let Inputs {
        pk,
        sk,
        mut pk2,
        mut sk2,
        ct,
        mut ct2,
        mut ss2,
        ..
    } = match Inputs::prepare(subject, &mut |op, t| warm.push((op, t))) {
        Ok(i) => i,
        Err(e) => {
            failed(emit, Operation::Keypair, format!("preparing inputs: {e}"));
            return;
        }
    };
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
            (Subject::Hash(h), Operation::Hash(_) | Operation::Stream(_)) => {
                let msg = message(op);
                let mut out = vec![0u8; d.sizes.shared_secret];
                sample(clock, &p, || hash_once(h.as_ref(), op, &msg, &mut out))
            }
            (Subject::Cipher(c), _) => match CipherBench::new(c.as_ref(), op) {
                Ok(mut b) => sample(clock, &p, || b.run()),
                Err(e) => Err(e),
            },
            (Subject::Aead(a), _) => match AeadBench::new(a.as_ref(), op) {
                Ok(mut b) => sample(clock, &p, || b.run()),
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
    let mut inputs = Inputs::prepare(subject, &mut |_, _| {})?;
    with_call(subject, op, &mut inputs, &mut |call| {
        for i in 0..n + warm {
            if i == warm {
                mark(MARK_BEFORE);
            }
            if i < warm {
                call()?
            } else {
                cryptoscope_profiled_op(call)?
            }
        }
        mark(MARK_AFTER);
        Ok(())
    })?
}

/// One call of an operation on prepared inputs.
pub type OpCall<'a> = dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError> + 'a;

/// Hands `body` a closure that performs one call of `op` on the prepared `inputs`
/// (outputs go to the `*2` buffers, so the inputs stay valid for every call).
pub fn with_call<R>(
    subject: &Subject,
    op: Operation,
    inputs: &mut Inputs,
    body: &mut dyn FnMut(&mut OpCall<'_>) -> R,
) -> Result<R, cryptoscope_catalogue::OpError> {
    let unsupported = || {
        cryptoscope_catalogue::OpError::Unavailable(format!(
            "{} has no operation {}",
            subject.descriptor().id,
            op.as_str()
        ))
    };
    let s = &subject.descriptor().sizes;
    let Inputs {
        pk,
        sk,
        pk2,
        sk2,
        ct,
        ct2,
        ss2,
        ..
    } = inputs;
    match subject {
        Subject::Kem(k) => {
            let mut dec = k.decapsulator(sk)?;
            let mut call = || match op {
                Operation::Keypair => k.keypair(pk2, sk2),
                Operation::Encaps => k.encaps(ct2, ss2, pk),
                Operation::Decaps => dec.decaps(ss2, ct),
                _ => Err(unsupported()),
            };
            Ok(body(&mut call))
        }
        Subject::Kex(k) => {
            let mut ex = k.exchanger(sk)?;
            let (mut pk3, mut sk3) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
            let mut call = || match op {
                Operation::Keypair => k.keypair(&mut pk3, &mut sk3),
                Operation::Exchange => ex.exchange(ss2, pk2),
                _ => Err(unsupported()),
            };
            Ok(body(&mut call))
        }
        Subject::Hash(h) => {
            if op.message_bytes().is_none() {
                return Err(unsupported());
            }
            let msg = message(op);
            let mut out = vec![0u8; s.shared_secret];
            let mut call = || hash_once(h.as_ref(), op, &msg, &mut out);
            Ok(body(&mut call))
        }
        Subject::Cipher(c) => {
            let mut b = CipherBench::new(c.as_ref(), op)?;
            let mut call = || b.run();
            Ok(body(&mut call))
        }
        Subject::Aead(a) => {
            let mut b = AeadBench::new(a.as_ref(), op)?;
            let mut call = || b.run();
            Ok(body(&mut call))
        }
    }
}

/// A fixed byte pattern for keys and messages of the symmetric benches (no result depends on
/// its values).
fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(167) ^ seed) as u8).collect()
}

/// One block cipher operation, ready to be called again and again: a keyed instance (key
/// made from a fixed pattern) and the buffer the operation works on, prepared untimed.
/// `keysched` re-expands the key; `block:N`, `ecb:N` encrypt the N-byte buffer in place
/// (its content changes from call to call, as a chain of encryptions); `ctr:N` XORs it with
/// the key stream; an inner function runs on the loaded internal state (round 1).
pub struct CipherBench {
    keyed: Box<dyn cryptoscope_catalogue::KeyedCipher>,
    op: Operation,
    key: Vec<u8>,
    iv: Vec<u8>,
    data: Vec<u8>,
}

impl CipherBench {
    pub fn new(
        c: &dyn cryptoscope_catalogue::BlockCipher,
        op: Operation,
    ) -> Result<CipherBench, cryptoscope_catalogue::OpError> {
        let d = c.descriptor();
        let info = d.cipher.as_ref().ok_or_else(|| {
            cryptoscope_catalogue::OpError::Unavailable(format!("{} has no cipher description", d.id))
        })?;
        if !d.operations().contains(&op) {
            return Err(cryptoscope_catalogue::OpError::Unavailable(format!(
                "{} has no operation {}",
                d.id,
                op.as_str()
            )));
        }
        let key = pattern(info.key_bytes, 0x3c);
        let keyed = c.keyed(&key)?;
        let data = match op {
            Operation::Func(..) => {
                let blocks = pattern(info.block_bytes * info.batch.max(1), 0x5a);
                let mut state = vec![0u8; keyed.state_bytes()];
                keyed.load(&blocks, &mut state);
                state
            }
            _ => pattern(op.message_bytes().unwrap_or(0) as usize, 0x69),
        };
        Ok(CipherBench {
            keyed,
            op,
            key,
            iv: pattern(info.block_bytes, 0x11),
            data,
        })
    }

    /// One call of the operation.
    pub fn run(&mut self) -> Result<(), cryptoscope_catalogue::OpError> {
        let r = match self.op {
            Operation::KeySchedule => self.keyed.rekey(std::hint::black_box(&self.key)),
            Operation::Func(..) => {
                let f = self.op.function().unwrap_or_default();
                self.keyed.call(f, &mut self.data, 1)
            }
            Operation::Ctr(_) => self.keyed.ctr(&self.iv, &mut self.data),
            _ => self.keyed.encrypt(&mut self.data),
        };
        std::hint::black_box(&self.data);
        r
    }
}

/// One AEAD operation, ready to be called again and again: a keyed instance (key made
/// from a fixed pattern), a nonce, [`cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES`]
/// of associated data and the message, prepared untimed. `seal:N` seals the N-byte buffer
/// in place (its content changes from call to call, as a chain of encryptions under one
/// nonce: the work is the same); `open:N` opens one valid ciphertext of N bytes, sealed
/// beforehand, into a separate buffer, every call (a failure to open it is an error).
pub struct AeadBench {
    key: Box<dyn cryptoscope_catalogue::AeadKey>,
    open: bool,
    nonce: Vec<u8>,
    aad: Vec<u8>,
    data: Vec<u8>,
    tag: Vec<u8>,
    out: Vec<u8>,
}

impl AeadBench {
    pub fn new(
        a: &dyn cryptoscope_catalogue::Aead,
        op: Operation,
    ) -> Result<AeadBench, cryptoscope_catalogue::OpError> {
        let d = a.descriptor();
        let info = d
            .aead
            .ok_or_else(|| cryptoscope_catalogue::OpError::Unavailable(format!("{} has no AEAD description", d.id)))?;
        let (open, n) = match op {
            Operation::Seal(n) => (false, n as usize),
            Operation::Open(n) => (true, n as usize),
            _ => {
                return Err(cryptoscope_catalogue::OpError::Unavailable(format!(
                    "{} has no operation {}",
                    d.id,
                    op.as_str()
                )))
            }
        };
        let mut key = a.keyed(&pattern(info.key_bytes, 0x3c))?;
        let nonce = pattern(info.nonce_bytes, 0x11);
        let aad = pattern(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES, 0x22);
        let mut data = pattern(n, 0x69);
        let mut tag = vec![0u8; info.tag_bytes];
        if open {
            key.seal(&nonce, &aad, &mut data, &mut tag)?;
        }
        Ok(AeadBench {
            key,
            open,
            nonce,
            aad,
            out: vec![0u8; n],
            data,
            tag,
        })
    }

    /// One call of the operation.
    pub fn run(&mut self) -> Result<(), cryptoscope_catalogue::OpError> {
        let r = if self.open {
            self.key
                .open(&self.nonce, &self.aad, &self.data, &self.tag, &mut self.out)
        } else {
            self.key.seal(&self.nonce, &self.aad, &mut self.data, &mut self.tag)
        };
        std::hint::black_box((&self.data, &self.out, &self.tag));
        r
    }
}

/// The message a hash operation hashes (a fixed pattern; no result depends on it).
pub fn message(op: Operation) -> Vec<u8> {
    let n = op.message_bytes().unwrap_or(0) as usize;
    (0..n).map(|i| (i.wrapping_mul(131) ^ (i >> 8)) as u8).collect()
}

/// One call of a hash operation: a fresh state, the message in one update (`hash:N`) or
/// in 64-byte updates (`stream:N`), the digest into `out`.
pub fn hash_once(
    h: &dyn cryptoscope_catalogue::Hash,
    op: Operation,
    msg: &[u8],
    out: &mut [u8],
) -> Result<(), cryptoscope_catalogue::OpError> {
    let mut st = h.start();
    match op {
        Operation::Stream(_) => {
            for piece in msg.chunks(cryptoscope_catalogue::descriptor::STREAM_PIECE) {
                st.update(piece);
            }
        }
        _ => st.update(msg),
    }
    st.finish(out);
    std::hint::black_box(&out);
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
        let result = with_call(subject, op, &mut inputs, &mut |call| {
            call()?;
            around(calls, call)
        })
        .and_then(|r| r);
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
fn prepare_or_report(subject: &Subject, ops: &[Operation], emit: &mut dyn FnMut(Event)) -> Option<Inputs> {
    match Inputs::prepare(subject, &mut |_, _| {}) {
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
    let probes = match subject {
        Subject::Kem(k) => k.probes(),
        Subject::Kex(_) | Subject::Hash(_) | Subject::Cipher(_) | Subject::Aead(_) => None,
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
        let result = with_call(subject, op, &mut inputs, &mut |call| {
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
        })
        .and_then(|r| r);
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
    let Some(Inputs {
        pk,
        sk,
        mut pk2,
        mut sk2,
        ct,
        mut ct2,
        mut ss2,
        ..
    }) = prepare_or_report(subject, &ops, emit)
    else {
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
        // A hash operation's message, made outside the measurement (empty otherwise).
        let msg = message(op);
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
        let mut per_call = |stack: &mut PaintedStack| -> Result<Option<crate::memory::Usage>, String> {
            match (subject, op) {
                (Subject::Kem(k), Operation::Keypair) => call(&mut || k.keypair(&mut pk2, &mut sk2), stack),
                (Subject::Kem(k), Operation::Encaps) => call(&mut || k.encaps(&mut ct2, &mut ss2, &pk), stack),
                (Subject::Kem(k), Operation::Decaps) => match k.decapsulator(&sk) {
                    Ok(mut dec) => call(&mut || dec.decaps(&mut ss2, &ct), stack),
                    Err(e) => Err(e.to_string()),
                },
                (Subject::Kex(k), Operation::Keypair) => call(&mut || k.keypair(&mut pk2, &mut sk2), stack),
                (Subject::Kex(k), Operation::Exchange) => match k.exchanger(&sk) {
                    Ok(mut ex) => call(&mut || ex.exchange(&mut ss2, &pk), stack),
                    Err(e) => Err(e.to_string()),
                },
                (Subject::Hash(h), Operation::Hash(_) | Operation::Stream(_)) => {
                    let mut out = vec![0u8; d.sizes.shared_secret];
                    call(&mut || hash_once(h.as_ref(), op, &msg, &mut out), stack)
                }
                (Subject::Cipher(c), _) => match CipherBench::new(c.as_ref(), op) {
                    Ok(mut b) => call(&mut || b.run(), stack),
                    Err(e) => Err(e.to_string()),
                },
                (Subject::Aead(a), _) => match AeadBench::new(a.as_ref(), op) {
                    Ok(mut b) => call(&mut || b.run(), stack),
                    Err(e) => Err(e.to_string()),
                },
                _ => Err(format!("{} has no operation {}", d.id, op.as_str())),
            }
        };
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
        let prep = Inputs::prepare(subject, &mut |_, _| {});
        // Every thread reaches the barrier, even after a failure, so none waits forever.
        barrier.wait();
        let start = Instant::now();
        let Inputs {
            pk,
            sk,
            mut pk2,
            mut sk2,
            ct,
            mut ct2,
            mut ss2,
            ..
        } = prep.map_err(|e| format!("preparing inputs: {e}"))?;
        let mut n = 0u64;
        // At least one call per thread, however late the thread starts (a busy machine
        // may not schedule it inside a short window); the stop finishes the call in progress.
        let mut run = |f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>| {
            loop {
                f().map_err(|e| e.to_string())?;
                n += 1;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            Ok::<(), String>(())
        };
        match (subject, op) {
            (Subject::Kem(k), Operation::Keypair) => run(&mut || k.keypair(&mut pk2, &mut sk2))?,
            (Subject::Kex(k), Operation::Keypair) => run(&mut || k.keypair(&mut pk2, &mut sk2))?,
            (Subject::Kem(k), Operation::Encaps) => run(&mut || k.encaps(&mut ct2, &mut ss2, &pk))?,
            (Subject::Kem(k), Operation::Decaps) => {
                let mut dec = k.decapsulator(&sk).map_err(|e| e.to_string())?;
                run(&mut || dec.decaps(&mut ss2, &ct))?
            }
            (Subject::Kex(k), Operation::Exchange) => {
                let mut ex = k.exchanger(&sk).map_err(|e| e.to_string())?;
                run(&mut || ex.exchange(&mut ss2, &pk2))?
            }
            (Subject::Cipher(c), _) => {
                let mut b = CipherBench::new(c.as_ref(), op).map_err(|e| e.to_string())?;
                run(&mut || b.run())?
            }
            (Subject::Aead(a), _) => {
                let mut b = AeadBench::new(a.as_ref(), op).map_err(|e| e.to_string())?;
                run(&mut || b.run())?
            }
            _ => return Err(format!("no operation {}", op.as_str())),
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
