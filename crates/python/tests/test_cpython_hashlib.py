"""CPython's own test suite for hashlib (the standard library's `test.test_hashlib`), run
against cryptoscope.hashlib: the test module is imported with our module in
`sys.modules['hashlib']`, so every `hashlib.…` in it is ours, and with CPython's OpenSSL
module `_hashlib` blocked, so that it adds no OpenSSL constructors of its own to the ones it
tests (its builtin-constructor hook, `__get_builtin_constructor`, gives ours too). The
module's handles on "hashlib with OpenSSL" and "hashlib without OpenSSL" (used by its PBKDF2
tests) are pointed at ours as well.

The tests that cannot apply are skipped by name below, each with why; a test of that suite
skipped for any other reason shows CPython's own reason in the verbose output. Where the
interpreter has no `test` package (Debian ships it apart: libpython3.X-testsuite, which
scripts/setup.sh installs), one test is skipped saying so.
"""

import hashlib  # noqa: F401 - the real modules first, so that nothing imported while
import hmac  # noqa: F401   ours stands in for hashlib binds ours for good
import importlib
import os
import sys
import tempfile
import unittest

import cryptoscope.hashlib as ours

_NETWORK = ("reads its known-answer file from www.pythontest.net (test resource 'urlfetch'): no "
            "network here; the algorithm is checked against CPython's hashlib in "
            "test_hashlib_conformance")
_BIGMEM = ("bigmem test (a 4 GiB input): CPython's own harness runs it only under regrtest -M "
           "with 4 GiB or more to spare")

# test id (class.method) -> why it cannot apply to cryptoscope.hashlib.
SKIPS = {
    "HashLibTestCase.test_get_builtin_constructor":
        "CPython-internal: clears CPython's private builtin-constructor cache and asserts that "
        "it returns CPython's own _md5.md5",
    "HashLibTestCase.test_hash_disallow_instantiation":
        "checks CPython's OpenSSL types _hashlib.HASH/HASHXOF, which this run blocks so that "
        "only our module is tested (our type is checked by test_disallow_instantiation)",
    "HashLibTestCase.test_internal_types":
        "(Python 3.9) checks CPython's OpenSSL type _hashlib.HASH, which this run blocks so that "
        "only our module is tested",
    "HashLibTestCase.test_sha3_update_overflow": _BIGMEM,
    "KDFTests.test_scrypt":
        "cryptoscope.hashlib has no scrypt (CPython has it only when built with OpenSSL)",
    "HashLibTestCase.test_case_md5_huge": _BIGMEM,
    "HashLibTestCase.test_case_md5_uintmax": _BIGMEM,
    "HashLibTestCase.test_blake2b_vectors": _NETWORK,
    "HashLibTestCase.test_blake2s_vectors": _NETWORK,
    "HashLibTestCase.test_case_sha3_224_vector": _NETWORK,
    "HashLibTestCase.test_case_sha3_256_vector": _NETWORK,
    "HashLibTestCase.test_case_sha3_384_vector": _NETWORK,
    "HashLibTestCase.test_case_sha3_512_vector": _NETWORK,
    "HashLibTestCase.test_case_shake128_vector": _NETWORK,
    "HashLibTestCase.test_case_shake256_vector": _NETWORK,
}

_MISSING = object()


def _swap(modules):
    """Sets sys.modules entries; returns what was there."""
    saved = {}
    for name, value in modules.items():
        saved[name] = sys.modules.get(name, _MISSING)
        sys.modules[name] = value
    return saved


def _restore(saved):
    for name, value in saved.items():
        if value is _MISSING:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = value


def _load(loader):
    """CPython's test_hashlib loaded against our module, or the reason it cannot be."""
    try:
        from test import support
    except ImportError:
        return None
    # Never a network resource: a vector test not named above skips instead of fetching.
    support.use_resources = ["cpu"]
    sys.modules.pop("test.test_hashlib", None)
    saved = _swap({"hashlib": ours, "_hashlib": None})
    try:
        try:
            mod = importlib.import_module("test.test_hashlib")
        except ImportError:
            return None
        mod.openssl_hashlib = ours
        mod.builtin_hashlib = ours
        mod.openssl_md_meth_names = frozenset(ours.algorithms_available)
        # HashLibTestCase collects its constructors when each test is made: still blocked.
        return loader.loadTestsFromModule(mod)
    finally:
        _restore(saved)
        sys.modules.pop("test.test_hashlib", None)


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


class _InScratchDir(unittest.TestSuite):
    """Runs in a temporary working directory (the tests write files named by TESTFN)."""

    def run(self, result, debug=False):
        here = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            try:
                return super().run(result, debug)
            finally:
                os.chdir(here)


class NotInstalled(unittest.TestCase):
    def test_cpython_test_hashlib(self):
        v = "%d.%d" % sys.version_info[:2]
        why = ("CPython's test suite (test.test_hashlib) is not installed for this interpreter "
               "(Debian: apt install libpython%s-testsuite; scripts/setup.sh does)" % v)
        # On CI setup has run: a missing prerequisite it installs is a failure, not a skip.
        if os.environ.get("CI") == "true":
            self.fail(why)
        self.skipTest(why)


def load_tests(loader, standard_tests, pattern):
    suite = _load(loader)
    if suite is None:
        return loader.loadTestsFromTestCase(NotInstalled)
    tests = list(_tests(suite))
    for t in tests:
        key = "%s.%s" % (type(t).__name__, t._testMethodName)
        if key in SKIPS:
            setattr(t, t._testMethodName, unittest.skip(SKIPS[key])(getattr(t, t._testMethodName)))
    return _InScratchDir(tests)
