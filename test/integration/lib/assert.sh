# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # the globals it shares are declared in lib.sh, which sources it
# numaplace test harness, part of test/integration/lib.sh (which sources it): cases and
# expectations: PASS/FAIL lines and the closing "N passed, N failed".
# The functions are listed, with their arguments, at the top of lib.sh.

# ---- cases ------------------------------------------------------------------------------
np_out=""
np_rc=0
np_current=""
np_case_open=0
np_case_failed=0
np_case_started=$SECONDS

# np_run CMD...: run and capture stdout+stderr in $np_out and the status in $np_rc.
np_run() {
  np_rc=0
  np_out=$("$@" 2>&1) || np_rc=$?
  return 0
}

# np_case NAME: open a case (close it with np_end_case).
# np_case NAME CMD...: a whole case: run CMD in this shell; it fails on any np_fail/np_expect_*
# failure, or when CMD itself exits non-zero.
np_case() {
  [ "$np_case_open" = 0 ] || np_end_case
  np_current=$1
  np_case_started=$SECONDS
  np_case_failed=0
  np_case_open=1
  np_out=""
  np_rc=0
  shift
  if [ $# -gt 0 ]; then
    local rc=0
    "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$np_case_failed" = 1 ] || np_fail "'$*' exited with status $rc"
    np_end_case
  fi
}

np_fail() {
  if [ "$np_case_failed" = 0 ]; then
    printf 'FAIL %s (%d s): %s\n' "$np_current" $((SECONDS - np_case_started)) "$*"
    [ -z "$np_out" ] || printf '  output was:\n%s\n' "$(printf '%s\n' "$np_out" | tail -20 | sed 's/^/    /')"
    # A slurmdbd that went away explains most accounting failures: say so, with its last words.
    if [ -n "${np_dbd_pid:-}" ] && ! kill -0 "$np_dbd_pid" 2>/dev/null; then
      printf '  slurmdbd (pid %s) is not running; its log ends:\n%s\n' "$np_dbd_pid" \
        "$(tail -15 "$np_dir/slurmdbd.log" 2>/dev/null | sed 's/^/    /')"
    fi
  else
    printf '  and: %s\n' "$*"
  fi
  np_case_failed=1
  return 0
}

np_expect_rc() {
  [ "$np_rc" = "$1" ] || np_fail "exit status $np_rc, expected $1"
}

# shellcheck disable=SC2120 # CMD is optional
np_expect_fail() { # np_expect_fail [CMD...]: CMD (or the last np_run) failed
  [ $# = 0 ] || np_run "$@"
  [ "$np_rc" != 0 ] || np_fail "${*:-the command} succeeded, expected a failure"
}

np_expect_match() { # np_expect_match REGEX [TEXT]
  local text=${2-$np_out}
  grep -qE -- "$1" <<<"$text" || np_fail "no line matches /$1/"
}

np_expect_no_match() {
  local text=${2-$np_out}
  ! grep -qE -- "$1" <<<"$text" || np_fail "a line matches /$1/"
}

np_expect_eq() { # np_expect_eq ACTUAL EXPECTED [WHAT]
  [ "$1" = "$2" ] || np_fail "${3:-value}: got '$1', expected '$2'"
}

np_end_case() {
  [ "$np_case_open" = 1 ] || return 0
  np_case_open=0
  if [ "$np_case_failed" = 0 ]; then
    np_passed=$((np_passed + 1))
    # The time says where a slow or stuck suite spends it (CI shows only this output).
    printf 'PASS %s (%d s)\n' "$np_current" $((SECONDS - np_case_started))
  else
    np_failed=$((np_failed + 1))
  fi
}

np_finish() {
  np_end_case
  if [ $((np_passed + np_failed)) = 0 ]; then
    echo "!!!! no case ran" >&2
    np_failed=1
  fi
  printf '%d passed, %d failed\n' "$np_passed" "$np_failed"
  [ "$np_failed" = 0 ]
}
