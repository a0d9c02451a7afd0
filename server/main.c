/* Process start: configuration, the shared read-only server state, one
 * worker per core, signals and reloads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "server/access_log.h"
#include "server/addr_limit.h"
#include "server/check.h"
#include "server/config.h"
#include "server/h1_conn.h"
#include "server/h2_conn.h"
#include "server/listen_fds.h"
#include "server/listen_unix.h"
#include "server/log.h"
#include "server/notify.h"
#include "server/privs.h"
#include "server/status_listen.h"
#include "server/worker.h"

static int site_of_name(const void *arg, const char *name, size_t len)
{
	return vhost_find(arg, name, len);
}

static void fill_tls_settings(struct server *srv)
{
	const struct config *cfg = srv->cfg;
	struct tls_settings *t = &srv->tls;

	for (size_t i = 0; i < srv->nsites; i++)
		srv->tls_sites[i] = (struct tls_site){.certs = srv->sites[i].certs,
						      .ncerts = srv->sites[i].ncerts,
						      .name = srv->sites[i].cfg->name};
	t->sites = srv->tls_sites;
	t->nsites = srv->nsites;
	t->site_of = site_of_name;
	t->site_arg = &srv->names;
	t->protocols = cfg->tls_protocols;
	t->tls13_ciphersuites = cfg->tls13_ciphersuites;
	t->tls12_ciphers = cfg->tls12_ciphers;
	t->session_tickets = cfg->tls_session_tickets;
	t->session_cache = cfg->tls_session_cache;
	t->ticket_rotate_s = cfg->tls_ticket_rotate_s;
	t->rekey_records = cfg->tls_rekey_records;
	/* The sealer takes its keys the way the kernel would. */
	t->ktls = srv->use_ktls || srv->seal_records;
	t->h2 = cfg->h2;
}

/* How a failure of server_build is told: at start the bare reason; on
 * SIGHUP (a running server to fall back to) the same reason, saying that
 * the running configuration stays. One line either way. */
#define KEEPING "; keeping the running configuration"
#define build_error(cur, fmt, ...)                                                                 \
	log_msg(LOG_ERROR, "%s" fmt "%s", (cur) ? "SIGHUP: " : "", __VA_ARGS__, (cur) ? KEEPING : "")

/* Decides the kernel TLS policy; a refusal is a one-line reason. What the
 * machine offers is probed once: a reload reuses the running server's
 * answer, since after --user the probe could no longer load tls.ko and
 * would wrongly say no. */
static int choose_ktls(struct server *srv, const struct server *cur)
{
	const struct config *cfg = srv->cfg;

	if (cfg->ktls == CONFIG_OFF || cfg->nlisten == 0)
		return 0;
	if (cur && cur->ktls_probed) {
		srv->ktls = cur->ktls;
	} else {
		ktls_probe(&srv->ktls);
	}
	srv->ktls_probed = true;
	if (srv->ktls.ulp && srv->ktls.openssl) {
		srv->use_ktls = true;
		return 0;
	}
	if (cfg->ktls == CONFIG_ON) {
		build_error(cur, "--ktls on: %s",
			    !srv->ktls.openssl ? "this OpenSSL was built without kernel TLS"
					       : "the kernel has no 'tls' TCP ULP (CONFIG_TLS off, or "
						 "tls.ko not loadable)");
		return -ENOTSUP;
	}
	if (!cur)
		log_msg(LOG_INFO, "kernel TLS unavailable (%s): TLS is done in user space",
			strerror(srv->ktls.ulp_errno));
	return 0;
}

/* The sites in the order workers look for them: the top level's first when
 * it has a root (it serves clients that name no site), then the sections. */
