/* A report as text for `numaplace report --steps` (np_report_print), with its hindsight on
 * --numa-policy=auto, and the one figure printer, which summaries and `numaplace status` use too.
 * Hindsight reads the launch's facts as the task's "auto" member records them, the sensitivity
 * measured as class_prediction records it, and asks the rule again; the reason and class_source
 * lines are for people and never read back. */
#include "numaplace/auto.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"
#include "summary_priv.h"

int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st)
{
    const char *unit = st->unit ? st->unit : "", *why = jstr(f, "unavailable");
    double v;

    if (jfig(f, "value", &v)) {
        if (st->conv == 'f')
            fprintf(out, "%-*.*f%s", st->width, st->precision, v * st->scale, unit);
        else
            fprintf(out, "%-*.*g%s", st->width, st->precision, v * st->scale, unit);
        return 1;
    }
    if (why) {
        if (st->brief)
            fprintf(out, "%-*s", st->width, "unavailable");
        else
            fprintf(out, "unavailable (%s)", why);
        return 0;
    }
    if (st->none)
        fprintf(out, "%s", st->none);
    return -1;
}

int np_auto_hindsight(json_t *r, struct np_auto_hindsight *out)
{
    json_t *policy = json_object_get(r, "policy"), *tasks = json_object_get(policy, "tasks"), *task;
    const char *requested = jstr(policy, "requested"), *label;
    char source[192];
    struct np_class_prediction measured;
    struct np_applied_auto facts = {0};
    struct np_auto_input in = {0};
    struct np_auto_choice again;
    json_t *found;
    size_t i;

    memset(out, 0, sizeof(*out));
    /* a step launched with auto (its policy.requested), its first task with the facts; a report
     * from before them has none, whose verdict is unavailable */
    if (!requested || strcmp(requested, "auto") != 0 || !json_array_size(tasks))
        return 0;
    found = json_array_get(tasks, 0);
    json_array_foreach(tasks, i, task)
    {
        if (json_object_get(task, "auto")) {
            found = task;
            break;
        }
    }
    snprintf(out->made, sizeof(out->made), "%s", jstr_or(found, "policy", "?"));
    if (np_proto_applied_auto_from_json(json_object_get(found, "auto"), &facts, NULL) < 0) {
        snprintf(out->used, sizeof(out->used), "unknown");
        snprintf(out->why, sizeof(out->why),
                 "unavailable: the report has no auto facts (a task's \"auto\" member, absent "
                 "from reports before it); its reason line is for people and is not read back");
        return 1;
    }
    snprintf(out->used, sizeof(out->used), "%s", facts.sensitivity);
    if (np_class_prediction_from_json(json_object_get(r, "class_prediction"), &measured) != 0 ||
        !measured.known) {
        snprintf(out->why, sizeof(out->why),
                 "unavailable: no sensitivity measured on this run (the report has no "
                 "class_prediction: the model classes unlabelled steps with class_default=auto "
                 "and counters; reports before numaplace.report/1.1 say it only in words)");
        return 1;
    }
    out->measured = true;
    in.user_given = true;
    in.user = measured.sensitive ? NP_SENSITIVITY_HIGH : NP_SENSITIVITY_LOW;
    /* the launch as the task's "auto" member records it (the fields np_auto_choose rested on):
     * the rule depends on the load only through the loaded nodes, so marking those known and
     * loaded gives it the same facts it had */
    in.advice = true;
    in.task_nodes = facts.task_nodes;
    in.allowed_nodes = facts.allowed_nodes;
    for (unsigned n = 0; n < NP_AUTO_MAX_NODES; n++)
        if (facts.loaded_nodes >> n & 1u)
            in.node[n].known = in.node[n].loaded = true;
    np_auto_choose(&in, &again);
    snprintf(out->would, sizeof(out->would), "%s", np_policy_name(again.policy));
    out->differs = strcmp(out->would, out->made) != 0;
    np_class_prediction_text(&measured, source, sizeof(source));
    label = measured.sensitive ? "high" : "low";
    if (out->differs)
        snprintf(out->why, sizeof(out->why),
                 "a later run should get %s: measured %s (%.90s) where auto used %s; label it "
                 "--numa-sensitivity=%s (load as at launch)",
                 out->would, label, source + 6, out->used, label);
    else
        snprintf(out->why, sizeof(out->why),
                 "%s stands: measured %s (%.90s) gives the same choice (load as at launch)",
                 out->made, label, source + 6);
    return 1;
}

