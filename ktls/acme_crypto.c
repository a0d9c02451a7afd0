#include "ktls/acme_crypto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "ktls/tls_cert_facts.h"

/* P-256's coordinates and ES256's r and s are 32 bytes each. */
#define P256_LEN 32
#define PLACEHOLDER_ORG "ktlsd ACME placeholder"

/* ---- base64url (RFC 4648 §5) ---- */

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t b64url_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

int acme_b64url(const void *in, size_t n, char *out, size_t outlen)
{
	const uint8_t *p = in;
	size_t len = b64url_len(n), o = 0;

	if (len >= outlen || len > (size_t)INT32_MAX)
		return -1;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = b64url_alphabet[v >> 18 & 63];
		out[o++] = b64url_alphabet[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = b64url_alphabet[v >> 6 & 63];
		if (i + 2 < n)
			out[o++] = b64url_alphabet[v & 63];
	}
	out[o] = '\0';
	return (int)o;
}

static int b64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/* Strict: no padding, no white space, and the unused low bits of the last
 * character zero, so that one text decodes to one byte string (the EAB MAC
 * key a CA hands out is compared by what it decodes to). */
int acme_b64url_decode(const char *in, size_t n, uint8_t *out, size_t outlen)
{
	size_t o = 0, len = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
	uint32_t acc = 0;
	unsigned bits = 0;

	if (n % 4 == 1 || len > outlen || len > (size_t)INT32_MAX)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int v = b64url_value(in[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return acc ? -1 : (int)o;
}

/* A malloc'd base64url text of n bytes; NULL when out of memory. */
static char *b64url_dup(const void *in, size_t n)
{
	size_t cap = b64url_len(n) + 1;
	char *out = malloc(cap);

	if (out && acme_b64url(in, n, out, cap) < 0) {
		free(out);
		out = NULL;
	}
	return out;
}

/* ---- keys ---- */

EVP_PKEY *acme_key_new(void)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");

	ERR_clear_error();
	return k;
}

/* A mem BIO's bytes, copied into a malloc'd NUL-terminated buffer. */
static int bio_copy(BIO *b, char **out, size_t *len)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);

	if (n <= 0 || !(*out = malloc((size_t)n + 1)))
		return -1;
	memcpy(*out, data, (size_t)n);
	(*out)[n] = '\0';
	*len = (size_t)n;
	return 0;
}

/* The secure-heap BIO wipes what it held when it is freed, so that the
 * only copy of the key's PEM left is the caller's. */
int acme_key_to_pem(EVP_PKEY *k, char **pem, size_t *len)
{
	BIO *b = BIO_new(BIO_s_secmem());
	int rc = -1;

	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		rc = bio_copy(b, pem, len);
	BIO_free(b);
	ERR_clear_error();
	return rc;
}

/* OpenSSL's default for an encrypted key asks on the terminal, which a
 * daemon has none of: a key with a passphrase is refused instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return 0;
}

EVP_PKEY *acme_key_from_pem(const char *pem, size_t len)
{
	BIO *b = len <= INT32_MAX ? BIO_new_mem_buf(pem, (int)len) : NULL;
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL) : NULL;

	BIO_free(b);
	ERR_clear_error();
	return k;
}

/* ---- JWK and thumbprint (RFC 7517, RFC 7638) ---- */

static bool is_p256(EVP_PKEY *k)
{
	char group[32];

	return EVP_PKEY_is_a(k, "EC") &&
	       EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					      NULL) == 1 &&
	       strcmp(group, "prime256v1") == 0;
}

/* One affine coordinate as 32 big-endian bytes: RFC 7518 §6.2.1.2 wants the
 * full length, leading zeros kept (BN_bn2bin would drop them, 1 key in 256). */
static int coordinate(EVP_PKEY *k, const char *param, uint8_t out[P256_LEN])
{
	BIGNUM *bn = NULL;
	int rc = -1;

	if (EVP_PKEY_get_bn_param(k, param, &bn) == 1 &&
	    BN_bn2binpad(bn, out, P256_LEN) == P256_LEN)
		rc = 0;
	BN_free(bn);
	return rc;
}

