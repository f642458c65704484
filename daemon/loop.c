/* numaplaced's poll loop, and each interval's work over the node and every step (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "writer.h"

/* /proc/interrupts costs more than all else node-wide and a report uses only a job's first and
 * last reading: read it every interval only for the trace, else when a job has none yet. */
static bool irq_wanted(struct np_daemon *d)
{
    if (d->trace)
        return true;
    for (unsigned i = 0; i < d->registry.count; i++)
        if (!registry_at(&d->registry, i)->finishing &&
            registry_at(&d->registry, i)->stats.irq_samples == 0)
            return true;
    return false;
}

static void read_node_counters(struct np_daemon *d)
{
    if (irq_wanted(d))
        np_node_counters_read_irq(&d->counters, d->cfg.proc_root);
    else
        np_node_counters_skip_irq(&d->counters);
    np_node_counters_read_cpu(&d->counters, d->cfg.proc_root);
}

void sampling_tick(struct np_daemon *d)
{
    const double now = np_monotonic_s();
    double cpu0;

    if (d->registry.count == 0) {
        /* still every interval: status and metrics show the node's traffic now, not an old rate */
        uncore_bw_tick(d);
        if (d->cfg.auto_load == NP_AUTO_LOAD_CPU_BUSY) /* the CPU-busy proxy reads it */
            np_node_counters_read_cpu(&d->counters, d->cfg.proc_root);
        hint_tick(d);
        return;
    }
    cpu0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
    read_node_counters(d);
    uncore_bw_tick(d);
    hint_tick(d);
    d->totals.sampling_cpu_s += np_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    for (unsigned i = 0; i < d->registry.count;) {
        struct np_daemon_job *j = registry_at(&d->registry, i);
        if (j->finishing) { /* ended: its report is with the writer */
            i++;
            continue;
        }
        sampling_sample_job(d, j, now, true, false);
        /* Tasks all gone and no step_end came: the plugin's message was lost; end it anyway. */
        if (j->stats.last.processes == 0 &&
            now - j->registered_mono > 2.0 * d->cfg.interval_ms / 1000.0) {
            NPD_LOG(d, INFO, "job %u.%s: its processes are gone without a step_end; ending it",
                    j->meta.job_id, np_step_name(j->meta.step_id));
            const unsigned before = d->registry.count;
            j->ended = true;
            job_finish(d, j, true);
            if (d->registry.count == before)
                i++;  /* finishing: it stays until its report is durable */
            continue; /* else the next step moved into slot i */
        }
        i++;
    }
    if (d->cfg.migration)
        migration_run_triggers(d);
}

/* The fixed slots of the poll set; the clients follow. */
enum { SLOT_SIGNAL, SLOT_TIMER, SLOT_LISTEN, SLOT_MIGRATOR, SLOT_METRICS, SLOT_WRITER, NSLOTS };

int loop_open_fds(struct np_daemon *d)
{
    sigset_t mask;

    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    /* The wall clock: every node of a job samples at the same moments (loop_next_deadline). */
    d->timer_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    return d->signal_fd < 0 || d->timer_fd < 0 ? -errno : 0;
}

struct timespec loop_next_deadline(struct timespec now, unsigned interval_ms)
{
    const uint64_t interval_ns = (uint64_t)(interval_ms ? interval_ms : 1) * 1000000ULL;
    const uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
    const uint64_t next = (now_ns / interval_ns + 1) * interval_ns;

    return (struct timespec){.tv_sec = (time_t)(next / 1000000000ULL),
                             .tv_nsec = (long)(next % 1000000000ULL)};
}

void loop_set_timer(struct np_daemon *d)
{
    struct itimerspec its = {0};
    struct timespec now;

    /* At whole multiples of the interval since the epoch (with NTP, a job's nodes are disturbed
     * at the same moments), told when the clock is set, to re-arm on the new time. */
    clock_gettime(CLOCK_REALTIME, &now);
    its.it_interval.tv_sec = d->cfg.interval_ms / 1000;
    its.it_interval.tv_nsec = (long)(d->cfg.interval_ms % 1000) * 1000000L;
    its.it_value = loop_next_deadline(now, d->cfg.interval_ms);
    if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
        NPD_LOG(d, WARNING, "timerfd: %s", strerror(errno));
}

