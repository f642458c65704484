#!/usr/bin/env python3
"""Extract the thesis's measurements into data/thesis-*.csv.

Usage: scripts/extract-thesis-data.py GIT_DIR [OUT_DIR]

GIT_DIR is a clone (or bare git directory) of github.com/theovaka/Resource_Manager; the files are
read from its HEAD with `git show`, nothing of its code is copied. OUT_DIR defaults to data/.
Every output names the repository and commit in its header; docs/replay.md says what each holds.
"""
import re
import subprocess
import sys

REPO = "github.com/theovaka/Resource_Manager"
PLACEMENTS = {"0": "local", "1": "remote", "2": "interleave"}
# results/testN: who the co-runners were (results/Tests.txt)
SCENARIOS = {1: ("none", 0), 2: ("node1", 1), 3: ("node0", 1), 4: ("node1", 10), 5: ("node0", 10)}
SET_ORDERS = {  # results/resource_manager/TestN/info.txt, conf1..confN
    1: ["best", "random", "random", "random", "worst"],
    2: ["best", "random", "random", "random", "worst"],
    3: ["best", "random", "random", "random", "random", "worst"],
    4: ["best", "random", "random", "random", "worst", "best-plus", "worst-plus"],
    5: ["best", "best-plus", "worst", "worst-plus"],
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir=" + gitdir] + list(args), check=True,
                          capture_output=True, text=True).stdout


def show(gitdir, path):
    return git(gitdir, "show", "HEAD:" + path)


def perf_fields(text):
    """seconds elapsed and LLC misses (load + store) of a perf stat output, or None."""
    m = re.search(r"([\d.]+) seconds time elapsed", text)
    if not m:
        return None
    llc = sum(int(x) for x in re.findall(r"^\s*(\d+)\s+LLC-(?:load|store)-misses", text, re.M))
    ins = re.search(r"^\s*(\d+)\s+instructions", text, re.M)
    return float(m.group(1)), llc, int(ins.group(1)) if ins else 0


def header(out, commit, what, source, columns):
    out.write("# %s\n# Source: %s, commit %s, %s (extracted by scripts/extract-thesis-data.py).\n"
              % (what, REPO, commit, source))
    for c in columns:
        out.write("# %s\n" % c)


def characterization(gitdir, files, commit, out):
    header(out, commit, "The thesis's characterization runs (scenarios 1-5, ref inputs), one row per run.",
           "results/test1..test5/<bench>/<bench>_ref_<input>_conf_<c>.out (perf stat output)",
           ["scenario: 1 alone; 2 one stress-ng on node 1 (CPU and memory); 3 one on node 0; 4 ten on node 1; 5 ten on node 0",
            "placement: CPUs always on node 0; local = memory node 0, remote = node 1, interleave = nodes 0,1 (conf_0/1/2)",
            "corunner_node / corunners: where the stress-ng memory hogs ran and how many",
            "time_s: wall time; llc_misses: LLC load + store misses; instructions (0 when not counted)"])
    out.write("benchmark,input,scenario,placement,corunner_node,corunners,time_s,llc_misses,instructions\n")
    pat = re.compile(r"^results/test([1-5])/[^/]+/(\d{3}\.[a-z0-9_]+)_ref_(\d+)_conf_([012])\.out$")
    for f in files:
        m = pat.match(f)
        if not m:
            continue
        v = perf_fields(show(gitdir, f))
        if not v:
            continue
        sc = int(m.group(1))
        node, n = SCENARIOS[sc]
        out.write("%s,%s,%d,%s,%s,%d,%.3f,%d,%d\n" % (m.group(2), m.group(3), sc, PLACEMENTS[m.group(4)],
                                                     node, n, v[0], v[1], v[2]))


