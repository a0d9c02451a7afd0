#include "server/listen_fds.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/core/log.h"

#define LISTEN_FDS_START 3

/* A decimal int with nothing around it, or -1. */
static long parse_count(const char *s)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end ? -1 : v;
}

/* Fills l from the listening stream socket fd (TCP or Unix); -ENOTSOCK if
 * fd is not one. */
static int describe(int fd, struct config_listen *l)
{
	int type = 0, listening = 0;
	socklen_t len = sizeof(type), len2 = sizeof(listening);
	char host[INET6_ADDRSTRLEN];
	const void *ip;
	unsigned port;

	memset(l, 0, sizeof(*l));
	l->addrlen = sizeof(l->addr);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len2) < 0 ||
	    getsockname(fd, (struct sockaddr *)&l->addr, &l->addrlen) < 0 || type != SOCK_STREAM ||
	    !listening ||
	    (l->addr.ss_family != AF_INET && l->addr.ss_family != AF_INET6 &&
	     l->addr.ss_family != AF_UNIX))
		return -ENOTSOCK;
	if (l->addr.ss_family == AF_UNIX) {
		const struct sockaddr_un *a = (const struct sockaddr_un *)&l->addr;
		snprintf(l->text, sizeof(l->text), "unix:%.*s (fd %d)",
		         (int)(l->addrlen - offsetof(struct sockaddr_un, sun_path)), a->sun_path,
		         fd);
		l->fd = fd;
		return 0;
	}
	if (l->addr.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&l->addr;
		ip = &a->sin_addr;
		port = ntohs(a->sin_port);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&l->addr;
		ip = &a->sin6_addr;
		port = ntohs(a->sin6_port);
	}
	inet_ntop(l->addr.ss_family, ip, host, sizeof(host));
	if (l->addr.ss_family == AF_INET6)
		snprintf(l->text, sizeof(l->text), "[%s]:%u (fd %d)", host, port, fd);
	else
		snprintf(l->text, sizeof(l->text), "%s:%u (fd %d)", host, port, fd);
	l->fd = fd;
	return 0;
}

/* A passed socket has the options (proxy-protocol) of the --listen or
 * --listen-plain line with its address, if there is one: the manager
 * chooses the sockets, the configuration says what arrives on them. */
static void take_options(const struct config *cfg, struct config_listen *l)
{
	const struct config_listen *lists[2] = {cfg->listen, cfg->listen_plain};
	size_t counts[2] = {cfg->nlisten, cfg->nlisten_plain};

	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; i < counts[k]; i++) {
			const struct config_listen *c = &lists[k][i];
			if (c->addrlen != l->addrlen || memcmp(&c->addr, &l->addr, c->addrlen) != 0)
				continue;
			l->proxy_protocol = c->proxy_protocol;
			if (l->proxy_protocol)
				strncat(l->text, " proxy-protocol",
				        sizeof(l->text) - strlen(l->text) - 1);
			return;
		}
	}
}

/* The i-th ':'-separated name of names (NULL: none) into out. */
static void name_at(const char *names, long i, char *out, size_t n)
{
	*out = '\0';
	for (; names && i > 0; i--) {
		names = strchr(names, ':');
		names = names ? names + 1 : NULL;
	}
	if (names)
		snprintf(out, n, "%.*s", (int)strcspn(names, ":"), names);
}

static long count_names(const char *names)
{
	long n = 1;

	for (const char *p = names; *p; p++)
		n += *p == ':';
	return n;
}

int listen_fds_take(struct config *cfg)
{
	const char *pid_env = getenv("LISTEN_PID");
	const char *names = getenv("LISTEN_FDNAMES");
	long pid = parse_count(pid_env), n = parse_count(getenv("LISTEN_FDS"));
	struct config_listen tls[CONFIG_MAX_LISTEN], plain[CONFIG_MAX_LISTEN];
	size_t ntls = 0, nplain = 0;
	char list[512] = "";
	size_t used = 0;
	int rc = 0;

	/* Variables meant for another process (a parent that exec'd us
	 * without clearing them) are not ours to act on. */
	if (!pid_env || pid != (long)getpid() || n <= 0)
		goto out;
	if (n > 2 * CONFIG_MAX_LISTEN) {
		log_msg(LOG_ERROR, "LISTEN_FDS=%ld: at most %d sockets", n, 2 * CONFIG_MAX_LISTEN);
		rc = -EINVAL;
		goto out;
	}
	if (names && count_names(names) != n) {
		log_msg(LOG_ERROR, "LISTEN_FDNAMES names %ld sockets, LISTEN_FDS passes %ld",
		        count_names(names), n);
		rc = -EINVAL;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		int fd = LISTEN_FDS_START + (int)i;
		struct config_listen l;
		char name[64];
		bool is_plain;

		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || describe(fd, &l) < 0) {
			log_msg(LOG_ERROR,
			        "LISTEN_FDS: fd %d is not a listening TCP or Unix socket", fd);
			rc = -ENOTSOCK;
			goto out;
		}
		take_options(cfg, &l);
		name_at(names, i, name, sizeof(name));
		is_plain = strcmp(name, "http") == 0;
		if ((is_plain ? nplain : ntls) == CONFIG_MAX_LISTEN) {
			log_msg(LOG_ERROR, "LISTEN_FDS: more than %d %s sockets", CONFIG_MAX_LISTEN,
			        is_plain ? "plain HTTP" : "HTTPS");
			rc = -EINVAL;
			goto out;
		}
		if (is_plain)
			plain[nplain++] = l;
		else
			tls[ntls++] = l;
		if (used < sizeof(list))
			used +=
			    (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %s",
			                     used ? ", " : "", is_plain ? "http" : "https", l.text);
	}
	memcpy(cfg->listen, tls, ntls * sizeof(tls[0]));
	cfg->nlisten = ntls;
	memcpy(cfg->listen_plain, plain, nplain * sizeof(plain[0]));
	cfg->nlisten_plain = nplain;
	log_msg(LOG_INFO,
	        "socket activation: serving the passed sockets (%s); --listen and "
	        "--listen-plain are not bound",
	        list);
	rc = (int)n;
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return rc;
}

void listen_fds_keep(struct config *next, const struct config *running)
{
	/* Passed sockets replace every configured listener: the first tells.
	 * A Unix socket ktlsd bound itself has an fd too, but is no sign. */
	bool inherited =
	    (running->nlisten > 0 && running->listen[0].fd > 0 && !running->listen[0].bound_here) ||
	    (running->nlisten_plain > 0 && running->listen_plain[0].fd > 0 &&
	     !running->listen_plain[0].bound_here);

	if (!inherited)
		return;
	memcpy(next->listen, running->listen, sizeof(next->listen));
	next->nlisten = running->nlisten;
	memcpy(next->listen_plain, running->listen_plain, sizeof(next->listen_plain));
	next->nlisten_plain = running->nlisten_plain;
}
