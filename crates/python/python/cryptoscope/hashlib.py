"""A drop-in for the standard library's ``hashlib`` over cryptoscope's hash catalogue.

    import cryptoscope.hashlib as hashlib
    h = hashlib.new("sha3_256", b"abc")
    h.update(b"more"); h.hexdigest(); h.copy()

Every algorithm of CPython's ``hashlib.algorithms_guaranteed`` (``md5``, ``sha1``,
``sha224``, ``sha256``, ``sha384``, ``sha512``, ``sha3_224``, ``sha3_256``, ``sha3_384``,
``sha3_512``, ``shake_128``, ``shake_256``, ``blake2b``, ``blake2s``) with CPython's
constructors and arguments: ``new(name, data=b'', **kwargs)``, the named constructors
(``sha256(string=b'', *, usedforsecurity=True)``; on Python 3.14 and later also
``data=``, as CPython 3.14 takes it), ``blake2b``/``blake2s`` with ``digest_size``, ``key``,
``salt``, ``person`` and the tree parameters, ``pbkdf2_hmac`` and ``file_digest``. Objects
have ``name``, ``digest_size``, ``block_size``, ``update``, ``digest``, ``hexdigest`` and
``copy``; SHAKE's ``digest``/``hexdigest`` take the output length. Data is anything
exposing a contiguous buffer (bytes, bytearray, memoryview, array.array, mmap); ``str`` is a
TypeError, as in CPython. ``new()`` accepts the names CPython's accepts (``'SHA-256'``,
``'sha3-256'``, ``'SHA512'``, OpenSSL's OIDs; see ``cryptoscope._names``).

Where the catalogue measures an algorithm (SHA-256, SHA-512, SHA3-256/512, SHAKE, BLAKE2b
and BLAKE2s with their default parameters, ...), the object runs the same code the
``rustcrypto`` worker measures; MD5, SHA-1, SHA-224, SHA-384, SHA3-224 and SHA3-384 are
RustCrypto's crates too, linked here only, and BLAKE2 with parameters is the
``blake2b_simd``/``blake2s_simd`` crates. The GIL is released while hashing inputs of
2,048 bytes or more; objects may be shared between threads.

Beyond hashlib: ``sha512_256`` (also in CPython's ``algorithms_available`` with OpenSSL),
``sha256d`` (Tahoe-LAFS's SHA-256 of SHA-256), ``blake3``, ``k12`` (KangarooTwelve),
``ascon_hash256`` and ``blake2b_256`` (hashlib's ``blake2b(digest_size=32)``); and the SHA-3
competition's fourteen second-round candidates at 256-bit output, in the versions the 2010
Tahoe-LAFS study measured (our own code, gated on the round-2 KAT files): ``blake256_r2``,
``bmw256``, ``cubehash256``, ``echo256``, ``fugue256``, ``groestl256_r2``, ``hamsi256``,
``jh256_r2``, ``keccak256_r2``, ``luffa256``, ``shabal256``, ``shavite3_256``, ``simd256``
and ``skein512_256`` (Skein v1.3). The four whose algorithm changed for the final round
carry ``_r2``, so that ``keccak256`` (usually the final Keccak) or ``jh256`` (usually JH-42)
never silently means the round-2 function; those names raise a ValueError that says so.
Catalogue names work too: ``new("Shabal-256-r2")``. Not here: ``scrypt`` (CPython has it
only when built with OpenSSL) and OpenSSL's other digests (``sha512_224``, ``ripemd160``,
``sm3``, ``md5-sha1``).
"""

import operator
import sys

from . import _names, _native

_offered = set(_native.algorithms())
# hashlib's name -> the catalogue's name, for everything offered.
_NAMES = {k: v for k, v in {**_names.GUARANTEED, **_names.EXTRA}.items() if v in _offered}
_EXACT, _FOLDED, _FREE = _names.tables(_NAMES)

# The same sets as CPython's (mutable, as there): the guaranteed ones, and all of ours.
algorithms_guaranteed = set(_names.GUARANTEED)
algorithms_available = set(_NAMES)

__all__ = (tuple(_names.GUARANTEED) + ("new", "algorithms_guaranteed", "algorithms_available",
                                        "pbkdf2_hmac", "file_digest")
           + tuple(sorted(k for k in _names.EXTRA if k in _NAMES)))

# CPython 3.14 (gh-134696) takes the initial data as ``data=`` everywhere, and keeps
# ``string=`` as a deprecated alias; before, the named constructors took only ``string=``,
# blake2b/blake2s only a positional argument.
_DATA_KEYWORD = sys.version_info >= (3, 14)
_UNSET = object()


