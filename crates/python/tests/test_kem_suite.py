"""cryptoscope.kem round trips and sizes (FIPS 203 Table 3); cryptoscope.suite returns a run's
results as dicts and raises the command's usage errors."""

import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

from cryptoscope import kem, suite

# FIPS 203, Table 3: encapsulation key, decapsulation key, ciphertext, shared secret bytes.
FIPS203 = {
    "ML-KEM-512": (800, 1632, 768, 32),
    "ML-KEM-768": (1184, 2400, 1088, 32),
    "ML-KEM-1024": (1568, 3168, 1568, 32),
}


class Kem(unittest.TestCase):
    def test_round_trips_and_sizes(self):
        self.assertEqual(sorted(kem.algorithms()), sorted(FIPS203))
        for name, sizes in FIPS203.items():
            k = kem.Kem(name)
            self.assertEqual(k.sizes, sizes)
            pk, sk = k.keypair()
            self.assertEqual((len(pk), len(sk)), sizes[:2])
            ct, ss = k.encaps(pk)
            self.assertEqual((len(ct), len(ss)), sizes[2:])
            self.assertEqual(k.decaps(sk, ct), ss)
            # Implicit rejection: a modified ciphertext gives another secret, not an error.
            bad = bytes([ct[0] ^ 1]) + ct[1:]
            self.assertNotEqual(k.decaps(sk, bad), ss)

    def test_errors(self):
        with self.assertRaises(ValueError):
            kem.Kem("ML-KEM-999")
        k = kem.Kem("ML-KEM-512")
        with self.assertRaises(ValueError):
            k.encaps(b"short")


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def built_binary():
    """The cryptoscope executable this checkout built, if any."""
    for base in (os.environ.get("CARGO_TARGET_DIR"), os.path.join(REPO, "target")):
        if base and os.access(os.path.join(base, "release", "cryptoscope"), os.X_OK):
            return os.path.join(base, "release", "cryptoscope")
    return None


class FindingTheBinary(unittest.TestCase):
    def test_readme_layout_a_venv_inside_the_repository(self):
        # python3 -m venv .venv && .venv/bin/pip install ./crates/python, in the repository:
        # the binary is <repo>/target/release/cryptoscope, 5 levels above the package.
        with tempfile.TemporaryDirectory() as d:
            repo = os.path.join(d, "repo")
            exe = os.path.join(repo, "target", "release", "cryptoscope")
            prefix = os.path.join(repo, ".venv")
            package = os.path.join(prefix, "lib", "python3.11", "site-packages", "cryptoscope")
            for p in (os.path.dirname(exe), package, os.path.join(prefix, "bin"), os.path.join(d, "empty")):
                os.makedirs(p, exist_ok=True)
            with open(exe, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(exe, stat.S_IRWXU)
            env = {"PATH": os.path.join(d, "empty")}
            found = [p for p in suite._candidates(env, package, prefix, []) if suite._executable(p)]
            self.assertEqual(os.path.normpath(found[0]), exe)
            # Before the repository: the environment's own bin directory; before that PATH,
            # and first of all $CRYPTOSCOPE_BIN.
            in_venv = os.path.join(prefix, "bin", "cryptoscope")
            os.symlink(exe, in_venv)
            found = [p for p in suite._candidates(env, package, prefix, []) if suite._executable(p)]
            self.assertEqual(found[0], in_venv)
            env = {"PATH": os.path.dirname(exe), "CRYPTOSCOPE_BIN": "/elsewhere/cryptoscope"}
            self.assertEqual(next(suite._candidates(env, package, prefix, [])), "/elsewhere/cryptoscope")
            self.assertEqual([p for p in suite._candidates(env, package, prefix, []) if suite._executable(p)][0],
                             exe)

    @unittest.skipUnless(built_binary() or os.environ.get("CI") == "true", "no cryptoscope executable built here")
    def test_this_installation_finds_the_built_binary(self):
        # This environment as the test command installs it, without CRYPTOSCOPE_BIN and with
        # no cryptoscope on PATH.
        env = {k: v for k, v in os.environ.items() if k != "CRYPTOSCOPE_BIN"}
        env["PATH"] = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                      if not os.access(os.path.join(p, "cryptoscope"), os.X_OK))
        with mock.patch.dict(os.environ, env, clear=True):
            found = suite.command()
        self.assertTrue(os.access(found, os.X_OK), found)
        self.assertEqual(os.path.basename(found), "cryptoscope")
        if os.path.commonpath([REPO, os.path.abspath(sys.prefix)]) == REPO and not env.get("CARGO_TARGET_DIR"):
            self.assertEqual(os.path.realpath(found), os.path.realpath(built_binary()))


# Skipped (and counted as skipped by scripts/test.sh) where no executable is built; on CI
# (CI=true), where the test command builds it first, the class runs and fails without it.
@unittest.skipUnless(
    os.environ.get("CRYPTOSCOPE_BIN")
    or os.environ.get("CARGO_TARGET_DIR")
    or os.path.exists("target/release/cryptoscope")
    or os.environ.get("CI") == "true",
    "no cryptoscope executable built here",
)
class Suite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Never the user's results database; results/ files go to a scratch directory.
        cls.tmp = tempfile.TemporaryDirectory()
        cls.saved = (os.getcwd(), os.environ.get("CRYPTOSCOPE_DB"))
        os.environ["CRYPTOSCOPE_DB"] = os.path.join(cls.tmp.name, "results.db")
        here = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        os.environ.setdefault("CRYPTOSCOPE_VECTORS", os.path.join(here, "vectors"))
        os.environ.setdefault("CRYPTOSCOPE_BIN", os.path.join(here, "target", "release", "cryptoscope")
                              if not os.environ.get("CARGO_TARGET_DIR")
                              else os.path.join(os.environ["CARGO_TARGET_DIR"], "release", "cryptoscope"))
        os.chdir(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        os.chdir(cls.saved[0])
        if cls.saved[1] is None:
            os.environ.pop("CRYPTOSCOPE_DB", None)
        else:
            os.environ["CRYPTOSCOPE_DB"] = cls.saved[1]
        cls.tmp.cleanup()

    def test_run_returns_dicts(self):
        rows = suite.run(["--quick", "--rounds", "1", "--alg", "X25519", "--provider", "rustcrypto"])
        self.assertEqual([r["operation"] for r in rows], ["keypair", "derive", "validate", "exchange"])
        for r in rows:
            self.assertEqual(r["gate"], "pass")
            # RustCrypto's X25519 `validate` copies 32 bytes: a few cycles, maybe none net.
            if r["operation"] == "validate":
                self.assertGreaterEqual(r["median_cycles"], 0)
            else:
                self.assertGreater(r["median_cycles"], 0)
        doc = suite.run(["--quick", "--rounds", "1", "--alg", "X25519", "--provider", "rustcrypto"], run_file=True)
        self.assertIn("environment", doc)

    def test_usage_errors_are_raised(self):
        with self.assertRaises(suite.SuiteError) as e:
            suite.run(["--alg", "ML-KEM-786"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("did you mean", str(e.exception))


if __name__ == "__main__":
    unittest.main()
