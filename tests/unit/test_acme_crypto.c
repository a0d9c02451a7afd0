/* Tests ktls/acme_crypto.c against what the other side checks, with
 * OpenSSL as that other side: base64url against RFC 4648 §10's vectors
 * and round trips; the JWK and thumbprint of RFC 7517 A.1's EC key; every
 * ES256 JWS verified after turning r||s back into DER, 1,000 times (a
 * dropped leading zero fails about one signature in 128); HS256 against
 * RFC 7515 A.1; the CSR, the TLS-ALPN-01 certificate and the placeholder
 * parsed back; acme_cert_check's answers and refusals. */
#include <check.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "ktls/acme_crypto.h"
#include "ktls/tls_cert_facts.h"
#include "ktls/tls_pem.h"
#include "tests/unit/check_run.h"

/* ---- base64url ---- */

START_TEST(test_b64url_rfc4648_vectors)
{
	static const char *const vec[][2] = {
	    {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
	    {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
	};
	char out[16];
	uint8_t back[16];

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t n = strlen(vec[i][0]);
		ck_assert_int_eq(acme_b64url(vec[i][0], n, out, sizeof(out)),
				 (int)strlen(vec[i][1]));
		ck_assert_str_eq(out, vec[i][1]);
		ck_assert_int_eq(acme_b64url_decode(out, strlen(out), back, sizeof(back)), (int)n);
		ck_assert_mem_eq(back, vec[i][0], n);
	}
	/* The two characters that differ from base64's + and /. */
	static const uint8_t url[] = {0xfb, 0xff, 0xbf};
	ck_assert_int_eq(acme_b64url(url, 3, out, sizeof(out)), 4);
	ck_assert_str_eq(out, "-_-_");
	ck_assert_int_eq(acme_b64url(url, 2, out, sizeof(out)), 3);
	ck_assert_str_eq(out, "-_8");
}
END_TEST

START_TEST(test_b64url_round_trips)
{
	uint8_t in[100], back[100];
	char text[140];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	for (size_t n = 0; n <= sizeof(in); n++) {
		int len = acme_b64url(in, n, text, sizeof(text));
		ck_assert_int_ge(len, 0);
		ck_assert_ptr_null(strpbrk(text, "=+/"));
		ck_assert_int_eq(acme_b64url_decode(text, (size_t)len, back, n), (int)n);
		ck_assert_mem_eq(back, in, n);
	}
}
END_TEST

START_TEST(test_b64url_refuses)
{
	char out[8];
	uint8_t b[8];

	/* "foob" needs 6 characters and the NUL. */
	ck_assert_int_eq(acme_b64url("foob", 4, out, 6), -1);
	ck_assert_int_eq(acme_b64url("foob", 4, out, 7), 6);
	ck_assert_int_eq(acme_b64url_decode("Zm9vYg", 6, b, 3), -1);
	ck_assert_int_eq(acme_b64url_decode("Zm9vYg", 6, b, 4), 4);
	ck_assert_int_eq(acme_b64url_decode("Zg==", 4, b, sizeof(b)), -1);
	ck_assert_int_eq(acme_b64url_decode("+/8", 3, b, sizeof(b)), -1);
	ck_assert_int_eq(acme_b64url_decode("Zm 9", 4, b, sizeof(b)), -1);
	ck_assert_int_eq(acme_b64url_decode("Zm9vY", 5, b, sizeof(b)), -1);
	/* "Zh" has bits set past the one byte it encodes. */
	ck_assert_int_eq(acme_b64url_decode("Zh", 2, b, sizeof(b)), -1);
}
END_TEST

/* ---- keys, JWK, thumbprint ---- */

/* RFC 7517 A.1's EC public key, built from its x and y. */
static EVP_PKEY *rfc7517_key(void)
{
	uint8_t pub[65] = {4};
	ck_assert_int_eq(
	    acme_b64url_decode("MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4", 43, pub + 1, 32), 32);
	ck_assert_int_eq(
	    acme_b64url_decode("4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM", 43, pub + 33, 32),
	    32);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	ck_assert(
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0));
	ck_assert(OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub)));
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *k = NULL;
	ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
	ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params), 1);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	return k;
}

