//! OpenSSL's AEADs (EVP: AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305) as subjects. Each
//! keyed instance holds one encryption and one decryption context with the key expanded
//! once; every call sets only the nonce, as a TLS or QUIC stack on OpenSSL does per record.

use cryptoscope_catalogue::descriptor::{AeadInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, Aead, AeadKey, OpError, Subject};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

struct Subj {
    desc: Descriptor,
    cipher: &'static CipherRef,
}

struct Keyed {
    enc: CipherCtx,
    dec: CipherCtx,
}

// The EVP_CIPHER_CTXs belong to this instance alone; they are never used from two threads
// at once.
unsafe impl Send for Keyed {}

fn evp(op: &'static str) -> impl Fn(openssl::error::ErrorStack) -> OpError {
    move |e| OpError::failed(op, e.to_string())
}

impl Aead for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
        check_len("keyed", "key", key.len(), self.cipher.key_length())?;
        let mut enc = CipherCtx::new().map_err(evp("keyed"))?;
        enc.encrypt_init(Some(self.cipher), Some(key), None)
            .map_err(evp("keyed"))?;
        let mut dec = CipherCtx::new().map_err(evp("keyed"))?;
        dec.decrypt_init(Some(self.cipher), Some(key), None)
            .map_err(evp("keyed"))?;
        Ok(Box::new(Keyed { enc, dec }))
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
        let c = &mut self.enc;
        c.encrypt_init(None, None, Some(nonce)).map_err(evp("seal"))?;
        c.cipher_update(aad, None).map_err(evp("seal"))?;
        let n = data.len();
        let got = c.cipher_update_inplace(data, n).map_err(evp("seal"))?;
        let fin = c.cipher_final(&mut []).map_err(evp("seal"))?;
        if got + fin != n {
            return Err(OpError::failed("seal", format!("EVP gave {} bytes for {n}", got + fin)));
        }
        c.tag(tag).map_err(evp("seal"))
    }
    fn open(&mut self, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
        check_nonce("open", nonce)?;
        check_len("open", "tag", tag.len(), 16)?;
        check_len("open", "out", out.len(), ct.len())?;
        let c = &mut self.dec;
        c.decrypt_init(None, None, Some(nonce)).map_err(evp("open"))?;
        c.cipher_update(aad, None).map_err(evp("open"))?;
        let got = c.cipher_update(ct, Some(out)).map_err(evp("open"))?;
        c.set_tag(tag).map_err(evp("open"))?;
        // EVP_DecryptFinal_ex fails when the tag does not match.
        let fin = c
            .cipher_final(&mut [])
            .map_err(|_| OpError::failed("open", "authentication failed"))?;
        if got + fin != ct.len() {
            return Err(OpError::failed(
                "open",
                format!("EVP gave {} bytes for {}", got + fin, ct.len()),
            ));
        }
        Ok(())
    }
}

/// AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305, as far as this libcrypto has them.
pub fn subjects() -> Vec<Subject> {
    let version = openssl::version::version().to_string();
    let build = format!("system libcrypto ({version}), {}", openssl::version::built_on());
    [
        ("AES-128-GCM", Cipher::aes_128_gcm()),
        ("AES-256-GCM", Cipher::aes_256_gcm()),
        ("ChaCha20-Poly1305", Cipher::chacha20_poly1305()),
    ]
    .into_iter()
    .filter(|(_, c)| {
        CipherCtx::new().is_ok_and(|mut x| x.encrypt_init(Some(*c), Some(&vec![0u8; c.key_length()]), None).is_ok())
    })
    .map(|(alg, cipher)| {
        let info = AeadInfo {
            key_bytes: cipher.key_length(),
            nonce_bytes: 12,
            tag_bytes: 16,
        };
        let desc = Descriptor::aead(alg, crate::PROVIDER, "default", version.clone(), build.clone(), info);
        Subject::Aead(Box::new(Subj { desc, cipher }))
    })
    .collect()
}
