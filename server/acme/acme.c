/* The ACME client's thread: when each --acme on site is due, and what an
 * order's outcome does to it (acme.h says the rules; acme_order.c speaks
 * to the CA, acme_store.c keeps the files). */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ktls/acme_crypto.h"
#include "proto/acme.h"
#include "server/acme/acme.h"
#include "server/acme/acme_order.h"
#include "server/acme/acme_store.h"
#include "server/conf/config.h"
#include "server/conf/file_read.h"
#include "server/core/cert_status.h"
#include "server/core/log.h"
#include "server/core/stats.h"

/* The longest the thread sleeps before it looks again: a clock that
 * jumped, or a suspend, is noticed within this. */
#define WAKE_MAX_S 3600

struct acme_site {
	char dir_name[256];                  /* [site NAME], "_top" for the top level */
	unsigned slot;                       /* its metrics' (stats_site_slot) */
	char names[CONFIG_MAX_SERVER_NAMES][256];
	size_t nnames;
	/* The schedule. */
	time_t due;                          /* next attempt or look; 0 now */
	time_t renew_at;                     /* the lifetime rule's, or ARI's */
	/* ARI (RFC 9773): the stored certificate's identifier ("" when it has
	 * none or the CA offers no renewalInfo), the next look at its window,
	 * and the last window seen (logged when it moves). */
	char ari_id[128];
	time_t ari_at, ari_start, ari_end;
	time_t not_after;                    /* of the stored certificate; 0 none */
	time_t lifetime;
	unsigned failures;
	bool held;                           /* needs the operator: until a SIGHUP */
};

struct acme_settings {
	char ca[1024], ca_cert[PATH_MAX], dir[PATH_MAX], email[320], eab_kid[256],
	    eab_file[PATH_MAX], profile[ACME_PROFILE_MAX + 1];
	bool terms_agreed;
	enum acme_chal_type challenge;
	struct acme_site sites[CONFIG_MAX_SITES + 1];
	size_t nsites;
};

struct acme_client {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	volatile bool stop;
	bool changed;                        /* pending holds a SIGHUP's settings */
	struct acme_settings pending;
	pthread_t notify;
	int sig;
	/* The thread's own. */
	struct acme_settings set;
	struct acme_session sess;
	int dfd;
};

bool acme_wanted(const struct config *cfg)
{
	const struct config_site *sites[CONFIG_MAX_SITES + 1];
	size_t n = config_served_sites(cfg, sites);

	for (size_t i = 0; i < n; i++)
		if (sites[i]->acme)
			return true;
	return false;
}

static void settings_of(struct acme_settings *s, const struct config *cfg)
{
	const struct config_site *sites[CONFIG_MAX_SITES + 1];
	size_t n = config_served_sites(cfg, sites);

	memset(s, 0, sizeof(*s));
	snprintf(s->ca, sizeof(s->ca), "%s", cfg->acme_ca);
	snprintf(s->ca_cert, sizeof(s->ca_cert), "%s", cfg->acme_ca_cert ? cfg->acme_ca_cert : "");
	snprintf(s->dir, sizeof(s->dir), "%s", cfg->acme_dir);
	snprintf(s->email, sizeof(s->email), "%s", cfg->acme_email ? cfg->acme_email : "");
	snprintf(s->profile, sizeof(s->profile), "%s", cfg->acme_profile ? cfg->acme_profile : "");
	if (cfg->acme_eab) {
		const char *sp = strchr(cfg->acme_eab, ' ');
		snprintf(s->eab_kid, sizeof(s->eab_kid), "%.*s", (int)(sp - cfg->acme_eab),
			 cfg->acme_eab);
		snprintf(s->eab_file, sizeof(s->eab_file), "%s", sp + 1);
	}
	s->terms_agreed = cfg->acme_terms_agreed;
	s->challenge = cfg->acme_challenge == CONFIG_ACME_HTTP01 ? ACME_CHAL_HTTP01
		       : cfg->acme_challenge == CONFIG_ACME_TLSALPN01 ? ACME_CHAL_TLSALPN01
		       : cfg->nlisten_plain > 0			      ? ACME_CHAL_HTTP01
								      : ACME_CHAL_TLSALPN01;
	for (size_t i = 0; i < n; i++) {
		const char *names[CONFIG_MAX_SERVER_NAMES];
		struct acme_site *site = &s->sites[s->nsites];

		if (!sites[i]->acme)
			continue;
		snprintf(site->dir_name, sizeof(site->dir_name), "%s",
			 sites[i]->name ? sites[i]->name : "_top");
		site->slot = stats_site_slot(sites[i]->name);
		site->nnames = config_acme_names(sites[i], names);
		for (size_t j = 0; j < site->nnames; j++)
			snprintf(site->names[j], sizeof(site->names[j]), "%s", names[j]);
		s->nsites++;
	}
}