/* Printed by hand, members in RFC 7638's lexicographic order and no white
 * space, because the thumbprint hashes this very text. */
int acme_jwk(EVP_PKEY *k, char *out, size_t outlen)
{
	uint8_t x[P256_LEN], y[P256_LEN];
	char bx[48], by[48];
	int rc = -1;

	if (k && is_p256(k) && coordinate(k, OSSL_PKEY_PARAM_EC_PUB_X, x) == 0 &&
	    coordinate(k, OSSL_PKEY_PARAM_EC_PUB_Y, y) == 0 &&
	    acme_b64url(x, sizeof(x), bx, sizeof(bx)) > 0 &&
	    acme_b64url(y, sizeof(y), by, sizeof(by)) > 0) {
		rc = snprintf(out, outlen,
			      "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", bx,
			      by);
		if (rc < 0 || (size_t)rc >= outlen)
			rc = -1;
	}
	ERR_clear_error();
	return rc;
}

int acme_thumbprint(EVP_PKEY *k, char *out, size_t outlen)
{
	char jwk[160];
	uint8_t md[SHA256_DIGEST_LENGTH];
	int n = acme_jwk(k, jwk, sizeof(jwk));

	if (n < 0)
		return -1;
	SHA256((const unsigned char *)jwk, (size_t)n, md);
	return acme_b64url(md, sizeof(md), out, outlen);
}

/* ---- JWS (RFC 7515 flattened JSON, RFC 7518 ES256 and HS256) ---- */

/* The JWS signing input, base64url(protected) "." base64url(payload),
 * malloc'd. An empty payload gives an empty second part: RFC 8555 §6.3's
 * POST-as-GET. */
static char *signing_input(const char *protected_json, const char *payload, size_t *len)
{
	char *p = b64url_dup(protected_json, strlen(protected_json));
	char *q = payload ? b64url_dup(payload, strlen(payload)) : strdup("");
	char *in = NULL;

	if (p && q && asprintf(&in, "%s.%s", p, q) < 0)
		in = NULL;
	free(p);
	free(q);
	if (in)
		*len = strlen(in);
	return in;
}

/* The flattened serialization, from the signing input and its signature. */
static char *jws_json(char *input, const uint8_t *sig, size_t siglen)
{
	char *dot = strchr(input, '.');
	char *s = b64url_dup(sig, siglen);
	char *out = NULL;

	if (dot && s) {
		*dot = '\0';
		if (asprintf(&out, "{\"protected\":\"%s\",\"payload\":\"%s\",\"signature\":\"%s\"}",
			     input, dot + 1, s) < 0)
			out = NULL;
	}
	free(s);
	return out;
}

/* An ECDSA signature as RFC 7518 §3.4 wants it: r and s, 32 bytes each,
 * big-endian and zero-padded, not the DER SEQUENCE OpenSSL produces. */
static int es256_sign(EVP_PKEY *k, const char *in, size_t len, uint8_t sig[2 * P256_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t der[80];
	size_t dlen = sizeof(der);
	ECDSA_SIG *es = NULL;
	int rc = -1;

	if (ctx && EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k) == 1 &&
	    EVP_DigestSign(ctx, der, &dlen, (const unsigned char *)in, len) == 1) {
		const unsigned char *p = der;
		es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
	}
	if (es && BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, P256_LEN) == P256_LEN &&
	    BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + P256_LEN, P256_LEN) == P256_LEN)
		rc = 0;
	ECDSA_SIG_free(es);
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

char *acme_jws_es256(EVP_PKEY *k, const char *protected_json, const char *payload)
{
	uint8_t sig[2 * P256_LEN];
	size_t len;
	char *in, *out = NULL;

	if (!k || !is_p256(k) || !(in = signing_input(protected_json, payload, &len)))
		return NULL;
	if (es256_sign(k, in, len, sig) == 0)
		out = jws_json(in, sig, sizeof(sig));
	free(in);
	return out;
}

