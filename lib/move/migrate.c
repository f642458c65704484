/* Moving a process's memory between nodes, rate-limited (see numaplace/engine.h). */
#include "numaplace/engine.h"
#include "numaplace/names.h"
#include "numaplace/procfs.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BATCH_PAGES 1024u
#define NODEMASK_WORDS      16 /* 1024 nodes: far beyond any machine this runs on */

uint64_t np_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void np_rate_limiter_init(struct np_rate_limiter *rl, double bytes_per_s)
{
    rl->bytes_per_s = bytes_per_s > 0 ? bytes_per_s : 0;
    /* A quarter second of rate: smooth enough to honour the rate within a few percent over a
     * second, deep enough that one default batch (4 MiB) always fits at >= 16 MB/s. */
    rl->burst_bytes = rl->bytes_per_s / 4;
    rl->tokens = 0; /* start empty: the first batch waits, so short moves honour the rate too */
    rl->last_ns = np_now_ns();
}

uint64_t np_rate_limiter_take(struct np_rate_limiter *rl, uint64_t bytes)
{
    uint64_t slept = 0;

    if (!rl || rl->bytes_per_s <= 0)
        return 0;
    for (;;) {
        const uint64_t now = np_now_ns();
        uint64_t before;
        double wait_ns;

        rl->tokens += (double)(now - rl->last_ns) * rl->bytes_per_s / 1e9;
        rl->last_ns = now;
        /* A batch larger than the bucket may still pass once the bucket is full. */
        if (rl->tokens > rl->burst_bytes && rl->tokens > (double)bytes)
            rl->tokens = rl->burst_bytes > (double)bytes ? rl->burst_bytes : (double)bytes;
        if (rl->tokens >= (double)bytes) {
            rl->tokens -= (double)bytes;
            return slept;
        }
        wait_ns = ((double)bytes - rl->tokens) / rl->bytes_per_s * 1e9;
        before = np_now_ns();
        nanosleep(&(struct timespec){.tv_sec = (time_t)(wait_ns / 1e9),
                                     .tv_nsec = (long)((uint64_t)wait_ns % 1000000000ull)},
                  NULL);
        slept += np_now_ns() - before;
    }
}

static const char *const failure_names[NP_MOVE_FAIL_COUNT] = {
    [NP_MOVE_FAIL_BUSY] = "busy",
    [NP_MOVE_FAIL_NOMEM] = "no-memory-on-destination",
    [NP_MOVE_FAIL_ACCESS] = "shared",
    [NP_MOVE_FAIL_OTHER] = "other",
};
static const struct np_name_table failures = {"move failure", failure_names, NP_MOVE_FAIL_COUNT,
                                              NULL};

const char *np_move_failure_name(enum np_move_failure f)
{
    /* Past the table is still "other": reports count every failure somewhere. */
    return (unsigned)f < NP_MOVE_FAIL_COUNT ? np_name_of(&failures, (unsigned)f) : "other";
}

void np_move_result_add(struct np_move_result *total, const struct np_move_result *add)
{
    total->pages_moved += add->pages_moved;
    total->bytes_moved += add->bytes_moved;
    for (int i = 0; i < NP_MOVE_FAIL_COUNT; i++)
        total->pages_failed[i] += add->pages_failed[i];
    total->pages_examined += add->pages_examined;
    total->ns_moving += add->ns_moving;
    total->ns_throttled += add->ns_throttled;
    total->process_gone |= add->process_gone;
    total->whole |= add->whole;
    total->stopped |= add->stopped;
    total->replaced |= add->replaced;
}

enum np_move_failure np_move_failure_of_status(int status)
{
    switch (-status) {
    case EBUSY:
        return NP_MOVE_FAIL_BUSY;
    case ENOMEM:
        return NP_MOVE_FAIL_NOMEM;
    case EACCES: /* mapped by another process too, and MPOL_MF_MOVE_ALL not given */
        return NP_MOVE_FAIL_ACCESS;
    default:
        return NP_MOVE_FAIL_OTHER;
    }
}

enum np_move_path np_move_path_choose(uint64_t max_pages, double bytes_per_s)
{
    /* Everything on S, no rate limit: one migrate_pages call does it fastest, in the kernel. */
    return max_pages == UINT64_MAX && !(bytes_per_s > 0) ? NP_MOVE_PATH_WHOLE : NP_MOVE_PATH_PAGES;
}