/* The site's names as the crypto and order calls take them. */
static size_t names_of(const struct acme_site *site, const char **out)
{
	for (size_t i = 0; i < site->nnames; i++)
		out[i] = site->names[i];
	return site->nnames;
}

/* A number in [-1, 1] that a certificate keeps: its serial (or its ARI
 * identifier, which holds the serial) hashed, so that a restart picks the
 * same renewal time (no state needed for it). */
static double jitter_of(const char *id)
{
	unsigned h = 2166136261u;
	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (double)(h % 20001) / 10000.0 - 1.0;
}

static double random_unit(void)
{
	unsigned v = 0;
	if (RAND_bytes((unsigned char *)&v, sizeof(v)) != 1)
		v = (unsigned)time(NULL);
	return (double)(v % 20001) / 10000.0 - 1.0;
}

/* The CA that issued the stored certificate, from state.json ("" none). */
static void stored_ca(int dfd, const struct acme_site *site, char *out, size_t len)
{
	char rel[300], *text = NULL;
	size_t n;

	out[0] = '\0';
	snprintf(rel, sizeof(rel), "sites/%s/state.json", site->dir_name);
	if (acme_store_read(dfd, rel, &text, &n) < 0)
		return;
	json_t *root = json_loadb(text, n, 0, NULL);
	const char *dir = json_string_value(json_object_get(root, "directory"));
	if (dir)
		snprintf(out, len, "%s", dir);
	json_decref(root);
	free(text);
}

/* When the site is due, from what is stored: now when there is no
 * certificate that covers its names from this CA, else the lifetime rule
 * until the CA's renewal window is known (ari_look, at once). */
static void evaluate(struct acme_client *a, struct acme_site *site)
{
	const char *names[CONFIG_MAX_SERVER_NAMES];
	size_t n = names_of(site, names);
	char rel[300], why[256], ca[1024], *pem = NULL;
	size_t len;
	struct acme_cert_info info;
	time_t now = time(NULL);

	site->due = site->renew_at = now;
	site->not_after = 0;
	site->ari_id[0] = '\0';
	site->ari_at = (time_t)LONG_MAX;
	snprintf(rel, sizeof(rel), "sites/%s/bundle.pem", site->dir_name);
	int rc = acme_store_read(a->dfd, rel, &pem, &len);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_msg(LOG_WARN, "acme: site %s: %s/%s: %s; ordering a new certificate",
				site->dir_name, a->set.dir, rel, file_read_error(rc));
		return;
	}
	rc = acme_cert_check(pem, len, NULL, names, n, &info, why, sizeof(why));
	explicit_bzero(pem, len);
	free(pem);
	if (rc < 0) {
		log_msg(LOG_INFO, "acme: site %s: the stored certificate will be replaced: %s",
			site->dir_name, why);
		return;
	}
	site->not_after = info.not_after;
	site->lifetime = info.not_after - info.not_before;
	stored_ca(a->dfd, site, ca, sizeof(ca));
	if (strcmp(ca, a->set.ca) != 0) {
		log_msg(LOG_INFO, "acme: site %s: the stored certificate is from %s, not --acme-ca "
				  "%s: ordering one from it (the old one is served until then)",
			site->dir_name, ca[0] ? ca : "an unknown CA", a->set.ca);
		return;
	}
	site->renew_at = acme_renew_at(info.not_before, info.not_after, jitter_of(info.serial));
	site->due = site->renew_at;
	if (info.ari_id[0]) {
		snprintf(site->ari_id, sizeof(site->ari_id), "%s", info.ari_id);
		site->ari_at = site->due = now;
	}
}

/* From when the stored certificate is in danger: under a fifth of its life
 * left. Renewal never waits past it; a failure after it is an error. */
static time_t danger_from(const struct acme_site *site)
{
	return site->not_after - site->lifetime / 5;
}

/* Whether an order may name the certificate it replaces: the stored one
 * has an ARI identifier and this CA's directory has renewalInfo. */