def sweeps(gitdir, files, commit, out):
    header(out, commit, "The thesis's co-runner sweep (Fig. 4.22) and thread sweep for 520.omnetpp_r (ref input 0).",
           "results/stress_effect_2_4, results/stress_effect_3_5 (<bench>_conf_<c>_stress_<n>.out), results/thread_effect (<bench>_conf_<c>[_num_<n>].out)",
           ["sweep: stress_2_4 = co-runners on node 1 (scenarios 2/4), stress_3_5 = on node 0 (3/5), threads = the thread_effect runs",
            "placement: conf_0/1/2 = local/remote/interleave (CPUs on node 0)",
            "count: co-runners (stress sweeps) or the _num_ figure (thread sweep; -1 when the file has none)",
            "time_s: wall time; llc_misses: LLC load + store misses"])
    out.write("sweep,benchmark,placement,count,time_s,llc_misses\n")
    pat = re.compile(r"^results/(stress_effect_2_4|stress_effect_3_5|thread_effect)/(\d{3}\.[a-z0-9_]+)_conf_([012])(?:_(?:stress|num)_(\d+))?\.out$")
    for f in files:
        m = pat.match(f)
        if not m:
            continue
        v = perf_fields(show(gitdir, f))
        if not v:
            continue
        sweep = {"stress_effect_2_4": "stress_2_4", "stress_effect_3_5": "stress_3_5"}.get(m.group(1), "threads")
        out.write("%s,%s,%s,%s,%.3f,%d\n" % (sweep, m.group(2), PLACEMENTS[m.group(3)],
                                            m.group(4) if m.group(4) else "-1", v[0], v[1]))


def static_mixes(gitdir, commit, out):
    header(out, commit, "The thesis's static mixes (Tables 6.1-6.3, A.9-A.12): 8 jobs on node 0's CPUs, one row per job and configuration.",
           "results/resource_manager/500s_ref and 600s_ref, overview.csv (Conf1 = alone, Conf2..Conf7 = configurations 1..6) and info.txt",
           ["mix: A = 500s_ref, B = 600s_ref; conf: 1 all memory node 0; 2 first four on node 1; 3 last four on node 1; 4-6 as 1-3 plus 8 stress-ng on node 1's CPUs with memory on node 0",
            "position: 0-3 first four, 4-7 last four (info.txt order); alone_s: the alone local time; time_s: the job's wall time in the mix"])
    out.write("mix,conf,position,benchmark,alone_s,time_s\n")
    for mix, d in (("A", "500s_ref"), ("B", "600s_ref")):
        lines = show(gitdir, "results/resource_manager/%s/overview.csv" % d).splitlines()
        rows = []
        for ln in lines[1:]:
            t = ln.split("\t")
            if t[0] == "Benchmark":
                break
            rows.append(t)
        for pos, t in enumerate(rows):
            for conf in range(1, 7):
                out.write("%s,%d,%d,%s,%s,%s\n" % (mix, conf, pos, t[0], t[1], t[conf + 1]))


POLL = re.compile(r"^Running processes PIDs")
ALLOC = re.compile(r"^\tMemory allocation: node 0: (\d+)\s+node 1: (\d+)\s+node 2: (\d+)\s+node 3: (\d+)")
AFFINITY = re.compile(r"^\tCurrent CPU affinity: ([0-9a-f]+)")
LISTED = re.compile(r"^\tPID: (\d+)\t\w+\t(\S+?)-ref-\d+(?:-instance_(\d+))?$")
REQUEST = re.compile(r"^Migrate (\d+) pages from node (\d) to node (\d)")
MOVED = re.compile(r"^\tMigrated (\d+) pages of process with PID (\d+)")
ENDED = re.compile(r"^Process (?:(\S+?)-ref-\d+(?:-instance_(\d+))? )?with PID (\d+) terminated")
RUNTIME = re.compile(r"^Run time: ([\d.]+)")


def node_of(mask):
    v = int(mask, 16)
    for k in range(4):
        if v == 0xff000000ff << (8 * k):
            return k
    return -1


