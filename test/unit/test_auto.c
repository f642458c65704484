/* --numa-policy=auto: the rule on hand-made facts, its threshold, np_place on the fixture
 * machines, and the advice as the plugin decodes it. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/auto.h"
#include "numaplace/placement.h"
#include "numaplace/protocol.h"

enum { NO = -1, LOW = NP_SENSITIVITY_LOW, HIGH = NP_SENSITIVITY_HIGH };

/* Masks: bit n = node n. "known" and "loaded" describe the advice's nodes. */
static const struct {
    int user, history;
    bool site_high, advice;
    uint64_t task, allowed, known, loaded;
    enum np_policy policy;
    enum np_auto_source source;
    const char *reason;
} rule_cases[] = {
    /* 0-2: low from any source stays local, even on a loaded node */
    {LOW, NO, false, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "auto: local: sensitivity low (user)"},
    {NO, LOW, false, true, 0x3, 0xf, 0xf, 0x1, NP_POLICY_LOCAL, NP_AUTO_SOURCE_HISTORY,
     "sensitivity low (history)"},
    {LOW, HIGH, false, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "low (user)"}, /* the user's label outranks the history */
    /* 3: high on a loaded node with idle ones allowed: interleave-all */
    {HIGH, NO, false, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_INTERLEAVE_ALL, NP_AUTO_SOURCE_USER,
     "auto: interleave-all: sensitivity high (user), node 0 loaded"},
    /* 4: history high, node 2 loaded */
    {NO, HIGH, false, true, 0x4, 0xf, 0xf, 0x4, NP_POLICY_INTERLEAVE_ALL, NP_AUTO_SOURCE_HISTORY,
     "node 2 loaded"},
    /* 5: high on an unloaded node: local */
    {HIGH, NO, false, true, 0x1, 0xf, 0xf, 0x2, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "auto: local: sensitivity high (user), node 0 not loaded"},
    /* 6: every allowed node loaded: nowhere better, local */
    {HIGH, NO, false, true, 0x1, 0x3, 0xf, 0x3, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "no other allowed node is less loaded"},
    /* 7: the only other allowed node is not measured: it counts as not loaded */
    {HIGH, NO, false, true, 0x1, 0x3, 0x1, 0x1, NP_POLICY_INTERLEAVE_ALL, NP_AUTO_SOURCE_USER,
     "node 0 loaded"},
    /* 8: the task's node not measured: not loaded as far as anyone knows */
    {HIGH, NO, false, true, 0x1, 0xf, 0xe, 0x0, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "node 0's traffic not measured"},
    /* 9-10: unknown sensitivity: local alone on one node, even a loaded one */
    {NO, NO, false, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_LOCAL, NP_AUTO_SOURCE_NONE,
     "auto: local: sensitivity unknown, node 0 loaded"},
    {NO, NO, false, true, 0x2, 0xf, 0xf, 0x0, NP_POLICY_LOCAL, NP_AUTO_SOURCE_NONE,
     "node 1 not loaded"},
    /* 11-12: spanning nodes, unknown or high: interleave over them */
    {NO, NO, false, true, 0x3, 0xf, 0xf, 0x0, NP_POLICY_INTERLEAVE, NP_AUTO_SOURCE_NONE,
     "auto: interleave: sensitivity unknown, CPUs span nodes 0,1"},
    {HIGH, NO, false, false, 0xc, 0xf, 0, 0, NP_POLICY_INTERLEAVE, NP_AUTO_SOURCE_USER,
     "CPUs span nodes 2,3"},
    /* 13: no advice: the static choice, saying why */
    {HIGH, NO, false, false, 0x1, 0xf, 0, 0, NP_POLICY_LOCAL, NP_AUTO_SOURCE_USER,
     "node 0's load unknown (numaplaced did not answer"},
    /* 14: history is advice: without an answer it is not used */
    {NO, HIGH, false, false, 0x1, 0xf, 0, 0, NP_POLICY_LOCAL, NP_AUTO_SOURCE_NONE,
     "sensitivity unknown"},
    /* 15-16: a site default of high counts after the history */
    {NO, NO, true, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_INTERLEAVE_ALL, NP_AUTO_SOURCE_SITE,
     "sensitivity high (site default)"},
    {NO, LOW, true, true, 0x1, 0xf, 0xf, 0x1, NP_POLICY_LOCAL, NP_AUTO_SOURCE_HISTORY,
     "low (history)"},
};

