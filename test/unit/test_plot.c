/* The timeline picture: written, read back by cairo's PNG parser, and refused on bad input. */
#include <check.h>
#include <sys/stat.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cairo.h>

#include "np_test.h"
#include "numaplace/summary.h"

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
    ck_assert_int_eq(cairo_image_surface_get_width(img), 1000);
    ck_assert_int_eq(cairo_image_surface_get_height(img), 720);
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
    {"/tmp/x.png", 65, 30, "cannot plot 65 NUMA nodes"},
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

/* The sizes a picture must stay legible at: NUMA nodes, run time, migrations, and reasons long
 * enough to need wrapping. */
static const struct {
    unsigned nnodes, nlocal;
    double seconds;
    size_t npoints, nevents;
    bool measured;
} sizes[] = {
    {1, 1, 10, 11, 0, false},      /* one node, ten seconds, no PMU */
    {8, 2, 3600, 128, 6, true},    /* eight nodes, an hour, a few migrations */
    {64, 8, 7200, 128, 40, true},  /* 64 nodes: colours by distance, crowded migrations */
    {8, 0, 172800, 128, 3, false}, /* two days, the local nodes not known */
};

static struct np_timeline_point big[128];
static struct np_timeline_event many[40];
static const unsigned local_nodes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
static const char long_reason[] =
    "perf_event_open failed for every CPU of the step: the kernel's perf_event_paranoid is 3 "
    "and numaplaced runs without CAP_PERFMON, so neither cycles nor instructions nor LLC misses "
    "could be counted on this node (set kernel.perf_event_paranoid=2 or grant CAP_PERFMON)";

static struct np_timeline make_size(int i)
{
    struct np_timeline tl = {.title = "job 123456789 on compute-node-with-a-long-name-0042, step "
                                      "batch (a title long enough to need a second line)",
                             .nnodes = sizes[i].nnodes,
                             .points = big,
                             .npoints = sizes[i].npoints,
                             .events = many,
                             .nevents = sizes[i].nevents,
                             .bandwidth_note = long_reason,
                             .cpi_note = long_reason,
                             .local_nodes = sizes[i].nlocal ? local_nodes : NULL,
                             .nlocal_nodes = sizes[i].nlocal,
                             .start = "2026-11-26T04:12:00",
                             .end = "2026-11-28T04:12:00"};

    memset(big, 0, sizeof(big));
    for (size_t p = 0; p < sizes[i].npoints; p++) {
        big[p].t = sizes[i].seconds * (double)p / (double)(sizes[i].npoints - 1);
        for (unsigned n = 0; n < sizes[i].nnodes; n++) /* memory drifting off the local nodes */
            big[p].bytes_on_node[n] = (uint64_t)((n + 1) * (8u << 20)) +
                                      (uint64_t)((n < sizes[i].nlocal ? 1000 - p : p) * 65536);
        big[p].bandwidth_ok = big[p].cpi_ok = sizes[i].measured;
        big[p].bandwidth = 2e9 + 1e9 * sin((double)p / 9);
        big[p].cpi = 1.1 + 0.3 * cos((double)p / 7);
    }
    for (size_t e = 0; e < sizes[i].nevents; e++) {
        many[e].t = sizes[i].seconds * ((double)e + 0.5) / (double)sizes[i].nevents;
        snprintf(many[e].label, sizeof(many[e].label), "%zu->%zu %zu MiB", e % 4, (e + 1) % 4,
                 64 * (e + 1));
    }
    return tl;
}

/* Every string inside the picture and clear of the others, and the PNG one that cairo reads back
 * and pngcheck accepts. NUMAPLACE_PLOT_KEEP=DIR keeps the pictures there, to look at. */
START_TEST(test_sizes_stay_inside)
{
    struct np_timeline tl = make_size(_i);
    static struct np_plot_text texts[512];
    struct np_err err = {0};
    size_t n = 0;
    double w = 0, h = 0;
    const char *keep = getenv("NUMAPLACE_PLOT_KEEP");
    char path[256], cmd[300];
    cairo_surface_t *img;

    ck_assert_msg(np_plot_timeline_texts(&tl, texts, 512, &n, &w, &h, &err) == 0, "%s", err.msg);
    ck_assert_uint_gt(n, 20);
    ck_assert_uint_le(n, 512);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(texts[k].x0 >= 0 && texts[k].y0 >= 0 && texts[k].x1 <= w && texts[k].y1 <= h,
                      "size %d: \"%s\" at (%.0f,%.0f)-(%.0f,%.0f) leaves the %.0fx%.0f picture", _i,
                      texts[k].text, texts[k].x0, texts[k].y0, texts[k].x1, texts[k].y1, w, h);
    for (size_t a = 0; a < n; a++) /* legible: no string drawn over another */
        for (size_t b = a + 1; b < n; b++)
            ck_assert_msg(texts[a].x1 <= texts[b].x0 || texts[b].x1 <= texts[a].x0 ||
                              texts[a].y1 <= texts[b].y0 || texts[b].y1 <= texts[a].y0,
                          "size %d: \"%s\" and \"%s\" overlap", _i, texts[a].text, texts[b].text);
    if (keep)
        snprintf(path, sizeof(path), "%s/plot-%d.png", keep, _i);
    else
        snprintf(path, sizeof(path), "/tmp/np_plot_size.%d.%d.png", (int)getpid(), _i);
    ck_assert_msg(np_plot_timeline(&tl, path, &err) == 0, "%s", err.msg);
    img = cairo_image_surface_create_from_png(path);
    ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    ck_assert_int_eq(cairo_image_surface_get_width(img), (int)w);
    cairo_surface_destroy(img);
    snprintf(cmd, sizeof(cmd), "pngcheck -q '%s' >/dev/null", path);
    ck_assert_int_eq(system(cmd), 0);
    if (!keep)
        unlink(path);
}
END_TEST

/* The long reason is wrapped, not cut off: its last words are drawn. */
START_TEST(test_reason_wrapped)
{
    struct np_timeline tl = make_size(0);
    static struct np_plot_text texts[512];
    size_t n = 0;
    double w, h;
    bool end_drawn = false;

    ck_assert_int_eq(np_plot_timeline_texts(&tl, texts, 512, &n, &w, &h, NULL), 0);
    for (size_t k = 0; k < n && k < 512; k++)
        end_drawn |= strstr(texts[k].text, "CAP_PERFMON)") != NULL;
    ck_assert(end_drawn);
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
    tcase_add_loop_test(tc, test_sizes_stay_inside, 0, sizeof(sizes) / sizeof(sizes[0]));
    tcase_add_test(tc, test_reason_wrapped);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
