#!/usr/bin/env bash
# The test command (README's second command; `.ci/run` calls exactly this).
# Installs what is missing, builds once in release mode, runs every test.
#
# On CI (CI=true) the cargo target directory is shared between runs on the same machine
# (~/.cache/cryptoscope/target), so liboqs and AWS-LC are not rebuilt each time; a run
# from an empty directory also passes (about 20 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${CI:-}" == "true" && -z "${CARGO_TARGET_DIR:-}" ]]; then
  export CARGO_TARGET_DIR="${CRYPTOSCOPE_CI_TARGET:-$HOME/.cache/cryptoscope/target}"
  mkdir -p "$CARGO_TARGET_DIR"
fi
# Tests find the known-answer data here, whatever the target directory.
export CRYPTOSCOPE_VECTORS="$PWD/vectors"

bash scripts/setup.sh --no-run
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --release --workspace --locked --no-fail-fast -- --test-threads=1 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Our block ciphers' portable and NEON code and our SHA-3 candidates' portable code (their
# x86 vector paths are chosen at run time), cross-compiled for AArch64 with Debian's
# toolchain and run under qemu-aarch64: correctness only (vectors, traces, KATs, cross-checks).
printf '\033[1m==> %s\033[0m\n' "cipher and SHA-3 candidate tests on aarch64 under qemu-aarch64 (correctness only)" >&2
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
  cargo test --release --locked --target aarch64-unknown-linux-gnu -p cryptoscope-ciphers -p cryptoscope-sha3r2 -- --test-threads=1 2>&1 | tee -a "$log"
cross=${PIPESTATUS[0]}
[[ $status -eq 0 ]] && status=$cross
# The Python package against CPython's hashlib (unittest prints `Ran N tests` and OK/FAILED).
.venv/bin/python -m unittest discover -s crates/python/tests -v 2>&1 | tee -a "$log"
py=${PIPESTATUS[0]}
awk '/^Ran [0-9]+ tests?/ { n = $2 } /^OK/ { printf "test result: ok. %d passed; 0 failed\n", n }
     /^FAILED/ { s = $0; f = 0
                 while (match(s, /(failures|errors)=[0-9]+/)) { t = substr(s, RSTART, RLENGTH); sub(/.*=/, "", t); f += t; s = substr(s, RSTART + RLENGTH) }
                 printf "test result: FAILED. %d passed; %d failed\n", n - f, f }' "$log" >> "$log.py"
cat "$log.py" >> "$log"; rm -f "$log.py"
[[ $status -eq 0 ]] && status=$py
# Fuzzing: each parser's libFuzzer target (docs/fuzzing.md): its regression inputs replayed,
# then 8 s of fuzzing; prints its own `test result:` line. Corpora and crash files are kept
# beside the cargo cache, so coverage builds up from run to run and a reproducer survives.
printf '\033[1m==> %s\033[0m\n' "fuzz targets, 8 s each (scripts/fuzz.sh)" >&2
FUZZ_SECONDS=8 FUZZ_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/fuzz" \
  FUZZ_CORPUS="$HOME/.cache/cryptoscope/fuzz-corpus" FUZZ_OUT="$HOME/.cache/cryptoscope/fuzz-out" \
  bash scripts/fuzz.sh 2>&1 | tee -a "$log"
fz=${PIPESTATUS[0]}
[[ $status -eq 0 ]] && status=$fz
# Formatting (rustfmt.toml): a drift fails the run like a test.
if ! cargo fmt --all --check >/dev/null 2>&1; then
  echo "test result: FAILED. 0 passed; 1 failed (cargo fmt --all --check: run cargo fmt --all)" | tee -a "$log"
  [[ $status -eq 0 ]] && status=1
fi
# Lints (STYLE.md: clippy clean with -D warnings): a lint fails the run like a test.
printf '\033[1m==> %s\033[0m\n' "cargo clippy --workspace --all-targets -- -D warnings" >&2
if ! cargo clippy --release --workspace --all-targets --locked -- -D warnings >"$log.clippy" 2>&1; then
  grep -E '^(warning|error)' -A6 "$log.clippy" | head -40 >&2
  echo "test result: FAILED. 0 passed; 1 failed (cargo clippy -- -D warnings: see above)" | tee -a "$log"
  [[ $status -eq 0 ]] && status=1
fi
rm -f "$log.clippy"
set -e
# One closing line with the totals over every test binary (cargo prints one per binary,
# the last often being an empty doc-test run).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
