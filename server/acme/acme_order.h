/* One conversation with an ACME CA (RFC 8555), blocking, for the ACME
 * client's thread alone: the directory, the account (its key is the
 * account: newAccount with it finds the one the CA has, 7.3.1), and one
 * order from newOrder to the certificate, its challenges answered by the
 * workers through the challenge table (server/core/acme_chal.h).
 *
 * Each request takes the last response's Replay-Nonce; a badNonce is
 * tried again with the error's own nonce, five times (6.5). What went
 * wrong comes back as one line naming the request and the CA's problem
 * type and detail, as operators need to see it (README, "Certificates"). */
#ifndef KTLSD_SERVER_ACME_ORDER_H
#define KTLSD_SERVER_ACME_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>

#include "proto/acme.h"
#include "server/acme/acme_http.h"

/* How long one request may take, and how long an authorization or an
 * order may stay pending or processing before the order is given up. */
#define ACME_REQUEST_TIMEOUT_MS 30000
#define ACME_POLL_LIMIT_S 120

struct acme_session {
	struct acme_http_client *http;
	const volatile bool *stop;       /* the thread's: checked between steps */
	const char *directory;           /* --acme-ca */
	struct acme_directory dir;
	bool have_dir;
	EVP_PKEY *account;               /* the account key (the session's) */
	char jwk[256], thumbprint[64];
	char kid[ACME_URL_MAX];          /* the account's URL, "" until found or made */
	char nonce[256];
	/* The account's terms. */
	const char *email;
	bool terms_agreed;
	const char *eab_kid;             /* NULL: no external account binding */
	const char *profile;             /* --acme-profile; NULL: the CA's default */
	uint8_t eab_key[256];
	size_t eab_len;
	/* What the last failure was, for the schedule. */
	long retry_after;                /* seconds the CA asked to wait; -1 none */
	bool needs_operator;             /* terms, EAB: no retry before a SIGHUP */
	/* Requests made, for metrics. */
	uint64_t requests_ok, requests_failed, bad_nonces;
};

/* Challenge types, in --acme-challenge's words. */
enum acme_chal_type { ACME_CHAL_HTTP01, ACME_CHAL_TLSALPN01 };

/* The directory (once a session) and the account, found or made: 0, or -1
 * with the reason in err. */
int acme_session_account(struct acme_session *s, char *err, size_t errlen);

/* RFC 9773: the CA's suggested renewal window for the certificate whose
 * ARI identifier is cert_id (acme_cert_info's ari_id), and in
 * s->retry_after the seconds the CA asks before the next look (-1: it
 * did not say). 0 with the window, 1 when the CA's directory has no
 * renewalInfo, or -1 with the reason in err. Needs no account. */
int acme_renewal_info(struct acme_session *s, const char *cert_id, time_t *start, time_t *end,
		      char *err, size_t errlen);

/* A certificate for names, by challenge type: the new key's PEM then the
 * chain as the CA sent it, in *bundle (malloc'd, the caller wipes and
 * frees it). replaces: the ARI identifier of the certificate this one
 * replaces (RFC 9773 §5), or NULL. 0, or -1 with the reason in err. */
int acme_order_certificate(struct acme_session *s, const char *const *names, size_t n,
			   enum acme_chal_type type, const char *replaces, char **bundle,
			   size_t *blen, char *err, size_t errlen);

#endif
