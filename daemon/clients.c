/* Replies to numaplaced's clients (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "numaplace/json_reals.h"

void client_close(struct np_daemon_client *c)
{
    close(c->fd);
    c->fd = -1;
    c->len = 0;
    c->pending = 0;
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
    auth_peer_release(&c->cred);
}

void client_write(struct np_daemon_client *c)
{
    /* Never blocks: what the socket does not take now goes when the loop sees POLLOUT, so a
     * large reply arrives whole and a client that does not read holds up no one. */
    while (c->out_off < c->out_len) {
        const ssize_t n =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0)
            break; /* the client went away */
        c->out_off += (size_t)n;
        c->since = np_monotonic_s();
    }
    client_close(c);
}

void client_reply(struct np_daemon_client *c, json_t *reply)
{
    char *text = reply ? json_dumps(reply, JSON_COMPACT | NP_JSON_REALS) : NULL;

    json_decref(reply);
    if (!text) {
        client_close(c);
        return;
    }
    c->out_len = strlen(text);
    text[c->out_len++] = '\n'; /* the terminator becomes the line's end */
    c->out = text;
    c->out_off = 0;
    c->since = np_monotonic_s();
    client_write(c);
}

void client_answer_tag(struct np_daemon *d, uint64_t tag, json_t *reply)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        if (d->clients[i].fd >= 0 && d->clients[i].pending == tag) {
            d->clients[i].pending = 0;
            client_reply(&d->clients[i], reply);
            return;
        }
    json_decref(reply); /* the client went away */
}