static bool ari_offered(const struct acme_client *a, const struct acme_site *site)
{
	return site->ari_id[0] && a->sess.dir.renewal_info[0];
}

/* What the metrics show of the site after a look or an attempt. */
static void publish(const struct acme_site *site, const char *error)
{
	bool failing = site->failures > 0;
	time_t far = (time_t)LONG_MAX;

	cert_status_acme(site->slot, failing || site->due == far ? 0 : site->renew_at,
			 failing && site->due != far ? site->due : 0, site->failures, error);
}

static void when_text(time_t t, char *buf, size_t len)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The account key for this CA, found or made: accounts/CA-ID/account.key,
 * CA-ID the first 16 hex digits of SHA-256(directory URL), so that a
 * staging and a production CA never share an account. */
static int load_account(struct acme_client *a, char *err, size_t errlen)
{
	unsigned char md[32];
	char rel[128], id[17], *pem = NULL;
	size_t len;

	EVP_Digest(a->set.ca, strlen(a->set.ca), md, NULL, EVP_sha256(), NULL);
	for (int i = 0; i < 8; i++)
		snprintf(id + 2 * i, 3, "%02x", md[i]);
	snprintf(rel, sizeof(rel), "accounts/%s/account.key", id);
	int rc = acme_store_read(a->dfd, rel, &pem, &len);
	if (rc == 0) {
		a->sess.account = acme_key_from_pem(pem, len);
		explicit_bzero(pem, len);
		free(pem);
		if (!a->sess.account) {
			snprintf(err, errlen, "%s/%s: not a key", a->set.dir, rel);
			return -1;
		}
	} else if (rc == -ENOENT) {
		a->sess.account = acme_key_new();
		char dir[64];
		snprintf(dir, sizeof(dir), "accounts/%s", id);
		if (!a->sess.account || acme_key_to_pem(a->sess.account, &pem, &len) < 0) {
			snprintf(err, errlen, "no account key could be made");
			return -1;
		}
		rc = acme_store_mkdirs(a->dfd, dir);
		if (rc == 0)
			rc = acme_store_write(a->dfd, rel, pem, len, 0600);
		explicit_bzero(pem, len);
		free(pem);
		if (rc < 0) {
			snprintf(err, errlen, "%s/%s: %s", a->set.dir, rel, strerror(-rc));
			EVP_PKEY_free(a->sess.account);
			a->sess.account = NULL;
			return -1;
		}
	} else {
		snprintf(err, errlen, "%s/%s: %s", a->set.dir, rel, file_read_error(rc));
		return -1;
	}
	if (acme_jwk(a->sess.account, a->sess.jwk, sizeof(a->sess.jwk)) < 0 ||
	    acme_thumbprint(a->sess.account, a->sess.thumbprint, sizeof(a->sess.thumbprint)) < 0) {
		snprintf(err, errlen, "the account key is not a P-256 key");
		EVP_PKEY_free(a->sess.account);
		a->sess.account = NULL;
		return -1;
	}
	return 0;
}

/* The external account binding's MAC key, from its file (base64url). */
static int load_eab(struct acme_client *a, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = file_read_whole(a->set.eab_file, &text, &len);

	if (rc < 0) {
		snprintf(err, errlen, "--acme-eab %s: %s", a->set.eab_file, file_read_error(rc));
		return -1;
	}
	while (len && strchr(" \t\r\n", text[len - 1]))
		len--;
	int n = acme_b64url_decode(text, len, a->sess.eab_key, sizeof(a->sess.eab_key));
	explicit_bzero(text, len);
	free(text);
	if (n <= 0) {
		snprintf(err, errlen, "--acme-eab %s: not a base64url key", a->set.eab_file);
		return -1;
	}
	a->sess.eab_len = (size_t)n;
	a->sess.eab_kid = a->set.eab_kid;
	return 0;
}

static int session_http(struct acme_client *a, char *err, size_t errlen)
{
	if (!a->sess.http)
		a->sess.http = acme_http_new(a->set.ca, a->set.ca_cert[0] ? a->set.ca_cert : NULL, err,
					     errlen);
	return a->sess.http ? 0 : -1;
}

/* What a session needs before its first order. */
static int session_ready(struct acme_client *a, char *err, size_t errlen)
{
	if (session_http(a, err, errlen) < 0)
		return -1;
	if (!a->sess.account && load_account(a, err, errlen) < 0)
		return -1;
	if (a->set.eab_kid[0] && !a->sess.eab_len && load_eab(a, err, errlen) < 0)
		return -1;
	return acme_session_account(&a->sess, err, errlen);
}