char *acme_jws_hs256(const uint8_t *key, size_t klen, const char *protected_json,
		     const char *payload)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t len;
	char *in, *out = NULL;

	if (klen > INT32_MAX || !(in = signing_input(protected_json, payload, &len)))
		return NULL;
	if (HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)in, len, md, &mdlen))
		out = jws_json(in, md, mdlen);
	explicit_bzero(md, sizeof(md));
	free(in);
	ERR_clear_error();
	return out;
}

/* ---- CSR and certificates ---- */

/* names as dNSName entries, built one by one rather than through a
 * "DNS:a,DNS:b" configuration string, which a name with a comma in it
 * could extend. */
static GENERAL_NAMES *dns_names(const char *const *names, size_t n)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();

	for (size_t i = 0; gens && i < n; i++) {
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_IA5STRING *s = ASN1_IA5STRING_new();
		if (!g || !s || !ASN1_STRING_set(s, names[i], -1)) {
			GENERAL_NAME_free(g);
			ASN1_IA5STRING_free(s);
			goto fail;
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, s);
		if (!sk_GENERAL_NAME_push(gens, g)) {
			GENERAL_NAME_free(g);
			goto fail;
		}
	}
	return gens;
fail:
	GENERAL_NAMES_free(gens);
	return NULL;
}

