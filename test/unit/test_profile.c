/* The machine profile: encode -> decode round trip, the golden file, strict rejects naming the
 * key, the printed matrix, and scaling a reference slowdown to this machine. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "np_test.h"
#include "numaplace/profile.h"

/* Two CPU nodes and a CPU-less memory node (no loaders there, no interleaved figure). */
static struct np_profile *sample_profile(void)
{
    struct np_profile *p = np_profile_new(6);
    static const double lat[2][3] = {{90, 140, 200}, {150, 95, 210}};
    static const double bw[2][3] = {{12000, 8000, 5000}, {7500, 11800, 4900}};
    static const int dist[2][3] = {{10, 21, 17}, {21, 10, 17}};

    if (!p) /* no ck_assert: this also runs outside a test, to write the golden file */
        abort();
    snprintf(p->hostname, sizeof(p->hostname), "node001");
    snprintf(p->created, sizeof(p->created), "2026-11-24T08:30:00Z");
    p->seconds = 0.3;
    p->buffer_bytes = 256u << 20;
    p->interleave_nodes = 0x7;
    p->node_count = 3;
    for (unsigned n = 0; n < 3; n++)
        p->nodes[n] =
            (struct np_profile_node){.os_index = n,
                                     .cpus = n < 2 ? 16 : 0,
                                     .memory_bytes = (uint64_t)64 << 30,
                                     .interleaved_bandwidth_mb_s = n < 2 ? 9000.5 + n : NAN};
    for (unsigned c = 0; c < 2; c++)
        for (unsigned m = 0; m < 3; m++) {
            struct np_profile_pair *pair = &p->pairs[p->pair_count++];
            *pair = (struct np_profile_pair){.cpu_node = c,
                                             .mem_node = m,
                                             .distance = dist[c][m],
                                             .bandwidth_mb_s = bw[c][m],
                                             .latency_ns = lat[c][m]};
            if (m < 2) {
                pair->loaded[0] = (struct np_profile_loaded){1, bw[c][m] * 0.8, lat[c][m] * 1.2};
                pair->loaded[1] = (struct np_profile_loaded){4, bw[c][m] * 0.5, lat[c][m] * 2};
                pair->loaded_count = 2;
            } else {
                snprintf(pair->loaded_unavailable, sizeof(pair->loaded_unavailable),
                         "memory node 2 has no CPUs to run loaders on");
            }
        }
    np_profile_derive(p);
    return p;
}

static void assert_figure_eq(double a, double b)
{
    ck_assert_msg((isnan(a) && isnan(b)) || fabs(a - b) <= 1e-9 * fmax(1, fabs(a)), "%g != %g", a,
                  b);
}