static void session_end(struct acme_client *a)
{
	acme_http_free(a->sess.http);
	EVP_PKEY_free(a->sess.account);
	explicit_bzero(a->sess.eab_key, sizeof(a->sess.eab_key));
	memset(&a->sess, 0, sizeof(a->sess));
	a->sess.stop = &a->stop;
	a->sess.directory = a->set.ca;
	a->sess.email = a->set.email[0] ? a->set.email : NULL;
	a->sess.terms_agreed = a->set.terms_agreed;
	a->sess.profile = a->set.profile[0] ? a->set.profile : NULL;
}

/* The issued bundle stored, then served: bundle.pem (the pair), cert.pem
 * (the chain alone, for other programs), state.json. */
static int store(struct acme_client *a, struct acme_site *site, const char *bundle, size_t blen,
		 const struct acme_cert_info *info, char *err, size_t errlen)
{
	char rel[300], nb[32], na[32];
	int rc;

	snprintf(rel, sizeof(rel), "sites/%s", site->dir_name);
	rc = acme_store_mkdirs(a->dfd, rel);
	snprintf(rel, sizeof(rel), "sites/%s/bundle.pem", site->dir_name);
	if (rc == 0)
		rc = acme_store_write(a->dfd, rel, bundle, blen, 0600);
	const char *chain = strstr(bundle, "-----BEGIN CERTIFICATE-----");
	snprintf(rel, sizeof(rel), "sites/%s/cert.pem", site->dir_name);
	if (rc == 0 && chain)
		rc = acme_store_write(a->dfd, rel, chain, blen - (size_t)(chain - bundle), 0644);
	when_text(info->not_before, nb, sizeof(nb));
	when_text(info->not_after, na, sizeof(na));
	json_t *names = json_array();
	for (size_t i = 0; i < site->nnames; i++)
		json_array_append_new(names, json_string(site->names[i]));
	json_t *state = json_pack("{s:s, s:o, s:s, s:s, s:s}", "directory", a->set.ca, "names",
				  names, "serial", info->serial, "not_before", nb, "not_after", na);
	char *text = state ? json_dumps(state, JSON_INDENT(1)) : NULL;
	json_decref(state);
	snprintf(rel, sizeof(rel), "sites/%s/state.json", site->dir_name);
	if (rc == 0)
		rc = text ? acme_store_write(a->dfd, rel, text, strlen(text), 0600) : -ENOMEM;
	free(text);
	if (rc < 0)
		snprintf(err, errlen, "%s/%s: %s", a->set.dir, rel, strerror(-rc));
	return rc;
}

/* A failure: when to try again, and how loudly to say so. */
static void failed(struct acme_client *a, struct acme_site *site, const char *why)
{
	time_t now = time(NULL);
	char next[32];
	long wait;

	site->failures++;
	cert_status_order(false);
	if (a->sess.needs_operator) {
		site->held = true;
		site->due = (time_t)LONG_MAX;
		log_msg(LOG_ERROR, "acme: site %s: %s; no new attempt before a SIGHUP",
			site->dir_name, why);
		publish(site, why);
		return;
	}
	wait = acme_backoff(site->failures, random_unit(), now, site->not_after);
	if (a->sess.retry_after > wait && strstr(why, ":rateLimited"))
		wait = a->sess.retry_after;
	site->due = now + wait;
	when_text(site->due, next, sizeof(next));
	/* Loud once the certificate is in danger: none, expired, or less
	 * than a fifth of its life left. */
	bool danger = !site->not_after || now > danger_from(site);
	log_msg(danger ? LOG_ERROR : LOG_WARN,
		"acme: site %s (%s%s): order failed: %s; next attempt at %s (failure %u)",
		site->dir_name, site->names[0], site->nnames > 1 ? ", ..." : "", why, next,
		site->failures);
	publish(site, why);
	/* A session that failed may hold a stale nonce or connection view:
	 * the next attempt starts clean (the account key stays on disk). */
	if (!a->sess.have_dir || strstr(why, "connect") || strstr(why, "TLS"))
		session_end(a);
}

/* How long before the window is looked at again when the CA did not say
 * (RFC 9773 §4.3 suggests six hours), and the bounds put on what it says. */