START_TEST(test_jwk_and_thumbprint_vector)
{
	EVP_PKEY *k = rfc7517_key();
	char jwk[200], tp[64], expect[64];
	uint8_t md[SHA256_DIGEST_LENGTH];
	int n = acme_jwk(k, jwk, sizeof(jwk));
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(jwk, "{\"crv\":\"P-256\",\"kty\":\"EC\","
			      "\"x\":\"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4\","
			      "\"y\":\"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM\"}");
	char small[200];
	ck_assert_int_eq(acme_jwk(k, small, (size_t)n), -1);
	ck_assert_int_eq(acme_thumbprint(k, tp, sizeof(tp)), 43);
	ck_assert_str_eq(tp, "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s");
	SHA256((const unsigned char *)jwk, (size_t)n, md);
	acme_b64url(md, sizeof(md), expect, sizeof(expect));
	ck_assert_str_eq(tp, expect);
	EVP_PKEY_free(k);
}
END_TEST

START_TEST(test_jwk_of_new_keys)
{
	/* Coordinates with leading zero bytes still print as 43 characters. */
	for (int i = 0; i < 50; i++) {
		EVP_PKEY *k = acme_key_new();
		char jwk[200], tp[64];
		ck_assert_ptr_nonnull(k);
		ck_assert_int_eq(
		    acme_jwk(k, jwk, sizeof(jwk)),
		    (int)strlen("{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\",\"y\":\"\"}") + 86);
		ck_assert_int_eq(acme_thumbprint(k, tp, sizeof(tp)), 43);
		EVP_PKEY_free(k);
	}
	EVP_PKEY *rsa = EVP_RSA_gen(2048);
	char jwk[200];
	ck_assert_int_eq(acme_jwk(rsa, jwk, sizeof(jwk)), -1);
	ck_assert_ptr_null(acme_jws_es256(rsa, "{}", ""));
	EVP_PKEY_free(rsa);
}
END_TEST

START_TEST(test_key_pem_round_trip)
{
	EVP_PKEY *k = acme_key_new();
	char *pem;
	size_t len;

	ck_assert_int_eq(acme_key_to_pem(k, &pem, &len), 0);
	ck_assert_uint_eq(strlen(pem), len);
	ck_assert_int_eq(strncmp(pem, "-----BEGIN PRIVATE KEY-----\n", 28), 0);
	EVP_PKEY *back = acme_key_from_pem(pem, len);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(EVP_PKEY_eq(k, back), 1);
	EVP_PKEY_free(back);
	explicit_bzero(pem, len);
	free(pem);

	/* SEC1, as openssl ecparam -genkey writes it. */
	BIO *b = BIO_new(BIO_s_mem());
	ck_assert(PEM_write_bio_PrivateKey_traditional(b, k, NULL, NULL, 0, NULL, NULL));
	char *data;
	long n = BIO_get_mem_data(b, &data);
	ck_assert_int_eq(strncmp(data, "-----BEGIN EC PRIVATE KEY-----", 30), 0);
	back = acme_key_from_pem(data, (size_t)n);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(EVP_PKEY_eq(k, back), 1);
	EVP_PKEY_free(back);
	BIO_free(b);

	/* One with a passphrase is refused, not asked for on a terminal. */
	b = BIO_new(BIO_s_mem());
	ck_assert(PEM_write_bio_PKCS8PrivateKey(b, k, EVP_aes_128_cbc(), "secret", 6, NULL, NULL));
	n = BIO_get_mem_data(b, &data);
	ck_assert_ptr_null(acme_key_from_pem(data, (size_t)n));
	BIO_free(b);

	ck_assert_ptr_null(acme_key_from_pem("not a key", 9));
	EVP_PKEY_free(k);
}
END_TEST

/* ---- JWS ---- */

