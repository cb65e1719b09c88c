#!/usr/bin/env bash
# Independent cross-check of the memory pass, with third-party tools and none of our
# counting code, over a worker looping over one operation with heap markers around the
# loop (`loop --marker`: a 777,777-byte block allocated and freed just before the loop, an
# 888,888-byte one just after it; one warm-up call before the first marker):
#   heap  - heaptrack records every allocation and free in order; the peak of live bytes
#           between the markers, minus the live bytes at the first marker, is the
#           operation's peak heap (exact).
#   stack - valgrind massif --stacks=yes: the largest stack size among its snapshots in
#           the marked window, minus the stack size at the first marker. Massif samples the
#           stack only at its snapshots (at most 1,000 per process), so this is a lower
#           bound, and it needs the window to keep snapshots (-- n/a otherwise).
# Then the same subject through `cryptoscope memory`, side by side.
#
#   bash scripts/memcheck.sh [SUBJECT] [OPERATION] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
subject=${1:-X25519/openssl/default}
op=${2:-exchange}
iterations=${3:-1}
T=${CARGO_TARGET_DIR:-target}/release
provider=$(cut -d/ -f2 <<<"$subject" | tr -d -)
worker="$T/cryptoscope-worker-$provider"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
loop=("$worker" loop --subject "$subject" --op "$op" --iterations "$iterations" --marker)

heaptrack -o "$out/ht" "${loop[@]}" >/dev/null 2>"$out/heaptrack.log"
valgrind --tool=massif --stacks=yes --time-unit=B --max-snapshots=1000 --depth=1 \
  --massif-out-file="$out/massif.out" "${loop[@]}" >/dev/null 2>"$out/valgrind.log"

alg=${subject%%/*}; prov=$(cut -d/ -f2 <<<"$subject"); impl=${subject##*/}
CRYPTOSCOPE_DB="$out/r.db" "$T/cryptoscope" memory --quiet --alg "$alg" --provider "$prov" --impl "$impl" \
  --json "$out/ours.json" >/dev/null

zstd -dcq "$out"/ht.zst 2>/dev/null >"$out/ht.txt" || gzip -dc "$out"/ht.gz >"$out/ht.txt"
python3 - "$out/ht.txt" "$out/massif.out" "$out/ours.json" "$subject" "$op" <<'EOF'
import json, re, sys
trace, massif, ours, subject, op = sys.argv[1:]
BEFORE, AFTER = 777_777, 888_888

# heaptrack: "a SIZE TRACE" defines allocation info i (in order); "+ i" / "- i" allocate
# and free a block of that info (hex numbers).
sizes, live, state, base, peak = [], 0, "before", 0, 0
for line in open(trace):
    kind, _, rest = line.partition(" ")
    if kind == "a":
        sizes.append(int(rest.split()[0], 16))
    elif kind in "+-" and kind:
        n = sizes[int(rest, 16)]
        live += n if kind == "+" else -n
        if state == "before" and kind == "+" and n == BEFORE:
            state = "marked"
        elif state == "marked" and kind == "-" and n == BEFORE:
            state, base, peak = "window", live, live
        elif state == "window" and kind == "+" and n == AFTER:
            state = "done"
            break
        elif state == "window":
            peak = max(peak, live)
heap = peak - base if state == "done" else None

# massif: snapshots of (heap, stack); find the markers by their steps in the heap.
snaps = []
for block in open(massif).read().split("snapshot=")[1:]:
    f = dict(re.findall(r"^(mem_heap_B|mem_stacks_B)=(\d+)", block, re.M))
    snaps.append((int(f["mem_heap_B"]), int(f["mem_stacks_B"])))
# Massif thins its snapshots (at most 1,000), so a marker shows as a jump of roughly its
# size: 700,000-850,000 bytes is the first marker, more is the second.
def step(lo, hi, sign, start):
    return next((i for i in range(max(start, 1), len(snaps)) if lo <= sign * (snaps[i][0] - snaps[i - 1][0]) < hi), None)
stack, kept = None, 0
alloc = step(700_000, 850_000, 1, 1)
freed = alloc and step(700_000, 850_000, -1, alloc + 1)  # massif repeats a snapshot at a peak
end = freed and step(850_000, 10**9, 1, freed + 1)
if end:
    window = snaps[freed:end]
    kept = len(window)
    if kept >= 5:  # fewer snapshots say nothing about the stack
        stack = max(s for _, s in window) - snaps[alloc][1]

row = next(r for r in json.load(open(ours))["results"] if r["operation"] == op)
fmt = lambda v: "n/a" if v is None else f"{v:,} B"
print(f"{subject} {op}: heap peak heaptrack {fmt(heap)}, cryptoscope {fmt(row['heap_peak_bytes'])}; "
      f"stack massif {fmt(stack)} ({kept} snapshots in the window), cryptoscope {fmt(row['stack_bytes'])}")
EOF
