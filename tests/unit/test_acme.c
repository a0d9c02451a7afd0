/* Tests proto/acme.c, proto/acme_json.c and proto/acme_payload.c, on the
 * examples of RFC 8555 and documents shaped like pebble 2.4.0's. */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "proto/acme.h"
#include "proto/httpdate.h"
#include "tests/unit/check_run.h"

#define ERR_HAS(err, s)                                                                        \
	ck_assert_msg(strstr((err), (s)) != NULL, "error \"%s\" lacks \"%s\"", (err), (s))

/* RFC 8555 §7.1.1. */
static const char rfc_directory[] =
    "{\n"
    "  \"newNonce\": \"https://example.com/acme/new-nonce\",\n"
    "  \"newAccount\": \"https://example.com/acme/new-account\",\n"
    "  \"newOrder\": \"https://example.com/acme/new-order\",\n"
    "  \"newAuthz\": \"https://example.com/acme/new-authz\",\n"
    "  \"revokeCert\": \"https://example.com/acme/revoke-cert\",\n"
    "  \"keyChange\": \"https://example.com/acme/key-change\",\n"
    "  \"meta\": {\n"
    "    \"termsOfService\": \"https://example.com/acme/terms/2017-5-30\",\n"
    "    \"website\": \"https://www.example.com/\",\n"
    "    \"caaIdentities\": [\"example.com\"],\n"
    "    \"externalAccountRequired\": false\n"
    "  }\n"
    "}\n";

/* pebble 2.4.0's, plus what newer CAs add (renewalInfo, profiles). */
static const char pebble_directory[] =
    "{\"keyChange\":\"https://127.0.0.1:14000/rollover-account-key\","
    "\"meta\":{\"externalAccountRequired\":true,"
    "\"termsOfService\":\"data:text/plain,Do%20what%20thou%20wilt\","
    "\"profiles\":{\"default\":\"The profile you know\"}},"
    "\"newAccount\":\"https://127.0.0.1:14000/sign-me-up\","
    "\"newNonce\":\"https://127.0.0.1:14000/nonce-plz\","
    "\"newOrder\":\"https://127.0.0.1:14000/order-plz\","
    "\"renewalInfo\":\"https://127.0.0.1:14000/draft-ietf-acme-ari-03/renewalInfo\","
    "\"revokeCert\":\"https://127.0.0.1:14000/revoke-cert\"}";

/* RFC 8555 §7.1.3. */
static const char rfc_order[] =
    "{\n"
    "  \"status\": \"valid\",\n"
    "  \"expires\": \"2016-01-20T14:09:07.99Z\",\n"
    "  \"identifiers\": [\n"
    "    { \"type\": \"dns\", \"value\": \"www.example.org\" },\n"
    "    { \"type\": \"dns\", \"value\": \"example.org\" }\n"
    "  ],\n"
    "  \"notBefore\": \"2016-01-01T00:00:00Z\",\n"
    "  \"notAfter\": \"2016-01-08T00:00:00Z\",\n"
    "  \"authorizations\": [\n"
    "    \"https://example.com/acme/authz/PAniVnsZcis\",\n"
    "    \"https://example.com/acme/authz/r4HqLzrSrpI\"\n"
    "  ],\n"
    "  \"finalize\": \"https://example.com/acme/order/TOlocE8rfgo/finalize\",\n"
    "  \"certificate\": \"https://example.com/acme/cert/mAt3xBGaobw\"\n"
    "}\n";

/* RFC 8555 §7.1.4. */
static const char rfc_authz[] =
    "{\n"
    "  \"status\": \"valid\",\n"
    "  \"expires\": \"2015-03-01T14:09:07.99Z\",\n"
    "  \"identifier\": { \"type\": \"dns\", \"value\": \"www.example.org\" },\n"
    "  \"challenges\": [\n"
    "    {\n"
    "      \"url\": \"https://example.com/acme/chall/prV_B7yEyA4\",\n"
    "      \"type\": \"http-01\",\n"
    "      \"status\": \"valid\",\n"
    "      \"token\": \"DGyRejmCefe7v4NfDGDKfA\",\n"
    "      \"validated\": \"2014-12-01T12:05:58.16Z\"\n"
    "    }\n"
    "  ],\n"
    "  \"wildcard\": false\n"
    "}\n";

/* RFC 8555 §6.7.1. */
static const char rfc_problem[] =
    "{\n"
    "  \"type\": \"urn:ietf:params:acme:error:malformed\",\n"
    "  \"detail\": \"Some of the identifiers requested were rejected\",\n"
    "  \"subproblems\": [\n"
    "    {\n"
    "      \"type\": \"urn:ietf:params:acme:error:malformed\",\n"
    "      \"detail\": \"Invalid underscore in DNS name \\\"_example.org\\\"\",\n"
    "      \"identifier\": { \"type\": \"dns\", \"value\": \"_example.org\" }\n"
    "    },\n"
    "    {\n"
    "      \"type\": \"urn:ietf:params:acme:error:rejectedIdentifier\",\n"
    "      \"detail\": \"This CA will not issue for \\\"example.net\\\"\",\n"
    "      \"identifier\": { \"type\": \"dns\", \"value\": \"example.net\" }\n"
    "    }\n"
    "  ]\n"
    "}\n";

