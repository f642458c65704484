/* --numa-policy=auto's history across a restart (daemon/placement_hint.c): what one helper learnt a
 * second reads back from state_dir; a file the helper did not write, or could not have, is
 * refused whole; a temporary file a kill -9 left is not the history. */
#include <errno.h>
#include <fcntl.h>

#include "daemon.h"
#include "np_daemon_test.h"

static struct np_test_daemon t;

static void setup(void)
{
    np_test_daemon_init(&t);
}
static void teardown(void)
{
    np_test_daemon_fini(&t);
}

/* A second helper on the same state directory, as after a restart. */
static struct np_daemon *restarted(int *restored)
{
    struct np_daemon *d = malloc(sizeof(*d));

    ck_assert_ptr_nonnull(d);
    np_daemon_init(d);
    d->log = t.d->log;
    memcpy(d->cfg.state_dir, t.d->cfg.state_dir, sizeof(d->cfg.state_dir));
    *restored = history_restore(d);
    return d;
}

static void gone(struct np_daemon *d)
{
    np_daemon_fini(d);
    free(d);
}

static void write_history(const char *text, mode_t mode)
{
    char path[1200];
    FILE *f;

    snprintf(path, sizeof(path), "%s/" NPD_HISTORY_FILE, t.d->cfg.state_dir);
    unlink(path);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(survives_a_restart)
{
    struct np_daemon *d;
    int restored, i;
    char path[1200];
    struct stat st;

    history_note(t.d, 4242, "lbm", true);
    history_note(t.d, 4242, "lbm", true);
    history_note(t.d, 4242, "lbm", false);
    history_note(t.d, 4243, "mcf", false);
    snprintf(path, sizeof(path), "%s/" NPD_HISTORY_FILE, t.d->cfg.state_dir);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600); /* the helper's alone */
    ck_assert_uint_eq(st.st_uid, geteuid());
    d = restarted(&restored);
    ck_assert_int_eq(restored, 2);
    i = history_find(&d->hint, 4242, "lbm");
    ck_assert_int_ge(i, 0);
    ck_assert_uint_eq(d->hint.history[i].high, 2);
    ck_assert_uint_eq(d->hint.history[i].low, 1);
    ck_assert_int_lt(history_find(&d->hint, 4242, "mcf"), 0); /* another user's name */
    ck_assert_uint_eq(d->hint.history_seq, 4);                /* replacement order kept */
    gone(d);
}
END_TEST

/* Bounded: NPD_HISTORY_MAX names at most, the one used longest ago replaced, and the file of
 * the longest names within NPD_HISTORY_FILE_MAX, so it reads back. */
START_TEST(bounded_and_reads_back_full)
{
    char name[128];
    struct np_daemon *d;
    int restored;

    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    /* Full of the longest names (set directly: a save per name would be 256 fsyncs). */
    for (unsigned k = 0; k < NPD_HISTORY_MAX; k++) {
        snprintf(name, 9, "%08u", k);
        name[8] = 'x';
        snprintf(t.d->hint.history[k].name, sizeof(t.d->hint.history[k].name), "%s", name);
        t.d->hint.history[k].uid = 1000;
        t.d->hint.history[k].high = 1;
        t.d->hint.history[k].last = ++t.d->hint.history_seq;
    }
    t.d->hint.nhistory = NPD_HISTORY_MAX;
    history_note(t.d, 1000, "one more", false);
    ck_assert_uint_eq(t.d->hint.nhistory, NPD_HISTORY_MAX);
    snprintf(name, 9, "%08u", 0u);
    name[8] = 'x';
    ck_assert_int_lt(history_find(&t.d->hint, 1000, name), 0); /* the first one went */
    snprintf(name, 9, "%08u", 1u);
    name[8] = 'x';
    ck_assert_int_ge(history_find(&t.d->hint, 1000, name), 0);
    d = restarted(&restored);
    ck_assert_int_eq(restored, NPD_HISTORY_MAX);
    gone(d);
}
END_TEST

