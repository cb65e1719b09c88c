#!/usr/bin/env python3
"""Compare the medians of two cryptoscope run files (cryptoscope.run/1).

For every (subject, operation) measured in both runs with a median of at least
--min-us microseconds, report the relative difference of the medians and the share of
pairs that agree within --tolerance. Exit 0 if that share reaches --required.
"""
import argparse
import json
import sys


def rows(path):
    with open(path) as f:
        run = json.load(f)
    if run.get("schema") != "cryptoscope.run/1":
        sys.exit(f"error: {path} is not a cryptoscope.run/1 file")
    return {(r["subject"], r["operation"]): r for r in run["results"] if r.get("median_ns") is not None}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-us", type=float, default=10.0)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--required", type=float, default=0.90)
    args = ap.parse_args()
    a, b = rows(args.a), rows(args.b)
    pairs = []
    for key in sorted(a.keys() & b.keys()):
        ma, mb = a[key]["median_ns"], b[key]["median_ns"]
        if min(ma, mb) < args.min_us * 1000:
            continue
        pairs.append((key, (mb - ma) / ma))
    if not pairs:
        sys.exit("error: no common operation above the threshold")
    ok = [p for p in pairs if abs(p[1]) <= args.tolerance]
    share = len(ok) / len(pairs)
    worst = sorted(pairs, key=lambda p: -abs(p[1]))[:5]
    print(f"{len(ok)}/{len(pairs)} operations >= {args.min_us:g} us agree within "
          f"{args.tolerance:.0%} ({share:.1%}; required {args.required:.0%})")
    for (subject, op), d in worst:
        print(f"  largest: {subject} {op}: {d:+.1%}")
    sys.exit(0 if share >= args.required else 1)


if __name__ == "__main__":
    main()
