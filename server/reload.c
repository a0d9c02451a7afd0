/* SIGHUP: the configuration loaded and built again, from the files the
 * privileged helper read (with --user) or from disk, and handed to the
 * workers; or refused as a whole, with the running one kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/conf/conf_files.h"
#include "server/conf/config.h"
#include "server/listen_fds.h"
#include "server/core/log.h"
#include "server/privsep.h"
#include "server/run.h"
#include "server/conf/server.h"
#include "server/worker.h"

#define KEEPING "; keeping the running configuration"

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
const struct server *reload_configuration(struct run *r, const struct server *cur,
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

/* The ACME client stored a new certificate (SIGRTMIN+1): the running
 * configuration built again with its files read again, the configuration
 * file untouched, so that a renewal neither waits for an operator's SIGHUP
 * nor applies what they are half-way through editing. Under --user the
 * helper reads the files (the configuration on disk names; the running
 * one's are among them unless an edit removed one, and then the build
 * says which and the certificate waits for the SIGHUP that edit needs). */
const struct server *reload_certificates(struct run *r, const struct server *cur,
					  struct worker *workers, unsigned n)
{
	struct conf_files received, *cf = NULL;
	struct server *next = NULL;

	if (r->helper.fd >= 0) {
		int rc = privsep_reload(&r->helper, &received);
		if (rc < 0) {
			log_msg(LOG_ERROR, "acme: certificate reload: the privileged helper did not "
					   "send the files (%s); new connections keep the old "
					   "certificate",
				strerror(-rc));
			return NULL;
		}
		cf = &received;
	}
	if (server_new_certs(&next, cur, cf) < 0)
		next = NULL;
	if (cf)
		conf_files_free(cf);
	if (!next)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		worker_request_reload(&workers[i], next);
	log_msg(LOG_INFO, "acme: certificates reloaded; new connections use them, those in "
			  "flight finish with theirs");
	return next;
}
