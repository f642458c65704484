#!/usr/bin/env bash
# numaplaced's Prometheus endpoint (metrics_listen) scraped by Debian's own Prometheus server on a
# real local Slurm: promtool accepts the live page, which follows Prometheus's conventions (no
# rate gauges, no page units, no sentence as a label value, counters that only grow, build_info
# and the process_* families), a running job's memory per NUMA node and local share in Prometheus
# match `numaplace status`, its series go stale once the job ends, every query of the Grafana
# dashboard runs in Prometheus, and the page goes only to root, the users of metrics_users over
# loopback and the networks of metrics_allow (a network namespace and a veth pair of the test's
# own, SIGHUP reloads), refusals counted on the page.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"
np_require prometheus promtool curl ip

user=nptest
other=nptest2
np_test_user_ensure "$user"
np_test_user_ensure "$other"
out_dir=$(mktemp -d /tmp/numaplace-metrics.XXXXXX)
chmod 777 "$out_dir"
np_at_exit "rm -rf '$out_dir'"
mb=64

np_cluster_start
np_cluster_set_plugstack "$(np_helper_plugstack)"
read -r mport pport < <(np_free_ports 2)
helper_conf=$np_dir/helper/numaplaced.conf
log=$np_dir/helper/numaplaced.log
mkdir -p "$np_dir/helper"
# In the file, not flags: flags override the file at every reload, and the cases reload it.
printf 'metrics_listen = 127.0.0.1:%s\n' "$mport" >"$helper_conf"
np_helper_start
np_wait_for 10 curl -sf -o /dev/null "http://127.0.0.1:$mport/metrics" ||
  np_die "numaplaced does not serve http://127.0.0.1:$mport/metrics: $(tail -5 "$log")"

# ---- Debian's Prometheus, in the cluster directory, scraping numaplaced every second ----------
prom=$np_dir/prometheus
prom_url=http://127.0.0.1:$pport
mkdir -p "$prom"
cat >"$prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: numaplace
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
prometheus --config.file="$prom/prometheus.yml" --storage.tsdb.path="$prom/data" \
  --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$prom/prometheus.log" 2>&1 &
prom_pid=$!
np_at_exit "np_kill_wait $prom_pid; wait $prom_pid 2>/dev/null"
np_wait_for 30 curl -sf -o /dev/null "$prom_url/-/ready" ||
  np_die "Prometheus not ready on $prom_url within 30 s: $(tail -5 "$prom/prometheus.log")"

# promql QUERY: the instant vector, one series a line: "label=value,... VALUE" (labels sorted,
# __name__ left out); status 1 when the API fails.
promql() {
  curl -sf --max-time 5 --get --data-urlencode "query=$1" "$prom_url/api/v1/query" | python3 -c '
import json, sys
r = json.load(sys.stdin)
if r.get("status") != "success" or r["data"]["resultType"] != "vector":
    sys.exit(1)
for s in r["data"]["result"]:
    m = {k: v for k, v in s["metric"].items() if k != "__name__"}
    print(",".join(f"{k}={m[k]}" for k in sorted(m)), s["value"][1])'
}

# promql_matches QUERY REGEX / promql_empty QUERY: for np_wait_for.
promql_matches() { promql "$1" | grep -qE -- "$2"; }
promql_empty() {
  local r
  r=$(promql "$1") && [ -z "$r" ]
}

# page_lacks REGEX: the page (as root) has no line matching REGEX.
page_lacks() {
  local page
  page=$(curl -sf --max-time 5 "http://127.0.0.1:$mport/metrics") && ! grep -qE -- "$1" <<<"$page"
}

# status_json JOB: `numaplace --json status JOB` (as root) into $out_dir/status.json.
status_json() {
  np_numaplace --json status "$1" >"$out_dir/status.json"
}

# status_has_mb: status shows 90% of the workload's memory on the job's step.
status_has_mb() {
  status_json "$job" && [ "$(field 'int(sum(s["latest"]["pages"]["node_bytes"].values()) >= 0.9 * '"$mb"' * 2**20)')" = 1 ]
}

# field EXPR: a Python expression over the step `s` (its status entry) of status.json.
field() {
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["jobs"][0]
print(eval(sys.argv[2]))' "$out_dir/status.json" "$1"
}

# code_as USER: the HTTP status USER gets for GET /metrics over loopback ("000": no connection).
code_as() {
  if [ "$1" = root ]; then
    curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$mport/metrics" || true
  else
    np_run_as "$1" curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$mport/metrics" || true
  fi
}