/* Files the helper must not trust, each refused whole (no entry read). */
static const struct {
    const char *text;
    mode_t mode;
    const char *why;
} refused[] = {
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":1,\"low\":0,\"last\":1}]}",
     0666, "writable by group or others"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":1,\"low\":0,\"last\":1}]}",
     0620, "writable by group or others"},
    {"{\"schema\":\"numaplace-history/9\",\"seq\":1,\"entries\":[]}", 0600, "schema"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":1,\"low\":0,\"last\":1},{\"uid\":5,\"name\":\"b\",\"high\":\"1\",\"low\":0,"
     "\"last\":2}]}",
     0600, "entry 1"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":0,\"low\":0,\"last\":1}]}",
     0600, "out of range"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":1,\"low\":0,\"last\":1},{\"uid\":5,\"name\":\"a\",\"high\":1,\"low\":0,\"last\":2}]"
     "}",
     0600, "twice"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entries\":[{\"uid\":5,\"name\":\"a\","
     "\"high\":1,\"low\":0,\"last\":1,\"root\":true}]}",
     0600, "entry 0"},
    {"{\"schema\":\"numaplace-history/1\",\"seq\":1,\"entr", 0600, "premature end"},
};

START_TEST(untrusted_files_refused)
{
    struct np_daemon *d;
    int restored;

    write_history(refused[_i].text, refused[_i].mode);
    t.log.text[0] = '\0';
    d = restarted(&restored);
    ck_assert_int_lt(restored, 0);
    ck_assert_uint_eq(d->hint.nhistory, 0);
    ck_assert_msg(strstr(t.log.text, refused[_i].why), "%s", t.log.text);
    gone(d);
}
END_TEST

/* A symlink planted as history.json is not followed, and a file over the bound is not read. */
START_TEST(symlink_and_size_refused)
{
    char path[1200], *big;
    struct np_daemon *d;
    int restored;

    write_history("{}", 0600);
    snprintf(path, sizeof(path), "%s/" NPD_HISTORY_FILE, t.d->cfg.state_dir);
    unlink(path);
    ck_assert_int_eq(symlink("/etc/passwd", path), 0);
    d = restarted(&restored);
    ck_assert_int_eq(restored, -ELOOP);
    gone(d);
    unlink(path);
    big = malloc(NPD_HISTORY_READ_MAX + 2);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', NPD_HISTORY_READ_MAX + 1);
    big[NPD_HISTORY_READ_MAX + 1] = '\0';
    write_history(big, 0600);
    free(big);
    d = restarted(&restored);
    ck_assert_int_eq(restored, -EFBIG);
    gone(d);
}
END_TEST

/* A kill -9 between the temporary file's creation and its rename: the old history stands, and
 * the partial temporary is not read as it. */
START_TEST(killed_mid_write_keeps_the_old)
{
    char path[1200];
    struct np_daemon *d;
    int restored, fd;

    history_note(t.d, 4242, "lbm", true);
    snprintf(path, sizeof(path), "%s/." NPD_HISTORY_FILE ".99999.tmp", t.d->cfg.state_dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "{\"schema\":\"numa", 15), 15);
    close(fd);
    d = restarted(&restored);
    ck_assert_int_eq(restored, 1);
    ck_assert_int_ge(history_find(&d->hint, 4242, "lbm"), 0);
    gone(d);
}
END_TEST

/* The longest file the helper can write: every entry with the longest figures and a name of
 * the characters JSON escapes. It is within NPD_HISTORY_FILE_MAX, and reads back whole. */
START_TEST(worst_case_file_reads_back)
{
    char path[1200];
    struct np_daemon *d;
    struct stat st;
    int restored;

    for (unsigned k = 0; k < NPD_HISTORY_MAX; k++) {
        char *name = t.d->hint.history[k].name;
        for (unsigned b = 0; b < NPD_HISTORY_NAME_MAX; b++)
            name[b] = b % 2 ? '"' : '\\';
        snprintf(name, 9, "%08u", k); /* distinct, and cut short by one byte: put it back */
        name[8] = '"';
        name[NPD_HISTORY_NAME_MAX] = '\0';
        t.d->hint.history[k].uid = UINT32_MAX - 1;
        t.d->hint.history[k].high = UINT32_MAX;
        t.d->hint.history[k].low = UINT32_MAX;
        t.d->hint.history[k].last = (uint64_t)INT64_MAX - NPD_HISTORY_MAX + k;
    }
    t.d->hint.nhistory = NPD_HISTORY_MAX;
    t.d->hint.history_seq = INT64_MAX;
    history_save(t.d);
    snprintf(path, sizeof(path), "%s/" NPD_HISTORY_FILE, t.d->cfg.state_dir);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_le(st.st_size, NPD_HISTORY_FILE_MAX);
    /* The bound is tight: short of it only by the 8 digits that keep the names apart (unescaped),
     * a "last" of 19 digits, not 20, in each entry, and the last entry's comma and seq's digit. */
    ck_assert_int_eq(st.st_size, NPD_HISTORY_FILE_MAX - 9 * NPD_HISTORY_MAX - 2);
    d = restarted(&restored);
    ck_assert_int_eq(restored, NPD_HISTORY_MAX);
    gone(d);
}
END_TEST

