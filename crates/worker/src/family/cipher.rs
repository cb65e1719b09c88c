//! Block ciphers: a keyed instance and a buffer per operation (key schedule, single blocks,
//! ECB and CTR over lengths, the inner functions); the known-answer, mode and cross-check
//! gate; under memcheck the key (and the plaintext for `encrypt`); dudect's all-zero against
//! random keys and plaintexts, warm and with the caches evicted.

use super::{pattern, unsupported, Family, GateAsk, OpCall, Prepared};
use crate::ct::dudect::{pool, Classes, Setup};
use crate::ct::{err, public, random, secret};
use cryptoscope_catalogue::gate::GateReport;
use cryptoscope_catalogue::{BlockCipher, Descriptor, OpError, Operation};
use std::path::Path;
use std::time::Duration;

/// A block cipher subject.
pub struct CipherFamily<'a>(pub &'a dyn BlockCipher);

/// Nothing is shared between a cipher's operations: each keys its own instance.
struct Inputs<'a>(&'a dyn BlockCipher);

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let mut b = CipherBench::new(self.0, op)?;
        Ok(Box::new(move || b.run()))
    }
}

impl<'a> Family<'a> for CipherFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    fn prepare(&self, _: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        Ok(Box::new(Inputs(self.0)))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        Ok(cryptoscope_catalogue::cipher_gate::gate_cipher(self.0, ask.vectors))
    }

    fn memcheck(&self, op: &str, _: Option<&Path>) -> Result<String, String> {
        if op != "key-schedule" && op != "encrypt" {
            return Err(self.not_audited(op));
        }
        let (c, d) = (self.0, self.0.descriptor());
        let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
        let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
        let key = random(info.key_bytes);
        secret(&key);
        if op == "key-schedule" {
            let r = cryptoscope_ct_op_key_schedule(k.as_mut(), &key);
            public(&key);
            r?;
            Ok("the key".into())
        } else {
            // Expanding the key is the key schedule's report, not this one's.
            k.rekey(&key).map_err(err)?;
            let mut blocks = random(encrypt_bytes(&info));
            secret(&blocks);
            let r = cryptoscope_ct_op_encrypt(k.as_mut(), &mut blocks);
            public(&blocks);
            public(&key);
            r?;
            Ok(format!("the key and {} plaintext bytes", blocks.len()))
        }
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        match op {
            "key-schedule" | "encrypt" => cipher_classes(self.0, self.0.descriptor(), op),
            _ => Err(self.not_audited(op)),
        }
    }
}

/// Bytes of plaintext an `encrypt` call gets: 8 batches of blocks (at least 8 blocks).
fn encrypt_bytes(info: &cryptoscope_catalogue::CipherInfo) -> usize {
    info.block_bytes * info.batch.max(1) * 8
}

#[inline(never)]
fn cryptoscope_ct_op_key_schedule(k: &mut dyn cryptoscope_catalogue::KeyedCipher, key: &[u8]) -> Result<(), String> {
    k.rekey(key).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_encrypt(k: &mut dyn cryptoscope_catalogue::KeyedCipher, blocks: &mut [u8]) -> Result<(), String> {
    k.encrypt(blocks).map_err(err)
}

fn cipher_classes<'a>(
    c: &'a dyn cryptoscope_catalogue::BlockCipher,
    d: &Descriptor,
    op: &str,
) -> Result<Setup<'a>, String> {
    if op == "key-schedule" {
        let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
        let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
        Ok((
            Classes::new(vec![0u8; info.key_bytes], pool(info.key_bytes)),
            "the all-zero key against random keys".into(),
            Box::new(move |key: &mut [u8]| k.rekey(key).map_err(err)),
        ))
    } else {
        let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
        let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
        let n = encrypt_bytes(&info);
        Ok((
            Classes::new(vec![0u8; n], pool(n)),
            format!("{n} all-zero plaintext bytes against random ones (one random key)"),
            Box::new(move |p: &mut [u8]| k.encrypt(p).map_err(err)),
        ))
    }
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
            return Err(unsupported(d, op));
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
