/* libFuzzer target: every parser of a CA's response (proto/acme_json.c),
 * the time parsers (proto/acme.c) and the payload printers
 * (proto/acme_payload.c) on arbitrary bytes.
 *
 * The input goes to each parser as it is, in a heap buffer of exactly its
 * length (an over-read is an ASan report), and spliced as a member's value
 * into a valid order, authorization, directory and renewalInfo, so the
 * fuzzer reaches the member checks without first having to invent the
 * whole document.
 *
 * Checked: a parse that succeeds leaves only strings that pass the
 * validators it promises (URLs, tokens, names), counts within their arrays,
 * every string NUL-terminated inside its field; one that fails says why and
 * leaves its struct zeroed; a problem's detail is valid UTF-8; a payload
 * built around the input (as an email, a name, a nonce) parses back to the
 * same string. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_check.h"
#include "proto/acme.h"

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void check_problem(const struct acme_problem *p)
{
	FZ_ASSERT(TERMINATED(p->type) && TERMINATED(p->detail), "unterminated problem");
	json_t *v = json_string(p->detail); /* NULL when not UTF-8 */
	FZ_ASSERT(v != NULL, "detail is not UTF-8: %s", p->detail);
	json_decref(v);
	for (const char *c = p->detail; *c; c++)
		FZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f, "control in detail");
}

static void check_url(const char *field, size_t size, bool may_be_empty)
{
	FZ_ASSERT(memchr(field, '\0', size) != NULL, "unterminated URL");
	FZ_ASSERT((may_be_empty && field[0] == '\0') || acme_url_ok(field), "bad URL kept: %s",
		  field);
}

static void directory(const char *j, size_t n)
{
	struct acme_directory d;
	char err[256] = "";

	if (acme_parse_directory(j, n, &d, err, sizeof(err)) != 0) {
		FZ_ASSERT(err[0] != '\0' && all_zero(&d, sizeof(d)), "silent directory failure");
		return;
	}
	check_url(d.new_nonce, sizeof(d.new_nonce), false);
	check_url(d.new_account, sizeof(d.new_account), false);
	check_url(d.new_order, sizeof(d.new_order), false);
	check_url(d.renewal_info, sizeof(d.renewal_info), true);
	FZ_ASSERT(TERMINATED(d.terms), "unterminated terms");
}

static void order(const char *j, size_t n)
{
	struct acme_order o;
	char err[256] = "";

	if (acme_parse_order(j, n, &o, err, sizeof(err)) != 0) {
		FZ_ASSERT(err[0] != '\0' && all_zero(&o, sizeof(o)), "silent order failure");
		return;
	}
	FZ_ASSERT(o.status > ACME_ST_UNKNOWN && o.status <= ACME_ST_REVOKED, "status %d",
		  o.status);
	check_url(o.finalize, sizeof(o.finalize), false);
	check_url(o.certificate, sizeof(o.certificate), true);
	FZ_ASSERT(o.nauthz <= ACME_MAX_AUTHZ, "%zu authorizations", o.nauthz);
	for (size_t i = 0; i < o.nauthz; i++)
		check_url(o.authz[i], sizeof(o.authz[i]), false);
	check_problem(&o.error);
}

static void authz(const char *j, size_t n)
{
	struct acme_authz a;
	char err[256] = "";

	if (acme_parse_authz(j, n, &a, err, sizeof(err)) != 0) {
		FZ_ASSERT(err[0] != '\0' && all_zero(&a, sizeof(a)), "silent authz failure");
		return;
	}
	FZ_ASSERT(acme_name_ok(a.identifier), "bad name kept: %s", a.identifier);
	FZ_ASSERT(a.nchal <= sizeof(a.chal) / sizeof(a.chal[0]), "%zu challenges", a.nchal);
	for (size_t i = 0; i < a.nchal; i++) {
		FZ_ASSERT(TERMINATED(a.chal[i].type), "unterminated type");
		check_url(a.chal[i].url, sizeof(a.chal[i].url), false);
		FZ_ASSERT(acme_token_ok(a.chal[i].token), "bad token kept: %s", a.chal[i].token);
	}
	check_problem(&a.error);
}