# reload LINE...: write numaplaced.conf and SIGHUP; wait for its "reloaded" line.
reloads() { grep -c "reloaded: interval" "$log"; }
reload() {
  local before
  before=$(reloads)
  printf '%s\n' "$@" >"$helper_conf"
  kill -HUP "$np_helper_pid"
  np_wait_for 10 test_gt reloads "$before" || np_fail "no reload line after SIGHUP: $(tail -3 "$log")"
}
test_gt() { [ "$("$1")" -gt "$2" ]; }

np_case "Prometheus (root over loopback) scrapes numaplaced: up is 1"
np_wait_for 15 promql_matches 'up{job="numaplace"}' ' 1$' ||
  np_fail "up{job=\"numaplace\"} never 1: $(curl -s "$prom_url/api/v1/targets")"
np_end_case

# ---- a job of known size runs until its stop file appears --------------------------------
# The task is a shell that holds np_workload (64 MiB, written once) until the test says stop, so
# the job lasts exactly as long as the cases need and then ends by itself.
stop=$out_dir/stop
# shellcheck disable=SC2016 # expanded by the task's shell
np_run_as "$user" srun -n1 -J np-metrics-workload -o "$out_dir/workload.out" -e "$out_dir/workload.err" bash -c \
  '"$0" --mb "$1" --busy 0.5 --idle 600 & w=$!; until [ -e "$2" ]; do sleep 0.2; done; kill "$w"; wait "$w"; exit 0' \
  "$NP_WORKLOAD" "$mb" "$stop" &
srun_pid=$!
np_at_exit "touch '$stop' 2>/dev/null"
job=""
# By its name: a job of an earlier case may still be listed, completing.
np_wait_for 30 bash -c "squeue -h -u $user -n np-metrics-workload -o %i | grep -q ." ||
  np_die "the job never started"
job=$(squeue -h -u "$user" -n np-metrics-workload -o %i | head -1)
np_wait_for 30 grep -q '^ready' "$out_dir/workload.err" ||
  np_die "the workload never said ready: $(cat "$out_dir/workload.err")"
# numaplaced has read the touched memory once status shows 90% of it.
np_wait_for 20 status_has_mb ||
  np_die "numaplace status never showed job $job with its $mb MiB"

np_case "promtool check metrics passes on the live page while a job runs"
np_run curl -sf -D "$out_dir/headers" -o "$out_dir/page" "http://127.0.0.1:$mport/metrics"
np_expect_rc 0
np_expect_match "^Content-Type: text/plain; version=0\.0\.4" "$(tr -d '\r' <"$out_dir/headers")"
np_run promtool check metrics <"$out_dir/page"
np_expect_rc 0
np_out=$(cat "$out_dir/page")
np_expect_match "^numaplace_step_memory_bytes\{.*jobid=\"$job\".*\} [0-9]+"
np_expect_match "^numaplace_step_local_ratio\{.*jobid=\"$job\".*\} [0-9.]+"
np_expect_match "^numaplace_step_info\{.*jobid=\"$job\".*user=\"$user\".*\} 1"
np_end_case

np_case "the page as Prometheus users expect it: counters, bytes, codes, build_info, process_*"
# Two scrapes samples apart (one a second): every counter the first had is there again and not
# lower, and the samples taken grew. The second waits for numaplace_samples_total to move.
samples_total() { sed -n 's/^numaplace_samples_total \([0-9.e+]*\)$/\1/p' "$1"; }
first_samples=$(samples_total "$out_dir/page")
sampled_since_first() {
  curl -sf -o "$out_dir/page2" "http://127.0.0.1:$mport/metrics" &&
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)' \
      "$(samples_total "$out_dir/page2")" "${first_samples:-0}"
}
np_wait_for 30 sampled_since_first || np_fail "numaplace_samples_total stayed at ${first_samples:-none}"
np_run curl -sf -o "$out_dir/page2" "http://127.0.0.1:$mport/metrics"
np_expect_rc 0
np_run python3 - "$out_dir/page" "$out_dir/page2" <<'PY'
import re, sys
def parse(path):
    types, series = {}, {}
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"# TYPE (\S+) (\S+)$", line)
        if m:
            types[m.group(1)] = m.group(2)
        elif line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            series[key] = float(value)
    return types, series
types, first = parse(sys.argv[1])
_, second = parse(sys.argv[2])
bad = []
for name in types:
    if "_per_second" in name or "pages" in name or "_per_" in name:
        bad.append(f"a rate or page unit in a name: {name}")
