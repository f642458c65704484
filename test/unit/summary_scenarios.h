/* Job summaries built, merged, fitted and printed through the public json_t API, each scenario
 * written out as text: the JSON as `numaplace ... --json` prints it (members in insertion order),
 * the seff-like text, the advice and the stored AdminComment bytes. test_summary_model.c compares
 * them with test/fixtures/data/summary/golden/, which the same scenarios wrote with the code before
 * the summary became C data, and that again before it went back to json_t: neither changed a
 * byte. Needs only numaplace's public API, so
 * the goldens can be written again with any version (NP_GOLDEN_WRITE=dir). */
#ifndef SUMMARY_SCENARIOS_H
#define SUMMARY_SCENARIOS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "numaplace/report.h"
#include "numaplace/summary.h"
#include "numaplace/json_reals.h"

/* The scenario's output so far (open_memstream). */
struct scen_out {
    char *buf;
    size_t len;
    FILE *f;
};

static inline void scen_json(struct scen_out *o, const char *label, const json_t *j)
{
    char *text = j ? json_dumps(j, JSON_INDENT(2) | NP_JSON_REALS) : NULL;

    fprintf(o->f, "== %s\n%s\n", label, text ? text : "(null)");
    free(text);
}

static inline json_t *scen_load(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/summary/%s", dir, name);
    return json_load_file(path, 0, NULL);
}

static inline void scen_add(struct scen_out *o, const char *dir, json_t *s, const char *name)
{
    struct np_err err = {0};
    json_t *r = scen_load(dir, name);
    int rc = np_summary_add_report(s, r, &err);

    fprintf(o->f, "add %s: %d %d %s\n", name, rc, err.code, err.msg);
    json_decref(r);
}

static inline void scen_print(struct scen_out *o, const char *label, json_t *s)
{
    json_t *advice = np_summary_advice(s);

    fprintf(o->f, "== %s text\n", label);
    fprintf(o->f, "rc %d\n", np_summary_print(o->f, s));
    scen_json(o, "advice", advice);
    json_decref(advice);
}

static const char *const scen_files[3][4] = {
    {"job100.0.node1.json", "job100.batch.node1.json", "job100.0.node2.json",
     "job100.0.node4.json"},
    {"job100.0.node4.json", "job100.0.node2.json", "job100.batch.node1.json",
     "job100.0.node1.json"},
    {"job100.batch.node1.json", "job100.0.node4.json", "job100.0.node1.json",
     "job100.0.node2.json"},
};

static inline json_t *scen_fixture_summary(struct scen_out *o, const char *dir, int order,
                                           const char *user)
{
    json_t *s = np_summary_new(100);
    struct np_err err = {0};

    if (user && order == 1)
        np_summary_set_user(s, user, &err);
    if (order != 2)
        fprintf(o->f, "expect %d\n", np_summary_expect_nodes(s, "node1,node2,node3,node4", &err));
    for (int i = 0; i < 4; i++)
        scen_add(o, dir, s, scen_files[order][i]);
    if (order == 2)
        fprintf(o->f, "expect %d\n", np_summary_expect_nodes(s, "node1 node2\nnode3,node4", &err));
    if (user && order != 1)
        np_summary_set_user(s, user, &err);
    return s;
}

/* 0-2: the fixtures in three orders, with and without a user. */
static inline void scen_build(struct scen_out *o, const char *dir, int order)
{
    json_t *s = scen_fixture_summary(o, dir, order % 3, order >= 3 ? "alice" : NULL);

    scen_json(o, "summary", s);
    scen_print(o, "summary", s);
    json_decref(s);
}

/* Fit at shrinking limits: each trim step in turn, then E2BIG. */
static inline void scen_fit(struct scen_out *o, const char *dir, int order)
{
    static const size_t limits[] = {60000, 2600, 2200, 1800, 1500, 1300, 1100, 900, 700, 500, 300};
    json_t *s = scen_fixture_summary(o, dir, order, "bob");

    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        struct np_err err = {0};
        char *stored = NULL, label[64];
        long len = np_summary_fit(s, limits[i], &stored, &err);
        json_t *decoded = NULL;

        fprintf(o->f, "fit %zu: %ld %s\n%s\n", limits[i], len, err.msg, stored ? stored : "-");
        snprintf(label, sizeof(label), "after fit %zu", limits[i]);
        scen_json(o, label, s);
        if (stored && np_stored_decode(stored, &decoded, &err) == 0) {
            scen_json(o, "decoded", decoded);
            scen_print(o, "decoded", decoded);
        }
        json_decref(decoded);
        free(stored);
    }
    json_decref(s);
}