#define ARI_LOOK_S (6 * 3600)
#define ARI_LOOK_MIN_S 60
#define ARI_LOOK_MAX_S 86400
#define ARI_RETRY_S 3600

/* RFC 9773 §4.2: where the CA has a renewal window for the stored
 * certificate, the renewal time is a point in it (the same point for the
 * same certificate: a restart or a second look does not draw again), or
 * now once the window has begun passing it. A CA without renewalInfo
 * leaves the lifetime rule's time; one that does not answer leaves it too,
 * and is asked again in an hour. True when the renewal is still ahead
 * (the schedule updated), false to order now. */
static bool ari_look(struct acme_client *a, struct acme_site *site)
{
	char err[1024] = "", ws[32], we[32], at[32];
	time_t start = 0, end = 0, now = time(NULL);
	int rc = session_http(a, err, sizeof(err));

	if (rc == 0)
		rc = acme_renewal_info(&a->sess, site->ari_id, &start, &end, err, sizeof(err));
	if (a->stop)
		return true;
	if (rc == 1) {
		site->ari_id[0] = '\0';
		site->ari_at = (time_t)LONG_MAX;
	} else if (rc < 0) {
		site->ari_at = now + ARI_RETRY_S;
		when_text(site->renew_at, at, sizeof(at));
		log_msg(LOG_WARN, "acme: site %s: renewal information: %s; the renewal time stays "
				  "%s, asking again in an hour",
			site->dir_name, err, at);
		if (!a->sess.have_dir)
			session_end(a);
	} else {
		long wait = a->sess.retry_after >= 0 ? a->sess.retry_after : ARI_LOOK_S;
		wait = wait < ARI_LOOK_MIN_S ? ARI_LOOK_MIN_S : wait > ARI_LOOK_MAX_S ? ARI_LOOK_MAX_S : wait;
		site->ari_at = now + wait;
		/* The certificate's own point in [0, 1]: its identifier holds
		 * its serial, so the same certificate draws the same time. */
		double point = (jitter_of(site->ari_id) + 1.0) / 2.0;
		site->renew_at = start + (time_t)(point * (double)(end - start));
		/* A window that ends too late for a safe renewal is the CA's
		 * error, not a reason to let the certificate run out. */
		bool late = site->renew_at > danger_from(site);
		if (late)
			site->renew_at = danger_from(site);
		if (start != site->ari_start || end != site->ari_end) {
			site->ari_start = start;
			site->ari_end = end;
			when_text(start, ws, sizeof(ws));
			when_text(end, we, sizeof(we));
			when_text(site->renew_at > now ? site->renew_at : now, at, sizeof(at));
			log_msg(late ? LOG_WARN : LOG_INFO,
				"acme: site %s: the CA's renewal window is %s to %s; renewal at %s%s",
				site->dir_name, ws, we, at,
				late ? ", before the window: it ends with under a fifth of the "
				       "certificate's life left"
				     : "");
		}
	}
	site->due = site->renew_at < site->ari_at ? site->renew_at : site->ari_at;
	if (site->renew_at <= now)
		return false;
	publish(site, NULL);
	return true;
}

static void attempt(struct acme_client *a, struct acme_site *site)
{
	const char *names[CONFIG_MAX_SERVER_NAMES];
	size_t n = names_of(site, names), blen = 0;
	char err[2 * PATH_MAX] = "", why[256], na[32];
	char *bundle = NULL;
	struct acme_cert_info info;

	if (site->failures == 0 && site->ari_id[0] && site->ari_at <= time(NULL) &&
	    ari_look(a, site))
		return;
	/* "replaces" on the first try only: a CA may refuse an order for
	 * it (replaced already, RFC 9773 §5; or another account's, after a
	 * lost account key), and a renewal must never hang on a hint. */
	int rc = session_ready(a, err, sizeof(err));
	bool replaces = site->failures == 0 && ari_offered(a, site);
	if (rc < 0 ||
	    acme_order_certificate(&a->sess, names, n, a->set.challenge,
				   replaces ? site->ari_id : NULL, &bundle, &blen, err,
				   sizeof(err)) < 0) {
		if (!a->stop)
			failed(a, site, err);
		return;
	}
	if (acme_cert_check(bundle, blen, NULL, names, n, &info, why, sizeof(why)) < 0) {
		snprintf(err, sizeof(err), "the issued certificate is not installed: %s", why);
		failed(a, site, err);
	} else if (store(a, site, bundle, blen, &info, err, sizeof(err)) < 0) {
		/* Not stored, not served: the server reads the bundle from its
		 * file only. Soon again, the order's authorizations reused. */
		failed(a, site, err);
	} else {
		bool renewed = site->not_after != 0;
		site->failures = 0;
		when_text(info.not_after, na, sizeof(na));
		evaluate(a, site);
		char at[32];
		when_text(site->renew_at, at, sizeof(at));
		log_msg(LOG_INFO, "acme: site %s (%s%s): certificate %s, serial %s, valid until %s; "
				  "renewal %s %s",
			site->dir_name, site->names[0], site->nnames > 1 ? ", ..." : "",
			renewed ? "renewed" : "issued", info.serial, na,
			ari_offered(a, site) ? "in the CA's renewal window (asked for now), else after"
					     : "after",
			at);
		cert_status_order(true);
		publish(site, NULL);
		pthread_kill(a->notify, a->sig);
	}
	if (bundle) {
		explicit_bzero(bundle, blen);
		free(bundle);
	}
}

