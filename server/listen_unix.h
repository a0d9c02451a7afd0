/* Unix-socket listeners (--listen unix:/PATH, --listen-plain unix:/PATH),
 * for a proxy on the same machine (HAProxy, a sidecar) in front of ktlsd.
 *
 * Bound once, at start, as root if ktlsd starts as root, before the
 * workers: a Unix socket has no SO_REUSEPORT to give each worker its own,
 * so like a socket passed by a service manager (listen_fds.h) it is one
 * socket that every worker accepts from through its own duplicate of the
 * fd, with one-shot accepts re-armed after each connection (worker.c).
 *
 * The file: mode 0666, as nginx makes it, so that a proxy running as
 * another user can connect; who may reach it is decided by the directory
 * it is in. The mode comes from the umask at bind, never from a chmod by
 * path after it: the directory may be someone else's, and a symbolic link
 * swapped in between would have root make any file world-writable. A file
 * left at the path by a ktlsd that died is replaced when it is a socket
 * nobody accepts on; anything else (a regular file, a socket someone
 * listens on) is refused and left alone. At exit the file is removed if it
 * is still the one bound (by the privileged helper under --user: the
 * server may not write to its directory). */
#ifndef KTLSD_SERVER_LISTEN_UNIX_H
#define KTLSD_SERVER_LISTEN_UNIX_H

#include "server/conf/config-t.h"

/* Binds every Unix-socket listener of cfg that has no fd yet (none passed
 * by a service manager), storing the fd in it with bound_here set. Returns
 * 0, or -errno after one logged line naming the listener as written
 * (what was bound before it is closed and removed again). */
int listen_unix_open(struct config *cfg);

/* Closes the sockets listen_unix_open bound (their files stay). */
void listen_unix_close(struct config *cfg);

/* Removes the files of the sockets listen_unix_open bound, each only if it
 * is still the one bound (a ktlsd started meanwhile may have replaced it). */
void listen_unix_remove(const struct config *cfg);

#endif
