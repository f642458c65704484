/* The timeline picture: written, read back by cairo's PNG parser, and refused on bad input. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cairo.h>

#include "np_test.h"
#include "numaplace/plot.h"

static struct np_timeline_point points[30];
static struct np_timeline_event events[2] = {{10, "0->1 256 MiB"}, {20, "1->0 64 MiB"}};

static struct np_timeline make(unsigned nnodes, bool with_bw)
{
    struct np_timeline tl = {.title = "job 42.0 on node0",
                             .nnodes = nnodes,
                             .points = points,
                             .npoints = 30,
                             .events = events,
                             .nevents = 2,
                             .bandwidth_note = "no hardware PMU on this machine",
                             .cpi_note = "no hardware PMU on this machine"};
    memset(points, 0, sizeof(points));
    for (int i = 0; i < 30; i++) {
        points[i].t = i;
        for (unsigned n = 0; n < nnodes && n < NP_PLOT_MAX_NODES; n++)
            points[i].bytes_on_node[n] = (uint64_t)(n + 1) * (64u << 20) + (uint64_t)i * 4096;
        points[i].bandwidth_ok = with_bw;
        points[i].bandwidth = 1e9 + i * 1e7;
        points[i].cpi_ok = with_bw && i % 7 != 3; /* a gap */
        points[i].cpi = 1.2;
    }
    return tl;
}

static void temp_path(char *buf, size_t len, const char *ext)
{
    snprintf(buf, len, "/tmp/np_plot_test.%d.%s", (int)getpid(), ext);
}

START_TEST(test_png_is_a_valid_image)
{
    struct np_timeline tl = make(4, _i == 0);
    struct np_err err = {0};
    char path[128];
    cairo_surface_t *img;
    unsigned char *data;
    int stride, coloured = 0;

    temp_path(path, sizeof(path), "png");
    ck_assert_msg(np_plot_timeline(&tl, path, &err) == 0, "%s", err.msg);
    img = cairo_image_surface_create_from_png(path);
    ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    ck_assert_int_eq(cairo_image_surface_get_width(img), 960);
    ck_assert_int_eq(cairo_image_surface_get_height(img), 640);
    /* The memory panel is filled: count non-white pixels along a row through it. */
    data = cairo_image_surface_get_data(img);
    stride = cairo_image_surface_get_stride(img);
    for (int x = 100; x < 800; x++) {
        const uint32_t px = *(const uint32_t *)(data + 300 * stride + x * 4);
        coloured += (px & 0xffffff) != 0xffffff;
    }
    ck_assert_int_gt(coloured, 600);
    cairo_surface_destroy(img);
    unlink(path);
}
END_TEST

START_TEST(test_svg_is_written)
{
    struct np_timeline tl = make(2, true);
    char path[128], head[256] = "";
    FILE *f;

    temp_path(path, sizeof(path), "svg");
    ck_assert_int_eq(np_plot_timeline(&tl, path, NULL), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(head, 1, sizeof(head) - 1, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(head, "<svg"));
    unlink(path);
}
END_TEST

static const struct {
    const char *path;
    unsigned nnodes;
    size_t npoints;
    const char *message;
} bad_plots[] = {
    {"/tmp/x.jpg", 2, 30, "accepted extensions are .png and .svg"},
    {"/tmp/noext", 2, 30, "accepted extensions"},
    {"/tmp/x.png", 2, 0, "no samples"},
    {"/tmp/x.png", 0, 30, "cannot plot 0 NUMA nodes"},
    {"/tmp/x.png", 17, 30, "cannot plot 17 NUMA nodes"},
    {"/nonexistent-dir/x.png", 2, 30, "cannot write '/nonexistent-dir/x.png'"},
};

START_TEST(test_bad_plot)
{
    struct np_timeline tl = make(2, true);
    struct np_err err = {0};

    tl.nnodes = bad_plots[_i].nnodes;
    tl.npoints = bad_plots[_i].npoints;
    ck_assert_int_lt(np_plot_timeline(&tl, bad_plots[_i].path, &err), 0);
    ck_assert_msg(strstr(err.msg, bad_plots[_i].message), "'%s' lacks '%s'", err.msg,
                  bad_plots[_i].message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_loop_test(tc, test_png_is_a_valid_image, 0, 2);
    tcase_add_test(tc, test_svg_is_written);
    tcase_add_loop_test(tc, test_bad_plot, 0, sizeof(bad_plots) / sizeof(bad_plots[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
