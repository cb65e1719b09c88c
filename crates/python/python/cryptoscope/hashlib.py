"""A drop-in for the standard library's ``hashlib`` over cryptoscope's hash catalogue.

    import cryptoscope.hashlib as hashlib
    h = hashlib.new("sha3_256", b"abc")
    h.update(b"more"); h.hexdigest(); h.copy()

Objects have ``name``, ``digest_size``, ``block_size``, ``update``, ``digest``,
``hexdigest`` and ``copy`` like hashlib's; SHAKE's ``digest``/``hexdigest`` take the output
length. Beyond hashlib: ``sha256d`` (Tahoe-LAFS's SHA-256 of SHA-256), ``blake3``, ``k12``
(KangarooTwelve), ``ascon_hash256`` and ``blake2b_256`` (also reached as hashlib's
``blake2b(digest_size=32)``). The GIL is released while hashing inputs of
2,048 bytes or more; objects may be shared between threads.

The SHA-3 competition's fourteen second-round candidates at 256-bit output, in the versions
the 2010 Tahoe-LAFS study measured (our own code, gated on the round-2 KAT files):
``blake256_r2``, ``bmw256``, ``cubehash256``, ``echo256``, ``fugue256``, ``groestl256_r2``,
``hamsi256``, ``jh256_r2``, ``keccak256_r2``, ``luffa256``, ``shabal256``, ``shavite3_256``,
``simd256`` and ``skein512_256`` (Skein v1.3). The four whose algorithm changed for the final
round carry ``_r2``, so that ``keccak256`` (usually the final Keccak) or ``jh256`` (usually
JH-42) never silently means the round-2 function; those names raise a ValueError that says so.
Catalogue names work too: ``new("Shabal-256-r2")``.
"""

from . import _native

# hashlib's name -> the catalogue's name.
_NAMES = {
    "sha256": "SHA-256",
    "sha256d": "SHA-256d",
    "sha512": "SHA-512",
    "sha512_256": "SHA-512/256",
    "sha3_256": "SHA3-256",
    "sha3_512": "SHA3-512",
    "shake_128": "SHAKE128",
    "shake_256": "SHAKE256",
    "blake2b": "BLAKE2b-512",
    "blake2b_256": "BLAKE2b-256",
    "blake2s": "BLAKE2s-256",
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
# Names that usually mean a candidate's final-round version, which we do not offer.
_FINAL_ROUND = {
    "blake256": "BLAKE-256 with 14 rounds",
    "groestl256": "the tweaked Groestl-256",
    "jh256": "JH-256 with 42 rounds",
    "keccak256": "Keccak-256 with the final padding",
}
_offered = set(_native.algorithms())
_NAMES = {k: v for k, v in _NAMES.items() if v in _offered}
_BY_CATALOGUE = {v: k for k, v in _NAMES.items()}

algorithms_guaranteed = frozenset(_NAMES)
algorithms_available = frozenset(_NAMES)

__all__ = ["new", "algorithms_guaranteed", "algorithms_available"] + sorted(_NAMES)


def _canonical(name):
    """hashlib's spelling of ``name``: case-insensitive, '-' for '_', catalogue names too."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    if name in _BY_CATALOGUE:
        return _BY_CATALOGUE[name]
    key = name.lower().replace("-", "_")
    key = {"sha512/256": "sha512_256", "kangarootwelve": "k12", "shake128": "shake_128",
           "shake256": "shake_256"}.get(key, key)
    if key in _FINAL_ROUND and key not in _NAMES:
        raise ValueError("unsupported hash type %s: that name usually means %s; cryptoscope has "
                         "the round-2 version as %s_r2" % (name, _FINAL_ROUND[key], key))
    if key not in _NAMES:
        raise ValueError("unsupported hash type " + name)
    return key


def new(name, data=b"", **kwargs):
    """A new hash object for ``name`` (``hashlib.new``'s contract), fed ``data``."""
    key = _canonical(name)
    cat, shown = _check_options(key, kwargs)
    return _native.new(cat, data, shown)


# BLAKE2b's digest sizes the catalogue has, as hashlib's ``digest_size`` option.
_BLAKE2B_SIZES = {64: ("BLAKE2b-512", "blake2b"), 32: ("BLAKE2b-256", "blake2b")}


def _check_options(key, kwargs):
    """The catalogue algorithm and the reported name for ``key`` with hashlib's options."""
    kwargs.pop("usedforsecurity", None)
    if key == "blake2b" and "digest_size" in kwargs:
        size = kwargs.pop("digest_size")
        if size not in _BLAKE2B_SIZES or _BLAKE2B_SIZES[size][0] not in _offered:
            raise ValueError(
                "cryptoscope.hashlib.blake2b offers digest_size %s only (got %r)"
                % (" or ".join(str(k) for k in sorted(_BLAKE2B_SIZES)), size)
            )
        if not kwargs:
            return _BLAKE2B_SIZES[size]
    if kwargs:
        raise TypeError(
            "cryptoscope.hashlib.%s takes only data and usedforsecurity (the catalogue's "
            "parameter set; got %s)" % (key, ", ".join(sorted(kwargs)))
        )
    return _NAMES[key], key


def _constructor(key):
    cat = _NAMES[key]

    def make(data=b"", **kwargs):
        if kwargs:
            c, shown = _check_options(key, kwargs)
            return _native.new(c, data, shown)
        return _native.new(cat, data, key)

    make.__name__ = make.__qualname__ = key
    make.__doc__ = "A new %s hash object (the catalogue's %s), fed data." % (key, cat)
    return make


for _key in _NAMES:
    globals()[_key] = _constructor(_key)
del _key