int np_move_pages_flag(bool move_shared)
{
    return move_shared ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE;
}

/* The kernel's PF_EXITING task flag (include/linux/sched.h): the process is being torn down. */
#define NP_PF_EXITING 0x4ul

/*
 * Is the process gone or on its way out? A killed process's memory is torn down before it
 * becomes a zombie, and meanwhile move_pages and migrate_pages fail with EINVAL (no mm) and its
 * numa_maps is empty: that is an exit, not a failure of the move.
 */
static bool process_exiting(const char *root, pid_t pid)
{
    struct np_proc_stat st;

    return np_proc_stat_read(root, pid, &st, NULL) < 0 || st.state == 'Z' || st.state == 'X' ||
           (st.flags & NP_PF_EXITING);
}

/*
 * Is @p pid still the process the move was asked for? A rate-limited move can run for minutes:
 * the process may exit meanwhile and its pid go to another (another user's) process.
 */
static bool same_process(pid_t pid, const struct np_move_options *options)
{
    struct np_proc_stat st;
    struct np_proc_status status = {0};
    int rc;

    if (!options->starttime_ticks)
        return true;
    /* A process that is gone is not "replaced": the move itself finds it gone. */
    rc = np_proc_stat_read(options->root, pid, &st, NULL);
    if (rc == 0 && st.starttime_ticks == options->starttime_ticks)
        rc = np_proc_status_read(options->root, pid, &status, NULL);
    else if (rc == 0)
        return false;
    return rc == -ESRCH || (rc == 0 && status.uid == options->uid);
}

/* The work of a page-by-page move, shared between batches and mappings. */
struct partial_move {
    pid_t pid;
    int src, dst;
    uint64_t budget;  /* pages still to move */
    unsigned batch;   /* addresses per call */
    size_t page_size; /* base page */
    const struct np_move_options *options;
    struct np_rate_limiter *rl;
    struct np_move_result *result;
    void **addrs;  /* batch addresses */
    void **on_src; /* the subset found on S */
    int *status;
    int *nodes;
    uint64_t seen_on_src; /* pages found on S so far (moved or not) */
};

/* x86-64's PMD size: transparent huge pages are this big and this aligned. */
#define HUGE_ALIGN ((uintptr_t)2 << 20)

/* same_process for a move: a process that changed hands ends the move, said in the result. */
static bool still_same_process(struct partial_move *m)
{
    if (same_process(m->pid, m->options))
        return true;
    m->result->replaced = true;
    return false;
}

/* The caller's should_stop said stop: the move ends here, said in the result. */
static bool stop_asked(struct partial_move *m)
{
    const struct np_move_options *o = m->options;

    if (!o->should_stop || !o->should_stop(o->stop_arg))
        return false;
    m->result->stopped = true;
    return true;
}

/* Where each of @p count pages at @p addrs is (nodes == NULL: only ask) into m->status;
 * unmapped addresses report -EFAULT/-ENOENT. @return 0, -ESRCH (gone) or -errno */
static int query_pages(struct partial_move *m, unsigned count, void **addrs, struct np_err *err)
{
    if (move_pages(m->pid, count, addrs, NULL, m->status, 0) >= 0)
        return 0;
    return errno == ESRCH ? -ESRCH
                          : np_err_set(err, -errno, "move_pages(query, pid %d): %s", (int)m->pid,
                                       strerror(errno));
}

/*
 * Query one batch of addresses and move the ones on S. Returns 0, or -ESRCH when gone.
 * @p all_on_src: numa_maps just showed every present page of this mapping on S, so the query is
 * skipped and the whole batch is asked to move; addresses with no page (-ENOENT, -EFAULT) are
 * then simply not there, neither moved nor failed.
 */
static int move_batch(struct partial_move *m, uintptr_t start, unsigned count, bool all_on_src,
                      struct np_err *err)
{
    unsigned found = 0, all, moved = 0;
    long rc;