/* Merges: one node's epilog after another's, into a stored (decoded) summary and both ways. */
static inline void scen_merge(struct scen_out *o, const char *dir, int variant)
{
    json_t *a = np_summary_new(100), *b = np_summary_new(100), *decoded = NULL;
    struct np_err err = {0};
    char *stored = NULL;

    np_summary_expect_nodes(a, "node1,node2,node3", &err);
    scen_add(o, dir, a, "job100.0.node1.json");
    np_summary_expect_nodes(b, "node2,node4", &err);
    scen_add(o, dir, b, "job100.0.node2.json");
    scen_add(o, dir, b, "job100.0.node4.json");
    if (variant == 1)
        np_summary_set_user(b, "carol", &err);
    if (variant == 2) {
        /* the second epilog: node1 again, later, into what the first stored; each merge keeps
         * the newer part of node1 (b's: as many steps, 630 s against 600 s) */
        scen_add(o, dir, b, "job100.batch.node1.json");
    }
    fprintf(o->f, "fit %ld %s\n", np_summary_fit(a, variant == 1 ? 1500 : 60000, &stored, &err),
            err.msg);
    if (stored)
        np_stored_decode(stored, &decoded, &err);
    fprintf(o->f, "merge %d %s\n", np_summary_merge(decoded, b, &err), err.msg);
    scen_json(o, "merged into stored", decoded);
    scen_print(o, "merged into stored", decoded);
    fprintf(o->f, "merge %d %s\n", np_summary_merge(b, a, &err), err.msg);
    scen_json(o, "b after merge", b);
    fprintf(o->f, "merge %d %s\n", np_summary_merge(a, b, &err), err.msg);
    scen_json(o, "a after merge", a);
    free(stored);
    json_decref(decoded);
    json_decref(a);
    json_decref(b);
}

/* A report as numaplaced writes it, with a timeline and a migration, and its text. */
static inline void scen_real(struct scen_out *o, int variant)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 300, .step_id = 0, .uid = 1000, .interval_s = 1};
    struct np_err err = {0};
    json_t *report, *summary;

    snprintf(meta.node, sizeof(meta.node), "nodeA");
    snprintf(meta.policy_requested, sizeof(meta.policy_requested), "local");
    snprintf(meta.sensitivity, sizeof(meta.sensitivity), "high");
    snprintf(meta.backends, sizeof(meta.backends), "proc");
    meta.start_epoch = 1.7e9;
    meta.end_epoch = 1.7e9 + 10;
    np_step_figures_init(&js);
    js.local_nodes = variant ? 0x3 : 0x1;
    js.migration_enabled = variant == 1;
    for (int k = 0; k <= 10; k++) {
        struct np_sample smp;
        np_sample_init(&smp);
        smp.t = k;
        smp.have_pages = true;
        smp.node_bytes[0] = k < 5 ? 100u << 20 : 25u << 20;
        smp.node_bytes[1] = k < 5 ? 0 : 75u << 20;
        np_step_figures_add(&js, &smp);
    }
    np_step_figures_event(&js, 5, "0->1 75 MiB");
    report = np_report_new(&meta, &js, variant != 2);
    fprintf(o->f, "== report text\n");
    np_report_print(o->f, report);
    summary = np_summary_new(300);
    fprintf(o->f, "add %d %s\n", np_summary_add_report(summary, report, &err), err.msg);
    scen_json(o, "summary", summary);
    scen_print(o, "summary", summary);
    json_decref(summary);
    json_decref(report);
    np_step_figures_fini(&js);
}

/* Each fixture report's text (np_report_print). */
static inline void scen_report_text(struct scen_out *o, const char *dir, int which)
{
    static const char *const names[] = {"job100.0.node1.json", "job100.0.node2.json",
                                        "job100.batch.node1.json", "job200.0.node1.json"};
    json_t *r = scen_load(dir, names[which]);

    fprintf(o->f, "== %s\nrc %d\n", names[which], np_report_print(o->f, r));
    json_decref(r);
}

struct scenario {
    const char *name;
    void (*run)(struct scen_out *o, const char *dir, int arg);
    int arg;
};

static inline void scen_real_dir(struct scen_out *o, const char *dir, int arg)
{
    (void)dir;
    scen_real(o, arg);
}

static const struct scenario scenarios[] = {
    {"build0", scen_build, 0},
    {"build1", scen_build, 1},
    {"build2", scen_build, 2},
    {"build3", scen_build, 3},
    {"build4", scen_build, 4},
    {"build5", scen_build, 5},
    {"fit0", scen_fit, 0},
    {"fit1", scen_fit, 1},
    {"fit2", scen_fit, 2},
    {"merge0", scen_merge, 0},
    {"merge1", scen_merge, 1},
    {"merge2", scen_merge, 2},
    {"real0", scen_real_dir, 0},
    {"real1", scen_real_dir, 1},
    {"real2", scen_real_dir, 2},
    {"report0", scen_report_text, 0},
    {"report1", scen_report_text, 1},
    {"report2", scen_report_text, 2},
    {"report3", scen_report_text, 3},
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* Run scenario @p i; the output is a new string (free()). */
static inline char *scen_run(size_t i, const char *fixtures)
{
    struct scen_out o = {0};

    o.f = open_memstream(&o.buf, &o.len);
    if (!o.f)
        return NULL;
    scenarios[i].run(&o, fixtures, scenarios[i].arg);
    fclose(o.f);
    return o.buf;
}

#endif /* SUMMARY_SCENARIOS_H */