static int dir(const char *j, struct acme_directory *d, char *err)
{
	return acme_parse_directory(j, strlen(j), d, err, 256);
}

static int order(const char *j, struct acme_order *o, char *err)
{
	return acme_parse_order(j, strlen(j), o, err, 256);
}

static int authz(const char *j, struct acme_authz *a, char *err)
{
	return acme_parse_authz(j, strlen(j), a, err, 256);
}

START_TEST(directory_rfc)
{
	struct acme_directory d;
	char err[256] = "";

	ck_assert_int_eq(dir(rfc_directory, &d, err), 0);
	ck_assert_str_eq(d.new_nonce, "https://example.com/acme/new-nonce");
	ck_assert_str_eq(d.new_account, "https://example.com/acme/new-account");
	ck_assert_str_eq(d.new_order, "https://example.com/acme/new-order");
	ck_assert_str_eq(d.renewal_info, "");
	ck_assert_str_eq(d.terms, "https://example.com/acme/terms/2017-5-30");
	ck_assert(!d.eab_required);
}
END_TEST

START_TEST(directory_pebble)
{
	struct acme_directory d;
	char err[256] = "";

	ck_assert_int_eq(dir(pebble_directory, &d, err), 0);
	ck_assert_str_eq(d.new_nonce, "https://127.0.0.1:14000/nonce-plz");
	ck_assert_str_eq(d.renewal_info,
			 "https://127.0.0.1:14000/draft-ietf-acme-ari-03/renewalInfo");
	ck_assert_str_eq(d.terms, "data:text/plain,Do%20what%20thou%20wilt");
	ck_assert(d.eab_required);
	/* null members are absent, no meta at all is fine */
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\",\"renewalInfo\":null,\"meta\":null}",
			     &d, err),
			 0);
	ck_assert_str_eq(d.renewal_info, "");
	ck_assert_str_eq(d.terms, "");
	ck_assert_uint_eq(d.nprofiles, 0);
	/* meta.profiles: the names kept, one with a space skipped */
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\",\"meta\":{\"profiles\":{"
			     "\"classic\":\"The same profile\",\"bad name\":\"x\","
			     "\"shortlived\":\"6 days\"}}}",
			     &d, err),
			 0);
	ck_assert_uint_eq(d.nprofiles, 2);
	ck_assert_str_eq(d.profiles[0], "classic");
	ck_assert_str_eq(d.profiles[1], "shortlived");
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\",\"meta\":{\"profiles\":[\"classic\"]}}",
			     &d, err),
			 -1);
	ck_assert(!acme_profile_ok(""));
	ck_assert(!acme_profile_ok("a/b"));
	ck_assert(acme_profile_ok("tls-server_1.0"));
}
END_TEST

START_TEST(directory_refused)
{
	struct acme_directory d;
	char err[256];

	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\n\"newAccount\":", &d, err), -1);
	ERR_HAS(err, "directory: not JSON: line 2 column");
	ck_assert_int_eq(dir("[1,2]", &d, err), -1);
	ERR_HAS(err, "directory: not a JSON object");
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newAccount\":\"https://a/a\"}", &d,
			     err),
			 -1);
	ERR_HAS(err, "directory: newOrder: missing");
	ck_assert_int_eq(dir("{\"newNonce\":7,\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\"}",
			     &d, err),
			 -1);
	ERR_HAS(err, "directory: newNonce: not a string");
	ck_assert_int_eq(dir("{\"newNonce\":\"http://a/n\",\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\"}",
			     &d, err),
			 -1);
	ERR_HAS(err, "directory: newNonce: not an https URL");
	ck_assert_str_eq(d.new_nonce, ""); /* nothing half-kept */
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newAccount\":\"https://a/a\","
			     "\"newOrder\":\"https://a/o\",\"meta\":{\"externalAccountRequired\":1}}",
			     &d, err),
			 -1);
	ERR_HAS(err, "directory: meta: externalAccountRequired: not a boolean");
	ck_assert_int_eq(dir("{\"newNonce\":\"https://a/n\",\"newNonce\":\"https://b/n\","
			     "\"newAccount\":\"https://a/a\",\"newOrder\":\"https://a/o\"}",
			     &d, err),
			 -1);
	ERR_HAS(err, "duplicate");
}
END_TEST

START_TEST(order_rfc)
{
	struct acme_order o;
	char err[256] = "";

	ck_assert_int_eq(order(rfc_order, &o, err), 0);
	ck_assert_int_eq(o.status, ACME_ST_VALID);
	ck_assert_str_eq(o.finalize, "https://example.com/acme/order/TOlocE8rfgo/finalize");
	ck_assert_str_eq(o.certificate, "https://example.com/acme/cert/mAt3xBGaobw");
	ck_assert_uint_eq(o.nauthz, 2);
	ck_assert_str_eq(o.authz[0], "https://example.com/acme/authz/PAniVnsZcis");
	ck_assert_str_eq(o.authz[1], "https://example.com/acme/authz/r4HqLzrSrpI");
	ck_assert_str_eq(o.error.type, "");
}
END_TEST

