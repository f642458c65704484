#!/usr/bin/env bash
# The Grafana dashboard (contrib/grafana/numaplace-dashboard.json) is a valid dashboard model
# whose every PromQL expression parses (promtool check rules, through dashboard_check.py), that
# works under file provisioning (a datasource variable, no ${DS_PROMETHEUS} input), and the check
# fails for a broken copy of each kind; the Prometheus scrape snippet is a valid configuration.
# No cluster: only the harness's cases (test_metrics.sh runs the queries against Prometheus).
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"
np_require promtool

dashboard=$NUMAPLACE_SOURCE/contrib/grafana/numaplace-dashboard.json
check=$NUMAPLACE_SOURCE/test/integration/dashboard_check.py
tmp=$(mktemp -d /tmp/numaplace-dashboard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# broken NAME PYTHON: a copy of the dashboard in $tmp/NAME.json with PYTHON applied to `d` (the
# model) and `panel(title)` (a panel by its title).
broken() {
  python3 - "$dashboard" "$tmp/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def panel(title):
    return next(p for p in d["panels"] if p.get("title") == title)
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}

np_case "the dashboard is a valid model and every PromQL expression parses"
np_run python3 "$check" "$dashboard"
np_expect_rc 0
np_expect_match "valid; [1-9][0-9]* PromQL expressions parse"
# Each panel the dashboard promises is there (by title).
titles=$(python3 -c 'import json, sys
print("\n".join(p["title"] for p in json.load(open(sys.argv[1]))["panels"]))' "$dashboard")
for t in "Memory per NUMA node" "Memory traffic per NUMA node" "Running jobs by local memory share" \
  "Hardware counters on \\\$node: reason" "Memory moved by trigger and order" \
  "Memory that failed to move, by cause" "numaplaced's own CPU" "Reports and refusals" \
  "Job \\\$jobid" "Job memory per NUMA node" "Local memory share" "Cycles per instruction" \
  "Memory bandwidth" "Class and policy"; do
  np_expect_match "^$t" "$titles"
done
# Under file provisioning there is no import dialog: every panel and target names the
# datasource variable, and no ${DS_PROMETHEUS} input is left.
# shellcheck disable=SC2016 # ${datasource} is Grafana's, not the shell's
np_run python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))
bad = [p["title"] for p in walk(d["panels"]) if p["type"] != "row"
       and (p["datasource"]["uid"] != "${datasource}"
            or any(t["datasource"]["uid"] != "${datasource}" for t in p["targets"]))]
v = [v for v in d["templating"]["list"] if v["name"] == "datasource"]
print("not on the variable:", bad)
sys.exit(bool(bad) or not v or v[0]["type"] != "datasource" or v[0]["query"] != "prometheus"
         or "DS_PROMETHEUS" in open(sys.argv[1]).read() or "__inputs" in d)' "$dashboard"
np_expect_rc 0
np_end_case

# Each broken copy: the mutation, and what the check must say about it. Every one must fail.
cases=(
  "unbalanced brace|panel('Local memory share')['targets'][0]['expr'] = 'numaplace_step_local_ratio{jobid=\"\$jobid\"'|panel 15 'Local memory share' target A.*parse error"
  "unknown function|panel('Memory moved by trigger and order')['targets'][0]['expr'] = 'rates(numaplace_steps[\$__rate_interval])'|Memory moved by trigger and order.*unknown function"
  "unknown variable|panel('Local memory share')['targets'][0]['expr'] = 'numaplace_step_local_ratio{jobid=\"\$job\"}'|unknown variable \\\$job "
  "bad variable query|d['templating']['list'][2]['query']['query'] = 'label_values(numaplace_step_info{instance=\"\$node\",, jobid)'|variable 'jobid'.*parse error"
  "duplicate panel id|panel('Cycles per instruction')['id'] = panel('Local memory share')['id']|id 15 also used by panel 'Local memory share'"
  "missing refId|del panel('Memory bandwidth')['targets'][0]['refId']|'Memory bandwidth'.*refId None"
  "missing expr|panel('Class and policy')['targets'][0]['expr'] = ''|'Class and policy' target A: expr missing or empty"
  "no targets|panel('Memory bandwidth')['targets'] = []|'Memory bandwidth': no targets"
  "missing gridPos|del panel('Steps tracked')['gridPos']|'Steps tracked': gridPos missing"
  "overlapping panels|panel('Steps tracked')['gridPos']['x'] = 6|'Steps tracked': gridPos .* overlaps"
  "outside the grid|panel('Memory per NUMA node')['gridPos']['w'] = 30|outside the 24-column grid"
  "another datasource|panel('Steps tracked')['datasource'] = {'type': 'prometheus', 'uid': 'my-prom'}|'Steps tracked': datasource .*my-prom"
  "no jobid variable|d['templating']['list'] = d['templating']['list'][:2]|no variable 'jobid'"
  "no title|del d['title']|'title' missing"
  "no uid|del d['uid']|'uid' missing"
  "no schemaVersion|del d['schemaVersion']|'schemaVersion' missing"
  "no datasource variable|d['templating']['list'] = d['templating']['list'][1:]|no variable 'datasource'"
  "an import input|panel('Steps tracked')['datasource']['uid'] = '\${DS_PROMETHEUS}'|DS_PROMETHEUS.*provisioning"
  "node as a regex|panel('Steps tracked')['targets'][0]['expr'] = 'sum(numaplace_steps{instance=~\"\$node\"})'|'Steps tracked'.*node matched as a regex"
  "jobid of every node|d['templating']['list'][2]['query']['query'] = 'label_values(numaplace_step_info, jobid)'|variable 'jobid'.*not limited to the jobs on"
  "no unit|del panel('Memory bandwidth')['fieldConfig']['defaults']['unit']|'Memory bandwidth': no unit"
  "counter without rate|panel('Memory bandwidth')['targets'][0]['expr'] = 'numaplace_step_memory_traffic_bytes_total{jobid=\"\$jobid\"}'|counter numaplace_step_memory_traffic_bytes_total outside rate"
  "silent when no counters|del panel('Cycles per instruction')['fieldConfig']['defaults']['noValue']|'Cycles per instruction': drawn from hardware counters but no noValue"
)
np_case "the check fails for a broken copy, naming the panel and the problem"
for c in "${cases[@]}"; do
  IFS='|' read -r name mutation expected <<<"$c"
  broken "${name// /-}" "$mutation" || { np_fail "$name: could not make the broken copy"; continue; }
  np_run python3 "$check" "$tmp/${name// /-}.json"
  [ "$np_rc" = 1 ] || np_fail "$name: exit status $np_rc, expected 1"
  grep -qE -- "$expected" <<<"$np_out" || np_fail "$name: no line matches /$expected/"
done
np_end_case

np_case "the Prometheus scrape snippet is a valid configuration"
np_run promtool check config "$NUMAPLACE_SOURCE/contrib/prometheus/numaplace-scrape.yml"
np_expect_rc 0
np_expect_match "SUCCESS"
np_end_case

np_finish