    for (unsigned i = 0; i < count; i++)
        m->addrs[i] = (void *)(start + (uintptr_t)i * m->page_size);
    if (all_on_src && !m->options->dry_run) {
        memcpy(m->on_src, m->addrs, count * sizeof(*m->addrs));
        found = count;
    } else {
        const int qrc = query_pages(m, count, m->addrs, err);
        if (qrc < 0)
            return qrc;
        for (unsigned i = 0; i < count; i++)
            if (m->status[i] == m->src)
                m->on_src[found++] = m->addrs[i];
        m->seen_on_src += found;
    }
    m->result->pages_examined += count;
    if (found == 0)
        return 0;
    all = found;
    if (found > m->budget)
        found = (unsigned)m->budget;
    if (m->options->dry_run) {
        if (!still_same_process(m))
            return -ESRCH;
        m->result->pages_moved += found; /* "would move" in a dry run */
        m->budget -= found;
        return 0;
    }
    m->result->ns_throttled += np_rate_limiter_take(m->rl, (uint64_t)found * m->page_size);
    /* Right before the move, after the rate limiter's wait (seconds at a low rate): the pid may
     * have changed hands meanwhile, and another process must never get these addresses moved. */
    if (!still_same_process(m))
        return -ESRCH;
    for (unsigned i = 0; i < found; i++)
        m->nodes[i] = m->dst;
    {
        const uint64_t t0 = np_now_ns();
        rc = move_pages(m->pid, found, m->on_src, m->nodes, m->status,
                        np_move_pages_flag(m->options->move_shared));
        m->result->ns_moving += np_now_ns() - t0;
    }
    if (rc < 0) {
        if (errno == ESRCH)
            return -ESRCH;
        if (errno != ENOENT && errno != ENOMEM && errno != E2BIG)
            return np_err_set(err, -errno, "move_pages(pid %d, node %d -> %d): %s", (int)m->pid,
                              m->src, m->dst, strerror(errno));
        /* Per-page statuses still say what happened to each page. */
    }
    for (unsigned i = 0; i < found; i++) {
        if (all_on_src && (m->status[i] == -ENOENT || m->status[i] == -EFAULT))
            continue; /* no page at this address */
        if (all_on_src)
            m->seen_on_src++;
        if (m->status[i] == m->dst)
            moved++;
        else if (m->status[i] < 0)
            m->result->pages_failed[np_move_failure_of_status(m->status[i])]++;
        else
            m->result->pages_failed[NP_MOVE_FAIL_OTHER]++;
    }
    /* A transparent huge page moves whole when one of its base pages is asked for: when the
     * budget cut this batch short, the pages on S not asked for may have moved with it. Only
     * then is a second query needed (a full batch's statuses already say where each page is). */
    if (found < all) {
        const int qrc = query_pages(m, all - found, m->on_src + found, err);
        if (qrc < 0)
            return qrc;
        for (unsigned i = 0; i < all - found; i++)
            if (m->status[i] == m->dst)
                moved++;
    }
    m->result->pages_moved += moved;
    if (moved > found) /* the huge pages' other base pages moved too: they count against the rate */
        m->result->ns_throttled +=
            np_rate_limiter_take(m->rl, (uint64_t)(moved - found) * m->page_size);
    m->budget = moved >= m->budget ? 0 : m->budget - moved;
    return 0;
}

/* A mapping with pages on S: where it is, and how many base pages numa_maps counted there. */
struct vma {
    uintptr_t start, end;
    uint64_t on_src;
    bool only_src; /* numa_maps shows no page of it on another node */
};

struct vma_list {
    struct vma *vmas;
    size_t n, cap;
    int src;
    size_t base_page;
};

static int collect_vma(const struct np_numa_mapping *m, void *arg)
{
    struct vma_list *l = arg;
    const unsigned long long pages = l->src < NP_NUMA_MAPS_MAX_NODES ? m->pages[l->src] : 0;

    if (pages == 0)
        return 0;
    if (l->n == l->cap) {
        struct vma *grown = realloc(l->vmas, (l->cap = l->cap ? l->cap * 2 : 64) * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        l->vmas = grown;
    }
    /* numa_maps counts pages of the mapping's own size (huge pages for hugetlbfs). */
    l->vmas[l->n++] = (struct vma){m->start, 0, pages * (m->page_kb * 1024 / l->base_page), true};
    for (int node = 0; node < NP_NUMA_MAPS_MAX_NODES; node++)
        if (node != l->src && m->pages[node])
            l->vmas[l->n - 1].only_src = false;
    return 0;
}

/*
 * The mappings that hold pages on @p src: numa_maps says which (and how many), maps says where
 * they end. Walking only these, and each only until its pages are found, keeps a move cheap in
 * processes with huge sparse reservations (a JVM heap, ASan's shadow: terabytes mapped, little
 * present). @return the count, or -ESRCH (gone) / -ENOMEM / -errno.
 */
static long find_vmas(pid_t pid, const char *root, int src, size_t base_page, struct vma **out,
                      struct np_err *err)
{
    char path[4096], line[8192];
    struct vma_list l = {.src = src, .base_page = base_page};
    FILE *f;
    int rc = np_numa_maps_each(root, pid, collect_vma, &l, NULL, err);

    *out = NULL;
    if (rc < 0) {
        free(l.vmas);
        return rc == -ENOMEM ? np_err_set(err, rc, "out of memory listing mappings") : rc;
    }
    /* numa_maps has no end addresses: maps does. */
    snprintf(path, sizeof(path), "%s/proc/%d/maps", root && *root ? root : "", (int)pid);
    f = fopen(path, "re");
    if (!f) {
        free(l.vmas);
        return errno == ENOENT || errno == ESRCH
                   ? -ESRCH
                   : np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    }
    while (fgets(line, sizeof(line), f)) {
        uintptr_t start, end;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) != 2)
            continue;
        for (size_t i = 0; i < l.n; i++)
            if (l.vmas[i].start == start)
                l.vmas[i].end = end;
    }
    fclose(f);
    *out = l.vmas;
    return (long)l.n;
}

