/* User names and admin_group's members looked up off the loop (see user_names.h). */
#include "user_names.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/sampler.h"

struct user_name {
    uid_t uid;
    bool used, known; /* used and not known: its lookup is under way */
    char name[64];
};

/* The one group admin_group names, as the latest lookup answered. */
struct group_answer {
    char group[64]; /* asked about; "" none */
    uint64_t asked; /* bumped at each change of group: an older lookup's answer is dropped */
    bool looking;   /* a lookup of `group` is under way */
    bool answered;  /* the fields below are `group`'s */
    bool exists;    /* the group was found */
    gid_t gid;
    uid_t *members; /* the users it lists */
    unsigned nmembers;
    double answered_at; /* monotonic s */
};

static int nss_user_name(uid_t uid, char *buf, size_t len);
static int nss_group_members(const char *group, gid_t *gid, uid_t **members);
static const struct user_resolver nss = {nss_user_name, nss_group_members};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct user_resolver *resolver = &nss;
static uint64_t names_generation; /* bumped when the resolver changes: older answers dropped */
static struct user_name names[NPD_USER_NAMES_MAX];
static unsigned next_slot; /* the slot a new uid takes when every one is used (round robin) */
static struct group_answer admin;

static int nss_user_name(uid_t uid, char *buf, size_t len)
{
    char text[4096];
    struct passwd pw, *found = NULL;
    const int rc = getpwuid_r(uid, &pw, text, sizeof(text), &found);

    if (rc != 0 || !found)
        return rc ? -rc : -ENOENT;
    snprintf(buf, len, "%s", found->pw_name);
    return 0;
}

/* getgrnam_r with a buffer grown until the entry fits (a large group needs more than a page). */
static int nss_group_members(const char *group, gid_t *gid, uid_t **members)
{
    size_t size = 16384;
    char *buf = NULL;
    struct group gr, *found = NULL;
    int rc, n = 0;

    *members = NULL;
    for (;;) {
        char *grown = realloc(buf, size);
        if (!grown) {
            free(buf);
            return -ENOMEM;
        }
        buf = grown;
        rc = getgrnam_r(group, &gr, buf, size, &found);
        if (rc != ERANGE || size >= (1u << 24))
            break;
        size *= 2;
    }
    if (rc != 0 || !found) {
        free(buf);
        return rc ? -rc : -ENOENT;
    }
    *gid = found->gr_gid;
    while (found->gr_mem && found->gr_mem[n])
        n++;
    if (n && !(*members = calloc((size_t)n, sizeof(uid_t)))) {
        free(buf);
        return -ENOMEM;
    }
    n = 0;
    for (char **m = found->gr_mem; m && *m; m++) {
        char text[4096];
        struct passwd pw, *user = NULL;
        if (getpwnam_r(*m, &pw, text, sizeof(text), &user) == 0 && user)
            (*members)[n++] = user->pw_uid; /* a listed name with no account is no one */
    }
    free(buf);
    return n;
}

static struct user_name *find(uid_t uid)
{
    for (unsigned i = 0; i < NPD_USER_NAMES_MAX; i++)
        if (names[i].used && names[i].uid == uid)
            return &names[i];
    return NULL;
}