/* "  <label> <figure>" through the one figure printer; nothing when it is neither measured nor
 * unavailable. */
static void print_figure(FILE *out, const char *label, json_t *fig, double scale, const char *unit)
{
    char space_unit[32];
    const struct np_figure_style style = {
        .scale = scale, .conv = 'g', .precision = 4, .unit = space_unit};

    if (np_figure_check(fig, NULL) != 0)
        return;
    snprintf(space_unit, sizeof(space_unit), " %s", unit);
    if (json_object_get(fig, "value") || json_object_get(fig, "unavailable")) {
        fprintf(out, "  %-22s ", label);
        np_figure_print(out, fig, &style);
        fputc('\n', out);
    }
}

/* "  <label> unavailable (why)" when @p fig is unavailable: whether it was. */
static bool print_unavailable(FILE *out, const char *label, const json_t *fig)
{
    const char *why = jstr(fig, "unavailable");

    if (why)
        fprintf(out, "  %-22s unavailable (%s)\n", label, why);
    return why != NULL;
}

static void print_nodes(FILE *out, const char *label, json_t *map)
{
    const char *key;
    json_t *v;

    fprintf(out, "    %-8s", label);
    json_object_foreach(map, key, v)
    {
        fprintf(out, " node%s=%.1f MiB", key, (double)json_integer_value(v) / 1048576.0);
    }
    fprintf(out, "%s\n", json_object_size(map) ? "" : " none");
}

