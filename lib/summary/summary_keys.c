/* The JSON names of each struct's members, indexed by their member ids (summary_priv.h): one
 * table each for the encoder and the decoder, below both. */
#include "summary_priv.h"

const char *const np_sumk_sum[NP_SUM_NMEMBERS] = {
    "schema",         "job_id",        "uid",     "user",    "policy_requested",
    "policy_applied", "sensitivity",   "start",   "end",     "nodes",
    "totals",         "missing_nodes", "skipped", "trimmed", "nodes_folded",
};
const char *const np_sumk_node[NP_NODE_NMEMBERS] = {
    "steps",       "step_count",       "duration_s",        "start",
    "end",         "policy_requested", "policy_applied",    "sensitivity",
    "local_share", "pages_peak_bytes", "pages_end_bytes",   "cpi",
    "bandwidth",   "migrations",       "pages_moved_bytes", "os_interference",
    "timeline",
};
const char *const np_sumk_step[NP_STEP_NMEMBERS] = {
    "step",
    "policy",
    "applied",
    "sensitivity",
    "cpus",
    "complete",
    "duration_s",
    "local_nodes",
    "start",
    "end",
    "class",
    "class_source",
    "cpi",
    "llc_mpki",
    "bandwidth_bytes_per_s",
    "counters_unavailable",
    "helper_shared_cpus",
};
const char *const np_sumk_migr[NP_MIGR_NMEMBERS] = {
    "in_bytes", "out_bytes",    "requests", "dry_run_requests",
    "moving_s", "failed_pages", "triggers", "source",
};
const char *const np_sumk_trigger[3] = {"requests", "dry_run", "moved_pages"};
const char *const np_sumk_os[NP_OS_NMEMBERS] = {
    "kernel_time_share", "involuntary_cs_per_s", "interrupts_per_s",
    "softirqs_per_s",    "other_cpu_time_s",
};
const char *const np_sumk_tl[NP_TL_NMEMBERS] = {
    "t",      "node_bytes",       "bandwidth_bytes_per_s", "cpi",
    "events", "every_nth_sample", "bandwidth_note",        "cpi_note",
    "step",   "duration_s",
};
const char *const np_sumk_event[2] = {"t", "label"};
const char *const np_sumk_skip[3] = {"node", "step", "reason"};
const char *const np_sumk_trim[2] = {"what", "stored_bytes_before"};
const char *const np_sumk_totals[NP_TOT_NMEMBERS] = {
    "nodes",
    "steps",
    "missing_nodes",
    "skipped",
    "pages_moved_bytes",
    "migration_requests",
    "local_share",
    "kernel_time_share",
};
