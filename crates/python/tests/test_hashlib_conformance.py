"""cryptoscope.hashlib as a drop-in for CPython's hashlib: every expected value and every
expected exception type comes from CPython's own hashlib (an independent implementation:
OpenSSL and CPython's builtin modules) on the same inputs, never from our module.

Covered: every algorithm of algorithms_guaranteed at many lengths (empty, around the block
size, well past it), split into updates, through new() and the named constructors; copy();
digest_size/block_size/name; the keyword forms of the constructors and new() (data/string,
usedforsecurity, blake2's parameters, SHAKE's length); every buffer type CPython takes; the
names new() accepts; the exception types for bad input; pbkdf2_hmac, hmac over our
constructors, file_digest; docstrings. Run: python -m unittest discover -s crates/python/tests
"""

import array
import hashlib as std
import hmac
import io
import mmap
import os
import random
import ssl
import sys
import tempfile
import unittest

import cryptoscope
import cryptoscope.hashlib as ours

GUARANTEED = sorted(std.algorithms_guaranteed)
SHAKES = ("shake_128", "shake_256")


def outcome(call):
    """What a call gives: ('ok', a comparable summary) or ('raises', exception type).
    CPython's OpenSSL module raises its own ValueError subclass for an unknown digest
    (`_hashlib.UnsupportedDigestmodError`); that counts as the ValueError it documents."""
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - the type is the outcome
        t = type(e)
        return ("raises", ValueError if t.__name__ == "UnsupportedDigestmodError" else t)
    if hasattr(r, "hexdigest"):
        size = 24 if r.name in SHAKES else None
        return ("ok", r.name, r.digest_size, r.block_size, r.hexdigest(size) if size else r.hexdigest())
    return ("ok", r)


def summary(h):
    return h.hexdigest(48) if h.name in SHAKES else h.hexdigest()


def lengths(block):
    return sorted({0, 1, 2, 55, 56, 63, 64, 65, block - 1, block, block + 1, 2 * block + 3, 1000, 4095, 4096, 65537})


class Digests(unittest.TestCase):
    def test_same_algorithm_sets(self):
        self.assertEqual(ours.algorithms_guaranteed, std.algorithms_guaranteed)
        self.assertIs(type(ours.algorithms_guaranteed), type(std.algorithms_guaranteed))
        self.assertIs(type(ours.algorithms_available), type(std.algorithms_available))
        self.assertLessEqual(ours.algorithms_guaranteed, ours.algorithms_available)
        for name in GUARANTEED:
            self.assertIn(name, ours.__all__)
            self.assertTrue(callable(getattr(ours, name)), name)
        for name in ("new", "algorithms_guaranteed", "algorithms_available", "pbkdf2_hmac"):
            self.assertIn(name, ours.__all__)

    def test_every_algorithm_every_length_both_constructors(self):
        rng = random.Random(2027)
        for name in GUARANTEED:
            block = std.new(name).block_size
            for n in lengths(block):
                data = rng.randbytes(n)
                want = std.new(name, data)
                for got in (ours.new(name, data), getattr(ours, name)(data)):
                    if name in SHAKES:
                        for k in (0, 1, 16, 32, 64, 137, 1000):
                            self.assertEqual(got.digest(k), want.digest(k), (name, n, k))
                            self.assertEqual(got.hexdigest(k), want.hexdigest(k), (name, n, k))
                    else:
                        self.assertEqual(got.digest(), want.digest(), (name, n))
                        self.assertEqual(got.hexdigest(), want.hexdigest(), (name, n))

    def test_update_splits_and_copies(self):
        rng = random.Random(4099)
        for name in GUARANTEED:
            block = std.new(name).block_size
            for n in (0, 1, block - 1, block, block + 1, 3 * block + 7, 5000):
                data = rng.randbytes(n)
                a, b = getattr(ours, name)(), getattr(std, name)()
                i, copies = 0, []
                while i < n:
                    j = min(n, i + rng.choice((1, 2, block - 1, block, block + 1, 300)))
                    a.update(data[i:j])
                    b.update(data[i:j])
                    # A copy taken midway must give the same digest as CPython's copy, and
                    # must not change when the original goes on.
                    copies.append((a.copy(), b.copy()))
                    i = j
                    self.assertEqual(summary(a), summary(b), (name, n, i))
                for ca, cb in copies:
                    self.assertEqual(summary(ca), summary(cb), (name, n, "copy"))
                    ca.update(b"tail")
                    cb.update(b"tail")
                    self.assertEqual(summary(ca), summary(cb), (name, n, "copy+tail"))
                # digest() does not end the object; the original is unaffected by its copies.
                self.assertEqual(summary(a), summary(b))
                self.assertEqual(summary(a), summary(std.new(name, data)))

    def test_attributes(self):
        for name in GUARANTEED:
            a, b = ours.new(name), std.new(name)
            self.assertEqual((a.name, a.digest_size, a.block_size), (b.name, b.digest_size, b.block_size), name)
            self.assertEqual(getattr(ours, name)().name, b.name)
            self.assertIn(name.split("_")[0], repr(a))
        for size in (1, 20, 32, 33, 64):
            self.assertEqual(ours.blake2b(digest_size=size).digest_size, std.blake2b(digest_size=size).digest_size)
        self.assertEqual(ours.blake2s(digest_size=7).block_size, std.blake2s(digest_size=7).block_size)

    def test_large_input_and_many_updates(self):
        data = os.urandom((1 << 20) + 13)
        for name in GUARANTEED:
            self.assertEqual(summary(ours.new(name, data)), summary(std.new(name, data)), name)
            a, b = ours.new(name), std.new(name)
            for _ in range(3000):
                a.update(b"ab")
                b.update(b"ab")
            self.assertEqual(summary(a), summary(b), name)