def _data(data, string):
    """The initial data, given positionally/as ``data`` or (3.14's alias) as ``string``."""
    if string is _UNSET:
        return b"" if data is _UNSET else data
    if data is not _UNSET:
        raise TypeError("'data' and 'string' are mutually exclusive and support for 'string' "
                        "keyword parameter is slated for removal in a future version.")
    return string


def _canonical(name):
    """The hashlib name ``name`` stands for, resolved as CPython's ``new()`` does; ValueError
    for an unknown one."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    key = _EXACT.get(name) or _FOLDED.get(name.lower()) or _FREE.get(name.lower().replace("-", "_"))
    if key:
        return key
    low = name.lower().replace("-", "_")
    if low in _names.FINAL_ROUND:
        raise ValueError("unsupported hash type %s: that name usually means %s; cryptoscope has "
                         "the round-2 version as %s_r2" % (name, _names.FINAL_ROUND[low], low))
    raise ValueError("unsupported hash type " + name)


def new(name, data=_UNSET, **kwargs):
    """new(name, data=b'', **kwargs) - Return a new hashing object using the named
    algorithm; optionally initialized with data (which must be a bytes-like object).

    ``usedforsecurity`` is accepted (and, as everywhere here, ignored: every algorithm is
    offered); ``'blake2b'`` and ``'blake2s'`` also take blake2b()'s parameters."""
    if name in ("blake2b", "blake2s") and isinstance(name, str):
        ctor = globals()[name]
        return ctor(**kwargs) if data is _UNSET else ctor(data, **kwargs)
    string = kwargs.pop("string", _UNSET) if _DATA_KEYWORD else _UNSET
    kwargs.pop("usedforsecurity", None)
    if kwargs:
        raise TypeError("new() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
    key = _canonical(name)
    return _native.new(_NAMES[key], _data(data, string), key)


def _constructor(key):
    cat = _NAMES[key]
    if _DATA_KEYWORD:
        def make(data=_UNSET, *, usedforsecurity=True, string=_UNSET):
            return _native.new(cat, _data(data, string), key)
    else:
        def make(string=b"", *, usedforsecurity=True):
            return _native.new(cat, string, key)

    make.__name__ = make.__qualname__ = key
    make.__module__ = __name__
    make.__doc__ = ("Returns a %s hash object; optionally initialized with a bytes-like object "
                    "(the catalogue's %s)." % (key, cat))
    return make


def _bytes_like(obj, what):
    """The bytes of a bytes-like argument (key, salt, person, password)."""
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, str):
        raise TypeError("%s: a bytes-like object is required, not 'str'" % what)
    with memoryview(obj) as m:
        if not m.c_contiguous:
            raise BufferError("%s: a C-contiguous buffer is required" % what)
        return m.tobytes()


def _ranged(value, what, low, high, too_large=ValueError):
    value = operator.index(value)
    if value < low:
        raise ValueError("%s must be between %d and %d" % (what, low, high))
    if value > high:
        raise too_large("%s must be between %d and %d" % (what, low, high))
    return value


# BLAKE2 with its default parameters at these sizes is a catalogue subject.
_BLAKE2_CATALOGUE = {("blake2b", 64): "BLAKE2b-512", ("blake2b", 32): "BLAKE2b-256",
                     ("blake2s", 32): "BLAKE2s-256"}


def _blake2(variant, data, digest_size, key, salt, person, fanout, depth, leaf_size, node_offset,
            node_depth, inner_size, last_node):
    big = variant == "blake2b"
    size, short, offset = (64, 16, (1 << 64) - 1) if big else (32, 8, (1 << 48) - 1)
    digest_size = _ranged(digest_size, "digest_size", 1, size)
    key, salt, person = (_bytes_like(key, "key"), _bytes_like(salt, "salt"), _bytes_like(person, "person"))
    if len(key) > size:
        raise ValueError("maximum key length is %d bytes" % size)
    if len(salt) > short:
        raise ValueError("maximum salt length is %d bytes" % short)
    if len(person) > short:
        raise ValueError("maximum person length is %d bytes" % short)
    fanout = _ranged(fanout, "fanout", 0, 255)
    depth = _ranged(depth, "depth", 1, 255)
    leaf_size = _ranged(leaf_size, "leaf_size", 0, (1 << 32) - 1, OverflowError)
    node_offset = _ranged(node_offset, "node_offset", 0, offset, OverflowError)
    node_depth = _ranged(node_depth, "node_depth", 0, 255)
    inner_size = _ranged(inner_size, "inner_size", 0, size)
    last_node = bool(last_node)
    default = (not key and not salt and not person and fanout == 1 and depth == 1 and not leaf_size
               and not node_offset and not node_depth and not inner_size and not last_node)
    cat = _BLAKE2_CATALOGUE.get((variant, digest_size))
    if default and cat in _offered:
        return _native.new(cat, data, variant)
    return _native.blake2(variant, data, digest_size, key, salt, person, fanout, depth, leaf_size,
                          node_offset, node_depth, inner_size, last_node)


