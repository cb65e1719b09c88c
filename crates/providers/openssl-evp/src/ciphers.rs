//! OpenSSL's Camellia (EVP, ECB without padding) as block cipher subjects: a comparison
//! point (OpenSSL on x86-64 runs its table-driven assembly) and an independent
//! reference for our strategies.

use cryptoscope_catalogue::descriptor::{CipherInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, ctr_from_ecb, BlockCipher, KeyedCipher, OpError, Subject};
use libc::c_void;
use std::ffi::CStr;

pub(crate) mod shim {
    use libc::c_void;
    use std::ffi::c_char;
    extern "C" {
        pub fn cs_cipher_key_len(name: *const c_char) -> usize;
        pub fn cs_cipher_new(name: *const c_char, key: *const u8, key_len: usize, enc: i32) -> *mut c_void;
        pub fn cs_cipher_free(ctx: *mut c_void);
        pub fn cs_ecb(ctx: *mut c_void, data: *mut u8, len: usize) -> i32;
    }
}

/// An EVP_CIPHER_CTX owned here, freed once.
pub(crate) struct CipherCtx(pub(crate) *mut c_void);

// The context belongs to its owner alone; it is never used from two threads at once.
unsafe impl Send for CipherCtx {}

impl Drop for CipherCtx {
    fn drop(&mut self) {
        // SAFETY: a live EVP_CIPHER_CTX (or NULL, which EVP_CIPHER_CTX_free accepts).
        unsafe { shim::cs_cipher_free(self.0) };
    }
}

impl CipherCtx {
    /// A context of `name` keyed with `key`, encrypting (`enc`) or decrypting.
    pub(crate) fn new(op: &'static str, name: &CStr, key: &[u8], enc: bool) -> Result<CipherCtx, OpError> {
        // SAFETY: a NUL-terminated name; `key` is valid for its length.
        let ctx = unsafe { shim::cs_cipher_new(name.as_ptr(), key.as_ptr(), key.len(), i32::from(enc)) };
        if ctx.is_null() {
            return Err(OpError::failed(
                op,
                "OpenSSL could not set up the cipher (EVP_CipherInit_ex2)",
            ));
        }
        Ok(CipherCtx(ctx))
    }
}

/// Key bytes of the cipher `name`, or None if this libcrypto lacks it.
pub(crate) fn key_len(name: &CStr) -> Option<usize> {
    // SAFETY: a NUL-terminated name.
    let n = unsafe { shim::cs_cipher_key_len(name.as_ptr()) };
    (n > 0).then_some(n)
}

struct Subj {
    desc: Descriptor,
    name: &'static CStr,
    key_bytes: usize,
}

struct Keyed {
    name: &'static CStr,
    ctx: CipherCtx,
    key_bytes: usize,
}

impl BlockCipher for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError> {
        check_len("keysched", "key", key.len(), self.key_bytes)?;
        Ok(Box::new(Keyed {
            name: self.name,
            ctx: CipherCtx::new("keysched", self.name, key, true)?,
            key_bytes: key.len(),
        }))
    }
}

impl KeyedCipher for Keyed {
    fn rekey(&mut self, key: &[u8]) -> Result<(), OpError> {
        check_len("keysched", "key", key.len(), self.key_bytes)?;
        self.ctx = CipherCtx::new("keysched", self.name, key, true)?;
        Ok(())
    }
    fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError> {
        if !blocks.len().is_multiple_of(16) {
            return Err(OpError::failed(
                "encrypt",
                format!("{} bytes is not whole blocks", blocks.len()),
            ));
        }
        // SAFETY: a live context; `blocks` is valid for its length, encrypted in place (ECB).
        if unsafe { shim::cs_ecb(self.ctx.0, blocks.as_mut_ptr(), blocks.len()) } != 1 {
            return Err(OpError::failed("encrypt", "EVP_CipherUpdate failed"));
        }
        Ok(())
    }
    fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError> {
        ctr_from_ecb(&mut |b| self.encrypt(b), iv, data)
    }
}

/// Camellia-128 and Camellia-256, if this libcrypto has them.
pub fn subjects() -> Vec<Subject> {
    [
        ("Camellia-128", c"CAMELLIA-128-ECB"),
        ("Camellia-256", c"CAMELLIA-256-ECB"),
    ]
    .into_iter()
    .filter_map(|(alg, name)| {
        let key_bytes = key_len(name)?;
        let info = CipherInfo {
            block_bytes: 16,
            key_bytes,
            batch: 1,
            secret_indexing: None,
            functions: Vec::new(),
            about: "OpenSSL EVP Camellia-ECB (cmll-x86_64 table assembly on x86-64)".into(),
        };
        let desc = Descriptor::block_cipher(
            alg,
            crate::provider(),
            "default",
            crate::version(),
            crate::build(),
            info,
        );
        Some(Subject::Cipher(Box::new(Subj { desc, name, key_bytes })))
    })
    .collect()
}
