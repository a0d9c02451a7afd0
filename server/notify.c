#include "server/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/core/log.h"

void notify_open(struct notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (!path || !*path)
		return;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		log_msg(LOG_WARN,
		        "NOTIFY_SOCKET=%s: not a path or an abstract socket ktlsd can use; "
		        "the service manager will not hear from it",
		        path);
		return;
	}
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, path, len);
	/* An abstract name starts with a NUL instead of the '@' and is exactly
	 * len bytes long: no NUL at its end, so none counts in addrlen. */
	if (path[0] == '@')
		n->addr.sun_path[0] = '\0';
	n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0)
		log_msg(LOG_WARN, "NOTIFY_SOCKET: socket: %s", strerror(errno));
}

void notify_send(const struct notify *n, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int len;

	if (n->fd < 0)
		return;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(msg))
		len = sizeof(msg) - 1; /* a STATUS= cut short is still a message */
	if (sendto(n->fd, msg, (size_t)len, MSG_NOSIGNAL, (const struct sockaddr *)&n->addr,
	           n->addrlen) < 0)
		log_msg(LOG_DEBUG, "NOTIFY_SOCKET: %s", strerror(errno));
}

void notify_reloading(const struct notify *n)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify_send(n, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the configuration",
	            (unsigned long long)ts.tv_sec * 1000000ULL +
	                (unsigned long long)ts.tv_nsec / 1000);
}

void notify_close(struct notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
