#!/usr/bin/env bash
# numaplace-run-scenario without Slurm (the guest suite runs it end to end, test/vm/):
#   - --report DIR: ratios to the job's Best time, eq. 6.1 per run, an order's figure the mean of
#     its runs (Random), the spread; a failed job leaves its run without a figure (exit 1);
#   - bad input is refused before anything starts (exit 2), naming the file, line or option and
#     what is accepted.
#   run_scenario.sh NUMAPLACE RUNNER
set -u
numaplace=$(realpath "$1") runner=$(realpath "$2")
export NUMAPLACE=$numaplace
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0
fail() { echo "FAIL $case: $*"; failed=$((failed + 1)); }
pass() { echo "PASS $case"; passed=$((passed + 1)); }

# ---- --report ----------------------------------------------------------------------------------
case="--report: ratios to Best, eq. 6.1, Random as the mean of its runs, the spread"
mkdir "$dir/r"
echo '{"scenario": "unit", "node": "n1", "binding": "slurm", "timing": "step"}' >"$dir/r/setup.json"
printf 'run\torder\tallocation\trequests\tanswered\tmigrate_exit\trequests_s\tjobs_end_s\n' >"$dir/r/runs-info.tsv"
{
  printf 'run\torder\tallocation\tjob\tbenchmark\tinput\tnode\tclass\texit\ttime_s\tsource\tstep_s\tsacct_s\n'
  # run order job time: Best 10 and 20; Random 1.1 x both (1.1), then 1 and 2 (sqrt 2); Worst 1.5 x.
  while read -r r o j t; do
    printf '%s\t%s\t%s\t%s\tb%s\t0\t0\tlow\t0\t%s\tstep\t%s\t-\n' "$r" "$o" "$((100 + r))" "$j" "$j" "$t" "$t"
  done <<'EOF'
1 best 0 10
1 best 1 20
2 random 0 11
2 random 1 22
3 random 0 10
3 random 1 40
4 worst 0 15
4 worst 1 30
EOF
} >"$dir/r/times.tsv"
if out=$(bash "$runner" --report "$dir/r" 2>&1); then
  expected=$(printf 'order\truns\tfigure\trun_figures\nbest\t1\t1.0000\t1.0000\nrandom\t2\t1.2571\t1.1000,1.4142\nworst\t1\t1.5000\t1.5000')
  if [ "$(cat "$dir/r/orders.tsv")" != "$expected" ]; then
    fail "orders.tsv is"$'\n'"$(cat "$dir/r/orders.tsv")"$'\n'"expected"$'\n'"$expected"
  elif [ "$(awk -F'\t' 'NR > 1 { printf "%s ", $14 }' "$dir/r/results.tsv")" != "1.0000 1.0000 1.1000 1.1000 1.0000 2.0000 1.5000 1.5000 " ]; then
    fail "ratios: $(awk -F'\t' 'NR > 1 { printf "%s ", $14 }' "$dir/r/results.tsv")"
  # "+ 0": jq 1.7 (Debian 13) prints a number as written (1.1000), jq 1.6 as a double
  elif [ "$(jq -c '[.spread.lowest, .spread.highest, .spread.ratio + 0, (.orders[1].run_figures | map(. + 0)), (.jobs | length), .node]' "$dir/r/results.json")" != '["best","worst",1.5,[1.1,1.4142],8,"n1"]' ]; then
    fail "results.json: $(jq -c '.spread, .orders' "$dir/r/results.json")"
  elif ! grep -q '^spread: worst / best = 1.5$' <<<"$out"; then
    fail "no spread line in: $out"
  else
    pass
  fi
else
  fail "exit status $?: $out"
fi

case="--report: a failed job leaves its run without a figure, exit status 1"
sed -i '$s/\t0\t30\t/\t1\t30\t/' "$dir/r/times.tsv"
out=$(bash "$runner" --report "$dir/r" 2>&1)
rc=$?
if [ "$rc" != 1 ]; then
  fail "exit status $rc: $out"
elif [ "$(awk -F'\t' '$1 == "worst" { print $3 }' "$dir/r/orders.tsv")" != - ] ||
  ! grep -Eq 'worst +runs 1 +unavailable' <<<"$out" || ! grep -q 'some jobs failed' <<<"$out"; then
  fail "output: $out"$'\n'"orders.tsv: $(cat "$dir/r/orders.tsv")"
else
  pass
fi

