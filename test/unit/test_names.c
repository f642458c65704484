/* Every enum's names from one table: each name parses back to its value, every printed list
 * holds every name, the man pages name them all, and the engine and the simulator plan alike. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/engine.h"
#include "numaplace/migration.h"
#include "numaplace/names.h"
#include "numaplace/sim.h"

START_TEST(test_policy_names_round_trip)
{
    const char *list = np_policy_names();

    for (int p = 0; p < NP_POLICY_COUNT; p++) {
        enum np_policy back;
        ck_assert_int_eq(np_policy_from_name(np_policy_name((enum np_policy)p), &back, NULL), 0);
        ck_assert_int_eq(back, p);
        ck_assert_ptr_nonnull(strstr(list, np_policy_name((enum np_policy)p)));
    }
    ck_assert_str_eq(np_policy_name((enum np_policy)NP_POLICY_COUNT), "unknown");
}
END_TEST

START_TEST(test_class_and_trigger_names)
{
    struct np_err err = {0};
    enum np_class c;

    for (int k = 0; k < NP_CLASS_COUNT; k++) {
        ck_assert_int_eq(np_class_from_name(np_class_name((enum np_class)k), &c, NULL), 0);
        ck_assert_int_eq(c, k);
    }
    ck_assert_int_eq(np_class_from_name("urgent", &c, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "invalid class 'urgent': accepted values are high, low");
    for (int t = 0; t < NP_TRIGGER_COUNT; t++)
        ck_assert_str_ne(np_trigger_name((enum np_trigger_kind)t), "unknown");
    /* every trigger that proposes is found by its own name */
    for (size_t i = 0; np_trigger_at(i); i++)
        ck_assert_ptr_eq(np_trigger_lookup(np_trigger_at(i)->name), np_trigger_at(i));
    ck_assert_ptr_null(np_trigger_lookup("admin")); /* administrators' requests propose nothing */
    for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++)
        ck_assert_str_ne(np_move_failure_name((enum np_move_failure)f), "unknown");
}
END_TEST

START_TEST(test_order_names_list)
{
    const char *list = np_order_names();
    size_t len = 0;

    for (size_t i = 0; np_order_at(i); i++) {
        ck_assert_ptr_nonnull(strstr(list, np_order_at(i)->name));
        len += strlen(np_order_at(i)->name) + (i ? 2 : 0);
    }
    ck_assert_uint_eq(strlen(list), len);
}
END_TEST

START_TEST(test_name_list_cut_safely)
{
    static const char *const names[] = {"alpha", NULL, "beta"};
    const struct np_name_table t = {"thing", names, 3, NULL};
    char small[8];
    unsigned v;

    ck_assert_uint_eq(np_name_list(&t, small, sizeof(small)), strlen("alpha, beta"));
    ck_assert_str_eq(small, "alpha, ");
    ck_assert_int_eq(np_name_parse(&t, "beta", &v, NULL), 0);
    ck_assert_uint_eq(v, 2);
    ck_assert_int_eq(np_name_parse(&t, NULL, &v, NULL), -EINVAL);
    ck_assert_str_eq(np_name_of(&t, 1), "unknown");
}
END_TEST

/* A man page names every entry of a table (roff writes '-' as '\-'). */
static void check_man_page(const char *page, const char *name)
{
    char path[4096], escaped[128], *text;
    size_t j = 0;
    long size;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", getenv("NUMAPLACE_DOCS"), page);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)size + 1);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    for (const char *p = name; *p && j + 2 < sizeof(escaped); p++) {
        if (*p == '-')
            escaped[j++] = '\\';
        escaped[j++] = *p;
    }
    escaped[j] = '\0';
    ck_assert_msg(strstr(text, escaped) != NULL, "%s does not name '%s'", page, name);
    free(text);
}

START_TEST(test_man_pages_name_every_entry)
{
    for (size_t i = 0; np_order_at(i); i++) {
        check_man_page("numaplaced.8", np_order_at(i)->name);
        check_man_page("numaplace.1", np_order_at(i)->name);
    }
    for (size_t i = 0; np_trigger_at(i); i++)
        check_man_page("numaplaced.8", np_trigger_at(i)->name);
    for (int p = 0; p < NP_POLICY_COUNT; p++)
        check_man_page("numaplace-spank.8", np_policy_name((enum np_policy)p));
}
END_TEST

/* One planner: the simulator moves exactly what the engine's dry run plans for the same jobs. */
START_TEST(test_engine_and_simulator_plan_alike)
{
    static const struct np_model_row row = {.bw_mbps = 1000};
    struct np_sim_job sim[3] = {
        {.row = &row, .cpu_node = 1, .job_class = NP_CLASS_LOW, .pages = {400, 0}},
        {.row = &row, .cpu_node = 0, .job_class = NP_CLASS_LOW, .pages = {300, 0}},
        {.row = &row, .cpu_node = 0, .job_class = NP_CLASS_HIGH, .pages = {900, 0}},
    };
    struct np_job_view jobs[3];
    struct np_node_view view = {.nnodes = 2, .jobs = jobs, .njobs = 3};
    struct np_engine_config cfg = {.order = np_order_lookup("best-plus"), .dry_run = true};
    struct np_request req = {.src = 0, .dst = 1, .pages = 500, .target_job = -1};
    struct np_request_result result;
    struct np_rate_limiter rl;

    for (int i = 0; i < 3; i++) {
        jobs[i] = (struct np_job_view){.id = (uint64_t)i,
                                       .job_class = sim[i].job_class,
                                       .cpu_nodes = 1ull << sim[i].cpu_node,
                                       .bandwidth = row.bw_mbps * 1e6};
        memcpy(jobs[i].pages_on_node, sim[i].pages, sizeof(sim[i].pages));
    }
    view.free_bytes[1] = 1ull << 40;
    np_rate_limiter_init(&rl, 0);
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, &rl, NULL, &result, NULL), 0);
    ck_assert(result.dry_run);
    ck_assert_uint_eq(result.candidates, 2); /* the high job is never a candidate */
    ck_assert_uint_eq(result.planned, 500);
    ck_assert_int_eq(np_sim_request(sim, 3, 2, cfg.order, 0, 0, 1, 500), 500);
    /* best-plus takes the gainer (CPUs on node 1) whole, then the rest from the loser */
    ck_assert_uint_eq(result.noutcomes, 2);
    ck_assert_uint_eq(result.outcomes[0].job_index, 0);
    ck_assert_uint_eq(result.outcomes[0].planned, 400);
    ck_assert_uint_eq(sim[0].pages[1], 400);
    ck_assert_uint_eq(result.outcomes[1].planned, 100);
    ck_assert_uint_eq(sim[1].pages[1], 100);
    ck_assert_uint_eq(sim[2].pages[0], 900);
    np_request_result_fini(&result);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("names");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_policy_names_round_trip);
    tcase_add_test(tc, test_class_and_trigger_names);
    tcase_add_test(tc, test_order_names_list);
    tcase_add_test(tc, test_name_list_cut_safely);
    tcase_add_test(tc, test_man_pages_name_every_entry);
    tcase_add_test(tc, test_engine_and_simulator_plan_alike);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
