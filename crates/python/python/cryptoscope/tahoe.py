"""The study "Tahoe-LAFS with SHA-3 candidates" on a loopback grid: ``python -m cryptoscope.tahoe``.

Normally started by ``cryptoscope tahoe``, which builds the environment (Tahoe-LAFS from
PyPI and this package), stores the results and reports them. For each hash it starts a grid
(an introducer, storage nodes and a client, all on 127.0.0.1) whose every process hashes
through ``cryptoscope.tahoe_patch``; uploads and downloads fresh random files through the
client's web API on one persistent connection, verifying every byte; and reads each
process's hashing counters before and after every (vector, direction) batch. Nodes are
stopped and temporary state removed on success, failure and Ctrl-C.

Exit status: 0 done; 1 a check failed (a download differed, the swap did not take);
2 bad arguments or an environment without Tahoe-LAFS.
"""

import argparse
import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time

# The study's test vectors (count, bytes) and a short set for tests and CI.
PROFILES = {
    "paper": [(100, 1), (100, 1_000), (50, 1_000_000), (5, 100_000_000), (1, 1_000_000_000)],
    "quick": [(3, 1), (5, 1_000), (3, 1_000_000), (1, 8_000_000)],
}
# Files of at most this many bytes become literal caps: no encoding, no hashing.
LIT_MAX = 55
# A fixed file and convergence secret: the same hash gives the same cap on any grid.
PROBE = bytes(range(256)) * 16
CONVERGENCE = base64.b32encode(b"cryptoscope tahoe probe secret!!").decode().lower().rstrip("=")
PTH = "cryptoscope_tahoe.pth"


class Failure(Exception):
    """A check failed (exit 1)."""


class Usage(Exception):
    """Bad arguments or environment (exit 2)."""


QUIET = []


