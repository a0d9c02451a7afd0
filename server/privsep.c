#include "server/privsep.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/core/access_log.h"
#include "server/conf/conf_files.h"
#include "server/conf/config.h"
#include "server/conf/config_value.h"
#include "server/listen_unix.h"
#include "server/core/log.h"
#include "server/privs.h"

enum op { OP_RELOAD = 1, OP_REOPEN_LOGS = 2, OP_CLEAN_UP = 3 };

struct request {
	uint32_t op, seq;
};

struct reply {
	uint32_t op, seq;
	int32_t rc, rc2; /* reload: 0 or -errno; logs: the error log's, the access log's */
	uint32_t nfds;   /* passed with it (SCM_RIGHTS) */
};

/* A reload's memfd and roots: the most fds one reply carries. */
#define MAX_FDS (1 + CONF_FILES_MAX_DIRS)

/* Sends r with nfds fds: 0 or -errno. */
static int send_reply(int fd, const struct reply *r, const int *fds, size_t nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)r, .iov_len = sizeof(*r)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	while (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* ---- the helper ---- */

static void gather_file(struct conf_files *cf, const char *path)
{
	char *data;
	size_t len;

	if (path && conf_files_read(cf, path, &data, &len) == 0) {
		explicit_bzero(data, len);
		free(data);
	}
}

void privsep_gather(struct conf_files *cf, const struct config *cfg)
{
	const struct config_site *sites[CONFIG_MAX_SITES + 1];
	size_t n = config_served_sites(cfg, sites);

	for (size_t i = 0; i < n; i++) {
		int fd = sites[i]->root ? conf_files_open_dir(cf, sites[i]->root) : -1;
		if (fd >= 0)
			close(fd);
		/* An --acme on site's bundle lies in the service user's
		 * folder: root does not read it for them (acme_bundle.h). */
		for (size_t j = 0; !sites[i]->acme && j < sites[i]->ncerts; j++) {
			gather_file(cf, sites[i]->certs[j].cert_file);
			gather_file(cf, sites[i]->certs[j].key_file);
		}
		for (size_t j = 0; j < sites[i]->nerror_pages; j++)
			gather_file(cf, config_value_page_file(sites[i]->error_pages[j]));
	}
	for (size_t i = 0; i < cfg->nticket_key_files; i++)
		gather_file(cf, cfg->ticket_key_files[i]);
	gather_file(cf, cfg->mime_types);
}

/* What the helper works from: copies made at fork. */
struct helper {
	int fd;
	const struct privsep_duties *d;
	char **argv; /* its own copy: the title overwrites main's strings */
};

static void reload(const struct helper *h, const struct request *rq)
{
	struct reply r = {.op = rq->op, .seq = rq->seq};
	struct conf_files cf;
	struct config cfg;
	char *noise = NULL;
	size_t noise_len = 0;
	int fds[MAX_FDS], memfd = -1;
	size_t ndirs = 0;
	/* What config_load says of a configuration that does not load goes
	 * nowhere: the server loads the same bytes and says it itself. */
	FILE *sink = open_memstream(&noise, &noise_len);

	conf_files_init(&cf);
	if (sink && config_load(&cfg, h->d->argc, h->argv, &cf, sink, sink) == CONFIG_RUN) {
		privsep_gather(&cf, &cfg);
		config_free(&cfg);
	}
	if (sink)
		fclose(sink);
	free(noise);
	r.rc = sink ? conf_files_pack(&cf, &memfd, fds + 1, &ndirs) : -ENOMEM;
	if (r.rc == 0) {
		fds[0] = memfd;
		r.nfds = (uint32_t)(1 + ndirs);
	}
	send_reply(h->fd, &r, fds, r.nfds);
	if (memfd >= 0)
		close(memfd);
	conf_files_free(&cf);
}

/* A log the start opened as a file (path: NULL when it names none:
 * stderr, stdout, off), opened again into fds: 0, 1 when there is nothing
 * to reopen, or -errno. */
static int32_t reopen_one(const char *path, int *fds, uint32_t *nfds)
{
	int fd = path ? file_create_log(path, NULL) : -1;

	if (!path)
		return 1;
	if (fd < 0)
		return fd;
	fds[(*nfds)++] = fd;
	return 0;
}

static void reopen_logs(const struct helper *h, const struct request *rq)
{
	const struct config *cfg = h->d->cfg;
	struct reply r = {.op = rq->op, .seq = rq->seq};
	int fds[2];

	r.rc = reopen_one(log_file_named(cfg->error_log), fds, &r.nfds);
	r.rc2 = reopen_one(access_log_file_named(cfg->access_log), fds, &r.nfds);
	if (r.rc == 0) {
		/* The helper's own lines go to the new file too. */
		int mine = fcntl(fds[0], F_DUPFD_CLOEXEC, 0);
		if (mine >= 0)
			log_replace(mine);
	}
	send_reply(h->fd, &r, fds, r.nfds);
	for (uint32_t i = 0; i < r.nfds; i++)
		close(fds[i]);
}

static void clean_up(const struct helper *h, const struct request *rq)
{
	struct reply r = {.op = rq->op, .seq = rq->seq};

	if (h->d->pid_file)
		file_remove_if_same(h->d->cfg->pid_file, h->d->pid_file);
	listen_unix_remove(h->d->cfg);
	send_reply(h->fd, &r, NULL, 0);
}

/* ps and top show what it is: argv's strings, rewritten in place (the
 * kernel reads /proc/PID/cmdline from them), and the thread's name. */
static void set_title(int argc, char **argv, const char *title)
{
	char *end = argv[0];

	for (int i = 0; i < argc && argv[i] == end; i++)
		end = argv[i] + strlen(argv[i]) + 1;
	size_t room = (size_t)(end - argv[0]);
	if (room == 0)
		return;
	memset(argv[0], 0, room);
	memcpy(argv[0], title, strlen(title) < room - 1 ? strlen(title) : room - 1);
	prctl(PR_SET_NAME, "ktlsd-priv", 0, 0, 0);
}

/* Every fd but the socket, the error log and 0, 1, 2: the listeners, the
 * workers' rings and pipes, the logs it reopens by path. */
static void close_others(int a, int b)
{
	int keep[2] = {a < b ? a : b, a < b ? b : a};
	unsigned from = 3;

	for (int i = 0; i < 2; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

static char **copy_argv(int argc, char **argv)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));

	for (int i = 0; v && i < argc; i++)
		if (!(v[i] = strdup(argv[i])))
			return NULL;
	return v;
}

