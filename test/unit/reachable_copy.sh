#!/bin/bash
# scripts/reachable-checkout.sh: a checkout other users cannot read runs from a readable copy,
# and that copy (sources and build trees) is removed when the command ends, but for output/.
#   reachable_copy.sh REACHABLE_CHECKOUT_SH
set -eu
lib=$1
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: needs root (the copy is judged by what user nobody can read)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 0700 "$dir"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# checkout KEEP: a fake checkout under the 0700 directory whose command builds a large tree, and
# keeps its log in output/ when KEEP is 1; it exits 3.
checkout() {
  rm -rf "$dir/p" && mkdir -p "$dir/p/scripts" && touch "$dir/p/CMakeLists.txt"
  cat >"$dir/p/scripts/job" <<JOB
#!/bin/bash
pwd >"\$NUMAPLACE_TEST_WHERE"
mkdir -p build-demo _install
head -c 1048576 /dev/zero >build-demo/big
if [ "$1" = 1 ]; then mkdir -p output && echo log >output/job.log; fi
exit 3
JOB
}

# run: the fake command through the library, as test/run-all and scripts/main-job call it; sets
# rc and copy (the copy's path as the library printed it).
run() {
  local out
  rc=0
  # Not as a copy already: test/run-all, itself run from a copy, exports the variable.
  # shellcheck disable=SC2016 # expanded by the inner shell
  out=$(env -u NUMAPLACE_REACHABLE_COPY_OF NUMAPLACE_TEST_WHERE="$dir/where" bash -c \
    'source "$1"; np_run_from_reachable_checkout "$2" scripts/job; echo "returned: not copied"' \
    _ "$lib" "$dir/p") || rc=$?
  printf '%s\n' "$out" | sed 's/^/  | /'
  copy=$(printf '%s\n' "$out" | sed -n 's/^numaplace: readable by every user: \([^ ]*\) .*/\1/p')
}

checkout 1
run
[ "$rc" = 3 ] || fail "the command's status is not passed on (got $rc, wanted 3)"
[ -n "$copy" ] || fail "no copy was made of a checkout under a 0700 directory"
[ "$(cat "$dir/where" 2>/dev/null)" = "$copy" ] || fail "the command did not run in the copy"
[ -f "$copy/output/job.log" ] || fail "the copy's output/ was not kept"
left=$(find "$copy" -mindepth 1 -maxdepth 1 ! -name output)
[ -z "$left" ] || fail "the copy keeps more than output/: $left"
[ -z "$copy" ] || rm -rf "$(dirname "$copy")"

checkout 0
run
if [ -z "$copy" ] || [ -e "$(dirname "$copy")" ]; then fail "a copy with nothing kept is left: $copy"; fi

# A readable checkout runs in place.
chmod 0755 "$dir"
run
if [ "$rc" != 0 ] || [ -n "$copy" ]; then fail "a readable checkout was copied (rc $rc, copy '$copy')"; fi

[ "$failed" = 0 ] && echo "PASS reachable copy"
exit "$failed"
