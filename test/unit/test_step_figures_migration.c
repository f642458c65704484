/*
 * np_step_figures_book_migration: what one migration request did to one job, in its figures and in
 * the report's migrations block (the format numaplaced wrote by hand before).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/engine.h"
#include "numaplace/report.h"

static void result_of(struct np_request_result *r, struct np_job_outcome *o, bool dry_run)
{
    memset(r, 0, sizeof(*r));
    memset(o, 0, sizeof(*o));
    r->request = (struct np_request){
        .src = 2, .dst = 1, .pages = 4096, .trigger = NP_TRIGGER_BANDWIDTH, .target_job = -1};
    snprintf(r->request.reason, sizeof(r->request.reason), "node 2 over 5000 MB/s");
    r->order = "best-plus";
    r->used_proxy = true;
    r->dry_run = dry_run;
    o->planned = 4096;
    o->moved.pages_moved = dry_run ? 4096 : 3000; /* a dry run counts what it would move */
    o->moved.pages_failed[0] = 7;
    o->moved.ns_moving = 250000000;
}

START_TEST(moved_pages_are_booked)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const bool dry = _i == 1;
    struct np_step_figures js;
    struct np_request_result r;
    struct np_job_outcome o;
    char *text;
    char expected[512];

    np_step_figures_init(&js);
    result_of(&r, &o, dry);
    ck_assert_int_eq(np_step_figures_book_migration(&js, &r, &o, 12.5), 0);
    ck_assert_int_eq(np_step_figures_book_migration(&js, &r, &o, 13.5), 0);
    ck_assert_uint_eq(json_array_size(js.migration_requests), 2);
    text = json_dumps(json_array_get(js.migration_requests, 0), JSON_COMPACT);
    snprintf(expected, sizeof(expected),
             "{\"trigger\":\"bandwidth\",\"from\":2,\"to\":1,\"order\":\"best-plus\",\"reason\":"
             "\"node 2 over 5000 MB/s\",\"planned_pages\":4096,\"moved_pages\":%d,\"dry_run\":%s,"
             "\"used_proxy\":true,\"stopped\":false}",
             dry ? 4096 : 3000, dry ? "true" : "false");
    ck_assert_str_eq(text, expected);
    free(text);
    if (dry) {
        ck_assert_uint_eq(js.pages_out[2], 0);
        ck_assert_uint_eq(js.pages_in[1], 0);
        ck_assert_uint_eq(js.migration_failed[0], 0);
        ck_assert_uint_eq(js.nevents, 0);
    } else {
        char label[48];
        ck_assert_uint_eq(js.pages_out[2], 2 * 3000 * page);
        ck_assert_uint_eq(js.pages_in[1], 2 * 3000 * page);
        ck_assert_uint_eq(js.pages_in[2], 0);
        ck_assert_uint_eq(js.migration_failed[0], 14);
        ck_assert_double_eq_tol(js.migration_moving_s, 0.5, 1e-9);
        ck_assert_uint_eq(js.nevents, 2);
        ck_assert_double_eq(js.events[1].t, 13.5);
        snprintf(label, sizeof(label), "2->1 %llu MiB", (unsigned long long)(3000 * page >> 20));
        ck_assert_str_eq(js.events[0].label, label);
    }
    np_step_figures_fini(&js);
}
END_TEST

START_TEST(nothing_moved_marks_no_event)
{
    struct np_step_figures js;
    struct np_request_result r;
    struct np_job_outcome o;

    np_step_figures_init(&js);
    result_of(&r, &o, false);
    o.moved.pages_moved = 0;
    ck_assert_int_eq(np_step_figures_book_migration(&js, &r, &o, 1.0), 0);
    ck_assert_uint_eq(js.nevents, 0);
    ck_assert_uint_eq(json_array_size(js.migration_requests), 1);
    np_step_figures_fini(&js);
}
END_TEST

START_TEST(node_out_of_range_is_refused)
{
    struct np_step_figures js;
    struct np_request_result r;
    struct np_job_outcome o;

    np_step_figures_init(&js);
    result_of(&r, &o, false);
    r.request.src = NP_SAMPLE_MAX_NODES;
    ck_assert_int_eq(np_step_figures_book_migration(&js, &r, &o, 1.0), -EINVAL);
    ck_assert_ptr_null(js.migration_requests); /* nothing half-booked */
    ck_assert_uint_eq(js.nevents, 0);
    np_step_figures_fini(&js);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("step_figures_migration");
    TCase *tc = tcase_create("book");

    tcase_add_loop_test(tc, moved_pages_are_booked, 0, 2);
    tcase_add_test(tc, nothing_moved_marks_no_event);
    tcase_add_test(tc, node_out_of_range_is_refused);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