case="--report: no Best run, every ratio unavailable"
mkdir "$dir/nb"
cp "$dir/r/setup.json" "$dir/r/runs-info.tsv" "$dir/nb/"
awk -F'\t' '$2 != "best"' "$dir/r/times.tsv" >"$dir/nb/times.tsv"
out=$(bash "$runner" --report "$dir/nb" 2>&1)
if ! grep -q 'no Best run among the runs' <<<"$out" || ! grep -Eq 'random +runs 2 +unavailable' <<<"$out"; then
  fail "output: $out"
elif ! awk -F'\t' 'NR > 1 && $14 != "-" { bad = 1 } END { exit bad }' "$dir/nb/results.tsv"; then
  fail "ratios without a Best run: $(cat "$dir/nb/results.tsv")"
else
  pass
fi

case="--report: each order against the same block's Best run, geometric mean and 95% interval"
mkdir "$dir/p"
cp "$dir/r/setup.json" "$dir/p/"
{
  printf 'run\torder\tallocation\trequests\tanswered\tmigrate_exit\trequests_s\tjobs_end_s\tblock\n'
  for r in 1 2 3 4 5 6 7 8 9; do printf '%s\to\t1\t1\t1\t0\t1\t1\t%s\n' "$r" $(((r - 1) / 3 + 1)); done
} >"$dir/p/runs-info.tsv"
{
  printf 'run\torder\tallocation\tjob\tbenchmark\tinput\tnode\tclass\texit\ttime_s\tsource\tstep_s\tsacct_s\n'
  while read -r r o j t; do
    printf '%s\t%s\t1\t%s\tb%s\t0\t0\tlow\t0\t%s\tstep\t%s\t-\n' "$r" "$o" "$j" "$j" "$t" "$t"
  done <<'EOF'
1 worst 0 15
1 worst 1 30
2 best 0 10
2 best 1 20
3 random 0 11
3 random 1 22
4 random 0 12
4 random 1 18
5 best 0 12
5 best 1 18
6 worst 0 18
6 worst 1 27
7 best 0 10
7 best 1 20
8 worst 0 14
8 worst 1 28
9 random 0 12.1
9 random 1 24.2
EOF
} >"$dir/p/times.tsv"
# The expected figures, computed here independently: per block the geometric mean of the jobs'
# ratios to that block's Best; over blocks the geometric mean and mean(log) +- t(0.975, 2) se.
expected=$(python3 - "$dir/p/times.tsv" <<'PY'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
block = lambda run: (int(run) - 1) // 3 + 1
t = {(block(r[0]), r[1], r[3]): float(r[9]) for r in rows}
for order in ("worst", "random"):
    logs = [sum(math.log(t[(b, order, j)] / t[(b, "best", j)]) for j in "01") / 2 for b in (1, 2, 3)]
    m = sum(logs) / 3
    h = 4.303 * math.sqrt(sum((x - m) ** 2 for x in logs) / 2) / math.sqrt(3)
    print(f"{order}\t3\t{math.exp(m):.4f}\t{math.exp(m - h):.4f}\t{math.exp(m + h):.4f}")
PY
)
if ! out=$(bash "$runner" --report "$dir/p" 2>&1); then
  fail "exit status $?: $out"
elif [ "$(awk 'NR > 1 && $1 != "best"' "$dir/p/paired.tsv")" != "$expected" ]; then
  fail "paired.tsv is"$'\n'"$(cat "$dir/p/paired.tsv")"$'\n'"expected"$'\n'"$expected"
elif ! grep -Eq '^  worst +blocks 3 +1\.46[0-9]+  \[1\.[0-9]+, 1\.[0-9]+\]  slower than Best$' <<<"$out" ||
  ! grep -Eq '^  random +blocks 3 +1\.[0-9]+  \[0\.[0-9]+, 1\.[0-9]+\]  not told from Best$' <<<"$out"; then
  fail "output: $out"
elif [ "$(jq -c '[.paired[] | select(.order == "worst") | .blocks]' "$dir/p/results.json")" != '[3]' ]; then
  fail "results.json paired: $(jq -c .paired "$dir/p/results.json")"
else
  pass
fi

case="--report: without blocks no interval, and it says why; one block gives none either"
out=$(bash "$runner" --report "$dir/r" 2>&1)
mkdir "$dir/one"
cp "$dir/p/setup.json" "$dir/one/"
awk -F'\t' 'NR == 1 || $9 == 1' "$dir/p/runs-info.tsv" >"$dir/one/runs-info.tsv"
awk -F'\t' 'NR == 1 || $1 <= 3' "$dir/p/times.tsv" >"$dir/one/times.tsv"
one=$(bash "$runner" --report "$dir/one" 2>&1)
if ! grep -q '^  unavailable: the runs have no blocks' <<<"$out"; then
  fail "output: $out"
