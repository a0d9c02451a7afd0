/* An ACME order, step by step (RFC 8555 7.4): newOrder, each
 * authorization's challenge answered and polled, finalize with a CSR for a
 * new key, the certificate downloaded. acme_order.h says the rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ktls/acme_crypto.h"
#include "ktls/tls_acme.h"
#include "server/acme/acme_order.h"
#include "server/core/acme_chal.h"
#include "server/core/log.h"

#define PAYLOAD_MAX 8192
/* A badNonce is the CA's to give at any time (RFC 8555 6.5): tried again
 * with the nonce it came with, this many times. A try costs one round
 * trip; giving up costs the order and a backoff of a minute or more, so
 * the count is generous (t_acme runs pebble refusing a fifth of them). */
#define BAD_NONCE_RETRIES 10

static bool stopped(const struct acme_session *s)
{
	return s->stop && *s->stop;
}

/* Sleeps secs, a tenth of a second at a time so a stop is seen. */
static void pause_for(const struct acme_session *s, long secs)
{
	for (long i = 0; i < secs * 10 && !stopped(s); i++)
		usleep(100 * 1000);
}

/* What a failed response says, in one line: "POST URL: 403
 * urn:...:unauthorized: detail" or the body's first bytes when it is not a
 * problem document. */
static void describe(const char *method, const char *url, const struct acme_http_resp *r,
		     struct acme_problem *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (r->body && acme_parse_problem(r->body, r->len, p) == 0 && p->type[0]) {
		snprintf(err, errlen, "%s %s: %d %s: %s", method, url, r->status, p->type,
			 p->detail);
		return;
	}
	char head[81];
	size_t n = r->len < 80 ? r->len : 80;
	for (size_t i = 0; i < n; i++)
		head[i] = r->body[i] >= 0x20 && r->body[i] < 0x7f ? r->body[i] : '.';
	head[n] = '\0';
	snprintf(err, errlen, "%s %s: %d %s, not an ACME problem (\"%s\")", method, url, r->status,
		 r->content_type[0] ? r->content_type : "without a Content-Type", head);
}

/* A request, with the bookkeeping every one needs: the nonce it brings,
 * Retry-After, the counters. 0 with *r filled (any status), or -1. */
static int request(struct acme_session *s, const char *method, const char *url, const char *body,
		   struct acme_http_resp *r, char *err, size_t errlen)
{
	char why[512];
	int rc = acme_http_do(s->http, method, url, body, body ? strlen(body) : 0,
			      ACME_REQUEST_TIMEOUT_MS, s->stop, r, why, sizeof(why));

	if (rc < 0) {
		s->requests_failed++;
		snprintf(err, errlen, "%s %s: %s", method, url, why);
		return -1;
	}
	if (r->nonce[0])
		snprintf(s->nonce, sizeof(s->nonce), "%s", r->nonce);
	s->retry_after = r->retry_after[0] ? acme_retry_after(r->retry_after, time(NULL)) : -1;
	if (r->status >= 400)
		s->requests_failed++;
	else
		s->requests_ok++;
	return 0;
}

static int fresh_nonce(struct acme_session *s, char *err, size_t errlen)
{
	struct acme_http_resp r = {0};
	int rc = request(s, "HEAD", s->dir.new_nonce, NULL, &r, err, errlen);

	if (rc == 0 && !r.nonce[0]) {
		snprintf(err, errlen, "HEAD %s: %d without a Replay-Nonce", s->dir.new_nonce,
			 r.status);
		rc = -1;
	}
	acme_http_resp_free(&r);
	return rc;
}

/* A signed POST (payload "" is POST-as-GET): 0 with a 2xx response in *r,
 * or -1 with the reason (and the CA's problem in *p when it sent one). */
static int post(struct acme_session *s, const char *url, const char *payload,
		struct acme_http_resp *r, struct acme_problem *p, char *err, size_t errlen)
{
	char protected[2048];

