/* User names looked up off the loop (see user_names.h). */
#include "user_names.h"

#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct user_name {
    uid_t uid;
    bool used, known; /* used and not known: its lookup is under way */
    char name[64];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct user_name names[NPD_USER_NAMES_MAX];
static unsigned next_slot; /* the slot a new uid takes when every one is used (round robin) */

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
    char buf[4096], name[64];
    struct passwd pw, *found = NULL;
    struct user_name *n;

    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found)
        snprintf(name, sizeof(name), "%s", found->pw_name);
    else
        snprintf(name, sizeof(name), "%u", (unsigned)uid);
    pthread_mutex_lock(&lock);
    if ((n = find(uid))) {
        memcpy(n->name, name, sizeof(name));
        n->known = true;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void user_name_want(uid_t uid)
{
    struct user_name *n;
    pthread_attr_t attr;
    pthread_t thread;

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
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, look_up, (void *)(uintptr_t)uid) != 0) {
        pthread_mutex_lock(&lock); /* no thread: asked again at the next registration */
        if ((n = find(uid)) && !n->known)
            n->used = false;
        pthread_mutex_unlock(&lock);
    }
    pthread_attr_destroy(&attr);
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