/* The value of member name in a flattened JWS, copied into out. */
static void member(const char *jws, const char *name, char *out, size_t outlen)
{
	char key[32];
	snprintf(key, sizeof(key), "\"%s\":\"", name);
	const char *p = strstr(jws, key);
	ck_assert_ptr_nonnull(p);
	p += strlen(key);
	const char *q = strchr(p, '"');
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_lt((size_t)(q - p), outlen);
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
}

/* Verifies jws's ES256 signature with k's public key, as a CA does. */
static void es256_verify(EVP_PKEY *k, const char *jws)
{
	char prot[512], payload[512], sig[128], input[1100];
	uint8_t raw[64];

	member(jws, "protected", prot, sizeof(prot));
	member(jws, "payload", payload, sizeof(payload));
	member(jws, "signature", sig, sizeof(sig));
	ck_assert_int_eq(acme_b64url_decode(sig, strlen(sig), raw, sizeof(raw)), 64);
	ECDSA_SIG *es = ECDSA_SIG_new();
	ck_assert(ECDSA_SIG_set0(es, BN_bin2bn(raw, 32, NULL), BN_bin2bn(raw + 32, 32, NULL)));
	unsigned char *der = NULL;
	int dlen = i2d_ECDSA_SIG(es, &der);
	ck_assert_int_gt(dlen, 0);
	int n = snprintf(input, sizeof(input), "%s.%s", prot, payload);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ck_assert_int_eq(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k), 1);
	ck_assert_int_eq(
	    EVP_DigestVerify(ctx, der, (size_t)dlen, (unsigned char *)input, (size_t)n), 1);
	EVP_MD_CTX_free(ctx);
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
}

static void decoded_member(const char *jws, const char *name, char *out, size_t outlen)
{
	char text[512];
	member(jws, name, text, sizeof(text));
	int n = acme_b64url_decode(text, strlen(text), (uint8_t *)out, outlen - 1);
	ck_assert_int_ge(n, 0);
	out[n] = '\0';
}

START_TEST(test_es256_verifies)
{
	EVP_PKEY *k = acme_key_new();
	const char *prot = "{\"alg\":\"ES256\",\"nonce\":\"abc\",\"url\":\"https://ca/new-order\"}";
	char payload[64], back[512];

	for (int i = 0; i < 1000; i++) {
		snprintf(payload, sizeof(payload), "{\"identifiers\":[],\"n\":%d}", i);
		char *jws = acme_jws_es256(k, prot, payload);
		ck_assert_ptr_nonnull(jws);
		es256_verify(k, jws);
		if (i == 0) {
			ck_assert_int_eq(strncmp(jws, "{\"protected\":\"", 14), 0);
			decoded_member(jws, "protected", back, sizeof(back));
			ck_assert_str_eq(back, prot);
			decoded_member(jws, "payload", back, sizeof(back));
			ck_assert_str_eq(back, payload);
		}
		free(jws);
	}
	EVP_PKEY_free(k);
}
END_TEST

START_TEST(test_es256_post_as_get)
{
	EVP_PKEY *k = acme_key_new();
	char *jws = acme_jws_es256(k, "{\"alg\":\"ES256\"}", "");

	ck_assert_ptr_nonnull(jws);
	ck_assert_ptr_nonnull(strstr(jws, ",\"payload\":\"\","));
	es256_verify(k, jws);
	free(jws);
	EVP_PKEY_free(k);
}
END_TEST

/* RFC 7515 A.1: its header and payload (with their CRLFs), its key and
 * the signature it prints. */