	memset(p, 0, sizeof(*p));
	for (int attempt = 0;; attempt++) {
		if (!s->nonce[0] && fresh_nonce(s, err, errlen) < 0)
			return -1;
		if (acme_protected(protected, sizeof(protected), s->nonce, url,
				   s->kid[0] ? s->kid : NULL, s->kid[0] ? NULL : s->jwk) < 0) {
			snprintf(err, errlen, "POST %s: the request does not fit", url);
			return -1;
		}
		s->nonce[0] = '\0'; /* used: never sent twice */
		char *jws = acme_jws_es256(s->account, protected, payload);
		if (!jws) {
			snprintf(err, errlen, "POST %s: signing failed", url);
			return -1;
		}
		memset(r, 0, sizeof(*r));
		int rc = request(s, "POST", url, jws, r, err, errlen);
		free(jws);
		if (rc < 0)
			return -1;
		if (r->status < 400)
			return 0;
		describe("POST", url, r, p, err, errlen);
		bool bad_nonce = strcmp(p->type, "urn:ietf:params:acme:error:badNonce") == 0;
		acme_http_resp_free(r);
		if (!bad_nonce || attempt == BAD_NONCE_RETRIES)
			return -1;
		log_msg(LOG_INFO, "acme: POST %s: badNonce; again with the CA's new nonce", url);
		s->bad_nonces++;
	}
}

/* An unauthenticated GET: 0 with a 200 in *r, or -1 with the reason (the
 * CA's problem when it sent one). The caller frees *r either way. */
static int get_200(struct acme_session *s, const char *url, struct acme_http_resp *r, char *err,
		   size_t errlen)
{
	struct acme_problem p;

	memset(r, 0, sizeof(*r));
	if (request(s, "GET", url, NULL, r, err, errlen) < 0)
		return -1;
	if (r->status == 200)
		return 0;
	describe("GET", url, r, &p, err, errlen);
	return -1;
}

/* The directory, once a session. */
static int directory(struct acme_session *s, char *err, size_t errlen)
{
	struct acme_http_resp r;
	char why[256];

	if (s->have_dir)
		return 0;
	int rc = get_200(s, s->directory, &r, err, errlen);
	if (rc == 0 && acme_parse_directory(r.body, r.len, &s->dir, why, sizeof(why)) < 0) {
		struct acme_problem p;
		char head[400];
		describe("GET", s->directory, &r, &p, head, sizeof(head));
		snprintf(err, errlen, "%s: %s; is --acme-ca a directory URL?", head, why);
		rc = -1;
	}
	acme_http_resp_free(&r);
	s->have_dir = rc == 0;
	return rc;
}

/* The EAB's JWS over the account's JWK (RFC 8555 7.3.4), or NULL. */
static char *eab_binding(struct acme_session *s)
{
	char protected[2048];

	if (acme_protected_eab(protected, sizeof(protected), s->eab_kid, s->dir.new_account) < 0)
		return NULL;
	return acme_jws_hs256(s->eab_key, s->eab_len, protected, s->jwk);
}

int acme_session_account(struct acme_session *s, char *err, size_t errlen)
{
	struct acme_http_resp r;
	struct acme_problem p;
	char payload[PAYLOAD_MAX];
	char *eab = NULL;

	s->needs_operator = false;
	if (directory(s, err, errlen) < 0)
		return -1;
	if (s->kid[0])
		return 0;
	if (s->dir.terms[0] && !s->terms_agreed) {
		snprintf(err, errlen, "the CA's terms of service (%s) must be agreed to: add "
				      "\"acme-terms-agreed on\"",
			 s->dir.terms);
		s->needs_operator = true;
		return -1;
	}
	if (s->dir.eab_required && !s->eab_kid) {
		snprintf(err, errlen, "the CA requires external account binding: add \"acme-eab "
				      "KID FILE\"");
		s->needs_operator = true;
		return -1;
	}
	if (s->eab_kid && !(eab = eab_binding(s))) {
		snprintf(err, errlen, "acme-eab: the binding could not be signed");
		return -1;
	}
	int n = acme_payload_new_account(payload, sizeof(payload), s->email, s->terms_agreed, eab);
	free(eab);
	if (n < 0) {
		snprintf(err, errlen, "newAccount: the request does not fit");
		return -1;
	}
	if (post(s, s->dir.new_account, payload, &r, &p, err, errlen) < 0) {
		s->needs_operator = strstr(p.type, ":externalAccountRequired") ||
				    strstr(p.type, ":userActionRequired") ||
				    strstr(p.type, ":unauthorized");
		return -1;
	}
	if (!r.location[0] || !acme_url_ok(r.location)) {
		snprintf(err, errlen, "POST %s: %d without the account's Location",
			 s->dir.new_account, r.status);
		acme_http_resp_free(&r);
		return -1;
	}
	snprintf(s->kid, sizeof(s->kid), "%s", r.location);
	log_msg(LOG_INFO, "acme: account %s %s", s->kid,
		r.status == 201 ? "registered" : "found");
	acme_http_resp_free(&r);
	return 0;
}

