/* numaplaced's migration worker (see migrator.h). */
#include "migrator.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct migrator {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int event_fd;
    const struct np_log *log;
    double bytes_per_s;
    bool stop, busy, have_job, have_done;
    atomic_bool cancel; /* end the running request after its current batch */
    /* the request being carried out */
    struct np_node_view *view;
    struct np_engine_config config;
    struct np_request request;
    uint64_t tag;
    /* its result */
    struct migrator_done done;
};

struct np_node_view *migrator_view_new(size_t njobs)
{
    struct np_node_view *view = calloc(1, sizeof(*view));

    if (!view)
        return NULL;
    view->jobs = calloc(njobs ? njobs : 1, sizeof(*view->jobs));
    if (!view->jobs) {
        free(view);
        return NULL;
    }
    return view;
}

void migrator_view_free(struct np_node_view *view)
{
    if (!view)
        return;
    for (size_t i = 0; i < view->njobs; i++) {
        free((void *)view->jobs[i].pids);
        free((void *)view->jobs[i].starttimes);
    }
    free(view->jobs);
    free(view);
}

static bool cancelled(void *arg)
{
    struct migrator *m = arg;

    return atomic_load(&m->cancel);
}

static void *worker(void *arg)
{
    struct migrator *m = arg;
    struct np_rate_limiter rl;

    pthread_mutex_lock(&m->lock);
    for (;;) {
        struct migrator_done done = {0};
        uint64_t one = 1;

        while (!m->stop && !m->have_job)
            pthread_cond_wait(&m->wake, &m->lock);
        if (m->stop)
            break;
        m->have_job = false;
        np_rate_limiter_init(&rl, m->bytes_per_s);
        done.tag = m->tag;
        done.trigger = m->request.trigger;
        done.view = m->view;
        pthread_mutex_unlock(&m->lock);

        done.rc = np_engine_run_request(done.view, &m->config, &m->request, &rl, m->log,
                                        &done.result, &done.err);

        pthread_mutex_lock(&m->lock);
        m->done = done;
        m->have_done = true;
        m->busy = false;
        if (write(m->event_fd, &one, sizeof(one)) < 0) {
            /* the main loop also polls with a timeout: it will find the result anyway */
        }
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

int migrator_start(struct migrator **out, double bytes_per_s, const struct np_log *log)
{
    struct migrator *m = calloc(1, sizeof(*m));
    int rc;

    *out = NULL;
    if (!m)
        return -ENOMEM;
    m->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m->event_fd < 0) {
        rc = -errno;
        free(m);
        return rc;
    }
    m->log = log;
    atomic_init(&m->cancel, false);
    m->bytes_per_s = bytes_per_s;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->wake, NULL);
    rc = pthread_create(&m->thread, NULL, worker, m);
    if (rc) {
        close(m->event_fd);
        free(m);
        return -rc;
    }
    *out = m;
    return 0;
}

int migrator_fd(const struct migrator *m)
{
    return m->event_fd;
}

bool migrator_busy(const struct migrator *m)
{
    return m->busy || m->have_done;
}

void migrator_set_rate(struct migrator *m, double bytes_per_s)
{
    pthread_mutex_lock(&m->lock);
    m->bytes_per_s = bytes_per_s;
    pthread_mutex_unlock(&m->lock);
}

int migrator_submit(struct migrator *m, struct np_node_view *view,
                    const struct np_engine_config *config, const struct np_request *request,
                    uint64_t tag)
{
    pthread_mutex_lock(&m->lock);
    if (m->busy || m->have_done) {
        pthread_mutex_unlock(&m->lock);
        return -EBUSY;
    }
    m->view = view;
    m->config = *config;
    m->config.should_stop = cancelled;
    m->config.stop_arg = m;
    m->request = *request;
    m->tag = tag;
    m->busy = true;
    m->have_job = true;
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int migrator_collect(struct migrator *m, struct migrator_done *done)
{
    uint64_t count;
    int got = 0;

    if (read(m->event_fd, &count, sizeof(count)) < 0) {
        /* EAGAIN: nothing signalled; the flag below is what counts */
    }
    pthread_mutex_lock(&m->lock);
    if (m->have_done) {
        *done = m->done;
        memset(&m->done, 0, sizeof(m->done));
        m->have_done = false;
        got = 1;
    }
    pthread_mutex_unlock(&m->lock);
    return got;
}

void migrator_done_fini(struct migrator_done *done)
{
    if (!done)
        return;
    np_request_result_fini(&done->result);
    migrator_view_free(done->view);
    done->view = NULL;
}

void migrator_cancel(struct migrator *m)
{
    if (m)
        atomic_store(&m->cancel, true);
}

void migrator_stop(struct migrator *m)
{
    struct migrator_done done;

    if (!m)
        return;
    atomic_store(&m->cancel, true);
    pthread_mutex_lock(&m->lock);
    m->stop = true;
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    if (migrator_collect(m, &done))
        migrator_done_fini(&done);
    if (m->have_job)
        migrator_view_free(m->view);
    close(m->event_fd);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->wake);
    free(m);
}
