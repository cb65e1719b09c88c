//! `cryptoscope._native`: the hash catalogue's streaming subjects (RustCrypto's crates and
//! the `blake3` crate, the same code the `rustcrypto` worker measures, and our SHA-3
//! second-round candidates, the `cryptoscope` worker's), hashlib's remaining guaranteed
//! algorithms and BLAKE2 with parameters (RustCrypto and `blake2*_simd`, linked here only),
//! and PBKDF2-HMAC, as Python objects. `cryptoscope.hashlib` gives them the `hashlib`
//! interface; `Kem` gives Python the catalogue's KEMs of the same provider.

mod algorithms;
mod buffer;
mod hash;
mod kdf;
mod kem;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Where this build came from and put its outputs: `cryptoscope.suite` looks there for
    // the `cryptoscope` binary (crates/python of the repository; the cargo profile directory).
    m.add("BUILD_SOURCE_DIR", env!("CARGO_MANIFEST_DIR"))?;
    m.add("BUILD_PROFILE_DIR", env!("CRYPTOSCOPE_PY_PROFILE_DIR"))?;
    m.add_class::<hash::PyHash>()?;
    m.add_class::<kem::PyKem>()?;
    m.add_function(wrap_pyfunction!(hash::new, m)?)?;
    m.add_function(wrap_pyfunction!(hash::blake2, m)?)?;
    m.add_function(wrap_pyfunction!(hash::algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(hash::versions, m)?)?;
    m.add_function(wrap_pyfunction!(kdf::pbkdf2_hmac, m)?)?;
    m.add_function(wrap_pyfunction!(kem::kem_algorithms, m)?)?;
    Ok(())
}
