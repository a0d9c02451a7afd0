#include "server/conf/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "server/conf/conf_files.h"
#include "server/conf/file_read.h"
#include "server/conf/site_certs.h"
#include "ktls/tls_cert_facts.h"
#include "server/core/acme_chal.h"
#include "server/core/cert_status.h"
#include "server/core/log.h"

static int site_of_name(const void *arg, const char *name, size_t len)
{
	return vhost_find(arg, name, len);
}

static SSL_CTX *acme_ctx_of_name(const void *arg, const char *name, size_t len)
{
	(void)arg;
	return acme_chal_alpn(name, len);
}

/* Whether a TLS-ALPN-01 validation may come: a site gets its certificate
 * from an ACME CA, by a challenge that is not HTTP-01 only. Otherwise
 * ClientHellos are not looked at for one. */
static bool acme_alpn_wanted(const struct server *srv)
{
	if (srv->cfg->acme_challenge == CONFIG_ACME_HTTP01)
		return false;
	for (size_t i = 0; i < srv->nsites; i++)
		if (srv->sites[i].cfg->acme)
			return true;
	return false;
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
	if (acme_alpn_wanted(srv)) {
		t->acme_active = acme_chal_active;
		t->acme_ctx_of = acme_ctx_of_name;
	}
	t->protocols = cfg->tls_protocols;
	t->tls13_ciphersuites = cfg->tls13_ciphersuites;
	t->tls12_ciphers = cfg->tls12_ciphers;
	t->session_tickets = cfg->tls_session_tickets;
	t->prefer_server_ciphers = cfg->tls_prefer_server_ciphers;
	t->session_cache = cfg->tls_session_cache;
	t->ticket_rotate_s = cfg->tls_ticket_rotate_s;
	t->rekey_records = cfg->tls_rekey_records;
	/* The sealer takes its keys the way the kernel would. */
	t->ktls = srv->use_ktls || srv->seal_records;
	t->seal = srv->seal_records;
	t->h2 = cfg->h2;
}

/* How a failure of server_new is told: at start the bare reason; on
 * SIGHUP (a running server to fall back to) the same reason, saying that
 * the running configuration stays. One line either way. */
#define KEEPING "; keeping the running configuration"
/* Which reload it is (the main thread alone builds servers). */
static const char *reload_name = "SIGHUP";
#define build_error(cur, fmt, ...)                                                                 \
	log_msg(LOG_ERROR, "%s%s" fmt "%s", (cur) ? reload_name : "", (cur) ? ": " : "",         \
		__VA_ARGS__, (cur) ? KEEPING : "")

/* Decides the kernel TLS policy; a refusal is a one-line reason. What the
 * machine offers is probed once: a reload reuses the running server's
 * answer, since after start the probe could no longer load tls.ko (no
 * capability is left) and would wrongly say no. */
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

/* The MIME types' bytes (NULL: none), as a build reads them: a file that
 * is not there is no news (the built-in table serves), any other reason is
 * said once. */
static char *read_mime_types(const struct config *cfg, const struct server *cur,
			     struct conf_files *cf, size_t *len)
{
	char *text = NULL;
	int rc = cfg->mime_types ? conf_files_read(cf, cfg->mime_types, &text, len) : -ENOENT;

	if (rc < 0 && rc != -ENOENT)
		log_msg(LOG_WARN, "%s--mime-types %s: %s; the built-in types serve",
			cur ? "SIGHUP: " : "", cfg->mime_types, file_read_error(rc));
	return rc < 0 ? NULL : text;
}

