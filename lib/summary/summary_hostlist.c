/* A job's node lists: string sets, de-duplicated by sorting, and node names as a Slurm-style
 * hostlist ("node[0001-0100,0102],login1"), how a folded summary names thousands of nodes in a
 * few bytes (docs/summary-schema.md, "Folded nodes").
 *
 * The one hostlist code besides libslurm's, for a reason: lib/ is built and fuzzed without
 * Slurm's library (libslurm is the command's alone, and its hostlist type changes between
 * releases), and a stored summary's list is untrusted, so it is expanded here under a bound the
 * caller gives. Slurm's own node lists (a job's NodeList) the command reads with libslurm's
 * public slurm_hostlist_* functions in its one libslurm file, cli/slurmdb_comment.c; nothing in
 * the product runs `scontrol show hostnames` (test_cli_hostlist checks both against it). */
#include "summary_priv.h"

/* Longest numeric suffix read as a number: 18 digits fit an unsigned long long. */
#define MAX_DIGITS 18

/* A name split as prefix + zero-padded number (width 0: no number). Borrowed. */
struct split {
    const char *name;
    size_t prefix_len, width;
    unsigned long long num;
};

static struct split split_name(const char *name)
{
    struct split sp = {.name = name, .prefix_len = strlen(name)};
    size_t digits = 0;

    while (digits < sp.prefix_len && isdigit((unsigned char)name[sp.prefix_len - digits - 1]))
        digits++;
    if (digits == 0 || digits > MAX_DIGITS)
        return sp;
    sp.prefix_len -= digits;
    sp.width = digits;
    sp.num = strtoull(name + sp.prefix_len, NULL, 10);
    return sp;
}

static int cmp_split(const void *a, const void *b)
{
    const struct split *x = a, *y = b;
    const size_t common = x->prefix_len < y->prefix_len ? x->prefix_len : y->prefix_len;
    int c = strncmp(x->name, y->name, common);

    if (c)
        return c;
    if (x->prefix_len != y->prefix_len)
        return x->prefix_len < y->prefix_len ? -1 : 1;
    if (x->width != y->width)
        return x->width < y->width ? -1 : 1;
    if (x->num != y->num)
        return x->num < y->num ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool same_group(const struct split *a, const struct split *b)
{
    return a->width && a->width == b->width && a->prefix_len == b->prefix_len &&
           strncmp(a->name, b->name, a->prefix_len) == 0;
}

int np_hostlist_compress(const struct np_strs *names, char **out)
{
    struct split *v = malloc((names->n ? names->n : 1) * sizeof(*v));
    size_t len;
    FILE *f;
    bool bad;

    *out = NULL;
    if (!v || !(f = open_memstream(out, &len))) {
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; i < names->n; i++)
        v[i] = split_name(names->v[i]);
    qsort(v, names->n, sizeof(*v), cmp_split);
    for (size_t i = 0; i < names->n;) {
        size_t end = i + 1;
        while (end < names->n && same_group(&v[i], &v[end]))
            end++;
        fputs(i ? "," : "", f);
        if (end == i + 1) { /* a lone name stays as it is */
            fputs(v[i].name, f);
            i = end;
            continue;
        }
        fprintf(f, "%.*s[", (int)v[i].prefix_len, v[i].name);
        for (size_t r = i; r < end;) {
            size_t last = r;
            while (last + 1 < end && v[last + 1].num == v[last].num + 1)
                last++;
            fprintf(f, "%s%0*llu", r > i ? "," : "", (int)v[r].width, v[r].num);
            if (last > r)
                fprintf(f, "-%0*llu", (int)v[r].width, v[last].num);
            r = last + 1;
        }
        fputc(']', f);
        i = end;
    }
    free(v);
    bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*out);
        *out = NULL;
        return -ENOMEM;
    }
    return 0;
}

#define BAD_LIST(...) np_err_set(err, -EINVAL, __VA_ARGS__)

/* "a", "a-b" of a bracket: both numbers, a <= b. */
static int read_range(const char *p, size_t n, unsigned long long *lo, unsigned long long *hi,
                      size_t *width)
{
    const char *dash = memchr(p, '-', n);
    const size_t a = dash ? (size_t)(dash - p) : n, b = dash ? n - a - 1 : 0;

    if (a == 0 || a > MAX_DIGITS || (dash && (b == 0 || b > MAX_DIGITS)))
        return -EINVAL;
    for (size_t k = 0; k < n; k++)
        if (!isdigit((unsigned char)p[k]) && p + k != dash)
            return -EINVAL;
    *lo = strtoull(p, NULL, 10);
    *hi = dash ? strtoull(dash + 1, NULL, 10) : *lo;
    *width = a;
    return *lo <= *hi ? 0 : -EINVAL;
}

