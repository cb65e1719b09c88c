//! OpenSSL's AEADs (EVP: AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305) as subjects. Each
//! keyed instance holds one encryption and one decryption context with the key expanded
//! once; every call sets only the nonce, as a TLS or QUIC stack on OpenSSL does per record.

use crate::ciphers::{key_len, CipherCtx};
use cryptoscope_catalogue::descriptor::{AeadInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, Aead, AeadKey, OpError, Subject};
use std::ffi::CStr;

mod shim {
    use libc::c_void;
    extern "C" {
        pub fn cs_aead_seal(
            ctx: *mut c_void,
            nonce: *const u8,
            aad: *const u8,
            aad_len: usize,
            data: *mut u8,
            len: usize,
            tag: *mut u8,
        ) -> i32;
        pub fn cs_aead_open(
            ctx: *mut c_void,
            nonce: *const u8,
            aad: *const u8,
            aad_len: usize,
            ct: *const u8,
            len: usize,
            tag: *const u8,
            out: *mut u8,
        ) -> i32;
    }
}

struct Subj {
    desc: Descriptor,
    name: &'static CStr,
    key_bytes: usize,
}

struct Keyed {
    enc: CipherCtx,
    dec: CipherCtx,
}

impl Aead for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
        check_len("keyed", "key", key.len(), self.key_bytes)?;
        Ok(Box::new(Keyed {
            enc: CipherCtx::new("keyed", self.name, key, true)?,
            dec: CipherCtx::new("keyed", self.name, key, false)?,
        }))
    }
}

fn check_nonce(op: &'static str, n: &[u8]) -> Result<(), OpError> {
    if n.len() == 12 {
        Ok(())
    } else {
        Err(OpError::failed(
            op,
            format!("a {}-byte nonce (this subject takes 12)", n.len()),
        ))
    }
}

impl AeadKey for Keyed {
    fn seal(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError> {
        check_nonce("seal", nonce)?;
        check_len("seal", "tag", tag.len(), 16)?;
        // SAFETY: a live context; nonce 12 bytes and tag 16 (checked); the slices are valid
        // for their lengths.
        let ok = unsafe {
            shim::cs_aead_seal(
                self.enc.0,
                nonce.as_ptr(),
                aad.as_ptr(),
                aad.len(),
                data.as_mut_ptr(),
                data.len(),
                tag.as_mut_ptr(),
            )
        };
        if ok == 1 {
            Ok(())
        } else {
            Err(OpError::failed(
                "seal",
                "OpenSSL could not encrypt (EVP_EncryptUpdate/Final)",
            ))
        }
    }
    fn open(&mut self, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
        check_nonce("open", nonce)?;
        check_len("open", "tag", tag.len(), 16)?;
        check_len("open", "out", out.len(), ct.len())?;
        // SAFETY: as in `seal`; `out` holds ct.len() bytes (checked).
        let r = unsafe {
            shim::cs_aead_open(
                self.dec.0,
                nonce.as_ptr(),
                aad.as_ptr(),
                aad.len(),
                ct.as_ptr(),
                ct.len(),
                tag.as_ptr(),
                out.as_mut_ptr(),
            )
        };
        match r {
            1 => Ok(()),
            0 => Err(OpError::failed("open", "authentication failed")),
            _ => Err(OpError::failed(
                "open",
                "OpenSSL could not decrypt (EVP_DecryptUpdate/Final)",
            )),
        }
    }
}

/// AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305, as far as this libcrypto has them.
pub fn subjects() -> Vec<Subject> {
    [
        ("AES-128-GCM", c"AES-128-GCM"),
        ("AES-256-GCM", c"AES-256-GCM"),
        ("ChaCha20-Poly1305", c"ChaCha20-Poly1305"),
    ]
    .into_iter()
    .filter_map(|(alg, name)| {
        let key_bytes = key_len(name)?;
        let info = AeadInfo {
            key_bytes,
            nonce_bytes: 12,
            tag_bytes: 16,
        };
        let desc = Descriptor::aead(
            alg,
            crate::provider(),
            "default",
            crate::version(),
            crate::build(),
            info,
        );
        Some(Subject::Aead(Box::new(Subj { desc, name, key_bytes })))
    })
    .collect()
}