/* The sites in the order workers look for them (config_served_sites). */
static int sites_build(struct server *srv, const struct server *cur, struct conf_files *cf,
		       const char *mime_text, size_t mime_len)
{
	const struct config *cfg = srv->cfg;
	const struct config_site *all[CONFIG_MAX_SITES + 1];
	size_t n = config_served_sites(cfg, all);
	char err[600];

	srv->sites = calloc(n, sizeof(*srv->sites));
	if (!srv->sites) {
		build_error(cur, "%s", "out of memory");
		return -ENOMEM;
	}
	/* Every site counts from here: server_put frees what was built, and a
	 * site not yet built holds nothing (root fd -1). */
	srv->nsites = n;
	for (size_t i = 0; i < n; i++)
		srv->sites[i].root.fd = -1;
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
		if (site->https_redirect && cfg->nlisten == 0) {
			build_error(cur, "%s%s%shttps-redirect on: no TLS listener (--listen) to send "
					 "clients to",
				    site->name ? "[site " : "", site->name ? site->name : "",
				    site->name ? "] " : "--");
			return -EINVAL;
		}
		if (site_build(&srv->sites[i], site, srv->mime, mime_text, mime_len, cf, err,
			       sizeof(err)) < 0) {
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

const char *server_serving_text(const struct server *srv, char *buf, size_t len)
{
	if (srv->nsites > 1)
		snprintf(buf, len, "%s and %zu more sites", srv->sites[0].cfg->root,
			 srv->nsites - 1);
	else
		snprintf(buf, len, "%s", srv->nsites ? srv->sites[0].cfg->root : "nothing");
	return buf;
}

static int ticket_keys_read(struct server *srv, const struct server *cur, struct conf_files *cf)
{
	const struct config *cfg = srv->cfg;
	char err[512];

	for (size_t i = 0; i < cfg->nticket_key_files; i++) {
		const char *path = cfg->ticket_key_files[i];
		char *buf;
		size_t n;
		int rc = conf_files_read(cf, path, &buf, &n);

		if (rc < 0) {
			build_error(cur, "tls-ticket-key-file %s: %s", path, file_read_error(rc));
			return -EINVAL;
		}
		rc = tls_ticket_key_parse(path, buf, n, &srv->tls.file_keys[i], err, sizeof(err));
		OPENSSL_cleanse(buf, n);
		free(buf);
		if (rc < 0) {
			build_error(cur, "%s", err);
			return -EINVAL;
		}
	}
	srv->tls.nfile_keys = cfg->nticket_key_files;
	return 0;
}

/* Builds what server_new returns; on failure server_put frees it. */
static int build(struct server *srv, const struct server *cur, struct conf_files *cf)
{
	const struct config *cfg = srv->cfg;
	size_t mime_len = 0;
	char *mime_text = read_mime_types(cfg, cur, cf, &mime_len);
	int rc = mime_table_load(&srv->mime, mime_text, mime_len);

	if (rc < 0) {
		build_error(cur, "%s", "out of memory loading MIME types");
		free(mime_text);
		return -ENOMEM;
	}
	rc = sites_build(srv, cur, cf, mime_text, mime_len);
	free(mime_text);
	if (rc < 0)
		return -EINVAL;
	if (choose_ktls(srv, cur) < 0)
		return -ENOTSUP;
	srv->seal_records = !srv->use_ktls && cfg->tls_records == CONFIG_RECORDS_KTLSD &&
			    ktls_openssl_built();
	fill_tls_settings(srv);
	if (ticket_keys_read(srv, cur, cf) < 0)
		return -EINVAL;
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
		srv->cert_errors = site_certs_check(srv->sites, srv->nsites, time(NULL),
						    cfg->test_config || cfg->check);
	}
	return 0;
}

/* The sites' certificates for the metrics (cert_status.h): the earliest
 * notAfter of each. */
static void publish_certs(const struct server *srv)
{
	cert_status_begin();
	for (size_t i = 0; i < srv->nsites; i++) {
		const struct site *s = &srv->sites[i];
		time_t first = 0, t;

		for (size_t j = 0; j < s->ncerts; j++)
			if (tls_cert_not_after(&s->certs[j], &t) == 0 && (!first || t < first))
				first = t;
		cert_status_site(s->stat_slot, first, s->cfg->acme, s->acme_placeholder);
	}
}

int server_new(struct server **out, struct config *cfg, bool owns_cfg, const struct server *cur,
	       struct conf_files *cf)
{
	struct server *srv = calloc(1, sizeof(*srv));
	int rc;

	*out = NULL;
	if (!srv) {
		build_error(cur, "%s", "out of memory");
		return -ENOMEM;
	}
	atomic_init(&srv->refs, 1);
	srv->cfg = cfg;
	/* What a start sets (main.c), a reload takes from the running one. */
	srv->access_log = cur ? cur->access_log : NULL;
	srv->h1 = cur ? cur->h1 : NULL;
	srv->h2 = cur ? cur->h2 : NULL;
	rc = build(srv, cur, cf);
	if (rc < 0) {
		server_put(srv); /* cfg not yet its own: the caller's still */
		return rc;
	}
	srv->owned_cfg = owns_cfg ? cfg : NULL;
	publish_certs(srv);
	*out = srv;
	return 0;
}

int server_new_certs(struct server **out, const struct server *cur, struct conf_files *cf)
{
	struct server *owner = (struct server *)cur;
	int rc;

	reload_name = "acme: certificate reload";
	rc = server_new(out, (struct config *)cur->cfg, false, cur, cf);
	reload_name = "SIGHUP";
	if (rc < 0 || !owner->owned_cfg)
		return rc; /* main's start configuration lives until exit */
	/* The configuration moves to the newest server, which the older one
	 * keeps alive: older keeps newer, never the reverse, so a chain of
	 * renewals frees each server with its last connection. The fields
	 * are the main thread's; workers read neither. */
	(*out)->owned_cfg = owner->owned_cfg;
	owner->owned_cfg = NULL;
	owner->cfg_keeper = server_get(*out);
	return 0;
}

const struct server *server_get(const struct server *srv)
{
	/* The count is not part of the state the pointer keeps read-only. */
	atomic_fetch_add_explicit(&((struct server *)srv)->refs, 1, memory_order_relaxed);
	return srv;
}

void server_put(const struct server *csrv)
{
	struct server *srv = (struct server *)csrv;

	if (!srv || atomic_fetch_sub_explicit(&srv->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < srv->nsites; i++)
		site_release(&srv->sites[i]);
	free(srv->sites);
	vhost_free(&srv->names);
	mime_table_free(srv->mime);
	OPENSSL_cleanse(srv->tls.file_keys, sizeof(srv->tls.file_keys));
	OPENSSL_cleanse(srv->tls.ticket_master, sizeof(srv->tls.ticket_master));
	if (srv->owned_cfg) {
		config_free(srv->owned_cfg);
		free(srv->owned_cfg);
	}
	const struct server *keeper = srv->cfg_keeper;
	free(srv);
	server_put(keeper);
}