static int sites_build(struct server *srv, const struct server *cur)
{
	const struct config *cfg = srv->cfg;
	const struct config_site *all[CONFIG_MAX_SITES + 1];
	size_t n = 0;
	char err[600];

	if (cfg->site.root)
		all[n++] = &cfg->site;
	for (size_t i = 0; i < cfg->nsites; i++)
		all[n++] = &cfg->sites[i];
	srv->sites = calloc(n, sizeof(*srv->sites));
	if (!srv->sites) {
		build_error(cur, "%s", "out of memory");
		return -ENOMEM;
	}
	/* Every site counts from here: server_release frees what was built,
	 * and a site not yet built holds nothing (root_fd -1). */
	srv->nsites = n;
	for (size_t i = 0; i < n; i++)
		srv->sites[i].root_fd = -1;
	for (size_t i = 0; i < n; i++) {
		const struct config_site *site = all[i];

		if (cfg->nlisten > 0 && site->ncerts == 0) {
			if (site->name)
				build_error(cur, "[site %s]: a TLS listener needs a certificate for every "
						 "site (cert and key)",
					    site->name);
			else
				build_error(cur, "%s",
					    "--cert/--key: a TLS listener needs at least one certificate");
			return -EINVAL;
		}
		if (site_build(&srv->sites[i], site, srv->mime, cfg->mime_types, err, sizeof(err)) <
		    0) {
			build_error(cur, "%s", err);
			return -EINVAL;
		}
		for (size_t j = 0; j < site->nserver_names; j++)
			if (vhost_add(&srv->names, site->server_names[j], (unsigned)i) < 0) {
				build_error(cur, "%s", "out of memory");
				return -ENOMEM;
			}
	}
	return 0;
}

/* "/srv/www", or "/srv/a and 2 more sites": for the lines that say what is
 * served. */
static const char *serving_text(const struct server *srv, char *buf, size_t len)
{
	if (srv->nsites > 1)
		snprintf(buf, len, "%s and %zu more sites", srv->sites[0].cfg->root,
			 srv->nsites - 1);
	else
		snprintf(buf, len, "%s", srv->nsites ? srv->sites[0].cfg->root : "nothing");
	return buf;
}

/* The read-only state workers share, from a loaded configuration. cur is
 * the running server on reload (NULL at start): its ticket master secret is
 * carried over so tickets stay valid, and its kTLS probe reused. */
static int server_build(struct server *srv, const struct config *cfg, const struct server *cur)
{
	memset(srv, 0, sizeof(*srv));
	srv->cfg = cfg;
	srv->access_log = cur ? cur->access_log : NULL;
	srv->h1 = &h1_proto;
	srv->h2 = &h2_proto;
	if (mime_table_load(&srv->mime, cfg->mime_types) < 0) {
		build_error(cur, "%s", "out of memory loading MIME types");
		return -ENOMEM;
	}
	if (sites_build(srv, cur) < 0)
		return -EINVAL;
	if (choose_ktls(srv, cur) < 0)
		return -ENOTSUP;
	srv->seal_records = !srv->use_ktls && cfg->tls_records == CONFIG_RECORDS_KTLSD &&
			    ktls_openssl_built();
	fill_tls_settings(srv);
	for (size_t i = 0; i < cfg->nticket_key_files; i++) {
		char err[512];
		if (tls_ticket_key_read(cfg->ticket_key_files[i], &srv->tls.file_keys[i], err,
					sizeof(err)) < 0) {
			build_error(cur, "%s", err);
			return -EINVAL;
		}
	}
	srv->tls.nfile_keys = cfg->nticket_key_files;
	if (cur) {
		memcpy(srv->tls.ticket_master, cur->tls.ticket_master, TLS_TICKET_MASTER_LEN);
	} else if (RAND_bytes(srv->tls.ticket_master, TLS_TICKET_MASTER_LEN) != 1) {
		log_msg(LOG_ERROR, "no randomness for session ticket keys");
		return -EIO;
	}
	/* Build a TLS context here first, so that a bad certificate is one
	 * error line, not one per worker. */
	if (cfg->nlisten > 0) {
		struct tls_server *probe;
		char err[512];
		if (tls_server_new(&probe, &srv->tls, err, sizeof(err)) < 0) {
			build_error(cur, "%s", err);
			return -EINVAL;
		}
		tls_server_put(probe);
	}
	return 0;
}