static double density(const struct vma *v)
{
    return v->end > v->start ? (double)v->on_src / (double)(v->end - v->start) : 0.0;
}

static int by_density(const void *pa, const void *pb)
{
    const double a = density(pa), b = density(pb);
    return (a < b) - (a > b);
}

/*
 * Move batch by batch over the mappings with pages on S until the budget is spent, densest
 * first: a partial move then finds its pages in the fewest calls and rarely reaches the sparse
 * giants (a mapping is walked address by address up to its last page on S).
 */
static int move_partial(struct partial_move *m, struct np_err *err)
{
    const char *root = m->options->root;
    struct vma *vmas = NULL;
    const long n = find_vmas(m->pid, root, m->src, m->page_size, &vmas, err);
    int rc = 0;

    if (n <= 0 || !vmas) {
        free(vmas);
        if (n < 0)
            return (int)n;
        /* No mapping at all: an exiting process has no memory left to move. */
        return process_exiting(root, m->pid) ? -ESRCH : 0;
    }
    qsort(vmas, (size_t)n, sizeof(*vmas), by_density);
    for (long v = 0; rc == 0 && v < n && m->budget > 0 && !m->result->stopped; v++) {
        const uint64_t seen_before = m->seen_on_src;
        for (uintptr_t a = vmas[v].start; rc == 0 && a < vmas[v].end && m->budget > 0 &&
                                          m->seen_on_src - seen_before < vmas[v].on_src;) {
            const uintptr_t left = (vmas[v].end - a) / m->page_size;
            /* Batches end on huge-page boundaries, so a transparent huge page (which moves
             * whole) never straddles two batches and is counted where it moved. */
            const uintptr_t to_boundary = ((a | (HUGE_ALIGN - 1)) + 1 - a) / m->page_size;
            unsigned count = left < m->batch ? (unsigned)left : m->batch;
            if (a % HUGE_ALIGN && to_boundary < count)
                count = (unsigned)to_boundary;
            if (stop_asked(m))
                break;
            rc = move_batch(m, a, count, vmas[v].only_src, err);
            a += (uintptr_t)count * m->page_size;
        }
    }
    free(vmas);
    return rc;
}

static void nodemask_of(unsigned node, unsigned long *mask)
{
    memset(mask, 0, NODEMASK_WORDS * sizeof(*mask));
    mask[node / (8 * sizeof(*mask))] |= 1ul << (node % (8 * sizeof(*mask)));
}

/* The base pages a process has on @p src, by numa_maps (nothing is walked or moved). */
static int count_on_node(pid_t pid, unsigned src, const struct np_move_options *options,
                         uint64_t *pages, struct np_err *err)
{
    struct vma *vmas = NULL;
    const long n =
        find_vmas(pid, options->root, (int)src, (size_t)sysconf(_SC_PAGESIZE), &vmas, err);

    *pages = 0;
    for (long v = 0; vmas && v < n; v++)
        *pages += vmas[v].on_src;
    free(vmas);
    return n < 0 ? (int)n : 0;
}

