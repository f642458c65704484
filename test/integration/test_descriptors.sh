#!/usr/bin/env bash
# numaplaced at a 256-descriptor limit, host-only: 500 steps, each a real
# process, registered by root as slurmstepd would, sampled, then ended. Perf counters take one
# descriptor per event and task, so most steps cannot have them at this limit:
# - every registration is answered, none refused (a /proc-only step keeps no descriptor); a
#   refusal would name the descriptor budget;
# - a step without room for its counters runs on /proc alone and says why (status, report);
# - no report is lost: every step registered has its report in the spool once step_end answers;
# - the helper never ran out (no "Too many open files" in its log) and still answers;
# - the unit sets LimitNOFILE once;
# - status says whether the memory controllers count, or why not (on AMD: libpfm4 has no UMC or
#   DF PMU, so "unavailable" with that reason).
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"
np_require prlimit python3 jq

steps=${NUMAPLACE_FD_STEPS:-500}
limit=256
owner=nptest
np_test_user_ensure "$owner"
owner_uid=$(id -u "$owner")

np_case "the unit sets LimitNOFILE once"
np_expect_eq "$(grep -c '^LimitNOFILE=' "$NUMAPLACE_SOURCE/etc/numaplaced.service")" 1 "LimitNOFILE lines"
np_end_case

np_helper_alone
np_helper_command
prlimit --nofile=$limit:$limit -- "${np_helper_cmd[@]}" >>"$np_dir/helper/numaplaced.out" 2>&1 &
np_helper_pid=$!
np_wait_for 15 np_helper_answers || np_die "numaplaced did not answer: $(tail -5 "$np_dir/helper/numaplaced.log")"
sock="$np_dir/helper/numaplaced.sock"
log="$np_dir/helper/numaplaced.log"
spool="$np_dir/helper/spool"
perf_events=$(sed -n 's/.*perf: \([0-9]*\) of [0-9]* events count.*/\1/p' "$log" | tail -1)

# The churn (lib/descriptor_churn.py): STEPS processes, each registered as a step of its own,
# sampled for two intervals, then ended and killed. One JSON line: what every request got.
churn=$(python3 "$NUMAPLACE_SOURCE/test/integration/lib/descriptor_churn.py" "$sock" "$steps" "$owner_uid" 7000)
[ -n "$churn" ] || np_die "the churn did not finish"
registered=$(jq '.ok | length' <<<"$churn")
refused=$(jq '.refused | length' <<<"$churn")
proc_only=$(jq '[.backends[] | select(.[0] == "proc")] | length' <<<"$churn")
echo "descriptors: $registered of $steps registered, $refused refused, $proc_only on /proc alone, perf events here: ${perf_events:-none}"
jq -r '.refused[0] // empty' <<<"$churn"

np_case "every registration is answered; a refusal names the descriptor budget"
np_expect_eq "$((registered + refused))" "$steps" "answers"
np_expect_eq "$(jq '[.refused[] | select(test("descriptor budget: .* kept for reports") | not)] | length' <<<"$churn")" 0 \
  "refusals that do not name the budget"
# /proc-only steps need no descriptor kept: with the reserve counted right none is refused
# (before the descriptor budget, 298 of 500 were).
np_expect_eq "$refused" 0 "refusals at $limit descriptors"
np_end_case

np_case "a step without room for its perf counters runs on /proc alone and says why"
if [ "${perf_events:-0}" -gt 0 ]; then
  [ "$proc_only" -gt 0 ] || np_fail "every step kept its perf counters at a $limit-descriptor limit"
  np_expect_eq "$(jq '[.backends[] | select(.[0] == "proc" and (.[1] | test("descriptor budget") | not))] | length' <<<"$churn")" 0 \
    "steps on /proc alone without the budget as the reason"
  np_expect_match "runs on /proc alone|no room for [0-9]+ perf counters" "$(jq -r '.backends[][1]' <<<"$churn")"
else
  echo "  (no perf event counts on this machine: every step is on /proc anyway; only refusals are checked)"
fi
np_end_case

np_case "the memory controllers count, or status and the log say why not (AMD: libpfm4 cannot)"
mc=$(jq -r '.memory_controllers' <<<"$churn")
if grep -q '^vendor_id.*AuthenticAMD' /proc/cpuinfo; then
  np_expect_match '^unavailable: no uncore memory-controller PMU \(.*it has no AMD UMC or DF PMU\)' "$mc"
  np_expect_match 'memory controllers: unavailable: .*no AMD UMC or DF PMU' "$(cat "$log")"
else
  np_expect_match '^(counted|unavailable: .+)$' "$mc"
fi
np_end_case

np_case "no report is lost: every registered step has its report"
np_expect_eq "$(jq '.ended' <<<"$churn")" "$registered" "step_end answered ok"
np_expect_eq "$(jq -r '.end_errors[]' <<<"$churn" | head -3)" "" "step_end errors"
missing=0
for job in $(jq -r '.ok[]' <<<"$churn"); do
  ls "$spool/$job".*.json >/dev/null 2>&1 || missing=$((missing + 1))
done
np_expect_eq "$missing" 0 "reports missing from the spool"
if [ "$proc_only" -gt 0 ]; then
  job=$(jq -r '[.backends | to_entries[] | select(.value[0] == "proc" and .value[1] != "") | .key][0]' <<<"$churn")
  np_expect_match "descriptor budget" "$(jq -r '.sampling.backends_reason // empty' "$spool/$job".*.json)"
fi
np_end_case

np_case "it never ran out of descriptors, and still answers"
np_expect_no_match "Too many open files|EMFILE" "$(cat "$log")"
np_run np_helper_answers
np_expect_rc 0
np_end_case

np_helper_stop
np_finish
