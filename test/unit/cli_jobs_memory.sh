#!/bin/sh
# `numaplace jobs` reads sacct's output one job at a time (it held every decoded
# summary at once: 344 MB for 5,000 jobs). A fake sacct prints 3,000 jobs, each with the suite's
# stored summary (2.6 kB); numaplace's peak RSS must stay under 64 MB (it was ~200 MB), text and
# --json alike, and --json must list them all.
#   cli_jobs_memory.sh NUMAPLACE FIXTURES
set -eu
numaplace=$1 fixtures=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
stored=$(grep -o -m1 'NPS1:[A-Za-z0-9+/=]*' "$fixtures/data/summary/golden/fit0.txt" | head -1)
i=0
while [ $i -lt 3000 ]; do
  printf '%s|alice|COMPLETED|%s\n' $((1000 + i)) "$stored"
  i=$((i + 1))
done >"$dir/out.txt"
printf '#!/bin/sh\ncat "%s"\n' "$dir/out.txt" >"$dir/sacct"
chmod +x "$dir/sacct"
# Under AddressSanitizer freed memory waits in a 256 MB quarantine: none here, to see the peak.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
  PATH="$dir:$PATH" python3 - "$numaplace" <<'PY'
import json, resource, subprocess, sys
for args in (["jobs"], ["--json", "jobs"]):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run([sys.argv[1]] + args, check=True, capture_output=True, text=True).stdout
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"numaplace {' '.join(args)}: peak RSS {peak_kb} KB (3,000 jobs)")
    assert peak_kb < 64 * 1024, f"peak RSS {peak_kb} KB: summaries are held, not streamed"
    if args[0] == "--json":
        assert len(json.loads(out)) == 3000
    else:
        rows = [l for l in out.splitlines() if not l.startswith("predicted sensitivity")]
        assert len(rows) == 3001, f"{len(rows)} rows"
PY
