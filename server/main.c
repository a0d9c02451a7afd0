/* Process start: configuration, the shared read-only server state, one
 * worker per core, the privilege drop (and, with --user, the privileged
 * helper); then the signal loop (signals.c, reloads in reload.c) until the
 * stop, and the undoing of the start. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/acme/acme.h"
#include "server/acme/acme_store.h"
#include "server/core/access_log.h"
#include "server/net/addr_limit.h"
#include "server/check.h"
#include "server/conf/config.h"
#include "server/http/conn.h"
#include "server/core/file_create.h"
#include "server/http/h1_conn.h"
#include "server/http/h2_conn.h"
#include "server/listen_fds.h"
#include "server/listen_unix.h"
#include "server/core/log.h"
#include "server/notify.h"
#include "server/privs.h"
#include "server/privsep.h"
#include "server/run.h"
#include "server/conf/server.h"
#include "server/status/status_listen.h"
#include "server/test_config.h"
#include "server/worker.h"

static unsigned workers_wanted(const struct config *cfg)
{
	return cfg->workers ? cfg->workers : worker_default_count();
}

/* Every connection costs a socket, and a response a file (and a pipe for
 * splice): the default soft limit of 1024 would cap a worker far below
 * --max-connections. Raise it to the hard limit, as nginx's
 * worker_rlimit_nofile does. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_msg(LOG_WARN, "raising the open-file limit: %s", strerror(errno));
	}
}

/* At exit: the pid file and the Unix sockets bound here go (by the helper
 * under --user: their folders may be root's), the sockets close. */
void run_remove_files(struct run *r)
{
	if (r->helper.fd >= 0) {
		privsep_clean_up(&r->helper);
	} else {
		if (r->pid_file.valid)
			file_remove_if_same(r->cfg.pid_file, &r->pid_file);
		listen_unix_remove(&r->cfg);
	}
	r->pid_file.valid = false;
	listen_unix_close(&r->cfg);
}

/* The privileged helper and the drop of every privilege: the last of the
 * start, before any thread. 0, or -1 after the logged reason (the start
 * fails: exit 1). */
static int drop_privileges(struct run *r)
{
	struct config *cfg = &r->cfg;

	if (cfg->user) {
		if (!getpwnam(cfg->user)) {
			log_msg(LOG_ERROR, "--user %s: no such user", cfg->user);
			return -1;
		}
		struct privsep_duties d = {.cfg = cfg,
					   .pid_file = r->pid_file.valid ? &r->pid_file : NULL,
					   .argc = r->argc,
					   .argv = r->argv};
		if (privsep_start(&r->helper, &d) < 0)
			return -1;
	}
	return privs_drop(cfg->user) < 0 ? -1 : 0;
}

/* The start proper, once the configuration is loaded and the logs open:
 * the process exit code. */