/* How long to wait before polling again: the CA's Retry-After, clamped. */
static long poll_wait(const struct acme_session *s)
{
	return s->retry_after < 1 ? 1 : s->retry_after > 10 ? 10 : s->retry_after;
}

/* POST-as-GET of an authorization, parsed. */
static int fetch_authz(struct acme_session *s, const char *url, struct acme_authz *a, char *err,
		       size_t errlen)
{
	struct acme_http_resp r;
	struct acme_problem p;
	char why[256];

	if (post(s, url, "", &r, &p, err, errlen) < 0)
		return -1;
	int rc = acme_parse_authz(r.body, r.len, a, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "POST %s: %s", url, why);
	acme_http_resp_free(&r);
	return rc;
}

/* The challenge answer the workers give, before the CA is told to look. */
static int answer(const struct acme_session *s, const char *name,
		  const struct acme_challenge *ch, enum acme_chal_type type, char *err,
		  size_t errlen)
{
	char key_authz[ACME_TOKEN_MAX + 80];

	snprintf(key_authz, sizeof(key_authz), "%s.%s", ch->token, s->thumbprint);
	if (type == ACME_CHAL_HTTP01) {
		if (acme_chal_put_http(name, ch->token, key_authz) < 0) {
			snprintf(err, errlen, "http-01 for %s: the challenge table is full", name);
			return -1;
		}
		return 0;
	}
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	char why[256] = "";
	SSL_CTX *ctx = NULL;
	if (acme_alpn_cert(name, key_authz, &key, &cert) == 0)
		ctx = tls_acme_ctx_new(cert, key, why, sizeof(why));
	EVP_PKEY_free(key);
	X509_free(cert);
	int rc = ctx ? acme_chal_put_alpn(name, ctx) : -1;
	SSL_CTX_free(ctx); /* the table keeps its own reference */
	if (rc < 0)
		snprintf(err, errlen, "tls-alpn-01 for %s: %s", name,
			 why[0] ? why : "no challenge certificate");
	return rc < 0 ? -1 : 0;
}

/* One authorization to valid: its challenge answered, the CA told, the
 * authorization polled until it is decided. */
static int authorize(struct acme_session *s, const char *url, enum acme_chal_type type,
		     char *err, size_t errlen)
{
	const char *want = type == ACME_CHAL_HTTP01 ? "http-01" : "tls-alpn-01";
	struct acme_authz a;
	const struct acme_challenge *ch = NULL;
	struct acme_http_resp r;
	struct acme_problem p;

	if (fetch_authz(s, url, &a, err, errlen) < 0)
		return -1;
	if (a.status == ACME_ST_VALID)
		return 0; /* the CA still trusts an earlier answer (7.1.4) */
	for (size_t i = 0; i < a.nchal && !ch; i++)
		if (strcmp(a.chal[i].type, want) == 0)
			ch = &a.chal[i];
	if (!ch || a.status != ACME_ST_PENDING) {
		snprintf(err, errlen, "authorization %s for %s: %s", url, a.identifier,
			 !ch ? "the CA offers no such challenge" : "not pending");
		return -1;
	}
	if (answer(s, a.identifier, ch, type, err, errlen) < 0)
		return -1;
	if (post(s, ch->url, "{}", &r, &p, err, errlen) < 0)
		return -1;
	acme_http_resp_free(&r);
	time_t until = time(NULL) + ACME_POLL_LIMIT_S;
	while (!stopped(s)) {
		pause_for(s, poll_wait(s));
		if (fetch_authz(s, url, &a, err, errlen) < 0)
			return -1;
		if (a.status == ACME_ST_VALID) {
			log_msg(LOG_INFO, "acme: %s for %s: valid", want, a.identifier);
			return 0;
		}
		if (a.status != ACME_ST_PENDING) {
			const struct acme_problem *why = &a.error;
			snprintf(err, errlen, "authorization for %s %s: %s: %s", a.identifier,
				 a.status == ACME_ST_INVALID ? "invalid" : "not valid",
				 why->type[0] ? why->type : "no problem given", why->detail);
			return -1;
		}
		if (time(NULL) > until) {
			snprintf(err, errlen, "authorization for %s: still pending after %d s",
				 a.identifier, ACME_POLL_LIMIT_S);
			return -1;
		}
	}
	snprintf(err, errlen, "stopping");
	return -1;
}