elif ! grep -Eq '^  worst +blocks 1 +1\.5000  \(interval unavailable: fewer than two blocks\)$' <<<"$one"; then
  fail "one block: $one"
  fail "output: $out"
else
  pass
fi

# ---- bad input -----------------------------------------------------------------------------------
cat >"$dir/set.json" <<'EOF'
{"numaplace_scenario": 1, "name": "unit-set", "nodes": 1,
 "jobs": [{"benchmark": "505.mcf_r", "node": 0, "copies": 2}, {"benchmark": "519.lbm_r", "node": 0}],
 "runs": ["best", "worst"]}
EOF
sed 's/"nodes": 1/"nodes": 8/; s/"519.lbm_r", "node": 0/"519.lbm_r", "node": 7/' "$dir/set.json" >"$dir/far.json"
sed 's/"node": 0, "copies"/"node": 1, "copies"/' "$dir/set.json" >"$dir/bad.json"
printf '505.mcf_r\t./mcf\n519.lbm_r\t./lbm\n' >"$dir/ok.cmds"
printf '# benchmarks\n505.mcf_r ./mcf\n' >"$dir/notab.cmds"
printf '505.mcf_r\t./mcf\n' >"$dir/missing.cmds"
printf '505.mcf_r\t./mcf\n\n505.mcf_r\t./mcf2\n' >"$dir/dup.cmds"
printf '505.mcf_r\t   \n' >"$dir/empty.cmds"
online=$(cat /sys/devices/system/node/online 2>/dev/null || echo "?")
# expect_refused WHAT REGEX ARGS...: exit status 2, the message matching REGEX, nothing written.
expect_refused() {
  local what=$1 regex=$2 out rc
  shift 2
  case="refused: $what"
  out=$(cd "$dir" && bash "$runner" --out "$dir/never" "$@" 2>&1)
  rc=$?
  if [ "$rc" != 2 ]; then
    fail "exit status $rc, expected 2: $out"
  elif ! grep -Eq -- "$regex" <<<"$out"; then
    fail "message: $out"$'\n'"  expected to match: $regex"
  elif [ -e "$dir/never" ]; then
    fail "it created its output directory"
  else
    pass
  fi
}
expect_refused "a commands line without a tab" 'notab.cmds:2: expected BENCHMARK<TAB>COMMAND or BENCHMARK:INPUT<TAB>COMMAND' \
  --commands notab.cmds set.json
expect_refused "a benchmark without a command" 'missing.cmds: no command for 519.lbm_r input 0 \(job 2 of set.json\); the file has: 505.mcf_r$' \
  --commands missing.cmds set.json
expect_refused "a benchmark given twice" 'dup.cmds:3: 505.mcf_r has a command already \(line 1\)' --commands dup.cmds set.json
expect_refused "an empty command" 'empty.cmds:1: expected BENCHMARK<TAB>COMMAND' --commands empty.cmds set.json
expect_refused "no workloads" 'no workloads: give --commands FILE .* or --stand-in PROGRAM' set.json
expect_refused "both workloads" '--commands and --stand-in exclude each other' --commands ok.cmds --stand-in /bin/true set.json
expect_refused "a stand-in that is not a program" '--stand-in /nonexistent is not an executable program' --stand-in /nonexistent set.json
expect_refused "an unknown binding" '--bind "cgroup" is not one of: auto, slurm, numactl' --bind cgroup --commands ok.cmds set.json
expect_refused "an unknown timing" '--timing "wall" is not one of: auto, sacct, step' --timing wall --commands ok.cmds set.json
expect_refused "a bad stand-in size" '--stand-in-mb "0" is not a number of MiB from 1' --stand-in-mb 0 --stand-in /bin/true set.json
expect_refused "an unknown option" 'unknown option --runs \(accepted: --partition, .*--repeat, --seed, --clock, --out, --report, --help\)' --runs best set.json
expect_refused "no blocks" '--repeat "0" is not a number of blocks from 1 to 100' --repeat 0 --commands ok.cmds set.json
expect_refused "a bad seed" '--seed "-3" is not a whole number' --seed -3 --commands ok.cmds set.json
expect_refused "an unknown request clock" '--clock "wall" is not one of: fixed, after-reply' --clock wall --commands ok.cmds set.json
expect_refused "a missing scenario" 'cannot read the scenario file nope.json' --commands ok.cmds nope.json
expect_refused "an invalid scenario (numaplace's own message)" 'jobs\[0\]\.node: 1 is out of range' --commands ok.cmds bad.json
expect_refused "a job on a NUMA node this machine lacks" "job 2 \\(519.lbm_r\\) is on NUMA node 7; this machine has nodes $online" \
  --commands ok.cmds far.json

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
