#!/usr/bin/env bash
# cryptoscope on a Slurm cluster: one run split into a job array of shards that store into
# one PostgreSQL database under one run group, and a last job that writes the group's report
# and says which shards are missing or failed.
#
#   scripts/slurm.sh submit --shards 8 --db service=team -- --suite kem,sig
#   scripts/slurm.sh resume slurm/NAME 3      # shard 3 died: run it again, keeping what it stored
#   scripts/slurm.sh status slurm/NAME
#
# Every shard is `cryptoscope run --shard K/N --group NAME` with K, N and NAME written into
# the job, never read from Slurm: a resubmitted task is a new job (a new job id, a task count
# of 1), and a task Slurm requeues after a node failure runs the same command again. Either
# way the group already holds the shard, so cryptoscope continues its run: what it stored is
# kept, the rest is measured, nothing is measured twice.

# BIN, DB, GROUP, SHARDS, DIR, EXCLUSIVE, SBATCH_OPTS and RUN_ARGS come from an array's settings.
# shellcheck disable=SC2153
set -euo pipefail

die() {
  echo "error: $*" >&2
  exit 2
}

usage() {
  cat <<'EOF'
Usage:
  scripts/slurm.sh submit [OPTIONS] [-- RUN-ARGS...]
  scripts/slurm.sh resume DIR K [K...]
  scripts/slurm.sh status DIR

submit: build once (unless --bin), submit an array of N shards of
`cryptoscope run RUN-ARGS` (default RUN-ARGS: the default suite) and a report job that
runs when every task has ended (afterany), whatever their end.
  --shards N      array tasks, one shard each (default 4)
  --db DB         the PostgreSQL server every task stores into, as libpq names one
                  (default: $CRYPTOSCOPE_DB); passwords belong in ~/.pgpass, never here
  --group NAME    the run group (default: slurm-UTC_TIME-PID)
  --dir DIR       where job scripts, logs, results files and the report go; on a
                  file system every node sees (default: slurm/NAME)
  --bin PATH      cryptoscope, already built, on a shared path (default: build it with
                  cargo into $CARGO_TARGET_DIR or target/, which must be shared)
  --shared        let shards share nodes (default: --exclusive, since timing shards on
                  one node disturb each other)
  --sbatch OPTS   more sbatch options for every job, e.g. "--partition=bench --time=2:00:00"

resume: submit shard K of the array in DIR again, as a job of its own with K, N and the
group written in. Refused while shard K is still queued or running. The report job waits
for it: a pending one has its dependency extended, else a new report job is submitted.

status: what the group holds (`cryptoscope group`), and the array's jobs in the queue.
EOF
}

# The job id of `sbatch --parsable` ("ID" or "ID;CLUSTER").
job_id() { echo "${1%%;*}"; }

# The state of a job in the queue (PENDING, RUNNING, ...), or nothing once it has left it.
queued() { squeue -h -j "$1" -o %T 2>/dev/null | head -1 || true; }

