/* accept(2) at the descriptor limit without a busy loop (accept_shed.h). */
#include "accept_shed.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int spare = -1;
static unsigned long shed;

int accept_shed_init(void)
{
    if (spare < 0)
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return spare < 0 ? -errno : 0;
}

int accept_shed(int listen_fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    int fd = accept4(listen_fd, addr, len, flags);

    if (fd >= 0 || (errno != EMFILE && errno != ENFILE))
        return fd;
    if (spare >= 0) {
        close(spare);
        spare = -1;
    }
    fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        shed++;
    }
    accept_shed_init();
    errno = EMFILE;
    return -1;
}

unsigned long accept_shed_count(void)
{
    return shed;
}
