#!/usr/bin/env bash
# The test command's checks that are not Rust test binaries, one per call; scripts/test.sh
# runs them beside the test binaries. Each prints libtest's closing line, `test result: …`,
# which the test command's totals count, and exits non-zero when it fails.
#
#   bash scripts/checks.sh python           the Python package against CPython's hashlib
#   bash scripts/checks.sh scripts          the test command's own scripts (scripts/tests)
#   bash scripts/checks.sh fmt              rustfmt.toml's formatting, every workspace
#   bash scripts/checks.sh clippy [ARG...]  clippy -D warnings (STYLE.md); ARGs go to cargo
#   bash scripts/checks.sh sizes            ARCHITECTURE.md's size limits (scripts/sizes.py)
set -uo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "test result: FAILED. 0 passed; 1 failed ($*)"
  exit 1
}

# Python's unittest on a directory, with libtest's closing line made from its own
# (`Ran N tests`, then OK or FAILED with skipped=, failures=, errors=).
unittests() {
  local python=$1 dir=$2 out rc
  out=$("$python" -m unittest discover -s "$dir" -v 2>&1)
  rc=$?
  printf '%s\n' "$out"
  printf '%s\n' "$out" | awk '
      function count(s, what,   t, k) { k = 0
        while (match(s, what "=[0-9]+")) { t = substr(s, RSTART, RLENGTH); sub(/.*=/, "", t); k += t; s = substr(s, RSTART + RLENGTH) }
        return k }
      /^Ran [0-9]+ tests?/ { n = $2 }
      /^OK/ { k = count($0, "skipped"); printf "test result: ok. %d passed; 0 failed; %d ignored (Python: skipped)\n", n - k, k }
      /^FAILED/ { f = count($0, "failures") + count($0, "errors"); k = count($0, "skipped")
                  printf "test result: FAILED. %d passed; %d failed; %d ignored (Python: skipped)\n", n - f - k, f, k }'
  return $rc
}

case ${1:-} in
  python) unittests .venv/bin/python crates/python/tests ;;
  scripts) unittests python3 scripts/tests ;;
  fmt)
    # The main workspace, and the two TLS workspaces of their own.
    for m in "--all" "--manifest-path crates/tls-openssl35/Cargo.toml" "--manifest-path crates/tls-openssl40/Cargo.toml"; do
      # shellcheck disable=SC2086 # two words: the flag and its path
      if ! cargo fmt --check $m >/dev/null 2>&1; then
        cargo fmt --check $m 2>&1 | head -40
        fail "cargo fmt --check $m: run cargo fmt --all"
      fi
    done
    echo "formatting: every workspace as rustfmt.toml says"
    ;;
  clippy)
    shift
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    if ! cargo clippy --release --workspace --all-targets --locked "$@" -- -D warnings >"$log" 2>&1; then
      grep -E '^(warning|error)' -A6 "$log" | head -60
      fail "cargo clippy -- -D warnings: see above"
    fi
    grep -E '^ *(Checking|Finished)' "$log" | tail -3
    ;;
  sizes)
    python3 scripts/sizes.py || fail "scripts/sizes.py: a file or function over the limits"
    ;;
  *)
    echo "usage: bash scripts/checks.sh python|scripts|fmt|clippy|sizes" >&2
    exit 2
    ;;
esac
