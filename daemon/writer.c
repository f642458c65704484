/* Durable writes on a thread of their own (see writer.h). */
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "safe_file.h"

/* A first-in first-out list. */
struct job_list {
    struct writer_job *first, *last;
};

struct writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct job_list queued, done; /* both under lock */
    unsigned pending;             /* queued, being written or done, not collected */
    bool stopping, stopped;
    int event_fd;
    void (*hook)(void *arg, const struct writer_job *job);
    void *hook_arg;
};

static void list_push(struct job_list *l, struct writer_job *job)
{
    job->next = NULL;
    if (l->last)
        l->last->next = job;
    else
        l->first = job;
    l->last = job;
}

static struct writer_job *list_pop(struct job_list *l)
{
    struct writer_job *job = l->first;

    if (job) {
        l->first = job->next;
        if (!l->first)
            l->last = NULL;
        job->next = NULL;
    }
    return job;
}

static void job_free(struct writer_job *job)
{
    if (job) {
        free(job->data);
        free(job);
    }
}

struct writer_job *writer_job_new(const char *dir, const char *name, char *data, size_t len,
                                  uid_t reader, mode_t mode,
                                  void (*done)(void *ctx, struct writer_job *job), void *arg)
{
    struct writer_job *job = calloc(1, sizeof(*job));

    if (!job || strlen(dir) >= sizeof(job->dir) || strlen(name) >= sizeof(job->name)) {
        free(job);
        free(data);
        return NULL;
    }
    *job = (struct writer_job){
        .data = data, .len = len, .reader = reader, .mode = mode, .done = done, .arg = arg};
    memcpy(job->dir, dir, strlen(dir) + 1);
    memcpy(job->name, name, strlen(name) + 1);
    return job;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        struct writer_job *job = list_pop(&w->queued);
        void (*hook)(void *, const struct writer_job *) = w->hook;
        void *hook_arg = w->hook_arg;
        const uint64_t one = 1;
        ssize_t n;

        if (!job) {
            if (w->stopping)
                break; /* only once the queue is empty: a stop drops nothing */
            pthread_cond_wait(&w->wake, &w->lock);
            continue;
        }
        pthread_mutex_unlock(&w->lock);
        if (hook)
            hook(hook_arg, job);
        job->rc =
            safe_write(job->dir, job->name, job->data, job->len, job->reader, job->mode, &job->err);
        pthread_mutex_lock(&w->lock);
        list_push(&w->done, job);
        /* Cannot fail short of a counter at its maximum; the loop reads it at every poll. */
        n = write(w->event_fd, &one, sizeof(one));
        (void)n;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int writer_start(struct writer **out)
{
    struct writer *w = calloc(1, sizeof(*w));
    int rc;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    w->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->event_fd < 0) {
        rc = -errno;
        free(w);
        return rc;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        close(w->event_fd);
        free(w);
        return -rc;
    }
    *out = w;
    return 0;
}

int writer_fd(const struct writer *w)
{
    return w ? w->event_fd : -1;
}

void writer_submit(struct writer *w, struct writer_job *job)
{
    pthread_mutex_lock(&w->lock);
    list_push(&w->queued, job);
    w->pending++;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void writer_run(struct writer *w, struct writer_job *job, void *ctx)
{
    if (w) {
        writer_submit(w, job);
        return;
    }
    job->rc =
        safe_write(job->dir, job->name, job->data, job->len, job->reader, job->mode, &job->err);
    if (job->done)
        job->done(ctx, job);
    job_free(job);
}

unsigned writer_pending(struct writer *w)
{
    unsigned n;

    pthread_mutex_lock(&w->lock);
    n = w->pending;
    pthread_mutex_unlock(&w->lock);
    return n;
}

unsigned writer_collect(struct writer *w, void *ctx)
{
    struct job_list done;
    struct writer_job *job;
    uint64_t count;
    unsigned n = 0;
    /* EAGAIN: nothing new since the last read; the list below says what is done either way */
    const ssize_t got = read(w->event_fd, &count, sizeof(count));

    (void)got;
    pthread_mutex_lock(&w->lock);
    done = w->done;
    w->done = (struct job_list){0};
    pthread_mutex_unlock(&w->lock);
    /* Outside the lock: a completion may submit the next write. */
    while ((job = list_pop(&done))) {
        if (job->done)
            job->done(ctx, job);
        job_free(job);
        n++;
    }
    pthread_mutex_lock(&w->lock);
    w->pending -= n;
    pthread_mutex_unlock(&w->lock);
    return n;
}

void writer_stop(struct writer *w)
{
    if (!w || w->stopped)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    w->stopped = true;
}

void writer_free(struct writer *w)
{
    struct writer_job *job;

    if (!w)
        return;
    writer_stop(w);
    while ((job = list_pop(&w->done)))
        job_free(job);
    while ((job = list_pop(&w->queued))) /* none: the thread wrote them all */
        job_free(job);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    close(w->event_fd);
    free(w);
}

void writer_set_hook(struct writer *w, void (*hook)(void *arg, const struct writer_job *job),
                     void *arg)
{
    pthread_mutex_lock(&w->lock);
    w->hook = hook;
    w->hook_arg = arg;
    pthread_mutex_unlock(&w->lock);
}