for key in first:
    for value in re.findall(r'="((?:[^"\\]|\\.)*)"', key):
        if " " in value:
            bad.append(f"a label value with a space: {key}")
for name in ("numaplace_build_info", "process_start_time_seconds", "process_resident_memory_bytes",
             "process_cpu_seconds_total", "process_open_fds", "process_max_fds",
             "numaplace_reports_held_total", "numaplace_reports_lost_total",
             "numaplace_spool_write_failures_total", "numaplace_connections_refused_total",
             "numaplace_scrapes_refused_total", "numaplace_step_series_left_out"):
    if not any(k == name or k.startswith(name + "{") for k in first):
        bad.append(f"no {name}")
if not any(re.match(r'numaplace_build_info\{version="[0-9]', k) for k in first):
    bad.append("numaplace_build_info has no version")
counters = [k for k in first if types.get(re.split(r"[{ ]", k)[0]) == "counter"]
for key in counters:
    if key in second and second[key] < first[key]:
        bad.append(f"counter went down: {key} {first[key]} then {second[key]}")
if not second.get("numaplace_samples_total", 0) > first.get("numaplace_samples_total", 0):
    bad.append("numaplace_samples_total did not grow")
print(f"{len(counters)} counter series checked")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
np_expect_rc 0
np_end_case

np_case "every query of the Grafana dashboard runs in Prometheus, on this node and this job"
# Grafana's variables as it would fill them for this node and job; a query Prometheus refuses
# fails, and the panels of what this job surely has must show something.
np_run python3 - "$NUMAPLACE_SOURCE/contrib/grafana/numaplace-dashboard.json" "$prom_url" \
  "127.0.0.1:$mport" "$job" <<'PY'
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1]))
url, node, job = sys.argv[2], sys.argv[3], sys.argv[4]
values = {"$node": node, "$jobid": job, "$__rate_interval": "5s", "$__interval": "1s",
          "$__range": "1m"}
must_show = {"Memory per NUMA node", "Steps tracked", "Hardware counters on $node: reason",
             "Job memory per NUMA node", "Local memory share", "Class and policy",
             "Running jobs by local memory share (worst first)", "numaplaced's own CPU"}
def run(expr):
    for k in sorted(values, key=len, reverse=True):
        expr = expr.replace(k, values[k])
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        return json.load(r)
bad, ran = [], 0
for v in d["templating"]["list"]:
    if v["type"] == "query":
        sel = v["query"]["query"].split("(", 1)[1].rsplit(",", 1)[0]
        r = run(sel)
        ran += 1
        if r["status"] != "success" or not r["data"]["result"]:
            bad.append(f"variable {v['name']}: {sel} gave {r['data'] if r['status'] == 'success' else r}")
for p in d["panels"]:
    for t in p.get("targets", []):
        try:
            r = run(t["expr"])
        except Exception as e:  # Prometheus refused it (HTTP 400) or is gone
            bad.append(f"{p['title']} {t['refId']}: {e}")
            continue
        ran += 1
        if p["title"] in must_show and t["refId"] == "A" and not r["data"]["result"]:
            bad.append(f"{p['title']}: nothing for {t['expr']}")
print(f"{ran} queries ran")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
np_expect_rc 0
np_end_case

