#!/bin/bash
# numaplace-run-scenario: run a scenario file's job set on this node through Slurm, each of its
# run orders --repeat times in shuffled blocks, with the scenario's migration requests at fixed
# times, and compare each job's time with its time in the Best run of the same block, with paired
# confidence intervals (numaplace-run-scenario(1), docs/scenarios.md "On a real node").
#
#   numaplace-run-scenario [--partition P] [--nodelist NODE] [--alloc-arg ARG]...
#       (--commands FILE | --stand-in PROGRAM [--stand-in-mb N] [--stand-in-busy S] [--stand-in-idle S])
#       [--bind auto|slurm|numactl] [--timing auto|sacct|step] [--register-timeout S]
#       [--repeat N] [--seed S] [--clock fixed|after-reply] [--out DIR] SCENARIO.json
#   numaplace-run-scenario --report DIR      (the results of DIR's runs again, from its times)
#
# Blocks: each of the scenario's distinct orders once per block, in an order shuffled by --seed;
# --repeat blocks (5 by default: one run per order cannot tell an order from the noise).
# Per run: one exclusive allocation of the node (salloc --no-shell); every job instance a step
# of it (srun --overlap --whole) with its CPUs and first memory on its NUMA node (Slurm's
# --cpu-bind=map_ldom:K --mem-bind=map_mem:K, or numactl -N K -m K inside the step) and its
# class as --numa-sensitivity; once numaplaced has read every step's pages, `numaplace migrate
# --script SCENARIO.json --order ORDER`; then the jobs' times (sacct, or the step's own clock).
# The scenario is read by `numaplace scenario --jobs/--runs` only: no JSON is parsed here.
# It runs on the node itself (numaplace talks to the local numaplaced), as root or a member of
# numaplaced's admin_group. Environment: NUMAPLACE (the command, default numaplace) and
# NUMAPLACE_SOCKET (numaplaced's socket) as for numaplace(1).
set -euo pipefail
LC_NUMERIC=C # bash's own printf and EPOCHREALTIME; not exported, so the jobs keep their locale
prog="numaplace-run-scenario"
numaplace=${NUMAPLACE:-numaplace}

die() {
  printf '%s: %s\n' "$prog" "$*" >&2
  exit 2
}
warn() { printf '%s: warning: %s\n' "$prog" "$*" >&2; }

usage() {
  cat <<EOF
usage: $prog [--partition P] [--nodelist NODE] [--alloc-arg ARG]...
         (--commands FILE | --stand-in PROGRAM [--stand-in-mb N] [--stand-in-busy S] [--stand-in-idle S])
         [--bind auto|slurm|numactl] [--timing auto|sacct|step] [--register-timeout S]
         [--repeat N] [--seed S] [--clock fixed|after-reply] [--out DIR] SCENARIO.json
       $prog --report DIR
Runs the scenario's jobs on this node once per distinct run order (numaplace scenario --runs) in
each of N shuffled blocks (--repeat, 5 by default), with its migration requests (numaplace
migrate --script, at fixed times unless --clock after-reply), and reports each job's time, its
ratio to the same job in the Best run, each order's geometric mean, and each order against Best
paired by block with a 95% confidence interval (numaplace-run-scenario(1)).
EOF
}

