#include "server/listen_unix.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/core/log.h"

#define UNIX_BACKLOG 4096

/* The path is taken: a socket left by a dead process is removed (0), a
 * live one or anything else is not (-errno, after a logged line). A
 * connect tells the two sockets apart: refused means nobody listens. */
static int remove_stale(const struct config_listen *l)
{
	const struct sockaddr_un *a = (const struct sockaddr_un *)&l->addr;
	struct stat st;
	int fd, rc;

	if (lstat(a->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno; /* gone meanwhile: bind again */
	if (!S_ISSOCK(st.st_mode)) {
		log_msg(LOG_ERROR, "listen %s: %s exists and is not a socket; not replacing it",
		        l->text, a->sun_path);
		return -EEXIST;
	}
	/* Nonblocking: a listener with a full backlog says EAGAIN at once
	 * instead of making us wait; it is alive all the same. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)a, l->addrlen) < 0 ? -errno : 0;
	close(fd);
	if (rc == -ECONNREFUSED) {
		log_msg(LOG_INFO, "listen %s: removing the socket a previous process left there",
		        l->text);
		return unlink(a->sun_path) < 0 && errno != ENOENT ? -errno : 0;
	}
	log_msg(LOG_ERROR, "listen %s: another process is listening on %s", l->text, a->sun_path);
	return -EADDRINUSE;
}

/* bind(2) makes the file with mode 0777 & ~umask (unix(7)): 0666 with a
 * umask of 0111 for the call. Start-up has one thread, so the process-wide
 * umask is ours meanwhile. */
static int bind_0666(int fd, const struct config_listen *l)
{
	mode_t old = umask(0111);
	int rc = bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) < 0 ? -errno : 0;

	umask(old);
	return rc;
}

static int bind_unix(const struct config_listen *l)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), rc;

	if (fd < 0)
		return -errno;
	rc = bind_0666(fd, l);
	if (rc == -EADDRINUSE) {
		rc = remove_stale(l);
		if (rc == 0)
			rc = bind_0666(fd, l);
		if (rc == -EEXIST || rc == -EADDRINUSE)
			goto logged;
	}
	if (rc == 0 && listen(fd, UNIX_BACKLOG) < 0)
		rc = -errno;
	if (rc == 0)
		return fd;
	log_msg(LOG_ERROR, "listen %s: %s", l->text, strerror(-rc));
logged:
	close(fd);
	return rc;
}

static void remove_list(const struct config_listen *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!l[i].bound_here)
			continue;
		const struct sockaddr_un *a = (const struct sockaddr_un *)&l[i].addr;
		struct stat st;
		/* A ktlsd started while this one finished its responses has
		 * replaced the file (ours refuses connections once stopping,
		 * so it looked left over): that one is not ours to remove. */
		if (lstat(a->sun_path, &st) == 0 && (uint64_t)st.st_ino == l[i].bound_ino &&
		    unlink(a->sun_path) < 0)
			log_msg(LOG_INFO,
			        "listen %s: cannot remove %s: %s; the next start replaces it",
			        l[i].text, a->sun_path, strerror(errno));
	}
}

void listen_unix_remove(const struct config *cfg)
{
	remove_list(cfg->listen, cfg->nlisten);
	remove_list(cfg->listen_plain, cfg->nlisten_plain);
}

static void close_list(struct config_listen *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!l[i].bound_here)
			continue;
		close(l[i].fd);
		l[i].fd = 0;
		l[i].bound_here = false;
	}
}

void listen_unix_close(struct config *cfg)
{
	close_list(cfg->listen, cfg->nlisten);
	close_list(cfg->listen_plain, cfg->nlisten_plain);
}

static int open_list(struct config_listen *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].addr.ss_family != AF_UNIX || l[i].fd > 0)
			continue;
		int fd = bind_unix(&l[i]);
		if (fd < 0)
			return fd;
		struct stat st;
		l[i].fd = fd;
		l[i].bound_here = true;
		l[i].bound_ino = lstat(((struct sockaddr_un *)&l[i].addr)->sun_path, &st) == 0
		                     ? (uint64_t)st.st_ino
		                     : 0;
	}
	return 0;
}

int listen_unix_open(struct config *cfg)
{
	int rc = open_list(cfg->listen, cfg->nlisten);

	if (rc == 0)
		rc = open_list(cfg->listen_plain, cfg->nlisten_plain);
	if (rc < 0) {
		listen_unix_remove(cfg);
		listen_unix_close(cfg);
	}
	return rc;
}
