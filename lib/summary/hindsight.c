/* Hindsight on --numa-policy=auto from a report (numaplace/hindsight.h): the launch's facts read
 * back from the reason line np_auto_choose wrote, the measured sensitivity put in, and the rule
 * asked again. */
#include "numaplace/hindsight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/auto.h"

/* "0,2" -> bits 0 and 2 */
static uint64_t node_mask(const char *list)
{
    uint64_t mask = 0;

    while (*list >= '0' && *list <= '9') {
        char *end;
        const unsigned long n = strtoul(list, &end, 10);
        if (n < NP_AUTO_MAX_NODES)
            mask |= UINT64_C(1) << n;
        list = *end == ',' ? end + 1 : end;
    }
    return mask;
}

/* The launch as the reason line tells it: the task's nodes, its node's load, whether another
 * node was free to spread to. */
static void launch_facts(const char *reason, struct np_auto_input *in)
{
    const char *p;
    unsigned node;

    in->advice = strstr(reason, "'s load unknown (") == NULL;
    in->allowed_nodes = ~UINT64_C(0);
    if ((p = strstr(reason, "CPUs span nodes ")) != NULL) {
        in->task_nodes = node_mask(p + strlen("CPUs span nodes "));
        return;
    }
    if ((p = strstr(reason, ", node ")) == NULL || sscanf(p, ", node %u", &node) != 1 ||
        node >= NP_AUTO_MAX_NODES)
        return; /* "CPUs' node unknown", or a low label that said nothing of the load */
    in->task_nodes = UINT64_C(1) << node;
    in->node[node].known = strstr(p, "not measured") == NULL && in->advice;
    in->node[node].loaded = strstr(p, " not loaded") == NULL && strstr(p, " loaded") != NULL;
    if (strstr(reason, "no other allowed node is less loaded"))
        in->allowed_nodes = in->task_nodes;
}

int np_auto_hindsight(json_t *r, struct np_auto_hindsight *out)
{
    json_t *tasks = json_object_get(json_object_get(r, "policy"), "tasks"), *task;
    const char *reason = NULL, *made = NULL, *source, *p;
    struct np_auto_input in = {0};
    struct np_auto_choice again;
    size_t i;

    memset(out, 0, sizeof(*out));
    json_array_foreach(tasks, i, task)
    {
        const char *line = json_string_value(json_object_get(task, "reason"));
        if (line && strncmp(line, "auto: ", 6) == 0) {
            reason = line;
            made = json_string_value(json_object_get(task, "policy"));
            break;
        }
    }
    if (!reason)
        return 0;
    snprintf(out->made, sizeof(out->made), "%s", made ? made : "?");
    p = strstr(reason, "sensitivity ");
    snprintf(out->used, sizeof(out->used), "%s",
             !p                                        ? "unknown"
             : strncmp(p, "sensitivity high", 16) == 0 ? "high"
             : strncmp(p, "sensitivity low", 15) == 0  ? "low"
                                                       : "unknown");
    source = json_string_value(json_object_get(r, "class_source"));
    if (!source || strncmp(source, "auto: predicted", 15) != 0) {
        snprintf(out->why, sizeof(out->why),
                 "unavailable: no sensitivity measured on this run (the model classes unlabelled "
                 "steps with class_default=auto and hardware counters)");
        return 1;
    }
    out->measured = true;
    in.user_given = true;
    in.user = strstr(source, ": not sensitive") ? NP_SENSITIVITY_LOW : NP_SENSITIVITY_HIGH;
    launch_facts(reason, &in);
    if (!in.task_nodes) { /* a known-low task: auto did not look at the load */
        const bool high = in.user == NP_SENSITIVITY_HIGH;
        out->differs = high && strcmp(out->used, "high") != 0;
        snprintf(out->why, sizeof(out->why), "measured %s (%.90s) where auto used %s; %s",
                 high ? "high" : "low", source + 6, out->used,
                 out->differs ? "label it --numa-sensitivity=high: a later run is interleaved "
                                "when its node is loaded at launch (this one's load was not "
                                "looked at)"
                              : "the choice stands");
        return 1;
    }
    np_auto_choose(&in, &again);
    snprintf(out->would, sizeof(out->would), "%s", np_policy_name(again.policy));
    out->differs = strcmp(out->would, out->made) != 0;
    if (out->differs)
        snprintf(out->why, sizeof(out->why),
                 "a later run should get %s: measured %s (%.90s) where auto used %s; label it "
                 "--numa-sensitivity=%s (load as at launch)",
                 out->would, in.user == NP_SENSITIVITY_HIGH ? "high" : "low", source + 6, out->used,
                 in.user == NP_SENSITIVITY_HIGH ? "high" : "low");
    else
        snprintf(out->why, sizeof(out->why),
                 "%s stands: measured %s (%.90s) gives the same choice (load as at launch)",
                 out->made, in.user == NP_SENSITIVITY_HIGH ? "high" : "low", source + 6);
    return 1;
}
