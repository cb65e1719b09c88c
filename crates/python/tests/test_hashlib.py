"""cryptoscope.hashlib against CPython's hashlib: the same digests for every algorithm both
have, on random inputs of many lengths, split into random updates; the same attributes;
copies; threads; errors. Run: python -m unittest discover -s crates/python/tests"""

import hashlib as std
import os
import random
import threading
import unittest

import cryptoscope.hashlib as ours

# Algorithms both have, with CPython's constructor.
BOTH = {
    "sha256": std.sha256,
    "sha512": std.sha512,
    "sha3_256": std.sha3_256,
    "sha3_512": std.sha3_512,
    "shake_128": std.shake_128,
    "shake_256": std.shake_256,
    "blake2b": std.blake2b,
    "blake2s": std.blake2s,
}
if "sha512_256" in std.algorithms_available:
    BOTH["sha512_256"] = lambda d=b"": std.new("sha512_256", d)

LENGTHS = list(range(0, 300)) + [511, 512, 513, 1023, 1024, 1025, 4096, 65537, 1 << 20]


def out(h, xof):
    return (h.digest(32), h.hexdigest(32)) if xof else (h.digest(), h.hexdigest())


class Equivalence(unittest.TestCase):
    def test_digests_equal_hashlib(self):
        rng = random.Random(20261122)
        for name, ref in BOTH.items():
            xof = name.startswith("shake")
            for n in LENGTHS:
                data = rng.randbytes(n)
                a, b = ours.new(name, data), ref(data)
                self.assertEqual(out(a, xof), out(b, xof), (name, n))
                # The same message in random pieces, through the named constructor.
                h = getattr(ours, name)()
                i = 0
                while i < n:
                    j = min(n, i + rng.randint(1, 300))
                    h.update(memoryview(data)[i:j] if j % 2 else bytearray(data[i:j]))
                    i = j
                self.assertEqual(out(h, xof), out(b, xof), (name, n, "pieces"))

    def test_attributes_equal_hashlib(self):
        for name, ref in BOTH.items():
            a, b = ours.new(name), ref()
            self.assertEqual(a.name, b.name, name)
            self.assertEqual(a.digest_size, b.digest_size, name)
            self.assertEqual(a.block_size, b.block_size, name)

    def test_blake2b_256_equals_hashlibs_32_byte_blake2b(self):
        rng = random.Random(7693)
        for n in LENGTHS:
            data = rng.randbytes(n)
            want = std.blake2b(data, digest_size=32)
            for h in (ours.blake2b(data, digest_size=32), ours.new("blake2b", data, digest_size=32)):
                self.assertEqual((h.name, h.digest_size, h.block_size), ("blake2b", 32, 128))
                self.assertEqual(h.hexdigest(), want.hexdigest(), n)
            self.assertEqual(ours.new("BLAKE2b-256", data).digest(), want.digest(), n)

    def test_sha256d_is_sha256_of_sha256(self):
        for n in (0, 5, 64, 1000):
            m = os.urandom(n)
            self.assertEqual(ours.sha256d(m).digest(), std.sha256(std.sha256(m).digest()).digest())
        # The Bitcoin wiki's worked example.
        self.assertEqual(
            ours.new("sha256d", b"hello").hexdigest(),
            "9595c9df90075148eb06860365df33584b75bff782a510c6cd4883a419833d50",
        )

    def test_copy_is_independent(self):
        for name in ours.algorithms_available:
            xof = name.startswith("shake")
            h = ours.new(name, b"common prefix ")
            c = h.copy()
            c.update(b"copy")
            h.update(b"original")
            self.assertEqual(out(c, xof), out(ours.new(name, b"common prefix copy"), xof), name)
            self.assertEqual(out(h, xof), out(ours.new(name, b"common prefix original"), xof), name)
            # digest() does not end the object.
            self.assertEqual(out(h, xof), out(h, xof), name)

    def test_names_and_errors(self):
        self.assertEqual(ours.new("SHA256", b"a").digest(), std.sha256(b"a").digest())
        self.assertEqual(ours.new("SHA3-256").name, "sha3_256")
        self.assertEqual(ours.new("SHA-512/256").name, "sha512_256")
        with self.assertRaises(ValueError):
            ours.new("md5")
        with self.assertRaises(TypeError):
            ours.sha256("text")
        with self.assertRaises(TypeError):
            ours.new("sha256").update("text")
        with self.assertRaises(TypeError):
            ours.shake_128(b"x").digest()
        with self.assertRaises(ValueError):
            ours.blake2b(b"x", digest_size=20)
        with self.assertRaises(TypeError):
            ours.blake2b(b"x", key=b"k")
        self.assertIn("blake3", ours.algorithms_available)
        self.assertTrue(set(BOTH) <= ours.algorithms_guaranteed)


class Threads(unittest.TestCase):
    def test_threads_hash_correctly_and_share_objects_safely(self):
        data = [os.urandom(3 << 20) for _ in range(4)]
        want = [std.sha3_256(d).digest() for d in data]
        got = [None] * 4

        def work(i):
            got[i] = ours.sha3_256(data[i]).digest()

        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(got, want)

        # One object fed by many threads: every byte is absorbed exactly once (the order of
        # equal pieces does not matter).
        piece = os.urandom(4096)
        shared = ours.sha256()
        ts = [threading.Thread(target=lambda: [shared.update(piece) for _ in range(50)]) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(shared.digest(), std.sha256(piece * 400).digest())


if __name__ == "__main__":
    unittest.main()
