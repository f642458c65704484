#!/usr/bin/env python3
"""Check a Grafana dashboard model for numaplace and every PromQL expression in it.

    dashboard_check.py [--promtool PATH] DASHBOARD.json

1. The model: title, uid, schemaVersion, templating with a `datasource` variable (type
   datasource, query prometheus: file provisioning has no import dialog to fill an __inputs
   entry such as ${DS_PROMETHEUS}, which must not appear) and the variables `node` and `jobid`
   (`jobid` of the jobs on $node), panels (rows' nested panels too) with unique ids, a type, a
   title and a gridPos inside the 24-column grid that overlaps no other panel; every panel but a
   row has a unit and targets, each with a non-empty expr and a refId unique in its panel, and
   every panel's and target's datasource is ${datasource}.
   PromQL as Prometheus users expect it: $node (a host:port) matched literally, never as a
   regex; every counter (a name ending _total) inside rate(), irate() or increase(); a panel
   drawn from the hardware counters says, when empty, where to look (its noValue).
2. PromQL: each expr, with Grafana's variables replaced by valid values, and each query
   variable's series selector (label_values(SELECTOR, LABEL)) become recording rules in a
   temporary rules file that `promtool check rules` must accept. A variable the check does not
   know is an error, not a silent pass.
Prints one line per problem naming the panel and exits 1; exits 0 with a summary line when clean.
Standard library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

DATASOURCE_UID = "${datasource}"
REQUIRED_VARIABLES = ("datasource", "node", "jobid")
# Series only where the hardware counters count: a panel of them is empty on a node without.
COUNTED = re.compile(r"\b(numaplace_step_cycles_total|numaplace_step_instructions_total|"
                     r"numaplace_step_memory_traffic_bytes_total|"
                     r"numaplace_node_memory_traffic_bytes_total)\b")
COUNTER = re.compile(r"\b[a-z_]+_total\b")
RATE_BEFORE = re.compile(r"\b(rate|irate|increase)\(\s*$")
NODE_AS_REGEX = re.compile(r"=~\s*\"\$\{?node\b")
# Grafana's variables as a PromQL parser sees them once Grafana has replaced them.
SUBSTITUTIONS = {
    "node": "node1:9477",
    "jobid": "4242",
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "1h",
}
GRID_COLUMNS = 24
LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(.+?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$")
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?\}|([A-Za-z_][A-Za-z0-9_]*))")


class Checker:
    def __init__(self):
        self.problems = []
        self.rules = []

    def problem(self, where, what):
        self.problems.append(f"{where}: {what}")

    def substitute(self, where, expr):
        def replace(match):
            name = match.group(1) or match.group(2)
            if name not in SUBSTITUTIONS:
                self.problem(where, f"unknown variable ${name} in {expr!r} "
                             f"(known: {', '.join('$' + k for k in SUBSTITUTIONS)})")
                return "0"
            return SUBSTITUTIONS[name]
        return VARIABLE.sub(replace, expr)

    def add_rule(self, where, name, expr):
        if NODE_AS_REGEX.search(expr):
            self.problem(where, f"$node matched as a regex in {expr!r}: a host's dots match any "
                         "character; match it literally (instance=\"$node\")")
        for m in COUNTER.finditer(expr):
            if not RATE_BEFORE.search(expr[:m.start()]):
                self.problem(where, f"counter {m.group(0)} outside rate()/increase() in {expr!r}")
        self.rules.append((where, name, self.substitute(where, expr)))

    def datasource(self, where, ds):
        uid = ds.get("uid") if isinstance(ds, dict) else ds
        if uid != DATASOURCE_UID:
            self.problem(where, f"datasource {ds!r}, expected uid {DATASOURCE_UID}")

    def top(self, d):
        if not isinstance(d, dict):
            self.problem("dashboard", "not a JSON object")
            return False
        for key, kind in (("title", str), ("uid", str), ("schemaVersion", int),
                          ("panels", list), ("templating", dict)):
            if not isinstance(d.get(key), kind):
                self.problem("dashboard", f"'{key}' missing or not a {kind.__name__}")
        if isinstance(d.get("title"), str) and not d["title"].strip():
            self.problem("dashboard", "empty title")
        uid = d.get("uid")
        if isinstance(uid, str) and not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", uid):
            self.problem("dashboard", f"uid {uid!r}: 1-40 of A-Z a-z 0-9 _ -")
        version = d.get("schemaVersion")
        if isinstance(version, int) and not 30 <= version <= 41:
            self.problem("dashboard", f"schemaVersion {version}, expected 30..41 (Grafana 8-11)")
        if "DS_PROMETHEUS" in json.dumps(d):
            self.problem("dashboard", "${DS_PROMETHEUS} (an import-dialog input) used: file "
                         "provisioning cannot fill it; use the datasource variable")
        return all(isinstance(d.get(k), t) for k, t in (("panels", list), ("templating", dict)))

    def templating(self, templating):
        variables = templating.get("list")
        if not isinstance(variables, list):
            self.problem("templating", "'list' missing or not a list")
            return
        names = [v.get("name") for v in variables if isinstance(v, dict)]
        for name in REQUIRED_VARIABLES:
            if name not in names:
                self.problem("templating", f"no variable '{name}'")
        for i, v in enumerate(variables):
            where = f"variable {v.get('name', i)!r}" if isinstance(v, dict) else f"variable {i}"
            if not isinstance(v, dict) or not isinstance(v.get("name"), str):
                self.problem(where, "not an object with a name")
                continue
            if v["name"] == "datasource":
                if v.get("type") != "datasource" or v.get("query") != "prometheus":
                    self.problem(where, "not a datasource variable of type prometheus")
                continue
            if v.get("type") != "query":
                continue
            self.datasource(where, v.get("datasource"))
            query = v.get("query")
            query = query.get("query") if isinstance(query, dict) else query
            match = LABEL_VALUES.match(query or "")
            if not match:
                self.problem(where, f"query {query!r} is not label_values(SELECTOR, LABEL)")
                continue
            if v["name"] == "jobid" and not re.search(r'instance="\$node"', match.group(1)):
                self.problem(where, f"query {query!r} is not limited to the jobs on $node "
                             '(instance="$node")')
            self.add_rule(where, f"numaplace_dashboard:variable_{v['name']}", match.group(1))

    def panels(self, panels, ids, cells):
        for i, p in enumerate(panels):
            if not isinstance(p, dict):
                self.problem(f"panel #{i}", "not an object")
                continue
            where = f"panel {p.get('id')} {p.get('title')!r}"
            pid = p.get("id")
            if not isinstance(pid, int) or isinstance(pid, bool):
                self.problem(where, "id missing or not an integer")
            elif pid in ids:
                self.problem(where, f"id {pid} also used by panel {ids[pid]!r}")
            else:
                ids[pid] = p.get("title")
            for key in ("type", "title"):
                if not isinstance(p.get(key), str) or not p[key]:
                    self.problem(where, f"'{key}' missing or empty")
            self.grid(where, p.get("gridPos"), cells)
            if p.get("type") == "row":
                self.panels(p.get("panels", []), ids, cells)
                continue
            self.datasource(where, p.get("datasource"))
            defaults = (p.get("fieldConfig") or {}).get("defaults") or {}
            if not defaults.get("unit"):
                self.problem(where, "no unit (fieldConfig.defaults.unit)")
            self.targets(where, pid, p.get("targets"))
            exprs = " ".join(t.get("expr") or "" for t in p.get("targets") or []
                             if isinstance(t, dict))
            if COUNTED.search(exprs) and "counters" not in str(defaults.get("noValue", "")):
                self.problem(where, "drawn from hardware counters but no noValue saying why it "
                             "may be empty (the counters' status)")

    def grid(self, where, pos, cells):
        if not isinstance(pos, dict) or not all(
                isinstance(pos.get(k), int) for k in ("h", "w", "x", "y")):
            self.problem(where, "gridPos missing or without integer h, w, x, y")
            return
        h, w, x, y = pos["h"], pos["w"], pos["x"], pos["y"]
        if h < 1 or w < 1 or x < 0 or y < 0 or x + w > GRID_COLUMNS:
            self.problem(where, f"gridPos {pos} outside the {GRID_COLUMNS}-column grid")
            return
        for row in range(y, y + h):
            for col in range(x, x + w):
                other = cells.get((row, col))
                if other is not None:
                    self.problem(where, f"gridPos {pos} overlaps {other}")
                    return
                cells[(row, col)] = where

    def targets(self, where, pid, targets):
        if not isinstance(targets, list) or not targets:
            self.problem(where, "no targets")
            return
        refs = set()
        for t in targets:
            if not isinstance(t, dict):
                self.problem(where, "a target is not an object")
                continue
            ref, expr = t.get("refId"), t.get("expr")
            if not isinstance(ref, str) or not re.fullmatch(r"[A-Za-z0-9_]+", ref):
                self.problem(where, f"refId {ref!r} missing or not a word")
                continue
            if ref in refs:
                self.problem(where, f"refId {ref} twice")
            refs.add(ref)
            if "datasource" in t:
                self.datasource(f"{where} target {ref}", t["datasource"])
            if not isinstance(expr, str) or not expr.strip():
                self.problem(f"{where} target {ref}", "expr missing or empty")
                continue
            self.add_rule(f"{where} target {ref}", f"numaplace_dashboard:panel_{pid}_{ref}", expr)

    def promql(self, promtool):
        # JSON is YAML: the rules file needs no YAML library.
        rules = {"groups": [{"name": "numaplace_dashboard", "rules": [
            {"record": name, "expr": expr} for _, name, expr in self.rules]}]}
        with tempfile.TemporaryDirectory(prefix="numaplace-dashboard.") as tmp:
            path = os.path.join(tmp, "rules.yml")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(rules, f, indent=1)
            run = subprocess.run([promtool, "check", "rules", path], capture_output=True,
                                 text=True, check=False)
        if run.returncode != 0:
            # promtool names the rule by its place, from 1: map that back to the panel.
            for line in (run.stdout + run.stderr).splitlines():
                line = re.sub(r"\brule (\d+)", lambda m: self.rule_name(int(m.group(1))), line)
                line = line.replace(path + ": ", "")
                line = line.strip()
                if line and not line.startswith("Checking ") and line != "FAILED:":
                    self.problem("promtool check rules", line)
            if not self.problems:
                self.problem("promtool check rules", f"exit status {run.returncode}")

    def rule_name(self, place):
        if 1 <= place <= len(self.rules):
            where, _, expr = self.rules[place - 1]
            return f"rule {place} ({where}: {expr!r})"
        return f"rule {place}"


def main(argv):
    promtool = "promtool"
    if len(argv) >= 2 and argv[0] == "--promtool":
        promtool, argv = argv[1], argv[2:]
    if len(argv) != 1:
        print("usage: dashboard_check.py [--promtool PATH] DASHBOARD.json", file=sys.stderr)
        return 2
    check = Checker()
    try:
        with open(argv[0], encoding="utf-8") as f:
            dashboard = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{argv[0]}: {e}")
        return 1
    if check.top(dashboard):
        check.templating(dashboard["templating"])
        ids = {}
        check.panels(dashboard["panels"], ids, {})
    if not check.problems:
        check.promql(promtool)
    for p in check.problems:
        print(f"{argv[0]}: {p}")
    if check.problems:
        return 1
    print(f"{argv[0]}: valid; {len(check.rules)} PromQL expressions parse (promtool check rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
