/* The CA's JSON documents (RFC 8555 §7.1, RFC 7807, RFC 9773) into the
 * fixed structs of acme.h. Everything here came from the network: each
 * string is type-checked, length-checked (too long is an error, never a
 * cut, except for a problem's free-text detail) and validated before it is
 * copied, and each error names the member it is about. */
#include "proto/acme.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_PREFIX "urn:ietf:params:acme:error:"

/* How a string member is checked before it is kept. */
enum check { CHK_TEXT, CHK_URL, CHK_TOKEN, CHK_NAME, CHK_URI };

static void fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* jansson's text quotes the input ("near '\x01'"), and a reason is a
	 * log line: printable ASCII only. */
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

/* The document as an object. JSON_REJECT_DUPLICATES: a second "url" must not
 * silently win over the first; NULs inside strings stay refused (jansson's
 * default), so every string below is a C string. */
static json_t *load(const char *json, size_t len, const char *what, char *err, size_t errlen)
{
	json_error_t e;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);

	if (!root) {
		fail(err, errlen, "%s: not JSON: line %d column %d: %s", what, e.line, e.column,
		     e.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		fail(err, errlen, "%s: not a JSON object", what);
		json_decref(root);
		return NULL;
	}
	return root;
}

/* A member, with null as absent (RFC 8555 servers send "certificate": null
 * and the like). */
static json_t *member(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_null(v) ? NULL : v;
}