/* POST-as-GET of the order until it leaves the states in which the CA is
 * busy (pending with every authorization valid, processing). */
static int poll_order(struct acme_session *s, const char *url, struct acme_order *o,
		      enum acme_status until_not, char *err, size_t errlen)
{
	time_t until = time(NULL) + ACME_POLL_LIMIT_S;

	while (o->status == until_not || o->status == ACME_ST_PROCESSING) {
		struct acme_http_resp r;
		struct acme_problem p;
		char why[256];

		if (stopped(s) || time(NULL) > until) {
			snprintf(err, errlen, "order %s: %s", url,
				 stopped(s) ? "stopping" : "the CA took too long");
			return -1;
		}
		pause_for(s, poll_wait(s));
		if (post(s, url, "", &r, &p, err, errlen) < 0)
			return -1;
		int rc = acme_parse_order(r.body, r.len, o, why, sizeof(why));
		acme_http_resp_free(&r);
		if (rc < 0) {
			snprintf(err, errlen, "POST %s: %s", url, why);
			return -1;
		}
	}
	return 0;
}

/* The challenges of names leave the table, whatever happened. */
static void drop_answers(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acme_chal_drop(names[i]);
}

static int finalize(struct acme_session *s, const char *order_url, struct acme_order *o,
		    const char *const *names, size_t n, EVP_PKEY *key, char *err, size_t errlen)
{
	char payload[PAYLOAD_MAX], why[256];
	struct acme_http_resp r;
	struct acme_problem p;
	char *csr = acme_csr(key, names, n);

	if (!csr || acme_payload_finalize(payload, sizeof(payload), csr) < 0) {
		free(csr);
		snprintf(err, errlen, "finalize: the CSR could not be made");
		return -1;
	}
	free(csr);
	if (post(s, o->finalize, payload, &r, &p, err, errlen) < 0)
		return -1;
	int rc = acme_parse_order(r.body, r.len, o, why, sizeof(why));
	acme_http_resp_free(&r);
	if (rc < 0) {
		snprintf(err, errlen, "POST %s: %s", o->finalize, why);
		return -1;
	}
	if (poll_order(s, order_url, o, ACME_ST_READY, err, errlen) < 0)
		return -1;
	if (o->status != ACME_ST_VALID || !o->certificate[0]) {
		snprintf(err, errlen, "order %s: not valid after finalize: %s: %s", order_url,
			 o->error.type[0] ? o->error.type : "no problem given", o->error.detail);
		return -1;
	}
	return 0;
}

/* The key's PEM then the chain: the bundle (acme_store.h). */
static int bundle_of(EVP_PKEY *key, const struct acme_http_resp *chain, char **bundle,
		     size_t *blen)
{
	char *pem;
	size_t plen;

	if (acme_key_to_pem(key, &pem, &plen) < 0)
		return -1;
	*bundle = malloc(plen + chain->len + 2);
	if (!*bundle) {
		explicit_bzero(pem, plen);
		free(pem);
		return -1;
	}
	memcpy(*bundle, pem, plen);
	*blen = plen;
	if (plen && pem[plen - 1] != '\n')
		(*bundle)[(*blen)++] = '\n';
	memcpy(*bundle + *blen, chain->body, chain->len);
	*blen += chain->len;
	(*bundle)[*blen] = '\0';
	explicit_bzero(pem, plen);
	free(pem);
	return 0;
}