START_TEST(test_rule)
{
    struct np_auto_input in = {0};
    struct np_auto_choice out;

    in.user_given = rule_cases[_i].user != NO;
    in.user = in.user_given ? (enum np_sensitivity)rule_cases[_i].user : NP_SENSITIVITY_LOW;
    in.history_known = rule_cases[_i].history != NO;
    in.history =
        in.history_known ? (enum np_sensitivity)rule_cases[_i].history : NP_SENSITIVITY_LOW;
    in.site_given = rule_cases[_i].site_high;
    in.site = NP_SENSITIVITY_HIGH;
    in.advice = rule_cases[_i].advice;
    snprintf(in.no_advice, sizeof(in.no_advice), "numaplaced did not answer: refused");
    in.task_nodes = rule_cases[_i].task;
    in.allowed_nodes = rule_cases[_i].allowed;
    for (unsigned n = 0; n < 4; n++) {
        in.node[n].known = rule_cases[_i].known >> n & 1u;
        in.node[n].loaded = rule_cases[_i].loaded >> n & 1u;
        in.node[n].utilisation = in.node[n].loaded ? 0.75 : 0.10;
    }
    ck_assert_int_eq(np_auto_choose(&in, &out), 0);
    ck_assert_msg(out.policy == rule_cases[_i].policy, "policy %s, expected %s (%s)",
                  np_policy_name(out.policy), np_policy_name(rule_cases[_i].policy), out.reason);
    ck_assert_int_eq(out.source, rule_cases[_i].source);
    ck_assert_msg(strstr(out.reason, rule_cases[_i].reason), "reason '%s' lacks '%s'", out.reason,
                  rule_cases[_i].reason);
    ck_assert_ptr_null(strchr(out.reason, '\n'));
}
END_TEST

/* auto_load=cpu-busy: a node loaded by the proxy interleaves a high task away, and the reason
 * says it was a proxy; a low task stays local on it. */
START_TEST(test_rule_cpu_busy_proxy)
{
    struct np_auto_input in = {0};
    struct np_auto_choice out;

    in.user_given = true;
    in.user = NP_SENSITIVITY_HIGH;
    in.advice = true;
    in.task_nodes = 0x1;
    in.allowed_nodes = 0xf;
    for (unsigned n = 0; n < 4; n++) {
        in.node[n].known = in.node[n].cpu_busy = true;
        in.node[n].loaded = n == 0;
        in.node[n].utilisation = n == 0 ? 0.98 : 0.02;
    }
    ck_assert_int_eq(np_auto_choose(&in, &out), 0);
    ck_assert_int_eq(out.policy, NP_POLICY_INTERLEAVE_ALL);
    ck_assert_str_eq(out.reason, "auto: interleave-all: sensitivity high (user), node 0 loaded by "
                                 "proxy (its CPUs 98% busy; no memory counter)");
    in.user = NP_SENSITIVITY_LOW;
    ck_assert_int_eq(np_auto_choose(&in, &out), 0);
    ck_assert_int_eq(out.policy, NP_POLICY_LOCAL);
    ck_assert_str_eq(out.reason, "auto: local: sensitivity low (user)");
}
END_TEST

START_TEST(test_threshold)
{
    /* 1 / (1 - u) = r at u = 1 - 1/r */
    ck_assert_double_eq_tol(np_auto_threshold(2.0), 0.5, 1e-12);
    ck_assert_double_eq_tol(np_auto_threshold(1.25), 0.2, 1e-12);
    ck_assert_double_eq_tol(np_auto_threshold(1.0), 0.0, 1e-12);
    ck_assert(isnan(np_auto_threshold(0.9)));
    ck_assert(isnan(np_auto_threshold(NAN)));
    ck_assert(np_auto_loaded(60e9, 100e9, 0.5));
    ck_assert(!np_auto_loaded(50e9, 100e9, 0.5)); /* at the threshold: not above it */
    ck_assert(!np_auto_loaded(60e9, 0, 0.5));
    ck_assert(!np_auto_loaded(60e9, 100e9, NAN));
    ck_assert(!np_auto_loaded(NAN, 100e9, 0.5));
    ck_assert(!np_auto_loaded(60e9, 100e9, 0)); /* a threshold of 0 never fires */
    ck_assert_str_eq(np_auto_source_name(NP_AUTO_SOURCE_HISTORY), "history");
}
END_TEST