def _blake2_constructor(variant, size, short, offset_bits):
    if _DATA_KEYWORD:
        def make(data=_UNSET, *, digest_size=size, key=b"", salt=b"", person=b"", fanout=1, depth=1,
                 leaf_size=0, node_offset=0, node_depth=0, inner_size=0, last_node=False,
                 usedforsecurity=True, string=_UNSET):
            return _blake2(variant, _data(data, string), digest_size, key, salt, person, fanout, depth,
                           leaf_size, node_offset, node_depth, inner_size, last_node)
    else:
        def make(data=b"", /, *, digest_size=size, key=b"", salt=b"", person=b"", fanout=1, depth=1,
                 leaf_size=0, node_offset=0, node_depth=0, inner_size=0, last_node=False,
                 usedforsecurity=True):
            return _blake2(variant, data, digest_size, key, salt, person, fanout, depth, leaf_size,
                           node_offset, node_depth, inner_size, last_node)

    make.__name__ = make.__qualname__ = variant
    make.__module__ = __name__
    make.__doc__ = (
        "Return a new %s hash object (RFC 7693): digest_size 1..%d bytes, key up to %d bytes, "
        "salt and person up to %d bytes, and the tree parameters fanout, depth, leaf_size, "
        "node_offset (%d bits), node_depth, inner_size, last_node. With the default parameters "
        "at a catalogued size the catalogue's code, otherwise the %s_simd crate."
        % (variant, size, size, short, offset_bits, variant))
    make.SALT_SIZE, make.PERSON_SIZE, make.MAX_KEY_SIZE, make.MAX_DIGEST_SIZE = short, short, size, size
    return make


def pbkdf2_hmac(hash_name, password, salt, iterations, dklen=None):
    """Password-based key derivation function 2 (PKCS #5 v2.0, RFC 8018) with HMAC over the
    hash ``hash_name`` (any fixed-output hash here): ``dklen`` bytes (default: the hash's
    digest size) from the bytes-like ``password`` and ``salt`` after ``iterations`` rounds."""
    if not isinstance(hash_name, str):
        raise TypeError("pbkdf2_hmac() argument 'hash_name' must be str, not %s" % type(hash_name).__name__)
    password, salt = _bytes_like(password, "password"), _bytes_like(salt, "salt")
    key = _canonical(hash_name)
    probe = _native.new(_NAMES[key], b"")
    if probe.digest_size == 0:
        raise ValueError("unsupported hash type %s (an extendable-output function)" % hash_name)
    iterations = operator.index(iterations)
    if iterations < 1:
        raise ValueError("iteration value must be greater than 0.")
    if iterations > 0x7FFFFFFF:
        raise OverflowError("iteration value is too great.")
    dklen = probe.digest_size if dklen is None else operator.index(dklen)
    if dklen < 1:
        raise ValueError("key length must be greater than 0.")
    if dklen > 0x7FFFFFFF:
        raise OverflowError("key length is too great.")
    return _native.pbkdf2_hmac(_NAMES[key], password, salt, iterations, dklen)


def file_digest(fileobj, digest, /, *, _bufsize=2**18):
    """Hash the contents of a file-like object opened for reading in binary mode (or with
    ``getbuffer()``, like io.BytesIO). ``digest`` is a hash name (as for ``new``) or a
    callable returning a hash object. Returns the hash object."""
    d = new(digest) if isinstance(digest, str) else digest()
    if hasattr(fileobj, "getbuffer"):
        d.update(fileobj.getbuffer())
        return d
    if not (hasattr(fileobj, "readinto") and hasattr(fileobj, "readable") and fileobj.readable()):
        raise ValueError("'%r' is not a file-like object in binary reading mode." % (fileobj,))
    buf = bytearray(_bufsize)
    view = memoryview(buf)
    while True:
        size = fileobj.readinto(buf)
        if size is None:
            raise BlockingIOError("I/O operation would block.")
        if size == 0:
            return d
        d.update(view[:size])


for _key in _NAMES:
    if _key not in ("blake2b", "blake2s"):
        globals()[_key] = _constructor(_key)
blake2b = _blake2_constructor("blake2b", 64, 16, 64)
blake2s = _blake2_constructor("blake2s", 32, 8, 48)
del _key

# CPython's private hook for its builtin (non-OpenSSL) constructors, which CPython's own
# test_hashlib calls: here every constructor is ours.
__builtin_constructor_cache = {}


def __get_builtin_constructor(name):
    ctor = __builtin_constructor_cache.get(name)
    if ctor is None:
        ctor = globals()[_canonical(name)]
        __builtin_constructor_cache[name] = ctor
    return ctor