class Blake2(unittest.TestCase):
    def test_parameters_against_cpython(self):
        rng = random.Random(7693)
        for variant, size, short, offset in (("blake2b", 64, 16, (1 << 64) - 1), ("blake2s", 32, 8, (1 << 48) - 1)):
            cases = [
                {}, {"digest_size": 1}, {"digest_size": size // 2}, {"digest_size": size},
                {"key": b""}, {"key": b"k"}, {"key": rng.randbytes(size)}, {"salt": b"s" * short},
                {"salt": b"s"}, {"person": b"p" * short}, {"person": b"p"}, {"fanout": 0}, {"fanout": 255},
                {"depth": 255}, {"leaf_size": (1 << 32) - 1}, {"node_offset": offset}, {"node_depth": 255},
                {"inner_size": size}, {"last_node": True},
                {"digest_size": 16, "key": b"bar", "salt": b"baz", "person": b"bing", "fanout": 2, "depth": 3,
                 "leaf_size": 4, "node_offset": 5, "node_depth": 6, "inner_size": 7, "last_node": True},
            ]
            for kw in cases:
                for n in (0, 3, 63, 64, 65, 127, 128, 129, 1000):
                    data = rng.randbytes(n)
                    want = getattr(std, variant)(data, **kw).hexdigest()
                    self.assertEqual(getattr(ours, variant)(data, **kw).hexdigest(), want, (variant, kw, n))
                    self.assertEqual(ours.new(variant, data, **kw).hexdigest(), want, (variant, kw, n))
                    h = getattr(ours, variant)(**kw)
                    h.update(data[: n // 2])
                    c = h.copy()
                    c.update(data[n // 2:])
                    self.assertEqual(c.hexdigest(), want, (variant, kw, n, "copy"))
            for attr in ("SALT_SIZE", "PERSON_SIZE", "MAX_KEY_SIZE", "MAX_DIGEST_SIZE"):
                self.assertEqual(getattr(getattr(ours, variant), attr), getattr(getattr(std, variant), attr))

    def test_bad_parameters_raise_what_cpython_raises(self):
        for variant in ("blake2b", "blake2s"):
            limit = 2**64 if variant == "blake2b" else 2**48
            for kw in ({"digest_size": 0}, {"digest_size": -1}, {"digest_size": 65}, {"digest_size": 33},
                       {"digest_size": 1.5}, {"key": "k"}, {"key": b"k" * 65}, {"key": b"k" * 33},
                       {"salt": b"s" * 17}, {"salt": b"s" * 9}, {"person": b"p" * 17}, {"person": b"p" * 9},
                       {"salt": "s"}, {"fanout": -1}, {"fanout": 256}, {"depth": 0}, {"depth": 256},
                       {"leaf_size": -1}, {"leaf_size": 1 << 32}, {"node_offset": -1}, {"node_offset": limit},
                       {"node_depth": -1}, {"node_depth": 256}, {"inner_size": -1}, {"inner_size": 65},
                       {"inner_size": 33}, {"key": memoryview(b"abcd")[::2]}, {"data": b""}, {"string": b""},
                       {"bogus": 1}):
                self.assertEqual(outcome(lambda: getattr(ours, variant)(**kw)),
                                 outcome(lambda: getattr(std, variant)(**kw)), (variant, kw))
            for args in (("",), (None,), (b"", b"")):
                self.assertEqual(outcome(lambda: getattr(ours, variant)(*args)),
                                 outcome(lambda: getattr(std, variant)(*args)), (variant, args))


class Arguments(unittest.TestCase):
    def same(self, call, what=None):
        self.assertEqual(outcome(lambda: call(ours)), outcome(lambda: call(std)), what)

    def test_constructor_keyword_forms(self):
        for name in GUARANTEED:
            if name.startswith("blake2"):
                continue
            for call in (
                lambda m: getattr(m, name)(),
                lambda m: getattr(m, name)(b"abc"),
                lambda m: getattr(m, name)(string=b"abc"),
                lambda m: getattr(m, name)(data=b"abc"),
                lambda m: getattr(m, name)(b"abc", usedforsecurity=False),
                lambda m: getattr(m, name)(string=b"abc", usedforsecurity=True),
                lambda m: getattr(m, name)(b"a", b"b"),
                lambda m: getattr(m, name)(b"a", string=b"b"),
                lambda m: getattr(m, name)(data=b"a", string=b"b"),
                lambda m: getattr(m, name)(foo=1),
                lambda m: getattr(m, name)(b"abc", usedforsecurity=None),
            ):
                self.same(call, name)

    def test_new_keyword_forms(self):
        for call in (
            lambda m: m.new("sha256"),
            lambda m: m.new("sha256", b"abc"),
            lambda m: m.new("sha256", data=b"abc"),
            lambda m: m.new(name="sha256", data=b"abc"),
            lambda m: m.new("sha256", string=b"abc"),
            lambda m: m.new("sha256", b"abc", usedforsecurity=False),
            lambda m: m.new("md5", usedforsecurity=False),
            lambda m: m.new("sha256", b"x", digest_size=32),
            lambda m: m.new("spam", foo=1),
            lambda m: m.new("blake2b", b"x", digest_size=32),
            lambda m: m.new("blake2b", data=b"x", key=b"k", person=b"p"),
            lambda m: m.new("blake2s", b"x", digest_size=20, usedforsecurity=False),
            lambda m: m.new("blake2b512", b"x"),
            lambda m: m.new("blake2b512", key=b"k"),
            lambda m: m.new("BLAKE2B", b"x"),
            lambda m: m.new("shake_128", b"x"),
            lambda m: m.new(1),
            lambda m: m.new(b"sha256"),
            lambda m: m.new(None),
            lambda m: m.new("spam spam spam"),
            lambda m: m.new("sha256", "text"),
            lambda m: m.new("sha256", None),
        ):
            self.same(call)

    def test_bad_input_raises_what_cpython_raises(self):
        non_contiguous = memoryview(bytes(range(16)))[::2]
        for name in GUARANTEED:
            for data in ("text", None, 1, 1.5, [1, 2], non_contiguous, object()):
                self.same(lambda m: getattr(m, name)(data), (name, type(data)))
                self.same(lambda m: m.new(name, data), (name, type(data)))
                self.same(lambda m: m.new(name).update(data), (name, type(data)))
            self.same(lambda m: m.new(name).update(), name)
            self.same(lambda m: m.new(name).update(b"a", b"b"), name)
            self.same(lambda m: m.new(name).update(data=b"a"), name)
            for method in ("digest", "hexdigest"):
                self.same(lambda m: getattr(m.new(name), method)(None), (name, method))
                self.same(lambda m: getattr(m.new(name), method)(3, 4), (name, method))
                self.same(lambda m: getattr(m.new(name), method)(foo=4), (name, method))
            if name in SHAKES:
                self.same(lambda m: m.new(name).digest(), name)
                self.same(lambda m: m.new(name).hexdigest(), name)
                self.same(lambda m: m.new(name, b"x").digest(length=5), name)
                self.same(lambda m: m.new(name, b"x").hexdigest(length=5), name)
                self.same(lambda m: m.new(name).digest(1.5), name)
                self.same(lambda m: m.new(name).digest("5"), name)
                self.same(lambda m: m.new(name).hexdigest(2**64), name)
            else:
                self.same(lambda m: m.new(name).digest(3), name)
                self.same(lambda m: m.new(name).hexdigest(3), name)

    def test_shake_lengths_out_of_range_as_cpythons_builtin_sha3(self):
        # CPython's OpenSSL-backed SHAKE (what its hashlib returns) gives a SystemError for a
        # negative length and allocates any length; its builtin one (the `_sha3` module, what
        # CPython's own test_hashlib holds SHAKE to) raises ValueError for a negative length
        # or one of 2**29 bytes or more, and ValueError/OverflowError past a C long. Ours
        # follows the builtin.
        try:
            import _sha3
        except ImportError:
            self.skipTest("CPython's builtin _sha3 module is not available to compare with")
        for name in SHAKES:
            for length in (-1, -10, 2**29, 2**32 + 10, 2**61, 2**64 + 10):
                for method in ("digest", "hexdigest"):
                    want = outcome(lambda: getattr(getattr(_sha3, name)(), method)(length))
                    got = outcome(lambda: getattr(ours.new(name), method)(length))
                    self.assertEqual(got[0], "raises", (name, length))
                    self.assertTrue(issubclass(got[1], (ValueError, OverflowError)), (name, length, got))
                    if length < 0 or length < 2**63:
                        self.assertEqual(got, want, (name, length, method))

    def test_buffer_types(self):
        rng = random.Random(11)
        raw = rng.randbytes(4096 + 8)
        with tempfile.TemporaryFile() as f:
            f.write(raw)
            f.flush()
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            buffers = [
                raw, bytearray(raw), memoryview(raw), memoryview(raw)[3:1000], memoryview(bytearray(raw)),
                array.array("B", raw), array.array("b", raw[:300]), array.array("I", raw), array.array("d", raw),
                array.array("q", raw[:64]), array.array("I", [1, 2]), memoryview(raw).cast("I"),
                memoryview(raw[:16]).cast("B", (4, 4)), b"", bytearray(), array.array("I"), mapped,
            ]
            for name in GUARANTEED:
                for buf in buffers:
                    self.assertEqual(summary(getattr(ours, name)(buf)), summary(getattr(std, name)(buf)),
                                     (name, type(buf)))
                    a, b = ours.new(name), std.new(name)
                    a.update(buf)
                    b.update(buf)
                    self.assertEqual(summary(a), summary(b), (name, type(buf)))
            mapped.close()

    def test_names_new_accepts(self):
        candidates = {
            "md5", "MD5", "ssl3-md5", "1.2.840.113549.2.5", "sha1", "SHA1", "sha-1", "Sha-1", "ssl3-sha1",
            "1.3.14.3.2.26", "sha224", "SHA224", "sha-224", "sha2-224", "sha256", "SHA256", "sha-256", "SHA-256",
            "sha2-256", "Sha2-256", "2.16.840.1.101.3.4.2.1", "sha384", "sha-384", "SHA2-384", "sha512", "SHA512",
            "sha-512", "sha2-512", "sha512_256", "SHA512_256", "Sha512_256", "sha512-256", "SHA-512/256",
            "sha2-512/256", "sha3_224", "SHA3_224", "sha3-224", "SHA3-224", "sha3_256", "SHA3_256", "Sha3_256",
            "sha3-256", "2.16.840.1.101.3.4.2.8", "sha3_384", "sha3-384", "sha3_512", "sha3-512", "shake_128",
            "SHAKE_128", "shake-128", "SHAKE128", "shake128", "shake_256", "shake-256", "SHAKE256",
            "2.16.840.1.101.3.4.2.12", "blake2b", "BLAKE2B", "Blake2b", "blake2b512", "BLAKE2b512", "blake2b-512",
            "blake2s", "BLAKE2S", "blake2s256", "BLAKE2s-256", "1.3.6.1.4.1.1722.12.2.1.16", "RSA-SHA256",
            "sha256WithRSAEncryption", "sha_256", "sha-3-256", "sha256 ", "", "md4", "ripemd160", "sm3",
            "md5-sha1", "sha512_224", "SHA-512/224", "whirlpool", "null", "sha3", "shake", "blake2",
        }
        exact = ssl.OPENSSL_VERSION_INFO >= (3,)
        for name in sorted(candidates):
            want = outcome(lambda: std.new(name))
            got = outcome(lambda: ours.new(name))
            if want[0] == "ok" and want[1] not in ours.algorithms_available:
                # OpenSSL's extra digests (ripemd160, sm3, ...): not ours.
                self.assertEqual(got, ("raises", ValueError), name)
            elif want[0] == "ok" or exact:
                self.assertEqual(got, want, name)

    def test_names_of_ours_only(self):
        # Our extra algorithms are not CPython's; new() finds them, CPython's does not.
        for name in ("blake3", "k12", "sha256d", "Shabal-256-r2", "BLAKE2b-256", "ascon_hash256"):
            self.assertEqual(outcome(lambda: std.new(name)), ("raises", ValueError), name)
            self.assertEqual(ours.new(name).name, ours._canonical(name))


class Functions(unittest.TestCase):
    def test_pbkdf2_hmac(self):
        rng = random.Random(8018)
        for name in GUARANTEED:
            if name in SHAKES:
                continue
            block = std.new(name).block_size
            for pw in (b"", b"password", rng.randbytes(block), rng.randbytes(block + 1), rng.randbytes(300)):
                for salt, iterations, dklen in ((b"salt", 1, None), (b"", 2, 1), (rng.randbytes(40), 7, 100),
                                                (b"NaCl", 100, std.new(name).digest_size + 1)):
                    want = std.pbkdf2_hmac(name, pw, salt, iterations, dklen)
                    self.assertEqual(ours.pbkdf2_hmac(name, pw, salt, iterations, dklen), want, (name, len(pw)))
                    self.assertEqual(ours.pbkdf2_hmac(name, bytearray(pw), memoryview(salt), iterations, dklen),
                                     want)
        self.assertEqual(ours.pbkdf2_hmac(hash_name="SHA-256", password=b"p", salt=b"s", iterations=3, dklen=None),
                         std.pbkdf2_hmac(hash_name="SHA-256", password=b"p", salt=b"s", iterations=3, dklen=None))
        for args in (("unknown", b"p", b"s", 1), (b"sha1", b"p", b"s", 1), ("sha1", "p", "s", 1),
                     ("sha1", b"p", b"s", 0), ("sha1", b"p", b"s", -1), ("sha1", b"p", b"s", 1, 0),
                     ("sha1", b"p", b"s", 1, -1), ("sha1", b"p", b"s", 2**31), ("sha1", b"p", b"s", 1, 2**31),
                     ("sha1", b"p", b"s", 1.0), ("shake_128", b"p", b"s", 1), ("sha1", None, b"s", 1)):
            self.assertEqual(outcome(lambda: ours.pbkdf2_hmac(*args)), outcome(lambda: std.pbkdf2_hmac(*args)), args)

    def test_hmac_over_our_constructors(self):
        rng = random.Random(2104)
        for name in GUARANTEED:
            if name in SHAKES:
                continue
            for key in (b"", b"key", rng.randbytes(200)):
                for n in (0, 1, 100, 1000):
                    msg = rng.randbytes(n)
                    want = hmac.new(key, msg, getattr(std, name)).hexdigest()
                    self.assertEqual(hmac.new(key, msg, getattr(ours, name)).hexdigest(), want, (name, n))
                    self.assertEqual(hmac.new(key, msg, lambda d=b"": ours.new(name, d)).hexdigest(), want)

    @unittest.skipUnless(hasattr(std, "file_digest"), "CPython's hashlib has file_digest from Python 3.11 on")
    def test_file_digest(self):
        data = os.urandom(300_000)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f")
            with open(path, "wb") as f:
                f.write(data)
            for name in GUARANTEED:
                for digest in (name, getattr(ours, name)):
                    with open(path, "rb") as f:
                        got = ours.file_digest(f, digest)
                    self.assertEqual(summary(got), summary(std.new(name, data)), name)
                    self.assertEqual(summary(ours.file_digest(io.BytesIO(data), digest)), summary(got))
            for fileobj in (None, io.StringIO("x")):
                self.assertEqual(outcome(lambda: ours.file_digest(fileobj, "sha256")),
                                 outcome(lambda: std.file_digest(fileobj, "sha256")))
            for mode in ("r", "wb"):
                with open(path, mode) as f:
                    self.assertEqual(outcome(lambda: ours.file_digest(f, "sha256")),
                                     outcome(lambda: std.file_digest(f, "sha256")), mode)

    def test_docstrings(self):
        names = list(ours.__all__) + ["new", "pbkdf2_hmac", "file_digest"]
        for name in names:
            obj = getattr(ours, name)
            if callable(obj):
                self.assertTrue((obj.__doc__ or "").strip(), name)
        h = ours.sha256()
        for attr in ("update", "digest", "hexdigest", "copy"):
            self.assertTrue((getattr(h, attr).__doc__ or "").strip(), attr)
        for attr in ("name", "digest_size", "block_size"):
            self.assertTrue((getattr(type(h), attr).__doc__ or "").strip(), attr)
        for attr in ("keypair", "encaps", "decaps", "name", "sizes"):
            self.assertTrue((getattr(cryptoscope.Kem, attr).__doc__ or "").strip(), attr)
        for mod in (cryptoscope, ours, cryptoscope.kem, cryptoscope.suite):
            self.assertTrue((mod.__doc__ or "").strip(), mod)

    def test_hash_type_is_not_instantiable_and_immutable(self):
        t = type(ours.sha256())
        with self.assertRaisesRegex(TypeError, "cannot create 'cryptoscope._native.Hash' instances"):
            t()
        if sys.version_info >= (3, 10):  # PyO3 can make a class immutable from 3.10 on
            with self.assertRaises(TypeError):
                t.value = False

    def test_version(self):
        from importlib import metadata

        self.assertRegex(cryptoscope.__version__, r"^\d+\.\d+\.\d+")
        self.assertEqual(cryptoscope.__version__, metadata.version("cryptoscope"))


class Kem(unittest.TestCase):
    def test_bytes_like_keys_and_ciphertexts(self):
        k = cryptoscope.Kem("ML-KEM-768")
        self.assertIs(k.__class__, cryptoscope.kem.Kem)
        pk, sk = k.keypair()
        for wrap in (bytes, bytearray, memoryview, lambda b: array.array("B", b)):
            ct, ss = k.encaps(wrap(pk))
            self.assertEqual(k.decaps(wrap(sk), wrap(ct)), ss)
        with self.assertRaises(TypeError):
            k.encaps(pk.hex())
        with self.assertRaises(ValueError):
            k.encaps(bytearray(pk[:-1]))


if __name__ == "__main__":
    unittest.main()