char *acme_csr(EVP_PKEY *k, const char *const *names, size_t n)
{
	X509_REQ *req = X509_REQ_new();
	GENERAL_NAMES *gens = n ? dns_names(names, n) : NULL;
	STACK_OF(X509_EXTENSION) *exts = NULL;
	unsigned char *der = NULL;
	int dlen = -1;
	char *out = NULL;

	/* The subject stays empty (RFC 8555 §7.4 takes the names from the
	 * SANs): a CN is limited to 64 characters and some CAs refuse one. */
	if (req && gens && X509_REQ_set_version(req, 0) && X509_REQ_set_pubkey(req, k) &&
	    X509V3_add1_i2d(&exts, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1 &&
	    X509_REQ_add_extensions(req, exts) && X509_REQ_sign(req, k, EVP_sha256()) > 0)
		dlen = i2d_X509_REQ(req, &der);
	if (dlen > 0)
		out = b64url_dup(der, (size_t)dlen);
	OPENSSL_free(der);
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	GENERAL_NAMES_free(gens);
	X509_REQ_free(req);
	ERR_clear_error();
	return out;
}

/* A random positive 128-bit serial (RFC 5280 §4.1.2.2: at most 20 bytes,
 * positive), so that two placeholders never share issuer and serial. The
 * first byte is kept below 0x80 (positive without a 00 in front) and
 * nonzero (all 16 bytes). */
static int random_serial(X509 *x)
{
	uint8_t b[16];
	BIGNUM *bn;
	int rc = -1;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[0] = (b[0] & 0x7f) | 0x01;
	bn = BN_bin2bn(b, sizeof(b), NULL);
	if (bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		rc = 0;
	BN_free(bn);
	return rc;
}

/* The unsigned skeleton both self-signed certificates share: v3, a random
 * serial, valid [now + from, now + to), subject and issuer O=org (an empty
 * name when org is NULL), k's public key and the SANs. RFC 5280 §4.2.1.6
 * wants the SAN extension critical when the subject is empty. */
static X509 *self_signed(EVP_PKEY *k, const char *org, const char *const *names, size_t n,
			 long from, long to)
{
	X509 *x = X509_new();
	GENERAL_NAMES *gens = dns_names(names, n);
	X509_NAME *subject = x ? X509_get_subject_name(x) : NULL;
	bool ok = x && gens && X509_set_version(x, 2) && random_serial(x) == 0 &&
		  X509_gmtime_adj(X509_getm_notBefore(x), from) &&
		  X509_gmtime_adj(X509_getm_notAfter(x), to) && X509_set_pubkey(x, k);

	if (ok && org)
		ok = X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8,
						(const unsigned char *)org, -1, -1, 0) == 1;
	ok = ok && X509_set_issuer_name(x, subject) &&
	     X509_add1_ext_i2d(x, NID_subject_alt_name, gens, org ? 0 : 1, X509V3_ADD_DEFAULT) == 1;
	GENERAL_NAMES_free(gens);
	if (!ok) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

/* RFC 8737 §3: the extension's value is the DER of an OCTET STRING holding
 * SHA-256(key_authz), 04 20 <32 bytes>, which X.509 wraps in the extension's
 * own OCTET STRING. */
static int add_acme_identifier(X509 *x, const char *key_authz)
{
	uint8_t md[SHA256_DIGEST_LENGTH];
	ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1);
	ASN1_OCTET_STRING *inner = ASN1_OCTET_STRING_new(), *outer = ASN1_OCTET_STRING_new();
	X509_EXTENSION *ext = NULL;
	unsigned char *der = NULL;
	int dlen = -1, rc = -1;

	SHA256((const unsigned char *)key_authz, strlen(key_authz), md);
	if (oid && inner && outer && ASN1_OCTET_STRING_set(inner, md, sizeof(md)))
		dlen = i2d_ASN1_OCTET_STRING(inner, &der);
	if (dlen > 0 && ASN1_OCTET_STRING_set(outer, der, dlen))
		ext = X509_EXTENSION_create_by_OBJ(NULL, oid, 1, outer);
	if (ext && X509_add_ext(x, ext, -1))
		rc = 0;
	X509_EXTENSION_free(ext);
	OPENSSL_free(der);
	ASN1_OCTET_STRING_free(outer);
	ASN1_OCTET_STRING_free(inner);
	ASN1_OBJECT_free(oid);
	return rc;
}

int acme_alpn_cert(const char *name, const char *key_authz, EVP_PKEY **key, X509 **cert)
{
	EVP_PKEY *k = acme_key_new();
	X509 *x = k ? self_signed(k, NULL, &name, 1, -3600, 7 * 86400L) : NULL;

	if (!x || add_acme_identifier(x, key_authz) < 0 || X509_sign(x, k, EVP_sha256()) <= 0) {
		X509_free(x);
		EVP_PKEY_free(k);
		ERR_clear_error();
		return -1;
	}
	*key = k;
	*cert = x;
	return 0;
}

/* The key is written first, as the bundles in acme-dir have it; both go
 * through a secure-heap BIO, which wipes the key's bytes when freed. */
int acme_placeholder(const char *const *names, size_t n, char **bundle, size_t *len)
{
	EVP_PKEY *k = n ? acme_key_new() : NULL;
	X509 *x = k ? self_signed(k, PLACEHOLDER_ORG, names, n, 0, 7 * 86400L) : NULL;
	BIO *b = x ? BIO_new(BIO_s_secmem()) : NULL;
	int rc = -1;

	if (b && X509_sign(x, k, EVP_sha256()) > 0 &&
	    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) && PEM_write_bio_X509(b, x))
		rc = bio_copy(b, bundle, len);
	BIO_free(b);
	X509_free(x);
	EVP_PKEY_free(k);
	ERR_clear_error();
	return rc;
}

/* ---- what a certificate the CA sent says ---- */

static int time_of(const ASN1_TIME *t, time_t *out)
{
	struct tm tm;

	if (ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*out = timegm(&tm);
	return 0;
}

/* Lower-case hex of the serial's magnitude, as an ACME CA and openssl
 * x509 -serial print it (bar the case). */
static int serial_hex(X509 *x, char *out, size_t outlen)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	char *hex = bn ? BN_bn2hex(bn) : NULL;
	const char *h = hex && hex[0] == '-' ? hex + 1 : hex;
	int rc = -1;

	if (h && strlen(h) < outlen) {
		size_t i = 0;
		for (; h[i]; i++)
			out[i] = (char)tolower((unsigned char)h[i]);
		out[i] = '\0';
		rc = 0;
	}
	OPENSSL_free(hex);
	BN_free(bn);
	return rc;
}

/* RFC 9773 §4.1. The serial's content octets are its DER without the tag
 * and length: a positive serial whose top bit is set keeps its leading
 * zero byte (the RFC's example: 0x87654321 is "AIdlQyE"). */