# ---- results: ratios to Best, eq. 6.1, per order ------------------------------------------------
# tsv_json FILE: a tab-separated table with a header line as a JSON array of objects ("-" = null).
tsv_json() {
  jq -R -s 'split("\n") | map(select(length > 0) | split("\t")) | .[0] as $h | .[1:]
    | map([$h, .] | transpose | map({(.[0]): (.[1] | if . == "-" then null else (tonumber? // .) end)}) | add)' "$1"
}

# paired_results DIR: DIR/paired.tsv from DIR/times.tsv and the block of each run (the last
# column of DIR/runs-info.tsv, "block"): per order, each block's figure is the geometric mean over
# its jobs of the job's time over the same job's time in that block's Best run; the order's
# figure is the geometric mean over blocks, with a 95% interval from Student's t on the logs
# (blocks pair the runs: what drifts between blocks, a warmer machine, cancels).
paired_results() {
  local dir=$1
  awk -F'\t' -v OFS='\t' -v out="$dir/paired.tsv" '
    FNR == 1 { file++; if (file == 1) for (i = 1; i <= NF; i++) if ($i == "block") bcol = i; next }
    file == 1 { if (bcol) block[$1] = $bcol; next }
    !($1 in block) { next }
    { b = block[$1]; key = b SUBSEP $2 SUBSEP $4
      if ($9 == "0" && $10 != "-" && $10 > 0) t[key] = $10; else bad[b SUBSEP $2] = 1
      if (!(($2) in seen)) { seen[$2] = 1; olist[++norders] = $2 }
      pair[b SUBSEP $2] = 1; jobs[b SUBSEP $2] = jobs[b SUBSEP $2] " " $4 }
    END {
      # two-sided 95% quantiles of Student t, df 1..30; 1.96 beyond
      split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", tq, " ")
      print "order", "blocks", "figure", "ci_low", "ci_high" > out
      for (k = 1; k <= norders; k++) {
        o = olist[k]; n = 0; sum = 0; sq = 0
        for (p in pair) {
          split(p, bo, SUBSEP); if (bo[2] != o) continue
          b = bo[1]; if (bad[p] || bad[b SUBSEP "best"] || !((b SUBSEP "best") in pair)) continue
          m = split(jobs[p], js, " "); ls = 0; c = 0
          for (i = 1; i <= m; i++) { kb = b SUBSEP "best" SUBSEP js[i]; ko = b SUBSEP o SUBSEP js[i]
            if (!(kb in t) || !(ko in t)) { c = -1; break }
            ls += log(t[ko] / t[kb]); c++ }
          if (c <= 0) continue
          f = ls / c; n++; sum += f; sq += f * f
        }
        if (!n) { print o, 0, "-", "-", "-" > out; continue }
        mean = sum / n
        if (n < 2) { print o, n, sprintf("%.4f", exp(mean)), "-", "-" > out; continue }
        sd = sqrt((sq - n * mean * mean) / (n - 1)); if (sd < 0 || sd != sd) sd = 0
        q = (n - 1 <= 30) ? tq[n - 1] : 1.96; h = q * sd / sqrt(n)
        if (sd == 0 && o != "best") { print o, n, sprintf("%.4f", exp(mean)), "-", "-" > out; continue }
        if (o == "best") { print o, n, "1.0000", "1.0000", "1.0000" > out; continue }
        print o, n, sprintf("%.4f", exp(mean)), sprintf("%.4f", exp(mean - h)), sprintf("%.4f", exp(mean + h)) > out
      }
    }' "$dir/runs-info.tsv" "$dir/times.tsv"
}

# report_results DIR: from DIR/times.tsv (a row per job and run), DIR/runs-info.tsv and
# DIR/setup.json, write DIR/results.tsv (the rows with their ratios), DIR/orders.tsv and
# DIR/results.json, and print them. A job's reference is its mean time over the Best runs; a
# run's figure is the geometric mean of its jobs' ratios (eq. 6.1), unavailable when a job failed
# or has no time; an order's figure is the mean of its runs' figures (Random's several runs); the
# spread is the highest order figure over the lowest. Returns 1 when a job failed.
report_results() {
  local dir=$1 f
  for f in times.tsv runs-info.tsv setup.json; do
    [ -r "$dir/$f" ] || die "$dir/$f is missing (not a directory this script wrote?)"
  done
  awk -F'\t' -v OFS='\t' -v results="$dir/results.tsv" -v orders="$dir/orders.tsv" '
    NR == 1 { print $0, "ratio" > results; next }
    { row[NR] = $0; run[NR] = $1; ord[$1] = $2; job[NR] = $4; t[NR] = $10; ok[NR] = ($9 == "0" && $10 != "-")
      if (!($1 in seen)) { seen[$1] = 1; runs[++nruns] = $1 }
      if ($2 == "best" && ok[NR]) { ref[$4] += $10; nref[$4]++ } }
    END {
      for (i = 2; i <= NR; i++) {
        r = run[i]
        if (ok[i] && nref[job[i]] && ref[job[i]] > 0) {
          ratio = t[i] / (ref[job[i]] / nref[job[i]]); logsum[r] += log(ratio); n[r]++
          print row[i], sprintf("%.4f", ratio) > results
        } else {
          bad[r] = 1; print row[i], "-" > results
        }
      }
      print "order", "runs", "figure", "run_figures" > orders
      for (k = 1; k <= nruns; k++) {
        r = runs[k]; o = ord[r]
        if (!(o in nord)) olist[++norders] = o
        nord[o]++
        if (bad[r] || !n[r]) { obad[o] = 1; f = "-" } else { f = sprintf("%.4f", exp(logsum[r] / n[r])); osum[o] += f }
        ofig[o] = ofig[o] (ofig[o] == "" ? "" : ",") f
      }
      for (k = 1; k <= norders; k++) {
        o = olist[k]
        print o, nord[o], obad[o] ? "-" : sprintf("%.4f", osum[o] / nord[o]), ofig[o] > orders
      }
    }' "$dir/times.tsv"

  paired_results "$dir"
  jq --argjson jobs "$(tsv_json "$dir/results.tsv")" --argjson orders "$(tsv_json "$dir/orders.tsv")" \
    --argjson runs "$(tsv_json "$dir/runs-info.tsv")" --argjson paired "$(tsv_json "$dir/paired.tsv")" '
    ($orders | map(.run_figures |= (tostring | split(",") | map(tonumber? // null)))) as $orders
    | ($orders | map(select(.figure != null))) as $f
    | . + {runs: $runs, jobs: $jobs, orders: $orders, paired: $paired,
       spread: (if ($f | length) >= 2 and ($f | min_by(.figure) | .figure) > 0 then
         ($f | min_by(.figure)) as $lo | ($f | max_by(.figure)) as $hi
         | {lowest: $lo.order, highest: $hi.order, ratio: ($hi.figure / $lo.figure)} else null end)}' \
    "$dir/setup.json" >"$dir/results.json"

  echo
  echo "per job: time (s) and ratio to the same job in the Best run"
  awk -F'\t' 'NR > 1 { printf "  run %-3s %-10s job %-4s %-18s node %-3s %9s s  %s%s\n", $1, $2, $4, $5, $7, $10,
    $14 == "-" ? "ratio unavailable" : "ratio " $14, $9 == "0" ? "" : "  (exit " $9 ")" }' "$dir/results.tsv"
  echo
  echo "per order: geometric mean of the jobs' ratios (eq. 6.1); an order run several times: the mean of its runs"
  awk -F'\t' 'NR > 1 { printf "  %-10s runs %-2s %s%s\n", $1, $2, $3 == "-" ? "unavailable" : $3,
    ($2 > 1 ? "  (runs: " $4 ")" : "") }' "$dir/orders.tsv"
  grep -q $'^[0-9]*\tbest\t' "$dir/times.tsv" || echo "  (no Best run among the runs: every ratio is unavailable)"
  echo
  echo "per order against Best, paired by block (each run's jobs against the same block's Best run): geometric mean and 95% interval"
  awk -F'\t' 'NR > 1 {
      if ($3 == "-") text = "unavailable"
      else if ($4 == "-") text = $3 "  (interval unavailable: " ($2 < 2 ? "fewer than two blocks" : "no spread") ")"
      else text = $3 "  [" $4 ", " $5 "]  " ($5 < 1 ? "faster than Best" : $4 > 1 ? "slower than Best" : "not told from Best")
      printf "  %-10s blocks %-2s %s\n", $1, $2, text }
    END { if (NR < 2) print "  unavailable: the runs have no blocks (runs-info.tsv of an older version)" }' "$dir/paired.tsv"
  jq -r 'if .spread then "spread: \(.spread.highest) / \(.spread.lowest) = \(.spread.ratio * 10000 | round / 10000)"
    else "spread: unavailable (fewer than two orders with a figure)" end' "$dir/results.json"
  echo "results: $dir/results.tsv, $dir/orders.tsv, $dir/results.json"
  if awk -F'\t' 'NR > 1 && $9 != "0" { bad = 1 } END { exit !bad }' "$dir/times.tsv"; then
    warn "some jobs failed (the exit column; their job*.err and srun.log say why): their runs have no figure"
    return 1
  fi
}

# ---- options -------------------------------------------------------------------------------------
partition="" node="" commands="" stand_in="" stand_in_mb=64 stand_in_busy=20 stand_in_idle=0 bind=auto timing=auto
register_timeout=300 out="" scenario="" report_dir="" repeat=5 seed="" clock=fixed
narrow_wait=15 # s: numaplaced's detail interval (10 s by default) and a margin
alloc_args=()
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "${#1}" -le 9 ] && [ "$1" -ge "${2:-0}" ]; } # is_count TEXT [MIN]
is_seconds() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "${1%%.*}" -le 86400 ] 2>/dev/null; }
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;; # --opt=VALUE as --opt VALUE
    --partition | --nodelist | --alloc-arg | --commands | --stand-in | --stand-in-mb | \
      --stand-in-busy | --stand-in-idle | --bind | --timing | --register-timeout | --out | --report | \
      --repeat | --seed | --clock)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --partition) partition=$2 ;;
        --nodelist) node=$2 ;;
        --alloc-arg) alloc_args+=("$2") ;;
        --commands) commands=$2 ;;
        --stand-in) stand_in=$2 ;;
        --stand-in-mb) is_count "$2" 1 || die "--stand-in-mb \"$2\" is not a number of MiB from 1"
          stand_in_mb=$2 ;;
        --stand-in-busy) is_seconds "$2" || die "--stand-in-busy \"$2\" is not a number of seconds from 0 to 86400"
          stand_in_busy=$2 ;;
        --stand-in-idle) is_seconds "$2" || die "--stand-in-idle \"$2\" is not a number of seconds from 0 to 86400"
          stand_in_idle=$2 ;;
        --bind) case $2 in auto | slurm | numactl) bind=$2 ;;
          *) die "--bind \"$2\" is not one of: auto, slurm, numactl" ;; esac ;;
        --timing) case $2 in auto | sacct | step) timing=$2 ;;
          *) die "--timing \"$2\" is not one of: auto, sacct, step" ;; esac ;;
        --register-timeout) is_count "$2" 1 || die "--register-timeout \"$2\" is not a number of seconds from 1"
          register_timeout=$2 ;;
        --out) out=$2 ;;
        --report) report_dir=$2 ;;
        --repeat) if ! is_count "$2" 1 || [ "$2" -gt 100 ]; then
            die "--repeat \"$2\" is not a number of blocks from 1 to 100"
          fi
          repeat=$2 ;;
        --seed) is_count "$2" || die "--seed \"$2\" is not a whole number from 0 to 999999999"
          seed=$2 ;;
        --clock) case $2 in fixed | after-reply) clock=$2 ;;
          *) die "--clock \"$2\" is not one of: fixed, after-reply" ;; esac ;;
      esac
      shift 2 ;;
    -*) die "unknown option $1 (accepted: --partition, --nodelist, --alloc-arg, --commands, --stand-in, --stand-in-mb, --stand-in-busy, --stand-in-idle, --bind, --timing, --register-timeout, --repeat, --seed, --clock, --out, --report, --help)" ;;
    *) [ -z "$scenario" ] || die "one scenario file only (\"$scenario\", then \"$1\")"
      scenario=$1; shift ;;
  esac