/*
 * migrate_pages(2) of @p pid from the nodes in @p from to those in @p to (@p maxnode bits). The
 * kernel moves shared pages too when the caller is capable(CAP_SYS_NICE) (MPOL_MF_MOVE_ALL,
 * mm/mempolicy.c), so unless @p move_shared the call runs with CAP_SYS_NICE out of this thread's
 * effective set (capset(2) is per thread: the daemon's other threads never see it), put back
 * before this returns. Root still moves another user's process (CAP_SYS_PTRACE).
 * @return what migrate_pages returns (pages that failed, or -1 with errno); -1 with errno from
 *         capset when the capability could not be dropped (nothing was moved then)
 */
static long migrate_own_pages(pid_t pid, unsigned long maxnode, const unsigned long *from,
                              const unsigned long *to, bool move_shared)
{
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
    const uint32_t sys_nice = 1u << (CAP_SYS_NICE % 32);
    bool dropped = false;
    long left;
    int saved;

    if (!move_shared) {
        if (syscall(SYS_capget, &header, caps) < 0)
            return -1;
        if (caps[CAP_SYS_NICE / 32].effective & sys_nice) {
            caps[CAP_SYS_NICE / 32].effective &= ~sys_nice;
            /* Not dropped: nothing moves rather than shared pages with the rest. */
            if (syscall(SYS_capset, &header, caps) < 0)
                return -1;
            dropped = true;
        }
    }
    left = migrate_pages(pid, maxnode, from, to);
    saved = errno;
    if (dropped) {
        caps[CAP_SYS_NICE / 32].effective |= sys_nice;
        /* Raising an effective bit that is still permitted does not fail; if it did, later
         * moves would refuse shared pages all the more (MPOL_MF_MOVE_ALL: EPERM, logged). */
        (void)syscall(SYS_capset, &header, caps);
    }
    errno = saved;
    return left;
}

/*
 * The whole path (numaplace/engine.h): the kernel walks the page tables itself, fast even over
 * huge sparse mappings. migrate_pages says only how many pages failed and skips shared ones
 * without a word, so the page-by-page pass after it, over the mappings still holding pages on S,
 * counts the rest by cause.
 */
static int move_whole(struct partial_move *m, struct np_err *err)
{
    const struct np_move_options *options = m->options;
    unsigned long from[NODEMASK_WORDS], to[NODEMASK_WORDS];
    uint64_t before = 0, after = 0, t0;
    long left;
    int rc = count_on_node(m->pid, (unsigned)m->src, options, &before, err);

    if (rc < 0)
        return rc;
    m->result->whole = true;
    m->result->pages_examined = before;
    if (stop_asked(m))
        return 0;
    if (!still_same_process(m))
        return -ESRCH;
    if (options->dry_run) {
        m->result->pages_moved = before;
        return 0;
    }
    nodemask_of((unsigned)m->src, from);
    nodemask_of((unsigned)m->dst, to);
    t0 = np_now_ns();
    left = migrate_own_pages(m->pid, NODEMASK_WORDS * 8ul * sizeof(unsigned long), from, to,
                             options->move_shared);
    m->result->ns_moving = np_now_ns() - t0;
    if (left < 0) {
        const int saved = errno;
        return saved == ESRCH ? -ESRCH
                              : np_err_set(err, -saved, "migrate_pages(pid %d, node %d -> %d): %s",
                                           (int)m->pid, m->src, m->dst, strerror(saved));
    }
    rc = count_on_node(m->pid, (unsigned)m->src, options, &after, err);
    if (rc < 0)
        return rc;
    m->result->pages_moved = before > after ? before - after : 0;
    return after ? move_partial(m, err) : 0;
}

int np_move_process_pages(pid_t pid, unsigned src, unsigned dst, uint64_t max_pages,
                          const struct np_move_options *options, struct np_rate_limiter *rl,
                          struct np_move_result *result, struct np_err *err)
{
    static const struct np_move_options defaults = {0};
    struct partial_move m = {0};
    int rc;

