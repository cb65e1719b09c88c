//! RustCrypto's `camellia` (Camellia-128/256) and `gift-cipher` (GIFT-128, the original
//! convention of the GIFT paper) as block cipher subjects: comparison points for our own
//! strategies, and independent references their gate checks them against.

use camellia::cipher::{Array, BlockCipherEncrypt, KeyInit};
use cryptoscope_catalogue::descriptor::{CipherInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, ctr_from_ecb, BlockCipher, KeyedCipher, OpError, Subject};
use std::marker::PhantomData;

struct Subj<C> {
    desc: Descriptor,
    _c: PhantomData<fn() -> C>,
}

struct Keyed<C> {
    cipher: C,
    key_bytes: usize,
}

impl<C: BlockCipherEncrypt + KeyInit + Send + 'static> BlockCipher for Subj<C> {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError> {
        let cipher = C::new_from_slice(key).map_err(|_| OpError::failed("keysched", "wrong key length"))?;
        Ok(Box::new(Keyed {
            cipher,
            key_bytes: key.len(),
        }))
    }
}

impl<C: BlockCipherEncrypt + KeyInit + Send> KeyedCipher for Keyed<C> {
    fn rekey(&mut self, key: &[u8]) -> Result<(), OpError> {
        check_len("keysched", "key", key.len(), self.key_bytes)?;
        self.cipher = C::new_from_slice(key).map_err(|_| OpError::failed("keysched", "wrong key length"))?;
        Ok(())
    }
    fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError> {
        let bs = C::block_size();
        if !blocks.len().is_multiple_of(bs) {
            return Err(OpError::failed(
                "encrypt",
                format!("{} bytes is not whole blocks", blocks.len()),
            ));
        }
        for b in blocks.chunks_exact_mut(bs) {
            let block: &mut Array<u8, _> = b.try_into().expect("block-sized chunk");
            self.cipher.encrypt_block(block);
        }
        Ok(())
    }
    fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError> {
        ctr_from_ecb(&mut |b| self.encrypt(b), iv, data)
    }
}

fn subject<C: BlockCipherEncrypt + KeyInit + Send + 'static>(alg: &str, crate_name: &str, about: &str) -> Subject {
    let info = CipherInfo {
        block_bytes: C::block_size(),
        key_bytes: C::key_size(),
        batch: 1,
        secret_indexing: None,
        functions: Vec::new(),
        about: about.into(),
    };
    let desc = Descriptor::block_cipher(
        alg,
        crate::PROVIDER,
        "default",
        cryptoscope_worker::build_info::crate_version(crate_name),
        crate::build_line(),
        info,
    );
    Subject::Cipher(Box::new(Subj::<C> { desc, _c: PhantomData }))
}

/// The block cipher subjects.
pub fn subjects() -> Vec<Subject> {
    vec![
        subject::<gift_cipher::Gift128>(
            "GIFT-128",
            "gift-cipher",
            "RustCrypto gift-cipher: fixsliced, one block at a time",
        ),
        subject::<camellia::Camellia128>(
            "Camellia-128",
            "camellia",
            "RustCrypto camellia: table-driven, one block at a time",
        ),
        subject::<camellia::Camellia256>(
            "Camellia-256",
            "camellia",
            "RustCrypto camellia: table-driven, one block at a time",
        ),
    ]
}