START_TEST(order_states)
{
	static const struct {
		const char *name;
		enum acme_status st;
	} states[] = {{"pending", ACME_ST_PENDING}, {"ready", ACME_ST_READY},
		      {"processing", ACME_ST_PROCESSING}, {"valid", ACME_ST_VALID},
		      {"invalid", ACME_ST_INVALID}};
	struct acme_order o;
	char j[1024], err[256];

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		snprintf(j, sizeof(j),
			 "{\"status\":\"%s\",\"expires\":\"2024-01-01T01:00:00Z\","
			 "\"identifiers\":[{\"type\":\"dns\",\"value\":\"a.example\"}],"
			 "\"finalize\":\"https://127.0.0.1:14000/finalize-order/Xyz\","
			 "\"authorizations\":[\"https://127.0.0.1:14000/authZ/abc\"],"
			 "\"certificate\":null}",
			 states[i].name);
		ck_assert_int_eq(order(j, &o, err), 0);
		ck_assert_int_eq(o.status, states[i].st);
		ck_assert_str_eq(o.certificate, "");
		ck_assert_uint_eq(o.nauthz, 1);
	}
	/* pebble escapes & as \u0026, even in URLs */
	ck_assert_int_eq(
	    order("{\"status\":\"valid\",\"finalize\":\"https://p/f\",\"authorizations\":[],"
		  "\"certificate\":\"https://127.0.0.1:14000/certZ/1?a=1\\u0026b=2\"}",
		  &o, err),
	    0);
	ck_assert_str_eq(o.certificate, "https://127.0.0.1:14000/certZ/1?a=1&b=2");
	/* an invalid order carries its error, subproblems folded in */
	ck_assert_int_eq(
	    order("{\"status\":\"invalid\",\"finalize\":\"https://p/f\",\"authorizations\":[],"
		  "\"error\":{\"type\":\"urn:ietf:params:acme:error:unauthorized\","
		  "\"detail\":\"Error finalizing order\",\"subproblems\":[{\"type\":"
		  "\"urn:ietf:params:acme:error:caa\",\"detail\":\"CAA forbids\","
		  "\"identifier\":{\"type\":\"dns\",\"value\":\"b.example\"}}]}}",
		  &o, err),
	    0);
	ck_assert_int_eq(o.status, ACME_ST_INVALID);
	ck_assert_str_eq(o.error.type, "urn:ietf:params:acme:error:unauthorized");
	ck_assert_str_eq(o.error.detail, "Error finalizing order; b.example: CAA forbids (caa)");
}
END_TEST

START_TEST(order_refused)
{
	struct acme_order o;
	char err[256], j[4096];

	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":5,\"authorizations\":[]}", &o,
			       err),
			 -1);
	ERR_HAS(err, "order: finalize: not a string");
	ck_assert_int_eq(order("{\"status\":\"weird\",\"finalize\":\"https://p/f\","
			       "\"authorizations\":[]}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: status: unknown value \"weird\"");
	ck_assert_int_eq(order("{\"finalize\":\"https://p/f\",\"authorizations\":[]}", &o, err),
			 -1);
	ERR_HAS(err, "order: status: missing");
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/f\"}", &o, err), -1);
	ERR_HAS(err, "order: authorizations: missing");
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/f\","
			       "\"authorizations\":{}}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: authorizations: not an array");
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/f\","
			       "\"authorizations\":[\"https://p/1\",\"https://p/ 2\"]}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: authorizations[1]: not an https URL");
	ck_assert_uint_eq(o.nauthz, 0);
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/f\","
			       "\"authorizations\":[3]}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: authorizations[0]: not a string");
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/\\\"f\","
			       "\"authorizations\":[]}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: finalize: not an https URL");
	ck_assert_int_eq(order("{\"status\":\"valid\",\"finalize\":\"https://p/f\","
			       "\"authorizations\":[],\"error\":\"boom\"}",
			       &o, err),
			 -1);
	ERR_HAS(err, "order: error: not an object");

	/* 17 authorizations: one more than names a site may have */
	size_t n = (size_t)snprintf(j, sizeof(j),
				    "{\"status\":\"pending\",\"finalize\":\"https://p/f\","
				    "\"authorizations\":[");
	for (int i = 0; i <= ACME_MAX_AUTHZ; i++)
		n += (size_t)snprintf(j + n, sizeof(j) - n, "%s\"https://p/a/%d\"", i ? "," : "", i);
	snprintf(j + n, sizeof(j) - n, "]}");
	ck_assert_int_eq(order(j, &o, err), -1);
	ERR_HAS(err, "order: authorizations: 17 of them, at most 16");
}
END_TEST

/* A URL of exactly ACME_URL_MAX - 1 bytes fits; one more is refused, not cut. */
START_TEST(order_long_url)
{
	static char url[ACME_URL_MAX + 1], j[ACME_URL_MAX + 200];
	struct acme_order o;
	char err[256];

	memset(url, 'a', sizeof(url) - 1);
	memcpy(url, "https://p/", 10);
	url[ACME_URL_MAX - 1] = '\0';
	snprintf(j, sizeof(j),
		 "{\"status\":\"valid\",\"finalize\":\"%s\",\"authorizations\":[]}", url);
	ck_assert_int_eq(order(j, &o, err), 0);
	ck_assert_uint_eq(strlen(o.finalize), ACME_URL_MAX - 1);
	url[ACME_URL_MAX - 1] = 'a';
	snprintf(j, sizeof(j),
		 "{\"status\":\"valid\",\"finalize\":\"%s\",\"authorizations\":[]}", url);
	ck_assert_int_eq(order(j, &o, err), -1);
	ERR_HAS(err, "order: finalize: too long (1024 bytes, at most 1023)");
	ck_assert_str_eq(o.finalize, "");
}
END_TEST

