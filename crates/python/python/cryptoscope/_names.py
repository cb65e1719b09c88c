"""The names ``cryptoscope.hashlib`` knows each algorithm by.

For the algorithms CPython's ``hashlib`` has, ``new(name)`` accepts exactly the names
CPython's accepts (CPython 3.9-3.14 built with OpenSSL 3, as Debian and most distributions
ship it): the hashlib name itself (``'sha3_256'``, case-sensitive), ``_hashlib``'s own alias
(``'SHA512_256'``), and OpenSSL 3's names and OIDs of the digest, matched without regard to
case (``'SHA-256'``, ``'sha2-256'``, ``'2.16.840.1.101.3.4.2.1'``, ``'BLAKE2b512'``). Other
spellings (``'SHA3_256'``, ``'sha_256'``) are a ValueError there and here.

Our other algorithms are found more freely: case-insensitive, ``-`` for ``_``, or by
catalogue name (``'Shabal-256-r2'``).
"""

# CPython's algorithms_guaranteed: hashlib name -> catalogue name.
GUARANTEED = {
    "md5": "MD5",
    "sha1": "SHA-1",
    "sha224": "SHA-224",
    "sha256": "SHA-256",
    "sha384": "SHA-384",
    "sha512": "SHA-512",
    "sha3_224": "SHA3-224",
    "sha3_256": "SHA3-256",
    "sha3_384": "SHA3-384",
    "sha3_512": "SHA3-512",
    "shake_128": "SHAKE128",
    "shake_256": "SHAKE256",
    "blake2b": "BLAKE2b-512",
    "blake2s": "BLAKE2s-256",
}

# Ours beyond the guaranteed ones: hashlib-style name -> catalogue name.
EXTRA = {
    "sha512_256": "SHA-512/256",
    "sha256d": "SHA-256d",
    "blake2b_256": "BLAKE2b-256",
    "blake3": "BLAKE3",
    "k12": "KangarooTwelve",
    "ascon_hash256": "Ascon-Hash256",
    # The SHA-3 second-round candidates (crates/sha3r2).
    "blake256_r2": "BLAKE-256-r2",
    "bmw256": "BMW-256-r2",
    "cubehash256": "CubeHash-256-r2",
    "echo256": "ECHO-256-r2",
    "fugue256": "Fugue-256-r2",
    "groestl256_r2": "Groestl-256-r2",
    "hamsi256": "Hamsi-256-r2",
    "jh256_r2": "JH-256-r2",
    "keccak256_r2": "Keccak-256-r2",
    "luffa256": "Luffa-256-r2",
    "shabal256": "Shabal-256-r2",
    "shavite3_256": "SHAvite-3-256-r2",
    "simd256": "SIMD-256-r2",
    "skein512_256": "Skein-512-256-v1.3",
}

# OpenSSL 3's names and OIDs of each digest (`openssl list -digest-algorithms`), which
# CPython's new() resolves through OpenSSL, case-insensitively. CPython also finds the
# legacy aliases ("RSA-SHA256", "sha256WithRSAEncryption") nowhere, and neither do we.
OPENSSL_NAMES = {
    "md5": ("MD5", "SSL3-MD5", "1.2.840.113549.2.5"),
    "sha1": ("SHA1", "SHA-1", "SSL3-SHA1", "1.3.14.3.2.26"),
    "sha224": ("SHA2-224", "SHA-224", "SHA224", "2.16.840.1.101.3.4.2.4"),
    "sha256": ("SHA2-256", "SHA-256", "SHA256", "2.16.840.1.101.3.4.2.1"),
    "sha384": ("SHA2-384", "SHA-384", "SHA384", "2.16.840.1.101.3.4.2.2"),
    "sha512": ("SHA2-512", "SHA-512", "SHA512", "2.16.840.1.101.3.4.2.3"),
    "sha512_256": ("SHA2-512/256", "SHA-512/256", "SHA512-256", "2.16.840.1.101.3.4.2.6"),
    "sha3_224": ("SHA3-224", "2.16.840.1.101.3.4.2.7"),
    "sha3_256": ("SHA3-256", "2.16.840.1.101.3.4.2.8"),
    "sha3_384": ("SHA3-384", "2.16.840.1.101.3.4.2.9"),
    "sha3_512": ("SHA3-512", "2.16.840.1.101.3.4.2.10"),
    "shake_128": ("SHAKE-128", "SHAKE128", "2.16.840.1.101.3.4.2.11"),
    "shake_256": ("SHAKE-256", "SHAKE256", "2.16.840.1.101.3.4.2.12"),
    "blake2b": ("BLAKE2B-512", "BLAKE2b512", "1.3.6.1.4.1.1722.12.2.1.16"),
    "blake2s": ("BLAKE2S-256", "BLAKE2s256", "1.3.6.1.4.1.1722.12.2.2.8"),
}

# Exact (case-sensitive) spellings CPython's _hashlib adds.
EXACT_ALIASES = {"SHA512_256": "sha512_256"}

# Free spellings of our own algorithms (after lower-casing and '-' -> '_').
EXTRA_SYNONYMS = {"kangarootwelve": "k12", "sha_256d": "sha256d"}

# Names that usually mean a candidate's final-round version, which we do not offer.
FINAL_ROUND = {
    "blake256": "BLAKE-256 with 14 rounds",
    "groestl256": "the tweaked Groestl-256",
    "jh256": "JH-256 with 42 rounds",
    "keccak256": "Keccak-256 with the final padding",
}


def tables(offered):
    """(exact, folded, extra) lookup tables restricted to the names in ``offered``: exact
    spellings -> name, case-folded OpenSSL names -> name, and our extras' free spellings."""
    exact = {k: k for k in offered if k in GUARANTEED or k in OPENSSL_NAMES}
    exact.update((a, k) for a, k in EXACT_ALIASES.items() if k in offered)
    folded = {}
    for k, names in OPENSSL_NAMES.items():
        if k in offered:
            folded.update((n.lower(), k) for n in names)
    extra = {}
    for k, cat in EXTRA.items():
        if k in offered and k not in OPENSSL_NAMES:
            extra[k] = k
            extra[cat.lower().replace("-", "_")] = k
    extra.update((s, k) for s, k in EXTRA_SYNONYMS.items() if k in offered)
    return exact, folded, extra