START_TEST(test_hs256_rfc7515_a1)
{
	static const char k64[] = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-"
				  "1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
	uint8_t key[64];
	int klen = acme_b64url_decode(k64, strlen(k64), key, sizeof(key));
	char out[256];

	ck_assert_int_eq(klen, 64);
	char *jws = acme_jws_hs256(key, (size_t)klen, "{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}",
				   "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n "
				   "\"http://example.com/is_root\":true}");
	ck_assert_ptr_nonnull(jws);
	member(jws, "protected", out, sizeof(out));
	ck_assert_str_eq(out, "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9");
	member(jws, "payload", out, sizeof(out));
	ck_assert_str_eq(out, "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFt"
			      "cGxlLmNvbS9pc19yb290Ijp0cnVlfQ");
	member(jws, "signature", out, sizeof(out));
	ck_assert_str_eq(out, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
	free(jws);
}
END_TEST

/* ---- CSR and certificates ---- */

/* The dNSNames of a SAN extension, in order, joined by spaces. */
static void san_text(const GENERAL_NAMES *gens, char *out, size_t outlen)
{
	out[0] = '\0';
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		ck_assert_int_eq(g->type, GEN_DNS);
		if (i)
			strncat(out, " ", outlen - strlen(out) - 1);
		strncat(out, (const char *)ASN1_STRING_get0_data(g->d.dNSName),
			outlen - strlen(out) - 1);
	}
}

START_TEST(test_csr_parses)
{
	static const char *const names[] = {"a.example.org", "b.example.org", "c.example.net"};
	EVP_PKEY *k = acme_key_new(), *other = acme_key_new();
	char *csr = acme_csr(k, names, 3);
	uint8_t der[2048];
	char sans[200];

	ck_assert_ptr_nonnull(csr);
	ck_assert_ptr_null(strpbrk(csr, "=+/"));
	int n = acme_b64url_decode(csr, strlen(csr), der, sizeof(der));
	ck_assert_int_gt(n, 0);
	const unsigned char *p = der;
	X509_REQ *req = d2i_X509_REQ(NULL, &p, n);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(p - der, n);
	ck_assert_int_eq(X509_REQ_verify(req, k), 1);
	ck_assert_int_ne(X509_REQ_verify(req, other), 1);
	ck_assert_int_eq(EVP_PKEY_eq(X509_REQ_get0_pubkey(req), k), 1);
	ck_assert_int_eq(X509_NAME_entry_count(X509_REQ_get_subject_name(req)), 0);
	STACK_OF(X509_EXTENSION) *exts = X509_REQ_get_extensions(req);
	GENERAL_NAMES *gens = X509V3_get_d2i(exts, NID_subject_alt_name, NULL, NULL);
	ck_assert_ptr_nonnull(gens);
	san_text(gens, sans, sizeof(sans));
	ck_assert_str_eq(sans, "a.example.org b.example.org c.example.net");
	GENERAL_NAMES_free(gens);
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	X509_REQ_free(req);
	free(csr);
	ck_assert_ptr_null(acme_csr(k, names, 0));
	EVP_PKEY_free(other);
	EVP_PKEY_free(k);
	ERR_clear_error();
}
END_TEST

START_TEST(test_alpn_cert)
{
	const char *authz = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA.cn-I_WNMClehiVp51i_"
			    "0VpOENW1upEerA8sEam5hn-s";
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	uint8_t md[SHA256_DIGEST_LENGTH];
	char sans[300];
	time_t now = time(NULL);

	ck_assert_int_eq(acme_alpn_cert("a.example.org", authz, &k, &x), 0);
	ck_assert_int_eq(X509_verify(x, k), 1);
	ck_assert_int_eq(EVP_PKEY_eq(X509_get0_pubkey(x), k), 1);
	ck_assert_int_eq(X509_NAME_entry_count(X509_get_subject_name(x)), 0);

	ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1);
	int at = X509_get_ext_by_OBJ(x, oid, -1);
	ck_assert_int_ge(at, 0);
	ck_assert_int_eq(X509_get_ext_by_OBJ(x, oid, at), -1);
	X509_EXTENSION *ext = X509_get_ext(x, at);
	ck_assert_int_eq(X509_EXTENSION_get_critical(ext), 1);
	ASN1_OCTET_STRING *v = X509_EXTENSION_get_data(ext);
	ck_assert_int_eq(ASN1_STRING_length(v), 34);
	const unsigned char *d = ASN1_STRING_get0_data(v);
	ck_assert_int_eq(d[0], 0x04);
	ck_assert_int_eq(d[1], 0x20);
	SHA256((const unsigned char *)authz, strlen(authz), md);
	ck_assert_mem_eq(d + 2, md, 32);
	ASN1_OBJECT_free(oid);

	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	ck_assert_int_eq(sk_GENERAL_NAME_num(gens), 1);
	san_text(gens, sans, sizeof(sans));
	ck_assert_str_eq(sans, "a.example.org");
	GENERAL_NAMES_free(gens);

	ck_assert_int_eq(X509_cmp_time(X509_get0_notBefore(x), &(time_t){now - 3500}), -1);
	ck_assert_int_eq(X509_cmp_time(X509_get0_notBefore(x), &(time_t){now - 3700}), 1);
	ck_assert_int_eq(X509_cmp_time(X509_get0_notAfter(x), &(time_t){now + 7 * 86400 - 100}), 1);
	ck_assert_int_eq(X509_cmp_time(X509_get0_notAfter(x), &(time_t){now + 7 * 86400 + 100}),
			 -1);
	X509_free(x);
	EVP_PKEY_free(k);
}
END_TEST

