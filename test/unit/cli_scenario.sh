#!/bin/sh
# `numaplace scenario` and `numaplace migrate --script` with scenario files (docs/scenarios.md),
# against a fake numaplaced that records each request and answers it after 0.3 s:
#   - scenario: the summary, --jobs and --runs lines, refused files and usage (exit 1 and 2);
#   - migrate --script FILE.json: every request in order, --order on each (none: the helper's),
#     --dry-run on each, each request delay_s after the previous answer; from stdin too;
#   - --clock fixed: each request at the sum of the delays from the start, late ones said late;
#   - the line format still works, a line's ORDER winning over --order.
#   cli_scenario.sh NUMAPLACE FIXTURES
set -eu
numaplace=$1 fixtures=$2
dir=$(mktemp -d) helper=
trap '[ -z "$helper" ] || kill "$helper" 2>/dev/null || true; rm -rf "$dir"' EXIT
export NUMAPLACE_SOCKET="$dir/helper.sock"

python3 - "$NUMAPLACE_SOCKET" "$dir/requests.jsonl" <<'PY' &
import json, os, socket, sys, time
path, log = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(8)
while True:
    conn, _ = server.accept()
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    req = json.loads(data)
    arrived = time.monotonic()
    time.sleep(2.5 if req.get("pages") == 777 else 0.3)
    result = {"summary": f"fake move {req['from']} -> {req['to']}", "jobs": []}
    if req.get("pages") == 666:  # a reply without the members numaplaced always sends
        result = {"jobs": [{"job": 7}]}
    answered = time.monotonic()
    conn.sendall((json.dumps({"v": 1, "ok": True, "result": result}) + "\n").encode())
    conn.close()
    with open(log, "a") as f:
        f.write(json.dumps({"req": req, "arrived": arrived, "answered": answered}) + "\n")
