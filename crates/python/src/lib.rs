//! `cryptoscope._native`: the hash catalogue's streaming subjects (RustCrypto's crates and
//! the `blake3` crate, the same code the `rustcrypto` worker measures, and our SHA-3
//! second-round candidates, the `cryptoscope` worker's) as Python objects.
//! `cryptoscope.hashlib` gives them the `hashlib` interface; `Kem` gives Python the
//! catalogue's KEMs of the same provider (ML-KEM-512/768/1024, randomness from the OS).
//!
//! The GIL is released while hashing inputs of 2,048 bytes or more (CPython's hashlib uses
//! the same threshold). Each object's state is behind a mutex, so an object shared between
//! threads is used by one at a time and never corrupted.

use cryptoscope_catalogue::traits::{HashState, Subject};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Mutex, OnceLock};

/// Inputs at least this long are hashed with the GIL released.
const GIL_MINSIZE: usize = 2048;

struct Algorithm {
    /// Catalogue name ("SHA3-256").
    catalogue: String,
    subject: Subject,
    digest_size: usize,
    block_size: usize,
    xof: bool,
}

fn catalogue() -> &'static [Algorithm] {
    static ALGS: OnceLock<Vec<Algorithm>> = OnceLock::new();
    ALGS.get_or_init(|| {
        cryptoscope_provider_rustcrypto::subjects()
            .into_iter()
            .chain(cryptoscope_provider_cryptoscope::hash_subjects())
            .filter(|s| matches!(s, Subject::Hash(_)))
            .filter_map(|s| {
                let d = s.descriptor();
                let info = cryptoscope_catalogue::names::algorithm(&d.algorithm)?;
                Some(Algorithm {
                    catalogue: d.algorithm.clone(),
                    digest_size: d.sizes.shared_secret,
                    block_size: info.block_size,
                    xof: d.algorithm.starts_with("SHAKE"),
                    subject: s,
                })
            })
            .collect()
    })
}

fn find(catalogue_name: &str) -> PyResult<&'static Algorithm> {
    catalogue()
        .iter()
        .find(|a| a.catalogue == catalogue_name)
        .ok_or_else(|| PyValueError::new_err(format!("unsupported hash type {catalogue_name}")))
}

/// A running hash computation.
#[pyclass(module = "cryptoscope._native", name = "Hash")]
struct PyHash {
    alg: &'static Algorithm,
    /// The name `hashlib` knows it by (`sha3_256`), or the catalogue's.
    name: String,
    state: Mutex<Box<dyn HashState>>,
}

/// The bytes of a bytes-like object (hashlib refuses `str`).
fn with_bytes<R>(py: Python<'_>, data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R + Send) -> PyResult<R>
where
    R: Send,
{
    // The common case first: `bytes` is immutable, its memory is valid while `data` is.
    if let Ok(b) = data.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        if bytes.len() < GIL_MINSIZE {
            return Ok(f(bytes));
        }
        let (ptr, len) = (bytes.as_ptr() as usize, bytes.len());
        // SAFETY: `data` keeps the bytes object (immutable) alive for this whole call.
        return Ok(py.detach(move || f(unsafe { std::slice::from_raw_parts(ptr as *const u8, len) })));
    }
    if data.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err("Strings must be encoded before hashing"));
    }
    let buf: PyBuffer<u8> =
        PyBuffer::get(data).map_err(|_| PyTypeError::new_err("object supporting the buffer API required"))?;
    if !buf.is_c_contiguous() {
        return Err(PyTypeError::new_err("a C-contiguous buffer is required"));
    }
    let (ptr, len) = (buf.buf_ptr() as usize, buf.len_bytes());
    // SAFETY: the buffer export (`buf`) is held until this function returns, so the memory
    // stays valid and cannot be resized; it is read only.
    let run = move || f(unsafe { std::slice::from_raw_parts(ptr as *const u8, len) });
    let r = if len >= GIL_MINSIZE { py.detach(run) } else { run() };
    drop(buf);
    Ok(r)
}

impl PyHash {
    fn lock(&self) -> std::sync::MutexGuard<'_, Box<dyn HashState>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn output(&self, length: Option<usize>) -> PyResult<Vec<u8>> {
        let n = match (self.alg.xof, length) {
            (true, Some(n)) => n,
            (true, None) => return Err(PyTypeError::new_err("digest() missing required argument 'length'")),
            (false, None) => self.alg.digest_size,
            (false, Some(_)) => return Err(PyTypeError::new_err("digest() takes no arguments")),
        };
        let mut out = vec![0u8; n];
        let st = self.lock().copy();
        st.finish(&mut out);
        Ok(out)
    }
}

#[pymethods]
impl PyHash {
    /// The algorithm's name as `hashlib` spells it (`sha3_256`).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The catalogue's name of the algorithm ("SHA3-256").
    #[getter]
    fn catalogue_name(&self) -> &str {
        &self.alg.catalogue
    }

    /// Digest size in bytes (0 for SHAKE, whose length is chosen at `digest`).
    #[getter]
    fn digest_size(&self) -> usize {
        if self.alg.xof {
            0
        } else {
            self.alg.digest_size
        }
    }