static bool checked(const char *s, enum check how)
{
	switch (how) {
	case CHK_URL:
		return acme_url_ok(s);
	case CHK_TOKEN:
		return acme_token_ok(s);
	case CHK_NAME:
		return acme_name_ok(s);
	case CHK_URI:
		/* Not fetched, only logged and compared (pebble's terms are
		 * a data: URL): printable, nothing that needs quoting. */
		for (const char *p = s; *p; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '"' ||
			    *p == '\\')
				return false;
		return *s != '\0';
	case CHK_TEXT:
		for (const char *p = s; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return false;
		return true;
	}
	return false;
}

static const char *what_bad(enum check how)
{
	switch (how) {
	case CHK_URL:
		return "not an https URL";
	case CHK_TOKEN:
		return "not a base64url token";
	case CHK_NAME:
		return "not a DNS name";
	default:
		return "has characters that are not allowed";
	}
}

/* Copies string member key of obj into out (size bytes). Absent: out is ""
 * and that is an error only when required. path names obj in errors. */
static int get_str(json_t *obj, const char *key, const char *path, bool required, enum check how,
		   char *out, size_t size, char *err, size_t errlen)
{
	json_t *v = member(obj, key);

	out[0] = '\0';
	if (!v) {
		if (required)
			fail(err, errlen, "%s: %s: missing", path, key);
		return required ? -1 : 0;
	}
	if (!json_is_string(v)) {
		fail(err, errlen, "%s: %s: not a string", path, key);
		return -1;
	}
	size_t n = json_string_length(v);
	const char *s = json_string_value(v);
	if (n >= size) {
		fail(err, errlen, "%s: %s: too long (%zu bytes, at most %zu)", path, key, n,
		     size - 1);
		return -1;
	}
	if (!checked(s, how)) {
		fail(err, errlen, "%s: %s: %s", path, key, what_bad(how));
		return -1;
	}
	memcpy(out, s, n + 1);
	return 0;
}

static int get_bool(json_t *obj, const char *key, const char *path, bool *out, char *err,
		    size_t errlen)
{
	json_t *v = member(obj, key);

	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		fail(err, errlen, "%s: %s: not a boolean", path, key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

/* An object member (absent: *out NULL, not an error). */
static int get_obj(json_t *obj, const char *key, const char *path, json_t **out, char *err,
		   size_t errlen)
{
	*out = member(obj, key);
	if (*out && !json_is_object(*out)) {
		fail(err, errlen, "%s: %s: not an object", path, key);
		return -1;
	}
	return 0;
}

static const char *const status_names[] = {
    [ACME_ST_PENDING] = "pending", [ACME_ST_READY] = "ready",
    [ACME_ST_PROCESSING] = "processing", [ACME_ST_VALID] = "valid",
    [ACME_ST_INVALID] = "invalid", [ACME_ST_EXPIRED] = "expired",
    [ACME_ST_DEACTIVATED] = "deactivated", [ACME_ST_REVOKED] = "revoked",
};

/* The required "status" of an object. An unknown value is an error: the
 * state machine could only guess what it means. */
static int get_status(json_t *obj, const char *path, enum acme_status *st, char *err,
		      size_t errlen)
{
	char s[16];

	*st = ACME_ST_UNKNOWN;
	if (get_str(obj, "status", path, true, CHK_TEXT, s, sizeof(s), err, errlen) != 0)
		return -1;
	for (size_t i = 1; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (strcmp(s, status_names[i]) == 0) {
			*st = (enum acme_status)i;
			return 0;
		}
	fail(err, errlen, "%s: status: unknown value \"%s\"", path, s);
	return -1;
}

/* Appends text to a problem's detail. The detail is the one string that is
 * cut instead of refused: it is free text for a log line, and refusing it
 * would lose the type beside it. Controls become spaces (log injection); a
 * cut never splits a UTF-8 sequence (jansson gave us valid UTF-8). */
static void detail_append(struct acme_problem *p, const char *s)
{
	size_t have = strlen(p->detail), room = sizeof(p->detail) - 1 - have;
	size_t n = strlen(s);
	bool cut = n > room;

	if (cut) {
		if (room < 3)
			return;
		n = room - 3;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		p->detail[have + i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	memcpy(p->detail + have + n, cut ? "..." : "", cut ? 4 : 1);
}

static const char *str_member(json_t *obj, const char *key)
{
	json_t *v = member(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* RFC 8555 §6.7.1: each subproblem as "; NAME: detail (type)", so one log
 * line says which of the order's names failed and why. */
static void fold_subproblems(struct acme_problem *p, json_t *subs)
{
	size_t i;
	json_t *sub;

	if (!json_is_array(subs))
		return;
	json_array_foreach(subs, i, sub) {
		if (!json_is_object(sub))
			continue;
		json_t *id = member(sub, "identifier");
		const char *name = json_is_object(id) ? str_member(id, "value") : NULL;
		const char *type = str_member(sub, "type");
		const char *detail = str_member(sub, "detail");
		if (type && strncmp(type, ERROR_PREFIX, strlen(ERROR_PREFIX)) == 0)
			type += strlen(ERROR_PREFIX);
		detail_append(p, "; ");
		detail_append(p, name ? name : "?");
		detail_append(p, ": ");
		detail_append(p, detail ? detail : type ? type : "?");
		if (detail && type) {
			detail_append(p, " (");
			detail_append(p, type);
			detail_append(p, ")");
		}
	}
}

static int problem_from(json_t *obj, const char *path, struct acme_problem *p, char *err,
			size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (get_str(obj, "type", path, false, CHK_URI, p->type, sizeof(p->type), err, errlen) != 0)
		return -1;
	json_t *d = member(obj, "detail");
	if (d && !json_is_string(d)) {
		fail(err, errlen, "%s: detail: not a string", path);
		return -1;
	}
	if (d)
		detail_append(p, json_string_value(d));
	fold_subproblems(p, member(obj, "subproblems"));
	return 0;
}

int acme_parse_problem(const char *json, size_t len, struct acme_problem *p)
{
	char err[sizeof(p->detail)];
	json_t *root = load(json, len, "problem", err, sizeof(err));
	int rc = root ? problem_from(root, "problem", p, err, sizeof(err)) : -1;

	json_decref(root);
	if (rc != 0) {
		memset(p, 0, sizeof(*p));
		memcpy(p->detail, err, sizeof(p->detail));
	}
	return rc;
}

/* An "error" member of an order or a challenge. */
static int error_member(json_t *obj, const char *path, struct acme_problem *p, char *err,
			size_t errlen)
{
	json_t *e;
	char sub[64];

	memset(p, 0, sizeof(*p));
	if (get_obj(obj, "error", path, &e, err, errlen) != 0)
		return -1;
	snprintf(sub, sizeof(sub), "%s: error", path);
	return e ? problem_from(e, sub, p, err, errlen) : 0;
}

static int directory_from(json_t *root, struct acme_directory *d, char *err, size_t errlen)
{
	static const char *const path = "directory";
	json_t *meta, *profiles, *v;
	const char *name;

	if (get_str(root, "newNonce", path, true, CHK_URL, d->new_nonce, ACME_URL_MAX, err,
		    errlen) != 0 ||
	    get_str(root, "newAccount", path, true, CHK_URL, d->new_account, ACME_URL_MAX, err,
		    errlen) != 0 ||
	    get_str(root, "newOrder", path, true, CHK_URL, d->new_order, ACME_URL_MAX, err,
		    errlen) != 0 ||
	    get_str(root, "renewalInfo", path, false, CHK_URL, d->renewal_info, ACME_URL_MAX,
		    err, errlen) != 0 ||
	    get_obj(root, "meta", path, &meta, err, errlen) != 0)
		return -1;
	if (!meta)
		return 0;
	if (get_str(meta, "termsOfService", "directory: meta", false, CHK_URI, d->terms,
		    ACME_URL_MAX, err, errlen) != 0 ||
	    get_bool(meta, "externalAccountRequired", "directory: meta", &d->eab_required, err,
		     errlen) != 0 ||
	    get_obj(meta, "profiles", "directory: meta", &profiles, err, errlen) != 0)
		return -1;
	json_object_foreach(profiles, name, v)
	{
		if (d->nprofiles == ACME_MAX_PROFILES)
			break;
		if (acme_profile_ok(name))
			snprintf(d->profiles[d->nprofiles++], ACME_PROFILE_MAX + 1, "%s", name);
	}
	return 0;
}

int acme_parse_directory(const char *json, size_t len, struct acme_directory *d, char *err,
			 size_t errlen)
{
	json_t *root = load(json, len, "directory", err, errlen);
	int rc;

	memset(d, 0, sizeof(*d));
	if (!root)
		return -1;
	rc = directory_from(root, d, err, errlen);
	json_decref(root);
	if (rc != 0)
		memset(d, 0, sizeof(*d));
	return rc;
}

static int authz_urls(json_t *root, struct acme_order *o, char *err, size_t errlen)
{
	json_t *arr = member(root, "authorizations"), *v;
	size_t i;

	if (!arr) {
		fail(err, errlen, "order: authorizations: missing");
		return -1;
	}
	if (!json_is_array(arr)) {
		fail(err, errlen, "order: authorizations: not an array");
		return -1;
	}
	if (json_array_size(arr) > ACME_MAX_AUTHZ) {
		fail(err, errlen, "order: authorizations: %zu of them, at most %d",
		     json_array_size(arr), ACME_MAX_AUTHZ);
		return -1;
	}
	json_array_foreach(arr, i, v) {
		/* get_str wants an object: wrap the element's checks here. */
		const char *s = json_string_value(v);
		if (!s) {
			fail(err, errlen, "order: authorizations[%zu]: not a string", i);
			return -1;
		}
		if (json_string_length(v) >= ACME_URL_MAX || !acme_url_ok(s)) {
			fail(err, errlen, "order: authorizations[%zu]: %s", i,
			     json_string_length(v) >= ACME_URL_MAX ? "too long" : "not an https URL");
			return -1;
		}
		memcpy(o->authz[i], s, json_string_length(v) + 1);
	}
	o->nauthz = json_array_size(arr);
	return 0;
}

static int order_from(json_t *root, struct acme_order *o, char *err, size_t errlen)
{
	if (get_status(root, "order", &o->status, err, errlen) != 0 ||
	    get_str(root, "finalize", "order", true, CHK_URL, o->finalize, ACME_URL_MAX, err,
		    errlen) != 0 ||
	    get_str(root, "certificate", "order", false, CHK_URL, o->certificate, ACME_URL_MAX,
		    err, errlen) != 0 ||
	    authz_urls(root, o, err, errlen) != 0)
		return -1;
	return error_member(root, "order", &o->error, err, errlen);
}

int acme_parse_order(const char *json, size_t len, struct acme_order *o, char *err,
		     size_t errlen)
{
	json_t *root = load(json, len, "order", err, errlen);
	int rc;

	memset(o, 0, sizeof(*o));
	if (!root)
		return -1;
	rc = order_from(root, o, err, errlen);
	json_decref(root);
	if (rc != 0)
		memset(o, 0, sizeof(*o));
	return rc;
}

/* The challenge types a token belongs to (RFC 8555 §8.3, §8.4, RFC 8737);
 * others are skipped like unknown members. */
static bool known_challenge(const char *type)
{
	return strcmp(type, "http-01") == 0 || strcmp(type, "tls-alpn-01") == 0 ||
	       strcmp(type, "dns-01") == 0;
}

static int challenge_from(json_t *c, const char *path, struct acme_authz *a, char *err,
			  size_t errlen)
{
	struct acme_challenge *ch = &a->chal[a->nchal];
	struct acme_problem prob;
	json_t *t = member(c, "type");

	if (!json_is_object(c)) {
		fail(err, errlen, "%s: not an object", path);
		return -1;
	}
	if (!json_is_string(t)) {
		fail(err, errlen, "%s: type: %s", path, t ? "not a string" : "missing");
		return -1;
	}
	if (!known_challenge(json_string_value(t)))
		return 0;
	if (a->nchal == sizeof(a->chal) / sizeof(a->chal[0])) {
		fail(err, errlen, "%s: more than %zu known challenges", path, a->nchal);
		return -1;
	}
	memset(ch, 0, sizeof(*ch));
	if (get_str(c, "type", path, true, CHK_TEXT, ch->type, sizeof(ch->type), err, errlen) ||
	    get_str(c, "url", path, true, CHK_URL, ch->url, sizeof(ch->url), err, errlen) ||
	    get_str(c, "token", path, true, CHK_TOKEN, ch->token, sizeof(ch->token), err,
		    errlen) ||
	    get_status(c, path, &ch->status, err, errlen) ||
	    error_member(c, path, &prob, err, errlen))
		return -1;
	/* An authorization has no error of its own (RFC 8555 §7.1.4): why it
	 * failed is on its challenge. The invalid one's reason wins. */
	if ((prob.type[0] || prob.detail[0]) &&
	    (!a->error.type[0] || ch->status == ACME_ST_INVALID))
		a->error = prob;
	a->nchal++;
	return 0;
}

static int identifier_from(json_t *root, struct acme_authz *a, char *err, size_t errlen)
{
	json_t *id;
	char type[32];

	if (get_obj(root, "identifier", "authz", &id, err, errlen) != 0)
		return -1;
	if (!id) {
		fail(err, errlen, "authz: identifier: missing");
		return -1;
	}
	if (get_str(id, "type", "authz: identifier", true, CHK_TEXT, type, sizeof(type), err,
		    errlen) != 0 ||
	    get_str(id, "value", "authz: identifier", true, CHK_NAME, a->identifier,
		    sizeof(a->identifier), err, errlen) != 0)
		return -1;
	if (strcmp(type, "dns") != 0) {
		fail(err, errlen, "authz: identifier: type: \"%s\", not \"dns\"", type);
		return -1;
	}
	return 0;
}

static int authz_from(json_t *root, struct acme_authz *a, char *err, size_t errlen)
{
	json_t *arr, *c;
	size_t i;
	char path[48];

	if (get_status(root, "authz", &a->status, err, errlen) != 0 ||
	    identifier_from(root, a, err, errlen) != 0 ||
	    get_bool(root, "wildcard", "authz", &a->wildcard, err, errlen) != 0)
		return -1;
	arr = member(root, "challenges");
	if (!json_is_array(arr)) {
		fail(err, errlen, "authz: challenges: %s", arr ? "not an array" : "missing");
		return -1;
	}
	json_array_foreach(arr, i, c) {
		snprintf(path, sizeof(path), "authz: challenges[%zu]", i);
		if (challenge_from(c, path, a, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int acme_parse_authz(const char *json, size_t len, struct acme_authz *a, char *err,
		     size_t errlen)
{
	json_t *root = load(json, len, "authz", err, errlen);
	int rc;

	memset(a, 0, sizeof(*a));
	if (!root)
		return -1;
	rc = authz_from(root, a, err, errlen);
	json_decref(root);
	if (rc != 0)
		memset(a, 0, sizeof(*a));
	return rc;
}

int acme_parse_account_status(const char *json, size_t len, enum acme_status *st, char *err,
			      size_t errlen)
{
	json_t *root = load(json, len, "account", err, errlen);
	int rc;

	*st = ACME_ST_UNKNOWN;
	if (!root)
		return -1;
	rc = get_status(root, "account", st, err, errlen);
	json_decref(root);
	return rc;
}

static int window_time(json_t *w, const char *key, time_t *out, char *err, size_t errlen)
{
	char s[64];

	if (get_str(w, key, "renewalInfo: suggestedWindow", true, CHK_TEXT, s, sizeof(s), err,
		    errlen) != 0)
		return -1;
	*out = acme_rfc3339(s);
	if (*out == (time_t)-1) {
		fail(err, errlen, "renewalInfo: suggestedWindow: %s: not an RFC 3339 time", key);
		return -1;
	}
	return 0;
}

/* RFC 9773 §4.2: a window whose end is before its start is invalid; one
 * that ends where it starts is taken as invalid too (nothing to draw in). */
int acme_parse_renewal_info(const char *json, size_t len, time_t *start, time_t *end, char *err,
			    size_t errlen)
{
	json_t *root = load(json, len, "renewalInfo", err, errlen), *w;
	int rc = -1;

	*start = *end = 0;
	if (!root)
		return -1;
	if (get_obj(root, "suggestedWindow", "renewalInfo", &w, err, errlen) != 0)
		goto out;
	if (!w) {
		fail(err, errlen, "renewalInfo: suggestedWindow: missing");
		goto out;
	}
	if (window_time(w, "start", start, err, errlen) != 0 ||
	    window_time(w, "end", end, err, errlen) != 0)
		goto out;
	if (*end <= *start) {
		fail(err, errlen, "renewalInfo: suggestedWindow: end not after start");
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		*start = *end = 0;
	json_decref(root);
	return rc;
}
