"""Swaps and instruments Tahoe-LAFS's hash in a node process (imported at start-up).

`cryptoscope tahoe` installs a ``.pth`` line in its Tahoe-LAFS environment that imports this
module when ``CRYPTOSCOPE_TAHOE_HASH`` is set, so stock runs stay stock. Every tagged hash in
Tahoe-LAFS (storage index, block, crypttext and share hash trees, URI extension block,
convergence, lease secrets, mutable keys, ``timing_safe_compare``) is made by
``allmydata.util.hashutil._SHA256d_Hasher``, looked up by name at each call; replacing that
one attribute swaps them all.

- ``CRYPTOSCOPE_TAHOE_HASH=sha256d``: Tahoe's own class (hashlib's SHA-256, twice), wrapped
  only to be timed — the stock computation.
- any other name of ``cryptoscope.hashlib`` (``sha3_256``, ``blake2b_256``, ``blake3``,
  ``sha256d`` through our package as ``sha256d-ours``, ...): our package's hash, its digest
  cut to 32 bytes (Tahoe's hash size) and then to the caller's ``truncate_to``.

Counters (digests, update calls, bytes, a histogram of message sizes, wall and thread CPU
time inside update/digest) are kept per process and written as JSON to
``CRYPTOSCOPE_TAHOE_STATS`` whenever the process receives SIGUSR1.
"""

import json
import os
import signal
import threading
import time

_HASH = os.environ.get("CRYPTOSCOPE_TAHOE_HASH", "")
_STATS = os.environ.get("CRYPTOSCOPE_TAHOE_STATS", "")

_lock = threading.Lock()
_totals = {"digests": 0, "updates": 0, "bytes": 0, "wall_ns": 0, "cpu_ns": 0}
# Message sizes per digest: bucket k holds sizes in [2^(k-1), 2^k) (bucket 0: empty).
_histogram = {}
_dumps = 0


def _account(updates, nbytes, wall, cpu, digest_done):
    with _lock:
        _totals["updates"] += updates
        _totals["bytes"] += nbytes
        _totals["wall_ns"] += wall
        _totals["cpu_ns"] += cpu
        if digest_done is not None:
            _totals["digests"] += 1
            k = digest_done.bit_length()
            _histogram[k] = _histogram.get(k, 0) + 1


def _dump(*_):
    global _dumps
    with _lock:
        _dumps += 1
        state = dict(_totals, histogram={str(k): v for k, v in sorted(_histogram.items())},
                     seq=_dumps, pid=os.getpid(), hash=_HASH, implementation=_IMPLEMENTATION)
    tmp = _STATS + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, _STATS)


def _timed(make_inner, digest_size):
    """A class with ``_SHA256d_Hasher``'s interface over ``make_inner()``'s object, timed."""
    now, cpu = time.perf_counter_ns, time.thread_time_ns

    class Hasher:
        __slots__ = ("h", "truncate_to", "_digest", "_length")

        def __init__(self, truncate_to=None):
            w, c = now(), cpu()
            self.h = make_inner()
            self.truncate_to = truncate_to
            self._digest = None
            self._length = 0
            _account(0, 0, now() - w, cpu() - c, None)

        def update(self, data):
            assert isinstance(data, bytes)  # as Tahoe's own class demands
            w, c = now(), cpu()
            self.h.update(data)
            w, c = now() - w, cpu() - c
            self._length += len(data)
            _account(1, len(data), w, c, None)

        def digest(self):
            if self._digest is None:
                w, c = now(), cpu()
                d = self.h.digest()[:digest_size]
                if self.truncate_to:
                    d = d[: self.truncate_to]
                self._digest = d
                del self.h
                _account(0, 0, now() - w, cpu() - c, self._length)
            return self._digest

    return Hasher


def _install():
    global _IMPLEMENTATION
    from allmydata.util import hashutil

    stock = hashutil._SHA256d_Hasher
    if _HASH == "sha256d":
        _IMPLEMENTATION = "Tahoe-LAFS stock _SHA256d_Hasher (hashlib SHA-256 twice), timed"

        class StockDigest:
            __slots__ = ("s",)

            def __init__(self):
                self.s = stock()

            def update(self, data):
                self.s.update(data)

            def digest(self):
                return self.s.digest()

        hashutil._SHA256d_Hasher = _timed(StockDigest, 32)
        return
    from . import hashlib as ours

    name = "sha256d" if _HASH == "sha256d-ours" else _HASH
    probe = ours.new(name)
    _IMPLEMENTATION = "cryptoscope.hashlib %s (%s)" % (probe.name, _native_name(name))
    hashutil._SHA256d_Hasher = _timed(lambda: ours.new(name), 32)


def _native_name(name):
    from . import hashlib as ours

    return ours._NAMES[ours._canonical(name)]


_IMPLEMENTATION = "none"
if _HASH and _STATS:
    _install()
    signal.signal(signal.SIGUSR1, _dump)