static void assert_profiles_eq(const struct np_profile *a, const struct np_profile *b)
{
    ck_assert_int_eq(a->schema, b->schema);
    ck_assert_str_eq(a->hostname, b->hostname);
    ck_assert_str_eq(a->created, b->created);
    assert_figure_eq(a->seconds, b->seconds);
    ck_assert_uint_eq(a->buffer_bytes, b->buffer_bytes);
    ck_assert_uint_eq(a->interleave_nodes, b->interleave_nodes);
    ck_assert_uint_eq(a->node_count, b->node_count);
    for (unsigned i = 0; i < a->node_count; i++) {
        ck_assert_uint_eq(a->nodes[i].os_index, b->nodes[i].os_index);
        ck_assert_uint_eq(a->nodes[i].cpus, b->nodes[i].cpus);
        ck_assert_uint_eq(a->nodes[i].memory_bytes, b->nodes[i].memory_bytes);
        assert_figure_eq(a->nodes[i].interleaved_bandwidth_mb_s,
                         b->nodes[i].interleaved_bandwidth_mb_s);
    }
    ck_assert_uint_eq(a->pair_count, b->pair_count);
    for (size_t i = 0; i < a->pair_count; i++) {
        const struct np_profile_pair *x = &a->pairs[i], *y = &b->pairs[i];
        ck_assert_uint_eq(x->cpu_node, y->cpu_node);
        ck_assert_uint_eq(x->mem_node, y->mem_node);
        ck_assert_int_eq(x->distance, y->distance);
        assert_figure_eq(x->bandwidth_mb_s, y->bandwidth_mb_s);
        assert_figure_eq(x->latency_ns, y->latency_ns);
        assert_figure_eq(x->remote_penalty, y->remote_penalty);
        assert_figure_eq(x->bandwidth_ratio, y->bandwidth_ratio);
        ck_assert_str_eq(x->loaded_unavailable, y->loaded_unavailable);
        ck_assert_uint_eq(x->loaded_count, y->loaded_count);
        for (size_t k = 0; k < x->loaded_count; k++) {
            ck_assert_uint_eq(x->loaded[k].loaders, y->loaded[k].loaders);
            assert_figure_eq(x->loaded[k].bandwidth_mb_s, y->loaded[k].bandwidth_mb_s);
            assert_figure_eq(x->loaded[k].latency_ns, y->loaded[k].latency_ns);
        }
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    long len;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

static char *printed(const struct np_profile *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    np_profile_print(f, p);
    fclose(f);
    return text;
}

START_TEST(test_round_trip)
{
    struct np_profile *p = sample_profile(), *q = NULL;
    struct np_err err = {0};
    char *text = np_profile_encode(p), *a, *b;

    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(np_profile_decode(text, &q, &err), 0);
    assert_profiles_eq(p, q);
    a = printed(p);
    b = printed(q);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    free(text);
    np_profile_free(p);
    np_profile_free(q);
}
END_TEST

/* The golden file is what this version writes for the sample profile, byte for byte, and it
 * reads back to the same profile. */
START_TEST(test_golden)
{
    struct np_profile *p = sample_profile(), *q = NULL;
    struct np_err err = {0};
    char *text = np_profile_encode(p), *golden = slurp(np_test_fixture("profile/golden.json"));

    ck_assert_str_eq(text, golden);
    ck_assert_int_eq(np_profile_load(np_test_fixture("profile/golden.json"), &q, &err), 0);
    assert_profiles_eq(p, q);
    ck_assert_ptr_null(strstr(golden, "NaN"));
    free(text);
    free(golden);
    np_profile_free(p);
    np_profile_free(q);
}
END_TEST

START_TEST(test_derived_penalty)
{
    struct np_profile *p = sample_profile();
    const struct np_profile_pair *pair = np_profile_pair(p, 0, 1);
    char *text = printed(p);

    assert_figure_eq(pair->remote_penalty, 140.0 / 90);
    assert_figure_eq(pair->bandwidth_ratio, 12000.0 / 8000);
    assert_figure_eq(np_profile_pair(p, 1, 1)->remote_penalty, 1);
    ck_assert_ptr_null(np_profile_pair(p, 2, 0)); /* a CPU-less node has no CPU row */
    ck_assert_ptr_nonnull(strstr(text, "Load latency (ns)"));
    ck_assert_ptr_nonnull(strstr(text, "140.0"));
    ck_assert_ptr_nonnull(strstr(text, "cpu 2: unavailable (no CPUs)"));
    ck_assert_ptr_nonnull(strstr(text, "memory node 2 has no CPUs to run loaders on"));
    free(text);
    np_profile_free(p);
}
END_TEST

/* ---- rejects: each a change to the golden file and the text the error must hold ---------- */

static void set_schema(json_t *r)
{
    json_object_set_new(r, "schema", json_integer(2));
}
static void drop_schema(json_t *r)
{
    json_object_del(r, "schema");
}
static json_t *pair0(json_t *r)
{
    return json_array_get(json_object_get(r, "pairs"), 0);
}
static void extra_pair_key(json_t *r)
{
    json_object_set_new(pair0(r), "colour", json_true());
}
static void drop_latency(json_t *r)
{
    json_object_del(pair0(r), "latency_ns");
}
static void text_latency(json_t *r)
{
    json_object_set_new(pair0(r), "latency_ns", json_string("90"));
}
static void negative_bandwidth(json_t *r)
{
    json_object_set_new(pair0(r), "bandwidth_mb_s", json_real(-1));
}
static void extra_top_key(json_t *r)
{
    json_object_set_new(r, "version", json_integer(1));
}
static void bad_node(json_t *r)
{
    json_object_set_new(json_array_get(json_object_get(json_object_get(r, "machine"), "nodes"), 1),
                        "node", json_integer(99));
}
static void bad_loaders(json_t *r)
{
    json_object_set_new(json_array_get(json_object_get(pair0(r), "loaded"), 0), "loaders",
                        json_integer(0));
}
static void drop_measure_s(json_t *r)
{
    json_object_del(json_object_get(r, "method"), "measure_s");
}

static const struct {
    void (*change)(json_t *root);
    const char *expect;
} reject_cases[] = {
    {set_schema, "\"schema\" is unknown; accepted: 1"},
    {drop_schema, "\"schema\" is missing"},
    {extra_pair_key, "pairs[0]: 1 object item(s) left unpacked: colour"},
    {drop_latency, "pairs[0]: Object item not found: latency_ns"},
    {text_latency, "pairs[0]: \"latency_ns\" must be a number >= 0 or null"},
    {negative_bandwidth, "pairs[0]: \"bandwidth_mb_s\" must be a number >= 0 or null"},
    {extra_top_key, "top level: 1 object item(s) left unpacked: version"},
    {bad_node, "machine.nodes[1]: \"node\" must be 0..63"},
    {bad_loaders, "pairs[0].loaded[0]: \"loaders\" must be 1..4096"},
    {drop_measure_s, "Object item not found: measure_s"},
};

START_TEST(test_rejects)
{
    json_t *root = json_load_file(np_test_fixture("profile/golden.json"), 0, NULL);
    struct np_profile *p = NULL;
    struct np_err err = {0};
    char *text;

    ck_assert_ptr_nonnull(root);
    reject_cases[_i].change(root);
    text = json_dumps(root, 0);
    ck_assert_int_eq(np_profile_decode(text, &p, &err), -EINVAL);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, reject_cases[_i].expect), "\"%s\" lacks \"%s\"", err.msg,
                  reject_cases[_i].expect);
    free(text);
    json_decref(root);
}
END_TEST

