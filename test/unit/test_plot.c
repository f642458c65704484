/* The timeline picture: written, read back by cairo's PNG parser, and refused on bad input. */
#include <check.h>
#include <sys/stat.h>
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
    {"/nonexistent-dir/x.png", 2, 30, "/nonexistent-dir/x.png: cannot create a file next to it"},
    {"/proc/self/fd/0.png", 2, 30, "cannot create a file next to it"},
    {"/tmp/np_plot_test_dir.png", 2, 30, "np_plot_test_dir.png: not a regular file"}, /* made */
};

START_TEST(test_bad_plot)
{
    struct np_timeline tl = make(2, true);
    struct np_err err = {0};

    if (strstr(bad_plots[_i].path, "_dir.png"))
        ck_assert(mkdir("/tmp/np_plot_test_dir.png", 0700) == 0 || errno == EEXIST);
    tl.nnodes = bad_plots[_i].nnodes;
    tl.npoints = bad_plots[_i].npoints;
    ck_assert_int_lt(np_plot_timeline(&tl, bad_plots[_i].path, &err), 0);
    ck_assert_msg(strstr(err.msg, bad_plots[_i].message), "'%s' lacks '%s'", err.msg,
                  bad_plots[_i].message);
}
END_TEST

/* A link a user planted at the name is refused, never written through; a regular file already
 * there is replaced (not written in place), and no temporary file is left behind either way. */
START_TEST(test_symlink_is_not_followed)
{
    struct np_timeline tl = make(2, true);
    struct np_err err = {0};
    char victim[128], link_path[128], text[64] = "";
    const bool svg = _i == 0;
    struct stat before, after;
    FILE *f;

    temp_path(victim, sizeof(victim), "victim");
    temp_path(link_path, sizeof(link_path), svg ? "svg" : "png");
    f = fopen(victim, "w");
    ck_assert_ptr_nonnull(f);
    fputs("root's own file\n", f);
    fclose(f);
    ck_assert_int_eq(symlink(victim, link_path), 0);
    ck_assert_int_eq(np_plot_timeline(&tl, link_path, &err), -ELOOP);
    ck_assert_msg(strstr(err.msg, "a symlink (not written through)"), "%s", err.msg);
    f = fopen(victim, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
    fclose(f);
    ck_assert_str_eq(text, "root's own file\n");
    /* a regular file at the name: replaced by a new one, its old inode left as it was */
    unlink(link_path);
    ck_assert_int_eq(link(victim, link_path), 0);
    ck_assert_int_eq(stat(victim, &before), 0);
    ck_assert_msg(np_plot_timeline(&tl, link_path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(stat(link_path, &after), 0);
    ck_assert_uint_ne(after.st_ino, before.st_ino);
    ck_assert_int_eq(stat(victim, &after), 0);
    ck_assert_int_eq(after.st_size, before.st_size);
    unlink(link_path);
    unlink(victim);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_loop_test(tc, test_png_is_a_valid_image, 0, 2);
    tcase_add_test(tc, test_svg_is_written);
    tcase_add_loop_test(tc, test_symlink_is_not_followed, 0, 2);
    tcase_add_loop_test(tc, test_bad_plot, 0, sizeof(bad_plots) / sizeof(bad_plots[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
