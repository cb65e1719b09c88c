//! The hash object (`cryptoscope._native.Hash`): hashlib's interface over a running state.
//! Each object's state is behind a mutex, so an object shared between threads is used by
//! one at a time and never corrupted; the GIL is released while hashing long inputs.

use crate::algorithms::{self as algs, Algorithm, Blake2Params};
use crate::buffer::with_bytes;
use cryptoscope_catalogue::traits::HashState;
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::sync::Mutex;

/// SHAKE output lengths from this on are refused (as CPython's own SHAKE does).
const XOF_MAX: i64 = 1 << 29;

pub fn find(catalogue_name: &str) -> PyResult<&'static Algorithm> {
    algs::catalogue()
        .iter()
        .find(|a| a.catalogue == catalogue_name)
        .ok_or_else(|| PyValueError::new_err(format!("unsupported hash type {catalogue_name}")))
}

/// A running hash computation: `update` it with bytes-like objects, read `digest()` or
/// `hexdigest()` (SHAKE: `digest(length)`) at any point, `copy()` it to branch.
// Immutable like CPython's hash types (Python 3.10 and later can make a class so).
#[cfg_attr(
    Py_3_10,
    pyclass(module = "cryptoscope._native", name = "Hash", frozen, immutable_type)
)]
#[cfg_attr(not(Py_3_10), pyclass(module = "cryptoscope._native", name = "Hash", frozen))]
pub struct PyHash {
    name: String,
    catalogue: &'static str,
    digest_size: usize,
    block_size: usize,
    xof: bool,
    keccak: Option<(usize, u8)>,
    state: Mutex<Box<dyn HashState>>,
}

impl PyHash {
    fn from_algorithm(alg: &'static Algorithm, name: String) -> PyHash {
        PyHash {
            name,
            catalogue: &alg.catalogue,
            digest_size: alg.digest_size,
            block_size: alg.block_size,
            xof: alg.xof,
            keccak: alg.keccak(),
            state: Mutex::new(alg.start()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Box<dyn HashState>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn output(&self, length: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
        let n = match (self.xof, length) {
            (true, Some(n)) => {
                let n: i64 = n.extract()?;
                if n < 0 {
                    return Err(PyValueError::new_err("length must be non-negative"));
                }
                if n >= XOF_MAX {
                    return Err(PyValueError::new_err("length is too large"));
                }
                n as usize
            }
            (true, None) => {
                return Err(PyTypeError::new_err(
                    "digest() missing required argument 'length' (pos 1)",
                ))
            }
            (false, None) => self.digest_size,
            (false, Some(_)) => return Err(PyTypeError::new_err("digest() takes no arguments (1 given)")),
        };
        let mut out = vec![0u8; n];
        let st = self.lock().copy();
        st.finish(&mut out);
        Ok(out)
    }

    fn feed(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        // The lock is taken inside, so another thread can hash into another object meanwhile.
        with_bytes(py, data, |b| self.lock().update(b))
    }
}

/// The optional `length` of `digest`/`hexdigest`, positional or by keyword; an explicit
/// `None` counts as given (as in CPython, where a fixed-size digest takes no argument).
fn length_argument<'py>(
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let by_name = match kwargs {
        Some(k) if !k.is_empty() => {
            if k.len() > 1 || args.len() > 0 {
                return Err(PyTypeError::new_err("digest() takes at most 1 argument"));
            }
            Some(
                k.get_item("length")?
                    .ok_or_else(|| PyTypeError::new_err("digest() got an unexpected keyword argument"))?,
            )
        }
        _ => None,
    };
    match args.len() {
        0 => Ok(by_name),
        1 => Ok(Some(args.get_item(0)?)),
        n => Err(PyTypeError::new_err(format!(
            "digest() takes at most 1 argument ({n} given)"
        ))),
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[pymethods]
impl PyHash {
    /// Hash objects come from `cryptoscope.hashlib`'s constructors, not from this type.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyHash> {
        Err(PyTypeError::new_err(
            "cannot create 'cryptoscope._native.Hash' instances",
        ))
    }

    /// The algorithm's name as hashlib spells it (`'sha3_256'`); `new(h.name)` makes another.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The catalogue's name of the algorithm (`'SHA3-256'`), or the BLAKE2 variant for a
    /// blake2b/blake2s object made with parameters.
    #[getter]
    fn catalogue_name(&self) -> &str {
        self.catalogue
    }

    /// The size of the digest in bytes (0 for SHAKE, whose length is chosen at `digest`).
    #[getter]
    fn digest_size(&self) -> usize {
        if self.xof {
            0
        } else {
            self.digest_size
        }
    }

    /// The internal block size of the algorithm in bytes (for SHA-3 and SHAKE, the rate).
    #[getter]
    fn block_size(&self) -> usize {
        self.block_size
    }

    /// SHA-3/SHAKE only: Keccak's rate in bits.
    #[getter]
    fn _rate_bits(&self) -> PyResult<usize> {
        self.keccak
            .map(|k| k.0)
            .ok_or_else(|| PyAttributeError::new_err("_rate_bits"))
    }

    /// SHA-3/SHAKE only: Keccak's capacity in bits (1600 minus the rate).
    #[getter]
    fn _capacity_bits(&self) -> PyResult<usize> {
        self.keccak
            .map(|k| 1600 - k.0)
            .ok_or_else(|| PyAttributeError::new_err("_capacity_bits"))
    }

    /// SHA-3/SHAKE only: the domain-separation suffix (`b'\x06'` for SHA-3, `b'\x1f'` for SHAKE).
    #[getter]
    fn _suffix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.keccak
            .map(|k| PyBytes::new(py, &[k.1]))
            .ok_or_else(|| PyAttributeError::new_err("_suffix"))
    }

    /// Update this hash object's state with the provided bytes-like object. Repeated calls
    /// are equivalent to one call with the concatenation of all the arguments.
    #[pyo3(signature = (data, /))]
    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.feed(py, data)
    }

    /// The digest of the data passed to `update` so far, as bytes (`digest_size` long; for
    /// SHAKE, `length` bytes, a required argument there and none elsewhere). The object stays
    /// usable.
    #[pyo3(signature = (*args, **kwargs), text_signature = "($self, /, length=None)")]
    fn digest<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.output(length_argument(args, kwargs)?.as_ref())?))
    }

    /// Like `digest`, as a string of twice the length holding only hexadecimal digits.
    #[pyo3(signature = (*args, **kwargs), text_signature = "($self, /, length=None)")]
    fn hexdigest(&self, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        Ok(hex(&self.output(length_argument(args, kwargs)?.as_ref())?))
    }

    /// A copy ("clone") of the hash object: updating one never changes the other.
    fn copy(&self) -> PyHash {
        PyHash {
            name: self.name.clone(),
            catalogue: self.catalogue,
            digest_size: self.digest_size,
            block_size: self.block_size,
            xof: self.xof,
            keccak: self.keccak,
            state: Mutex::new(self.lock().copy()),
        }
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        format!(
            "<{} cryptoscope._native.Hash object @ {:#x}>",
            slf.get().name,
            slf.as_ptr() as usize
        )
    }
}