def parse_log(text):
    """Polls (each: listed jobs, their pages per node), requests and job ends of one run log."""
    polls, requests, ends = [], [], []
    listed, allocs = [], []
    pid_name = {}
    for ln in text.splitlines():
        if POLL.match(ln):
            if listed or allocs:
                polls.append((listed, allocs))
            listed, allocs = [], []
            continue
        m = LISTED.match(ln)
        if m:
            listed.append((m.group(1), m.group(2), m.group(3) or "0"))
            pid_name[m.group(1)] = (m.group(2), m.group(3) or "0")
            continue
        m = ALLOC.match(ln)
        if m:
            allocs.append([[int(x) for x in m.groups()], -1])
            continue
        m = AFFINITY.match(ln)
        if m and allocs:
            allocs[-1][1] = node_of(m.group(1))
            continue
        m = REQUEST.match(ln)
        if m:
            requests.append({"poll": len(polls), "pages": int(m.group(1)), "from": int(m.group(2)),
                             "to": int(m.group(3)), "moved": 0, "jobs": 0, "short": False})
            continue
        m = MOVED.match(ln)
        if m and requests:
            requests[-1]["moved"] += int(m.group(1))
            requests[-1]["jobs"] += 1
            continue
        if "Can not migrate any more pages" in ln and requests:
            requests[-1]["short"] = True
            continue
        m = ENDED.match(ln)
        if m:
            bench, inst = (m.group(1), m.group(2) or "0") if m.group(1) else pid_name.get(m.group(3), ("?", "?"))
            ends.append({"poll": len(polls), "bench": bench, "instance": inst, "run_time": None})
            continue
        m = RUNTIME.match(ln)
        if m and ends and ends[-1]["run_time"] is None:
            ends[-1]["run_time"] = float(m.group(1))
    if listed or allocs:
        polls.append((listed, allocs))
    return polls, requests, ends


def static_footprints(gitdir, commit, out):
    header(out, commit, "Each job's pages per node over the thesis's static mixes, every 12th poll (about a minute) of the manager's 5-s loop.",
           "results/resource_manager/500s_ref and 600s_ref, conf3_log.txt..conf6_log.txt (the resource manager's log; no migration ran)",
           ["mix, conf: as thesis-static-mixes.csv (the log conf numbering equals the configuration's); poll: the loop pass (0 = first)",
            "benchmark; n0..n3: its pages per node (4 KiB, /proc/PID/numa_maps N<k>= sums, file mappings included)"])
    out.write("mix,conf,poll,benchmark,n0,n1,n2,n3\n")
    for mix, d in (("A", "500s_ref"), ("B", "600s_ref")):
        for conf in range(3, 7):
            polls, _, _ = parse_log(show(gitdir, "results/resource_manager/%s/conf%d_log.txt" % (d, conf)))
            for i, (listed, allocs) in enumerate(polls):
                if i % 12 or len(listed) != len(allocs):
                    continue
                for (pid, bench, inst), (pages, _node) in zip(listed, allocs):
                    out.write("%s,%d,%d,%s,%d,%d,%d,%d\n" % (mix, conf, i, bench, *pages))


