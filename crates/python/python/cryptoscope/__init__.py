"""cryptoscope: what cryptography costs on your machine.

`cryptoscope.hashlib` is a drop-in for the standard library's `hashlib` over the project's
hash catalogue (the code the `rustcrypto` worker measures: RustCrypto's crates and the
`blake3` crate). Every algorithm passed the catalogue's known-answer gate in the test suite.
`cryptoscope.kem` offers the catalogue's ML-KEM; `cryptoscope.suite.run([...])` runs the
`cryptoscope` command and returns its results as plain dicts.
"""

from . import hashlib, kem, suite  # noqa: F401

__all__ = ["hashlib", "kem", "suite"]
