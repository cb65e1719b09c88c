#!/usr/bin/env bash
# The test command (README's second command; `.ci/run` calls exactly this).
# Installs what is missing, builds once in release mode, runs every test.
#
# On CI (CI=true) the cargo target directory is shared between runs on the same machine
# (~/.cache/cryptoscope/target), so liboqs and AWS-LC are not rebuilt each time; a run
# from an empty directory also passes (34 minutes on 2 cores, 2026-11-28: 16 of them building
# liboqs, AWS-LC, OpenSSL 3.5 and 4.0 and the rest; the AArch64 and s390x cross builds add
# about 13 minutes since 2026-11-29).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${CI:-}" == "true" && -z "${CARGO_TARGET_DIR:-}" ]]; then
  export CARGO_TARGET_DIR="${CRYPTOSCOPE_CI_TARGET:-$HOME/.cache/cryptoscope/target}"
  mkdir -p "$CARGO_TARGET_DIR"
fi
# Tests find the known-answer data here, whatever the target directory.
export CRYPTOSCOPE_VECTORS="$PWD/vectors"
# A test that cannot run records itself here (crates/testkit): counted as skipped, not passed.
skips=$(mktemp)
export CRYPTOSCOPE_TEST_SKIPS="$skips"
# The fuzz replay's scratch (empty corpus, logs): nothing from an earlier run, gone after.
fuzz_tmp=$(mktemp -d)

bash scripts/setup.sh --no-run
# The tool off x86-64 (crates/cli/tests/cross.rs): the AArch64 `cryptoscope` and its workers,
# and PQClean's worker for big-endian s390x, cross-compiled with Debian's toolchains and run
# under qemu-user; the tests find them through these two variables. Cargo's cache keeps
# them: about 13 minutes on 2 cores from nothing, seconds after.
source scripts/cross.sh
if [[ "$(uname -m)" == x86_64 ]]; then
  printf '\033[1m==> %s\033[0m\n' "cross-building cryptoscope and its workers for aarch64, and the PQClean worker for s390x" >&2
  cargo build --release --locked --target aarch64-unknown-linux-gnu -p cryptoscope -p cryptoscope-provider-liboqs \
    -p cryptoscope-provider-pqclean -p cryptoscope-provider-awslc -p cryptoscope-provider-rustcrypto \
    -p cryptoscope-provider-openssl -p cryptoscope-provider-cryptoscope -p cryptoscope-provider-build \
    || echo "error: the aarch64 cross build failed (above); crates/cli/tests/cross.rs will fail" >&2
  cargo build --release --locked --target s390x-unknown-linux-gnu -p cryptoscope-provider-pqclean \
    || echo "error: the s390x cross build failed (above); crates/cli/tests/cross.rs will fail" >&2
  export CRYPTOSCOPE_AARCH64_DIR="${CARGO_TARGET_DIR:-$PWD/target}/aarch64-unknown-linux-gnu/release"
  export CRYPTOSCOPE_S390X_DIR="${CARGO_TARGET_DIR:-$PWD/target}/s390x-unknown-linux-gnu/release"
