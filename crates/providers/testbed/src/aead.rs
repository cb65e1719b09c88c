//! Two ChaCha20-Poly1305 subjects that differ only in how `open` compares the received tag
//! with the expected one: `early-exit-tag` byte by byte, stopping at the first difference
//! (the textbook leak: its time tells a forger how many leading tag bytes were right),
//! `constant-tag` with every byte read and one branch on the result. They calibrate the
//! constant-time audit of AEADs: the first must be flagged, the second must not.
//!
//! The cipher is RustCrypto's `chacha20poly1305`, used only to seal. Opening needs the
//! expected tag of a ciphertext: sealing the ciphertext gives the plaintext back (ChaCha20
//! XORs the same key stream), and sealing that plaintext again gives the ciphertext and
//! its genuine tag (RFC 8439 §2.8). Then the two subjects compare.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::ChaCha20Poly1305;
use cryptoscope_catalogue::descriptor::{AeadInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, Aead, AeadKey, OpError, Subject};

#[derive(Clone, Copy, PartialEq)]
enum Compare {
    EarlyExit,
    Constant,
}

struct Subj {
    desc: Descriptor,
    compare: Compare,
}

struct Keyed {
    aead: ChaCha20Poly1305,
    compare: Compare,
    /// Working copy of the message while opening (sized on first use, then reused).
    work: Vec<u8>,
}

impl Aead for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError> {
        let aead = ChaCha20Poly1305::new_from_slice(key).map_err(|_| OpError::failed("keyed", "wrong key length"))?;
        Ok(Box::new(Keyed {
            aead,
            compare: self.compare,
            work: Vec::new(),
        }))
    }
}

impl Keyed {
    fn seal_detached(&self, nonce: &[u8], aad: &[u8], data: &mut [u8]) -> Result<[u8; 16], OpError> {
        let nonce = nonce
            .try_into()
            .map_err(|_| OpError::failed("seal", format!("a {}-byte nonce (12 needed)", nonce.len())))?;
        let tag = self
            .aead
            .encrypt_inout_detached(nonce, aad, data.into())
            .map_err(|_| OpError::failed("seal", "refused"))?;
        Ok(tag.into())
    }
}

impl AeadKey for Keyed {
    fn seal(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError> {
        check_len("seal", "tag", tag.len(), 16)?;
        tag.copy_from_slice(&self.seal_detached(nonce, aad, data)?);
        Ok(())
    }

    fn open(&mut self, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError> {
        check_len("open", "out", out.len(), ct.len())?;
        check_len("open", "tag", tag.len(), 16)?;
        // The plaintext, then the ciphertext again with its expected tag.
        out.copy_from_slice(ct);
        self.seal_detached(nonce, aad, out)?;
        self.work.clear();
        self.work.extend_from_slice(out);
        let mut work = std::mem::take(&mut self.work);
        let expected = self.seal_detached(nonce, aad, &mut work);
        self.work = work;
        let expected = expected?;
        let equal = match self.compare {
            Compare::EarlyExit => crate::early_exit_equal(&expected, tag),
            Compare::Constant => crate::constant_equal(&expected, tag) == 1,
        };
        if equal {
            Ok(())
        } else {
            out.fill(0);
            Err(OpError::failed("open", "authentication failed"))
        }
    }
}

/// The two calibration subjects.
pub fn subjects(build: &str) -> Vec<Subject> {
    let info = AeadInfo {
        key_bytes: 32,
        nonce_bytes: 12,
        tag_bytes: 16,
    };
    [
        (
            Compare::EarlyExit,
            "early-exit-tag",
            "correct, but compares the tag byte by byte and stops at the first difference",
        ),
        (
            Compare::Constant,
            "constant-tag",
            "correct; the tag compared without a branch, one branch on the result",
        ),
    ]
    .into_iter()
    .map(|(compare, name, about)| {
        let mut desc = Descriptor::aead(
            "ChaCha20-Poly1305",
            crate::PROVIDER,
            name,
            format!("testbed {} on chacha20poly1305", env!("CARGO_PKG_VERSION")),
            build.to_string(),
            info,
        );
        desc.algorithm_version = format!("RFC 8439; testbed defect: {about}");
        Subject::Aead(Box::new(Subj { desc, compare }))
    })
    .collect()
}