/* np_place resolves auto on the fixture machines: the choice, its nodes and the two lines. */
static const struct {
    const char *fixture, *task, *step, *allowed;
    int user;
    uint64_t loaded;
    enum np_policy chosen;
    enum np_mode mode;
    const char *nodes, *reason;
} place_cases[] = {
    {"sandman", "0-1", NULL, NULL, HIGH, 0x1, NP_POLICY_INTERLEAVE_ALL, NP_MODE_INTERLEAVE, "0-3",
     "auto: interleave-all: sensitivity high (user), node 0 loaded (75% of its bandwidth); "
     "interleave-all over nodes 0-3"},
    {"sandman", "0-1", NULL, "0-1", HIGH, 0x1, NP_POLICY_INTERLEAVE_ALL, NP_MODE_INTERLEAVE, "0-1",
     "interleave-all over nodes 0-1"}, /* the cpuset allows two nodes */
    {"sandman", "0-1", NULL, NULL, LOW, 0x1, NP_POLICY_LOCAL, NP_MODE_PREFERRED, "0",
     "auto: local: sensitivity low (user); local: preferred node 0"},
    {"sandman", "14-17", "0-31", NULL, NO, 0x0, NP_POLICY_INTERLEAVE, NP_MODE_INTERLEAVE, "0-1",
     "auto: interleave: sensitivity unknown, CPUs span nodes 0,1; interleave over nodes 0-1"},
    {"single", "0-3", NULL, NULL, HIGH, 0x1, NP_POLICY_LOCAL, NP_MODE_PREFERRED, "0",
     "no other allowed node is less loaded"},
};

START_TEST(test_place_auto)
{
    char rel[64];
    struct np_topology *topo = NULL;
    struct np_placement out;
    struct np_auto_input facts = {0};
    hwloc_bitmap_t task = np_test_set(place_cases[_i].task);
    hwloc_bitmap_t step = np_test_set(place_cases[_i].step);
    hwloc_bitmap_t allowed = np_test_set(place_cases[_i].allowed);
    struct np_place_input in = {.policy = NP_POLICY_AUTO,
                                .task_cpus = task,
                                .step_cpus = step,
                                .mems_allowed = allowed,
                                .have_preferred_many = true,
                                .auto_input = &facts};

    facts.user_given = place_cases[_i].user != NO;
    facts.user = facts.user_given ? (enum np_sensitivity)place_cases[_i].user : 0;
    facts.advice = true;
    for (unsigned n = 0; n < 4; n++) {
        facts.node[n].known = true;
        facts.node[n].loaded = place_cases[_i].loaded >> n & 1u;
        facts.node[n].utilisation = facts.node[n].loaded ? 0.75 : 0.05;
    }
    snprintf(rel, sizeof(rel), "topology/%s.xml", place_cases[_i].fixture);
    ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture(rel), NULL), 0);
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_int_eq(out.policy, NP_POLICY_AUTO);
    ck_assert_msg(out.chosen == place_cases[_i].chosen, "chose %s (%s)", np_policy_name(out.chosen),
                  out.reason);
    ck_assert_int_eq(out.mode, place_cases[_i].mode);
    ck_assert_str_eq(np_test_list(out.nodes), place_cases[_i].nodes);
    ck_assert_msg(strstr(out.reason, place_cases[_i].reason), "reason '%s' lacks '%s'", out.reason,
                  place_cases[_i].reason);
    ck_assert_ptr_nonnull(strstr(out.reason, out.auto_choice.reason));
    np_placement_fini(&out);
    hwloc_bitmap_free(task);
    hwloc_bitmap_free(step);
    hwloc_bitmap_free(allowed);
    np_topology_free(topo);
}
END_TEST

/* The advice is input: every member is checked before a task trusts it. */
static const struct {
    const char *reply;
    int rc;
    const char *msg;
} advice_cases[] = {
    {"{\"advice\":{\"nodes\":[{\"node\":0,\"source\":\"uncore\",\"loaded\":true,"
     "\"utilisation\":0.8},{\"node\":1,\"source\":\"proxy\",\"loaded\":true},"
     "{\"node\":2,\"source\":\"proxy\",\"loaded\":true,\"load_from\":\"cpu-busy\","
     "\"utilisation\":0.97},{\"node\":3,\"source\":\"uncore\",\"loaded\":false,"
     "\"load_from\":\"cpu-busy\"}],"
     "\"threshold\":0.52,\"capacity_from\":\"machine profile\","
     "\"history\":{\"sensitivity\":\"high\",\"runs\":3}}}",
     0, ""},
    {"{\"advice\":{\"nodes\":[]}}", 0, ""},
    {"{}", -EPROTO, "advice"},
    {"{\"advice\":{\"nodes\":{}}}", -EPROTO, "must be an array"},
    {"{\"advice\":{\"nodes\":[{\"node\":64,\"source\":\"uncore\",\"loaded\":true}]}}", -EPROTO,
     "node 64 is not from 0 to 63"},
    {"{\"advice\":{\"nodes\":[{\"node\":-1,\"source\":\"uncore\",\"loaded\":true}]}}", -EPROTO,
     "node -1"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"uncore\",\"loaded\":true},"
     "{\"node\":1,\"source\":\"uncore\",\"loaded\":false}]}}",
     -EPROTO, "names node 1 twice"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"guess\",\"loaded\":true}]}}", -EPROTO,
     "accepted: uncore, misses, proxy, unavailable"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"misses\",\"loaded\":true,"
     "\"utilisation\":-0.5}]}}",
     -EPROTO, "utilisation must be a number"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"misses\",\"loaded\":1}]}}", -EPROTO,
     "advice node 0"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"misses\",\"loaded\":true,\"x\":1}]}}",
     -EPROTO, "advice node 0"},
    {"{\"advice\":{\"nodes\":[],\"threshold\":1.5}}", -EPROTO, "threshold"},
    {"{\"advice\":{\"nodes\":[{\"node\":1,\"source\":\"proxy\",\"loaded\":true,"
     "\"load_from\":\"guess\"}]}}",
     -EPROTO, "load_from \"guess\"; accepted: cpu-busy"},
    {"{\"advice\":{\"nodes\":[],\"history\":{\"sensitivity\":\"medium\",\"runs\":1}}}", -EPROTO,
     "sensitivity must be one of high, low"},
    {"{\"advice\":{\"nodes\":[],\"history\":{\"sensitivity\":\"low\",\"runs\":0}}}", -EPROTO,
     "runs from 1"},
};

