/* Telling the service manager how the server is doing: systemd's sd_notify
 * protocol, without libsystemd. A datagram of "KEY=value" lines to the
 * AF_UNIX socket named by $NOTIFY_SOCKET: READY=1 once the workers serve,
 * RELOADING=1 with MONOTONIC_USEC= when a SIGHUP starts a reload and READY=1
 * when it ends (Type=notify-reload needs both), STOPPING=1 at SIGTERM, and
 * STATUS= with each, for "systemctl status". Without $NOTIFY_SOCKET every
 * call does nothing. Main thread only. */
#ifndef KTLSD_SERVER_NOTIFY_H
#define KTLSD_SERVER_NOTIFY_H

#include <sys/socket.h>
#include <sys/un.h>

struct notify {
	int fd; /* -1: no service manager listens */
	struct sockaddr_un addr;
	socklen_t addrlen;
};

/* Reads $NOTIFY_SOCKET: a path ("/run/systemd/notify") or an abstract
 * socket ("@name"). Unset, or a form it cannot use (too long, "vsock:"),
 * leaves n off; the latter with a warning. Opens the socket now, so that
 * sending needs nothing a dropped privilege could take away. */
void notify_open(struct notify *n);

/* Sends the message (lines "KEY=value", without a trailing newline) as one
 * datagram. A manager that has gone away is no reason to stop serving:
 * failures are logged at debug level and otherwise ignored. */
__attribute__((format(printf, 2, 3))) void notify_send(const struct notify *n, const char *fmt,
                                                       ...);

/* RELOADING=1 with MONOTONIC_USEC= (CLOCK_MONOTONIC in microseconds), which
 * systemd 253 and later need to match the message to the reload they asked
 * for, and a STATUS= line. */
void notify_reloading(const struct notify *n);

void notify_close(struct notify *n);

#endif