def dynamic(gitdir, commit, times, reqs, ends, fps):
    header(times, commit, "Each job's wall time in every run of the thesis's dynamic sets (Tables A.13-A.22).",
           "results/resource_manager/Test1..Test5/confN.txt (run order and names: info.txt)",
           ["set 1-5; run: the confN index; order: best, best-plus, random, worst, worst-plus",
            "benchmark, instance: as the manager named it (pidof order, not the node); time_s: its `time` wall time"])
    times.write("set,run,order,benchmark,instance,time_s\n")
    header(reqs, commit, "Every migration request the thesis's manager fired in the dynamic sets, as its logs recorded them.",
           "results/resource_manager/Test1..Test5/confN_log.txt",
           ["set, run, order: as thesis-dynamic-times.csv; request: 0-based index into the set's automatic_migration.txt",
            "poll: the manager's loop pass that issued it (passes are 5 s of sleep plus the pass's own work, the synchronous moves included)",
            "polls_since: passes since the previous request (0 for the first); from, to, pages: the request",
            "moved: pages the log reports migrated for it; jobs: migratepages calls; short: it logged 'Can not migrate any more pages'",
            "before_end: 1 if issued before the run's last job ended"])
    reqs.write("set,run,order,request,poll,polls_since,from,to,pages,moved,jobs,short,before_end\n")
    header(ends, commit, "When each job of the dynamic sets ended, as the manager's log recorded it.",
           "results/resource_manager/Test1..Test5/confN_log.txt",
           ["set, run, order, benchmark, instance; poll: the loop pass that noticed the end; run_time_s: seconds since the manager started"])
    ends.write("set,run,order,benchmark,instance,poll,run_time_s\n")
    header(fps, commit, "Each job's pages per node at each request of the thesis's dynamic sets' Best runs (conf1).",
           "results/resource_manager/Test1..Test5/conf1_log.txt, the pass that issued the request (its snapshot is taken before the move)",
           ["set, request, benchmark, instance, cpu_node (from the job's affinity), n0..n3 (4 KiB pages)"])
    fps.write("set,request,benchmark,instance,cpu_node,n0,n1,n2,n3\n")
    for s, orders in SET_ORDERS.items():
        for run, order in enumerate(orders, 1):
            base = "results/resource_manager/Test%d/conf%d" % (s, run)
            for ln in show(gitdir, base + ".txt").splitlines():
                t = ln.split("\t")
                # set 1's first runs name a job by its benchmark alone (one instance each)
                m = re.match(r"(\d{3}\.[a-z0-9_]+?)(?:-ref-\d+(?:-instance_(\d+))?)?$", t[0])
                if m and len(t) > 1:
                    times.write("%d,%d,%s,%s,%s,%s\n" % (s, run, order, m.group(1), m.group(2) or "0", t[1]))
            polls, requests, jend = parse_log(show(gitdir, base + "_log.txt"))
            last_end = max((e["poll"] for e in jend), default=len(polls))
            prev = None
            for i, r in enumerate(requests):
                reqs.write("%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n" % (
                    s, run, order, i, r["poll"], 0 if prev is None else r["poll"] - prev, r["from"], r["to"],
                    r["pages"], r["moved"], r["jobs"], r["short"], r["poll"] < last_end))
                prev = r["poll"]
            for e in jend:
                ends.write("%d,%d,%s,%s,%s,%d,%s\n" % (s, run, order, e["bench"], e["instance"], e["poll"],
                                                      "%.1f" % e["run_time"] if e["run_time"] else ""))
            if run != 1:
                continue
            for i, r in enumerate(requests):
                # the pass that issued the request: the snapshot printed in it (pass index r.poll)
                if r["poll"] >= len(polls):
                    continue
                listed, allocs = polls[r["poll"]]
                if len(listed) != len(allocs):
                    continue
                for (pid, bench, inst), (pages, node) in zip(listed, allocs):
                    fps.write("%d,%d,%s,%s,%d,%d,%d,%d,%d\n" % (s, i, bench, inst, node, *pages))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: extract-thesis-data.py GIT_DIR [OUT_DIR]")
    gitdir = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else "data"
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD", "results").splitlines()
    with open(outdir + "/thesis-characterization.csv", "w") as out:
        characterization(gitdir, files, commit, out)
    with open(outdir + "/thesis-sweeps.csv", "w") as out:
        sweeps(gitdir, files, commit, out)
    with open(outdir + "/thesis-static-mixes.csv", "w") as out:
        static_mixes(gitdir, commit, out)
    with open(outdir + "/thesis-static-footprints.csv", "w") as out:
        static_footprints(gitdir, commit, out)
    with open(outdir + "/thesis-dynamic-times.csv", "w") as t, \
            open(outdir + "/thesis-dynamic-requests.csv", "w") as r, \
            open(outdir + "/thesis-dynamic-ends.csv", "w") as e, \
            open(outdir + "/thesis-dynamic-footprints.csv", "w") as f:
        dynamic(gitdir, commit, t, r, e, f)


if __name__ == "__main__":
    main()