START_TEST(authz_rfc)
{
	struct acme_authz a;
	char err[256] = "";

	ck_assert_int_eq(authz(rfc_authz, &a, err), 0);
	ck_assert_int_eq(a.status, ACME_ST_VALID);
	ck_assert_str_eq(a.identifier, "www.example.org");
	ck_assert(!a.wildcard);
	ck_assert_uint_eq(a.nchal, 1);
	ck_assert_str_eq(a.chal[0].type, "http-01");
	ck_assert_str_eq(a.chal[0].url, "https://example.com/acme/chall/prV_B7yEyA4");
	ck_assert_str_eq(a.chal[0].token, "DGyRejmCefe7v4NfDGDKfA");
	ck_assert_int_eq(a.chal[0].status, ACME_ST_VALID);
	ck_assert_str_eq(a.error.type, "");
}
END_TEST

/* pebble's shape: three challenges, the failed one with its error; a type
 * we do not know is skipped. */
START_TEST(authz_pebble_invalid)
{
	static const char j[] =
	    "{\"status\":\"invalid\",\"identifier\":{\"type\":\"dns\",\"value\":\"a.example\"},"
	    "\"challenges\":["
	    "{\"type\":\"dns-01\",\"url\":\"https://127.0.0.1:14000/chalZ/d\","
	    "\"token\":\"tok-D_1\",\"status\":\"pending\"},"
	    "{\"type\":\"onion-csr-01\",\"url\":\"https://127.0.0.1:14000/chalZ/o\"},"
	    "{\"type\":\"http-01\",\"url\":\"https://127.0.0.1:14000/chalZ/h\","
	    "\"token\":\"tokH\",\"status\":\"invalid\",\"validated\":\"2024-01-01T00:00:00Z\","
	    "\"error\":{\"type\":\"urn:ietf:params:acme:error:connection\","
	    "\"detail\":\"127.0.0.1: Fetching http://a.example/.well-known/acme-challenge/tokH:\\n"
	    "Connection refused\",\"status\":400}},"
	    "{\"type\":\"tls-alpn-01\",\"url\":\"https://127.0.0.1:14000/chalZ/t\","
	    "\"token\":\"tokT\",\"status\":\"pending\"}],"
	    "\"expires\":\"2024-01-01T01:00:00Z\",\"wildcard\":null}";
	struct acme_authz a;
	char err[256] = "";

	ck_assert_int_eq(authz(j, &a, err), 0);
	ck_assert_int_eq(a.status, ACME_ST_INVALID);
	ck_assert_uint_eq(a.nchal, 3);
	ck_assert_str_eq(a.chal[0].type, "dns-01");
	ck_assert_str_eq(a.chal[1].type, "http-01");
	ck_assert_int_eq(a.chal[1].status, ACME_ST_INVALID);
	ck_assert_str_eq(a.chal[2].type, "tls-alpn-01");
	ck_assert_str_eq(a.chal[2].token, "tokT");
	ck_assert_str_eq(a.error.type, "urn:ietf:params:acme:error:connection");
	/* the newline from the network became a space */
	ERR_HAS(a.error.detail, "acme-challenge/tokH: Connection refused");
}
END_TEST

START_TEST(authz_refused)
{
	struct acme_authz a;
	char err[256];

	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\","
			       "\"value\":\"a.example\"},\"challenges\":[{\"type\":\"http-01\","
			       "\"url\":\"https://p/c\",\"token\":\"../../etc/passwd\","
			       "\"status\":\"pending\"}]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: challenges[0]: token: not a base64url token");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\","
			       "\"value\":\"a.example\"},\"challenges\":[{\"type\":\"http-01\","
			       "\"url\":\"http://p/c\",\"token\":\"t\",\"status\":\"pending\"}]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: challenges[0]: url: not an https URL");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"ip\","
			       "\"value\":\"a.example\"},\"challenges\":[]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: identifier: type: \"ip\", not \"dns\"");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\","
			       "\"value\":\"a b\"},\"challenges\":[]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: identifier: value: not a DNS name");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"challenges\":[]}", &a, err), -1);
	ERR_HAS(err, "authz: identifier: missing");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\","
			       "\"value\":\"a.example\"},\"challenges\":[7]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: challenges[0]: not an object");
	ck_assert_int_eq(authz("{\"status\":\"pending\",\"identifier\":{\"type\":\"dns\","
			       "\"value\":\"a.example\"},\"wildcard\":\"no\",\"challenges\":[]}",
			       &a, err),
			 -1);
	ERR_HAS(err, "authz: wildcard: not a boolean");
	ck_assert_int_eq(authz("{\"status\":\"pending\"", &a, err), -1);
	ERR_HAS(err, "authz: not JSON: line 1 column");
}
END_TEST