PY
helper=$!
i=0
while [ ! -S "$NUMAPLACE_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

fail() { echo "cli_scenario: $*" >&2; exit 1; }
# expect_fail RC PATTERN ARGS...: `numaplace ARGS` exits RC with PATTERN on stderr.
expect_fail() {
  want=$1 pattern=$2
  shift 2
  rc=0
  "$numaplace" "$@" 2>"$dir/err" </dev/null || rc=$?
  [ "$rc" = "$want" ] || fail "numaplace $*: exit $rc, expected $want: $(cat "$dir/err")"
  grep -q -- "$pattern" "$dir/err" || fail "numaplace $*: no '$pattern' in: $(cat "$dir/err")"
}
valid=$fixtures/data/scenarios/valid/full.json

# --- numaplace scenario ---
"$numaplace" scenario "$valid" | grep -q '^scenario full-set_1.a: 4 node(s), 2 job(s) as written, 3 instance(s)$' ||
  fail "summary"
printf '0\t505.mcf_r\t0\t0\tlow\t1\n1\t505.mcf_r\t0\t0\tlow\t1\n2\t502.gcc_r\t2\t3\thigh\t8\n' >"$dir/jobs.want"
"$numaplace" scenario --jobs "$valid" >"$dir/jobs.got"
cmp "$dir/jobs.want" "$dir/jobs.got" || fail "--jobs"
printf 'best\nrandom\nrandom\nworst-plus\n' >"$dir/runs.want"
"$numaplace" scenario --runs - <"$valid" >"$dir/runs.got"
cmp "$dir/runs.want" "$dir/runs.got" || fail "--runs from stdin"
bad=$fixtures/data/scenarios/invalid/job-node-range.json
expect_fail 1 "job-node-range.json: jobs\[1\].node: 4 is out of range: accepted values are 0 to 3" \
  scenario "$bad"
expect_fail 2 "needs a FILE" scenario
expect_fail 2 'unexpected "--bogus" (accepted: --jobs, --runs)' scenario --bogus "$valid"
expect_fail 2 "operands: FILE" scenario "$valid" "$valid"
expect_fail 2 "--jobs and --runs: one view at a time" scenario --jobs --runs "$valid"

# --- migrate --script with a scenario: order, dry run, delays after each answer ---
cat >"$dir/set.json" <<'EOF'
{"numaplace_scenario": 1, "name": "timed", "nodes": 3,
 "jobs": [{"benchmark": "x", "node": 0}],
 "requests": [{"delay_s": 0, "from": 0, "to": 1, "pages": 100},
              {"delay_s": 0.5, "from": 1, "to": 2, "pages": 200},
              {"delay_s": 0.2, "from": 2, "to": 0, "pages": 300}],
 "runs": ["best"]}
EOF
check_run() { # EXPECTED_ORDER EXPECTED_DRY_RUN: the three requests of set.json, as sent
  python3 - "$dir/requests.jsonl" "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
order, dry = sys.argv[2], sys.argv[3] == "true"
want = [(0, 1, 100, 0), (1, 2, 200, 0.5), (2, 0, 300, 0.2)]
assert len(rows) == 3, f"{len(rows)} requests"
for i, (row, (src, dst, pages, delay)) in enumerate(zip(rows, want)):
    r = row["req"]
    assert (r["op"], r["from"], r["to"], r["pages"]) == ("migrate", src, dst, pages), r
    assert r.get("order", "") == order, f"request {i}: order {r.get('order')!r}, want {order!r}"
    assert r.get("dry_run", False) == dry, f"request {i}: dry_run {r.get('dry_run')}"
    if i:
        gap = row["arrived"] - rows[i - 1]["answered"]
        assert gap >= delay - 0.01, f"request {i} came {gap:.3f} s after the answer, want {delay}"
PY
}
"$numaplace" migrate --script "$dir/set.json" --order worst >"$dir/out"
grep -q '^scenario timed: 3 request(s), order worst$' "$dir/out" || fail "header: $(cat "$dir/out")"
[ "$(grep -c '^\[timed requests\[[0-2]\]\] fake move' "$dir/out")" = 3 ] || fail "answers: $(cat "$dir/out")"
check_run worst false || fail "scenario with --order worst"
rm "$dir/requests.jsonl"
"$numaplace" migrate --dry-run --script - <"$dir/set.json" >/dev/null
check_run "" true || fail "scenario from stdin, dry run, the helper's order"
rm "$dir/requests.jsonl"

# --- --clock fixed: request i at the sum of the delays; an answer that outlasts a delay makes the
# next request late (said so), never later still by another delay. The first answer takes 2.5 s,
# so requests 1 and 2 (due at 0.5 and 1 s) are late on a machine of any speed. ---
printf '0 0 1 777\n0.5 1 2 200\n0.5 2 0 300\n' >"$dir/fixed.txt"
"$numaplace" migrate --script "$dir/fixed.txt" --clock fixed >"$dir/out"
grep -qE '^\[.*fixed.txt:2\] \(late by [0-9]+\.[0-9] s\) fake move 1 -> 2' "$dir/out" || fail "fixed clock, late: $(cat "$dir/out")"
python3 - "$dir/requests.jsonl" <<'PY' || fail "fixed clock"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 3, rows
# Late requests go at once: not another delay after the answer (after-reply waits 0.5 s).
for i in (1, 2):
    gap = rows[i]["arrived"] - rows[i - 1]["answered"]
    assert gap < 0.45, f"request {i} waited {gap:.3f} s after the previous answer"
PY
rm "$dir/requests.jsonl"
"$numaplace" migrate --script "$dir/fixed.txt" >"$dir/out"
! grep -q 'late by' "$dir/out" || fail "after-reply said late: $(cat "$dir/out")"
check_gaps() { # each request at least its 0.5 s delay after the previous answer
  python3 - "$dir/requests.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(rows[i]["arrived"] - rows[i - 1]["answered"] >= 0.49 for i in (1, 2)), rows
PY
}
check_gaps || fail "after-reply pacing"
rm "$dir/requests.jsonl"
expect_fail 2 'clock "wall": accepted: after-reply, fixed' migrate --script "$dir/fixed.txt" --clock wall
expect_fail 2 "clock paces a --script" migrate --from 0 --to 1 --pages 1 --clock fixed

# --- the line format keeps working; a line's ORDER wins over --order ---
printf '# comment\n\n0 0 1 100\n0.5 1 2 200 random\n0.2 2 0 300\n' >"$dir/lines.txt"
"$numaplace" migrate --script "$dir/lines.txt" --order best >"$dir/out"
grep -q '^\[.*lines.txt:3\] fake move 0 -> 1' "$dir/out" || fail "line numbers: $(cat "$dir/out")"
python3 - "$dir/requests.jsonl" <<'PY' || fail "line format"
import json, sys
orders = [json.loads(l)["req"].get("order") for l in open(sys.argv[1])]
assert orders == ["best", "random", "best"], orders
PY
rm "$dir/requests.jsonl"

# --- refused before anything is sent ---
expect_fail 2 "unknown migration order 'fastest': accepted values are best-plus" \
  migrate --script "$dir/set.json" --order fastest
expect_fail 1 "jobs\[1\].node" migrate --script "$bad"
printf '86401 0 1 100\n' >"$dir/long.txt"
expect_fail 1 "DELAY_S from 0 to 86400" migrate --script "$dir/long.txt"
# a bad line anywhere stops the line format before its first request (numaplace(1))
bad_line() { # PATTERN LINE: LINE after a good one is refused with PATTERN naming line 3
  printf '# good, then bad\n0 0 1 100\n%s\n' "$2" >"$dir/bad.txt"
  expect_fail 1 "bad.txt:3: $1" migrate --script "$dir/bad.txt"
}
bad_line 'PAGES "100abc" is not a number from 0 to 9223372036854775807' '0 0 1 100abc'
bad_line 'PAGES "1.5" is not a number' '0 0 1 1.5'
bad_line 'FROM "-1" is not a number from 0 to 4095' '0 -1 1 100'
bad_line 'TO "-4294967295" is not a number' '0 0 -4294967295 100'
bad_line 'PAGES "-5" is not a number' '0 0 1 -5'
bad_line "ORDER: unknown migration order 'fastest': accepted values are best-plus" '0 0 1 100 fastest'
bad_line 'expected "DELAY_S FROM TO PAGES \[ORDER\]"' '0 0 1'
bad_line 'expected "DELAY_S FROM TO PAGES' 'nan 0 1 100'
bad_line 'longer than 510 bytes' "0 0 1 100 best $(printf '%0600d' 0)"
expect_fail 1 "$dir: not a regular file" migrate --script "$dir" # was exit 0, nothing sent
mkfifo "$dir/fifo" # no writer: fopen waited for one for ever
rc=0
timeout 10 "$numaplace" migrate --script "$dir/fifo" 2>"$dir/err" || rc=$?
if [ "$rc" != 1 ] || ! grep -q "fifo: not a regular file (- reads standard input" "$dir/err"; then
  fail "migrate --script FIFO: exit $rc: $(cat "$dir/err")"
fi
[ ! -e "$dir/requests.jsonl" ] || fail "a refused script sent requests"

# --- a reply without a summary or a job's class: "-" in their place (it crashed in puts) ---
"$numaplace" migrate --from 0 --to 1 --pages 666 >"$dir/out" 2>&1 || fail "migrate: $(cat "$dir/out")"
if ! grep -qx -- '-' "$dir/out" || ! grep -q '^  job 7\..* (-): planned 0, moved 0' "$dir/out"; then
  fail "migrate, reply without members: $(cat "$dir/out")"
fi
echo "cli_scenario: ok"