int np_report_print(FILE *out, json_t *r)
{
    json_t *cpi = json_object_get(r, "cpi"), *bw = json_object_get(r, "bandwidth");
    json_t *cpu = json_object_get(r, "cpu"), *pages = json_object_get(r, "pages");
    json_t *os = json_object_get(r, "os_interference"), *mig = json_object_get(r, "migrations");
    json_t *samp = json_object_get(r, "sampling"), *perf = json_object_get(r, "perf_counts");
    const char *why, *key;
    struct np_auto_hindsight h;
    json_t *fig;
    size_t i;

    fprintf(out, "job %lld step %s on %s (uid %lld)%s\n", (long long)jint(r, "job_id"),
            jstr(r, "step"), jstr(r, "node"), (long long)jint(r, "uid"),
            json_is_true(json_object_get(r, "complete"))
                ? ""
                : "  [incomplete: the helper stopped before the step ended]");
    fprintf(out, "  %-22s %s .. %s (%.1f s)\n", "time", jstr(r, "start"), jstr(r, "end"),
            jnum(r, "duration_s", 0));
    fprintf(out, "  %-22s %lld every %.3g s (%s)\n", "samples", (long long)jint(samp, "count"),
            jnum(samp, "interval_s", 0), jstr(samp, "backends"));
    fprintf(out, "  %-22s %s, sensitivity %s, class %s, CPUs %s\n", "policy requested",
            jstr(json_object_get(r, "policy"), "requested"), jstr(r, "sensitivity"),
            jstr_or(r, "class", jstr(r, "sensitivity")), jstr(r, "cpus"));
    if ((fig = json_object_get(r, "processes_cut")))
        fprintf(out, "  %-22s %lld sample(s) saw only part of the step: %s\n", "processes left out",
                (long long)jint(fig, "samples"), jstr_or(fig, "reason", "?"));
    if (jstr(samp, "backends_reason"))
        fprintf(out, "  %-22s %s\n", "no perf counters", jstr(samp, "backends_reason"));
    json_array_foreach(json_object_get(json_object_get(r, "policy"), "tasks"), i, fig)
    {
        const char *nodes = jstr(fig, "nodes");
        fprintf(out, "    task %lld pid %lld: %s (mode %s) nodes %s cpus %s%s\n",
                (long long)jint(fig, "task"), (long long)jint(fig, "pid"),
                jstr_or(fig, "policy", "not reported"), jstr_or(fig, "mode", "-"),
                nodes && *nodes ? nodes : "-", jstr_or(fig, "cpus", "-"),
                json_is_true(json_object_get(fig, "ended_before_read"))
                    ? " (ended before numaplaced read its registration: not counted)"
                : json_is_true(json_object_get(fig, "counters_late"))
                    ? " (counted from after its program started)"
                    : "");
    }
    if (np_auto_hindsight(r, &h) == 1)
        fprintf(out, "  %-22s %s\n", "auto hindsight", h.why);
    if (!print_unavailable(out, "CPI", cpi))
        fprintf(out, "  %-22s mean %.3f, median %.3f, p95 %.3f\n", "CPI", jnum(cpi, "mean", 0),
                jnum(cpi, "median", 0), jnum(cpi, "p95", 0));
    if ((why = jstr(cpi, "multiplexed")))
        fprintf(out, "  %-22s %s\n", "", why);
    if ((why = jstr(cpi, "note")))
        fprintf(out, "  %-22s %s\n", "", why);
    if (!print_unavailable(out, "bandwidth", bw)) {
        fprintf(out, "  %-22s mean %.1f MB/s, peak %.1f MB/s\n", "bandwidth",
                jnum(bw, "mean_bytes_per_s", 0) / 1e6, jnum(bw, "peak_bytes_per_s", 0) / 1e6);
        json_object_foreach(json_object_get(bw, "per_node"), key, fig)
        {
            fprintf(out, "    node%s mean %.1f MB/s, peak %.1f MB/s\n", key,
                    jnum(fig, "mean_bytes_per_s", 0) / 1e6, jnum(fig, "peak_bytes_per_s", 0) / 1e6);
        }
    }
    if (!print_unavailable(out, "CPU time", cpu))
        fprintf(out, "  %-22s user %.2f s, system %.2f s\n", "CPU time", jnum(cpu, "user_s", 0),
                jnum(cpu, "system_s", 0));
    json_object_foreach(perf, key, fig)
    {
        char label[40];
        snprintf(label, sizeof(label), "perf %s", key);
        print_figure(out, label, fig, 1, strcmp(key, "task_clock_ns") == 0 ? "ns" : "");
    }
    if (!print_unavailable(out, "pages per node", pages)) {
        fprintf(out, "  %-22s (%lld readings)\n", "pages per node",
                (long long)jint(pages, "samples"));
        print_nodes(out, "start", json_object_get(pages, "start_bytes"));
        print_nodes(out, "end", json_object_get(pages, "end_bytes"));
        print_nodes(out, "peak", json_object_get(pages, "peak_bytes"));
    }
    fprintf(out, "  %-22s (%s)\n", "migrated", jstr(mig, "source"));
    print_nodes(out, "in", json_object_get(mig, "pages_in_bytes"));
    print_nodes(out, "out", json_object_get(mig, "pages_out_bytes"));
    json_array_foreach(json_object_get(mig, "requests"), i, fig)
    {
        fprintf(out, "    %s node %lld -> %lld: %lld pages moved (%s)\n", jstr(fig, "trigger"),
                (long long)jint(fig, "from"), (long long)jint(fig, "to"),
                (long long)jint(fig, "moved_pages"), jstr(fig, "reason"));
    }
    fprintf(out, "  OS interference\n");
    print_figure(out, "  kernel time share", json_object_get(os, "kernel_time_share"), 100, "%");
    print_figure(out, "  involuntary cs", json_object_get(os, "involuntary_cs_per_s"), 1, "/s");
    fig = json_object_get(os, "interrupts_on_cpus");
    if (!print_unavailable(out, "  interrupts, softirqs", fig))
        fprintf(out, "    %-20s %lld interrupts, %lld softirqs on its CPUs\n",
                "interrupts, softirqs", (long long)jint(fig, "count"),
                (long long)jint(json_object_get(os, "softirqs_on_cpus"), "count"));
    print_figure(out, "  other CPU time", json_object_get(os, "other_cpu_time_s"), 1, "s");
    fig = json_object_get(r, "numa_balancing");
    if (!print_unavailable(out, "kernel NUMA balancing", fig) && fig)
        fprintf(out, "  %-22s %lld pages migrated, %lld NUMA faults\n", "kernel NUMA balancing",
                (long long)jint(fig, "pages_migrated"), (long long)jint(fig, "faults"));
    fig = json_object_get(r, "helper");
    fprintf(out, "  %-22s %.4f s CPU\n", "helper cost", jnum(fig, "cpu_time_s", 0));
    if ((why = jstr(fig, "shared_cpus")) && *why)
        fprintf(out, "  %-22s shared with this step: CPUs %s (the helper runs on %s)\n",
                "helper CPUs", why, jstr(fig, "cpus"));
    else if (why)
        fprintf(out, "  %-22s %s, none of this step's\n", "helper CPUs", jstr(fig, "cpus"));
    return ferror(out) ? -EIO : 0;
}
