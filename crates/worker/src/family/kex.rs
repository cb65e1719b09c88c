//! Key exchange: two key pairs prepared once (ours and a peer's); `exchange`, and its parts
//! `derive` (the peer's key set once) and `validate`; the known-answer and agreement gate; Wycheproof X25519 and P-256 ECDH files; under memcheck the randomness of
//! `keypair` and the secret key in `exchange`; dudect's fixed against random seeds and
//! secret keys.

use super::{timed, unsupported, Family, GateAsk, KeyFiles, OpCall, Prepared};
use crate::ct::dudect::{keypair_classes, Classes, Setup, POOL};
use crate::ct::{err, keypair_with_secret_randomness, public, secret};
use cryptoscope_catalogue::external::{self, External, FileOutcome};
use cryptoscope_catalogue::gate::{self, GateReport};
use cryptoscope_catalogue::{Descriptor, Kex, OpError, Operation};
use std::path::Path;
use std::time::Duration;

/// A key-exchange subject.
pub struct KexFamily<'a>(pub &'a dyn Kex);

/// Our key pair (`sk`), the peer's public key (`pk2`), and the buffers measured calls write
/// into.
struct Inputs<'a> {
    k: &'a dyn Kex,
    sk: Vec<u8>,
    pk2: Vec<u8>,
    pk3: Vec<u8>,
    sk3: Vec<u8>,
    ss: Vec<u8>,
}

impl Prepared for Inputs<'_> {
    fn call(&mut self, op: Operation) -> Result<Box<OpCall<'_>>, OpError> {
        let Inputs {
            k,
            sk,
            pk2,
            pk3,
            sk3,
            ss,
        } = self;
        let k: &dyn Kex = *k;
        Ok(match op {
            Operation::Keypair => Box::new(move || k.keypair(pk3, sk3)),
            Operation::Exchange => {
                let mut ex = k.exchanger(sk)?;
                Box::new(move || ex.exchange(ss, pk2))
            }
            Operation::Derive => {
                let mut ex = k.exchanger(sk)?;
                ex.set_peer(pk2)?;
                Box::new(move || ex.derive(ss))
            }
            Operation::Validate => {
                let mut ex = k.exchanger(sk)?;
                Box::new(move || ex.validate(pk2))
            }
            _ => return Err(unsupported(k.descriptor(), op)),
        })
    }
}

impl<'a> Family<'a> for KexFamily<'a> {
    fn descriptor(&self) -> &Descriptor {
        self.0.descriptor()
    }

    fn order(&self) -> Vec<Operation> {
        vec![
            Operation::Exchange,
            Operation::Derive,
            Operation::Validate,
            Operation::Keypair,
        ]
    }

    fn prepare(&self, note: &mut dyn FnMut(Operation, Duration)) -> Result<Box<dyn Prepared + 'a>, OpError> {
        let (k, s) = (self.0, &self.0.descriptor().sizes);
        let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
        let (mut pk2, mut sk2) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
        timed(note, Operation::Keypair, &mut || k.keypair(&mut pk, &mut sk))?;
        timed(note, Operation::Keypair, &mut || k.keypair(&mut pk2, &mut sk2))?;
        Ok(Box::new(Inputs {
            k,
            sk,
            pk2,
            pk3: vec![0u8; s.public_key],
            sk3: vec![0u8; s.secret_key],
            ss: vec![0u8; s.shared_secret],
        }))
    }

    fn gate(&self, ask: &GateAsk) -> Result<GateReport, String> {
        Ok(gate::gate_kex(self.0, ask.vectors))
    }

    fn verify_file(&self, file: &External, _: &KeyFiles) -> Option<Result<FileOutcome, String>> {
        match file {
            External::X25519(tests) | External::P256(tests) => Some(Ok(external::run_dh(self.0, tests))),
            External::EcdhSpki(tests) => Some(Ok(external::run_dh_spki(self.0, tests))),
            _ => None,
        }
    }

    fn memcheck(&self, op: &str, _: Option<&Path>) -> Result<String, String> {
        let (k, d) = (self.0, self.0.descriptor());
        match op {
            "keypair" => keypair_with_secret_randomness(d, &mut |pk, sk| k.keypair(pk, sk)),
            "exchange" => {
                let sz = &d.sizes;
                let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
                k.keypair(&mut pk, &mut sk).map_err(err)?;
                let (mut peer, mut peer_sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
                k.keypair(&mut peer, &mut peer_sk).map_err(err)?;
                let mut ss = vec![0u8; sz.shared_secret];
                secret(&sk);
                let r = cryptoscope_ct_op_exchange(k, &sk, &peer, &mut ss);
                public(&ss);
                public(&sk);
                r?;
                Ok("the secret key".into())
            }
            _ => Err(self.not_audited(op)),
        }
    }

    fn dudect(&self, op: &str) -> Result<Setup<'a>, String> {
        let (k, d) = (self.0, self.0.descriptor());
        match op {
            "keypair" => keypair_classes(d, Box::new(move |pk, sk| k.keypair(pk, sk))),
            "exchange" => exchange_classes(k, d),
            _ => Err(self.not_audited(op)),
        }
    }
}

#[inline(never)]
fn cryptoscope_ct_op_exchange(k: &dyn Kex, sk: &[u8], peer: &[u8], ss: &mut [u8]) -> Result<(), String> {
    let mut e = k.exchanger(sk).map_err(err)?;
    e.exchange(ss, peer).map_err(err)
}

fn exchange_classes<'a>(k: &'a dyn Kex, d: &Descriptor) -> Result<Setup<'a>, String> {
    let sz = &d.sizes;
    let mut keys = Vec::with_capacity(POOL + 2);
    for _ in 0..POOL + 2 {
        let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
        k.keypair(&mut pk, &mut sk).map_err(err)?;
        keys.push((pk, sk));
    }
    let peer = keys.pop().expect("keys").0;
    let fixed = keys.pop().expect("keys").1;
    let mut ss = vec![0u8; sz.shared_secret];
    Ok((
        Classes::new(fixed, keys.into_iter().map(|k| k.1).collect()),
        "one secret key against 64 others (same peer)".into(),
        Box::new(move |sk: &mut [u8]| {
            let mut e = k.exchanger(sk).map_err(err)?;
            e.exchange(&mut ss, &peer).map_err(err)
        }),
    ))
}