static void server_release(struct server *srv)
{
	for (size_t i = 0; i < srv->nsites; i++)
		site_release(&srv->sites[i]);
	free(srv->sites);
	srv->sites = NULL;
	srv->nsites = 0;
	vhost_free(&srv->names);
	mime_table_free(srv->mime);
	srv->mime = NULL;
	OPENSSL_cleanse(srv->tls.file_keys, sizeof(srv->tls.file_keys));
}

/* A snapshot made by SIGHUP; kept until exit because connections of any
 * age may still point at it. Reloads are rare; each costs a few KiB. */
struct snapshot {
	struct snapshot *older;
	struct config cfg;
	struct server srv;
};

/* Loads the configuration for a reload. Why it does not load goes to the
 * error log (config_load tells a terminal, at start), one line per
 * problem. */
static int load_config(struct config *cfg, int argc, char **argv)
{
	char *text = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&text, &len);
	int rc = config_load(cfg, argc, argv, stdout, err ? err : stderr);

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

/* SIGHUP: loads the configuration again and hands it to the n workers, or
 * refuses it as a whole with one error line and keeps the running one (a
 * configuration that does not load, a certificate that does not). What is
 * set up once at start (listeners, workers, user, pid file, logs) keeps its
 * running value, one warning line each, and the rest applies: a renewed
 * certificate must not wait for a restart because a listener changed. */
static struct snapshot *reload(int argc, char **argv, const struct server *cur,
			       struct worker *workers, unsigned n)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* After --user the files may be root-only (a 0600 key): read them
	 * with the one capability kept for this (privs.h). */
	privs_read_begin();
	if (load_config(&s->cfg, argc, argv) < 0)
		goto fail;
	listen_fds_keep(&s->cfg, cur->cfg);
	size_t kept = config_keep_fixed(cur->cfg, &s->cfg, say_kept, NULL);
	if (server_build(&s->srv, &s->cfg, cur) < 0)
		goto fail;
	privs_read_end();
	for (unsigned i = 0; i < n; i++)
		worker_request_reload(&workers[i], &s->srv);
	if (kept)
		log_msg(LOG_INFO, "SIGHUP: configuration and certificates reloaded, but for the %zu "
				  "setting%s above",
			kept, kept > 1 ? "s" : "");
	else
		log_msg(LOG_INFO, "SIGHUP: configuration and certificates reloaded");
	log_set_level(s->cfg.log_level);
	return s;
fail:
	privs_read_end();
	server_release(&s->srv);
	config_free(&s->cfg);
	free(s);
	return NULL;
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

/* --test-config, and --check given a root: loads what a start loads (the
 * root, the kernel TLS policy, the certificates and keys, --user, the log
 * files) without binding a listener or starting a worker. Prints the first
 * problem as one line and returns the exit code a start would end with, or
 * prints "configuration ok" and returns 0. */
