"""cryptoscope: what cryptography costs on your machine.

`cryptoscope.hashlib` is a drop-in for the standard library's `hashlib` over the project's
hash catalogue (the code the `rustcrypto` worker measures: RustCrypto's crates and the
`blake3` crate). Every algorithm passed the catalogue's known-answer gate in the test suite.
"""

from . import hashlib  # noqa: F401

__all__ = ["hashlib"]
