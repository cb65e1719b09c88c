//! `cryptoscope.Kem`: the catalogue's KEMs of the `rustcrypto` provider (ML-KEM-512/768/1024,
//! randomness from the OS). Keys and ciphertexts are taken as any bytes-like object.

use crate::buffer::to_vec;
use cryptoscope_catalogue::traits::Subject;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::OnceLock;

/// A key encapsulation mechanism of the catalogue, by name (`Kem('ML-KEM-768')`).
#[pyclass(module = "cryptoscope._native", name = "Kem", frozen)]
pub struct PyKem {
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
    /// The KEM called `name` (case-insensitive); ValueError for one the module lacks.
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

    /// The catalogue's name of the KEM (`'ML-KEM-768'`).
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

    /// Encapsulates to `public_key` (bytes-like): (ciphertext, shared secret). ValueError
    /// for a key of the wrong length or encoding.
    fn encaps<'py>(
        &self,
        py: Python<'py>,
        public_key: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let public_key = to_vec(public_key)?;
        let s = self.subject.descriptor().sizes;
        let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
        self.kem().encaps(&mut ct, &mut ss, &public_key).map_err(op_err)?;
        Ok((PyBytes::new(py, &ct), PyBytes::new(py, &ss)))
    }

    /// Decapsulates `ciphertext` with `secret_key` (both bytes-like): the shared secret
    /// (implicit rejection: a modified ciphertext gives an unrelated secret, not an error).
    fn decaps<'py>(
        &self,
        py: Python<'py>,
        secret_key: &Bound<'py, PyAny>,
        ciphertext: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (secret_key, ciphertext) = (to_vec(secret_key)?, to_vec(ciphertext)?);
        let mut ss = vec![0u8; self.subject.descriptor().sizes.shared_secret];
        let mut d = self.kem().decapsulator(&secret_key).map_err(op_err)?;
        d.decaps(&mut ss, &ciphertext).map_err(op_err)?;
        Ok(PyBytes::new(py, &ss))
    }

    fn __repr__(&self) -> String {
        format!("Kem('{}')", self.name())
    }
}

/// Catalogue names of the KEMs this module offers.
#[pyfunction]
pub fn kem_algorithms() -> Vec<String> {
    kems().iter().map(|s| s.descriptor().algorithm.clone()).collect()
}
