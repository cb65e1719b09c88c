"""Binding overhead of cryptoscope.hashlib against CPython's hashlib.

    python -m cryptoscope.bench [--repeat 7] [--number 200000]

Prints, for SHA-256: the time of one ``update`` + ``digest`` of a 64-byte message on an
existing object, of ``new(data).digest()``, and of an empty ``update`` (the per-call cost of
crossing into the library), each the best of ``repeat`` timeit runs, for both packages and
their ratio.
"""

import argparse
import hashlib as std
import timeit

import cryptoscope.hashlib as ours


def best(stmt, g, number, repeat):
    return min(timeit.repeat(stmt, globals=g, number=number, repeat=repeat)) / number * 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=200_000)
    a = ap.parse_args(argv)
    msg = bytes(range(64))
    cases = [
        ("update+digest, 64 B", "h.update(m); h.digest()"),
        ("new(64 B).digest()", "c(m).digest()"),
        ("empty update (per call)", "h.update(b'')"),
    ]
    print(f"{'SHA-256':<26}{'hashlib ns':>12}{'cryptoscope ns':>16}{'ratio':>8}")
    for label, stmt in cases:
        t = []
        for mod in (std, ours):
            g = {"h": mod.sha256(), "m": msg, "c": mod.sha256}
            t.append(best(stmt, g, a.number, a.repeat))
        print(f"{label:<26}{t[0]:>12.1f}{t[1]:>16.1f}{t[1] / t[0]:>8.2f}")


if __name__ == "__main__":
    main()