static void others(const char *j, size_t n)
{
	struct acme_problem p;
	enum acme_status st;
	time_t s, e;
	char err[256] = "";

	acme_parse_problem(j, n, &p);
	check_problem(&p);
	if (acme_parse_account_status(j, n, &st, err, sizeof(err)) != 0)
		FZ_ASSERT(err[0] != '\0' && st == ACME_ST_UNKNOWN, "silent account failure");
	err[0] = '\0';
	if (acme_parse_renewal_info(j, n, &s, &e, err, sizeof(err)) == 0)
		FZ_ASSERT(s <= e, "window %lld > %lld", (long long)s, (long long)e);
	else
		FZ_ASSERT(err[0] != '\0' && s == 0 && e == 0, "silent renewalInfo failure");
}

/* The input between a prefix and a suffix, in a buffer of exactly that size. */
static void spliced(const char *pre, const uint8_t *data, size_t size, const char *post,
		    void (*parse)(const char *, size_t))
{
	size_t a = strlen(pre), b = strlen(post);
	char *buf = malloc(a + size + b);

	if (!buf)
		abort();
	memcpy(buf, pre, a);
	memcpy(buf + a, data, size);
	memcpy(buf + a + size, post, b);
	parse(buf, a + size + b);
	free(buf);
}

static void as_string(const char *s)
{
	char out[4096];
	time_t now = 1700000000;

	long ra = acme_retry_after(s, now);
	FZ_ASSERT(ra >= -1, "retry_after %ld", ra);
	acme_rfc3339(s);
	/* the same string as an email and as a nonce round-trips through
	 * jansson, or is refused as a whole */
	if (acme_payload_new_account(out, sizeof(out), s, true, NULL) > 0) {
		json_t *v = json_loads(out, 0, NULL);
		FZ_ASSERT(v != NULL, "payload is not JSON: %s", out);
		const char *c = json_string_value(json_array_get(json_object_get(v, "contact"), 0));
		FZ_ASSERT(*s == '\0' || (c && strncmp(c, "mailto:", 7) == 0 && strcmp(c + 7, s) == 0),
			  "contact changed");
		json_decref(v);
	}
	if (acme_protected(out, sizeof(out), s, "https://p/o", "https://p/a/1", NULL) > 0) {
		json_t *v = json_loads(out, 0, NULL);
		FZ_ASSERT(v != NULL, "header is not JSON: %s", out);
		const char *nonce = json_string_value(json_object_get(v, "nonce"));
		FZ_ASSERT(nonce && strcmp(nonce, s) == 0, "nonce changed");
		json_decref(v);
	}
	const char *names[] = {s};
	acme_payload_new_order(out, sizeof(out), names, 1, s, s);
	acme_payload_new_account(out, sizeof(out), NULL, false, s); /* as the EAB's JSON */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *j = malloc(size ? size : 1);

	if (!j)
		abort();
	memcpy(j, data, size);
	directory(j, size);
	order(j, size);
	authz(j, size);
	others(j, size);
	free(j);

	spliced("{\"status\":\"pending\",\"finalize\":\"https://p/f\",\"authorizations\":[", data,
		size, "]}", order);
	spliced("{\"status\":\"invalid\",\"finalize\":\"https://p/f\",\"authorizations\":[],"
		"\"error\":",
		data, size, "}", order);
	spliced("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\",\"value\":\"a.b\"},"
		"\"challenges\":[",
		data, size, "]}", authz);
	spliced("{\"newNonce\":\"https://p/n\",\"newAccount\":\"https://p/a\","
		"\"newOrder\":\"https://p/o\",\"meta\":",
		data, size, "}", directory);
	spliced("{\"suggestedWindow\":{\"start\":\"", data, size,
		"\",\"end\":\"2030-01-01T00:00:00Z\"}}", others);

	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	as_string(s);
	free(s);
	return 0;
}
