"""cryptoscope.hashlib against CPython's hashlib: the same digests for every algorithm both
have, on random inputs of many lengths, split into random updates; the same attributes;
copies; threads; errors. Run: python -m unittest discover -s crates/python/tests"""

import hashlib as std
import os
import random
import threading
import unittest

import cryptoscope.hashlib as ours

# Algorithms both have, with CPython's constructor: every guaranteed one, and sha512_256
# where CPython's OpenSSL has it.
BOTH = {name: getattr(std, name) for name in sorted(std.algorithms_guaranteed)}
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
        self.assertEqual(ours.new("md5", b"a").digest(), std.md5(b"a").digest())
        with self.assertRaises(ValueError):
            ours.new("md4")
        with self.assertRaises(TypeError):
            ours.sha256("text")
        with self.assertRaises(TypeError):
            ours.new("sha256").update("text")
        with self.assertRaises(TypeError):
            ours.shake_128(b"x").digest()
        with self.assertRaises(ValueError):
            ours.blake2b(b"x", digest_size=65)
        with self.assertRaises(TypeError):
            ours.blake2b(b"x", key="k")
        self.assertEqual(ours.blake2b(b"x", digest_size=20, key=b"k").digest(),
                         std.blake2b(b"x", digest_size=20, key=b"k").digest())
        self.assertIn("blake3", ours.algorithms_available)
        self.assertTrue(set(BOTH) <= ours.algorithms_available)
        self.assertEqual(ours.algorithms_guaranteed, std.algorithms_guaranteed)


# The SHA-3 second-round candidates: hashlib name -> KAT directory in vectors/hash/sha3-round2
# and block size in bytes (from each round-2 specification).
ROUND2 = {
    "blake256_r2": ("blake", 64), "bmw256": ("bmw", 64), "cubehash256": ("cubehash", 32),
    "echo256": ("echo", 192), "fugue256": ("fugue", 4), "groestl256_r2": ("groestl", 64),
    "hamsi256": ("hamsi", 4), "jh256_r2": ("jh", 64), "keccak256_r2": ("keccak", 136),
    "luffa256": ("luffa", 32), "shabal256": ("shabal", 64), "shavite3_256": ("shavite3", 64),
    "simd256": ("simd", 64), "skein512_256": ("skein", 64),
}
KATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "vectors", "hash",
                    "sha3-round2")


def kat_entries(path):
    """(message, digest) of every byte-aligned entry of a round-2 KAT file."""
    out, length, msg = [], None, None
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition(" = ")
            if key == "Len":
                length = int(value)
            elif key == "Msg":
                msg = bytes.fromhex(value)
            elif key == "MD" and length % 8 == 0:
                out.append((msg[: length // 8], bytes.fromhex(value)))
    return out


class Round2Candidates(unittest.TestCase):
    def test_every_candidate_against_its_round2_kats(self):
        rng = random.Random(2010)
        for name, (kat_dir, block) in ROUND2.items():
            h = ours.new(name)
            self.assertEqual((h.name, h.digest_size, h.block_size), (name, 32, block))
            entries = []
            for f in ("ShortMsgKAT_256.txt", "LongMsgKAT_256.txt"):
                entries += kat_entries(os.path.join(KATS, kat_dir, f))
            self.assertGreater(len(entries), 300, name)
            for msg, md in entries:
                self.assertEqual(getattr(ours, name)(msg).digest(), md, (name, len(msg)))
                # In random pieces, with a copy taken midway that must agree.
                h, i, cp = ours.new(name), 0, None
                while i < len(msg):
                    if cp is None and i >= len(msg) // 2:
                        cp = h.copy()
                    j = min(len(msg), i + rng.randint(1, 97))
                    h.update(msg[i:j])
                    if cp is not None:
                        cp.update(msg[i:j])
                    i = j
                self.assertEqual(h.hexdigest(), md.hex(), (name, len(msg), "pieces"))
                if cp is not None:
                    self.assertEqual(cp.digest(), md, (name, len(msg), "copy"))

    def test_catalogue_names_and_final_round_names(self):
        self.assertEqual(ours.new("Shabal-256-r2").name, "shabal256")
        self.assertIn("jh256_r2", ours.algorithms_available)
        for final in ("keccak256", "jh256", "blake256", "groestl256"):
            with self.assertRaisesRegex(ValueError, final + "_r2"):
                ours.new(final)


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