np_case "every metric the Grafana dashboard uses is a family on the page"
np_out=$(python3 -c 'import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
exprs += [v["definition"] for v in d["templating"]["list"] if "definition" in v]
print("\n".join(sorted(set(re.findall(r"\b(?:numaplace|process)_[a-z_]+\b", " ".join(exprs))))))' \
  "$NUMAPLACE_SOURCE/contrib/grafana/numaplace-dashboard.json")
[ -n "$np_out" ] || np_fail "no numaplace_ metric found in the dashboard"
for metric in $np_out; do
  grep -q "^# TYPE $metric " "$out_dir/page" || np_fail "the dashboard uses $metric; the page has no such family"
done
np_end_case

np_case "Prometheus's memory by node and local share of the job match numaplace status"
sel="jobid=\"$job\",step=\"0\""
# Prometheus has scraped the touched memory too (its last scrape is at most 1 s old). All of it:
# the step holds its $mb MiB and its program's pages, so a figure below $mb MiB is from a sample
# taken while it was still touching them (seen: 90% of it passed a 0.9 wait, status then showed
# the whole).
np_wait_for 15 promql_matches "sum(numaplace_step_memory_bytes{$sel}) >= $mb * 2^20" . ||
  np_fail "Prometheus never had the job's $mb MiB: $(promql "numaplace_step_memory_bytes{$sel}")"
# Status, Prometheus, status again. Tolerance: one sample of drift. Prometheus's value is its
# last scrape (up to 1 s old) of a page numaplaced renders from its last sample (one every 1 s),
# so it may be one sample older than what the first status showed; each node's figure must lie
# between the two status readings, give or take what the step's pages can change in one
# interval. This workload's 64 MiB are all written before it says ready and it allocates nothing
# after, so between samples only a few stack and library pages can move: 1% of its pages (about
# 170 pages of 4 KiB) is ample, and far below the 64 MiB the figures must show.
status_json "$job"
before_bytes=$(field 's["latest"]["pages"]["node_bytes"]')
before_local=$(field 's["latest"]["local_share"]["value"]')
class=$(field 's["class"]')
policy=$(field 's["policy"]')
prom_pages=$(promql "numaplace_step_memory_bytes{$sel}")
prom_local=$(promql "numaplace_step_local_ratio{$sel}")
prom_info=$(promql "numaplace_step_info{$sel}")
status_json "$job"
after_bytes=$(field 's["latest"]["pages"]["node_bytes"]')
after_local=$(field 's["latest"]["local_share"]["value"]')
np_out="status before: $before_bytes local $before_local
Prometheus bytes:
$prom_pages
Prometheus local share: $prom_local
status after: $after_bytes local $after_local"
drift=$(python3 - "$before_bytes" "$after_bytes" "$prom_pages" 2>&1 <<'PY'
import ast, sys
before, after = ast.literal_eval(sys.argv[1]), ast.literal_eval(sys.argv[2])
prom = {}
for line in sys.argv[3].splitlines():
    labels, value = line.rsplit(" ", 1)
    labels = dict(kv.split("=", 1) for kv in labels.split(","))
    if "user" in labels:
        sys.exit(f"a user label off numaplace_step_info: {line}")
    prom[labels["node"]] = float(value)
if set(prom) != set(before) | set(after):
    sys.exit(f"NUMA nodes {sorted(prom)} in Prometheus, {sorted(set(before) | set(after))} in status")
total = sum(after.values())
for node, got in prom.items():
    lo = min(before.get(node, 0), after.get(node, 0)) - 0.01 * total
    hi = max(before.get(node, 0), after.get(node, 0)) + 0.01 * total
    if not lo <= got <= hi:
        sys.exit(f"node {node}: {got:.0f} bytes in Prometheus, {lo:.0f}..{hi:.0f} allowed by status")
PY
) || np_fail "pages per node differ by more than one sample's drift (1%): $drift"
python3 -c 'import sys
lo, hi = sorted((float(sys.argv[1]), float(sys.argv[2])))
sys.exit(not (lo - 0.01 <= float(sys.argv[3].split()[-1]) <= hi + 0.01))' \
  "$before_local" "$after_local" "${prom_local:-x -1}" ||
  np_fail "local share in Prometheus '$prom_local', status $before_local then $after_local (1 point allowed)"
np_expect_match "class=$class,.*policy=$policy,.*user=$user 1$" "$prom_info"
np_end_case

np_case "after the job ends its series are gone from Prometheus within a few scrapes"
touch "$stop"
wait "$srun_pid" || np_fail "srun failed"
ended=$SECONDS
# The step's series leave the page when numaplaced ends the step; Prometheus marks them stale at
# its next scrape, so an instant query stops returning them (without staleness they would stay
# for its 5-minute lookback).
np_wait_for 10 page_lacks "jobid=\"$job\"" ||
  np_fail "the page still has job $job 10 s after it ended"
np_wait_for 10 promql_empty "{jobid=\"$job\"}" ||
  np_fail "Prometheus still returns job $job's series: $(promql "{jobid=\"$job\"}")"
echo "  (gone from Prometheus $((SECONDS - ended)) s after the job ended)"
# The data it had stays queryable for the past: staleness ended the series, it did not lose them.
np_run promql "count(count_over_time(numaplace_step_memory_bytes{jobid=\"$job\"}[5m]))"
np_expect_match "^ [1-9]"
np_end_case

# scrapes_refused: numaplace_scrapes_refused_total on the page (as root)
scrapes_refused() {
  curl -sf --max-time 5 "http://127.0.0.1:$mport/metrics" | sed -n 's/^numaplace_scrapes_refused_total //p'
}

np_case "loopback: a user not in metrics_users gets 403; named (by name or uid) they get the page"
np_expect_eq "$(code_as root)" 200 "root"
refused_before=$(scrapes_refused)
np_expect_eq "$(code_as "$user")" 403 "$user"
refused_after=$(scrapes_refused)
if [ -z "$refused_before" ] || [ "$refused_after" != $((refused_before + 1)) ]; then
  np_fail "numaplace_scrapes_refused_total '$refused_before' then '$refused_after' around one refusal"
fi
np_expect_eq "$(code_as "$other")" 403 "$other"
reload "metrics_listen = 127.0.0.1:$mport" "metrics_users = $user"
np_expect_eq "$(code_as "$user")" 200 "$user in metrics_users"
np_expect_eq "$(code_as "$other")" 403 "$other, not in metrics_users"
reload "metrics_listen = 127.0.0.1:$mport" "metrics_users = $user,$(id -u "$other")"
np_expect_eq "$(code_as "$other")" 200 "$other by uid"
np_expect_eq "$(code_as root)" 200 "root"
np_end_case

# ---- a peer that is not loopback: a network namespace joined by a veth pair ----------------
# Addresses only on the pair, in a /30 of 10.99.0.0/16 picked from this shell's pid and not in
# use on the machine; nothing else changes, and both go at exit (deleting the namespace deletes
# its end of the pair, and with it the other).
ns=npm$$
host_if=npm${$}h
ns_if=npm${$}n
net=""
for try in 0 1 2 3 4 5 6 7; do
  n=$((($$ + try * 97) % 16384))
  candidate=10.99.$((n / 64)).$((n % 64 * 4))
  ip -o -4 addr show | grep -q " 10\.99\.$((n / 64))\.$((n % 64 * 4 + 1))/\| 10\.99\.$((n / 64))\.$((n % 64 * 4 + 2))/" && continue
  ip -4 route show to match "$candidate" | grep -q "^10\.99\." && continue
  net=$candidate
  break
done
[ -n "$net" ] || np_die "no free /30 in 10.99.0.0/16 for the veth pair"
prefix=${net%.*}
last=${net##*.}
host_ip=$prefix.$((last + 1))
ns_ip=$prefix.$((last + 2))
neighbour_net=$prefix.$(((last + 4) % 256))
np_at_exit "ip netns del '$ns' 2>/dev/null; ip link del '$host_if' 2>/dev/null"
ip netns add "$ns" || np_die "ip netns add $ns failed"
ip link add "$host_if" type veth peer name "$ns_if" netns "$ns" || np_die "no veth pair"
ip addr add "$host_ip/30" dev "$host_if"
ip link set "$host_if" up
ip -n "$ns" addr add "$ns_ip/30" dev "$ns_if"
ip -n "$ns" link set "$ns_if" up
ip -n "$ns" link set lo up

# from_ns: "HTTP-STATUS CURL-EXIT" for GET /metrics from inside the namespace ("200 0", "403 0";
# "000 7": nothing listens there).
from_ns() {
  local code rc=0
  code=$(ip netns exec "$ns" curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://$host_ip:$mport/metrics") || rc=$?
  echo "$code $rc"
}
ns_answers() { [ "$(from_ns)" != "000 7" ]; }

np_case "another network: refused unless in metrics_allow (listening on 0.0.0.0)"
# A restart: 0.0.0.0:PORT cannot be bound while 127.0.0.1:PORT still is, so a reload keeps the
# old address (and says so).
np_helper_stop
printf '%s\n' "metrics_listen = 0.0.0.0:$mport" >"$helper_conf"
np_helper_start
restarted=$(date +%s)
np_wait_for 10 ns_answers ||
  np_fail "nothing answers on $host_ip:$mport after metrics_listen = 0.0.0.0:$mport: $(tail -3 "$log")"
np_expect_eq "$(from_ns)" "403 0" "from $ns_ip with no metrics_allow"
reload "metrics_listen = 0.0.0.0:$mport" "metrics_allow = $neighbour_net/30"
np_expect_eq "$(from_ns)" "403 0" "from $ns_ip with metrics_allow = $neighbour_net/30"
reload "metrics_listen = 0.0.0.0:$mport" "metrics_allow = $neighbour_net/30,$net/30"
np_expect_eq "$(from_ns)" "200 0" "from $ns_ip with metrics_allow naming $net/30"
# A peer on this host is let in by its user only, never by a network: through the host's own
# address in that /30 too. Root yes, a user not named no.
np_expect_eq "$(code_as root)" 200 "root over loopback"
np_expect_eq "$(code_as "$user")" 403 "$user over loopback"
np_expect_eq "$(np_run_as "$user" curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://$host_ip:$mport/metrics")" 403 \
  "$user on this host through $host_ip, in metrics_allow's $net/30"
np_expect_eq "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://$host_ip:$mport/metrics")" 200 \
  "root on this host through $host_ip"
np_end_case

# hold HOST N MARK: a python holding N connections to HOST:mport, each with half a request,
# sending a header byte a second and reopening each one cut, until killed; it creates
# MARK once it has opened all N. Run as a user or in the namespace by the caller (exec'd, so
# that $! is the holder itself).
hold_script='import socket, sys, time
host, port, n, mark = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def opened():
    while True:
        try:
            s = socket.create_connection((host, port), timeout=2)
            s.sendall(b"GET /metrics HTTP/1.1\r\nX-Drip: ")
            return s
        except OSError:
            time.sleep(0.1)
held = [opened() for _ in range(n)]
open(mark, "w").close()
while True:
    time.sleep(1)
    for i, s in enumerate(held):
        try:
            s.sendall(b"a")
        except OSError:
            held[i] = opened()'
hold_count=40
# The holders' marks: waited for, not slept for (a slow start left the scrapes to run first).
hold_marks=$(mktemp -d)
chmod 777 "$hold_marks"
np_at_exit "rm -rf '$hold_marks'"

# root_scrapes HOST: five scrapes by root, each within 2 s; prints their codes in one line.
root_scrapes() {
  local codes="" i
  for i in 1 2 3 4 5; do
    codes+="$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://$1:$mport/metrics") "
  done
  echo "${codes% }"
}

