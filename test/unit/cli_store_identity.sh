#!/bin/sh
# `numaplace store` outside the epilog (no SLURM_JOB_UID) against an sacct that fails: the error
# names sacct's own failure, once. (It was once formatted into itself: the lead repeated and
# sacct's words lost.)
#   cli_store_identity.sh NUMAPLACE
set -eu
numaplace=$1
# store is root's (the epilog's): another user is refused before sacct is asked
[ "$(id -u)" -eq 0 ] || { echo "skip: numaplace store runs as root only"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/sacct" <<'SH'
#!/bin/sh
echo "sacct: error: cannot reach slurmdbd" >&2
exit 1
SH
chmod +x "$dir/sacct"
status=0
env -u SLURM_JOB_UID -u SLURM_JOB_ID PATH="$dir:$PATH" "$numaplace" store 12 >"$dir/out" 2>&1 || status=$?
[ "$status" -ne 0 ] || { echo "FAIL: store succeeded without a user" >&2; exit 1; }
grep -q 'sacct -j 12 failed (exit 1): sacct: error: cannot reach slurmdbd' "$dir/out" ||
  { echo "FAIL: sacct's failure not named:" >&2; cat "$dir/out" >&2; exit 1; }
[ "$(grep -o "the job's user is unknown" "$dir/out" | wc -l)" -eq 1 ] ||
  { echo "FAIL: the message repeats itself:" >&2; cat "$dir/out" >&2; exit 1; }
echo "ok: store's identity error names sacct's failure once"
