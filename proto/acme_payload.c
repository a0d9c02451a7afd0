/* What ktlsd sends an ACME server: the request payloads (RFC 8555 §7.3,
 * §7.4) and the JWS protected headers (§6.2). Built as jansson objects and
 * dumped, so every string (an email address, a name, a nonce) is escaped as
 * JSON wants; jansson keeps members in the order they were set. */
#include "proto/acme.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets key to a string, which jansson refuses (NULL) when it is not UTF-8;
 * the object is then left without it, and the caller fails. jansson's *_new
 * setters take the value's reference even when they fail, so no caller
 * drops a value it has handed over. */
static bool set_str(json_t *obj, const char *key, const char *val)
{
	return json_object_set_new(obj, key, json_string(val)) == 0;
}

/* Dumps obj into out and drops it: the length, or -1 (no room, or obj was
 * NULL because building it failed). */
static int print(json_t *obj, char *out, size_t n)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	int rc = -1;

	json_decref(obj);
	if (!s)
		return -1;
	size_t len = strlen(s);
	if (len < n && len <= (size_t)INT_MAX) {
		memcpy(out, s, len + 1);
		rc = (int)len;
	}
	free(s);
	return rc;
}

/* An object member that is already JSON text (the JWK, the EAB's JWS): it
 * must be one object, so it cannot smuggle members into ours. */
static bool set_json(json_t *obj, const char *key, const char *text)
{
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);

	if (!json_is_object(v)) {
		json_decref(v);
		return false;
	}
	return json_object_set_new(obj, key, v) == 0;
}

static bool add_contact(json_t *obj, const char *email)
{
	json_t *list = json_array();
	char *uri;
	bool ok;

	if (!list || asprintf(&uri, "mailto:%s", email) < 0) {
		json_decref(list);
		return false;
	}
	ok = json_array_append_new(list, json_string(uri)) == 0;
	free(uri);
	if (!ok) {
		json_decref(list);
		return false;
	}
	return json_object_set_new(obj, "contact", list) == 0;
}

/* termsOfServiceAgreed is printed only when true: false would say nothing
 * the server does not assume. */
int acme_payload_new_account(char *out, size_t n, const char *email, bool terms_agreed,
			     const char *eab_jws)
{
	json_t *o = json_object();

	if (!o)
		return -1;
	if ((terms_agreed && json_object_set_new(o, "termsOfServiceAgreed", json_true()) != 0) ||
	    (email && *email && !add_contact(o, email)) ||
	    (eab_jws && !set_json(o, "externalAccountBinding", eab_jws))) {
		json_decref(o);
		return -1;
	}
	return print(o, out, n);
}

static json_t *identifiers(const char *const *names, size_t nnames)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < nnames; i++) {
		json_t *id = json_object();
		if (!id || !set_str(id, "type", "dns") || !set_str(id, "value", names[i])) {
			json_decref(id);
			json_decref(list);
			return NULL;
		}
		if (json_array_append_new(list, id) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

int acme_payload_new_order(char *out, size_t n, const char *const *names, size_t nnames,
			   const char *replaces, const char *profile)
{
	json_t *o = json_object(), *ids = nnames ? identifiers(names, nnames) : NULL;

	if (!o || !ids) {
		json_decref(o);
		json_decref(ids);
		return -1;
	}
	if (json_object_set_new(o, "identifiers", ids) != 0 ||
	    (replaces && *replaces && !set_str(o, "replaces", replaces)) ||
	    (profile && *profile && !set_str(o, "profile", profile))) {
		json_decref(o);
		return -1;
	}
	return print(o, out, n);
}

int acme_payload_finalize(char *out, size_t n, const char *csr_b64url)
{
	json_t *o = json_object();

	if (!o || !set_str(o, "csr", csr_b64url)) {
		json_decref(o);
		return -1;
	}
	return print(o, out, n);
}

/* A NULL nonce is left out: nothing else needs the header without one, but
 * a missing member is clearer to the server than an empty string. */
int acme_protected(char *out, size_t n, const char *nonce, const char *url, const char *kid,
		   const char *jwk)
{
	json_t *o = json_object();
	bool ok = o && url && (kid || jwk) && set_str(o, "alg", "ES256");

	if (ok && kid)
		ok = set_str(o, "kid", kid);
	if (ok && nonce)
		ok = set_str(o, "nonce", nonce);
	if (ok)
		ok = set_str(o, "url", url);
	if (ok && !kid)
		ok = set_json(o, "jwk", jwk);
	if (!ok) {
		json_decref(o);
		return -1;
	}
	return print(o, out, n);
}

/* RFC 8555 §7.3.4: the EAB's inner JWS has no nonce. */
int acme_protected_eab(char *out, size_t n, const char *eab_kid, const char *url)
{
	json_t *o = json_object();

	if (!o || !eab_kid || !url || !set_str(o, "alg", "HS256") || !set_str(o, "kid", eab_kid) ||
	    !set_str(o, "url", url)) {
		json_decref(o);
		return -1;
	}
	return print(o, out, n);
}