int acme_renewal_info(struct acme_session *s, const char *cert_id, time_t *start, time_t *end,
		      char *err, size_t errlen)
{
	char url[ACME_URL_MAX + 160], why[256];
	struct acme_http_resp r;

	if (directory(s, err, errlen) < 0)
		return -1;
	if (!s->dir.renewal_info[0])
		return 1;
	/* RFC 9773 §4.2: GET {renewalInfo}/{certID}, unauthenticated. */
	snprintf(url, sizeof(url), "%s%s%s", s->dir.renewal_info,
		 s->dir.renewal_info[strlen(s->dir.renewal_info) - 1] == '/' ? "" : "/", cert_id);
	int rc = get_200(s, url, &r, err, errlen);
	if (rc == 0 && acme_parse_renewal_info(r.body, r.len, start, end, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "GET %s: %s", url, why);
		rc = -1;
	}
	acme_http_resp_free(&r);
	return rc;
}

/* Whether the CA's directory lists --acme-profile; if not, why, with the
 * CA's list, for the operator to choose from. */
static bool offers_profile(const struct acme_session *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->dir.nprofiles; i++)
		if (strcmp(s->dir.profiles[i], s->profile) == 0)
			return true;
	int used = snprintf(err, errlen, "--acme-profile %s: %s lists %s", s->profile, s->directory,
			    s->dir.nprofiles ? "no profile of that name; it lists: " : "no profiles");
	for (size_t i = 0; i < s->dir.nprofiles && used >= 0 && (size_t)used < errlen; i++)
		used += snprintf(err + used, errlen - (size_t)used, "%s%s", i ? ", " : "",
				 s->dir.profiles[i]);
	return false;
}

int acme_order_certificate(struct acme_session *s, const char *const *names, size_t n,
			   enum acme_chal_type type, const char *replaces, char **bundle,
			   size_t *blen, char *err, size_t errlen)
{
	char payload[PAYLOAD_MAX], order_url[ACME_URL_MAX], why[256];
	struct acme_http_resp r;
	struct acme_problem p;
	struct acme_order o;
	EVP_PKEY *key = NULL;
	int rc = -1;

	if (s->profile && !offers_profile(s, err, errlen)) {
		s->needs_operator = true;
		return -1;
	}
	if (acme_payload_new_order(payload, sizeof(payload), names, n, replaces, s->profile) < 0) {
		snprintf(err, errlen, "newOrder: the request does not fit");
		return -1;
	}
	if (post(s, s->dir.new_order, payload, &r, &p, err, errlen) < 0) {
		if (strstr(p.type, ":accountDoesNotExist"))
			s->kid[0] = '\0'; /* registered again on the next attempt */
		return -1;
	}
	snprintf(order_url, sizeof(order_url), "%s", r.location);
	rc = acme_parse_order(r.body, r.len, &o, why, sizeof(why));
	acme_http_resp_free(&r);
	if (rc < 0 || !acme_url_ok(order_url)) {
		snprintf(err, errlen, "POST %s: %s", s->dir.new_order,
			 rc < 0 ? why : "no order Location");
		return -1;
	}
	rc = -1;
	for (size_t i = 0; i < o.nauthz; i++)
		if (authorize(s, o.authz[i], type, err, errlen) < 0)
			goto out;
	if (poll_order(s, order_url, &o, ACME_ST_PENDING, err, errlen) < 0)
		goto out;
	if (o.status != ACME_ST_READY) {
		snprintf(err, errlen, "order %s: not ready: %s: %s", order_url,
			 o.error.type[0] ? o.error.type : "no problem given", o.error.detail);
		goto out;
	}
	key = acme_key_new();
	if (!key) {
		snprintf(err, errlen, "no new key");
		goto out;
	}
	if (finalize(s, order_url, &o, names, n, key, err, errlen) < 0)
		goto out;
	if (post(s, o.certificate, "", &r, &p, err, errlen) < 0)
		goto out;
	if (bundle_of(key, &r, bundle, blen) < 0)
		snprintf(err, errlen, "out of memory");
	else
		rc = 0;
	acme_http_resp_free(&r);
out:
	drop_answers(names, n);
	EVP_PKEY_free(key);
	return rc;
}