static int test_config(const struct config *cfg)
{
	struct server srv;
	int rc, fd;

	/* Only what stops a start is worth a line here. */
	log_set_level(LOG_WARN);
	/* server_build reads every certificate and key and builds a TLS
	 * context from them, as a start does. */
	rc = server_build(&srv, cfg, NULL);
	if (rc < 0) {
		rc = rc == -EINVAL ? 2 : 1;
		goto out;
	}
	if (cfg->user && !getpwnam(cfg->user)) {
		log_msg(LOG_ERROR, "--user %s: no such user", cfg->user);
		rc = 1;
		goto out;
	}
	/* The logs are opened (and created) as a start would open them:
	 * --error-log's stderr is NULL here; the access log's stdout and
	 * stderr are taken as they are. */
	if (cfg->error_log) {
		fd = open(cfg->error_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0) {
			log_msg(LOG_ERROR, "--error-log %s: %s", cfg->error_log, strerror(errno));
			rc = 2; /* as main() ends */
			goto out;
		}
		close(fd);
	}
	struct access_log_file alog;
	int arc = access_log_file_open(&alog, cfg->access_log);
	if (arc < 0) {
		log_msg(LOG_ERROR, "--access-log %s: %s", cfg->access_log, strerror(-arc));
		rc = 1; /* as main() ends */
		goto out;
	}
	access_log_file_close(&alog);
	char what[PATH_MAX + 64];
	printf("ktlsd: configuration ok (root %s; listeners: %zu HTTPS, %zu plain HTTP; "
	       "certificates: %zu)\n",
	       serving_text(&srv, what, sizeof(what)), cfg->nlisten, cfg->nlisten_plain,
	       srv.sites[0].ncerts);
out:
	server_release(&srv);
	return rc;
}

/* Signals an operator may send by habit, meant for other servers (nginx's
 * SIGUSR2 and SIGWINCH) or for nothing, that would end the process by
 * default: each is logged and ignored. */
static const int ignored_signals[] = {SIGUSR2, SIGWINCH, SIGALRM, SIGIO,
				      SIGPWR,  SIGVTALRM, SIGPROF, SIGSTKFLT};

/* SIGUSR1 (and SIGHUP): logrotate renamed the logs; open them again. A log
 * that cannot be reopened stays on its old file. */
static void reopen_logs(struct access_log_file *access_log, int sig)
{
	int rc_err = log_reopen(), rc_acc = access_log_file_reopen(access_log);

	if (rc_err < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the error log: %s; it stays on the old file",
			sigabbrev_np(sig), strerror(-rc_err));
	if (rc_acc < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the access log: %s; it stays on the old file",
			sigabbrev_np(sig), strerror(-rc_acc));
	if (sig == SIGUSR1 && rc_err == 0 && rc_acc == 0)
		log_msg(LOG_INFO, "SIGUSR1: logs reopened");
}

/* Signals are taken by the main thread alone, with sigwait; the workers,
 * started later, inherit the mask and never see them. Blocked from the
 * first instruction on: a SIGUSR1 during start-up waits for sigwait
 * instead of killing the process. A closed client must not kill us with
 * SIGPIPE, nor a log over RLIMIT_FSIZE with SIGXFSZ (the write fails
 * instead). */
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
static _Noreturn void quit_now(struct worker *workers, unsigned n, const char *pid_file,
                               struct config *cfg, int sig)
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
	if (pid_file)
		unlink(pid_file);
	listen_unix_close(cfg);
	_exit(0);
}

