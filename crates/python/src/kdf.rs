//! PBKDF2 (RFC 8018, section 5.2) with HMAC (RFC 2104) over any fixed-output hash of the
//! module, for `cryptoscope.hashlib.pbkdf2_hmac`. The GIL is released while deriving.

use crate::buffer::to_vec;
use crate::hash::find;
use cryptoscope_catalogue::traits::HashState;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// HMAC's two keyed states (after the inner and the outer padded key block).
struct Hmac {
    inner: Box<dyn HashState>,
    outer: Box<dyn HashState>,
    size: usize,
}

impl Hmac {
    fn new(start: &dyn Fn() -> Box<dyn HashState>, block: usize, size: usize, key: &[u8]) -> Hmac {
        // Python's hmac module's rule, which also covers a block shorter than the digest:
        // a key longer than the block is hashed, then zero-padded to the block.
        let mut k = if key.len() > block {
            let mut h = start();
            h.update(key);
            let mut d = vec![0u8; size];
            h.finish(&mut d);
            d
        } else {
            key.to_vec()
        };
        if k.len() < block {
            k.resize(block, 0);
        }
        let (mut inner, mut outer) = (start(), start());
        inner.update(&k.iter().map(|b| b ^ 0x36).collect::<Vec<u8>>());
        outer.update(&k.iter().map(|b| b ^ 0x5c).collect::<Vec<u8>>());
        Hmac { inner, outer, size }
    }

    /// HMAC(key, parts concatenated) into `out` (`size` bytes).
    fn mac(&self, parts: &[&[u8]], out: &mut [u8]) {
        let mut i = self.inner.copy();
        for p in parts {
            i.update(p);
        }
        let mut mid = vec![0u8; self.size];
        i.finish(&mut mid);
        let mut o = self.outer.copy();
        o.update(&mid);
        o.finish(out);
    }
}

fn pbkdf2(mac: &Hmac, salt: &[u8], iterations: u32, out: &mut [u8]) {
    let mut u = vec![0u8; mac.size];
    let mut next = vec![0u8; mac.size];
    for (i, chunk) in out.chunks_mut(mac.size).enumerate() {
        let index = (i as u32 + 1).to_be_bytes();
        mac.mac(&[salt, &index], &mut u);
        let mut t = u.clone();
        for _ in 1..iterations {
            mac.mac(&[&u], &mut next);
            std::mem::swap(&mut u, &mut next);
            t.iter_mut().zip(&u).for_each(|(a, b)| *a ^= b);
        }
        chunk.copy_from_slice(&t[..chunk.len()]);
    }
}

/// PBKDF2-HMAC with the catalogue's hash `catalogue_name`: `dklen` bytes from `password`
/// and `salt` (bytes-like) after `iterations` rounds. `cryptoscope.hashlib.pbkdf2_hmac`
/// checks the arguments the way hashlib does and calls this.
#[pyfunction]
pub fn pbkdf2_hmac<'py>(
    py: Python<'py>,
    catalogue_name: &str,
    password: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    iterations: u32,
    dklen: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let alg = find(catalogue_name)?;
    if alg.xof || iterations == 0 || dklen == 0 || dklen as u64 > (u32::MAX as u64) * alg.digest_size as u64 {
        return Err(PyValueError::new_err("unsupported PBKDF2 hash or parameters"));
    }
    let (password, salt) = (to_vec(password)?, to_vec(salt)?);
    let out = py.detach(|| {
        let mac = Hmac::new(&|| alg.start(), alg.block_size, alg.digest_size, &password);
        let mut out = vec![0u8; dklen];
        pbkdf2(&mac, &salt, iterations, &mut out);
        out
    });
    Ok(PyBytes::new(py, &out))
}
