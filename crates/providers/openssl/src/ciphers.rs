//! OpenSSL's Camellia (EVP, ECB without padding) as block cipher subjects: a comparison
//! point (OpenSSL 3.0 on x86-64 runs its table-driven assembly) and an independent
//! reference for our strategies.

use cryptoscope_catalogue::descriptor::{CipherInfo, Descriptor};
use cryptoscope_catalogue::traits::{check_len, ctr_from_ecb, BlockCipher, KeyedCipher, OpError, Subject};
use openssl::symm::{Cipher, Crypter, Mode};

struct Subj {
    desc: Descriptor,
    cipher: Cipher,
}

struct Keyed {
    cipher: Cipher,
    crypter: Crypter,
    key_bytes: usize,
    /// Output buffer: EVP_CipherUpdate wants one block of room beyond the input.
    out: Vec<u8>,
}

// The EVP_CIPHER_CTX belongs to this instance alone; it is never used from two threads at once.
unsafe impl Send for Keyed {}

fn crypter(cipher: Cipher, key: &[u8]) -> Result<Crypter, OpError> {
    let mut c =
        Crypter::new(cipher, Mode::Encrypt, key, None).map_err(|e| OpError::failed("keysched", e.to_string()))?;
    c.pad(false);
    Ok(c)
}

impl BlockCipher for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError> {
        check_len("keysched", "key", key.len(), self.cipher.key_len())?;
        Ok(Box::new(Keyed {
            cipher: self.cipher,
            crypter: crypter(self.cipher, key)?,
            key_bytes: key.len(),
            out: Vec::new(),
        }))
    }
}

impl KeyedCipher for Keyed {
    fn rekey(&mut self, key: &[u8]) -> Result<(), OpError> {
        check_len("keysched", "key", key.len(), self.key_bytes)?;
        self.crypter = crypter(self.cipher, key)?;
        Ok(())
    }
    fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError> {
        if !blocks.len().is_multiple_of(16) {
            return Err(OpError::failed(
                "encrypt",
                format!("{} bytes is not whole blocks", blocks.len()),
            ));
        }
        self.out.resize(blocks.len() + 16, 0);
        let n = self
            .crypter
            .update(blocks, &mut self.out)
            .map_err(|e| OpError::failed("encrypt", e.to_string()))?;
        if n != blocks.len() {
            return Err(OpError::failed(
                "encrypt",
                format!("EVP gave {n} bytes for {}", blocks.len()),
            ));
        }
        blocks.copy_from_slice(&self.out[..n]);
        Ok(())
    }
    fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError> {
        ctr_from_ecb(&mut |b| self.encrypt(b), iv, data)
    }
}

/// Camellia-128 and Camellia-256, if this libcrypto has them.
pub fn subjects() -> Vec<Subject> {
    let version = openssl::version::version().to_string();
    let build = format!("system libcrypto ({version}), {}", openssl::version::built_on());
    [
        ("Camellia-128", Cipher::camellia_128_ecb()),
        ("Camellia-256", Cipher::camellia_256_ecb()),
    ]
    .into_iter()
    .filter(|(_, c)| Crypter::new(*c, Mode::Encrypt, &vec![0u8; c.key_len()], None).is_ok())
    .map(|(alg, cipher)| {
        let info = CipherInfo {
            block_bytes: 16,
            key_bytes: cipher.key_len(),
            batch: 1,
            secret_indexing: None,
            functions: Vec::new(),
            about: "OpenSSL EVP Camellia-ECB (cmll-x86_64 table assembly on x86-64)".into(),
        };
        let desc = Descriptor::block_cipher(alg, crate::PROVIDER, "default", version.clone(), build.clone(), info);
        Subject::Cipher(Box::new(Subj { desc, cipher }))
    })
    .collect()
}