START_TEST(test_placeholder_bundle)
{
	static const char *const names[] = {"a.example.org", "b.example.org"};
	char *bundle, err[200];
	size_t len;

	ck_assert_int_eq(acme_placeholder(names, 2, &bundle, &len), 0);
	ck_assert_uint_eq(strlen(bundle), len);
	BIO *b = BIO_new_mem_buf(bundle, (int)len);
	EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(X509_verify(x, k), 1);
	ck_assert_int_eq(X509_check_private_key(x, k), 1);
	char org[64];
	ck_assert_int_gt(X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_organizationName,
						   org, sizeof(org)),
			 0);
	ck_assert_str_eq(org, "ktlsd ACME placeholder");

	/* As the server reads a bundle.pem: both halves from the one file. */
	struct tls_cert_pair p = {.cert_file = "bundle.pem",
				  .key_file = "bundle.pem",
				  .cert_pem = bundle,
				  .cert_len = len,
				  .key_pem = bundle,
				  .key_len = len};
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	ck_assert_int_eq(tls_pem_use(ctx, &p, err, sizeof(err)), 0);
	SSL_CTX_free(ctx);
	ck_assert(tls_cert_covers(&p, "a.example.org"));
	ck_assert(tls_cert_covers(&p, "b.example.org"));
	ck_assert(!tls_cert_covers(&p, "c.example.org"));

	struct acme_cert_info info;
	ck_assert_int_eq(acme_cert_check(bundle, len, NULL, names, 2, &info, err, sizeof(err)), 0);
	ck_assert(info.placeholder);
	ck_assert_int_eq(info.not_after - info.not_before, 7 * 86400);
	ck_assert_int_le(llabs((long long)(info.not_before - time(NULL))), 5);
	X509_free(x);
	EVP_PKEY_free(k);
	free(bundle);
	ck_assert_int_eq(acme_placeholder(names, 0, &bundle, &len), -1);
}
END_TEST

/* A chain as a CA sends one: a leaf for names with serial hex, signed by
 * a separate issuer, then the issuer. The leaf's key in *leaf_key; the
 * leaf's Authority Key Identifier is aki (n_aki bytes; none when 0). */
