/* Hindsight on --numa-policy=auto from a report (numaplace/hindsight.h): the launch's facts as
 * the task's "auto" member records them, the sensitivity measured as class_prediction records it
 * put in, and the rule asked again. The reason and class_source lines are for people and never
 * read back. */
#include "numaplace/hindsight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/auto.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"

/* The launch as the task's "auto" member records it (the fields np_auto_choose rested on). The
 * rule depends on the load only through the loaded nodes, so marking those known and loaded
 * gives it the same facts it had. */
static void launch_facts(const struct np_applied_auto *facts, struct np_auto_input *in)
{
    in->advice = true;
    in->task_nodes = facts->task_nodes;
    in->allowed_nodes = facts->allowed_nodes;
    for (unsigned n = 0; n < NP_AUTO_MAX_NODES; n++)
        if (facts->loaded_nodes >> n & 1u)
            in->node[n].known = in->node[n].loaded = true;
}

int np_auto_hindsight(json_t *r, struct np_auto_hindsight *out)
{
    json_t *policy = json_object_get(r, "policy"), *tasks = json_object_get(policy, "tasks"), *task;
    const char *requested = json_string_value(json_object_get(policy, "requested")), *made, *label;
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
    made = json_string_value(json_object_get(found, "policy"));
    snprintf(out->made, sizeof(out->made), "%s", made ? made : "?");
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
    launch_facts(&facts, &in);
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