/// A fresh hash object for a catalogue name (`'SHA3-256'`), fed `data` (a bytes-like
/// object); `name` is what its `name` attribute says (default: the catalogue name).
#[pyfunction]
#[pyo3(signature = (catalogue_name, data, name=None))]
pub fn new(py: Python<'_>, catalogue_name: &str, data: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<PyHash> {
    let alg = find(catalogue_name)?;
    let h = PyHash::from_algorithm(alg, name.unwrap_or_else(|| alg.catalogue.clone()));
    h.feed(py, data)?;
    Ok(h)
}

fn check(ok: bool, what: &str) -> PyResult<()> {
    if ok {
        Ok(())
    } else {
        Err(PyValueError::new_err(what.to_string()))
    }
}

/// A BLAKE2b (`variant='blake2b'`) or BLAKE2s hash object with RFC 7693's parameters (the
/// `blake2b_simd`/`blake2s_simd` crates), fed `data`. `cryptoscope.hashlib.blake2b` checks
/// the arguments the way hashlib does and calls this.
#[pyfunction]
#[pyo3(signature = (variant, data, digest_size, key, salt, person, fanout, depth, leaf_size, node_offset,
                    node_depth, inner_size, last_node))]
#[allow(clippy::too_many_arguments)]
pub fn blake2(
    py: Python<'_>,
    variant: &str,
    data: &Bound<'_, PyAny>,
    digest_size: usize,
    key: &[u8],
    salt: &[u8],
    person: &[u8],
    fanout: u8,
    depth: u8,
    leaf_size: u32,
    node_offset: u64,
    node_depth: u8,
    inner_size: usize,
    last_node: bool,
) -> PyResult<PyHash> {
    let (big, catalogue, max, block) = match variant {
        "blake2b" => (true, "BLAKE2b (parameters)", 64, 128),
        "blake2s" => (false, "BLAKE2s (parameters)", 32, 64),
        _ => return Err(PyValueError::new_err(format!("unsupported hash type {variant}"))),
    };
    check((1..=max).contains(&digest_size), "digest_size out of range")?;
    check(key.len() <= max, "key too long")?;
    check(
        salt.len() <= max / 4 && person.len() <= max / 4,
        "salt or person too long",
    )?;
    check(depth >= 1 && inner_size <= max, "depth or inner_size out of range")?;
    check(big || node_offset < 1 << 48, "node_offset out of range")?;
    let p = Blake2Params {
        digest_size,
        key,
        salt,
        person,
        fanout,
        depth,
        leaf_size,
        node_offset,
        node_depth,
        inner_size,
        last_node,
    };
    let h = PyHash {
        name: variant.to_string(),
        catalogue,
        digest_size,
        block_size: block,
        xof: false,
        keccak: None,
        state: Mutex::new(algs::blake2(big, &p)),
    };
    h.feed(py, data)?;
    Ok(h)
}

/// Catalogue names of the algorithms this module offers.
#[pyfunction]
pub fn algorithms() -> Vec<String> {
    algs::catalogue().iter().map(|a| a.catalogue.clone()).collect()
}

/// Crate and version behind each algorithm, e.g. `('SHA3-256', 'sha3 0.12.0')`; the
/// parameterised BLAKE2 objects last.
#[pyfunction]
pub fn versions() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = algs::catalogue()
        .iter()
        .map(|a| (a.catalogue.clone(), a.version.clone()))
        .collect();
    v.push(("BLAKE2b (parameters)".into(), algs::crate_version("blake2b_simd")));
    v.push(("BLAKE2s (parameters)".into(), algs::crate_version("blake2s_simd")));
    v
}
