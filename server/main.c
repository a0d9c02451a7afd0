/* Process start: configuration, the shared read-only server state, one
 * worker per core, the privilege drop (and, with --user, the privileged
 * helper), signals and reloads. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/access_log.h"
#include "server/addr_limit.h"
#include "server/check.h"
#include "server/conf_files.h"
#include "server/config.h"
#include "server/file_create.h"
#include "server/h1_conn.h"
#include "server/h2_conn.h"
#include "server/listen_fds.h"
#include "server/listen_unix.h"
#include "server/log.h"
#include "server/notify.h"
#include "server/privs.h"
#include "server/privsep.h"
#include "server/server.h"
#include "server/status_listen.h"
#include "server/test_config.h"
#include "server/worker.h"

#define KEEPING "; keeping the running configuration"

/* What one process start set up and must undo at its exit. */
struct run {
	struct config cfg;                /* the start's: what is fixed until a restart */
	struct access_log_file access_log;
	struct file_id pid_file;          /* the pid file written (valid), for its removal */
	struct privsep helper;            /* with --user (fd -1 without) */
	struct notify notify;
	int argc;
	char **argv;
};

/* Loads the configuration for a reload. Why it does not load goes to the
 * error log (config_load tells a terminal, at start), one line per
 * problem. */
static int load_config(struct config *cfg, int argc, char **argv, struct conf_files *cf)
{
	char *text = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&text, &len);
	int rc = config_load(cfg, argc, argv, cf, stdout, err ? err : stderr);

	if (err)
		fclose(err);
	if (rc != CONFIG_RUN) {
		char *save = NULL;
		char *line = text ? strtok_r(text, "\n", &save) : NULL;
		if (!line)
			log_msg(LOG_ERROR, "SIGHUP: the configuration does not load" KEEPING);
		for (; line; line = strtok_r(NULL, "\n", &save))
			log_msg(LOG_ERROR, "SIGHUP: %s" KEEPING, line);
	}
	free(text);
	return rc == CONFIG_RUN ? 0 : -EINVAL;
}

static unsigned workers_wanted(const struct config *cfg)
{
	return cfg->workers ? cfg->workers : worker_default_count();
}

static void say_kept(void *ctx, const char *line)
{
	(void)ctx;
	log_msg(LOG_WARN, "SIGHUP: %s", line);
}

/* A reload's configuration, loaded and built: from the files the
 * privileged helper read (with --user), else from disk, with what no
 * privilege is left for. NULL after the logged reason. */
static struct server *reload_build(struct run *r, const struct server *cur, size_t *kept)
{
	struct conf_files received, *cf = NULL;
	struct config *cfg = NULL;
	struct server *next = NULL;

	if (r->helper.fd >= 0) {
		int rc = privsep_reload(&r->helper, &received);
		if (rc < 0) {
			log_msg(LOG_ERROR, "SIGHUP: the privileged helper did not send the "
					   "configuration's files (%s)" KEEPING,
				strerror(-rc));
			return NULL;
		}
		cf = &received;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		log_msg(LOG_ERROR, "SIGHUP: out of memory" KEEPING);
	if (cfg && load_config(cfg, r->argc, r->argv, cf) == 0) {
		listen_fds_keep(cfg, cur->cfg);
		*kept = config_keep_fixed(cur->cfg, cfg, say_kept, NULL);
		if (server_new(&next, cfg, true, cur, cf) < 0)
			config_free(cfg);
	}
	if (!next)
		free(cfg);
	if (cf)
		conf_files_free(cf);
	return next;
}

/* SIGHUP: loads the configuration again and hands it to the n workers, or
 * refuses it as a whole with one error line and keeps the running one (a
 * configuration that does not load, a certificate that does not). What is
 * set up once at start (listeners, workers, user, pid file, logs) keeps its
 * running value, one warning line each, and the rest applies: a renewed
 * certificate must not wait for a restart because a listener changed.
 * Returns the new server (its reference is the caller's) or NULL. */
static const struct server *reload(struct run *r, const struct server *cur,
				   struct worker *workers, unsigned n)
{
	size_t kept = 0;
	struct server *next = reload_build(r, cur, &kept);