static void read_signals(struct np_daemon *d)
{
    struct signalfd_siginfo si;

    while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
            if (config_reload(d) == 0)
                loop_set_timer(d); /* at the interval it may have changed */
        } else {
            d->stop = true;
        }
    }
}

static void read_timer(struct np_daemon *d)
{
    uint64_t expirations;

    if (read(d->timer_fd, &expirations, sizeof(expirations)) < 0) {
        if (errno == ECANCELED) {
            /* The wall clock was set: the deadlines move with it (no sample now). */
            NPD_LOG(d, INFO, "the clock was set: sampling re-aligned to the new time");
            loop_set_timer(d);
            return;
        }
        if (errno == EAGAIN)
            return; /* nothing expired after all */
        NPD_LOG(d, WARNING, "timerfd: %s", strerror(errno));
    }
    sampling_tick(d);
    report_hold_retry(d);
    registry_flush(d); /* at most one registry write per interval, whatever the requests */
}

int loop_read_order(struct np_daemon_client *const *owner, const struct pollfd *pfd, int from,
                    int n, int *order)
{
    int count = 0;

    for (int i = from; i < n; i++) {
        int k = count;
        if (!pfd[i].revents || owner[i]->out)
            continue;
        for (; k > 0 && owner[order[k - 1]]->since > owner[i]->since; k--)
            order[k] = order[k - 1];
        order[k] = i;
        count++;
    }
    return count;
}

void loop_run(struct np_daemon *d)
{
    while (!d->stop) {
        struct pollfd pfd[NSLOTS + NPD_MAX_CLIENTS];
        struct np_daemon_client *owner[NSLOTS + NPD_MAX_CLIENTS];
        int ready[NSLOTS + NPD_MAX_CLIENTS];
        int n = NSLOTS;

        pfd[SLOT_SIGNAL] = (struct pollfd){.fd = d->signal_fd, .events = POLLIN};
        pfd[SLOT_TIMER] = (struct pollfd){.fd = d->timer_fd, .events = POLLIN};
        pfd[SLOT_LISTEN] = (struct pollfd){.fd = d->listen_fd, .events = POLLIN};
        pfd[SLOT_MIGRATOR] =
            (struct pollfd){.fd = d->migration.migrator ? migrator_fd(d->migration.migrator) : -1,
                            .events = POLLIN};
        pfd[SLOT_METRICS] = (struct pollfd){.fd = http_fd(d), .events = POLLIN};
        pfd[SLOT_WRITER] = (struct pollfd){.fd = writer_fd(d->writer), .events = POLLIN};
        for (int i = 0; i < NPD_MAX_CLIENTS; i++)
            if (d->clients[i].fd >= 0) {
                owner[n] = &d->clients[i];
                pfd[n++] = (struct pollfd){.fd = d->clients[i].fd,
                                           .events = d->clients[i].out ? POLLOUT : POLLIN};
            }
        if (poll(pfd, (nfds_t)n, http_timeout_ms(d, 1000)) < 0) {
            if (errno == EINTR)
                continue;
            NPD_LOG(d, ERROR, "poll: %s", strerror(errno));
            break;
        }
        if (pfd[SLOT_SIGNAL].revents & POLLIN)
            read_signals(d);
        for (int i = NSLOTS; i < n; i++)
            if (pfd[i].revents && owner[i]->out)
                client_write(owner[i]);
        for (int k = 0, nr = loop_read_order(owner, pfd, NSLOTS, n, ready); k < nr; k++)
            server_read(d, owner[ready[k]]);
        if (pfd[SLOT_MIGRATOR].revents & POLLIN)
            migration_collect(d);
        if (pfd[SLOT_WRITER].revents & POLLIN) /* reports durable: their step_end answered */
            writer_collect(d->writer, d);
        if (pfd[SLOT_LISTEN].revents & POLLIN)
            server_accept(d);
        if (pfd[SLOT_TIMER].revents & POLLIN)
            read_timer(d);
        /* Readable or not: MHD_run also closes connections whose time is up, and never waits. */
        http_run(d);
        server_expire_idle(d, np_monotonic_s());
    }
}