START_TEST(test_advice_decode)
{
    struct np_proto_hint advice;
    struct np_err err = {0};
    json_t *reply = json_loads(advice_cases[_i].reply, 0, NULL);

    ck_assert_ptr_nonnull(reply);
    ck_assert_int_eq(np_proto_hint_decode(reply, &advice, &err), advice_cases[_i].rc);
    if (advice_cases[_i].rc < 0)
        ck_assert_msg(strstr(err.msg, advice_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                      advice_cases[_i].msg);
    if (_i == 0) {
        ck_assert(advice.node[0].present && advice.node[0].measured && advice.node[0].loaded);
        ck_assert_double_eq_tol(advice.node[0].utilisation, 0.8, 1e-12);
        /* a proxy only ranks jobs: never counted as measured or loaded */
        ck_assert(advice.node[1].present && !advice.node[1].measured && !advice.node[1].loaded);
        ck_assert(!advice.node[1].cpu_busy);
        /* ... unless the site chose the CPU-busy proxy and the node says it is one */
        ck_assert(advice.node[2].cpu_busy && !advice.node[2].measured && advice.node[2].loaded);
        ck_assert_double_eq_tol(advice.node[2].utilisation, 0.97, 1e-12);
        ck_assert(advice.node[3].measured && !advice.node[3].cpu_busy); /* measured wins */
        ck_assert(!advice.node[4].present);
        ck_assert(advice.history_known);
        ck_assert_str_eq(advice.history, "high");
        ck_assert_uint_eq(advice.history_runs, 3);
        ck_assert_double_eq_tol(advice.threshold, 0.52, 1e-12);
    }
    json_decref(reply);
}
END_TEST

/* The request round-trips, and a bad one is refused naming its field. */
START_TEST(test_advise_request)
{
    struct np_proto_request req = {.op = NP_OP_ADVISE}, back;
    struct np_err err = {0};
    char *line;
    static const char bad[] = "{\"v\":1,\"op\":\"advise\",\"job\":1,\"step\":0}";

    req.advise.job_id = 42;
    req.advise.step_id = 7;
    req.advise.uid = 1000;
    snprintf(req.advise.name, sizeof(req.advise.name), "lbm run");
    line = np_proto_encode(&req);
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &back, &err), 0);
    ck_assert_int_eq(back.op, NP_OP_ADVISE);
    ck_assert_uint_eq(back.advise.job_id, 42);
    ck_assert_uint_eq(back.advise.step_id, 7);
    ck_assert_uint_eq(back.advise.uid, 1000);
    ck_assert_str_eq(back.advise.name, "lbm run");
    free(line);
    ck_assert_int_eq(np_proto_decode(bad, sizeof(bad) - 1, &back, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "\"uid\""));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("auto");
    TCase *tc = tcase_create("auto");

    tcase_add_loop_test(tc, test_rule, 0, sizeof(rule_cases) / sizeof(rule_cases[0]));
    tcase_add_test(tc, test_threshold);
    tcase_add_test(tc, test_rule_cpu_busy_proxy);
    tcase_add_loop_test(tc, test_place_auto, 0, sizeof(place_cases) / sizeof(place_cases[0]));
    tcase_add_loop_test(tc, test_advice_decode, 0, sizeof(advice_cases) / sizeof(advice_cases[0]));
    tcase_add_test(tc, test_advise_request);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
