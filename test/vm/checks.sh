# shellcheck shell=bash
# Sourced by the guest case scripts: check NAME EXPECTED ACTUAL counts a case, and checks_end
# prints the tally and returns its verdict. CHECK_PREFIX (default "") starts every line.
failed=0
passed=0
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    passed=$((passed + 1)); echo "PASS ${CHECK_PREFIX:-}$1"
  else
    failed=$((failed + 1)); printf 'FAIL %s%s:\n  expected: %s\n  got:      %s\n' "${CHECK_PREFIX:-}" "$1" "$2" "$3"
  fi
}
checks_end() {
  echo "${CHECK_PREFIX:-}$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
