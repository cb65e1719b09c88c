//! RustCrypto's `aes-gcm` (AES-128-GCM, AES-256-GCM) and `chacha20poly1305` as AEAD
//! subjects, through their `AeadInOut` interface: sealing in place with a detached tag,
//! opening from the ciphertext into a separate buffer (no copy on either side).

use aes_gcm::aead::inout::InOutBuf;
use aes_gcm::aead::{AeadInOut, KeyInit, Nonce, Tag};
use cryptoscope_catalogue::descriptor::{AeadInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, Aead, AeadKey, OpError, Subject};
use std::marker::PhantomData;

struct Subj<A> {
    desc: Descriptor,
    _a: PhantomData<fn() -> A>,
}

struct Keyed<A> {
    aead: A,
}

impl<A: AeadInOut + KeyInit + Send + 'static> Aead for Subj<A> {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
        let aead = A::new_from_slice(key).map_err(|_| OpError::failed("keyed", "wrong key length"))?;
        Ok(Box::new(Keyed { aead }))
    }
}

fn nonce<'a, A: AeadInOut>(op: &'static str, n: &'a [u8]) -> Result<&'a Nonce<A>, OpError> {
    n.try_into()
        .map_err(|_| OpError::failed(op, format!("a {}-byte nonce (this AEAD takes 12)", n.len())))
}

impl<A: AeadInOut + Send> AeadKey for Keyed<A> {
    fn seal(&mut self, n: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError> {
        check_len("seal", "tag", tag.len(), 16)?;
        let t = self
            .aead
            .encrypt_inout_detached(nonce::<A>("seal", n)?, aad, InOutBuf::from(data))
            .map_err(|_| OpError::failed("seal", "refused (message or data too long)"))?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn open(&mut self, n: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
        check_len("open", "out", out.len(), ct.len())?;
        let tag: &Tag<A> = tag
            .try_into()
            .map_err(|_| OpError::failed("open", format!("a {}-byte tag (this AEAD takes 16)", tag.len())))?;
        let buf = InOutBuf::new(ct, out).map_err(|_| OpError::failed("open", "buffer lengths differ"))?;
        self.aead
            .decrypt_inout_detached(nonce::<A>("open", n)?, aad, buf, tag)
            .map_err(|_| OpError::failed("open", "authentication failed"))
    }
}

fn subject<A: AeadInOut + KeyInit + Send + 'static>(alg: &str, crate_name: &str, key_bytes: usize) -> Subject {
    let info = AeadInfo {
        key_bytes,
        nonce_bytes: 12,
        tag_bytes: 16,
    };
    let desc = Descriptor::aead(
        alg,
        crate::PROVIDER,
        "default",
        cryptoscope_worker::build_info::crate_version(crate_name),
        crate::build_line(),
        info,
    );
    Subject::Aead(Box::new(Subj::<A> { desc, _a: PhantomData }))
}

/// The AEAD subjects.
pub fn subjects() -> Vec<Subject> {
    vec![
        subject::<aes_gcm::Aes128Gcm>("AES-128-GCM", "aes-gcm", 16),
        subject::<aes_gcm::Aes256Gcm>("AES-256-GCM", "aes-gcm", 32),
        subject::<chacha20poly1305::ChaCha20Poly1305>("ChaCha20-Poly1305", "chacha20poly1305", 32),
    ]
}