START_TEST(test_load_errors)
{
    struct np_profile *p = NULL;
    struct np_err err = {0};

    ck_assert_int_eq(np_profile_load("/nonexistent/profile.json", &p, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/profile.json"));
    ck_assert_int_eq(np_profile_decode("{\"schema\": 1,", &p, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not JSON"));
    ck_assert_ptr_null(p);
}
END_TEST

/* ---- scaling ------------------------------------------------------------------------------ */

static const struct {
    double slowdown, ref, here, expect;
} scale_cases[] = {
    {3.0, 2.1, 2.1, 3.0},                   /* this machine is the reference */
    {3.99, 2.1, 1.3, 1 + 2.99 * 0.3 / 1.1}, /* 619.lbm_s on a 1.3x machine */
    {2.1, 2.1, 1.55, 1.55},
    {1.0, 2.1, 1.3, 1.0},           /* insensitive stays insensitive */
    {3.0, 2.1, 1.0, 1.0},           /* no remote penalty, no slowdown */
    {3.0, 2.1, 0.9, 1.0},           /* remote measured faster (noise) counts as no penalty */
    {2.0, 2.1, 4.2, 1 + 3.2 / 1.1}, /* a worse machine predicts more */
    {2.0, 1.0, 1.3, NAN},           /* a reference without penalty cannot be scaled from */
    {NAN, 2.1, 1.3, NAN},
    {2.0, 2.1, INFINITY, NAN},
};

START_TEST(test_scale)
{
    double got = np_penalty_scale_slowdown(scale_cases[_i].slowdown, scale_cases[_i].ref,
                                           scale_cases[_i].here);
    assert_figure_eq(got, scale_cases[_i].expect);
}
END_TEST

START_TEST(test_scale_for_pair)
{
    struct np_profile *p = sample_profile();
    double penalty = 140.0 / 90;

    assert_figure_eq(np_profile_scale_for_pair(p, 0, 1, 3.0),
                     1 + 2.0 * (penalty - 1) / (NP_PROFILE_REFERENCE_PENALTY - 1));
    assert_figure_eq(np_profile_scale_for_pair(p, 0, 0, 3.0), 1.0);
    ck_assert(isnan(np_profile_scale_for_pair(p, 2, 0, 3.0)));
    np_profile_free(p);
}
END_TEST

/* The penalty the sensitivity model scales by: the near pairs of another socket's memory
 * (0->1, 1->0 at distance 21), not the CPU-less node 2 (distance 17, another kind of memory). */
START_TEST(test_near_penalty)
{
    struct np_profile *p = sample_profile();

    assert_figure_eq(np_profile_near_penalty(p), (140.0 / 90 + 150.0 / 95) / 2);
    p->pair_count = 1; /* only (0, 0): nothing remote */
    ck_assert(isnan(np_profile_near_penalty(p)));
    np_profile_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");

    if (getenv("NP_PROFILE_WRITE_GOLDEN")) { /* regenerate: the sample's encoding on stdout */
        struct np_profile *p = sample_profile();
        char *text = np_profile_encode(p);
        fputs(text, stdout);
        free(text);
        np_profile_free(p);
        return 0;
    }
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_golden);
    tcase_add_test(tc, test_derived_penalty);
    tcase_add_loop_test(tc, test_rejects, 0, sizeof(reject_cases) / sizeof(reject_cases[0]));
    tcase_add_test(tc, test_load_errors);
    tcase_add_loop_test(tc, test_scale, 0, sizeof(scale_cases) / sizeof(scale_cases[0]));
    tcase_add_test(tc, test_scale_for_pair);
    tcase_add_test(tc, test_near_penalty);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