/* The names of one item ("login1" or "node[1-4,7]") appended to @p out. */
static int expand_item(const char *p, size_t n, size_t max, struct np_strs *out, struct np_err *err)
{
    const char *open = memchr(p, '[', n);
    const size_t prefix = open ? (size_t)(open - p) : n;
    const int shown = (int)(n < 64 ? n : 64); /* of the item, in messages */
    char name[256 + MAX_DIGITS + 2];

    if (prefix > 255 || (!open && n == 0))
        return BAD_LIST("hostlist item '%.*s': expected a node name or prefix[ranges]", shown, p);
    for (size_t k = 0; k < prefix; k++)
        if (!np_node_char_ok(p[k]))
            return BAD_LIST("hostlist: '%c' in a node name (letters, digits, '.', '-', '_')", p[k]);
    memcpy(name, p, prefix);
    name[prefix] = '\0';
    if (!open)
        return out->n >= max ? BAD_LIST("hostlist names more than %zu nodes", max)
                             : np_strs_append(out, name);
    if (p[n - 1] != ']')
        return BAD_LIST("hostlist item '%.*s': no closing ']'", shown, p);
    if (open + 1 == p + n - 1) /* "c-1[]" names no node */
        return BAD_LIST("hostlist item '%.*s': no range between the brackets", shown, p);
    for (const char *r = open + 1, *end = p + n - 1; r < end;) {
        const char *comma = memchr(r, ',', (size_t)(end - r));
        const size_t rn = comma ? (size_t)(comma - r) : (size_t)(end - r);
        unsigned long long lo, hi;
        size_t width;
        if (read_range(r, rn, &lo, &hi, &width) != 0)
            return BAD_LIST("hostlist range '%.*s': expected N or N-M with N <= M",
                            (int)(rn < 40 ? rn : 40), r);
        if (hi - lo >= max - out->n)
            return BAD_LIST("hostlist names more than %zu nodes", max);
        for (unsigned long long k = lo; k <= hi; k++) {
            snprintf(name + prefix, sizeof(name) - prefix, "%0*llu", (int)width, k);
            if (np_strs_append(out, name) != 0)
                return np_err_set(err, -ENOMEM, "hostlist: out of memory");
        }
        r += rn + (comma ? 1 : 0);
    }
    return 0;
}

int np_hostlist_expand(const char *list, size_t max, struct np_strs *out, struct np_err *err)
{
    const char *p = list;
    size_t kept = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    while (!rc && p && *p) {
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth || p[n] != ',')) {
            depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
            if (depth < 0 || depth > 1)
                return np_strs_free(out), BAD_LIST("hostlist: unbalanced brackets");
            n++;
        }
        rc = expand_item(p, n, max, out, err);
        p += n + (p[n] == ',');
    }
    if (rc) {
        np_strs_free(out);
        return rc == -ENOMEM ? np_err_set(err, rc, "hostlist: out of memory") : rc;
    }
    if (out->n == 0) /* qsort takes no NULL array, even empty */
        return 0;
    qsort(out->v, out->n, sizeof(*out->v), np_cmp_str);
    for (size_t i = 0; i < out->n; i++) /* drop duplicates */
        if (kept && strcmp(out->v[kept - 1], out->v[i]) == 0)
            free(out->v[i]);
        else
            out->v[kept++] = out->v[i];
    out->n = kept;
    return 0;
}

bool np_strs_sorted_has(const struct np_strs *names, const char *name)
{
    return name && names->n && bsearch(&name, names->v, names->n, sizeof(*names->v), np_cmp_str);
}

static int strs_insert(struct np_strs *s, size_t at, const char *str)
{
    char **v = realloc(s->v, (s->n + 1) * sizeof(*v)), *c;

    if (!v)
        return -ENOMEM;
    s->v = v;
    c = strdup(str);
    if (!c)
        return -ENOMEM;
    memmove(&v[at + 1], &v[at], (s->n - at) * sizeof(*v));
    v[at] = c;
    s->n++;
    return 0;
}

int np_strs_append(struct np_strs *s, const char *str)
{
    return strs_insert(s, s->n, str);
}

/* One name of np_strs_append_new's sort: where it comes from decides which copy is first. */
struct strs_entry {
    const char *str;
    size_t order; /* s's own first (0..s->n), then the new names' */
};

static int strs_entry_cmp(const void *a, const void *b)
{
    const struct strs_entry *x = a, *y = b;
    const int c = strcmp(x->str, y->str);

    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

int np_strs_append_new(struct np_strs *s, const char *const *names, size_t n)
{
    const size_t total = s->n + n;
    struct strs_entry *all;
    bool *take;
    char **v;
    size_t added = 0, at = s->n;

    if (n == 0)
        return 0;
    all = malloc(total * sizeof(*all));
    take = calloc(n, sizeof(*take));
    if (!all || !take) {
        free(all);
        free(take);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        all[i] = (struct strs_entry){s->v[i], i};
    for (size_t i = 0; i < n; i++)
        all[s->n + i] = (struct strs_entry){names[i], s->n + i};
    qsort(all, total, sizeof(*all), strs_entry_cmp);
    /* the first of each run of equal names is the one kept; a new one only if s lacks it */
    for (size_t i = 0; i < total; i++)
        if ((i == 0 || strcmp(all[i - 1].str, all[i].str) != 0) && all[i].order >= s->n) {
            take[all[i].order - s->n] = true;
            added++;
        }
    free(all);
    v = added ? realloc(s->v, (s->n + added) * sizeof(*v)) : s->v;
    if (!v) {
        free(take);
        return -ENOMEM;
    }
    s->v = v;
    for (size_t i = 0; i < n; i++) {
        if (!take[i])
            continue;
        if (!(v[at] = strdup(names[i]))) {
            while (at > s->n)
                free(v[--at]);
            free(take);
            return -ENOMEM;
        }
        at++;
    }
    s->n = at;
    free(take);
    return 0;
}

int np_strs_add_sorted(struct np_strs *s, const char *str)
{
    size_t i;

    for (i = 0; str && i < s->n; i++) {
        const int c = strcmp(s->v[i], str);
        if (c == 0)
            return 0;
        if (c > 0)
            break;
    }
    return str ? strs_insert(s, i, str) : 0;
}

void np_strs_free(struct np_strs *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}
