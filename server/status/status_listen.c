#include "server/status/status_listen.h"

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "proto/httpdate.h"
#include "proto/status.h"
#include "server/core/acme_chal.h"
#include "server/core/cert_status.h"
#include "server/core/log.h"
#include "server/status/metrics.h"
#include "server/core/stats.h"

/* After the response, how long a client has to close before we do: its
 * unread bytes (an over-long request) would otherwise turn our close into
 * a reset that can destroy the response before it is read. */
#define STATUS_LINGER_MS 1000
/* accept found no fd: try again after this long. */
#define STATUS_ACCEPT_RETRY_MS 100

enum client_phase { CLIENT_FREE, CLIENT_READING, CLIENT_WRITING, CLIENT_LINGERING };

struct status_client {
	enum client_phase phase;
	int fd;
	uint64_t since_ms, deadline_ms;
	size_t in_len;
	char in[STATUS_REQUEST_MAX];
	char head[512];
	size_t head_len, sent;
	struct metrics_buf body;
	bool send_body;              /* not for HEAD */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int status_listen_open(struct status_listen *sl, const struct config_listen *addr)
{
	struct timespec ts;
	int one = 1;

	memset(sl, 0, sizeof(*sl));
	sl->stop_fd = -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	sl->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	sl->start_ms = now_ms();
	/* No SO_REUSEPORT: a second server on the same port must fail to
	 * bind, not take every other scrape. */
	sl->fd = socket(addr->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sl->fd < 0 || setsockopt(sl->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (addr->addr.ss_family == AF_INET6 &&
	     setsockopt(sl->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(sl->fd, (const struct sockaddr *)&addr->addr, addr->addrlen) < 0 ||
	    listen(sl->fd, 64) < 0) {
		int e = errno;
		log_msg(LOG_ERROR, "status-listen %s: %s", addr->text, strerror(e));
		if (sl->fd >= 0)
			close(sl->fd);
		sl->fd = -1;
		return -e;
	}
	return 0;
}

/* ---- one connection ---- */

static void client_close(struct status_client *cl)
{
	close(cl->fd);
	metrics_buf_free(&cl->body);
	cl->phase = CLIENT_FREE;
	cl->fd = -1;
}

/* The process as a whole, from the kernel. */
static void process_view(struct metrics_view *v)
{
	struct rusage ru;
	struct rlimit rl;
	DIR *d = opendir("/proc/self/fd");
	FILE *f;

	if (d) {
		uint64_t n = 0;
		for (struct dirent *e; (e = readdir(d));)
			n += e->d_name[0] != '.';
		closedir(d);
		v->open_fds = n ? n - 1 : 0; /* not the one opendir holds */
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		v->max_fds = (uint64_t)rl.rlim_cur;
	f = fopen("/proc/self/statm", "re");
	if (f) {
		unsigned long long size, resident;
		if (fscanf(f, "%llu %llu", &size, &resident) == 2)
			v->resident_bytes = resident * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		v->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
				 ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* The page asked for, into body: 0, or -ENOMEM. */
static int render(struct status_listen *sl, bool json, struct metrics_buf *body)
{
	struct worker_snapshot *snaps = calloc(sl->nworkers, sizeof(*snaps));
	struct metrics_view v = {
	    .version = PACKAGE_VERSION,
	    .openssl = OpenSSL_version(OPENSSL_VERSION_STRING),
	    .kernel_tls = sl->kernel_tls,
	    .pid = (long)getpid(),
	    .start_time = sl->start_time,
	    .uptime = (double)(now_ms() - sl->start_ms) / 1000.0,
	    .nworkers = sl->nworkers,
	    .workers = snaps,
	};

	struct cert_status_all *certs = malloc(sizeof(*certs));

	if (!snaps || !certs) {
		free(snaps);
		free(certs);
		return -ENOMEM;
	}
	cert_status_read(certs);
	v.certs = certs;
	acme_chal_counts(&v.acme_http01, &v.acme_alpn01);
	for (unsigned i = 0; i < sl->nworkers; i++)
		sl->read(sl->read_arg, i, &snaps[i]);
	process_view(&v);
	if (json)
		metrics_json(body, &v);
	else
		metrics_prometheus(body, &v);
	free(snaps);
	free(certs);
	return body->failed ? -ENOMEM : 0;
}

/* Queues the response: the head, and the body unless the request was HEAD. */
static void respond(struct status_client *cl, int status, const char *type, const char *extra,
		    bool head_only)
{
	char date[HTTPDATE_LEN + 1];
	int n;

	if (status != 200) {
		metrics_buf_free(&cl->body);
		metrics_printf(&cl->body, "%d %s\n", status, status_reason(status));
		type = "text/plain; charset=utf-8";
	}
	httpdate_format(time(NULL), date);
	n = snprintf(cl->head, sizeof(cl->head),
		     "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "%sCache-Control: no-store\r\nConnection: close\r\n\r\n",
		     status, status_reason(status), date, type, cl->body.len, extra);
	cl->head_len = n > 0 && (size_t)n < sizeof(cl->head) ? (size_t)n : 0;
	cl->send_body = !head_only;
	cl->sent = 0;
	cl->phase = CLIENT_WRITING;
}

/* The request head is in (or the buffer is full without one): decide. */
static void answer(struct status_listen *sl, struct status_client *cl, bool complete)
{
	char *line = cl->in, *method, *target, *version, *save = NULL;
	bool head;

	if (!complete) {
		respond(cl, 431, NULL, "", false);
		return;
	}
	line[strcspn(line, "\r\n")] = '\0';
	method = strtok_r(line, " ", &save);
	target = strtok_r(NULL, " ", &save);
	version = strtok_r(NULL, " ", &save);
	if (!method || !target || !version || strtok_r(NULL, " ", &save) ||
	    strncmp(version, "HTTP/1.", 7) != 0) {
		respond(cl, 400, NULL, "", false);
		return;
	}
	head = strcmp(method, "HEAD") == 0;
	target[strcspn(target, "?")] = '\0';
	bool json = strcmp(target, "/status") == 0 || strcmp(target, "/status/") == 0;
	bool health = strcmp(target, "/healthz") == 0;
	if (!json && !health && strcmp(target, "/metrics") != 0) {
		respond(cl, 404, NULL, "", head);
		return;
	}
	if (!head && strcmp(method, "GET") != 0) {
		respond(cl, 405, NULL, "Allow: GET, HEAD\r\n", false);
		return;
	}
	if (health) {
		/* 503 carries its own body from respond(): "503 Service Unavailable". */
		bool draining = atomic_load_explicit(&sl->draining, memory_order_relaxed);
		metrics_buf_free(&cl->body);
		if (!draining)
			metrics_printf(&cl->body, "ok\n");
		respond(cl, draining ? 503 : 200, "text/plain; charset=utf-8", "", head);
		return;
	}
	if (render(sl, json, &cl->body) < 0) {
		respond(cl, 500, NULL, "", head);
		return;
	}
	respond(cl, 200, json ? "application/json" : "text/plain; version=0.0.4; charset=utf-8", "",
		head);
}

/* The end of a request head: a blank line (CRLF or, leniently, LF). */
static bool head_complete(const struct status_client *cl)
{
	const char *p = cl->in, *end = cl->in + cl->in_len;

	for (; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
		if (p + 1 < end && p[1] == '\n')
			return true;
		if (p + 2 < end && p[1] == '\r' && p[2] == '\n')
			return true;
	}
	return false;
}

static void client_read(struct status_listen *sl, struct status_client *cl)
{
	/* One byte kept for the NUL that answer() relies on. */
	ssize_t n = recv(cl->fd, cl->in + cl->in_len, sizeof(cl->in) - 1 - cl->in_len, 0);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(cl);
		return;
	}
	if (n < 0)
		return;
	cl->in_len += (size_t)n;
	cl->in[cl->in_len] = '\0';
	if (head_complete(cl))
		answer(sl, cl, true);
	else if (cl->in_len == sizeof(cl->in) - 1)
		answer(sl, cl, false);
}

static void client_write(struct status_client *cl, uint64_t now)
{
	size_t total = cl->head_len + (cl->send_body ? cl->body.len : 0);
	struct iovec iov[2];
	struct msghdr msg = {.msg_iov = iov};

	if (cl->sent < cl->head_len) {
		iov[msg.msg_iovlen].iov_base = cl->head + cl->sent;
		iov[msg.msg_iovlen++].iov_len = cl->head_len - cl->sent;
	}
	if (cl->send_body && cl->body.len > 0) {
		size_t from = cl->sent > cl->head_len ? cl->sent - cl->head_len : 0;
		iov[msg.msg_iovlen].iov_base = cl->body.p + from;
		iov[msg.msg_iovlen++].iov_len = cl->body.len - from;
	}
	ssize_t n = msg.msg_iovlen ? sendmsg(cl->fd, &msg, MSG_NOSIGNAL) : 0;
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_close(cl);
		return;
	}
	cl->sent += (size_t)n;
	if (cl->sent < total)
		return;
	/* All out: say so, and wait (briefly) for the client to close. */
	shutdown(cl->fd, SHUT_WR);
	cl->phase = CLIENT_LINGERING;
	if (cl->deadline_ms > now + STATUS_LINGER_MS)
		cl->deadline_ms = now + STATUS_LINGER_MS;
}

static void client_drain(struct status_client *cl)
{
	char sink[4096];
	ssize_t n = recv(cl->fd, sink, sizeof(sink), 0);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		client_close(cl);
}

/* ---- the thread ---- */

/* A slot for a new connection: a free one, else the oldest that is still
 * sending its request (it goes), else none. */
static struct status_client *free_slot(struct status_listen *sl, bool evict)
{
	struct status_client *oldest = NULL;

	for (unsigned i = 0; i < STATUS_MAX_CLIENTS; i++) {
		struct status_client *cl = &sl->clients[i];
		if (cl->phase == CLIENT_FREE)
			return cl;
		if (cl->phase == CLIENT_READING && (!oldest || cl->since_ms < oldest->since_ms))
			oldest = cl;
	}
	if (oldest && evict)
		client_close(oldest);
	return oldest;
}

static void accept_clients(struct status_listen *sl, uint64_t now)
{
	for (;;) {
		struct status_client *cl = free_slot(sl, false);
		if (!cl)
			return;
		int fd = accept4(sl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				sl->accept_paused_until_ms = now + STATUS_ACCEPT_RETRY_MS;
			else if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		cl = free_slot(sl, true);
		cl->fd = fd;
		cl->phase = CLIENT_READING;
		cl->since_ms = now;
		cl->deadline_ms = now + STATUS_TIMEOUT_MS;
		cl->in_len = cl->head_len = cl->sent = 0;
		cl->send_body = false;
	}
}

static void *status_main(void *arg)
{
	struct status_listen *sl = arg;
	struct pollfd pfd[2 + STATUS_MAX_CLIENTS];
	struct status_client *polled[STATUS_MAX_CLIENTS];

	pthread_setname_np(pthread_self(), "ktlsd-status");
	for (;;) {
		uint64_t now = now_ms();
		int timeout = -1;
		nfds_t n = 2;

		pfd[0] = (struct pollfd){.fd = sl->stop_fd, .events = POLLIN};
		/* A negative fd is skipped: no busy loop on a listener we
		 * cannot take from now. */
		pfd[1] = (struct pollfd){.fd = sl->fd, .events = POLLIN};
		if (now < sl->accept_paused_until_ms) {
			pfd[1].fd = -1;
			timeout = (int)(sl->accept_paused_until_ms - now);
		}
		for (unsigned i = 0; i < STATUS_MAX_CLIENTS; i++) {
			struct status_client *cl = &sl->clients[i];
			if (cl->phase == CLIENT_FREE)
				continue;
			if (cl->deadline_ms <= now) {
				client_close(cl);
				continue;
			}
			int left = (int)(cl->deadline_ms - now);
			if (timeout < 0 || left < timeout)
				timeout = left;
			polled[n - 2] = cl;
			pfd[n++] = (struct pollfd){
			    .fd = cl->fd, .events = cl->phase == CLIENT_WRITING ? POLLOUT : POLLIN};
		}
		if (!free_slot(sl, false))
			pfd[1].fd = -1;
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_ERROR, "status-listen: poll: %s; metrics are off",
				strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		now = now_ms();
		for (nfds_t i = 2; i < n; i++) {
			struct status_client *cl = polled[i - 2];
			if (!pfd[i].revents || cl->phase == CLIENT_FREE)
				continue;
			if (cl->phase == CLIENT_READING)
				client_read(sl, cl);
			if (cl->phase == CLIENT_WRITING)
				client_write(cl, now);
			else if (cl->phase == CLIENT_LINGERING)
				client_drain(cl);
		}
		if (pfd[1].revents)
			accept_clients(sl, now);
	}
	for (unsigned i = 0; i < STATUS_MAX_CLIENTS; i++)
		if (sl->clients[i].phase != CLIENT_FREE)
			client_close(&sl->clients[i]);
	return NULL;
}

int status_listen_start(struct status_listen *sl, unsigned n, status_read_fn *read, void *arg,
			bool kernel_tls)
{
	int rc;

	sl->read = read;
	sl->read_arg = arg;
	sl->nworkers = n;
	sl->kernel_tls = kernel_tls;
	sl->clients = calloc(STATUS_MAX_CLIENTS, sizeof(*sl->clients));
	if (!sl->clients)
		return -ENOMEM;
	for (unsigned i = 0; i < STATUS_MAX_CLIENTS; i++)
		sl->clients[i].fd = -1;
	sl->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (sl->stop_fd < 0)
		return -errno;
	rc = pthread_create(&sl->thread, NULL, status_main, sl);
	if (rc != 0)
		return -rc;
	sl->running = true;
	return 0;
}

void status_listen_drain(struct status_listen *sl)
{
	atomic_store_explicit(&sl->draining, true, memory_order_relaxed);
}

void status_listen_stop(struct status_listen *sl)
{
	if (sl->running) {
		uint64_t one = 1;
		ssize_t w = write(sl->stop_fd, &one, sizeof(one));
		(void)w;
		pthread_join(sl->thread, NULL);
		sl->running = false;
	}
	if (sl->stop_fd >= 0)
		close(sl->stop_fd);
	if (sl->fd >= 0)
		close(sl->fd);
	free(sl->clients);
	sl->clients = NULL;
	sl->stop_fd = sl->fd = -1;
}
