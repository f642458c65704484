#!/usr/bin/env python3
"""The thesis's dynamic sets' measurement noise, from data/thesis-dynamic-times.csv.

Usage: scripts/thesis-noise.py [data/thesis-dynamic-times.csv]

Per set and run: eq. 6.1 recomputed from the instance times (geometric mean over benchmarks of
the ratio of mean times to the Best run's), the within-run standard deviation of identical
instances' log times, a 2-standard-error band of the figure from it (set 1 has one instance per
benchmark: no band), the exact duplicate times and the largest ratio between identical instances.
"""
import csv
import math
import sys
from collections import defaultdict
rows=[r for r in csv.DictReader(l for l in open(sys.argv[1] if len(sys.argv) > 1 else 'data/thesis-dynamic-times.csv') if not l.startswith('#'))]
t=defaultdict(lambda: defaultdict(list))
for r in rows: t[(r['set'],r['run'],r['order'])][r['benchmark']].append(float(r['time_s']))
print('| set | run | order | eq. 6.1 | 2 s.e. | duplicate times | max ratio of identical instances |')
print('|---|---|---|---|---|---|---|')
for (s,run,order),b in sorted(t.items()):
    best=t[(s,'1','best')]
    lr=[math.log(sum(v)/len(v)/(sum(best[k])/len(best[k]))) for k,v in b.items()]
    fig=math.exp(sum(lr)/len(lr))
    within=[];dof=0
    for k,v in b.items():
        m=sum(math.log(x) for x in v)/len(v)
        within+= [ (math.log(x)-m)**2 for x in v]; dof+=len(v)-1
    sd=math.sqrt(sum(within)/dof) if dof else float('nan')
    n=sum(len(v) for v in b.values()); nb=sum(len(v) for v in best.values())
    se=sd*math.sqrt(1/n+1/nb)
    dup=n-len(set(x for v in b.values() for x in v))
    mx=max(max(v)/min(v) for v in b.values())
    band = 'unavailable (one instance each)' if math.isnan(se) else '+-%.3f' % (2 * se * fig)
    print('| %s | %s | %s | %.3f | %s | %d | %.2f |' % (s, run, order, fig, band, dup, mx))
