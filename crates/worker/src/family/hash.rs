//! Hashes: a fixed message per length, hashed in one update (`hash:N`) or in 64-byte pieces
//! (`stream:N`); the known-answer gate; NIST `.rsp` files; under memcheck the message;
//! dudect's all-zero against random messages.

use super::{unsupported, Family, GateAsk, KeyFiles, OpCall, Prepared};
use crate::ct::dudect::{pool, Classes, Setup};
use crate::ct::{public, random, secret};
use cryptoscope_catalogue::external::{self, External, FileOutcome};
use cryptoscope_catalogue::gate::{self, GateReport};
use cryptoscope_catalogue::{Descriptor, Hash, OpError, Operation};
use std::path::Path;
use std::time::Duration;

/// A hash subject.
pub struct HashFamily<'a>(pub &'a dyn Hash);

/// Nothing is shared between a hash's operations: each length makes its own message.
struct Inputs<'a>(&'a dyn Hash);

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let h = self.0;
        if op.message_bytes().is_none() {
            return Err(unsupported(h.descriptor(), op));
        }
        let msg = message(op);
        let mut out = vec![0u8; h.descriptor().sizes.shared_secret];
        Ok(Box::new(move || hash_once(h, op, &msg, &mut out)))
    }
}

impl<'a> Family<'a> for HashFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    /// A hash is measured at whatever lengths the parent asks for (`run --lengths`).
    fn measured(&self, only: Option<&[Operation]>) -> Vec<Operation> {
        only.map_or_else(|| self.order(), <[Operation]>::to_vec)
    }

    fn prepare(&self, _: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        Ok(Box::new(Inputs(self.0)))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        Ok(gate::gate_hash(self.0, ask.vectors, ask.depth))
    }

    fn verify_file(&self, file: &External, _: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        match file {
            External::Hash { records, .. } => Some(Ok(external::run_hash(self.0, records))),
            _ => None,
        }
    }

    fn memcheck(&self, op: &str, _: Option<&Path>) -> Result<String, String> {
        if op != "hash" {
            return Err(self.not_audited(op));
        }
        let msg = random(1000);
        let mut out = vec![0u8; self.0.descriptor().sizes.shared_secret];
        secret(&msg);
        cryptoscope_ct_op_hash(self.0, &msg, &mut out);
        public(&out);
        Ok("a 1000-byte message (two updates)".into())
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        if op != "hash" {
            return Err(self.not_audited(op));
        }
        let h = self.0;
        let mut out = vec![0u8; h.descriptor().sizes.shared_secret];
        Ok((
            Classes::new(vec![0u8; 1024], pool(1024)),
            "a 1024-byte all-zero message against random ones".into(),
            Box::new(move |m: &mut [u8]| {
                let mut s = h.start();
                s.update(m);
                s.finish(&mut out);
                Ok(())
            }),
        ))
    }
}

#[inline(never)]
fn cryptoscope_ct_op_hash(h: &dyn Hash, msg: &[u8], out: &mut [u8]) {
    let mut s = h.start();
    // Two updates, so that buffering of a partial block is covered too.
    let cut = msg.len() / 3;
    s.update(&msg[..cut]);
    s.update(&msg[cut..]);
    s.finish(out);
}

/// The message a hash operation hashes (a fixed pattern; no result depends on it).
pub fn message(op: Operation) -> Vec<u8> {
    let n = op.message_bytes().unwrap_or(0) as usize;
    (0..n).map(|i| (i.wrapping_mul(131) ^ (i >> 8)) as u8).collect()
}

/// One call of a hash operation: a fresh state, the message in one update (`hash:N`) or
/// in 64-byte updates (`stream:N`), the digest into `out`.
pub fn hash_once(h: &dyn Hash, op: Operation, msg: &[u8], out: &mut [u8]) -> Result<(), OpError> {
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