/* A name with a control character is not kept (advise refuses it; this is the last guard), and
 * one an older helper kept is dropped at a restart, the others read. */
START_TEST(control_characters_not_kept)
{
    struct np_daemon *d;
    int restored;

    history_note(t.d, 4242, "a\033]0;owned\007", true);
    history_note(t.d, 4242,
                 "a\xc2\x9b"
                 "2J",
                 true);
    ck_assert_uint_eq(t.d->hint.nhistory, 0);
    write_history(
        "{\"schema\":\"numaplace-history/1\",\"seq\":2,\"entries\":[{\"uid\":5,\"name\":"
        "\"a\\u0001\",\"high\":1,\"low\":0,\"last\":1},{\"uid\":5,\"name\":\"b\",\"high\":1,"
        "\"low\":0,\"last\":2}]}",
        0600);
    t.log.text[0] = '\0';
    d = restarted(&restored);
    ck_assert_int_eq(restored, 1);
    ck_assert_int_ge(history_find(&d->hint, 5, "b"), 0);
    ck_assert_ptr_nonnull(strstr(t.log.text, "1 job name(s) with a control character dropped"));
    gone(d);
}
END_TEST

/* The entries are shared among users: one user's many names replace their own, never another
 * user's few. */
START_TEST(one_user_never_evicts_another)
{
    struct np_hint_state *a = &t.d->hint;
    char name[32];

    history_note(t.d, 2000, "theirs", true); /* the oldest entry of all */
    /* The rest full of one user's names (set directly: a save per name would be 255 fsyncs). */
    for (unsigned k = 1; k < NPD_HISTORY_MAX; k++) {
        snprintf(a->history[k].name, sizeof(a->history[k].name), "flood-%u", k);
        a->history[k].uid = 1000;
        a->history[k].low = 1;
        a->history[k].last = ++a->history_seq;
    }
    a->nhistory = NPD_HISTORY_MAX;
    for (unsigned k = 0; k < 8; k++) { /* more of theirs: their own oldest go */
        snprintf(name, sizeof(name), "more-%u", k);
        history_note(t.d, 1000, name, false);
        ck_assert_int_ge(history_find(a, 1000, name), 0);
    }
    ck_assert_uint_eq(a->nhistory, NPD_HISTORY_MAX);
    ck_assert_int_ge(history_find(a, 2000, "theirs"), 0);
    ck_assert_int_lt(history_find(a, 1000, "flood-1"), 0);
    ck_assert_int_ge(history_find(a, 1000, "flood-9"), 0);
    /* a newcomer within their share takes from the one holding the most */
    history_note(t.d, 3000, "new", true);
    ck_assert_int_ge(history_find(a, 2000, "theirs"), 0);
    ck_assert_int_ge(history_find(a, 3000, "new"), 0);
    ck_assert_int_lt(history_find(a, 1000, "flood-9"), 0);
}
END_TEST

/* Every entry another user's, one each: a newcomer takes the one used longest ago. */
START_TEST(a_newcomer_among_as_many_users_as_entries)
{
    struct np_hint_state *a = &t.d->hint;

    for (unsigned k = 0; k < NPD_HISTORY_MAX; k++) {
        snprintf(a->history[k].name, sizeof(a->history[k].name), "job");
        a->history[k].uid = 1000 + k;
        a->history[k].low = 1;
        a->history[k].last = ++a->history_seq;
    }
    a->nhistory = NPD_HISTORY_MAX;
    history_note(t.d, 5000, "job", true);
    ck_assert_int_ge(history_find(a, 5000, "job"), 0);
    ck_assert_int_lt(history_find(a, 1000, "job"), 0);
    ck_assert_int_ge(history_find(a, 1001, "job"), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_history");
    TCase *tc = tcase_create("history");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, survives_a_restart);
    tcase_add_test(tc, bounded_and_reads_back_full);
    tcase_add_loop_test(tc, untrusted_files_refused, 0, sizeof(refused) / sizeof(refused[0]));
    tcase_add_test(tc, symlink_and_size_refused);
    tcase_add_test(tc, killed_mid_write_keeps_the_old);
    tcase_add_test(tc, worst_case_file_reads_back);
    tcase_add_test(tc, control_characters_not_kept);
    tcase_add_test(tc, one_user_never_evicts_another);
    tcase_add_test(tc, a_newcomer_among_as_many_users_as_entries);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
