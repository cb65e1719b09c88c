//! OpenSSL's key exchanges: X25519, ECDH P-256 and FFDHE-2048, each in the parts OpenSSL's
//! own TLS 1.3 code runs (`shim/kex.c`):
//! - `validate`: the peer's key share read into a key of the own group
//!   (EVP_PKEY_set1_encoded_public_key) and checked as EVP_PKEY_derive_set_peer checks it
//!   (EVP_PKEY_public_check: for P-256 the point on the curve and n·Q the identity, a
//!   second scalar multiplication; for FFDHE 1 < y < p − 1 and y^q = 1 mod p, a 2047-bit
//!   exponentiation; for X25519 nothing beyond the length);
//! - `derive`: EVP_PKEY_derive on a context whose peer was set and checked once, all that
//!   `openssl speed ecdhx25519 ecdhp256 ffdh2048` times;
//! - `exchange`: both, with the context made per call, as ssl_derive does.
//!
//! Own keys are prepared as EVP_PKEY objects outside timing. OpenSSL 3 gives ffdhe2048
//! keys a 225-bit private exponent (twice the group's 112-bit strength, plus one), which
//! sets the cost of `derive`.

use crate::{descriptor, FFDHE_BYTES};
use cryptoscope_catalogue::descriptor::Sizes;
use cryptoscope_catalogue::traits::{check_len, Exchanger, Kex, OpError, Subject};
use cryptoscope_catalogue::Descriptor;
use libc::c_void;

mod shim {
    use libc::c_void;
    extern "C" {
        pub fn cs_ffdhe2048_keypair(pk: *mut u8, sk: *mut u8) -> i32;
        pub fn cs_ffdhe2048_params(p: *mut u8, g: *mut u8) -> i32;
        pub fn cs_ffdhe2048_prepare(sk: *const u8) -> *mut c_void;
        pub fn cs_peer_decode(own: *mut c_void, pk: *const u8, len: usize) -> *mut c_void;
        pub fn cs_peer_from_spki(der: *const u8, len: usize) -> *mut c_void;
        pub fn cs_peer_check(peer: *mut c_void) -> i32;
        pub fn cs_derive_ctx(own: *mut c_void, peer: *mut c_void, validate: i32) -> *mut c_void;
        pub fn cs_derive(ctx: *mut c_void, ss: *mut u8, len: usize) -> i32;
        pub fn cs_derive_ctx_free(ctx: *mut c_void);
        pub fn cs_pkey_free(pkey: *mut c_void);
        pub fn cs_x25519_keypair(pk: *mut u8, sk: *mut u8) -> i32;
        pub fn cs_x25519_prepare(sk: *const u8) -> *mut c_void;
        pub fn cs_p256_keypair(pk: *mut u8, sk: *mut u8) -> i32;
        pub fn cs_p256_prepare(sk: *const u8) -> *mut c_void;
    }
}

/// An EVP_PKEY owned here, freed once.
struct Pkey(*mut c_void);

impl Drop for Pkey {
    fn drop(&mut self) {
        // SAFETY: a non-null EVP_PKEY this value owns.
        unsafe { shim::cs_pkey_free(self.0) };
    }
}

/// A derivation context with its peer, freed together.
struct Ctx {
    ctx: *mut c_void,
    _peer: Pkey,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: a non-null EVP_PKEY_CTX this value owns.
        unsafe { shim::cs_derive_ctx_free(self.ctx) };
    }
}

/// An own key and the parts of an exchange with it.
struct EvpExchanger {
    own: Pkey,
    ss_len: usize,
    /// Set by `set_peer`, used by `derive`.
    peer: Option<Ctx>,
}

fn rejected(op: &'static str, what: &str) -> OpError {
    OpError::failed(op, format!("OpenSSL rejected {what}"))
}

impl EvpExchanger {
    /// The peer's key share read as OpenSSL's TLS reads it.
    fn decode(&self, op: &'static str, pk: &[u8]) -> Result<Pkey, OpError> {
        // SAFETY: `own` is a live EVP_PKEY; `pk` is valid for its length.
        let p = unsafe { shim::cs_peer_decode(self.own.0, pk.as_ptr(), pk.len()) };
        if p.is_null() {
            return Err(rejected(op, "the peer's encoded public key"));
        }
        Ok(Pkey(p))
    }

    /// A context deriving with `peer`, which EVP_PKEY_derive_set_peer checks first.
    fn context(&self, op: &'static str, peer: Pkey) -> Result<Ctx, OpError> {
        // SAFETY: both keys are live EVP_PKEYs.
        let ctx = unsafe { shim::cs_derive_ctx(self.own.0, peer.0, 1) };
        if ctx.is_null() {
            return Err(rejected(op, "the peer public key (EVP_PKEY_derive_set_peer)"));
        }
        Ok(Ctx { ctx, _peer: peer })
    }

    fn derive_with(&self, op: &'static str, ctx: &Ctx, ss: &mut [u8]) -> Result<(), OpError> {
        check_len(op, "ss", ss.len(), self.ss_len)?;
        // SAFETY: a live context; `ss` is valid for its length.
        if unsafe { shim::cs_derive(ctx.ctx, ss.as_mut_ptr(), ss.len()) } == 1 {
            Ok(())
        } else {
            Err(OpError::failed(op, "OpenSSL could not derive the shared secret"))
        }
    }
}

