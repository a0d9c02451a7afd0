/* Process start: configuration, the shared read-only server state, one
 * worker per core, and signals. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "server/check.h"
#include "server/config.h"
#include "server/log.h"
#include "server/worker.h"

static void fill_tls_settings(struct server *srv)
{
	const struct config *cfg = srv->cfg;
	struct tls_settings *t = &srv->tls;

	for (size_t i = 0; i < cfg->ncerts; i++) {
		srv->certs[i].cert_file = cfg->certs[i].cert_file;
		srv->certs[i].key_file = cfg->certs[i].key_file;
	}
	t->certs = srv->certs;
	t->ncerts = cfg->ncerts;
	t->protocols = cfg->tls_protocols;
	t->tls13_ciphersuites = cfg->tls13_ciphersuites;
	t->tls12_ciphers = cfg->tls12_ciphers;
	t->session_tickets = cfg->tls_session_tickets;
	t->session_cache = cfg->tls_session_cache;
	t->ticket_rotate_s = cfg->tls_ticket_rotate_s;
	t->ktls = srv->use_ktls;
	t->h2 = cfg->h2;
}

/* Decides the kernel TLS policy; a refusal is a one-line reason. */
static int choose_ktls(struct server *srv)
{
	const struct config *cfg = srv->cfg;

	if (cfg->ktls == CONFIG_OFF || cfg->nlisten == 0)
		return 0;
	ktls_probe(&srv->ktls);
	if (srv->ktls.ulp && srv->ktls.openssl) {
		srv->use_ktls = true;
		return 0;
	}
	if (cfg->ktls == CONFIG_ON) {
		log_msg(LOG_ERROR, "--ktls on: %s",
			!srv->ktls.openssl ? "this OpenSSL was built without kernel TLS"
					   : "the kernel has no 'tls' TCP ULP (CONFIG_TLS off, or "
					     "tls.ko not loadable)");
		return -ENOTSUP;
	}
	log_msg(LOG_INFO, "kernel TLS unavailable (%s): TLS is done in user space",
		strerror(srv->ktls.ulp_errno));
	return 0;
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
	struct worker *workers;
	sigset_t sigs;
	int sig, rc;
	unsigned n;

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
	if (cfg.check) {
		rc = check_report(&cfg, stdout);
		config_free(&cfg);
		return rc;
	}
	if (log_open(cfg.error_log, cfg.log_level) < 0) {
		fprintf(stderr, "ktlsd: --error-log %s: %s\n", cfg.error_log, strerror(errno));
		return 2;
	}
	if (cfg.nlisten > 0 && cfg.ncerts == 0) {
		fprintf(stderr, "ktlsd: --cert/--key: a TLS listener needs at least one certificate\n");
		return 2;
	}

	memset(&srv, 0, sizeof(srv));
	srv.cfg = &cfg;
	srv.root_fd = open(cfg.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (srv.root_fd < 0) {
		fprintf(stderr, "ktlsd: --root %s: %s\n", cfg.root, strerror(errno));
		return 2;
	}
	if (mime_table_load(&srv.mime, NULL) < 0) {
		log_msg(LOG_ERROR, "out of memory loading MIME types");
		return 1;
	}
	if (choose_ktls(&srv) < 0)
		return 1;
	fill_tls_settings(&srv);
	if (RAND_bytes(srv.tls.ticket_master, sizeof(srv.tls.ticket_master)) != 1) {
		log_msg(LOG_ERROR, "no randomness for session ticket keys");
		return 1;
	}

	/* Signals are taken by this thread alone, with sigwait; the workers
	 * never see them. A closed client must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGQUIT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	n = cfg.workers;
	if (n == 0) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		n = online > 0 ? (unsigned)online : 1;
	}
	workers = aligned_alloc(64, ((sizeof(*workers) + 63) / 64 * 64) * n);
	if (!workers)
		return 1;
	memset(workers, 0, sizeof(*workers) * n);
	for (unsigned i = 0; i < n; i++) {
		rc = worker_prepare(&workers[i], i, &srv);
		if (rc < 0)
			return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		rc = worker_start(&workers[i]);
		if (rc < 0) {
			log_msg(LOG_ERROR, "worker %u: io_uring: %s", i, strerror(-rc));
			return 1;
		}
	}
	{
		char feats[256];
		ring_features_describe(&workers[0].feat, feats, sizeof(feats));
		log_msg(LOG_INFO, "ktlsd %s serving %s with %u workers; kTLS %s; %s", PACKAGE_VERSION,
			cfg.root, n, srv.use_ktls ? "on" : "off", feats);
	}
	if (cfg.pid_file && write_pid_file(cfg.pid_file) < 0)
		log_msg(LOG_WARN, "pid-file %s: %s", cfg.pid_file, strerror(errno));

	for (;;) {
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGINT || sig == SIGQUIT) {
			log_msg(LOG_INFO, "signal %d: exiting now", sig);
			_exit(0);
		}
		if (sig == SIGTERM)
			break;
		log_msg(LOG_INFO, "SIGHUP: reload is not supported yet; ignored");
	}
	log_msg(LOG_INFO, "SIGTERM: finishing responses in flight (grace %u ms)",
		cfg.shutdown_grace_ms);
	for (unsigned i = 0; i < n; i++)
		worker_request_stop(&workers[i]);
	for (unsigned i = 0; i < n; i++)
		worker_join(&workers[i]);
	if (cfg.pid_file)
		unlink(cfg.pid_file);
	free(workers);
	mime_table_free(srv.mime);
	close(srv.root_fd);
	config_free(&cfg);
	return 0;
}
