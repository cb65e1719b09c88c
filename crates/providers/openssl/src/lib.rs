//! OpenSSL (the system's libcrypto, OpenSSL 3.0 on Debian 12) as a cryptoscope provider:
//! X25519 and ECDH P-256 through the `openssl` crate's EVP wrappers, and FFDHE-2048
//! through a small C shim over the EVP API (`shim/ffdhe.c`); its digests, Camellia and its
//! AEADs (AES-GCM, ChaCha20-Poly1305).
//!
//! Own keys are prepared as EVP_PKEY objects outside timing; the peer's public key is
//! parsed and validated inside the timed exchange, as a TLS server would.

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{check_len, Exchanger, Kex, OpError, Subject};
use openssl::bn::{BigNum, BigNumContext};
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};

mod aeads;
pub mod ciphers;
mod hashes;

/// Canonical provider name.
pub const PROVIDER: &str = "openssl";

fn err(op: &'static str) -> impl Fn(openssl::error::ErrorStack) -> OpError {
    move |e| OpError::failed(op, format!("OpenSSL: {e}"))
}

fn descriptor(alg: &str, sizes: Sizes) -> Descriptor {
    let version = openssl::version::version().to_string();
    let build = format!("system libcrypto ({version}), {}", openssl::version::built_on());
    Descriptor::catalogued(alg, PROVIDER, "default", version, build, sizes, Randomness::Internal)
}

fn derive(own: &PKey<Private>, peer: &PKey<openssl::pkey::Public>, ss: &mut [u8]) -> Result<(), OpError> {
    let mut d = Deriver::new(own).map_err(err("exchange"))?;
    d.set_peer(peer).map_err(err("exchange"))?;
    let n = d.derive(ss).map_err(err("exchange"))?;
    if n != ss.len() {
        return Err(OpError::failed(
            "exchange",
            format!("derived {n} bytes, expected {}", ss.len()),
        ));
    }
    Ok(())
}

struct X25519 {
    desc: Descriptor,
}

impl Kex for X25519 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let k = PKey::generate_x25519().map_err(err("keypair"))?;
        pk.copy_from_slice(&k.raw_public_key().map_err(err("keypair"))?);
        sk.copy_from_slice(&k.raw_private_key().map_err(err("keypair"))?);
        Ok(())
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        let own = PKey::private_key_from_raw_bytes(sk, Id::X25519).map_err(err("exchange"))?;
        Ok(Box::new(X25519Ex { own }))
    }
}

struct X25519Ex {
    own: PKey<Private>,
}

impl Exchanger for X25519Ex {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), 32)?;
        let peer = PKey::public_key_from_raw_bytes(peer_pk, Id::X25519).map_err(err("exchange"))?;
        derive(&self.own, &peer, ss)
    }
}

struct P256 {
    desc: Descriptor,
    group: EcGroup,
}

impl Kex for P256 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let k = EcKey::generate(&self.group).map_err(err("keypair"))?;
        let mut ctx = BigNumContext::new().map_err(err("keypair"))?;
        let p = k
            .public_key()
            .to_bytes(&self.group, PointConversionForm::UNCOMPRESSED, &mut ctx)
            .map_err(err("keypair"))?;
        pk.copy_from_slice(&p);
        sk.copy_from_slice(&k.private_key().to_vec_padded(32).map_err(err("keypair"))?);
        Ok(())
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        let d = BigNum::from_slice(sk).map_err(err("exchange"))?;
        let mut ctx = BigNumContext::new().map_err(err("exchange"))?;
        let mut q = EcPoint::new(&self.group).map_err(err("exchange"))?;
        q.mul_generator2(&self.group, &d, &mut ctx).map_err(err("exchange"))?;
        let key = EcKey::from_private_components(&self.group, &d, &q).map_err(err("exchange"))?;
        let own = PKey::from_ec_key(key).map_err(err("exchange"))?;
        Ok(Box::new(P256Ex {
            own,
            group: &self.group,
            ctx,
        }))
    }
}

struct P256Ex<'a> {
    own: PKey<Private>,
    group: &'a EcGroup,
    ctx: BigNumContext,
}

impl Exchanger for P256Ex<'_> {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), 32)?;
        let point = EcPoint::from_bytes(self.group, peer_pk, &mut self.ctx).map_err(err("exchange"))?;
        let key = EcKey::from_public_key(self.group, &point).map_err(err("exchange"))?;
        let peer = PKey::from_ec_key(key).map_err(err("exchange"))?;
        derive(&self.own, &peer, ss)
    }
}

mod shim {
    use libc::c_void;
    extern "C" {
        pub fn cs_ffdhe2048_keypair(pk: *mut u8, sk: *mut u8) -> i32;
        pub fn cs_ffdhe2048_params(p: *mut u8, g: *mut u8) -> i32;
        pub fn cs_ffdhe2048_prepare(sk: *const u8) -> *mut c_void;
        pub fn cs_ffdhe2048_exchange(own: *mut c_void, ss: *mut u8, peer: *const u8) -> i32;
        pub fn cs_ffdhe2048_free(own: *mut c_void);
    }
}

const FFDHE_BYTES: usize = 256;

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
        Ok(Box::new(FfdheEx { own }))
    }

    fn group_parameters(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut p = vec![0u8; FFDHE_BYTES];
        let mut g = vec![0u8; FFDHE_BYTES];
        // SAFETY: both buffers hold FFDHE_BYTES bytes.
        (unsafe { shim::cs_ffdhe2048_params(p.as_mut_ptr(), g.as_mut_ptr()) } == 1).then_some((p, g))
    }
}

struct FfdheEx {
    own: *mut libc::c_void,
}

impl Drop for FfdheEx {
    fn drop(&mut self) {
        // SAFETY: `own` came from cs_ffdhe2048_prepare and is freed once.
        unsafe { shim::cs_ffdhe2048_free(self.own) };
    }
}

impl Exchanger for FfdheEx {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), FFDHE_BYTES)?;
        check_len("exchange", "peer_pk", peer_pk.len(), FFDHE_BYTES)?;
        // SAFETY: lengths checked; `own` is a live EVP_PKEY.
        if unsafe { shim::cs_ffdhe2048_exchange(self.own, ss.as_mut_ptr(), peer_pk.as_ptr()) } == 1 {
            Ok(())
        } else {
            Err(OpError::failed(
                "exchange",
                "OpenSSL rejected the peer public value or derivation failed",
            ))
        }
    }
}

/// OpenSSL's subjects.
pub fn subjects() -> Vec<Subject> {
    let mut v: Vec<Subject> = vec![Subject::Kex(Box::new(X25519 {
        desc: descriptor(
            "X25519",
            Sizes {
                public_key: 32,
                secret_key: 32,
                ciphertext: 0,
                shared_secret: 32,
            },
        ),
    }))];
    if let Ok(group) = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1) {
        v.push(Subject::Kex(Box::new(P256 {
            desc: descriptor(
                "P-256",
                Sizes {
                    public_key: 65,
                    secret_key: 32,
                    ciphertext: 0,
                    shared_secret: 32,
                },
            ),
            group,
        })));
    }
    v.push(Subject::Kex(Box::new(Ffdhe2048 {
        desc: descriptor(
            "FFDHE-2048",
            Sizes {
                public_key: FFDHE_BYTES,
                secret_key: FFDHE_BYTES,
                ciphertext: 0,
                shared_secret: FFDHE_BYTES,
            },
        ),
    })));
    v.extend(hashes::subjects());
    v.extend(ciphers::subjects());
    v.extend(aeads::subjects());
    v
}
