//! Bytes-like arguments the way CPython's hashlib takes them: any object exporting a
//! contiguous buffer (bytes, bytearray, memoryview, array.array of any item type, mmap, ...)
//! read as its raw bytes; `str` is a TypeError ("Strings must be encoded before hashing"),
//! an object without the buffer protocol a TypeError, a non-contiguous buffer the exporter's
//! BufferError, a multi-dimensional one a BufferError.

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use pyo3::{ffi, PyErr};
use std::mem::MaybeUninit;

/// Inputs at least this long are hashed with the GIL released (CPython's hashlib uses the
/// same threshold).
pub const GIL_MINSIZE: usize = 2048;

/// A held buffer export (`PyBUF_SIMPLE`: C-contiguous bytes), released on drop.
pub struct Buffer {
    view: Box<ffi::Py_buffer>,
}

impl Buffer {
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Buffer> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("Strings must be encoded before hashing"));
        }
        // SAFETY: `obj` is a valid object and we hold the GIL (a `Bound` proves it); the
        // view is written by PyObject_GetBuffer before it is read, and released once (Drop).
        unsafe {
            if ffi::PyObject_CheckBuffer(obj.as_ptr()) == 0 {
                return Err(PyTypeError::new_err("object supporting the buffer API required"));
            }
            let mut view: Box<MaybeUninit<ffi::Py_buffer>> = Box::new(MaybeUninit::uninit());
            if ffi::PyObject_GetBuffer(obj.as_ptr(), view.as_mut_ptr(), ffi::PyBUF_SIMPLE) != 0 {
                return Err(PyErr::fetch(obj.py()));
            }
            let view: Box<ffi::Py_buffer> = Box::from_raw(Box::into_raw(view).cast());
            let buf = Buffer { view };
            if buf.view.ndim > 1 {
                return Err(PyBufferError::new_err("Buffer must be single dimension"));
            }
            Ok(buf)
        }
    }

    /// The exported bytes (valid while `self` is).
    pub fn as_slice(&self) -> &[u8] {
        let len = usize::try_from(self.view.len).unwrap_or(0);
        if len == 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: a PyBUF_SIMPLE export is `len` contiguous bytes at `buf`, kept valid (and
        // not resized) until the export is released.
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer. Every `Buffer` is
        // created and dropped while the GIL is held (the GIL-free work only borrows the
        // bytes through a raw pointer).
        unsafe { ffi::PyBuffer_Release(&mut *self.view) }
    }
}

/// Runs `f` on the bytes of a bytes-like object, with the GIL released for inputs of
/// [`GIL_MINSIZE`] bytes or more.
pub fn with_bytes<R: Send>(py: Python<'_>, data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R + Send) -> PyResult<R> {
    // The common case first: `bytes` is immutable, its memory is valid while `data` is.
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(run(py, b.as_bytes(), f));
    }
    let buf = Buffer::get(data)?;
    let r = run(py, buf.as_slice(), f);
    drop(buf);
    Ok(r)
}

fn run<R: Send>(py: Python<'_>, bytes: &[u8], f: impl FnOnce(&[u8]) -> R + Send) -> R {
    if bytes.len() < GIL_MINSIZE {
        return f(bytes);
    }
    let (ptr, len) = (bytes.as_ptr() as usize, bytes.len());
    // SAFETY: the caller keeps the memory alive and unresized (an immutable bytes object, or
    // a held buffer export) for this whole call; it is only read.
    py.detach(move || f(unsafe { std::slice::from_raw_parts(ptr as *const u8, len) }))
}

/// The bytes of a bytes-like object, copied (for short arguments: keys, salts, passwords).
pub fn to_vec(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if data.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("a bytes-like object is required, not 'str'"));
    }
    Ok(Buffer::get(data)?.as_slice().to_vec())
}
