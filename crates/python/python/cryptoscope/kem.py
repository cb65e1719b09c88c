"""The catalogue's KEMs from Python (the `rustcrypto` provider's ML-KEM-512/768/1024; the
C libraries stay in their own worker processes).

    from cryptoscope import kem
    k = kem.Kem("ML-KEM-768")
    pk, sk = k.keypair()
    ct, ss = k.encaps(pk)
    assert k.decaps(sk, ct) == ss

Randomness comes from the operating system. Sizes are ``k.sizes`` (public key, secret key,
ciphertext, shared secret, in bytes); secret keys use FIPS 203's expanded encoding.
"""

from ._native import Kem, kem_algorithms


def algorithms():
    """Catalogue names of the KEMs offered here."""
    return list(kem_algorithms())


__all__ = ["Kem", "algorithms"]