START_TEST(problem_subproblems)
{
	struct acme_problem p;

	ck_assert_int_eq(acme_parse_problem(rfc_problem, strlen(rfc_problem), &p), 0);
	ck_assert_str_eq(p.type, "urn:ietf:params:acme:error:malformed");
	ck_assert_str_eq(p.detail,
			 "Some of the identifiers requested were rejected; _example.org: Invalid "
			 "underscore in DNS name \"_example.org\" (malformed); example.net: This CA "
			 "will not issue for \"example.net\" (rejectedIdentifier)");
	/* badNonce as pebble sends it */
	static const char bad_nonce[] =
	    "{\"type\":\"urn:ietf:params:acme:error:badNonce\","
	    "\"detail\":\"JWS has an invalid anti-replay nonce: \\\"zzz\\\"\",\"status\":400}";
	ck_assert_int_eq(acme_parse_problem(bad_nonce, strlen(bad_nonce), &p), 0);
	ck_assert_str_eq(p.type, "urn:ietf:params:acme:error:badNonce");
	ck_assert_str_eq(p.detail, "JWS has an invalid anti-replay nonce: \"zzz\"");
	/* not JSON: the reason lands in detail, type stays empty */
	ck_assert_int_eq(acme_parse_problem("<html>", 6, &p), -1);
	ck_assert_str_eq(p.type, "");
	ERR_HAS(p.detail, "problem: not JSON: line 1 column");
	ck_assert_int_eq(acme_parse_problem("{\"type\":1}", 10, &p), -1);
	ERR_HAS(p.detail, "problem: type: not a string");
}
END_TEST

/* A detail longer than the room is cut at a character boundary, marked. */
START_TEST(problem_long_detail)
{
	static char j[4096];
	struct acme_problem p;
	size_t n = (size_t)snprintf(j, sizeof(j), "{\"type\":\"x:y\",\"detail\":\"");

	for (int i = 0; i < 600; i++)
		n += (size_t)snprintf(j + n, sizeof(j) - n, "\xc3\xa9"); /* é */
	snprintf(j + n, sizeof(j) - n, "\"}");
	ck_assert_int_eq(acme_parse_problem(j, strlen(j), &p), 0);
	size_t len = strlen(p.detail);
	ck_assert_uint_le(len, sizeof(p.detail) - 1);
	ck_assert_str_eq(p.detail + len - 3, "...");
	ck_assert_uint_eq((len - 3) % 2, 0); /* whole é's only */
	json_t *v = json_string(p.detail);   /* NULL when not UTF-8 */
	ck_assert_ptr_nonnull(v);
	json_decref(v);
}
END_TEST