np_case "a user holding $hold_count half-sent requests locks no one out (loopback, $host_ip)"
for addr in 127.0.0.1 "$host_ip"; do
  setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups \
    /usr/bin/python3 -c "$hold_script" "$addr" "$mport" "$hold_count" "$hold_marks/user-$addr" >/dev/null 2>&1 &
  holder=$!
  np_wait_for 30 test -e "$hold_marks/user-$addr" || np_fail "the holder of $user never opened its connections through $addr"
  kill -0 "$holder" 2>/dev/null || np_fail "the holder of $user exited: nothing was held"
  np_expect_eq "$(root_scrapes "$addr")" "200 200 200 200 200" "root's scrapes through $addr while $user holds"
  np_expect_eq "$(root_scrapes 127.0.0.1)" "200 200 200 200 200" "root's scrapes over loopback while $user holds $addr"
  np_kill_wait "$holder"
done
np_out=$(cat "$log")
np_expect_match "local peer of uid $(id -u "$user"), neither root nor in metrics_users"
np_end_case

np_case "another host of metrics_allow holding $hold_count: root and the others still served"
ip netns exec "$ns" /usr/bin/python3 -c "$hold_script" "$host_ip" "$mport" "$hold_count" "$hold_marks/ns" >/dev/null 2>&1 &
holder=$!
np_wait_for 30 test -e "$hold_marks/ns" || np_fail "the holder in $ns never opened its connections"
kill -0 "$holder" 2>/dev/null || np_fail "the holder in $ns exited: nothing was held"
np_expect_eq "$(root_scrapes "$host_ip")" "200 200 200 200 200" "root's scrapes through $host_ip while $ns_ip holds"
np_expect_eq "$(root_scrapes 127.0.0.1)" "200 200 200 200 200" "root's scrapes over loopback while $ns_ip holds"
# its own scrape past its share is answered at once, not queued
np_expect_eq "$(from_ns)" "503 0" "a scrape from $ns_ip past its share"
# Refusals are logged one line per 10 s at most: the holder, reopening what was refused, is
# refused again each second, so its line comes within the next window (the last case's may
# still hold the current one).
np_wait_for 25 grep -q "the last from $ns_ip: its share of the connections is taken" "$log" ||
  np_fail "no refusal of $ns_ip logged: $(grep 'metrics: refused' "$log" | tail -3)"
np_kill_wait "$holder"
np_end_case

np_case "Prometheus scrapes the restarted numaplaced on 0.0.0.0 as root over loopback"
np_wait_for 10 promql_matches "timestamp(numaplace_steps) > $restarted" . ||
  np_fail "no scrape since the restart: $(promql 'timestamp(numaplace_steps)')"
np_run promql 'up{job="numaplace"}'
np_expect_match " 1$"
np_end_case

np_finish