	if (!next)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		worker_request_reload(&workers[i], next);
	if (kept)
		log_msg(LOG_INFO, "SIGHUP: configuration and certificates reloaded, but for the %zu "
				  "setting%s above",
			kept, kept > 1 ? "s" : "");
	else
		log_msg(LOG_INFO, "SIGHUP: configuration and certificates reloaded");
	log_set_level(next->cfg->log_level);
	return next;
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

/* Signals an operator may send by habit, meant for other servers (nginx's
 * SIGUSR2 and SIGWINCH) or for nothing, that would end the process by
 * default: each is logged and ignored. */
static const int ignored_signals[] = {SIGUSR2, SIGWINCH, SIGALRM, SIGIO,
				      SIGPWR,  SIGVTALRM, SIGPROF, SIGSTKFLT};

/* The logs opened again: by the privileged helper under --user (the
 * server can no longer make a file in a folder of root's, nor should it
 * open one as root), else by the server. 0 or -errno for each. */
static void reopen_files(struct run *r, int *rc_err, int *rc_acc)
{
	int efd, afd, rc;

	if (r->helper.fd < 0) {
		*rc_err = log_reopen();
		*rc_acc = access_log_file_reopen(&r->access_log);
		return;
	}
	rc = privsep_reopen_logs(&r->helper, &efd, &afd, rc_err, rc_acc);
	if (rc < 0) {
		*rc_err = log_file_named(r->cfg.error_log) ? rc : 0;
		*rc_acc = access_log_file_named(r->cfg.access_log) ? rc : 0;
		return;
	}
	if (efd >= 0)
		*rc_err = log_replace(efd);
	if (afd >= 0)
		*rc_acc = access_log_file_replace(&r->access_log, afd);
}

/* SIGUSR1 (and SIGHUP): logrotate renamed the logs; open them again. A log
 * that cannot be reopened stays on its old file. */
static void reopen_logs(struct run *r, int sig)
{
	int rc_err, rc_acc;

	reopen_files(r, &rc_err, &rc_acc);
	if (rc_err < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the error log: %s; it stays on the old file",
			sigabbrev_np(sig), file_create_error(rc_err));
	if (rc_acc < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the access log: %s; it stays on the old file",
			sigabbrev_np(sig), file_create_error(rc_acc));
	if (sig == SIGUSR1 && rc_err == 0 && rc_acc == 0)
		log_msg(LOG_INFO, "SIGUSR1: logs reopened");
}

/* At exit: the pid file and the Unix sockets bound here go (by the helper
 * under --user: their folders may be root's), the sockets close. */
static void remove_run_files(struct run *r)
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

/* Signals are taken by the main thread alone, with sigwait; the workers,
 * started later, inherit the mask and never see them (nor does the
 * privileged helper, forked with it). Blocked from the first instruction
 * on: a SIGUSR1 during start-up waits for sigwait instead of killing the
 * process. A closed client must not kill us with SIGPIPE, nor a log over
 * RLIMIT_FSIZE with SIGXFSZ (the write fails instead). */
static void take_signals(sigset_t *sigs)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGQUIT);
	sigaddset(sigs, SIGHUP);
	sigaddset(sigs, SIGUSR1);
	for (size_t i = 0; i < sizeof(ignored_signals) / sizeof(ignored_signals[0]); i++)
		sigaddset(sigs, ignored_signals[i]);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool all_finished(struct worker *workers, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!worker_finished(&workers[i]))
			return false;
	return true;
}

/* How long SIGINT and SIGQUIT wait for the workers' last log lines: a
 * worker stuck writing to a log reader that stopped reading must not hold
 * the exit. */
#define QUIT_WAIT_S 2

/* SIGINT, SIGQUIT: exit at once, but with the access log complete: each
 * worker logs the responses it cuts and writes its lines out first. */