START_TEST(account_and_renewal_info)
{
	enum acme_status st;
	time_t s, e;
	char err[256];
	const char *j = "{\"status\":\"valid\",\"contact\":[\"mailto:a@b\"],\"orders\":"
			"\"https://p/list-orderz/1\"}";

	ck_assert_int_eq(acme_parse_account_status(j, strlen(j), &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st, ACME_ST_VALID);
	j = "{\"status\":\"deactivated\"}";
	ck_assert_int_eq(acme_parse_account_status(j, strlen(j), &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st, ACME_ST_DEACTIVATED);
	j = "{\"status\":true}";
	ck_assert_int_eq(acme_parse_account_status(j, strlen(j), &st, err, sizeof(err)), -1);
	ERR_HAS(err, "account: status: not a string");

	/* RFC 9773 §4.2's example */
	j = "{\"suggestedWindow\":{\"start\":\"2025-01-02T04:00:00Z\","
	    "\"end\":\"2025-01-03T04:00:00Z\"},"
	    "\"explanationURL\":\"https://acme.example.com/docs/ari\"}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), 0);
	ck_assert_int_eq(s, 1735790400);
	ck_assert_int_eq(e, 1735876800);
	j = "{\"suggestedWindow\":{\"start\":\"2025-01-03T04:00:00Z\","
	    "\"end\":\"2025-01-02T04:00:00Z\"}}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), -1);
	ERR_HAS(err, "renewalInfo: suggestedWindow: end not after start");
	j = "{\"suggestedWindow\":{\"start\":\"2025-01-03T04:00:00Z\","
	    "\"end\":\"2025-01-03T04:00:00Z\"}}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), -1);
	ERR_HAS(err, "renewalInfo: suggestedWindow: end not after start");
	j = "{\"suggestedWindow\":{\"start\":\"yesterday\",\"end\":\"2025-01-02T04:00:00Z\"}}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), -1);
	ERR_HAS(err, "renewalInfo: suggestedWindow: start: not an RFC 3339 time");
	j = "{\"suggestedWindow\":[]}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), -1);
	ERR_HAS(err, "renewalInfo: suggestedWindow: not an object");
	j = "{}";
	ck_assert_int_eq(acme_parse_renewal_info(j, strlen(j), &s, &e, err, sizeof(err)), -1);
	ERR_HAS(err, "renewalInfo: suggestedWindow: missing");
}
END_TEST

START_TEST(validators)
{
	ck_assert(acme_url_ok("https://127.0.0.1:14000/nonce-plz"));
	ck_assert(acme_url_ok("HTTPS://ca.example/x?a=1&b=2"));
	ck_assert(!acme_url_ok("http://ca.example/x"));
	ck_assert(!acme_url_ok("https://"));
	ck_assert(!acme_url_ok("https:///path"));
	ck_assert(!acme_url_ok("https://ca.example/a b"));
	ck_assert(!acme_url_ok("https://ca.example/a\"b"));
	ck_assert(!acme_url_ok("https://ca.example/a\\b"));
	ck_assert(!acme_url_ok("https://ca.example/a\r\nX: y"));
	ck_assert(!acme_url_ok("https://ca.example/\xc3\xa9"));

	ck_assert(acme_token_ok("DGyRejmCefe7v4NfDGDKfA"));
	ck_assert(acme_token_ok("a-b_C9"));
	ck_assert(!acme_token_ok(""));
	ck_assert(!acme_token_ok("a/b"));
	ck_assert(!acme_token_ok("a.b"));
	ck_assert(!acme_token_ok("abc="));
	char tok[ACME_TOKEN_MAX + 2];
	memset(tok, 'A', sizeof(tok));
	tok[ACME_TOKEN_MAX] = '\0';
	ck_assert(acme_token_ok(tok));
	tok[ACME_TOKEN_MAX] = 'A';
	tok[ACME_TOKEN_MAX + 1] = '\0';
	ck_assert(!acme_token_ok(tok));

	ck_assert(acme_name_ok("example.org"));
	ck_assert(acme_name_ok("a-1.B2.example"));
	ck_assert(acme_name_ok("localhost"));
	ck_assert(!acme_name_ok("*.example.org"));
	ck_assert(!acme_name_ok("example.org."));
	ck_assert(!acme_name_ok(".example.org"));
	ck_assert(!acme_name_ok("a..b"));
	ck_assert(!acme_name_ok("-a.b"));
	ck_assert(!acme_name_ok("a-.b"));
	ck_assert(!acme_name_ok("_a.b"));
	ck_assert(!acme_name_ok(""));
	char name[300], label[65];
	memset(label, 'a', 64);
	label[64] = '\0';
	ck_assert(!acme_name_ok(label)); /* 64-byte label */
	label[63] = '\0';
	ck_assert(acme_name_ok(label));
	snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label, label, label, label); /* 253 */
	ck_assert_uint_eq(strlen(name), 253);
	ck_assert(acme_name_ok(name));
	snprintf(name, sizeof(name), "%s.%s.%s.%.62s", label, label, label, label); /* 254 */
	ck_assert(!acme_name_ok(name));
}
END_TEST

START_TEST(payload_new_account)
{
	char out[512];
	json_error_t e;

	int n = acme_payload_new_account(out, sizeof(out), "ad\"min@exa\\mple.org", true, NULL);
	ck_assert_int_eq(n, (int)strlen(out));
	json_t *v = json_loads(out, 0, &e);
	ck_assert_ptr_nonnull(v);
	ck_assert(json_is_true(json_object_get(v, "termsOfServiceAgreed")));
	json_t *c = json_object_get(v, "contact");
	ck_assert_uint_eq(json_array_size(c), 1);
	ck_assert_str_eq(json_string_value(json_array_get(c, 0)), "mailto:ad\"min@exa\\mple.org");
	ck_assert_uint_eq(json_object_size(v), 2);
	json_decref(v);
	ck_assert_ptr_nonnull(strstr(out, "ad\\\"min"));

	/* with an EAB JWS, no contact, terms not agreed */
	const char *eab = "{\"protected\":\"eyJ\",\"payload\":\"eyK\",\"signature\":\"c2ln\"}";
	ck_assert_int_gt(acme_payload_new_account(out, sizeof(out), NULL, false, eab), 0);
	ck_assert_str_eq(out, "{\"externalAccountBinding\":{\"protected\":\"eyJ\",\"payload\":"
			      "\"eyK\",\"signature\":\"c2ln\"}}");
	/* an EAB that is not one object is refused, as is no room */
	ck_assert_int_eq(acme_payload_new_account(out, sizeof(out), NULL, true, "{\"a\":1},{}"),
			 -1);
	ck_assert_int_eq(acme_payload_new_account(out, sizeof(out), NULL, true, "[]"), -1);
	ck_assert_int_eq(acme_payload_new_account(out, sizeof(out), NULL, false, NULL), 2);
	ck_assert_str_eq(out, "{}");
	ck_assert_int_eq(acme_payload_new_account(out, 2, NULL, false, NULL), -1);
	ck_assert_int_eq(acme_payload_new_account(out, 3, NULL, false, NULL), 2);
	/* not UTF-8 */
	ck_assert_int_eq(acme_payload_new_account(out, sizeof(out), "\xff@x", true, NULL), -1);
}
END_TEST

START_TEST(payload_order_finalize)
{
	const char *names[] = {"a.example", "b.example"};
	char out[512];

	ck_assert_int_gt(acme_payload_new_order(out, sizeof(out), names, 2, NULL, NULL), 0);
	ck_assert_str_eq(out, "{\"identifiers\":[{\"type\":\"dns\",\"value\":\"a.example\"},"
			      "{\"type\":\"dns\",\"value\":\"b.example\"}]}");
	ck_assert_int_gt(acme_payload_new_order(out, sizeof(out), names, 1,
						"aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE", NULL),
			 0);
	ck_assert_str_eq(out, "{\"identifiers\":[{\"type\":\"dns\",\"value\":\"a.example\"}],"
			      "\"replaces\":\"aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE\"}");
	ck_assert_int_gt(acme_payload_new_order(out, sizeof(out), names, 1, NULL, "shortlived"), 0);
	ck_assert_str_eq(out, "{\"identifiers\":[{\"type\":\"dns\",\"value\":\"a.example\"}],"
			      "\"profile\":\"shortlived\"}");
	const char *odd[] = {"a\"b"};
	ck_assert_int_gt(acme_payload_new_order(out, sizeof(out), odd, 1, NULL, NULL), 0);
	json_t *v = json_loads(out, 0, NULL);
	json_t *id = json_array_get(json_object_get(v, "identifiers"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(id, "value")), "a\"b");
	json_decref(v);
	ck_assert_int_eq(acme_payload_new_order(out, sizeof(out), names, 0, NULL, NULL), -1);
	ck_assert_int_eq(acme_payload_new_order(out, 20, names, 2, NULL, NULL), -1);

	ck_assert_int_eq(acme_payload_finalize(out, sizeof(out), "MIIB_x-y"), 18);
	ck_assert_str_eq(out, "{\"csr\":\"MIIB_x-y\"}");
	ck_assert_int_eq(acme_payload_finalize(out, 18, "MIIB_x-y"), -1);
}
END_TEST

START_TEST(protected_headers)
{
	const char *jwk = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"xx\",\"y\":\"yy\"}";
	char out[512];

	ck_assert_int_gt(acme_protected(out, sizeof(out), "n0nce", "https://p/new-acct", NULL, jwk),
			 0);
	ck_assert_str_eq(out, "{\"alg\":\"ES256\",\"nonce\":\"n0nce\",\"url\":\"https://p/new-acct\","
			      "\"jwk\":{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"xx\",\"y\":\"yy\"}}");
	ck_assert_int_gt(acme_protected(out, sizeof(out), "n0nce", "https://p/order",
					"https://p/acct/1", jwk),
			 0);
	ck_assert_str_eq(out, "{\"alg\":\"ES256\",\"kid\":\"https://p/acct/1\",\"nonce\":\"n0nce\","
			      "\"url\":\"https://p/order\"}");
	/* a nonce with a quote is escaped, not trusted */
	ck_assert_int_gt(acme_protected(out, sizeof(out), "a\"b", "https://p/o", "k", NULL), 0);
	json_t *v = json_loads(out, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(v, "nonce")), "a\"b");
	ck_assert_uint_eq(json_object_size(v), 4);
	json_decref(v);
	ck_assert_int_eq(acme_protected(out, sizeof(out), "n", "https://p/o", NULL, "not json"), -1);
	ck_assert_int_eq(acme_protected(out, sizeof(out), "n", "https://p/o", NULL, NULL), -1);
	ck_assert_int_eq(acme_protected(out, sizeof(out), "n", NULL, "k", NULL), -1);

	ck_assert_int_gt(acme_protected_eab(out, sizeof(out), "kid-1", "https://p/new-acct"), 0);
	ck_assert_str_eq(out, "{\"alg\":\"HS256\",\"kid\":\"kid-1\",\"url\":\"https://p/new-acct\"}");
	ck_assert_int_eq(acme_protected_eab(out, 10, "kid-1", "https://p/new-acct"), -1);
}
END_TEST