    #[getter]
    fn block_size(&self) -> usize {
        self.alg.block_size
    }

    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        // The lock is taken inside, so another thread can hash into another object meanwhile.
        with_bytes(py, data, |b| self.lock().update(b))
    }

    #[pyo3(signature = (length=None))]
    fn digest<'py>(&self, py: Python<'py>, length: Option<usize>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.output(length)?))
    }

    #[pyo3(signature = (length=None))]
    fn hexdigest(&self, length: Option<usize>) -> PyResult<String> {
        let out = self.output(length)?;
        Ok(out.iter().map(|b| format!("{b:02x}")).collect())
    }

    fn copy(&self) -> PyHash {
        PyHash {
            alg: self.alg,
            name: self.name.clone(),
            state: Mutex::new(self.lock().copy()),
        }
    }
}

/// A fresh hash object for a catalogue name, fed `data` if given.
#[pyfunction]
#[pyo3(signature = (catalogue_name, data=None, name=None))]
fn new(
    py: Python<'_>,
    catalogue_name: &str,
    data: Option<&Bound<'_, PyAny>>,
    name: Option<String>,
) -> PyResult<PyHash> {
    let alg = find(catalogue_name)?;
    let h = match &alg.subject {
        Subject::Hash(h) => PyHash {
            alg,
            name: name.unwrap_or_else(|| alg.catalogue.clone()),
            state: Mutex::new(h.start()),
        },
        _ => unreachable!("only hashes are listed"),
    };
    if let Some(d) = data {
        h.update(py, d)?;
    }
    Ok(h)
}

/// Catalogue names of the algorithms this module offers.
#[pyfunction]
fn algorithms() -> Vec<String> {
    catalogue().iter().map(|a| a.catalogue.clone()).collect()
}

/// Crate and version behind each algorithm, e.g. "sha3 0.12.0".
#[pyfunction]
fn versions() -> Vec<(String, String)> {
    catalogue()
        .iter()
        .map(|a| (a.catalogue.clone(), a.subject.descriptor().provider_version.clone()))
        .collect()
}

/// A key encapsulation mechanism of the catalogue.
#[pyclass(module = "cryptoscope._native", name = "Kem", frozen)]
struct PyKem {
    subject: &'static Subject,
}

fn kems() -> &'static [Subject] {
    static KEMS: OnceLock<Vec<Subject>> = OnceLock::new();
    KEMS.get_or_init(|| {
        cryptoscope_provider_rustcrypto::subjects()
            .into_iter()
            .filter(|s| matches!(s, Subject::Kem(_)))
            .collect()
    })
}

fn op_err(e: cryptoscope_catalogue::OpError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

impl PyKem {
    fn kem(&self) -> &dyn cryptoscope_catalogue::Kem {
        match self.subject {
            Subject::Kem(k) => k.as_ref(),
            _ => unreachable!("only KEMs are listed"),
        }
    }
}

#[pymethods]
impl PyKem {
    #[new]
    fn py_new(name: &str) -> PyResult<PyKem> {
        kems()
            .iter()
            .find(|s| s.descriptor().algorithm.eq_ignore_ascii_case(name))
            .map(|subject| PyKem { subject })
            .ok_or_else(|| {
                let known: Vec<&str> = kems().iter().map(|s| s.descriptor().algorithm.as_str()).collect();
                PyValueError::new_err(format!("unknown KEM {name} (offered: {})", known.join(", ")))
            })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.subject.descriptor().algorithm
    }

    /// Byte lengths: public_key, secret_key, ciphertext, shared_secret.
    #[getter]
    fn sizes(&self) -> (usize, usize, usize, usize) {
        let s = &self.subject.descriptor().sizes;
        (s.public_key, s.secret_key, s.ciphertext, s.shared_secret)
    }

    /// A new key pair: (public key, secret key).
    fn keypair<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let s = self.subject.descriptor().sizes;
        let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
        self.kem().keypair(&mut pk, &mut sk).map_err(op_err)?;
        Ok((PyBytes::new(py, &pk), PyBytes::new(py, &sk)))
    }

    /// Encapsulates to `public_key`: (ciphertext, shared secret).
    fn encaps<'py>(&self, py: Python<'py>, public_key: &[u8]) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let s = self.subject.descriptor().sizes;
        let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
        self.kem().encaps(&mut ct, &mut ss, public_key).map_err(op_err)?;
        Ok((PyBytes::new(py, &ct), PyBytes::new(py, &ss)))
    }

    /// Decapsulates `ciphertext` with `secret_key`: the shared secret (implicit rejection:
    /// a modified ciphertext gives an unrelated secret, not an error).
    fn decaps<'py>(&self, py: Python<'py>, secret_key: &[u8], ciphertext: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let mut ss = vec![0u8; self.subject.descriptor().sizes.shared_secret];
        let mut d = self.kem().decapsulator(secret_key).map_err(op_err)?;
        d.decaps(&mut ss, ciphertext).map_err(op_err)?;
        Ok(PyBytes::new(py, &ss))
    }
}

/// Catalogue names of the KEMs this module offers.
#[pyfunction]
fn kem_algorithms() -> Vec<String> {
    kems().iter().map(|s| s.descriptor().algorithm.clone()).collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHash>()?;
    m.add_class::<PyKem>()?;
    m.add_function(wrap_pyfunction!(kem_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(new, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(versions, m)?)?;
    Ok(())
}