static void ari_cert_id(X509 *x, char *out, size_t outlen)
{
	const ASN1_OCTET_STRING *kid = X509_get0_authority_key_id(x);
	unsigned char *der = NULL;
	int dlen = i2d_ASN1_INTEGER(X509_get0_serialNumber(x), &der);

	out[0] = '\0';
	if (kid && kid->length > 0 && dlen > 2) {
		/* tag, then a short or a long form length */
		int hdr = der[1] < 0x80 ? 2 : 2 + (der[1] & 0x7f);
		int k = hdr < dlen ? acme_b64url(kid->data, (size_t)kid->length, out, outlen) : -1;
		if (k < 0 || (size_t)k + 2 > outlen ||
		    acme_b64url(der + hdr, (size_t)(dlen - hdr), out + k + 1, outlen - (size_t)k - 1) < 0)
			out[0] = '\0';
		else
			out[k] = '.';
	}
	OPENSSL_free(der);
}

static bool is_placeholder(X509 *x)
{
	char org[64];

	return X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_organizationName, org,
					 sizeof(org)) > 0 &&
	       strcmp(org, PLACEHOLDER_ORG) == 0;
}

/* PEM_read_bio_X509 and PEM_read_bio_PrivateKey skip blocks of other
 * kinds, so each finds its own in a bundle whatever the order. */
static void read_bundle(const char *pem, size_t len, X509 **leaf, EVP_PKEY **key)
{
	BIO *b = BIO_new_mem_buf(pem, (int)len);

	*leaf = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (key) {
		b = BIO_new_mem_buf(pem, (int)len);
		*key = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL) : NULL;
		BIO_free(b);
	}
	ERR_clear_error();
}

/* Names are checked by tls_cert_covers, the rule a start and --test-config
 * apply to a configured certificate, so an issued one passes both. */
static int check_leaf(const char *pem, size_t len, X509 *leaf, EVP_PKEY *key,
		      const char *const *names, size_t n, struct acme_cert_info *info, char *err,
		      size_t errlen)
{
	struct tls_cert_pair p = {.cert_pem = (char *)pem, .cert_len = len};

	if (time_of(X509_get0_notBefore(leaf), &info->not_before) < 0 ||
	    tls_cert_not_after(&p, &info->not_after) < 0 ||
	    serial_hex(leaf, info->serial, sizeof(info->serial)) < 0) {
		snprintf(err, errlen, "the certificate's dates or serial do not parse");
		return -1;
	}
	ari_cert_id(leaf, info->ari_id, sizeof(info->ari_id));
	info->placeholder = is_placeholder(leaf);
	if (info->not_after <= info->not_before) {
		snprintf(err, errlen, "the certificate's notAfter is not after its notBefore");
		return -1;
	}
	if (key && EVP_PKEY_eq(X509_get0_pubkey(leaf), key) != 1) {
		snprintf(err, errlen, "the certificate's public key is not our key");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!tls_cert_covers(&p, names[i])) {
			snprintf(err, errlen, "the certificate does not cover %s", names[i]);
			return -1;
		}
	return 0;
}

/* With key NULL the bundle's own key is the one to match; a chain with no
 * key in it and none given has no key check to make. */
int acme_cert_check(const char *pem, size_t len, EVP_PKEY *key, const char *const *names, size_t n,
		    struct acme_cert_info *info, char *err, size_t errlen)
{
	X509 *leaf = NULL;
	EVP_PKEY *own = NULL;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (len > INT32_MAX) {
		snprintf(err, errlen, "the certificate is too large");
		return -1;
	}
	read_bundle(pem, len, &leaf, key ? NULL : &own);
	if (!leaf)
		snprintf(err, errlen, "no PEM certificate in it");
	else
		rc = check_leaf(pem, len, leaf, key ? key : own, names, n, info, err, errlen);
	ERR_clear_error();
	EVP_PKEY_free(own);
	X509_free(leaf);
	return rc;
}