static _Noreturn void quit_now(struct worker *workers, unsigned n, struct run *r, int sig)
{
	struct timespec deadline;

	log_msg(LOG_INFO, "SIG%s: exiting now", sigabbrev_np(sig));
	for (unsigned i = 0; i < n; i++)
		worker_request_quit(&workers[i]);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += QUIT_WAIT_S;
	for (unsigned i = 0; i < n; i++)
		if (!worker_wait_until(&workers[i], &deadline))
			log_msg(LOG_WARN, "worker %u did not stop within %d s", i, QUIT_WAIT_S);
	remove_run_files(r);
	privsep_close(&r->helper);
	_exit(0);
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

/* The signal loop: until every worker has finished after SIGTERM (or
 * SIGINT, SIGQUIT exit at once). *current is the running server, whose
 * reference the loop keeps: a reload's replaces it. */
static void serve_signals(struct run *r, sigset_t *sigs, struct worker *workers, unsigned n,
			  struct status_listen *status, const struct server **current)
{
	uint64_t drain_until = 0; /* SIGTERM with --drain-delay: stop then */
	int sig;

	for (bool stopping = false; !stopping || !all_finished(workers, n);) {
		/* While the workers drain, look at them ten times a second;
		 * while the node drains (--drain-delay), wait for its end. */
		struct timespec wait = {0, 100 * 1000 * 1000};
		uint64_t now = monotonic_ms();
		const struct config *cfg = (*current)->cfg;
		if (drain_until && !stopping && now < drain_until)
			wait = (struct timespec){(time_t)((drain_until - now) / 1000),
						 (long)((drain_until - now) % 1000) * 1000000};
		if (stopping || drain_until)
			sig = sigtimedwait(sigs, NULL, &wait);
		else if (sigwait(sigs, &sig) != 0)
			sig = -1;
		if (drain_until && !stopping && sig == -1 && monotonic_ms() >= drain_until)
			sig = SIGTERM; /* the drain is over: stop now (a second SIGTERM cuts it short) */
		switch (sig) {
		case -1:
			break;
		case SIGINT:
		case SIGQUIT:
			quit_now(workers, n, r, sig);
		case SIGTERM:
			if (stopping)
				break;
			if (!drain_until) {
				status_listen_drain(status);
				notify_send(&r->notify, "STOPPING=1\nSTATUS=finishing responses in flight");
				if (cfg->drain_delay_ms) {
					/* A load balancer's health check sees 503
					 * and drains this node while it serves. */
					log_msg(LOG_INFO, "SIGTERM: /healthz answers 503; serving %u ms "
							  "more before the listeners close",
						cfg->drain_delay_ms);
					drain_until = monotonic_ms() + cfg->drain_delay_ms;
					break;
				}
			}
			log_msg(LOG_INFO, "SIGTERM: finishing responses in flight (grace %u ms)",
				cfg->shutdown_grace_ms);
			for (unsigned i = 0; i < n; i++)
				worker_request_stop(&workers[i]);
			stopping = true;
			break;
		case SIGUSR1:
			reopen_logs(r, sig);
			break;
		case SIGHUP: {
			reopen_logs(r, sig);
			if (stopping) {
				log_msg(LOG_INFO, "SIGHUP: stopping; the configuration is not reloaded");
				break;
			}
			notify_reloading(&r->notify);
			const struct server *next = reload(r, *current, workers, n);
			if (next) {
				server_put(*current);
				*current = next;
			}
			char what[PATH_MAX + 64];
			notify_send(&r->notify, "READY=1\nSTATUS=serving %s with %u workers; %s",
				    server_serving_text(*current, what, sizeof(what)), n,
				    next ? "configuration reloaded" : "reload refused (see the log)");
			break;
		}
		default:
			log_msg(LOG_WARN, "SIG%s ignored (SIGHUP reloads, SIGUSR1 reopens the logs, "
					  "SIGTERM stops)",
				sigabbrev_np(sig));
			break;
		}
	}
}

/* The start proper, once the configuration is loaded and the logs open:
 * the process exit code. */
static int run(struct run *r, sigset_t *sigs)
{
	struct config *cfg = &r->cfg;
	struct server *srv;
	struct worker *workers = NULL;
	struct addr_limit *conn_limits = NULL;
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
		remove_run_files(r);
		return 1;
	}
	raise_fd_limit();
	/* Per-connection buffers of 64 KiB and more (the receive buffer, the
	 * plaintext stage) come straight from mmap: only the pages a
	 * connection really uses become resident, and a closed connection's
	 * buffers go back to the system instead of fragmenting the heap. With
	 * glibc's default (a threshold that grows with the first frees) they
	 * would come from the heap and stay resident after use. */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	rc = server_new(&srv, cfg, false, NULL, NULL);
	if (rc < 0) {
		/* A configuration that cannot work is a usage error (2); a
		 * machine that cannot run it is an operational one (1). */
		remove_run_files(r);
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
	if (!conn_limits)
		goto out;
	for (unsigned i = 0; i < n; i++)
		workers[i].conn_limits = conn_limits;
	for (; prepared < n; prepared++)
		if (worker_prepare(&workers[prepared], prepared, srv) < 0)
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
		rc = status_listen_start(&status, workers, n, srv->use_ktls);
		if (rc < 0) {
			log_msg(LOG_ERROR, "status-listen: %s", strerror(-rc));
			goto out;
		}
		log_msg(LOG_INFO, "metrics on http://%s/metrics and /status",
			cfg->status_listen.text);
	}
	{
		char what[PATH_MAX + 64];
		notify_send(&r->notify, "READY=1\nSTATUS=serving %s with %u workers",
			    server_serving_text(srv, what, sizeof(what)), n);
	}
	const struct server *current = srv;
	serve_signals(r, sigs, workers, n, &status, &current);
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
	free(workers);
	addr_limit_free(conn_limits); /* no worker runs any more */
	remove_run_files(r);
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

	take_signals(&sigs);
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
