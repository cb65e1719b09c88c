#!/usr/bin/env bash
# Independent cross-check of the harness: time a worker looping over one operation with
# the shell's wall clock (no TSC, no cryptoscope timing code), as (t(1+N) - t(1)) / N over
# the median of 7 repetitions, and compare with cryptoscope's median for the same subject.
#
#   bash scripts/crosscheck.sh [SUBJECT] [OPERATION] [N]
#
# Against `openssl speed` for the key exchanges: scripts/crosscheck-speed.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
subject=${1:-X25519/openssl/default}
op=${2:-exchange}
n=${3:-2000}
T=${CARGO_TARGET_DIR:-target}/release
provider=$(cut -d/ -f2 <<<"$subject" | tr -d -)
worker="$T/cryptoscope-worker-$provider"

wall() { # median wall-clock ns of `worker loop` with $1 iterations
  local i s e times=()
  for i in 1 2 3 4 5 6 7; do
    s=$(date +%s%N); "$worker" loop --subject "$subject" --op "$op" --iterations "$1" >/dev/null; e=$(date +%s%N)
    times+=($((e - s)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 4p
}
t1=$(wall 1); tn=$(wall $((n + 1)))
indep=$(( (tn - t1) / n ))

alg=${subject%%/*}; prov=$(cut -d/ -f2 <<<"$subject"); impl=${subject##*/}
"$T/cryptoscope" run --quiet --alg "$alg" --provider "$prov" --impl "$impl" --json /tmp/cs-crosscheck.json >/dev/null
ours=$(python3 -c "import json;r=[x for x in json.load(open('/tmp/cs-crosscheck.json'))['results'] if x['operation']=='$op'][0];print(round(r['median_ns']))")
python3 -c "print(f'$subject $op: cryptoscope median {$ours} ns, independent wall clock {$indep} ns per call, ratio {$ours/$indep:.3f}')"
