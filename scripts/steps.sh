# Sourced by scripts/test.sh, scripts/setup.sh and scripts/fuzz.sh: steps that say how long
# they took.
#
#   step NAME COMMAND [ARG...]   runs COMMAND and returns its status; with
#                                $CRYPTOSCOPE_STEP_TIMES set, appends to that file a line
#                                "NAME<TAB>-<TAB>-" as it starts and
#                                "NAME<TAB>seconds<TAB>exit status" as it ends
#   steps_table FILE             prints FILE as a table, each step where it started
#
# A NAME that starts with two spaces is a part of the step that holds it (a build of setup,
# a test binary of the test run): the table indents it and leaves it out of the total.

step() {
  local name=$1 t0 rc=0
  shift
  [[ -n "${CRYPTOSCOPE_STEP_TIMES:-}" ]] && printf '%s\t-\t-\n' "$name" >>"$CRYPTOSCOPE_STEP_TIMES"
  t0=${EPOCHREALTIME/[.,]/}
  "$@" || rc=$?
  if [[ -n "${CRYPTOSCOPE_STEP_TIMES:-}" ]]; then
    local us=$((${EPOCHREALTIME/[.,]/} - t0))
    printf '%s\t%d.%d\t%d\n' "$name" $((us / 1000000)) $((us % 1000000 / 100000)) "$rc" >>"$CRYPTOSCOPE_STEP_TIMES"
  fi
  return $rc
}

steps_table() {
  [[ -s "$1" ]] || return 0
  awk -F '\t' '
    !($1 in at) { at[$1] = ++n; name[n] = $1; if (length($1) > w) w = length($1) }
    $2 != "-" { i = at[$1]; secs[i] = $2; rc[i] = $3; done[i] = 1 }
    END {
      printf "%-*s %8s  %s\n", w, "step", "s", "status"
      for (i = 1; i <= n; i++) {
        if (!done[i]) { printf "%-*s %8s  %s\n", w, name[i], "-", "did not end"; continue }
        printf "%-*s %8.1f  %s\n", w, name[i], secs[i], rc[i] == 0 ? "ok" : "FAILED (exit " rc[i] ")"
        if (name[i] !~ /^  /) total += secs[i]
      }
      printf "%-*s %8.1f\n", w, "total", total
    }' "$1"
}