submit() {
  local shards=4 db=${CRYPTOSCOPE_DB:-} group="" dir="" bin="" exclusive=--exclusive sbatch_opts=""
  while [ $# -gt 0 ]; do
    case $1 in
      --shards) shards=${2:?--shards needs N}; shift 2 ;;
      --db) db=${2:?--db needs a server}; shift 2 ;;
      --group) group=${2:?--group needs a name}; shift 2 ;;
      --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
      --bin) bin=${2:?--bin needs a path}; shift 2 ;;
      --shared) exclusive=""; shift ;;
      --sbatch) sbatch_opts=${2:?--sbatch needs options}; shift 2 ;;
      --) shift; break ;;
      -h | --help) usage; exit 0 ;;
      *) die "submit: unknown option $1 (run arguments go after --)" ;;
    esac
  done
  local run_args=("$@") a
  [[ $shards =~ ^[1-9][0-9]*$ ]] || die "--shards $shards: give a whole number of at least 1"
  for a in "${run_args[@]}"; do
    case ${a%%=*} in
      --shard | --group | --db | --json | --resume | --name)
        die "$a is the script's to set (every task gets --shard K/N --group --db --json); drop it" ;;
    esac
  done
  [ -n "$db" ] || die "no database: give --db (a PostgreSQL server every node reaches) or set CRYPTOSCOPE_DB"
  case $db in
    *password=* | postgres*://*:*@*) die "--db holds a password, which would be written into the job scripts: put it in ~/.pgpass" ;;
  esac
  group=${group:-slurm-$(date -u +%Y%m%dT%H%M%SZ)-$$}
  dir=${dir:-slurm/$group}
  [ -e "$dir/settings" ] && die "$dir already holds an array ($dir/settings): resume it, or choose another --dir"
  command -v sbatch >/dev/null || die "sbatch not found: run this where Slurm's commands are"
  if [ -z "$bin" ]; then
    echo "building cryptoscope once (cargo build --release --workspace --locked)" >&2
    cargo build --release --workspace --locked >&2
    bin=${CARGO_TARGET_DIR:-$PWD/target}/release/cryptoscope
  fi
  [ -x "$bin" ] || die "--bin $bin: not an executable"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  # The database answers, and the group is new: checked before anything is submitted.
  "$bin" runs --db "$db" >/dev/null || exit 2 # its one-line error says why
  if "$bin" group "$group" --db "$db" >/dev/null 2>&1 || [ $? -eq 1 ]; then
    die "group $group already holds runs: choose another --group (or resume its array)"
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  {
    printf 'BIN=%q\nDB=%q\nGROUP=%q\nSHARDS=%q\nDIR=%q\nEXCLUSIVE=%q\nSBATCH_OPTS=%q\n' \
      "$bin" "$db" "$group" "$shards" "$dir" "$exclusive" "$sbatch_opts"
    printf 'RUN_ARGS=('
    printf '%q ' "${run_args[@]}"
    printf ')\n'
  } >"$dir/settings"
  # One shard: K from the array, or from CRYPTOSCOPE_SHARD when resubmitted alone.
  cat >"$dir/shard.sbatch" <<EOF
#!/usr/bin/env bash
set -euo pipefail
source $(printf %q "$dir/settings")
k=\${CRYPTOSCOPE_SHARD:-\${SLURM_ARRAY_TASK_ID:?not an array task: set CRYPTOSCOPE_SHARD}}
echo "shard \$k/\$SHARDS of group \$GROUP on \$(hostname) (job \${SLURM_JOB_ID:-?})"
exec "\$BIN" run --quiet --shard "\$k/\$SHARDS" --group "\$GROUP" --db "\$DB" --json "\$DIR/shard-\$k.json" "\${RUN_ARGS[@]}"
EOF
  cat >"$dir/report.sbatch" <<EOF
#!/usr/bin/env bash
source $(printf %q "$dir/settings")
rc=0
"\$BIN" report "group:\$GROUP" --db "\$DB" --out "\$DIR/report.html" || rc=\$?
"\$BIN" group "\$GROUP" --shards "\$SHARDS" --db "\$DB" | tee "\$DIR/group.txt"
# The first failure decides: the report's (2), else the group's (1: a shard is missing).
g=\${PIPESTATUS[0]}
[ "\$rc" -ne 0 ] || rc=\$g
exit \$rc
EOF
  local array report
  # shellcheck disable=SC2086 # $exclusive may be empty; $sbatch_opts holds several options
  array=$(job_id "$(sbatch --parsable --array="1-$shards" $exclusive $sbatch_opts \
    --job-name="cryptoscope-$group" --output="$dir/shard-%a.out" "$dir/shard.sbatch")")
  # shellcheck disable=SC2086
  report=$(job_id "$(sbatch --parsable --dependency="afterany:$array" --kill-on-invalid-dep=no $sbatch_opts \
    --job-name="cryptoscope-$group-report" --output="$dir/report.out" "$dir/report.sbatch")")
  printf 'array %s\nreport %s\n' "$array" "$report" >"$dir/jobs"
  echo "group $group: array $array (${shards} shards), report job $report; files in $dir"
  echo "afterwards: $dir/report.html and $dir/group.txt; a shard that died: scripts/slurm.sh resume $dir K"
}