    if (!result)
        return np_err_set(err, -EINVAL, "np_move_process_pages: result is NULL");
    memset(result, 0, sizeof(*result));
    if (!options)
        options = &defaults;
    if (pid <= 0 || src == dst || src >= NODEMASK_WORDS * 64 || dst >= NODEMASK_WORDS * 64)
        return np_err_set(err, -EINVAL, "invalid move: pid %d, node %u -> %u", (int)pid, src, dst);
    m.pid = pid;
    m.src = (int)src;
    m.dst = (int)dst;
    m.budget = max_pages;
    m.batch = options->batch_pages ? options->batch_pages : DEFAULT_BATCH_PAGES;
    m.page_size = (size_t)sysconf(_SC_PAGESIZE);
    m.options = options;
    m.rl = rl;
    m.result = result;
    m.addrs = calloc(m.batch, sizeof(*m.addrs));
    m.on_src = calloc(m.batch, sizeof(*m.on_src));
    m.status = calloc(m.batch, sizeof(*m.status));
    m.nodes = calloc(m.batch, sizeof(*m.nodes));
    if (!m.addrs || !m.on_src || !m.status || !m.nodes) {
        rc = np_err_set(err, -ENOMEM, "out of memory for a %u-page batch", m.batch);
    } else {
        rc = np_move_path_choose(max_pages, rl ? rl->bytes_per_s : 0) == NP_MOVE_PATH_WHOLE
                 ? move_whole(&m, err)
                 : move_partial(&m, err);
        if (rc < 0 && rc != -ENOMEM && process_exiting(options->root, pid))
            rc = -ESRCH;
        if (rc == -ESRCH) {
            result->process_gone = true;
            rc = 0;
        }
    }
    result->bytes_moved = result->pages_moved * m.page_size;
    free(m.addrs);
    free(m.on_src);
    free(m.status);
    free(m.nodes);
    return rc;
}

/* Migration requests over the jobs of one node. */
void np_request_result_fini(struct np_request_result *r)
{
    if (!r)
        return;
    free(r->outcomes);
    r->outcomes = NULL;
    r->noutcomes = 0;
}

static const char *const outcome_names[NP_OUTCOME_COUNT] = {
    [NP_OUTCOME_DONE] = "done",
    [NP_OUTCOME_SHORT] = "short",
    [NP_OUTCOME_FAILED] = "failed",
    [NP_OUTCOME_DRY_RUN] = "dry_run",
};
static const struct np_name_table outcomes = {"request outcome", outcome_names, NP_OUTCOME_COUNT,
                                              NULL};

enum np_request_outcome np_request_outcome_of(int rc, const struct np_request_result *result)
{
    if (rc < 0)
        return NP_OUTCOME_FAILED;
    if (result->dry_run)
        return NP_OUTCOME_DRY_RUN;
    return result->moved < result->request.pages ? NP_OUTCOME_SHORT : NP_OUTCOME_DONE;
}

const char *np_request_outcome_name(enum np_request_outcome o)
{
    return np_name_of(&outcomes, (unsigned)o);
}

/* Move @p pages of one job's memory from src to dst, process by process. */
static void move_job(const struct np_job_view *job, const struct np_request *req, uint64_t pages,
                     const struct np_engine_config *config, struct np_rate_limiter *rl,
                     const struct np_log *log, struct np_move_result *total)
{
    struct np_move_options options = {.dry_run = config->dry_run,
                                      .should_stop = config->should_stop,
                                      .stop_arg = config->stop_arg,
                                      .move_shared = config->move_shared,
                                      .uid = job->uid};
    /* The job's whole share of S: each process moves all it has there. */
    const bool whole = pages >= job->pages_on_node[req->src];
    uint64_t left = pages;

    memset(total, 0, sizeof(*total));
    for (size_t p = 0; p < job->npids && (whole || left > 0) && !total->stopped; p++) {
        struct np_move_result one;
        struct np_err err = {0};
        options.starttime_ticks = job->starttimes ? job->starttimes[p] : 0;
        /* A failed move still says what it moved before it failed: that counts too. */
        if (np_move_process_pages(job->pids[p], req->src, req->dst, whole ? UINT64_MAX : left,
                                  &options, rl, &one, &err) < 0)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ".%s pid %d: %s (%" PRIu64 " pages moved before)", job->job_id,
                    np_step_name(job->step_id), (int)job->pids[p], err.msg, one.pages_moved);
        np_move_result_add(total, &one);
        left = one.pages_moved >= left ? 0 : left - one.pages_moved;
    }
}

static void log_outcome(const struct np_log *log, const char *trigger, const struct np_request *req,
                        const struct np_job_view *job, const struct np_candidate *cand,
                        const struct np_job_outcome *o, bool dry_run)
{
    np_logf(log, NP_LOG_INFO,
            "%s: job %" PRIu32 ".%s (%s, %s bandwidth %.3g B/s) node %u -> %u: "
            "planned %" PRIu64 " pages, %s %" PRIu64 "%s%s%s",
            trigger, job->job_id, np_step_name(job->step_id), np_move_group_name(cand->group),
            job->bandwidth_is_proxy ? "proxy" : "measured", job->bandwidth, req->src, req->dst,
            o->planned, dry_run ? "would move" : "moved", o->moved.pages_moved,
            o->moved.process_gone ? " (a process exited mid-move)" : "",
            o->moved.replaced ? " (a pid went to another process: not touched)" : "",
            o->moved.stopped ? " (stopped early)" : "");
}

