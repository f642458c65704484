#!/usr/bin/env bash
# Host side: boot the model's 4-node guest once and run, inside it, the guest self-check,
# `numaplace characterize` (before any Slurm starts: it wants an idle node) and the multi-NUMA
# cases. Each part prints its time. NUMAPLACE_GUEST_PARTS names the parts to run, of "selfcheck
# characterize plugin helper numa" (default: "selfcheck characterize numa"): plugin and helper
# are the plugin's and the helper's whole Slurm integration suites on the guest's kernel, which
# CI runs on the host and in each release's root instead (under emulation they took 7.5 of the
# guest's 11 minutes).
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
parts=${NUMAPLACE_GUEST_PARTS:-selfcheck characterize numa}
for part in $parts; do
  case $part in
  selfcheck | characterize | plugin | helper | numa) ;;
  *)
    echo "test_guest_4node: NUMAPLACE_GUEST_PARTS: unknown part '$part' (accepted: selfcheck characterize plugin helper numa)" >&2
    exit 2
    ;;
  esac
done
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout 4node --timeout 900 -- env NUMAPLACE_BUILD="$build" PARTS="$parts" bash -c '
  status=0
  for part in $PARTS; do
    t0=$SECONDS
    case $part in
    selfcheck) bash test/vm/selfcheck.sh 4node ;;
    characterize) bash test/vm/characterize_cases.sh 4node ;;
    plugin) bash test/integration/test_plugin.sh ;;
    helper) bash test/integration/test_helper.sh ;;
    numa) bash test/vm/numa_cases.sh 4node ;;
    esac || status=1
    echo "---- guest part $part: $((SECONDS - t0)) s"
  done
  exit $status'