static int write_pid_file(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%ld\n", (long)getpid());
	return fclose(f) == 0 ? 0 : -errno;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct server srv;
	struct access_log_file access_log = {.fd = -1};
	struct snapshot *snapshots = NULL;
	const struct server *current = &srv;
	struct worker *workers;
	struct notify notify;
	struct status_listen status = {.fd = -1, .stop_fd = -1};
	sigset_t sigs;
	int sig, rc;
	unsigned n;

	take_signals(&sigs);
	switch (config_load(&cfg, argc, argv, stdout, stderr)) {
	case CONFIG_RUN:
		break;
	case CONFIG_EXIT_OK:
		config_free(&cfg);
		return 0;
	default:
		config_free(&cfg);
		return 2;
	}
	if (cfg.check || cfg.test_config) {
		rc = cfg.check ? check_report(&cfg, stdout) : 0;
		if (rc == 0 && (cfg.site.root || cfg.nsites))
			rc = test_config(&cfg);
		config_free(&cfg);
		return rc;
	}
	if (log_open(cfg.error_log, cfg.log_level) < 0) {
		fprintf(stderr, "ktlsd: --error-log %s: %s\n", cfg.error_log, strerror(errno));
		config_free(&cfg);
		return 2;
	}
	notify_open(&notify);
	if (listen_fds_take(&cfg) < 0 || listen_unix_open(&cfg) < 0) {
		config_free(&cfg);
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
	rc = server_build(&srv, &cfg, NULL);
	if (rc < 0) {
		/* A configuration that cannot work is a usage error (2); a
		 * machine that cannot run it is an operational one (1). */
		int code = rc == -EINVAL ? 2 : 1;
		listen_unix_close(&cfg);
		server_release(&srv);
		config_free(&cfg);
		return code;
	}
	rc = access_log_file_open(&access_log, cfg.access_log);
	if (rc < 0) {
		log_msg(LOG_ERROR, "--access-log %s: %s", cfg.access_log, strerror(-rc));
		listen_unix_close(&cfg);
		server_release(&srv);
		config_free(&cfg);
		return 1;
	}
	srv.access_log = &access_log;

	n = workers_wanted(&cfg);
	size_t wsize = (sizeof(*workers) + 63) / 64 * 64;
	workers = aligned_alloc(64, wsize * n);
	if (!workers)
		return 1;
	memset(workers, 0, wsize * n);
	/* --limit-conn counts a client's connections across the workers: one
	 * table for all of them, room for as many addresses as they may hold
	 * connections (pages no address reaches are never touched). Made
	 * whatever the limit, since a reload may set one. */
	struct addr_limit *conn_limits = addr_limit_new((size_t)n * cfg.max_connections);
	if (!conn_limits) {
		free(workers);
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		workers[i].conn_limits = conn_limits;
	unsigned prepared = 0, started = 0;
	bool pid_written = false;
	for (; prepared < n; prepared++)
		if (worker_prepare(&workers[prepared], prepared, &srv) < 0)
			goto fail;
	if (cfg.nstatus_listen && status_listen_open(&status, &cfg.status_listen) < 0)
		goto fail;
	if (cfg.pid_file) {
		rc = write_pid_file(cfg.pid_file);
		if (rc < 0)
			log_msg(LOG_WARN, "pid-file %s: %s", cfg.pid_file, strerror(-rc));
		pid_written = rc == 0;
	}
	if (cfg.user && privs_drop(cfg.user) < 0)
		goto fail;
	for (; started < n; started++) {
		rc = worker_start(&workers[started]);
		if (rc < 0) {
			log_msg(LOG_ERROR, "worker %u: io_uring: %s", started, strerror(-rc));
			goto fail;
		}
	}
	{
		char feats[256], what[PATH_MAX + 64];
		ring_features_describe(&workers[0].feat, feats, sizeof(feats));
		log_msg(LOG_INFO, "ktlsd %s serving %s with %u workers; kTLS %s; %s", PACKAGE_VERSION,
			serving_text(&srv, what, sizeof(what)), n, srv.use_ktls ? "on" : "off",
			feats);
	}
	if (status.fd >= 0) {
		rc = status_listen_start(&status, workers, n, srv.use_ktls);
		if (rc < 0) {
			log_msg(LOG_ERROR, "status-listen: %s", strerror(-rc));
			goto fail;
		}
		log_msg(LOG_INFO, "metrics on http://%s/metrics and /status",
			cfg.status_listen.text);
	}
	{
		char what[PATH_MAX + 64];
		notify_send(&notify, "READY=1\nSTATUS=serving %s with %u workers",
			    serving_text(&srv, what, sizeof(what)), n);
	}

	uint64_t drain_until = 0; /* SIGTERM with --drain-delay: stop then */
	for (bool stopping = false; !stopping || !all_finished(workers, n);) {
		/* While the workers drain, look at them ten times a second;
		 * while the node drains (--drain-delay), wait for its end. */
		struct timespec wait = {0, 100 * 1000 * 1000};
		uint64_t now = monotonic_ms();
		if (drain_until && !stopping && now < drain_until)
			wait = (struct timespec){(time_t)((drain_until - now) / 1000),
						 (long)((drain_until - now) % 1000) * 1000000};
		if (stopping || drain_until)
			sig = sigtimedwait(&sigs, NULL, &wait);
		else if (sigwait(&sigs, &sig) != 0)
			sig = -1;
		if (drain_until && !stopping && sig == -1 && monotonic_ms() >= drain_until)
			sig = SIGTERM; /* the drain is over: stop now (a second SIGTERM cuts it short) */
		switch (sig) {
		case -1:
			break;
		case SIGINT:
		case SIGQUIT:
			quit_now(workers, n, pid_written ? cfg.pid_file : NULL, &cfg, sig);
		case SIGTERM:
			if (stopping)
				break;
			if (!drain_until) {
				status_listen_drain(&status);
				notify_send(&notify, "STOPPING=1\nSTATUS=finishing responses in flight");
				if (current->cfg->drain_delay_ms) {
					/* A load balancer's health check sees 503
					 * and drains this node while it serves. */
					log_msg(LOG_INFO, "SIGTERM: /healthz answers 503; serving %u ms "
							  "more before the listeners close",
						current->cfg->drain_delay_ms);
					drain_until = monotonic_ms() + current->cfg->drain_delay_ms;
					break;
				}
			}
			log_msg(LOG_INFO, "SIGTERM: finishing responses in flight (grace %u ms)",
				current->cfg->shutdown_grace_ms);
			for (unsigned i = 0; i < n; i++)
				worker_request_stop(&workers[i]);
			stopping = true;
			break;
		case SIGUSR1:
			reopen_logs(&access_log, sig);
			break;
		case SIGHUP: {
			reopen_logs(&access_log, sig);
			if (stopping) {
				log_msg(LOG_INFO, "SIGHUP: stopping; the configuration is not reloaded");
				break;
			}
			notify_reloading(&notify);
			struct snapshot *s = reload(argc, argv, current, workers, n);
			if (s) {
				s->older = snapshots;
				snapshots = s;
				current = &s->srv;
			}
			char what[PATH_MAX + 64];
			notify_send(&notify, "READY=1\nSTATUS=serving %s with %u workers; %s",
				    serving_text(current, what, sizeof(what)), n,
				    s ? "configuration reloaded" : "reload refused (see the log)");
			break;
		}
		default:
			log_msg(LOG_WARN, "SIG%s ignored (SIGHUP reloads, SIGUSR1 reopens the logs, "
					  "SIGTERM stops)",
				sigabbrev_np(sig));
			break;
		}
	}
	for (unsigned i = 0; i < n; i++)
		worker_join(&workers[i]);
	/* Up until now, so that a scrape during the grace period works. */
	status_listen_stop(&status);
	if (pid_written)
		unlink(cfg.pid_file);
	listen_unix_close(&cfg);
	access_log_file_close(&access_log);
	free(workers);
	addr_limit_free(conn_limits); /* no worker runs any more */
	while (snapshots) {
		struct snapshot *s = snapshots;
		snapshots = s->older;
		server_release(&s->srv);
		config_free(&s->cfg);
		free(s);
	}
	server_release(&srv);
	config_free(&cfg);
	notify_close(&notify);
	return 0;

fail:
	/* Start-up failed: undo what was done, so that nothing leaks. */
	status_listen_stop(&status);
	if (pid_written)
		unlink(cfg.pid_file);
	for (unsigned i = 0; i < started; i++)
		worker_request_stop(&workers[i]);
	for (unsigned i = 0; i < n && i <= prepared; i++) {
		if (i < started)
			worker_join(&workers[i]);
		else
			worker_unprepare(&workers[i]);
	}
	free(workers);
	addr_limit_free(conn_limits);
	listen_unix_close(&cfg);
	access_log_file_close(&access_log);
	server_release(&srv);
	config_free(&cfg);
	notify_close(&notify);
	return 1;
}
