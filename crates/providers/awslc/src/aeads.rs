//! AWS-LC's AEADs (`aws_lc_rs::aead::LessSafeKey`: AES-128-GCM, AES-256-GCM,
//! ChaCha20-Poly1305) as subjects: sealing in place with a separate tag, opening from the
//! ciphertext into another buffer (`open_separate_gather`), so neither side copies.

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use cryptoscope_catalogue::descriptor::{AeadInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, Aead, AeadKey, OpError, Subject};

struct Subj {
    desc: Descriptor,
    alg: &'static aead::Algorithm,
}

struct Keyed {
    key: LessSafeKey,
}

impl Aead for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
        let k = UnboundKey::new(self.alg, key).map_err(|_| OpError::failed("keyed", "wrong key length"))?;
        Ok(Box::new(Keyed {
            key: LessSafeKey::new(k),
        }))
    }
}

fn nonce(op: &'static str, n: &[u8]) -> Result<Nonce, OpError> {
    Nonce::try_assume_unique_for_key(n)
        .map_err(|_| OpError::failed(op, format!("a {}-byte nonce (this AEAD takes 12)", n.len())))
}

impl AeadKey for Keyed {
    fn seal(&mut self, n: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError> {
        check_len("seal", "tag", tag.len(), 16)?;
        let t = self
            .key
            .seal_in_place_separate_tag(nonce("seal", n)?, Aad::from(aad), data)
            .map_err(|_| OpError::failed("seal", "refused"))?;
        tag.copy_from_slice(t.as_ref());
        Ok(())
    }
    fn open(&mut self, n: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
        check_len("open", "out", out.len(), ct.len())?;
        self.key
            .open_separate_gather(nonce("open", n)?, Aad::from(aad), ct, tag, out)
            .map_err(|_| OpError::failed("open", "authentication failed"))
    }
}

/// The AEAD subjects.
pub fn subjects() -> Vec<Subject> {
    [
        ("AES-128-GCM", &aead::AES_128_GCM, 16),
        ("AES-256-GCM", &aead::AES_256_GCM, 32),
        ("ChaCha20-Poly1305", &aead::CHACHA20_POLY1305, 32),
    ]
    .into_iter()
    .map(|(name, alg, key_bytes)| {
        let info = AeadInfo {
            key_bytes,
            nonce_bytes: 12,
            tag_bytes: 16,
        };
        let desc = Descriptor::aead(name, crate::PROVIDER, "default", crate::version(), crate::build(), info);
        Subject::Aead(Box::new(Subj { desc, alg }))
    })
    .collect()
}
