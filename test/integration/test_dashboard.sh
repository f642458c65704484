#!/usr/bin/env bash
# The Grafana dashboard (contrib/grafana/numaplace-dashboard.json) is a valid dashboard model
# whose every PromQL expression parses (promtool check rules, through dashboard_check.py), and
# the check fails for a broken copy of each kind; the Prometheus scrape snippet is a valid
# configuration. No cluster: only the harness's cases.
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
for t in "Memory per NUMA node" "Memory bandwidth per NUMA node" "Running jobs by local memory share" \
  "Pages moved by trigger and order" "Pages that failed to move, by cause" "numaplaced's own CPU" \
  "Job \\\$jobid" "Pages per NUMA node" "Local memory share" "Cycles per instruction" \
  "Memory bandwidth" "Class and policy"; do
  np_expect_match "^$t" "$titles"
done
np_end_case

# Each broken copy: the mutation, and what the check must say about it. Every one must fail.
cases=(
  "unbalanced brace|panel('Local memory share')['targets'][0]['expr'] = 'numaplace_step_local_ratio{jobid=\"\$jobid\"'|panel 15 'Local memory share' target A.*parse error"
  "unknown function|panel('Pages moved by trigger and order')['targets'][0]['expr'] = 'rates(numaplace_pages_moved_total[\$__rate_interval])'|Pages moved by trigger and order.*unknown function"
  "unknown variable|panel('Local memory share')['targets'][0]['expr'] = 'numaplace_step_local_ratio{jobid=\"\$job\"}'|unknown variable \\\$job "
  "bad variable query|d['templating']['list'][1]['query']['query'] = 'label_values(numaplace_step_info{, jobid)'|variable 'jobid'.*parse error"
  "duplicate panel id|panel('Cycles per instruction')['id'] = panel('Local memory share')['id']|id 15 also used by panel 'Local memory share'"
  "missing refId|del panel('Memory bandwidth')['targets'][0]['refId']|'Memory bandwidth'.*refId None"
  "missing expr|panel('Class and policy')['targets'][0]['expr'] = ''|'Class and policy' target A: expr missing or empty"
  "no targets|panel('Memory bandwidth')['targets'] = []|'Memory bandwidth': no targets"
  "missing gridPos|del panel('Steps tracked')['gridPos']|'Steps tracked': gridPos missing"
  "overlapping panels|panel('Steps tracked')['gridPos']['x'] = 6|'Steps tracked': gridPos .* overlaps"
  "outside the grid|panel('Memory per NUMA node')['gridPos']['w'] = 30|outside the 24-column grid"
  "another datasource|panel('Steps tracked')['datasource'] = {'type': 'prometheus', 'uid': 'my-prom'}|'Steps tracked': datasource .*my-prom"
  "no jobid variable|d['templating']['list'] = d['templating']['list'][:1]|no variable 'jobid'"
  "no title|del d['title']|'title' missing"
  "no uid|del d['uid']|'uid' missing"
  "no schemaVersion|del d['schemaVersion']|'schemaVersion' missing"
  "no datasource input|d['__inputs'] = []|no __inputs entry DS_PROMETHEUS"
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