int np_engine_run_request(const struct np_node_view *view, const struct np_engine_config *config,
                          const struct np_request *request, struct np_rate_limiter *rl,
                          const struct np_log *log, struct np_request_result *result,
                          struct np_err *err)
{
    const struct np_order_ops *order = config->order ? config->order : np_order_default();
    const char *trigger = np_trigger_name(request->trigger);
    uint64_t wanted = request->pages;
    char unpredicted[96] = "";
    struct np_plan plan;
    int rc;

    memset(result, 0, sizeof(*result));
    result->request = *request;
    result->src_tier = np_view_tier(view, request->src);
    result->dst_tier = np_view_tier(view, request->dst);
    result->dry_run = config->dry_run;
    result->order = request->target_job >= 0 ? "job" : order->name;
    if (request->src >= view->nnodes || request->dst >= view->nnodes ||
        request->src == request->dst)
        return np_err_set(err, -EINVAL,
                          "invalid migration request: from node %u to node %u on a machine with "
                          "nodes 0-%u (they must differ)",
                          request->src, request->dst, view->nnodes ? view->nnodes - 1 : 0);
    {
        /* Never push D below its free floor: the pages the request may still move there. */
        const uint64_t free_d = view->free_bytes[request->dst], keep = config->free_floor_bytes;
        const uint64_t room = free_d > keep ? (free_d - keep) / (uint64_t)sysconf(_SC_PAGESIZE) : 0;
        if (room < wanted) {
            result->capped_by_floor = wanted - room;
            wanted = room;
        }
    }
    rc = np_plan_make(view, request, order, config->seed, wanted, NP_PLAN_EXACT, &plan);
    result->outcomes =
        rc == 0 ? calloc(plan.nsteps ? plan.nsteps : 1, sizeof(*result->outcomes)) : NULL;
    if (!result->outcomes) {
        np_plan_fini(&plan);
        return np_err_set(err, rc < 0 ? rc : -ENOMEM, "out of memory planning a request");
    }
    result->candidates = plan.ncands;
    result->used_proxy = plan.used_proxy;
    result->unpredicted = plan.unpredicted;
    result->planned = plan.planned;
    for (size_t s = 0; s < plan.nsteps && !result->stopped; s++) {
        const struct np_candidate *cand = &plan.cands[plan.steps[s].index];
        const struct np_job_view *job = &view->jobs[cand->job_index];
        struct np_job_outcome *o = &result->outcomes[result->noutcomes++];

        o->job_index = cand->job_index;
        o->planned = plan.steps[s].pages;
        move_job(job, request, o->planned, config, rl, log, &o->moved);
        result->moved += o->moved.pages_moved;
        result->stopped = o->moved.stopped;
        log_outcome(log, trigger, request, job, cand, o, config->dry_run);
    }
    if (result->unpredicted)
        snprintf(unpredicted, sizeof(unpredicted),
                 " (%" PRIu64 " candidate%s without a predicted effect: best-plus's rule for "
                 "them)",
                 result->unpredicted, result->unpredicted == 1 ? "" : "s");
    snprintf(result->summary, sizeof(result->summary),
             "%s request node %u -> %u for %" PRIu64 " pages (%s): order %s%s%s, %" PRIu64
             " candidates, planned %" PRIu64 ", %s %" PRIu64 "%s%s",
             trigger, request->src, request->dst, request->pages,
             request->reason[0] ? request->reason : "no reason given", result->order,
             result->used_proxy ? " on proxy bandwidth (no memory counter)" : "", unpredicted,
             result->candidates, result->planned, config->dry_run ? "would move" : "moved",
             result->moved,
             result->capped_by_floor ? ", capped to keep the destination's free floor" : "",
             result->stopped                    ? "; stopped before its end"
             : result->planned < request->pages ? "; ended short"
                                                : "");
    np_logf(log, NP_LOG_INFO, "%s", result->summary);
    np_plan_fini(&plan);
    return 0;
}