def log(msg):
    if not QUIET:
        print("tahoe: " + msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_pth():
    """The start-up hook that imports the patch in node processes when asked to."""
    path = os.path.join(sysconfig.get_paths()["purelib"], PTH)
    line = ('import os; os.environ.get("CRYPTOSCOPE_TAHOE_HASH") and '
            '__import__("cryptoscope.tahoe_patch")\n')
    try:
        with open(path) as f:
            if f.read() == line:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(line)


def canonical_hash(name):
    """``sha256d`` (Tahoe's stock class), ``sha256d-ours`` or a cryptoscope.hashlib name."""
    key = name.strip().lower()
    if key in ("sha256d", "sha256d-ours"):
        return key
    from . import hashlib as ours

    try:
        k = ours._canonical(name.strip())
    except ValueError:
        raise Usage("unknown hash `%s` (known: sha256d, sha256d-ours, %s)"
                    % (name, ", ".join(sorted(ours.algorithms_available)))) from None
    if k.startswith("shake"):
        raise Usage("`%s` is an extendable-output function; Tahoe-LAFS needs a fixed digest" % name)
    size = ours.new(k).digest_size
    if size < 32:
        raise Usage("`%s` gives %d-byte digests; Tahoe-LAFS needs 32" % (name, size))
    return k


class Grid:
    """An introducer, storage nodes and a client on loopback, under ``root``."""

    def __init__(self, root, tahoe, storage, needed, happy, total, segment, foolscap):
        self.root, self.tahoe = root, tahoe
        self.names = ["s%d" % (i + 1) for i in range(storage)]
        self.needed, self.happy, self.total = needed, happy, total
        self.segment, self.foolscap = segment, foolscap
        self.procs = {}
        self.web = None

    def _cli(self, *args):
        r = subprocess.run([self.tahoe, *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure("`tahoe %s` failed: %s" % (args[0], (r.stderr or r.stdout).strip()[-500:]))

    def _listen(self, port):
        return ["--listen", "tcp", "--port", "tcp:%d:interface=127.0.0.1" % port,
                "--location", "tcp:127.0.0.1:%d" % port]

    def create(self):
        d = self.root
        self._cli("create-introducer", *self._listen(free_port()), os.path.join(d, "introducer"))
        self._start_one("introducer", {})
        furl_path = os.path.join(d, "introducer", "private", "introducer.furl")
        self._wait(lambda: os.path.exists(furl_path), 30, "the introducer's furl")
        furl = open(furl_path).read().strip()
        shares = ["--shares-needed", str(self.needed), "--shares-happy", str(self.happy),
                  "--shares-total", str(self.total)]
        for n in self.names:
            self._cli("create-node", "--nickname", n, *self._listen(free_port()), "--webport", "none",
                      *shares, "--introducer", furl, os.path.join(d, n))
        self.web = free_port()
        self._cli("create-client", "--nickname", "client", "--webport",
                  "tcp:%d:interface=127.0.0.1" % self.web, *shares, "--introducer", furl,
                  os.path.join(d, "client"))
        with open(os.path.join(d, "client", "private", "convergence"), "w") as f:
            f.write(CONVERGENCE + "\n")
        extra = {}
        if self.segment:
            extra.setdefault("client", []).append(
                "shares._max_immutable_segment_size_for_testing = %d" % self.segment)
        if self.foolscap:
            extra.setdefault("client", []).append("force_foolscap = true")
            extra.setdefault("storage", []).append("force_foolscap = true")
        for node in self.names + ["client"]:
            cfg = os.path.join(d, node, "tahoe.cfg")
            text = open(cfg).read()
            for section, lines in extra.items():
                text = text.replace("[%s]\n" % section, "[%s]\n%s\n" % (section, "\n".join(lines)), 1)
            open(cfg, "w").write(text)
        self.stop()

    def _start_one(self, node, env):
        e = dict(os.environ, **env)
        e["CRYPTOSCOPE_TAHOE_STATS"] = os.path.join(self.root, node + ".stats.json")
        if "CRYPTOSCOPE_TAHOE_HASH" not in env:
            e.pop("CRYPTOSCOPE_TAHOE_HASH", None)
        logf = open(os.path.join(self.root, node + ".log"), "ab")
        self.procs[node] = subprocess.Popen(
            [self.tahoe, "run", "--allow-stdin-close", os.path.join(self.root, node)],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
            env=e, start_new_session=True)

    def start(self, hash_name):
        env = {"CRYPTOSCOPE_TAHOE_HASH": hash_name}
        for node in ["introducer"] + self.names + ["client"]:
            self._start_one(node, env)
        self._wait(self._ready, 90, "%d connected storage servers" % len(self.names))

    def _ready(self):
        for node, p in self.procs.items():
            if p.poll() is not None:
                tail = open(os.path.join(self.root, node + ".log"), "rb").read()[-800:].decode(errors="replace")
                raise Failure("node %s exited with status %s: %s" % (node, p.returncode, tail.strip()))
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.web, timeout=5)
            c.request("GET", "/?t=json")
            state = json.loads(c.getresponse().read())
            c.close()
        except (OSError, ValueError, http.client.HTTPException):
            return False
        up = [s for s in state.get("servers", []) if s.get("connection_status", "").startswith("Connected")
              or s.get("connection_status") == "connected"]
        return len(up) >= len(self.names)

    def _wait(self, cond, seconds, what):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if cond():
                return
            time.sleep(0.25)
        raise Failure("timed out after %d s waiting for %s (logs in %s)" % (seconds, what, self.root))

    def snapshot(self):
        """Each process's hashing counters, asked for with SIGUSR1."""
        want = {}
        for node, p in self.procs.items():
            path = os.path.join(self.root, node + ".stats.json")
            seq = _read(path).get("seq", 0)
            want[node] = (path, seq)
            p.send_signal(signal.SIGUSR1)
        out = {}
        # A busy node (two cores shared by five nodes under load) may sit on the signal; it
        # is asked again every 2 s (a dump only reads counters, so an extra one is harmless).
        end = time.monotonic() + 60
        for node, (path, seq) in want.items():
            again = time.monotonic() + 2
            while True:
                s = _read(path)
                if s.get("seq", 0) > seq:
                    out[node] = s
                    break
                now = time.monotonic()
                if now > end:
                    raise Failure("node %s did not report its hash counters in 60 s (is the patch loaded?)" % node)
                if now > again:
                    self.procs[node].send_signal(signal.SIGUSR1)
                    again = now + 2
                time.sleep(0.005)
        return out

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for node, p in self.procs.items():
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = {}

    def wipe_shares(self):
        for n in self.names:
            shutil.rmtree(os.path.join(self.root, n, "storage", "shares"), ignore_errors=True)
        for f in os.listdir(self.root):
            if f.endswith(".stats.json"):
                os.remove(os.path.join(self.root, f))


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def delta(before, after):
    """Counters of ``after`` minus ``before``, per process role (client, storage, introducer)."""
    roles = {}
    for node, a in after.items():
        b = before.get(node, {})
        role = "client" if node == "client" else "introducer" if node == "introducer" else "storage"
        r = roles.setdefault(role, {"digests": 0, "updates": 0, "bytes": 0, "wall_ns": 0,
                                    "cpu_ns": 0, "histogram": {}})
        for k in ("digests", "updates", "bytes", "wall_ns", "cpu_ns"):
            r[k] += a.get(k, 0) - b.get(k, 0)
        hb = b.get("histogram", {})
        for k, v in a.get("histogram", {}).items():
            n = v - hb.get(k, 0)
            if n:
                r["histogram"][k] = r["histogram"].get(k, 0) + n
    return roles


def _error_text(body):
    """The readable part of Tahoe-LAFS's HTML error page: tags, styles and runs of white
    space removed, the end kept (the exception and its message come last)."""
    import html
    import re
    t = body.decode(errors="replace")
    t = re.sub(r"(?is)<(style|script)[^>]*>.*?</\1>", " ", t)
    t = html.unescape(re.sub(r"(?s)<[^>]+>", " ", t))
    t = re.sub(r"\s+", " ", t).strip()
    return t[-400:]


class Web:
    """One persistent HTTP connection to the client's web API."""

    def __init__(self, port):
        self.port = port
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)

    def put(self, data):
        self.c.request("PUT", "/uri", body=data, headers={"Content-Length": str(len(data))})
        r = self.c.getresponse()
        body = r.read()
        if r.status not in (200, 201):
            raise Failure("upload of %d bytes: HTTP %d: %s" % (len(data), r.status, _error_text(body)))
        return body.decode().strip()

    def get_and_compare(self, cap, data):
        self.c.request("GET", "/uri/" + cap)
        r = self.c.getresponse()
        if r.status != 200:
            body = r.read()
            raise Failure("download of %s: HTTP %d: %s" % (cap[:40], r.status, _error_text(body)))
        view, at, same = memoryview(data), 0, True
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            if view[at:at + len(chunk)] != chunk:
                same = False
            at += len(chunk)
        return same and at == len(data)


def random_bytes(rng, n):
    """``n`` random bytes (``randbytes`` alone overflows beyond 256 MiB)."""
    if n <= 1 << 24:
        return rng.randbytes(n)
    return b"".join(rng.randbytes(min(1 << 24, n - at)) for at in range(0, n, 1 << 24))


def size_label(n):
    for unit, v in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= v and n % v == 0:
            return "%d %s" % (n // v, unit)
    return "%d B" % n


def _run_batch(grid, web, hash_name, count, size, rng):
    """Uploads then downloads ``count`` fresh files of ``size`` bytes, comparing every
    byte; the times per direction, the caps, and counter snapshots around each direction."""
    # Fresh random contents (convergent encryption would skip known files).
    files = [random_bytes(rng, size) for _ in range(count)]
    caps, times = [], {"upload": 0.0, "download": 0.0}
    s0 = grid.snapshot()
    for data in files:
        t = time.perf_counter()
        caps.append(web.put(data))
        times["upload"] += time.perf_counter() - t
    s1 = grid.snapshot()
    for i, (cap, data) in enumerate(zip(caps, files)):
        t = time.perf_counter()
        ok = web.get_and_compare(cap, data)
        times["download"] += time.perf_counter() - t
        if not ok:
            raise Failure("%s: %s file %d of %d came back different" % (hash_name, size_label(size), i + 1, count))
    s2 = grid.snapshot()
    return times, caps, (s0, s1, s2)


def run_hash(grid, hash_name, vectors, repeat, rng):
    """Probe, then every vector up and down ``repeat`` times; rows of per-repeat figures."""
    grid.start(hash_name)
    try:
        web = Web(grid.web)
        before = grid.snapshot()
        probe_cap = web.put(PROBE)
        if not web.get_and_compare(probe_cap, PROBE):
            raise Failure("%s: the probe file came back different" % hash_name)
        after = grid.snapshot()
        impl = after["client"].get("implementation", "?")
        probe = delta(before, after)
        if probe["client"]["digests"] == 0:
            raise Failure("%s: the client computed no hash through the patch point: the swap did not take" % hash_name)
        rows = []
        for rep in range(repeat):
            for count, size in vectors:
                # A storage server that dropped its connection under load makes an upload
                # fail with UploadUnhappinessError: that is the grid's doing, not the hash's.
                # The whole batch is then measured again once, after the grid is whole, and
                # the rows say so; any other failure, or a second one, ends the study.
                retried = None
                while True:
                    try:
                        batch = _run_batch(grid, web, hash_name, count, size, rng)
                        break
                    except Failure as e:
                        # Through the web API the unhappiness arrives as an HTTP 500 whose text
                        # is "we were asked to place shares on at least N such servers".
                        grid_trouble = any(m in str(e) for m in (
                            "UploadUnhappinessError", "NoServersError", "place shares on at least"))
                        if retried is not None or not grid_trouble:
                            raise
                        retried = str(e)[-200:]
                        log("%s %s: %s; measuring the batch again once the grid is whole"
                            % (hash_name, size_label(size), retried))
                        grid._wait(grid._ready, 90, "%d connected storage servers" % len(grid.names))
                times, caps, (s0, s1, s2) = batch
                for direction, (a, b) in (("upload", (s0, s1)), ("download", (s1, s2))):
                    d = delta(a, b)
                    row = {
                        "hash": hash_name, "vector": "%dx%s" % (count, size_label(size)),
                        "count": count, "size": size, "direction": direction, "repeat": rep + 1,
                        "total_s": times[direction],
                        "literal": size <= LIT_MAX and all(c.startswith("URI:LIT:") for c in caps),
                        "processes": d,
                    }
                    if retried:
                        row["retried_after"] = retried
                    rows.append(row)
                log("%s %s repeat %d: up %.2f s, down %.2f s, client hashed %.3f s"
                    % (hash_name, rows[-1]["vector"], rep + 1, times["upload"], times["download"],
                       (rows[-2]["processes"]["client"]["wall_ns"] + rows[-1]["processes"]["client"]["wall_ns"]) / 1e9))
        return {"implementation": impl, "probe_cap": probe_cap, "probe": probe}, rows
    finally:
        grid.stop()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cryptoscope.tahoe", description=__doc__.split("\n\n")[0])
    p.add_argument("--hash", default="sha256d,sha3_256,blake2b_256,blake3")
    p.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    p.add_argument("--vectors", help="COUNTxBYTES,... instead of the profile's")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--storage-nodes", type=int, default=3)
    p.add_argument("--shares", default="2,3,3", help="needed,happy,total")
    p.add_argument("--segment-size", type=int, default=0, help="immutable segment bytes (2010: 131072)")
    p.add_argument("--foolscap", action="store_true", help="Foolscap storage transport (2010), not HTTPS")
    p.add_argument("--workdir", help="keep grid state here (default: a temporary directory, removed)")
    p.add_argument("--seed", type=int, help="random file contents from this seed (default: fresh)")
    p.add_argument("--json", required=True, help="write results here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    a = p.parse_args(argv)
    if a.quiet:
        QUIET.append(True)
    try:
        return _main(a)
    except Usage as e:
        print("error: " + str(e), file=sys.stderr)
        return 2
    except Failure as e:
        print("error: " + str(e), file=sys.stderr)
        return 1


def _parse_vectors(text):
    out = []
    for item in text.split(","):
        try:
            c, s = item.lower().split("x")
            out.append((int(c), int(s)))
        except ValueError:
            raise Usage("bad vector `%s` (want COUNTxBYTES, e.g. 5x1000000)" % item) from None
        if out[-1][0] < 1 or out[-1][1] < 1:
            raise Usage("bad vector `%s`: count and size must be positive" % item)
    return out


def _main(a):
    try:
        import allmydata
    except ImportError:
        raise Usage("Tahoe-LAFS is not installed in %s (`cryptoscope tahoe` builds that environment)" % sys.prefix) from None
    tahoe = os.path.join(os.path.dirname(sys.executable), "tahoe")
    if not os.path.exists(tahoe):
        raise Usage("no `tahoe` program beside %s" % sys.executable)
    hashes = []
    for h in a.hash.split(","):
        k = canonical_hash(h)
        if k not in hashes:
            hashes.append(k)
    vectors = _parse_vectors(a.vectors) if a.vectors else PROFILES[a.profile]
    try:
        needed, happy, total = (int(x) for x in a.shares.split(","))
    except ValueError:
        raise Usage("--shares wants needed,happy,total (e.g. 2,3,3)") from None
    if not (1 <= needed <= happy <= total <= 256) or happy > a.storage_nodes:
        raise Usage("--shares %s does not fit %d storage nodes (need 1 <= needed <= happy <= total, happy <= nodes)"
                    % (a.shares, a.storage_nodes))
    if a.repeat < 1:
        raise Usage("--repeat must be at least 1")
    ensure_pth()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(8), "little")
    rng = random.Random(seed)
    root = a.workdir or tempfile.mkdtemp(prefix="cryptoscope-tahoe-")
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o700)
    interrupted = []

    def on_term(signum, _frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    grid = Grid(root, tahoe, a.storage_nodes, needed, happy, total, a.segment_size, a.foolscap)
    started = time.time()
    result = {
        "tahoe_version": allmydata.__version__, "python": sys.version.split()[0],
        "profile": a.profile if not a.vectors else "custom", "vectors": vectors, "repeat": a.repeat,
        "storage_nodes": a.storage_nodes, "shares": [needed, happy, total],
        "segment_size": a.segment_size or None, "transport": "foolscap" if a.foolscap else "https",
        "seed": seed, "hashes": {}, "rows": [],
    }
    try:
        log("creating a grid in %s (introducer, %d storage nodes, client; shares %d/%d/%d)"
            % (root, a.storage_nodes, needed, happy, total))
        grid.create()
        for h in hashes:
            log("%s: starting the grid" % h)
            info, rows = run_hash(grid, h, vectors, a.repeat, rng)
            result["hashes"][h] = info
            result["rows"].extend(rows)
            grid.wipe_shares()
        check_swap(result)
    except KeyboardInterrupt:
        log("interrupted: stopping the nodes and removing %s" % root)
        raise Failure("interrupted") from None
    finally:
        grid.stop()
        if not a.workdir:
            shutil.rmtree(root, ignore_errors=True)
        result["wall_s"] = time.time() - started
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


def check_swap(result):
    """Different hashes give different caps for the probe; the two SHA-256d routes the same."""
    caps = {h: i["probe_cap"] for h, i in result["hashes"].items()}
    checks = []
    if "sha256d" in caps and "sha256d-ours" in caps:
        if caps["sha256d"] != caps["sha256d-ours"]:
            raise Failure("the probe's cap through our SHA-256d differs from stock Tahoe-LAFS's: %s vs %s"
                          % (caps["sha256d-ours"], caps["sha256d"]))
        checks.append("stock and cryptoscope SHA-256d give the same cap")
    distinct = {}
    for h, c in caps.items():
        key = "sha256d" if h == "sha256d-ours" else h
        distinct.setdefault(c, set()).add(key)
    for c, hs in distinct.items():
        if len(hs) > 1:
            raise Failure("hashes %s gave the same probe cap %s: the swap did not take" % (", ".join(sorted(hs)), c))
    if len(caps) > 1:
        checks.append("%d different hashes give %d different caps" % (len({"sha256d" if h == "sha256d-ours" else h for h in caps}), len(distinct)))
    result["swap_checks"] = checks


if __name__ == "__main__":
    sys.exit(main())