fi
log=$(mktemp)
trap 'rm -rf "$log" "$skips" "$fuzz_tmp"; rm -f "${TMPDIR:-/tmp}"/cryptoscope-test-*.db*' EXIT
set +e
# In parallel within each test binary (libtest's default: one thread per CPU); the tests
# that bind ports, start daemons or create namespaces hold a lock of their file
# (`common::serial`), and cargo runs the binaries one after another. No test decides on
# the machine's speed (docs/testing.md), so a busy machine makes the run slower, not red.
cargo test --release --workspace --locked --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Our block ciphers' portable and NEON code and our SHA-3 candidates' portable code (their
# x86 vector paths are chosen at run time), cross-compiled for AArch64 with Debian's
# toolchain and run under qemu-aarch64: correctness only (vectors, traces, KATs, cross-checks);
# and the measurement core there: the generic timer as time base, HWCAP features, and
# qemu-user detected (its results labelled emulated, the PMU's counters switched off).
# Then big-endian s390x under qemu-s390x: our ciphers, SHA-3 candidates, measurement core,
# results model, the catalogue's NIST DRBG and gates, and the worker's protocol and probes.
cross=0
if [[ "$(uname -m)" == x86_64 ]]; then
  printf '\033[1m==> %s\033[0m\n' "cipher, SHA-3 candidate and measurement-core tests on aarch64 under qemu-aarch64 (correctness, the generic timer, emulation detected)" >&2
  cargo test --release --locked --target aarch64-unknown-linux-gnu -p cryptoscope-ciphers -p cryptoscope-sha3r2 -p cryptoscope-measure 2>&1 | tee -a "$log"
  cross=${PIPESTATUS[0]}
  printf '\033[1m==> %s\033[0m\n' "our own code on big-endian s390x under qemu-s390x" >&2
  cargo test --release --locked --target s390x-unknown-linux-gnu --lib -p cryptoscope-ciphers -p cryptoscope-sha3r2 \
    -p cryptoscope-measure -p cryptoscope-model -p cryptoscope-catalogue -p cryptoscope-worker 2>&1 | tee -a "$log"
  be=${PIPESTATUS[0]}
  [[ $cross -eq 0 ]] && cross=$be
fi
[[ $status -eq 0 ]] && status=$cross
# The Python package against CPython's hashlib (unittest prints `Ran N tests` and OK/FAILED).
.venv/bin/python -m unittest discover -s crates/python/tests -v 2>&1 | tee -a "$log"
py=${PIPESTATUS[0]}
awk 'function count(s, what,   t, k) { k = 0
       while (match(s, what "=[0-9]+")) { t = substr(s, RSTART, RLENGTH); sub(/.*=/, "", t); k += t; s = substr(s, RSTART + RLENGTH) }
       return k }
     /^Ran [0-9]+ tests?/ { n = $2 }
     /^OK/ { k = count($0, "skipped"); printf "test result: ok. %d passed; 0 failed; %d ignored\n", n - k, k }
     /^FAILED/ { f = count($0, "failures") + count($0, "errors"); k = count($0, "skipped")
                 printf "test result: FAILED. %d passed; %d failed; %d ignored\n", n - f - k, f, k }' "$log" >> "$log.py"
cat "$log.py" >> "$log"; rm -f "$log.py"
[[ $status -eq 0 ]] && status=$py
# Fuzzing: each parser's libFuzzer target (docs/fuzzing.md) replays the inputs kept in the
# repository (every crash ever found, and the seeds); prints its own `test result:` line.
# Nothing here depends on a corpus an earlier run left behind. Open-ended fuzzing is
# `make fuzz` (scripts/fuzz.sh), whose finds go into fuzz/regressions/.
printf '\033[1m==> %s\033[0m\n' "fuzz targets: the repository's regression and seed inputs (scripts/fuzz.sh --replay)" >&2
FUZZ_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/fuzz" FUZZ_CORPUS="$fuzz_tmp/corpus" FUZZ_OUT="$fuzz_tmp/out" \
  bash scripts/fuzz.sh --replay 2>&1 | tee -a "$log"
fz=${PIPESTATUS[0]}
[[ $status -eq 0 ]] && status=$fz
# Formatting (rustfmt.toml): a drift fails the run like a test.
if ! cargo fmt --all --check >/dev/null 2>&1 || ! cargo fmt --check --manifest-path crates/tls-openssl35/Cargo.toml >/dev/null 2>&1 \
  || ! cargo fmt --check --manifest-path crates/tls-openssl40/Cargo.toml >/dev/null 2>&1; then
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
# The architecture's size limits (ARCHITECTURE.md): no file over 1,000 lines, no function over
# 150, main.rs under 500, outside our own cryptographic code.
if ! python3 scripts/sizes.py >"$log.sizes" 2>&1; then
  cat "$log.sizes" >&2
  echo "test result: FAILED. 0 passed; 1 failed (scripts/sizes.py: a file or function over the limits)" | tee -a "$log"
  [[ $status -eq 0 ]] && status=1
fi
rm -f "$log.sizes"
set -e
# One closing line with the totals over every test binary (cargo prints one per binary,
# the last often being an empty doc-test run). Skipped: Python's skipped tests (reported as
# `ignored` above) and the tests that recorded a skip (they returned early, so libtest
# counted them as passed: they move from passed to skipped), each listed with why.
# libtest's #[ignore] tests are opt-in long runs (1 GiB inputs), not skips: named apart.
if [[ -s $skips ]]; then
  printf '\033[1m==> %s\033[0m\n' "skipped tests, and why" >&2
  sed 's/^/skipped: /' "$skips" >&2
fi
awk -v recorded="$(grep -c . "$skips")" \
    '/^Ran [0-9]+ tests?/ { py = 1 }
     /^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i
                                                    if ($(i+1) ~ /^ignored/) { if (py) k += $i; else opt += $i } }
                       py = 0 }
     END { if (opt) printf "(%d opt-in #[ignore] tests not run: cargo test --release -- --ignored)\n", opt
           printf "tests: %d passed, %d failed, %d skipped\n", p - recorded, f, k + recorded }' "$log"
exit "$status"