static void *look_up(void *arg)
{
    const uid_t uid = (uid_t)(uintptr_t)arg;
    const struct user_resolver *r;
    uint64_t generation;
    char name[64];
    struct user_name *n;

    pthread_mutex_lock(&lock);
    r = resolver;
    generation = names_generation;
    pthread_mutex_unlock(&lock);
    if (r->user_name(uid, name, sizeof(name)) < 0)
        snprintf(name, sizeof(name), "%u", (unsigned)uid);
    pthread_mutex_lock(&lock);
    if (generation == names_generation && (n = find(uid))) {
        memcpy(n->name, name, sizeof(name));
        n->known = true;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* @p fn(@p arg) on a detached thread of its own. @return 0 or -errno */
static int detached(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t thread;
    int rc;

    if ((rc = pthread_attr_init(&attr)) != 0)
        return -rc;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&thread, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return -rc;
}

void user_name_want(uid_t uid)
{
    struct user_name *n;

    pthread_mutex_lock(&lock);
    if (find(uid)) {
        pthread_mutex_unlock(&lock);
        return;
    }
    n = NULL;
    for (unsigned i = 0; i < NPD_USER_NAMES_MAX && !n; i++)
        if (!names[i].used)
            n = &names[i];
    if (!n) {
        n = &names[next_slot];
        next_slot = (next_slot + 1) % NPD_USER_NAMES_MAX;
    }
    *n = (struct user_name){.uid = uid, .used = true};
    pthread_mutex_unlock(&lock);
    if (detached(look_up, (void *)(uintptr_t)uid) < 0) {
        pthread_mutex_lock(&lock); /* no thread: asked again at the next registration */
        if ((n = find(uid)) && !n->known)
            n->used = false;
        pthread_mutex_unlock(&lock);
    }
}

bool user_name_get(uid_t uid, char *buf, size_t len)
{
    const struct user_name *n;
    bool known = false;

    pthread_mutex_lock(&lock);
    if ((n = find(uid)) && n->known) {
        snprintf(buf, len, "%s", n->name);
        known = true;
    }
    pthread_mutex_unlock(&lock);
    return known;
}

struct group_lookup {
    char group[64];
    uint64_t asked;
    const struct user_resolver *resolver;
};

static void *look_up_group(void *arg)
{
    struct group_lookup *l = arg;
    uid_t *members = NULL;
    gid_t gid = 0;
    const int rc = l->resolver->group_members(l->group, &gid, &members);

    pthread_mutex_lock(&lock);
    if (l->asked == admin.asked) {
        admin.looking = false;
        /* The service failing keeps the answer it gave before (tried again at the next ask); no
         * such group, or no answer ever, is no one in it. */
        if (rc >= 0 || rc == -ENOENT || !admin.answered) {
            free(admin.members);
            admin.members = rc > 0 ? members : NULL;
            admin.nmembers = rc > 0 ? (unsigned)rc : 0;
            members = NULL;
            admin.exists = rc >= 0;
            admin.gid = gid;
            admin.answered = true;
            admin.answered_at = np_monotonic_s();
        }
    }
    pthread_mutex_unlock(&lock);
    free(members);
    free(l);
    return NULL;
}

/* With the lock held: a lookup of @p group to start unlocked (new), or NULL (one under way, a
 * fresh answer, or ""). @p anew: whatever the answer's age, and over one under way. */
static struct group_lookup *group_lookup_due(const char *group, bool anew)
{
    struct group_lookup *l;

    if (strcmp(admin.group, group) != 0) {
        free(admin.members);
        admin = (struct group_answer){.asked = admin.asked + 1};
        snprintf(admin.group, sizeof(admin.group), "%s", group);
    } else if (anew) {
        admin.asked++; /* an answer under way is dropped */
        admin.looking = false;
    }
    if (!group[0] || admin.looking ||
        (!anew && admin.answered &&
         np_monotonic_s() - admin.answered_at < NPD_ADMIN_GROUP_REFRESH_S))
        return NULL;
    if (!(l = malloc(sizeof(*l))))
        return NULL;
    snprintf(l->group, sizeof(l->group), "%s", group);
    l->asked = admin.asked;
    l->resolver = resolver;
    admin.looking = true;
    return l;
}

static void group_lookup_start(struct group_lookup *l)
{
    if (!l || detached(look_up_group, l) == 0)
        return;
    pthread_mutex_lock(&lock); /* no thread: asked again at the next request */
    if (l->asked == admin.asked)
        admin.looking = false;
    pthread_mutex_unlock(&lock);
    free(l);
}

void admin_group_want(const char *group)
{
    struct group_lookup *l;

    pthread_mutex_lock(&lock);
    l = group_lookup_due(group, true);
    pthread_mutex_unlock(&lock);
    group_lookup_start(l);
}

int admin_group_has(const char *group, uid_t uid, gid_t gid, const gid_t *groups, unsigned ngroups)
{
    struct group_lookup *l;
    int in = -EAGAIN;

    pthread_mutex_lock(&lock);
    l = group_lookup_due(group, false); /* a first answer, or a fresh one for the next request */
    if (admin.answered) {
        in = admin.exists && gid == admin.gid;
        for (unsigned i = 0; admin.exists && !in && i < ngroups; i++)
            in = groups[i] == admin.gid;
        for (unsigned i = 0; admin.exists && !in && i < admin.nmembers; i++)
            in = admin.members[i] == uid;
    }
    pthread_mutex_unlock(&lock);
    group_lookup_start(l);
    return in;
}

void user_names_set_resolver(const struct user_resolver *r)
{
    pthread_mutex_lock(&lock);
    resolver = r ? r : &nss;
    names_generation++;
    memset(names, 0, sizeof(names));
    next_slot = 0;
    free(admin.members);
    admin = (struct group_answer){.asked = admin.asked + 1};
    pthread_mutex_unlock(&lock);
}
