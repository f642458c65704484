/* Node lists as Slurm reads and writes them: the command's libslurm hostlists
 * (cli/slurmdb_comment.c) give what `scontrol show hostlist` and `scontrol show hostnames` give
 * on the same inputs, and the bounded decoder of stored summaries (np_hostlist_expand) names the
 * same nodes or refuses the list, never other nodes. scontrol needs a configuration file for
 * these subcommands but no controller: the suite writes a minimal one. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accounting.h"
#include "np_test.h"
#include "numaplace/summary.h"
#include "parse.h"

/* `scontrol show hostnames` output (one per line) made a comma list, in place. */
static void hostnames_to_list(char *out)
{
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = p[1] ? ',' : '\0';
}

static const struct {
    const char *list;
    const char *ranged; /* scontrol show hostlist */
    const char *names;  /* scontrol show hostnames, as a comma list */
    bool decoded;       /* the stored summaries' decoder reads it */
} cases[] = {
    {"n9,n[10-11]", "n[9-11]", "n9,n10,n11", true},
    {"rack[1-2]-node[01-02]", "rack1-node[01-02],rack2-node[01-02]",
     "rack1-node01,rack1-node02,rack2-node01,rack2-node02", false},
    {"n09,n10", "n[09-10]", "n09,n10", true},
    {"n9,n010", "n[9,010]", "n9,n010", true},
    {"b,a,a", "b,a,a", "b,a,a", true},
    {"n[1-3],n2", "n[1-3,2]", "n1,n2,n3,n2", true},
    {"n[3,1-2]", "n[3,1-2]", "n3,n1,n2", true},
    {"node[0001-0003,0005],login1", "node[0001-0003,0005],login1",
     "node0001,node0002,node0003,node0005,login1", true},
    {"x", "x", "x", true},
};

static char conf_dir[] = "/tmp/np-hostlist-XXXXXX";

/* scontrol show WHAT LIST's output, its lines made a comma list (new). */
static char *scontrol(const char *what, const char *list)
{
    char *cmd = NULL, *out = NULL;
    size_t cap = 0;
    ssize_t n;
    FILE *p;

    ck_assert_int_gt(asprintf(&cmd, "scontrol show %s '%s' 2>&1", what, list), 0);
    p = popen(cmd, "r");
    free(cmd);
    ck_assert_ptr_nonnull(p);
    n = getdelim(&out, &cap, '\0', p);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_gt(n, 0);
    hostnames_to_list(out);
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_as_scontrol)
{
    char *ranged = acct_hostlist_ranged(cases[_i].list, false);
    char *names = acct_hostlist_expand(cases[_i].list, 0);
    char *want_ranged = scontrol("hostlist", cases[_i].list);
    char *want_names = scontrol("hostnames", cases[_i].list);

    ck_assert_str_eq(want_ranged, cases[_i].ranged); /* the table says what Slurm does */
    ck_assert_str_eq(want_names, cases[_i].names);
    ck_assert_pstr_eq(ranged, want_ranged);
    ck_assert_pstr_eq(names, want_names);
    free(ranged);
    free(names);
    free(want_ranged);
    free(want_names);
}
END_TEST

/* The decoder of stored summaries: Slurm's nodes (sorted, once each), or a refusal. */
START_TEST(test_decoder_agrees)
{
    struct np_strs got = {0};
    struct np_err err = {0};
    char *want = scontrol("hostnames", cases[_i].list), *tok, *save = NULL;
    char *v[16] = {NULL};
    size_t n = 0, k = 0;

    for (tok = strtok_r(want, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
        v[n++] = tok;
    qsort(v, n, sizeof(v[0]), cmp_str);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
            v[k++] = v[i];
    if (!cases[_i].decoded) {
        ck_assert_int_lt(np_hostlist_expand(cases[_i].list, 100, &got, &err), 0);
    } else {
        ck_assert_msg(np_hostlist_expand(cases[_i].list, 100, &got, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(got.n, k);
        for (size_t i = 0; i < k; i++)
            ck_assert_str_eq(got.v[i], v[i]);
    }
    for (size_t i = 0; i < got.n; i++)
        free(got.v[i]);
    free(got.v);
    free(want);
}
END_TEST

/* What a summary's reader sees: the names sorted, once each, in Slurm's ranges. */
START_TEST(test_names_for_reading)
{
    const char *names[] = {"n11", "n9", "n10", "n9", "login1"};
    char *ranged = acct_hostlist_of_names(names, 5);

    ck_assert_pstr_eq(ranged, "login1,n[9-11]");
    free(ranged);
}
END_TEST

/* A list that names more hosts than the job has nodes is refused before it is expanded: a job
 * name once planted "NodeList=a[1-65536],b[1-65536]" and root expanded it for a minute. */
START_TEST(test_expand_capped)
{
    char *names = acct_hostlist_expand("n[1-4]", 4);

    ck_assert_pstr_eq(names, "n1,n2,n3,n4");
    free(names);
    errno = 0;
    ck_assert_ptr_null(acct_hostlist_expand("n[1-5]", 4));
    ck_assert_int_eq(errno, E2BIG);
    errno = 0;
    ck_assert_ptr_null(acct_hostlist_expand("a[1-65536],b[1-65536],c[1-65536]", 16));
    ck_assert_int_eq(errno, E2BIG);
    names = acct_hostlist_expand("n[1-3],x", 0); /* no bound: an administrator's --nodes */
    ck_assert_pstr_eq(names, "n1,n2,n3,x");
    free(names);
}
END_TEST

/* A ranged list longer than any first guess at its size is whole, as scontrol gives it: 400
 * names that share no prefix cannot be folded into ranges. */
START_TEST(test_long_list_whole)
{
    char *list = NULL, *ranged, *want;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);

    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 400; i++)
        fprintf(f, "%snode%c%d", i ? "," : "", 'a' + i % 26, i);
    ck_assert_int_eq(fclose(f), 0);
    ranged = acct_hostlist_ranged(list, false);
    want = scontrol("hostlist", list);
    ck_assert_ptr_nonnull(ranged);
    ck_assert_uint_gt(strlen(ranged), 1024); /* more than the first buffer */
    ck_assert_str_eq(ranged, want);
    free(ranged);
    free(want);
    free(list);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_hostlist");
    TCase *tc = tcase_create("slurm");
    char path[64];
    FILE *conf;
    int rc;

    if (!mkdtemp(conf_dir))
        return 1;
    snprintf(path, sizeof(path), "%s/slurm.conf", conf_dir);
    conf = fopen(path, "w");
    if (!conf)
        return 1;
    fputs("ClusterName=np\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\n"
          "PartitionName=p Nodes=n1\n",
          conf);
    fclose(conf);
    setenv("SLURM_CONF", path, 1);
    tcase_add_loop_test(tc, test_as_scontrol, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_loop_test(tc, test_decoder_agrees, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_names_for_reading);
    tcase_add_test(tc, test_expand_capped);
    tcase_add_test(tc, test_long_list_whole);
    suite_add_tcase(s, tc);
    rc = np_test_run(s);
    unlink(path);
    rmdir(conf_dir);
    return rc;
}