START_TEST(retry_after)
{
	const time_t now = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */

	ck_assert_int_eq(acme_retry_after("120", now), 120);
	ck_assert_int_eq(acme_retry_after(" 0 ", now), 0);
	ck_assert_int_eq(acme_retry_after("99999999999999999999999", now), LONG_MAX);
	ck_assert_int_eq(acme_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now), 60);
	ck_assert_int_eq(acme_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", now), 10);
	ck_assert_int_eq(acme_retry_after("Sun Nov  6 08:49:57 1994", now), 20);
	/* a date in the past means now */
	ck_assert_int_eq(acme_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", now), 0);
	ck_assert_int_eq(acme_retry_after("", now), -1);
	ck_assert_int_eq(acme_retry_after("soon", now), -1);
	ck_assert_int_eq(acme_retry_after("-5", now), -1);
	ck_assert_int_eq(acme_retry_after("12s", now), -1);
	ck_assert_int_eq(acme_retry_after("1.5", now), -1);
}
END_TEST

START_TEST(rfc3339)
{
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37Z"), 784111777);
	ck_assert_int_eq(acme_rfc3339("1994-11-06t08:49:37z"), 784111777);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37.123456789Z"), 784111777);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T10:49:37+02:00"), 784111777);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T03:19:37.5-05:30"), 784111777);
	ck_assert_int_eq(acme_rfc3339("2000-02-29T00:00:00Z"), 951782400);
	ck_assert_int_eq(acme_rfc3339("1970-01-01T00:00:00Z"), 0);
	ck_assert_int_eq(acme_rfc3339("9999-12-31T23:59:59Z"), 253402300799LL);
	ck_assert_int_eq(acme_rfc3339("2001-02-29T00:00:00Z"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37.Z"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T24:00:00Z"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-13-06T08:49:37Z"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37+0200"), -1);
	ck_assert_int_eq(acme_rfc3339("1994-11-06T08:49:37Zjunk"), -1);
	ck_assert_int_eq(acme_rfc3339(""), -1);
	/* what httpdate_rfc3339 prints parses back */
	char s[32];
	httpdate_rfc3339(1764574433, s);
	ck_assert_int_eq(acme_rfc3339(s), 1764574433);
}
END_TEST

