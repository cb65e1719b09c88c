"""cryptoscope: what cryptography costs on your machine.

`cryptoscope.hashlib` is a drop-in for the standard library's `hashlib` (every algorithm of
its `algorithms_guaranteed`, the same constructors and arguments) over the project's hash
catalogue (the code the `rustcrypto` worker measures: RustCrypto's crates and the `blake3`
crate, each gated in the test suite), plus our SHA-3 round-2 candidates and a few more.
`cryptoscope.Kem` (also `cryptoscope.kem.Kem`) offers the catalogue's ML-KEM;
`cryptoscope.suite.run([...])` runs the `cryptoscope` command and returns its results as
plain dicts.
"""

from . import hashlib, kem, suite  # noqa: F401
from ._native import __version__
from .kem import Kem

__all__ = ["Kem", "__version__", "hashlib", "kem", "suite"]