static char *ca_chain_aki(const char *hex, const char *const *names, size_t n,
			  const unsigned char *aki, size_t n_aki, EVP_PKEY **leaf_key, size_t *len)
{
	EVP_PKEY *ca_key = acme_key_new();
	*leaf_key = acme_key_new();
	X509 *ca = X509_new(), *leaf = X509_new();
	BIGNUM *bn = NULL;

	ck_assert_int_gt(BN_hex2bn(&bn, hex), 0);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(leaf));
	BN_free(bn);
	ASN1_INTEGER_set(X509_get_serialNumber(ca), 1);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(ca), "CN", MBSTRING_ASC,
				   (const unsigned char *)"Test CA", -1, -1, 0);
	X509_set_issuer_name(ca, X509_get_subject_name(ca));
	X509_set_issuer_name(leaf, X509_get_subject_name(ca));
	X509_set_version(ca, 2);
	X509_set_version(leaf, 2);
	ASN1_TIME_set(X509_getm_notBefore(leaf), 1767225600); /* 2026-01-01 */
	ASN1_TIME_set(X509_getm_notAfter(leaf), 1775001600);  /* 2026-04-01 */
	X509_gmtime_adj(X509_getm_notBefore(ca), 0);
	X509_gmtime_adj(X509_getm_notAfter(ca), 86400);
	X509_set_pubkey(ca, ca_key);
	X509_set_pubkey(leaf, *leaf_key);
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	for (size_t i = 0; i < n; i++) {
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_IA5STRING *s = ASN1_IA5STRING_new();
		ASN1_STRING_set(s, names[i], -1);
		GENERAL_NAME_set0_value(g, GEN_DNS, s);
		sk_GENERAL_NAME_push(gens, g);
	}
	X509_add1_ext_i2d(leaf, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT);
	GENERAL_NAMES_free(gens);
	if (n_aki) {
		AUTHORITY_KEYID *akid = AUTHORITY_KEYID_new();
		akid->keyid = ASN1_OCTET_STRING_new();
		ASN1_OCTET_STRING_set(akid->keyid, aki, (int)n_aki);
		X509_add1_ext_i2d(leaf, NID_authority_key_identifier, akid, 0, X509V3_ADD_DEFAULT);
		AUTHORITY_KEYID_free(akid);
	}
	ck_assert_int_gt(X509_sign(ca, ca_key, EVP_sha256()), 0);
	ck_assert_int_gt(X509_sign(leaf, ca_key, EVP_sha256()), 0);
	BIO *b = BIO_new(BIO_s_mem());
	ck_assert(PEM_write_bio_X509(b, leaf));
	ck_assert(PEM_write_bio_X509(b, ca));
	char *data;
	long dn = BIO_get_mem_data(b, &data);
	char *out = strndup(data, (size_t)dn);
	*len = (size_t)dn;
	BIO_free(b);
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(ca_key);
	return out;
}

static char *ca_chain(const char *hex, const char *const *names, size_t n, EVP_PKEY **leaf_key,
		      size_t *len)
{
	return ca_chain_aki(hex, names, n, NULL, 0, leaf_key, len);
}

/* RFC 9773 §4.1's example: keyIdentifier 69:88:5B:…:C8:D4 and serial
 * 0x87654321, whose DER keeps a leading zero byte (top bit set). */
START_TEST(test_cert_check_ari_id)
{
	static const char *const names[] = {"a.example.org"};
	static const unsigned char aki[] = {0x69, 0x88, 0x5B, 0x6B, 0x87, 0x46, 0x40,
					    0x41, 0xE1, 0xB3, 0x7B, 0x84, 0x7B, 0xA0,
					    0xAE, 0x2C, 0xDE, 0x01, 0xC8, 0xD4};
	struct acme_cert_info info;
	EVP_PKEY *k;
	size_t len;
	char err[200];
	char *chain = ca_chain_aki("87654321", names, 1, aki, sizeof(aki), &k, &len);

	ck_assert_int_eq(acme_cert_check(chain, len, k, names, 1, &info, err, sizeof(err)), 0);
	ck_assert_str_eq(info.ari_id, "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE");
	free(chain);
	EVP_PKEY_free(k);

	/* No leading zero when the top bit is clear. */
	chain = ca_chain_aki("01", names, 1, aki, sizeof(aki), &k, &len);
	ck_assert_int_eq(acme_cert_check(chain, len, k, names, 1, &info, err, sizeof(err)), 0);
	ck_assert_str_eq(info.ari_id, "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AQ");
	free(chain);
	EVP_PKEY_free(k);

	/* Without an Authority Key Identifier there is no identifier. */
	chain = ca_chain("87654321", names, 1, &k, &len);
	ck_assert_int_eq(acme_cert_check(chain, len, k, names, 1, &info, err, sizeof(err)), 0);
	ck_assert_str_eq(info.ari_id, "");
	free(chain);
	EVP_PKEY_free(k);
}
END_TEST

