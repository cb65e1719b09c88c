#!/usr/bin/env bash
# Runs the tests that used to decide on live timing N times in a row (default 20) and
# says how many runs of each passed: the check behind "a busy machine makes the run
# slower, never red" (docs/testing.md). Start a CPU hog first to check it under load:
#
#   stress-ng --cpu 2 --timeout 0 & bash scripts/repeat-under-load.sh 20; kill %1
#
# The slower end-to-end files (live dudect, cipher and hash suites) run N_SLOW times
# (default: N); the Ctrl-C tests of the TLS and tunnel drivers (root, namespaces and
# daemons; about a minute each) N_E2E times (default 3).
set -uo pipefail
cd "$(dirname "$0")/.."
export CRYPTOSCOPE_VECTORS="$PWD/vectors"
n=${1:-20}
n_slow=${N_SLOW:-$n}
n_e2e=${N_E2E:-3}
fast=(
  "-p cryptoscope-measure --lib sampler::"
  "-p cryptoscope-worker --lib ct::tests"
  "-p cryptoscope-engine --lib ct::tests"
  "-p cryptoscope --test replay"
  "-p cryptoscope --test resume"
  "-p cryptoscope --test tls a_count_instead_of_a_duration"
  "-p cryptoscope-tls --test hostile"
)
slow=(
  "-p cryptoscope --test ct"
  "-p cryptoscope --test cipher"
  "-p cryptoscope --test hash"
)
e2e=(
  "-p cryptoscope --test tls namespaces_with_a_rate_limit_and_nothing_left_after_ctrl_c"
  "-p cryptoscope --test tunnel soft_and_accelerated_and_ctrl_c_leaves_nothing"
)
# Built once, before the clock starts.
cargo test --release --workspace --no-run --locked >/dev/null 2>&1 || { echo "build failed" >&2; exit 2; }
failed=0
run() { # times, args...
  local times=$1; shift
  local ok=0 start=$SECONDS
  for ((i = 1; i <= times; i++)); do
    # shellcheck disable=SC2086
    if cargo test --release --locked $* >/tmp/repeat-under-load.log 2>&1; then ok=$((ok + 1)); else
      echo "FAILED on run $i: cargo test --release $*" >&2; grep -E "panicked|FAILED" /tmp/repeat-under-load.log | head -5 >&2; fi
  done
  printf '%2d/%-2d passed  %4d s  cargo test --release %s\n' "$ok" "$times" $((SECONDS - start)) "$*"
  [[ $ok -eq $times ]] || failed=1
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${fast[@]}"; do run "$n" "$t"; done
for t in "${slow[@]}"; do run "$n_slow" "$t"; done
for t in "${e2e[@]}"; do run "$n_e2e" "$t"; done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
