#!/usr/bin/env python3
"""How the thesis's manager fired its requests, from data/thesis-dynamic-requests.csv and
data/thesis-dynamic-ends.csv: per set and run, requests fired before the last job ended, the
mean spacing up to the first job's end (passes between requests x the mean pass length up to
then, the log has no clock of its own) and the pages moved. bench/replay prints the same for
the model (fired/spacing on its contention rows).

Usage: scripts/thesis-schedule.py [DATA_DIR]
"""
import csv
import sys
from collections import defaultdict


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "data"
    reqs = rows(d + "/thesis-dynamic-requests.csv")
    ends = rows(d + "/thesis-dynamic-ends.csv")
    runs = defaultdict(list)
    for r in reqs:
        runs[(int(r["set"]), int(r["run"]), r["order"])].append(r)
    print("| set | run | order | fired before the last end | mean spacing to the first end (s) | pages moved (M) |")
    print("|---|---|---|---|---|---|")
    for (s, run, order), v in sorted(runs.items()):
        e = [x for x in ends if (int(x["set"]), int(x["run"])) == (s, run) and x["run_time_s"]]
        first = min(e, key=lambda x: float(x["run_time_s"]))
        per_pass = float(first["run_time_s"]) / int(first["poll"])
        gaps = [int(x["polls_since"]) * per_pass for x in v[1:] if int(x["poll"]) < int(first["poll"])]
        fired = sum(int(x["before_end"]) for x in v)
        moved = sum(int(x["moved"]) for x in v if int(x["before_end"]))
        print("| %d | %d | %s | %d | %.0f | %.1f |" % (s, run, order, fired,
                                                       sum(gaps) / len(gaps) if gaps else 0, moved / 1e6))


if __name__ == "__main__":
    main()
