/* Socket activation: listening sockets a service manager bound and passed
 * (systemd's sd_listen_fds protocol, read without libsystemd), served
 * instead of binding the configured addresses.
 *
 * The protocol: $LISTEN_PID is this process, $LISTEN_FDS sockets start at
 * fd 3, $LISTEN_FDNAMES optionally names them, ':'-separated (a socket
 * unit's FileDescriptorName=, systemd-socket-activate --fdname). A socket
 * named "http" serves plain HTTP; every other one, named or not, HTTPS.
 *
 * Workers and an inherited socket: ktlsd binds one SO_REUSEPORT socket per
 * worker and address itself, but a passed socket is one socket, so every
 * worker accepts from it through its own duplicate of the fd: one accept
 * queue, one-shot accepts re-armed after each connection, so that idle
 * workers take turns (worker.c). Workers never shut an inherited socket
 * down: it is the manager's too, and keeps listening (connections queue in
 * its backlog) while ktlsd restarts.
 *
 * Options: a passed socket whose address is that of a --listen or
 * --listen-plain line (as getsockname() gives it: "[::]:443" for systemd's
 * ListenStream=443, "unix:/run/ktlsd.sock" for a path) takes that line's
 * options, proxy-protocol; one that matches no line has none. The socket's
 * name still decides HTTPS or plain HTTP. */
#ifndef KTLSD_SERVER_LISTEN_FDS_H
#define KTLSD_SERVER_LISTEN_FDS_H

#include "server/conf/config-t.h"

/* Takes the sockets passed to this process, if any, and makes them cfg's
 * listeners (--listen for HTTPS, --listen-plain for plain HTTP), replacing
 * the configured ones, which are then not bound; logs one line saying so.
 * Unsets the three variables. Returns how many sockets it took (0: none was
 * passed and cfg is as it was), or -errno after one logged line when what
 * was passed cannot be served (not a listening TCP or Unix socket, too many, names
 * that do not match). The fds stay open for the life of the process. */
int listen_fds_take(struct config *cfg);

/* On SIGHUP: when the running configuration serves inherited sockets, the
 * next one serves the same, whatever its --listen lines say. */
void listen_fds_keep(struct config *next, const struct config *running);

#endif