static _Noreturn void helper_main(int fd, pid_t server, const struct privsep_duties *d)
{
	struct helper h = {.fd = fd, .d = d, .argv = copy_argv(d->argc, d->argv)};

	/* The server gone, so is the helper; if it went before this line,
	 * getppid says so. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != server || !h.argv)
		_exit(1);
	set_title(d->argc, d->argv, "ktlsd: privileged helper");
	close_others(fd, log_fd());
	if (privs_helper() < 0)
		_exit(1);
	/* The signals main blocks stay blocked here, and nothing waits for
	 * them: a SIGTERM for the whole service, a terminal's SIGINT, are
	 * the server's to act on. */
	for (;;) {
		struct request rq;
		ssize_t n = recv(fd, &rq, sizeof(rq), 0);

		if (n == 0)
			_exit(0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(1);
		if ((size_t)n != sizeof(rq))
			continue;
		switch (rq.op) {
		case OP_RELOAD:
			reload(&h, &rq);
			break;
		case OP_REOPEN_LOGS:
			reopen_logs(&h, &rq);
			break;
		case OP_CLEAN_UP:
			clean_up(&h, &rq);
			break;
		}
	}
}

int privsep_start(struct privsep *ps, const struct privsep_duties *d)
{
	int sv[2];
	pid_t server = getpid();

	ps->fd = -1;
	ps->seq = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_msg(LOG_ERROR, "privileged helper: socketpair: %s", strerror(errno));
		return -errno;
	}
	ps->pid = fork();
	if (ps->pid < 0) {
		int e = errno;
		log_msg(LOG_ERROR, "privileged helper: fork: %s", strerror(e));
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (ps->pid == 0) {
		close(sv[0]);
		helper_main(sv[1], server, d);
	}
	close(sv[1]);
	ps->fd = sv[0];
	return 0;
}

/* ---- the server's side ---- */

/* Closes the fds a message carried. */
static void close_fds(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		const int *fds = (const int *)(const void *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
	}
}

/* Sends op and waits for its answer (answers to earlier requests that
 * came too late are dropped): 0 with *r and fds[0, r->nfds), or -errno. */
static int ask(struct privsep *ps, uint32_t op, struct reply *r, int *fds)
{
	struct request rq = {.op = op, .seq = ++ps->seq};
	struct timespec until;

	if (ps->fd < 0)
		return -ECHILD;
	while (send(ps->fd, &rq, sizeof(rq), MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += PRIVSEP_TIMEOUT_S;
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = {.iov_base = r, .iov_len = sizeof(*r)};
		struct msghdr msg = {.msg_iov = &iov,
		                     .msg_iovlen = 1,
		                     .msg_control = ctl.buf,
		                     .msg_controllen = sizeof(ctl.buf)};
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = (long)(until.tv_sec - now.tv_sec) * 1000 +
		            (until.tv_nsec - now.tv_nsec) / 1000000;
		struct pollfd pfd = {.fd = ps->fd, .events = POLLIN};
		int p = left > 0 ? poll(&pfd, 1, (int)left) : 0;

		if (p < 0 && errno == EINTR)
			continue;
		if (p <= 0)
			return p < 0 ? -errno : -ETIMEDOUT;
		ssize_t n = recvmsg(ps->fd, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		size_t nfds = c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
		                  ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int)
		                  : 0;
		if ((size_t)n != sizeof(*r) || (msg.msg_flags & MSG_CTRUNC) || r->seq != rq.seq ||
		    r->op != op || nfds != r->nfds || nfds > MAX_FDS) {
			close_fds(&msg);
			if (r->seq != rq.seq && (size_t)n == sizeof(*r))
				continue; /* a late answer to an earlier request */
			return -EBADMSG;
		}
		if (nfds)
			memcpy(fds, CMSG_DATA(c), nfds * sizeof(int));
		return 0;
	}
}

int privsep_reload(struct privsep *ps, struct conf_files *cf)
{
	struct reply r;
	int fds[MAX_FDS];
	int rc = ask(ps, OP_RELOAD, &r, fds);

	conf_files_init(cf);
	if (rc < 0)
		return rc;
	if (r.rc < 0 || r.nfds == 0) {
		for (uint32_t i = 0; i < r.nfds; i++)
			close(fds[i]);
		return r.rc < 0 ? r.rc : -EBADMSG;
	}
	return conf_files_unpack(cf, fds[0], fds + 1, r.nfds - 1);
}

int privsep_reopen_logs(struct privsep *ps, int *error_fd, int *access_fd, int *error_rc,
                        int *access_rc)
{
	struct reply r;
	int fds[MAX_FDS];
	int rc = ask(ps, OP_REOPEN_LOGS, &r, fds);
	uint32_t used = 0;

	*error_fd = *access_fd = -1;
	*error_rc = *access_rc = 0;
	if (rc < 0)
		return rc;
	if (r.rc == 0 && used < r.nfds)
		*error_fd = fds[used++];
	if (r.rc2 == 0 && used < r.nfds)
		*access_fd = fds[used++];
	for (; used < r.nfds; used++)
		close(fds[used]);
	*error_rc = r.rc < 0 ? r.rc : 0;
	*access_rc = r.rc2 < 0 ? r.rc2 : 0;
	return 0;
}

void privsep_clean_up(struct privsep *ps)
{
	struct reply r;
	int fds[MAX_FDS];

	if (ask(ps, OP_CLEAN_UP, &r, fds) < 0)
		log_msg(LOG_INFO, "the privileged helper did not answer: the pid file and Unix "
		                  "sockets stay; the next start replaces them");
	else
		for (uint32_t i = 0; i < r.nfds; i++)
			close(fds[i]);
}

void privsep_close(struct privsep *ps)
{
	if (ps->fd < 0)
		return;
	close(ps->fd);
	ps->fd = -1;
	/* It exits at the end of its socket: reap it if it has. */
	for (int i = 0; i < 100 && waitpid(ps->pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
}
