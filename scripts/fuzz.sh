#!/usr/bin/env bash
# Fuzzes cryptoscope's parsers: the libFuzzer targets in fuzz/ (a cargo workspace of its
# own, see docs/fuzzing.md), built by cargo-fuzz with the stable toolchain
# (RUSTC_BOOTSTRAP=1 admits the -Z flags cargo-fuzz passes).
#
#   scripts/fuzz.sh [TARGET...]           every target (or those named), FUZZ_SECONDS each
#   scripts/fuzz.sh --replay [TARGET...]  what CI runs: the inputs kept in the repository only
#
# For each target: replays fuzz/regressions/TARGET/* (inputs that once crashed it), then
# fuzzes for FUZZ_SECONDS seconds (default 20) from fuzz/seeds/TARGET plus the working
# corpus, one process, one job. A crash found is copied into fuzz/regressions/TARGET/
# (commit it with the fix: from then on CI replays it). With --replay, nothing is fuzzed:
# the regression inputs and the seeds are run once each, so the outcome depends only on
# the repository (no corpus left by an earlier run, no time limit). Prints per target executions, coverage (cov/ft) and
# seconds, one `FAILED` line per failing target with its reproducer, and a closing
# `test result:` line. Exits non-zero if any target crashed, hung or ran out of memory.
#
# Environment:
#   FUZZ_SECONDS      seconds per target (default 20)
#   FUZZ_SANITIZER    none (default) or address: AddressSanitizer, which also reports a
#                     single allocation over the malloc limit
#   FUZZ_TARGET_DIR   cargo target directory (default: $CARGO_TARGET_DIR, else fuzz/target)
#   FUZZ_CORPUS       working corpora, one directory per target (default fuzz/corpus);
#                     kept between runs, so coverage builds up
#   FUZZ_OUT          logs and crash artifacts (default fuzz/artifacts)
#   FUZZ_RSS_MB       memory limit per target process, MB (default 2048)
#   FUZZ_TIMEOUT      seconds one input may take before it counts as a hang (default 10;
#                     60 with AddressSanitizer, which makes a 1 GiB `Ptn` record slow)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=fuzz
if [[ "${1:-}" == "--replay" ]]; then MODE=replay; shift; fi

CARGO_FUZZ_VERSION=0.13.2
SECONDS_PER=${FUZZ_SECONDS:-20}
SANITIZER=${FUZZ_SANITIZER:-none}
TARGET_DIR=${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/fuzz/target}}
CORPUS=${FUZZ_CORPUS:-$ROOT/fuzz/corpus}
OUT=${FUZZ_OUT:-$ROOT/fuzz/artifacts}
RSS_MB=${FUZZ_RSS_MB:-2048}
if [[ $MODE == replay ]]; then SECONDS_PER=0; fi
if [[ $SANITIZER == none ]]; then TIMEOUT=${FUZZ_TIMEOUT:-10}; else TIMEOUT=${FUZZ_TIMEOUT:-60}; fi
mkdir -p "$TARGET_DIR" "$CORPUS" "$OUT"
TARGET_DIR=$(cd "$TARGET_DIR" && pwd)
CORPUS=$(cd "$CORPUS" && pwd)
OUT=$(cd "$OUT" && pwd)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# The cause of a crash in a libFuzzer log, on one line: the panic and its message, or
# libFuzzer's own error (out of memory, timeout, deadly signal).
cause() {
  local p
  p=$(grep -m1 -A1 'panicked at' "$1" | tr '\n' ' ' | sed 's/^ *//; s/ *$//' | cut -c1-300)
  [[ -n $p ]] && { echo "$p"; return; }
  grep -m1 'ERROR: libFuzzer' "$1" | sed 's/^=*[0-9]*=* *//'
}

# --- What is needed: a C++ compiler (libFuzzer is C++), cargo-fuzz at a pinned version.
if ! command -v c++ >/dev/null 2>&1; then
  say "installing g++ (libFuzzer is compiled from C++ sources)"
  apt-get update -qq && apt-get install -y -qq g++ >/dev/null
fi
if [[ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
  say "installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet || {
    echo "test result: FAILED. 0 passed; 1 failed (cannot install cargo-fuzz $CARGO_FUZZ_VERSION)"
    exit 1
  }
fi

# --- Build every target (incremental after the first time).
export RUSTC_BOOTSTRAP=1
build_start=$(date +%s)
say "building the fuzz targets (sanitizer: $SANITIZER, target dir: $TARGET_DIR)"
if ! CARGO_TARGET_DIR="$TARGET_DIR" cargo fuzz build --sanitizer "$SANITIZER" >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log" >&2
  echo "FAILED fuzz build (log: $OUT/build.log)"
  echo "test result: FAILED. 0 passed; 1 failed (the fuzz targets do not build)"
  exit 1
fi
say "built in $(($(date +%s) - build_start)) s"
BIN="$TARGET_DIR/x86_64-unknown-linux-gnu/release"

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list 2>/dev/null)
fi

