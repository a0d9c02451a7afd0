/* ACME (RFC 8555) without I/O: the CA's JSON documents parsed into fixed
 * structs, the request payloads and JWS protected headers printed, and the
 * timing rules (Retry-After, RFC 3339, when to renew, how long to back off).
 * jansson stays behind this header, so no caller sees a json_t. */
#ifndef KTLSD_PROTO_ACME_H
#define KTLSD_PROTO_ACME_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

enum acme_status {
	ACME_ST_UNKNOWN,
	ACME_ST_PENDING,
	ACME_ST_READY,
	ACME_ST_PROCESSING,
	ACME_ST_VALID,
	ACME_ST_INVALID,
	ACME_ST_EXPIRED,
	ACME_ST_DEACTIVATED,
	ACME_ST_REVOKED
};

#define ACME_URL_MAX 1024
#define ACME_TOKEN_MAX 128
#define ACME_MAX_AUTHZ 16 /* = CONFIG_MAX_SERVER_NAMES */
#define ACME_PROFILE_MAX 64
#define ACME_MAX_PROFILES 16

struct acme_directory {
	char new_nonce[ACME_URL_MAX], new_account[ACME_URL_MAX], new_order[ACME_URL_MAX],
	    renewal_info[ACME_URL_MAX], terms[ACME_URL_MAX];
	bool eab_required;
	/* meta.profiles' names (draft-ietf-acme-profiles), the first
	 * ACME_MAX_PROFILES that pass acme_profile_ok. */
	size_t nprofiles;
	char profiles[ACME_MAX_PROFILES][ACME_PROFILE_MAX + 1];
};

struct acme_problem {
	char type[160];
	char detail[512]; /* subproblems folded in */
};

struct acme_order {
	enum acme_status status;
	char finalize[ACME_URL_MAX];
	char certificate[ACME_URL_MAX];
	size_t nauthz;
	char authz[ACME_MAX_AUTHZ][ACME_URL_MAX];
	struct acme_problem error;
};

struct acme_challenge {
	char type[24];
	char url[ACME_URL_MAX];
	char token[ACME_TOKEN_MAX + 1];
	enum acme_status status;
};

struct acme_authz {
	enum acme_status status;
	char identifier[256];
	bool wildcard;
	size_t nchal;
	struct acme_challenge chal[4];
	struct acme_problem error;
};

/* Each: 0, or -1 with a one-line reason in err (what was missing or mistyped,
 * and the parser's line and column for non-JSON). Unknown members ignored;
 * null members are absent; strings go through acme_url_ok / acme_token_ok
 * before they are copied. */
int acme_parse_directory(const char *json, size_t len, struct acme_directory *d, char *err,
			 size_t errlen);
int acme_parse_order(const char *json, size_t len, struct acme_order *o, char *err,
		     size_t errlen);
int acme_parse_authz(const char *json, size_t len, struct acme_authz *a, char *err,
		     size_t errlen);
/* An RFC 7807 problem document; what is not a problem leaves p with an empty
 * type and a detail saying why. 0 / -1. */
int acme_parse_problem(const char *json, size_t len, struct acme_problem *p);
int acme_parse_account_status(const char *json, size_t len, enum acme_status *st, char *err,
			      size_t errlen);
/* RFC 9773 renewalInfo: suggestedWindow start/end, end after start. */
int acme_parse_renewal_info(const char *json, size_t len, time_t *start, time_t *end, char *err,
			    size_t errlen);

bool acme_url_ok(const char *s);   /* https://, printable, no quotes/backslashes/space */
bool acme_token_ok(const char *s); /* base64url charset, 1..ACME_TOKEN_MAX */
bool acme_name_ok(const char *s);  /* LDH DNS name, no wildcard, <= 253 */
bool acme_profile_ok(const char *s); /* letters, digits, '-', '_', '.', 1..ACME_PROFILE_MAX */

/* Payloads, printed: length or -1 when out is too small (or a value is
 * refused). Every string is JSON-escaped by jansson. */
int acme_payload_new_account(char *out, size_t n, const char *email /*NULL*/, bool terms_agreed,
			     const char *eab_jws /*NULL: none; a JSON object's text*/);
int acme_payload_new_order(char *out, size_t n, const char *const *names, size_t nnames,
			   const char *replaces /*NULL*/, const char *profile /*NULL*/);
int acme_payload_finalize(char *out, size_t n, const char *csr_b64url);
/* The JWS protected header: {"alg":"ES256","nonce":…,"url":…,"jwk":JWK} when
 * kid is NULL, else {"alg":"ES256","kid":…,"nonce":…,"url":…}. */
int acme_protected(char *out, size_t n, const char *nonce, const char *url, const char *kid,
		   const char *jwk);
/* EAB's protected header: {"alg":"HS256","kid":…,"url":…}. */
int acme_protected_eab(char *out, size_t n, const char *eab_kid, const char *url);

/* Retry-After (RFC 9110 10.2.3): delta-seconds or an HTTP-date, as seconds
 * from now (>= 0), or -1 when it does not parse. */
long acme_retry_after(const char *v, time_t now);
/* RFC 3339 (fractions, Z or +-hh:mm) to time_t, -1 on failure. */
time_t acme_rfc3339(const char *s);
/* When to renew a certificate valid [nb, na) with no ARI: nb + 2/3 of the
 * lifetime (1/2 when the lifetime is 10 days or less) + jitter, jitter_unit
 * in [-1, 1] scaling +-2 % of the lifetime. */
time_t acme_renew_at(time_t nb, time_t na, double jitter_unit);
/* The wait after the nth consecutive failure (1-based): 60 s, 600 s, 3600 s,
 * then 6 h, each scaled by (1 + 0.1 * jitter_unit); never beyond half of what
 * is left before na (na 0: no cap), at least 60 s. */
long acme_backoff(unsigned nth, double jitter_unit, time_t now, time_t na);

#endif