#define DAY 86400

START_TEST(renew_at)
{
	const time_t nb = 1700000000;

	/* 90 days: day 60, +-2 % = +-1.8 days */
	ck_assert_int_eq(acme_renew_at(nb, nb + 90 * DAY, 0), nb + 60 * DAY);
	ck_assert_int_eq(acme_renew_at(nb, nb + 90 * DAY, 1), nb + 60 * DAY + 155520);
	ck_assert_int_eq(acme_renew_at(nb, nb + 90 * DAY, -1), nb + 60 * DAY - 155520);
	ck_assert_int_eq(acme_renew_at(nb, nb + 90 * DAY, 7), nb + 60 * DAY + 155520); /* clamped */
	ck_assert_int_eq(acme_renew_at(nb, nb + 45 * DAY, 0), nb + 30 * DAY);
	/* 10 days is short-lived: the half; just over it is not */
	ck_assert_int_eq(acme_renew_at(nb, nb + 10 * DAY, 0), nb + 5 * DAY);
	ck_assert_int_eq(acme_renew_at(nb, nb + 10 * DAY + 3, 0), nb + (10 * DAY + 3) / 3 * 2);
	ck_assert_int_eq(acme_renew_at(nb, nb + 6 * DAY, 0), nb + 3 * DAY);
	/* pebble's 120 s certificates */
	ck_assert_int_eq(acme_renew_at(nb, nb + 120, 0), nb + 60);
	ck_assert_int_eq(acme_renew_at(nb, nb + 120, 1), nb + 62);
	/* nothing valid: now */
	ck_assert_int_eq(acme_renew_at(nb, nb, 0), nb);
	ck_assert_int_eq(acme_renew_at(nb, nb - 5, 0), nb);
}
END_TEST

START_TEST(backoff)
{
	const time_t now = 1700000000;

	ck_assert_int_eq(acme_backoff(1, 0, now, 0), 60);
	ck_assert_int_eq(acme_backoff(2, 0, now, 0), 600);
	ck_assert_int_eq(acme_backoff(3, 0, now, 0), 3600);
	ck_assert_int_eq(acme_backoff(4, 0, now, 0), 21600);
	ck_assert_int_eq(acme_backoff(50, 0, now, 0), 21600);
	ck_assert_int_eq(acme_backoff(0, 0, now, 0), 60);
	ck_assert_int_eq(acme_backoff(4, 1, now, 0), 23760);
	ck_assert_int_eq(acme_backoff(4, -1, now, 0), 19440);
	ck_assert_int_eq(acme_backoff(2, 1, now, 0), 660);
	/* the floor: 60 s - 10 % is still 60 s */
	ck_assert_int_eq(acme_backoff(1, -1, now, 0), 60);
	/* half of what is left caps it: 2 h left, 6 h wanted */
	ck_assert_int_eq(acme_backoff(4, 0, now, now + 7200), 3600);
	ck_assert_int_eq(acme_backoff(3, 0, now, now + 7200), 3600);
	ck_assert_int_eq(acme_backoff(3, 0, now, now + 7202), 3600);
	ck_assert_int_eq(acme_backoff(2, 0, now, now + 7200), 600);
	/* ... but never under a minute, not even when already expired */
	ck_assert_int_eq(acme_backoff(4, 0, now, now + 100), 60);
	ck_assert_int_eq(acme_backoff(4, 0, now, now - 100), 60);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acme");
	TCase *tc = tcase_create("json");
	tcase_add_test(tc, directory_rfc);
	tcase_add_test(tc, directory_pebble);
	tcase_add_test(tc, directory_refused);
	tcase_add_test(tc, order_rfc);
	tcase_add_test(tc, order_states);
	tcase_add_test(tc, order_refused);
	tcase_add_test(tc, order_long_url);
	tcase_add_test(tc, authz_rfc);
	tcase_add_test(tc, authz_pebble_invalid);
	tcase_add_test(tc, authz_refused);
	tcase_add_test(tc, problem_subproblems);
	tcase_add_test(tc, problem_long_detail);
	tcase_add_test(tc, account_and_renewal_info);
	suite_add_tcase(s, tc);
	tc = tcase_create("payload");
	tcase_add_test(tc, validators);
	tcase_add_test(tc, payload_new_account);
	tcase_add_test(tc, payload_order_finalize);
	tcase_add_test(tc, protected_headers);
	suite_add_tcase(s, tc);
	tc = tcase_create("time");
	tcase_add_test(tc, retry_after);
	tcase_add_test(tc, rfc3339);
	tcase_add_test(tc, renew_at);
	tcase_add_test(tc, backoff);
	suite_add_tcase(s, tc);
	return check_run(s);
}