passed=0
failed=0
failures=()
for t in "${targets[@]}"; do
  if [[ ! -x "$BIN/$t" ]]; then
    failures+=("FAILED fuzz $t: no such target")
    failed=$((failed + 1))
    continue
  fi
  work="$OUT/$t"
  rm -rf "$work"
  mkdir -p "$work" "$CORPUS/$t"
  # Dictionary: the target's own words, plus JSON's for the JSON formats.
  dict="$work/dict"
  case $t in
    hash_vectors | extremely_long | callgrind | secrets) cat "fuzz/dict/$t.dict" >"$dict" ;;
    validate_dir) cat fuzz/dict/json.dict fuzz/dict/vector_json.dict >"$dict" ;;
    *) cat fuzz/dict/json.dict "fuzz/dict/$t.dict" >"$dict" ;;
  esac
  flags=(-rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -timeout="$TIMEOUT" -dict="$dict"
         -artifact_prefix="$work/" -print_final_stats=1)

  # 1. Inputs that once crashed it must not any more.
  regressions=()
  if [[ -d "fuzz/regressions/$t" ]]; then
    mapfile -t regressions < <(find "fuzz/regressions/$t" -type f ! -name '*.md' | sort)
  fi
  if [[ ${#regressions[@]} -gt 0 ]]; then
    if ! (cd "$work" && "$BIN/$t" "${flags[@]}" -runs=1 "${regressions[@]/#/$ROOT/}") >"$work/regressions.log" 2>&1; then
      line=$(cause "$work/regressions.log")
      failures+=("FAILED fuzz $t: a regression input crashes it again: $line (log: $work/regressions.log)")
      failed=$((failed + 1))
      continue
    fi
  fi

  # Replay only: the seeds too, each once, and nothing else.
  if [[ $MODE == replay ]]; then
    seeds=()
    if [[ -d "fuzz/seeds/$t" ]]; then
      mapfile -t seeds < <(find "fuzz/seeds/$t" -type f | sort)
    fi
    if [[ ${#seeds[@]} -gt 0 ]] && ! (cd "$work" && "$BIN/$t" "${flags[@]}" -runs=1 "${seeds[@]/#/$ROOT/}") >"$work/seeds.log" 2>&1; then
      failures+=("FAILED fuzz $t: a seed input crashes it: $(cause "$work/seeds.log") (log: $work/seeds.log)")
      failed=$((failed + 1))
      continue
    fi
    printf 'fuzz %-15s ok: %d regression and %d seed inputs replayed\n' "$t" "${#regressions[@]}" "${#seeds[@]}"
    passed=$((passed + 1))
    continue
  fi

  # 2. Fuzz: one job, one worker (libFuzzer then writes the job's log to fuzz-0.log in
  # the current directory, and repeats it on its own output when the job ends).
  start=$(date +%s%N)
  (cd "$work" && "$BIN/$t" "${flags[@]}" -max_total_time="$SECONDS_PER" -jobs=1 -workers=1 \
      "$CORPUS/$t" "$ROOT/fuzz/seeds/$t") >"$work/run.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  log="$work/fuzz-0.log"
  [[ -f $log ]] || log="$work/run.log"
  execs=$(grep -m1 -oP 'stat::number_of_executed_units: \K[0-9]+' "$log")
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
  cov=$(grep -oP 'cov: \K[0-9]+' <<<"$last")
  ft=$(grep -oP 'ft: \K[0-9]+' <<<"$last")
  corp=$(grep -oP 'corp: \K[0-9]+' <<<"$last")
  printf 'fuzz %-15s %s: %s execs in %d.%d s, cov %s, ft %s, corpus %s\n' "$t" \
    "$([[ $rc -eq 0 ]] && echo ok || echo FAILED)" "${execs:-?}" $((ms / 1000)) $((ms % 1000 / 100)) \
    "${cov:-?}" "${ft:-?}" "${corp:-?}"
  if [[ $rc -eq 0 ]]; then
    passed=$((passed + 1))
  else
    what=$(cause "$log")
    crash=$(ls -t "$work"/{crash,leak,timeout,oom,slow-unit}-* 2>/dev/null | head -1)
    if [[ -n $crash ]]; then
      # Into the repository's regression corpus: CI replays it from the next commit on.
      mkdir -p "fuzz/regressions/$t"
      kept="fuzz/regressions/$t/found-$(date +%Y%m%d)-$(sha1sum "$crash" | cut -c1-8)"
      cp "$crash" "$kept"
      crash="$kept"
    fi
    failures+=("FAILED fuzz $t: ${what:-exit status $rc}; reproducer: ${crash:-none written} (replay: $BIN/$t ${crash:-FILE}; log: $log)")
    failed=$((failed + 1))
  fi
done

for f in "${failures[@]}"; do
  echo "$f"
done
if [[ $failed -eq 0 ]]; then
  echo "test result: ok. $passed passed; 0 failed"
else
  echo "test result: FAILED. $passed passed; $failed failed"
fi
[[ $failed -eq 0 ]]