/* A SIGHUP's settings taken over: a new CA or folder starts a new
 * session; every site is looked at again, its failures forgotten. */
static void apply(struct acme_client *a, const struct acme_settings *next)
{
	bool same_ca = strcmp(a->set.ca, next->ca) == 0 && strcmp(a->set.ca_cert, next->ca_cert) == 0 &&
		       strcmp(a->set.email, next->email) == 0 &&
		       strcmp(a->set.eab_kid, next->eab_kid) == 0 &&
		       strcmp(a->set.dir, next->dir) == 0 && a->set.terms_agreed == next->terms_agreed;

	a->set = *next;
	if (!same_ca || a->dfd < 0) {
		if (a->dfd >= 0)
			close(a->dfd);
		a->dfd = acme_store_open(a->set.dir);
		if (a->dfd < 0)
			log_msg(LOG_ERROR, "acme: --acme-dir %s: %s; no certificate is ordered",
				a->set.dir, strerror(-a->dfd));
	}
	session_end(a); /* a new account lookup; the key is read again from disk */
	for (size_t i = 0; i < a->set.nsites; i++) {
		if (a->dfd >= 0)
			evaluate(a, &a->set.sites[i]);
		else
			a->set.sites[i].due = (time_t)LONG_MAX;
		publish(&a->set.sites[i], NULL);
	}
}

static void *run(void *arg)
{
	struct acme_client *a = arg;
	struct acme_settings *next = malloc(sizeof(*next));

	pthread_setname_np(pthread_self(), "ktlsd-acme");
	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		if (a->changed && next) {
			*next = a->pending;
			a->changed = false;
			pthread_mutex_unlock(&a->mu);
			apply(a, next);
			pthread_mutex_lock(&a->mu);
			continue;
		}
		struct acme_site *due = NULL;
		for (size_t i = 0; i < a->set.nsites; i++)
			if (!due || a->set.sites[i].due < due->due)
				due = &a->set.sites[i];
		time_t now = time(NULL);
		if (due && due->due <= now) {
			pthread_mutex_unlock(&a->mu);
			attempt(a, due);
			pthread_mutex_lock(&a->mu);
			continue;
		}
		time_t until = now + WAKE_MAX_S;
		if (due && due->due < until)
			until = due->due;
		struct timespec ts = {.tv_sec = until};
		pthread_cond_timedwait(&a->cv, &a->mu, &ts);
	}
	pthread_mutex_unlock(&a->mu);
	free(next);
	return NULL;
}

int acme_start(struct acme_client **out, const struct config *cfg, pthread_t notify, int sig)
{
	struct acme_client *a = calloc(1, sizeof(*a));
	int rc;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL); /* CLOCK_REALTIME: renewal times are wall-clock */
	a->notify = notify;
	a->sig = sig;
	a->dfd = -1;
	settings_of(&a->pending, cfg);
	a->changed = true;
	rc = -pthread_create(&a->thread, NULL, run, a);
	if (rc < 0) {
		log_msg(LOG_ERROR, "acme: the client's thread: %s", strerror(-rc));
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void acme_reconfigure(struct acme_client *a, const struct config *cfg)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	settings_of(&a->pending, cfg);
	a->changed = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void acme_stop(struct acme_client *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	session_end(a);
	if (a->dfd >= 0)
		close(a->dfd);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}