impl Exchanger for EvpExchanger {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), self.ss_len)?;
        let peer = self.decode("exchange", peer_pk)?;
        let ctx = self.context("exchange", peer)?;
        self.derive_with("exchange", &ctx, ss)
    }

    fn validate(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        let peer = self.decode("validate", peer_pk)?;
        // SAFETY: a live EVP_PKEY.
        if unsafe { shim::cs_peer_check(peer.0) } == 1 {
            Ok(())
        } else {
            Err(rejected("validate", "the peer public key (EVP_PKEY_public_check)"))
        }
    }

    fn set_peer(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        self.peer = None;
        let peer = self.decode("set_peer", peer_pk)?;
        self.peer = Some(self.context("set_peer", peer)?);
        Ok(())
    }

    fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError> {
        let ctx = self
            .peer
            .as_ref()
            .ok_or_else(|| OpError::failed("derive", "no peer key set"))?;
        self.derive_with("derive", ctx, ss)
    }

    fn exchange_spki(&mut self, ss: &mut [u8], der: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), self.ss_len)?;
        // SAFETY: `der` is valid for its length.
        let p = unsafe { shim::cs_peer_from_spki(der.as_ptr(), der.len()) };
        if p.is_null() {
            return Err(rejected("exchange", "the SubjectPublicKeyInfo (d2i_PUBKEY)"));
        }
        let ctx = self.context("exchange", Pkey(p))?;
        self.derive_with("exchange", &ctx, ss)
    }
}

fn exchanger<'a>(own: Pkey, ss_len: usize) -> Box<dyn Exchanger + 'a> {
    Box::new(EvpExchanger {
        own,
        ss_len,
        peer: None,
    })
}

/// A key exchange whose own keys the shim makes and reads (X25519, P-256).
struct Simple {
    desc: Descriptor,
    keypair: unsafe extern "C" fn(*mut u8, *mut u8) -> i32,
    prepare: unsafe extern "C" fn(*const u8) -> *mut c_void,
}

impl Kex for Simple {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // SAFETY: both buffers have the sizes the shim writes (checked above).
        if unsafe { (self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()) } == 1 {
            Ok(())
        } else {
            Err(OpError::failed("keypair", "OpenSSL could not generate a key"))
        }
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        check_len("exchange", "sk", sk.len(), self.desc.sizes.secret_key)?;
        // SAFETY: `sk` holds the private value's size (checked).
        let own = unsafe { (self.prepare)(sk.as_ptr()) };
        if own.is_null() {
            return Err(OpError::failed("exchange", "OpenSSL rejected the private value"));
        }
        Ok(exchanger(Pkey(own), self.desc.sizes.shared_secret))
    }
}

struct Ffdhe2048 {
    desc: Descriptor,
}

impl Kex for Ffdhe2048 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // SAFETY: both buffers hold FFDHE_BYTES bytes, as the shim requires.
        if unsafe { shim::cs_ffdhe2048_keypair(pk.as_mut_ptr(), sk.as_mut_ptr()) } == 1 {
            Ok(())
        } else {
            Err(OpError::failed(
                "keypair",
                "OpenSSL could not generate an ffdhe2048 key",
            ))
        }
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        check_len("exchange", "sk", sk.len(), FFDHE_BYTES)?;
        // SAFETY: `sk` holds FFDHE_BYTES bytes.
        let own = unsafe { shim::cs_ffdhe2048_prepare(sk.as_ptr()) };
        if own.is_null() {
            return Err(OpError::failed("exchange", "OpenSSL rejected the private value"));
        }
        Ok(exchanger(Pkey(own), FFDHE_BYTES))
    }

    fn group_parameters(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut p = vec![0u8; FFDHE_BYTES];
        let mut g = vec![0u8; FFDHE_BYTES];
        // SAFETY: both buffers hold FFDHE_BYTES bytes.
        (unsafe { shim::cs_ffdhe2048_params(p.as_mut_ptr(), g.as_mut_ptr()) } == 1).then_some((p, g))
    }
}

/// OpenSSL's key exchanges.
pub fn subjects() -> Vec<Subject> {
    let sizes = |pk, ss| Sizes {
        public_key: pk,
        secret_key: if pk == 65 { 32 } else { pk },
        ciphertext: 0,
        shared_secret: ss,
    };
    let mut v: Vec<Subject> = vec![
        Subject::Kex(Box::new(Simple {
            desc: descriptor("X25519", sizes(32, 32)),
            keypair: shim::cs_x25519_keypair,
            prepare: shim::cs_x25519_prepare,
        })),
        Subject::Kex(Box::new(Simple {
            desc: descriptor("P-256", sizes(65, 32)),
            keypair: shim::cs_p256_keypair,
            prepare: shim::cs_p256_prepare,
        })),
    ];
    v.push(Subject::Kex(Box::new(Ffdhe2048 {
        desc: descriptor("FFDHE-2048", sizes(FFDHE_BYTES, FFDHE_BYTES)),
    })));
    v
}