static int run(struct run *r, sigset_t *sigs)
{
	struct config *cfg = &r->cfg;
	struct server *srv;
	struct worker *workers = NULL;
	struct addr_limit *conn_limits = NULL;
	struct addr_rate *req_rates = NULL;
	struct status_listen status = {.fd = -1, .stop_fd = -1};
	unsigned n = 0, prepared = 0, started = 0;
	int rc, code = 1;

	notify_open(&r->notify);
	/* Before the listeners: whoever sees the port open finds the pid. */
	if (cfg->pid_file) {
		rc = file_create_pid(cfg->pid_file, (long)getpid(), &r->pid_file);
		if (rc < 0)
			log_msg(LOG_WARN, "pid-file %s: %s", cfg->pid_file, file_create_error(rc));
	}
	if (listen_fds_take(cfg) < 0 || listen_unix_open(cfg) < 0) {
		run_remove_files(r);
		return 1;
	}
	raise_fd_limit();
	/* Allocations of 64 KiB and more come straight from mmap, as the
	 * buffer pool's own do (bufpool.h, BUFPOOL_MAP_MIN): only the pages
	 * used become resident, and what is freed goes back to the system
	 * instead of fragmenting the heap. With glibc's default (a threshold
	 * that grows with the first frees) they would come from the heap and
	 * stay resident after use. */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	rc = server_new(&srv, cfg, false, NULL, NULL);
	if (rc < 0) {
		/* A configuration that cannot work is a usage error (2); a
		 * machine that cannot run it is an operational one (1). */
		run_remove_files(r);
		return rc == -EINVAL ? 2 : 1;
	}
	srv->h1 = &h1_proto;
	srv->h2 = &h2_proto;
	rc = access_log_file_open(&r->access_log, cfg->access_log);
	if (rc < 0) {
		log_msg(LOG_ERROR, "--access-log %s: %s", cfg->access_log, file_create_error(rc));
		goto out;
	}
	srv->access_log = &r->access_log;

	if (acme_wanted(cfg)) {
		char err[PATH_MAX + 128];
		/* As root, while the folder can still be made and given to
		 * the user; the client writes it as the user, after. Before
		 * any listener opens: a server refused here never accepted a
		 * connection (t_acme checked the refusal while the workers'
		 * listeners were already open, and under ASan sometimes saw
		 * them open before the exit). */
		if (acme_store_prepare(cfg->acme_dir, cfg->user, err, sizeof(err)) < 0) {
			log_msg(LOG_ERROR, "acme: %s", err);
			goto out;
		}
		if (cfg->user && strcmp(cfg->user, "nobody") == 0)
			log_msg(LOG_WARN, "acme: --user nobody: every other daemon running as nobody "
					  "can read the account and certificate keys in %s; a user "
					  "of ktlsd's own is safer (adduser --system ktlsd)",
				cfg->acme_dir);
	}
	n = workers_wanted(cfg);
	size_t wsize = (sizeof(*workers) + 63) / 64 * 64;
	workers = aligned_alloc(64, wsize * n);
	if (!workers)
		goto out;
	memset(workers, 0, wsize * n);
	/* --limit-conn counts a client's connections across the workers: one
	 * table for all of them, room for as many addresses as they may hold
	 * connections (pages no address reaches are never touched). Made
	 * whatever the limit, since a reload may set one. */
	conn_limits = addr_limit_new((size_t)n * cfg->max_connections);
	/* --limit-req the same way: the addresses seen lately, room for as
	 * many as may be connected (an idle one's slot goes to the next). */
	req_rates = addr_rate_new((size_t)n * cfg->max_connections);
	if (!conn_limits || !req_rates)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		workers[i].conn_limits = conn_limits;
		workers[i].req_rates = req_rates;
	}
	for (; prepared < n; prepared++)
		if (worker_prepare(&workers[prepared], prepared, srv, &conn_worker_ops) < 0)
			goto out;
	if (cfg->nstatus_listen && status_listen_open(&status, &cfg->status_listen) < 0)
		goto out;
	if (drop_privileges(r) < 0)
		goto out;
	for (; started < n; started++) {
		rc = worker_start(&workers[started]);
		if (rc < 0) {
			log_msg(LOG_ERROR, "worker %u: io_uring: %s", started, strerror(-rc));
			goto out;
		}
	}
	{
		char feats[256], what[PATH_MAX + 64];
		ring_features_describe(&workers[0].feat, feats, sizeof(feats));
		log_msg(LOG_INFO, "ktlsd %s serving %s with %u workers; kTLS %s; %s", PACKAGE_VERSION,
			server_serving_text(srv, what, sizeof(what)), n, srv->use_ktls ? "on" : "off",
			feats);
	}
	if (status.fd >= 0) {
		rc = status_listen_start(&status, n, worker_read_stats, workers, srv->use_ktls);
		if (rc < 0) {
			log_msg(LOG_ERROR, "status-listen: %s", strerror(-rc));
			goto out;
		}
		log_msg(LOG_INFO, "metrics on http://%s/metrics and /status",
			cfg->status_listen.text);
	}
	if (acme_wanted(cfg) && acme_start(&r->acme, cfg, pthread_self(), SIGNAL_ACME_RELOAD) < 0)
		goto out;
	{
		char what[PATH_MAX + 64];
		notify_send(&r->notify, "READY=1\nSTATUS=serving %s with %u workers",
			    server_serving_text(srv, what, sizeof(what)), n);
	}
	const struct server *current = srv;
	signals_serve(r, sigs, workers, n, &status, &current);
	srv = (struct server *)current; /* the last reload's: put below */
	code = 0;
out:
	/* A start that failed undoes what it did; a stop, what is left. */
	for (unsigned i = 0; i < started; i++)
		worker_request_stop(&workers[i]);
	for (unsigned i = 0; workers && i < n && i <= prepared; i++) {
		if (i < started)
			worker_join(&workers[i]);
		else
			worker_unprepare(&workers[i]);
	}
	/* Up until now, so that a scrape during the grace period works. */
	status_listen_stop(&status);
	acme_stop(r->acme);
	r->acme = NULL;
	free(workers);
	addr_limit_free(conn_limits); /* no worker runs any more */
	addr_rate_free(req_rates);
	run_remove_files(r);
	privsep_close(&r->helper);
	access_log_file_close(&r->access_log);
	server_put(srv);
	return code;
}

int main(int argc, char **argv)
{
	struct run r = {.access_log = {.fd = -1}, .helper = {.fd = -1}, .argc = argc, .argv = argv};
	sigset_t sigs;
	int rc;

	signals_take(&sigs);
	switch (config_load(&r.cfg, argc, argv, NULL, stdout, stderr)) {
	case CONFIG_RUN:
		break;
	case CONFIG_EXIT_OK:
		config_free(&r.cfg);
		return 0;
	default:
		config_free(&r.cfg);
		return 2;
	}
	if (r.cfg.check || r.cfg.test_config) {
		rc = r.cfg.check ? check_report(&r.cfg, stdout) : 0;
		if (rc == 0 && (r.cfg.site.root || r.cfg.nsites))
			rc = test_config(&r.cfg);
		config_free(&r.cfg);
		return rc;
	}
	rc = log_open(r.cfg.error_log, r.cfg.log_level);
	if (rc < 0) {
		fprintf(stderr, "ktlsd: --error-log %s: %s\n", r.cfg.error_log, file_create_error(rc));
		config_free(&r.cfg);
		return 2;
	}
	rc = run(&r, &sigs);
	notify_close(&r.notify);
	config_free(&r.cfg);
	return rc;
}
