#!/usr/bin/env bash
# The test command (README's second command; `.ci/run` calls exactly this). Installs what is
# missing, builds everything once, runs every test and check, and ends with how long each
# step took and one closing line: `tests: N passed, F failed, K skipped`.
#
#   bash scripts/test.sh [--timings] [--jobs N]
#
#   --timings  cargo's own --timings report for every build (HTML, under TARGET/cargo-timings/)
#   --jobs N   how many test binaries and checks run at once (default 3, or
#              $CRYPTOSCOPE_TEST_JOBS); 1 runs them one after another, as `cargo test` does
#
# The steps, and what each is for, are in docs/testing.md ("The steps of the test command").
#
# On CI (CI=true) the cargo target directory is kept between runs (~/.cache/cryptoscope/target,
# or $CRYPTOSCOPE_CI_TARGET; an empty directory gives a cold run), and the run moves to a
# checkout kept inside it (TARGET/checkout), made to hold exactly this tree's files by
# scripts/ci-checkout.py: a file whose content did not change keeps its old time there, so
# a fresh clone of an unchanged tree compiles nothing again (a clone's files are all new to
# cargo, which goes by modification times).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
args=("$@")
timings=()
jobs=${CRYPTOSCOPE_TEST_JOBS:-3}
while (($#)); do
  case $1 in
    --timings) timings=(--timings) ;;
    --jobs) [[ $# -ge 2 ]] || { echo "error: --jobs needs a number" >&2; exit 2; }; jobs=$2; shift ;;
    --jobs=*) jobs=${1#--jobs=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1' (bash scripts/test.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "error: --jobs takes a whole number from 1, not '$jobs'" >&2; exit 2; }

# Each step's time (scripts/steps.sh); made here, or by this script before it moved (CI).
[[ -n "${CRYPTOSCOPE_STEP_TIMES:-}" ]] || { CRYPTOSCOPE_STEP_TIMES=$(mktemp -t cryptoscope-steps.XXXXXX); export CRYPTOSCOPE_STEP_TIMES; }
if [[ "${CI:-}" == "true" && -z "${CRYPTOSCOPE_CI_SOURCE:-}" ]]; then
  if [[ -z "${CARGO_TARGET_DIR:-}" ]]; then
    export CARGO_TARGET_DIR="${CRYPTOSCOPE_CI_TARGET:-$HOME/.cache/cryptoscope/target}"
  fi
  mkdir -p "$CARGO_TARGET_DIR"
  CARGO_TARGET_DIR=$(cd "$CARGO_TARGET_DIR" && pwd)
  printf '\033[1m==> %s\033[0m\n' "CI: running from $CARGO_TARGET_DIR/checkout, a copy of this tree that keeps the times of unchanged files" >&2
  step "checkout (CI: this tree into TARGET/checkout)" python3 scripts/ci-checkout.py "$PWD" "$CARGO_TARGET_DIR/checkout"
  export CRYPTOSCOPE_CI_SOURCE=$PWD
  cd "$CARGO_TARGET_DIR/checkout"
  exec bash scripts/test.sh "${args[@]}"
fi
target=${CARGO_TARGET_DIR:-$PWD/target}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
# Tests find the known-answer data here, whatever the target directory.
export CRYPTOSCOPE_VECTORS="$PWD/vectors"
# A test that cannot run records itself here (crates/testkit): counted as skipped, not passed.
skips=$(mktemp)
export CRYPTOSCOPE_TEST_SKIPS="$skips"
# The lock that tests holding `serial()` share across the test binaries running at once.
lockfile=$(mktemp)
export CRYPTOSCOPE_TEST_LOCK="$lockfile"
# The fuzz replay's scratch (empty corpus, logs): nothing from an earlier run, gone after.
fuzz_tmp=$(mktemp -d)
log=$(mktemp)
msgs=$(mktemp)
steps_file=""
[[ "$CRYPTOSCOPE_STEP_TIMES" == "${TMPDIR:-/tmp}"/cryptoscope-steps.* ]] && steps_file=$CRYPTOSCOPE_STEP_TIMES
trap 'rm -rf "$log" "$msgs" "$skips" "$lockfile" "$fuzz_tmp" $steps_file; rm -f "${TMPDIR:-/tmp}"/cryptoscope-test-*.db*' EXIT

# 1. Builds, one after another (each is a cargo build that would only wait for another's lock).
status=0
if ! step "setup (scripts/setup.sh --no-run)" bash scripts/setup.sh --no-run "${timings[@]}"; then
  echo "error: scripts/setup.sh failed (above): nothing to test" >&2
  steps_table "$CRYPTOSCOPE_STEP_TIMES" >&2
  exit 1
fi
# The cross toolchains' settings (scripts/cross.sh: linkers, runners, C compilers for
# AArch64 and s390x), set before every cargo command below, as they always were.
[[ "$(uname -m)" == x86_64 ]] && source scripts/cross.sh
say "building the tests (cargo test --release --workspace --no-run)"
if ! step "test build (cargo test --no-run)" \
  cargo test --release --workspace --locked --no-run --message-format=json-render-diagnostics "${timings[@]}" >"$msgs"; then
  echo "error: the tests do not build (above)" >&2
  steps_table "$CRYPTOSCOPE_STEP_TIMES" >&2
  exit 1
fi

# 2. Every test binary and every check, $jobs at a time (scripts/test-binaries.py). No test
# decides on the machine's speed (docs/testing.md), so running beside another makes a test
# slower, never red; tests that bind ports, start daemons or create namespaces hold one lock
# across all of them (`serial()`). The cargo commands run one after another in one slot
# (they would only wait for each other's lock on the build directory), beside the tests.
extras=()
after=()
if [[ "$(uname -m)" == x86_64 ]]; then
  # The tool off x86-64 (crates/cli/tests/cross.rs): the AArch64 `cryptoscope` and its
  # workers, and PQClean's worker for big-endian s390x, cross-compiled with Debian's
  # toolchains (scripts/cross.sh) and run under qemu-user; the test binary finds them
  # through these two variables and starts once both are built. Then our own crates' tests
  # on both: our ciphers' portable and NEON code, our SHA-3 candidates and the measurement
  # core (the generic timer, emulation detected) under qemu-aarch64; our own code on
  # big-endian s390x under qemu-s390x. Correctness only.
  export CRYPTOSCOPE_AARCH64_DIR="$target/aarch64-unknown-linux-gnu/release"
  export CRYPTOSCOPE_S390X_DIR="$target/s390x-unknown-linux-gnu/release"
  cross_tests_aarch64="cargo test --release --locked --target aarch64-unknown-linux-gnu -p cryptoscope-ciphers -p cryptoscope-sha3r2 -p cryptoscope-measure"
  cross_tests_s390x="cargo test --release --locked --target s390x-unknown-linux-gnu --lib -p cryptoscope-ciphers -p cryptoscope-sha3r2 -p cryptoscope-measure -p cryptoscope-model -p cryptoscope-catalogue -p cryptoscope-worker"
  extras+=("cargo:aarch64 build (the tool and its workers)=cargo build --release --locked --target aarch64-unknown-linux-gnu ${timings[*]} -p cryptoscope -p cryptoscope-provider-liboqs -p cryptoscope-provider-pqclean -p cryptoscope-provider-awslc -p cryptoscope-provider-rustcrypto -p cryptoscope-provider-openssl -p cryptoscope-provider-cryptoscope -p cryptoscope-provider-build"
           "cargo:s390x build (PQClean's worker)=cargo build --release --locked --target s390x-unknown-linux-gnu ${timings[*]} -p cryptoscope-provider-pqclean"
           "cargo:aarch64 tests (qemu-aarch64)=$cross_tests_aarch64"
           "cargo:s390x tests (qemu-s390x)=$cross_tests_s390x")
  after=(--after "cryptoscope tests/cross.rs=aarch64 build (the tool and its workers)"
         --after "cryptoscope tests/cross.rs=s390x build (PQClean's worker)")
fi
extras+=("cargo:doc tests=cargo test --release --workspace --locked --doc"
         "cargo:clippy=bash scripts/checks.sh clippy ${timings[*]}"
         # Each parser's libFuzzer target replays the inputs kept in the repository (every
         # crash ever found, and the seeds); nothing depends on a corpus an earlier run left.
         # Its own target directory: it builds beside the cargo commands above.
         "fuzz:fuzz replay (scripts/fuzz.sh --replay)=FUZZ_TARGET_DIR='$target/fuzz' FUZZ_CORPUS='$fuzz_tmp/corpus' FUZZ_OUT='$fuzz_tmp/out' bash scripts/fuzz.sh --replay"
         "python tests (CPython's hashlib tests and ours)=bash scripts/checks.sh python"
         "script tests (scripts/tests: this command's own scripts)=bash scripts/checks.sh scripts"
         "fmt=bash scripts/checks.sh fmt"
         "sizes (ARCHITECTURE.md's limits)=bash scripts/checks.sh sizes")
extra_args=()
for e in "${extras[@]}"; do extra_args+=(--extra "$e"); done
say "running the tests and checks, $jobs at a time"
set +e
step "tests and checks ($jobs at a time; their parts overlap)" \
  python3 scripts/test-binaries.py "$msgs" --jobs "$jobs" --times "$target/test-times.tsv" "${extra_args[@]}" "${after[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
[[ $rc -eq 0 ]] || status=1

# 3. What each step took, then one closing line with the totals over every test binary
# and check (cargo prints one per binary). Skipped: Python's skipped tests (reported as
# `ignored` above) and the tests that recorded a skip (they returned early, so libtest
# counted them as passed: they move from passed to skipped), each listed with why.
# libtest's #[ignore] tests are opt-in long runs (1 GiB inputs), not skips: named apart.
if [[ -s $skips ]]; then
  say "skipped tests, and why"
  sed 's/^/skipped: /' "$skips" >&2
fi
if ((${#timings[@]})); then
  say "cargo's timing reports: $(ls -d "$target"/cargo-timings 2>/dev/null || echo none)"
fi
say "steps (seconds of wall time)"
steps_table "$CRYPTOSCOPE_STEP_TIMES"
awk -v recorded="$(grep -c . "$skips")" \
    '/^Ran [0-9]+ tests?/ { py = 1 }
     /^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i
                                                    if ($(i+1) ~ /^ignored/) { if (py) k += $i; else opt += $i } }
                       py = 0 }
     END { if (opt) printf "(%d opt-in #[ignore] tests not run: cargo test --release -- --ignored)\n", opt
           printf "tests: %d passed, %d failed, %d skipped\n", p - recorded, f, k + recorded }' "$log"
exit "$status"