START_TEST(test_cert_check_chain)
{
	static const char *const names[] = {"a.example.org", "b.example.org"};
	EVP_PKEY *k, *other = acme_key_new();
	size_t len;
	char *chain = ca_chain("80F1000000000000000000000000000A", names, 2, &k, &len);
	struct acme_cert_info info;
	char err[200];

	ck_assert_int_eq(acme_cert_check(chain, len, k, names, 2, &info, err, sizeof(err)), 0);
	ck_assert_int_eq(info.not_before, 1767225600);
	ck_assert_int_eq(info.not_after, 1775001600);
	ck_assert_str_eq(info.serial, "80f1000000000000000000000000000a");
	ck_assert(!info.placeholder);
	/* One name of two, and no key to check: the chain alone. */
	ck_assert_int_eq(acme_cert_check(chain, len, NULL, names + 1, 1, &info, err, sizeof(err)),
			 0);

	ck_assert_int_eq(acme_cert_check(chain, len, other, names, 2, &info, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "key"));
	static const char *const more[] = {"a.example.org", "c.example.org"};
	ck_assert_int_eq(acme_cert_check(chain, len, k, more, 2, &info, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "the certificate does not cover c.example.org");
	ck_assert_int_eq(acme_cert_check("junk", 4, k, names, 2, &info, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no PEM certificate"));
	free(chain);
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}
END_TEST

START_TEST(test_cert_check_bundle_key)
{
	static const char *const names[] = {"a.example.org"};
	char *bundle, *chain, *kpem, err[200];
	size_t blen, clen, klen;
	EVP_PKEY *k;
	struct acme_cert_info info;

	/* A bundle's own key that is not its leaf's is refused. */
	ck_assert_int_eq(acme_placeholder(names, 1, &bundle, &blen), 0);
	chain = ca_chain("01", names, 1, &k, &clen);
	char *end = strstr(bundle, "-----END PRIVATE KEY-----\n");
	ck_assert_ptr_nonnull(end);
	size_t keylen = (size_t)(end - bundle) + strlen("-----END PRIVATE KEY-----\n");
	char *mixed = malloc(keylen + clen + 1);
	memcpy(mixed, bundle, keylen);
	memcpy(mixed + keylen, chain, clen + 1);
	ck_assert_int_eq(
	    acme_cert_check(mixed, keylen + clen, NULL, names, 1, &info, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "key"));
	free(mixed);

	/* And its own key in front of the chain passes. */
	ck_assert_int_eq(acme_key_to_pem(k, &kpem, &klen), 0);
	mixed = malloc(klen + clen + 1);
	memcpy(mixed, kpem, klen);
	memcpy(mixed + klen, chain, clen + 1);
	ck_assert_int_eq(
	    acme_cert_check(mixed, klen + clen, NULL, names, 1, &info, err, sizeof(err)), 0);
	ck_assert_str_eq(info.serial, "01");
	free(mixed);
	explicit_bzero(kpem, klen);
	free(kpem);
	free(chain);
	free(bundle);
	EVP_PKEY_free(k);
}
END_TEST

static Suite *acme_crypto_suite(void)
{
	Suite *s = suite_create("acme_crypto");
	TCase *tc = tcase_create("ktls");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_b64url_rfc4648_vectors);
	tcase_add_test(tc, test_b64url_round_trips);
	tcase_add_test(tc, test_b64url_refuses);
	tcase_add_test(tc, test_jwk_and_thumbprint_vector);
	tcase_add_test(tc, test_jwk_of_new_keys);
	tcase_add_test(tc, test_key_pem_round_trip);
	tcase_add_test(tc, test_es256_verifies);
	tcase_add_test(tc, test_es256_post_as_get);
	tcase_add_test(tc, test_hs256_rfc7515_a1);
	tcase_add_test(tc, test_csr_parses);
	tcase_add_test(tc, test_alpn_cert);
	tcase_add_test(tc, test_placeholder_bundle);
	tcase_add_test(tc, test_cert_check_ari_id);
	tcase_add_test(tc, test_cert_check_chain);
	tcase_add_test(tc, test_cert_check_bundle_key);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(acme_crypto_suite());
}