done
if [ -n "$report_dir" ]; then # the results of an earlier run again, from its times
  [ -z "$scenario" ] || die "--report DIR takes no scenario file (it reads DIR)"
  command -v jq >/dev/null || die "jq is not installed; this script needs it"
  report_results "$report_dir"
  exit
fi
[ -n "$scenario" ] || { usage >&2; exit 2; }
if ! [ -f "$scenario" ] || ! [ -r "$scenario" ]; then die "cannot read the scenario file $scenario"; fi
if [ -n "$commands" ] && [ -n "$stand_in" ]; then die "--commands and --stand-in exclude each other"; fi
[ -n "$commands" ] || [ -n "$stand_in" ] || die "no workloads: give --commands FILE (lines BENCHMARK<TAB>COMMAND) or --stand-in PROGRAM"
if [ -n "$stand_in" ] && ! [ -x "$stand_in" ]; then
  die "--stand-in $stand_in is not an executable program (one taking --mb N --busy S --idle S --until PATH, e.g. a build's test/np_workload)"
fi

command -v "$numaplace" >/dev/null || die "$numaplace is not installed (or not in PATH; NUMAPLACE names the command)"

# ---- the scenario, through numaplace's own parser ----------------------------------------------
jobs_text=$("$numaplace" scenario --jobs "$scenario") || die "numaplace could not read the scenario (above)"
runs_text=$("$numaplace" scenario --runs "$scenario") || die "numaplace could not read the scenario's runs (above)"
mapfile -t scenario_orders < <(awk 'NF && !seen[$0]++' <<<"$runs_text")
[ -n "${scenario_orders[0]:-}" ] || die "$scenario has no runs"
[ -n "$seed" ] || seed=$(( $(date +%s) % 1000000000 ))
# run_orders/run_blocks: every distinct order once per block, shuffled within each block by the
# seed (awk's srand: the same seed gives the same plan on every machine).
run_orders=() run_blocks=()
while IFS=$'\t' read -r b o; do run_blocks+=("$b") run_orders+=("$o"); done < <(
  printf '%s\n' "${scenario_orders[@]}" | awk -v seed="$seed" -v blocks="$repeat" '
    { o[++n] = $0 }
    END { srand(seed); for (b = 1; b <= blocks; b++) {
        for (i = 1; i <= n; i++) p[i] = o[i]
        for (i = n; i > 1; i--) { j = int(rand() * i) + 1; x = p[i]; p[i] = p[j]; p[j] = x }
        for (i = 1; i <= n; i++) print b "\t" p[i] } }')
idx=() bench=() input=() jnode=() jclass=() threads=()
while IFS=$'\t' read -r i b n k c t rest; do
  if [ -n "$rest" ] || ! [[ $i$n$k$t =~ ^[0-9]+$ ]] || [ -z "$n" ] || [ -z "$k" ] || [ -z "$t" ] ||
    [ "$i" != "${#idx[@]}" ]; then
    die "numaplace scenario --jobs printed an unexpected line \"$i $b $n $k $c $t $rest\" (this script and numaplace differ in version?)"
  fi
  idx+=("$i") bench+=("$b") input+=("$n") jnode+=("$k") jclass+=("$c") threads+=("$t")
done <<<"$jobs_text"
njobs=${#idx[@]}
[ "$njobs" -gt 0 ] || die "$scenario has no jobs"
name=$("$numaplace" scenario "$scenario" | sed -n '1s/^scenario \([^ :]*\):.*/\1/p')
[ -n "$name" ] || die "numaplace scenario $scenario printed no name (this script and numaplace differ in version?)"

# Each job's NUMA node must exist here and have CPUs (the scenario says how many nodes it needs).
node_cpus=() # per NUMA node: its CPU list
for ((j = 0; j < njobs; j++)); do
  k=${jnode[j]}
  [ -n "${node_cpus[k]:-}" ] && continue
  f=/sys/devices/system/node/node$k/cpulist
  [ -r "$f" ] || die "$scenario: job $j (${bench[j]}) is on NUMA node $k; this machine has nodes $(cat /sys/devices/system/node/online)"
  node_cpus[k]=$(cat "$f")
  [ -n "${node_cpus[k]}" ] || die "$scenario: job $j (${bench[j]}) is on NUMA node $k, which has no CPUs here"
done

# ---- the commands: BENCHMARK[:INPUT]<TAB>COMMAND ----------------------------------------------
declare -A command_of=() command_line=()
if [ -n "$commands" ]; then
  if ! [ -f "$commands" ] || ! [ -r "$commands" ]; then die "cannot read the commands file $commands"; fi
  lineno=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    key=${line%%$'\t'*}
    cmd=${line#*$'\t'}
    if [ "$key" = "$line" ] || ! [[ $key =~ ^[A-Za-z0-9._-]+(:[0-9]+)?$ ]] || [[ -z ${cmd//[[:space:]]/} ]]; then
      die "$commands:$lineno: expected BENCHMARK<TAB>COMMAND or BENCHMARK:INPUT<TAB>COMMAND (a benchmark name of [A-Za-z0-9._-], a tab, a shell command line)"
    fi
    [ -z "${command_of[$key]:-}" ] || die "$commands:$lineno: $key has a command already (line ${command_line[$key]})"
    command_of[$key]=$cmd
    command_line[$key]=$lineno
  done <"$commands"
  for ((j = 0; j < njobs; j++)); do
    if [ -z "${command_of[${bench[j]}:${input[j]}]:-}" ] && [ -z "${command_of[${bench[j]}]:-}" ]; then
      die "$commands: no command for ${bench[j]} input ${input[j]} (job $j of $scenario); the file has: $(printf '%s\n' "${!command_of[@]}" | sort | paste -sd' ')"
    fi
  done
fi
# job_command J DIR: the shell command line job J runs. A stand-in idles until the run's requests
# have been answered (DIR/requests.answered), for --stand-in-idle s at most: it outlasts them on
# a host of any speed, and a sleep of fixed length may not.
job_command() {
  if [ -n "$stand_in" ]; then
    printf 'exec %q --mb %s --busy %s --idle %s --until %q' "$stand_in" "$stand_in_mb" "$stand_in_busy" \
      "$stand_in_idle" "$2/requests.answered"
  elif [ -n "${command_of[${bench[$1]}:${input[$1]}]:-}" ]; then
    printf '%s' "${command_of[${bench[$1]}:${input[$1]}]}"
  else
    printf '%s' "${command_of[${bench[$1]}]}"
  fi
}

# ---- the node, Slurm, the plugin, numaplaced ---------------------------------------------------
for tool in salloc srun scancel squeue scontrol sinfo jq awk; do
  command -v "$tool" >/dev/null || die "$tool is not installed (or not in PATH); this script needs Slurm's commands, jq and awk"
done
here=$(hostname -s)
[ -n "$node" ] || node=$here
node_info=$(scontrol show node "$node" 2>&1) || die "--nodelist $node: Slurm does not know it ($node_info)"
node_host=$(sed -n 's/.*NodeHostName=\([^ ]*\).*/\1/p' <<<"$node_info")
if [ -n "$node_host" ] && [ "${node_host%%.*}" != "$here" ]; then
  die "--nodelist $node runs on host $node_host, this is $here: run $prog on the node itself (numaplace asks the local numaplaced)"
fi
srun --help 2>&1 | grep -q -- '--numa-sensitivity' ||
  die "srun has no --numa-sensitivity: numaplace's SPANK plugin is not in Slurm's plugstack.conf here"
"$numaplace" ping >/dev/null || die "numaplaced does not answer on this node (numaplace ping, above)"
task_plugin=$(scontrol show config | sed -n 's/^TaskPlugin *= *//p')
if [ "$bind" = auto ]; then
  if [[ $task_plugin == *affinity* ]]; then bind=slurm; else bind=numactl; fi
fi
[ "$bind" = numactl ] && ! command -v numactl >/dev/null && die "--bind numactl needs numactl (not installed)"
accounting=$(scontrol show config | sed -n 's/^AccountingStorageType *= *//p')
if [ "$timing" = auto ]; then
  if [ -n "$accounting" ] && [ "$accounting" != accounting_storage/none ] && command -v sacct >/dev/null; then
    timing=sacct
  else
    timing=step
  fi
elif [ "$timing" = sacct ] && [ "$accounting" = accounting_storage/none ]; then
  die "--timing sacct: Slurm accounting is off here (AccountingStorageType=$accounting); use --timing step"
fi
balancing=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo 0)
[ "$balancing" = 0 ] || warn "the kernel's automatic NUMA balancing is on: it moves pages on its own (sysctl kernel.numa_balancing=0)"

[ -n "$out" ] || out=numaplace-run-$name-$(date +%Y%m%dT%H%M%S)
mkdir -p "$out" || die "cannot create the output directory $out"
[ -z "$(ls -A "$out")" ] || die "the output directory $out is not empty"
out=$(cd "$out" && pwd)
cp "$scenario" "$out/scenario.json"
printf '%s\n' "$jobs_text" >"$out/jobs.tsv"
workload="commands $commands"
[ -z "$stand_in" ] || workload="stand-in $stand_in --mb $stand_in_mb --busy $stand_in_busy --idle $stand_in_idle"
jq -n --arg scenario "$name" --arg file "$scenario" --arg node "$node" --arg binding "$bind" \
  --arg timing "$timing" --arg workload "$workload" --arg started "$(date -u +%FT%TZ)" \
  --arg slurm "$(sinfo --version 2>/dev/null || echo unknown)" --argjson repeat "$repeat" \
  --argjson seed "$seed" --arg clock "$clock" --arg omp "${OMP_NUM_THREADS-unset}" \
  --arg omp_places "${OMP_PLACES-unset}" --arg omp_bind "${OMP_PROC_BIND-unset}" \
  '{scenario: $scenario, file: $file, node: $node, binding: $binding, timing: $timing,
    workload: $workload, started: $started, slurm: $slurm, blocks: $repeat, seed: $seed,
    request_clock: $clock, environment: {OMP_NUM_THREADS: $omp, OMP_PLACES: $omp_places,
    OMP_PROC_BIND: $omp_bind}}' >"$out/setup.json"

# ---- cleanup: only what this script started ------------------------------------------------------
allocation=""
step_pids=()
migrate_pid=""
cleanup() {
  local p
  for p in "${step_pids[@]}" $migrate_pid; do kill "$p" 2>/dev/null || true; done
  [ -z "$allocation" ] || scancel "$allocation" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# cpus_within LIST OF: every CPU of LIST ("0-1,4") is in OF.
cpus_within() {
  awk -v a="$1" -v b="$2" 'function expand(s, set,   n, i, p, r, c) {
      n = split(s, p, ",")
      for (i = 1; i <= n; i++) { if (split(p[i], r, "-") == 1) r[2] = r[1]; for (c = r[1] + 0; c <= r[2] + 0; c++) set[c] = 1 }
    }
    BEGIN { expand(a, x); expand(b, y); for (c in x) if (!(c in y)) exit 1; exit 0 }'
}

# allocate RUN ORDER: an exclusive allocation of the node, in $allocation.
allocate() {
  local args=(--no-shell --exclusive --mem=0 -N1 -w "$node" -J "np-scenario-$name-$1-$2") text
  [ -z "$partition" ] || args+=(-p "$partition")
  text=$(salloc "${args[@]}" "${alloc_args[@]}" 2>&1) || die "salloc failed: $text"
  allocation=$(sed -n 's/.*Granted job allocation \([0-9][0-9]*\).*/\1/p' <<<"$text")
  [ -n "$allocation" ] || die "salloc granted no allocation: $text"
}

# The step's own clock, inside its binding: "start EPOCH CPUS" (the CPUs it may run on) when it
# starts, "end EPOCH STATUS" when the job's command has ended (EPOCHREALTIME, '.' whatever the
# locale).
# shellcheck disable=SC2016 # expanded by the step's shell
step_timer='t=$1; shift; s=$EPOCHREALTIME
c=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)
printf "start %s %s\n" "${s/,/.}" "$c" >"$t"; "$@"; rc=$?; e=$EPOCHREALTIME
printf "end %s %s\n" "${e/,/.}" "$rc" >>"$t"; exit "$rc"'

# launch RUN ORDER J DIR: job J as a step of $allocation, in the background.
launch() {
  local j=$3 dir=$4 k=${jnode[$3]} binding=() prefix=()
  if [ "$bind" = slurm ]; then
    binding=(--cpu-bind="map_ldom:$k" --mem-bind="map_mem:$k")
  else
    binding=(--cpu-bind=none)
    prefix=(numactl --cpunodebind="$k" --membind="$k")
  fi
  [ -e "$dir/bindings.tsv" ] || printf 'job\tbenchmark\tnode\tomp_num_threads\tbinding\n' >"$dir/bindings.tsv"
  printf '%s\t%s\t%s\t%s\t%s\n' "$j" "${bench[j]}" "$k" "${threads[j]}" "${binding[*]} ${prefix[*]}" >>"$dir/bindings.tsv"
  env NUMAPLACE_JOB_INDEX="$j" NUMAPLACE_BENCHMARK="${bench[j]}" NUMAPLACE_INPUT="${input[j]}" \
    NUMAPLACE_NODE="$k" NUMAPLACE_THREADS="${threads[j]}" OMP_NUM_THREADS="${threads[j]}" \
    NUMAPLACE_RUN="$1" NUMAPLACE_ORDER="$2" \
    srun --jobid="$allocation" --overlap --whole --mem=0 -N1 -n1 -J "np$j-${bench[j]}" \
    "${binding[@]}" --numa-sensitivity="${jclass[j]}" -o "$dir/job$j.out" -e "$dir/job$j.err" \
    "${prefix[@]}" bash -c "$step_timer" step-timer "$dir/job$j.time" bash -c "$(job_command "$j" "$dir")" \
    >>"$dir/srun.log" 2>&1 &
  step_pids[j]=$!
}

# The steps of $allocation numaplaced has read pages of: "STEP<TAB>CPUS<TAB>NODE=BYTES,...", CPUS
# being the CPUs numaplaced takes as the job's (the step's allocation, as the plugin registers it).
registered_steps() {
  "$numaplace" --json status 2>/dev/null | jq -r --argjson job "$allocation" '
    .jobs[] | select(.job == $job and .step < 4294967040 and (.latest.pages.node_bytes? | type) == "object")
    | [.step, (.effective_cpus // .cpus), ((.local_nodes // []) | map(tostring) | join(",")),
       (.latest.pages.node_bytes | to_entries | map("\(.key)=\(.value)") | join(","))] | @tsv'
}

# wide_steps SEEN: how many jobs numaplaced sees on CPUs beyond their node (SEEN: registered_steps;
# step_of: wait_registered's).
wide_steps() {
  local seen=$1 j step helper_cpus count=0
  for ((j = 0; j < njobs; j++)); do
    step=${step_of[$j]:-}
    [ -n "$step" ] || continue
    helper_cpus=$(awk -F'\t' -v s="$step" '$1 == s { print $2 }' <<<"$seen")
    [ -z "$helper_cpus" ] || cpus_within "$helper_cpus" "${node_cpus[${jnode[j]}]}" || count=$((count + 1))
  done
  echo "$count"
}

# wait_registered DIR: until every step still running has started its command and numaplaced
# has read its pages and, for at most narrow_wait s more, until numaplaced sees each job's CPUs
# within its node (it reads the tasks' affinity every detail interval, and at once when a task
# reports its binding); writes DIR/placement.tsv (job, step, node, the CPUs it may run on, the
# node's CPUs, numaplaced's CPUs and nodes of the job, the share of its pages on the node, by
# numaplaced) and checks the CPUs.
wait_registered() {
  local dir=$1 deadline=$((SECONDS + register_timeout)) seen running j step line cpus helper_cpus helper_nodes pages share
  local wide=0 narrow_deadline=""
  declare -A step_of=()
  while :; do
    # Step ids by name (np<J>-<benchmark>): they are numbered as Slurm received them.
    while read -r step stepname; do
      [[ $stepname =~ ^np([0-9]+)- ]] && step_of[${BASH_REMATCH[1]}]=${step#*.}
    done < <(squeue -h -s -j "$allocation" -o '%i %j' 2>/dev/null)
    seen=$(registered_steps)
    running=0
    for ((j = 0; j < njobs; j++)); do
      kill -0 "${step_pids[j]}" 2>/dev/null || continue
      [ -n "${step_of[$j]:-}" ] && grep -q "^${step_of[$j]}"$'\t' <<<"$seen" &&
        grep -q '^start ' "$dir/job$j.time" 2>/dev/null && continue
      running=$((running + 1))
    done
    if [ "$running" = 0 ]; then
      [ -n "$narrow_deadline" ] || narrow_deadline=$((SECONDS + narrow_wait))
      if [ "$(wide_steps "$seen")" = 0 ] || [ "$SECONDS" -ge "$narrow_deadline" ]; then break; fi
      sleep 1
      continue
    fi
    [ "$SECONDS" -lt "$deadline" ] ||
      die "$running of $njobs steps of allocation $allocation not registered with numaplaced after $register_timeout s (numaplace status; is the plugin's helper_socket numaplaced's?)"
    sleep 1
  done
  printf 'job\tstep\tnode\tcpus\tnode_cpus\thelper_cpus\thelper_nodes\tpages_on_node\n' >"$dir/placement.tsv"
  for ((j = 0; j < njobs; j++)); do
    step=${step_of[$j]:-}
    line=""
    [ -z "$step" ] || line=$(grep "^$step"$'\t' <<<"$seen" || true)
    if [ -z "$line" ]; then
      warn "job $j (${bench[j]}) ended before numaplaced read its pages"
      printf '%s\t%s\t%s\t-\t%s\t-\t-\t-\n' "$j" "${step:--}" "${jnode[j]}" "${node_cpus[${jnode[j]}]}" >>"$dir/placement.tsv"
      continue
    fi
    IFS=$'\t' read -r _ helper_cpus helper_nodes pages <<<"$line"
    cpus=$(sed -n 's/^start [^ ]* //p' "$dir/job$j.time" 2>/dev/null)
    [ -n "$cpus" ] || cpus=-
    share=$(awk -v k="${jnode[j]}" -v p="$pages" 'BEGIN { n = split(p, kv, ","); t = 0; m = 0
      for (i = 1; i <= n; i++) { split(kv[i], x, "="); t += x[2]; if (x[1] == k) m = x[2] }
      printf "%.3f", t ? m / t : 0 }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$j" "$step" "${jnode[j]}" "$cpus" "${node_cpus[${jnode[j]}]}" \
      "${helper_cpus:--}" "${helper_nodes:--}" "$share" >>"$dir/placement.tsv"
    [ -z "$helper_cpus" ] || cpus_within "$helper_cpus" "${node_cpus[${jnode[j]}]}" || wide=$((wide + 1))
    [ "$cpus" = - ] || cpus_within "$cpus" "${node_cpus[${jnode[j]}]}" ||
      die "job $j (${bench[j]}, step $allocation.$step) runs on CPUs $cpus, not within node ${jnode[j]}'s ${node_cpus[${jnode[j]}]} (Slurm's ldoms are not NUMA nodes here? try --bind numactl)"
  done
  # numaplaced groups a request's candidates by the nodes of the CPUs their tasks may run on (the
  # steps' allocations narrowed to the tasks' affinity): a guard, for a numaplaced that does not
  # narrow them, or a binding it has not read yet.
  [ "$wide" = 0 ] || warn "numaplaced sees $wide job(s) on CPUs wider than their NUMA node after ${narrow_wait} s (placement.tsv, helper_cpus, helper_nodes): its orders cannot tell those jobs that gain or lose from a move (group O), and rank them by bandwidth alone"
}

# sacct_times: "J<TAB>SECONDS" per step of $allocation from accounting (bounded wait).
sacct_times() {
  local deadline=$((SECONDS + 120)) text
  while :; do
    text=$(sacct -n -P -j "$allocation" -o JobID,JobName,ElapsedRaw,State 2>/dev/null |
      awk -F'|' '$2 ~ /^np[0-9]+-/ && $4 !~ /^(RUNNING|PENDING)/ { j = substr($2, 3); sub(/-.*/, "", j); print j "\t" $3 }')
    [ "$(grep -c . <<<"$text")" -ge "$njobs" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { warn "sacct lists $(grep -c . <<<"$text") of $njobs finished steps of allocation $allocation after 120 s"; break; }
    sleep 2
  done
  printf '%s\n' "$text"
}

# ---- the runs -------------------------------------------------------------------------------------
printf 'run\torder\tallocation\tjob\tbenchmark\tinput\tnode\tclass\texit\ttime_s\tsource\tstep_s\tsacct_s\n' >"$out/times.tsv"
printf 'run\torder\tallocation\trequests\tanswered\tmigrate_exit\trequests_s\tjobs_end_s\tblock\n' >"$out/runs-info.tsv"
echo "$prog: $name: $njobs jobs on node $node, ${#run_orders[@]} runs: ${#scenario_orders[@]} orders (${scenario_orders[*]}) x $repeat blocks, shuffled (seed $seed); binding: $bind; times: $timing; requests: $clock clock; results in $out"
for ((r = 1; r <= ${#run_orders[@]}; r++)); do
  order=${run_orders[r - 1]}
  dir=$out/run$r-$order
  mkdir -p "$dir"
  allocate "$r" "$order"
  echo "run $r of ${#run_orders[@]} (block ${run_blocks[r - 1]}, $order): allocation $allocation, starting $njobs jobs"
  step_pids=()
  for ((j = 0; j < njobs; j++)); do launch "$r" "$order" "$j" "$dir"; done
  wait_registered "$dir"
  t0=$EPOCHREALTIME
  "$numaplace" migrate --script "$scenario" --order "$order" --clock "$clock" >"$dir/migrate.out" 2>&1 &
  migrate_pid=$!
  migrate_rc=0
  wait "$migrate_pid" || migrate_rc=$?
  migrate_pid=""
  t1=$EPOCHREALTIME
  : >"$dir/requests.answered"
  [ "$migrate_rc" = 0 ] || warn "run $r ($order): numaplace migrate --script exited $migrate_rc ($dir/migrate.out)"
  for ((j = 0; j < njobs; j++)); do wait "${step_pids[j]}" || true; done
  # The last job's end by the steps' clocks (the node's clock, as $t1).
  t2=$(cat "$dir"/job*.time 2>/dev/null | awk 'BEGIN { m = 0 } $1 == "end" && $2 > m { m = $2 } END { print m }')
  if awk -v a="$t2" -v b="${t1/,/.}" 'BEGIN { exit !(a < b) }'; then
    warn "run $r ($order): the jobs ended before the last request's answer: later requests found less or nothing to move"
  fi
  step_pids=()
  declare -A sacct_s=()
  if [ "$timing" = sacct ]; then
    while IFS=$'\t' read -r j s; do [ -n "$j" ] && sacct_s[$j]=$s; done < <(sacct_times)
  fi
  scancel "$allocation" 2>/dev/null || true
  # The next run's allocation waits for this one to leave the node.
  for _ in $(seq 120); do [ -z "$(squeue -h -j "$allocation" -o %i 2>/dev/null)" ] && break; sleep 0.5; done
  # numaplace migrate prints "scenario NAME: N request(s)" first, then per request
  # "[NAME requests[I]] " and the helper's answer ("admin request node S -> D ...").
  requests=$(sed -n 's/^scenario [^ ]*: \([0-9]*\) request(s).*/\1/p' "$dir/migrate.out")
  answered=$(grep -c '^\[[^ ]* requests\[[0-9]*\]\] .*request node' "$dir/migrate.out" || true)
  if [ "${requests:-0}" != "$answered" ]; then
    warn "run $r ($order): $answered of ${requests:-?} requests answered ($dir/migrate.out)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s\n' "$r" "$order" "$allocation" "${requests:--}" "$answered" "$migrate_rc" \
    "$(awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { print b - a }')" \
    "$(awk -v a="${t0/,/.}" -v b="$t2" 'BEGIN { print (b > a ? b - a : 0) }')" "${run_blocks[r - 1]}" >>"$out/runs-info.tsv"
  for ((j = 0; j < njobs; j++)); do
    step_s=- rc=-
    s=$(sed -n 's/^start \([^ ]*\).*/\1/p' "$dir/job$j.time" 2>/dev/null)
    e=$(sed -n 's/^end \([^ ]*\) .*/\1/p' "$dir/job$j.time" 2>/dev/null)
    if [ -n "$s" ] && [ -n "$e" ]; then
      step_s=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')
      rc=$(sed -n 's/^end [^ ]* //p' "$dir/job$j.time")
    fi
    if [ "$timing" = sacct ]; then t=${sacct_s[$j]:--}; else t=$step_s; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$order" "$allocation" "$j" \
      "${bench[j]}" "${input[j]}" "${jnode[j]}" "${jclass[j]}" "$rc" "$t" "$timing" "$step_s" \
      "${sacct_s[$j]:--}" >>"$out/times.tsv"
  done
  unset sacct_s
  allocation=""
  awk -F'\t' -v r="$r" '$1 == r { n++; if ($9 != "0") bad++; if ($10 != "-") { s += $10 } }
    END { printf "run %d (%s): %d jobs, %.1f s of job time in all%s; %s of %s requests answered\n",
      r, $2, n, s, bad ? ", " bad " failed" : "", answered, requests }' answered="$answered" requests="${requests:-?}" \
    "$out/times.tsv"
done

report_results "$out"
