#!/usr/bin/env bash
# Cross-check against the standard peer: `openssl speed` for X25519, P-256 and FFDHE-2048,
# interleaved with cryptoscope's OpenSSL `derive` (EVP_PKEY_derive on a context whose peer
# was set once: what `openssl speed` times), and the ratio of the two rates. Rounds
# alternate the two tools per algorithm so that both see the same moments of the machine;
# each figure is the median over the rounds. `exchange` and `validate` are shown beside.
#
#   bash scripts/crosscheck-speed.sh [ROUNDS] [SECONDS]     (defaults: 3 rounds, 2 s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-2}
T=${CARGO_TARGET_DIR:-target}/release
command -v openssl >/dev/null || { echo "error: openssl (the command) is not installed" >&2; exit 2; }
[ -x "$T/cryptoscope" ] || { echo "error: $T/cryptoscope is not built (bash scripts/setup.sh --no-run)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CRYPTOSCOPE_VECTORS=${CRYPTOSCOPE_VECTORS:-$PWD/vectors}

for r in $(seq "$rounds"); do
  for pair in X25519:ecdhx25519 P-256:ecdhp256 FFDHE-2048:ffdh2048; do
    alg=${pair%%:*} speed=${pair##*:}
    echo "round $r/$rounds: $alg" >&2
    # `-mr` prints `+F<n>:<index>:<bits>:<ops per second>:<seconds per op>`.
    openssl speed -mr -seconds "$seconds" "$speed" 2>/dev/null | awk -F: '/^\+F/ {print $4}' >>"$tmp/$alg.speed"
    "$T/cryptoscope" run --quiet --quick --provider openssl --alg "$alg" --db "$tmp/db" --json "$tmp/run.json" >/dev/null
    python3 - "$tmp/run.json" >>"$tmp/$alg.ours" <<'PY'
import json, sys
rows = {r["operation"]: r for r in json.load(open(sys.argv[1]))["results"]}
print(" ".join(str(rows[o]["median_ns"]) for o in ("derive", "exchange", "validate")))
PY
  done
done

python3 - "$tmp" "$rounds" "$seconds" "$(openssl version)" <<'PY'
import statistics, sys
d, rounds, seconds, version = sys.argv[1:]
print(f"{version}; {rounds} interleaved rounds, openssl speed -seconds {seconds}; medians over the rounds")
print(f"{'algorithm':<11} {'openssl speed':>14} {'our derive':>11} {'ratio':>6} {'our exchange':>13} {'our validate':>13}")
for alg in ("X25519", "P-256", "FFDHE-2048"):
    speed = statistics.median(float(x) for x in open(f"{d}/{alg}.speed").read().split())
    ours = [line.split() for line in open(f"{d}/{alg}.ours")]
    derive, exchange, validate = (statistics.median(float(r[i]) for r in ours) for i in range(3))
    rate = lambda ns: 1e9 / ns
    print(f"{alg:<11} {speed:>12,.0f}/s {rate(derive):>9,.0f}/s {rate(derive) / speed:>6.2f} "
          f"{rate(exchange):>11,.0f}/s {validate / 1e3:>10,.1f} µs")
print("ratio: our derive rate over openssl speed's; 1.00 is the same figure")
PY