load() {
  local dir=${1:-}
  [ -n "$dir" ] || die "give the array's directory (the --dir of submit)"
  [ -f "$dir/settings" ] || die "$dir holds no array (no $dir/settings)"
  # shellcheck disable=SC1091
  source "$dir/settings"
}

resume() {
  [ $# -ge 2 ] || die "resume needs the array's directory and at least one shard: resume DIR K [K...]"
  load "$1"
  shift
  local array report k j s jobs=()
  array=$(awk '$1 == "array" { print $2 }' "$DIR/jobs")
  report=$(awk '$1 == "report" { r = $2 } END { print r }' "$DIR/jobs")
  for k in "$@"; do
    if ! [[ $k =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$SHARDS" ]; then
      die "shard $k is out of range: the array has shards 1 to $SHARDS"
    fi
    for j in "${array}_$k" $(awk -v k="$k" '$1 == "shard" && $2 == k { print $3 }' "$DIR/jobs"); do
      s=$(queued "$j")
      [ -z "$s" ] || die "shard $k is still $s as job $j: scancel it first, or let it end"
    done
  done
  for k in "$@"; do
    # shellcheck disable=SC2086
    j=$(job_id "$(sbatch --parsable --export=ALL,CRYPTOSCOPE_SHARD="$k" $EXCLUSIVE $SBATCH_OPTS \
      --job-name="cryptoscope-$GROUP-$k" --output="$DIR/shard-$k-%j.out" "$DIR/shard.sbatch")")
    printf 'shard %s %s\n' "$k" "$j" >>"$DIR/jobs"
    jobs+=("$j")
    echo "shard $k/$SHARDS of group $GROUP: job $j (what it stored is kept)"
  done
  # The report waits for every shard job still to end: the array and each resubmission.
  local waiting=("$array") dep
  while read -r _ _ j; do
    [ -n "$(queued "$j")" ] && waiting+=("$j")
  done < <(awk '$1 == "shard"' "$DIR/jobs")
  dep=afterany:$(IFS=:; echo "${waiting[*]}")
  if [ "$(queued "$report")" = PENDING ] && scontrol update JobId="$report" Dependency="$dep" 2>/dev/null; then
    echo "report job $report now waits for ${waiting[*]}"
  else
    # shellcheck disable=SC2086
    report=$(job_id "$(sbatch --parsable --dependency="afterany:$(IFS=:; echo "${jobs[*]}")" --kill-on-invalid-dep=no \
      $SBATCH_OPTS --job-name="cryptoscope-$GROUP-report" --output="$DIR/report.out" "$DIR/report.sbatch")")
    printf 'report %s\n' "$report" >>"$DIR/jobs"
    echo "report job $report (new: the last one had started) waits for ${jobs[*]}"
  fi
}

status() {
  load "${1:-}"
  "$BIN" group "$GROUP" --shards "$SHARDS" --db "$DB" || true
  local ids
  ids=$(awk '$1 == "array" || $1 == "report" { print $2 } $1 == "shard" { print $3 }' "$DIR/jobs" | paste -sd,)
  squeue -j "$ids" 2>/dev/null || true
}

case ${1:-} in
  submit) shift; submit "$@" ;;
  resume) shift; resume "$@" ;;
  status) shift; status "$@" ;;
  -h | --help | help) usage ;;
  "") usage >&2; exit 2 ;;
  *) die "unknown command $1 (submit, resume or status; see scripts/slurm.sh --help)" ;;
esac
