/* Tests ktls/tls_seal.c: records it seals open with the key, nonce and
 * additional data RFC 8446 (TLS 1.3) and RFC 5288/7905 (TLS 1.2) define,
 * opened here by EVP on their own terms, and the keys after a KeyUpdate
 * (RFC 8446 7.2) made by OpenSSL's own TLS 1.3 KDF. Interop with real clients is the
 * integration tests' part: every HTTPS test runs through the sealer on a
 * kernel without TLS. */
#include <check.h>
#include <errno.h>
#include <linux/tls.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "ktls/tls_limit.h"
#include "ktls/tls_seal.h"
#include "tests/unit/check_run.h"

static unsigned char plain[40000], big[6 * TLS_SEAL_MAX_PLAIN];

static void fill_plain(void)
{
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (unsigned char)(i * 7 + i / 256);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i / TLS_SEAL_MAX_PLAIN + 1);
}

/* Opens the record at p (TLS 1.3 or 1.2 framing); returns its plaintext
 * length and sets *type, or -1 if it does not authenticate. */
static long open_record(const EVP_CIPHER *cipher, const unsigned char *key,
			const unsigned char iv12[12], bool tls13, bool explicit_nonce, uint64_t seq,
			const unsigned char *p, unsigned char *out, unsigned char *type)
{
	size_t body = (size_t)p[3] << 8 | p[4];
	unsigned char nonce[12], aad[13];
	const unsigned char *c = p + 5;
	size_t clen = body - 16;
	int l, total;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	memcpy(nonce, iv12, 12);
	if (explicit_nonce) {
		memcpy(nonce + 4, c, 8);
		c += 8;
		clen -= 8;
	} else {
		for (int i = 0; i < 8; i++)
			nonce[4 + i] ^= (unsigned char)(seq >> (56 - 8 * i));
	}
	if (tls13) {
		memcpy(aad, p, 5);
	} else {
		for (int i = 0; i < 8; i++)
			aad[i] = (unsigned char)(seq >> (56 - 8 * i));
		aad[8] = p[0], aad[9] = 3, aad[10] = 3;
		aad[11] = (unsigned char)(clen >> 8), aad[12] = (unsigned char)clen;
	}
	ck_assert(EVP_DecryptInit_ex(ctx, cipher, NULL, NULL, NULL));
	ck_assert(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL));
	ck_assert(EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce));
	ck_assert(EVP_DecryptUpdate(ctx, NULL, &l, aad, tls13 ? 5 : 13));
	ck_assert(EVP_DecryptUpdate(ctx, out, &l, c, (int)clen));
	total = l;
	ck_assert(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(c + clen)));
	int ok = EVP_DecryptFinal_ex(ctx, out + total, &l);
	EVP_CIPHER_CTX_free(ctx);
	if (ok <= 0)
		return -1;
	if (tls13) {
		ck_assert_uint_eq(p[0], 23);
		*type = out[total - 1];
		return total - 1;
	}
	*type = p[0];
	return total;
}

/* Seals plain in three pieces (one empty) as type 23, then type 21, and
 * opens every record. */
static void roundtrip(unsigned short version, unsigned short cipher_type)
{
	union {
		struct tls12_crypto_info_aes_gcm_128 g128;
		struct tls12_crypto_info_aes_gcm_256 g256;
		struct tls12_crypto_info_chacha20_poly1305 c20;
	} ci;
	const EVP_CIPHER *cipher;
	unsigned char key[32], iv12[12];
	size_t salt = 4, klen;
	struct tls_sealer *s;
	static unsigned char out[sizeof(plain) + 8 * TLS_SEAL_OVERHEAD], back[TLS_SEAL_MAX_PLAIN + 32];
	bool tls13 = version == TLS_1_3_VERSION;
	bool explicit_nonce = !tls13 && cipher_type != TLS_CIPHER_CHACHA20_POLY1305;
	/* Below AES-GCM's limit (tls_limit.h), three bytes of it set. */
	uint64_t seq = 0x102030;

	memset(&ci, 0, sizeof(ci));
	ci.g128.info.version = version;
	ci.g128.info.cipher_type = cipher_type;
	for (int i = 0; i < 32; i++)
		key[i] = (unsigned char)(0xa0 + i);
	for (int i = 0; i < 12; i++)
		iv12[i] = (unsigned char)(0x10 + i);
	switch (cipher_type) {
	case TLS_CIPHER_AES_GCM_128:
		cipher = EVP_aes_128_gcm(), klen = 16;
		memcpy(ci.g128.key, key, 16), memcpy(ci.g128.salt, iv12, 4);
		memcpy(ci.g128.iv, iv12 + 4, 8);
		for (int i = 0; i < 8; i++)
			ci.g128.rec_seq[i] = (unsigned char)(seq >> (56 - 8 * i));
		break;
	case TLS_CIPHER_AES_GCM_256:
		cipher = EVP_aes_256_gcm(), klen = 32;
		memcpy(ci.g256.key, key, 32), memcpy(ci.g256.salt, iv12, 4);
		memcpy(ci.g256.iv, iv12 + 4, 8);
		for (int i = 0; i < 8; i++)
			ci.g256.rec_seq[i] = (unsigned char)(seq >> (56 - 8 * i));
		break;
	default:
		cipher = EVP_chacha20_poly1305(), klen = 32, salt = 0;
		memcpy(ci.c20.key, key, 32), memcpy(ci.c20.iv, iv12, 12);
		for (int i = 0; i < 8; i++)
			ci.c20.rec_seq[i] = (unsigned char)(seq >> (56 - 8 * i));
		break;
	}
	(void)klen;
	(void)salt;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci), NULL, 0, 0), 0);

	struct iovec iov[3] = {{plain, 1000}, {plain + 1000, 0}, {plain + 1000, sizeof(plain) - 1000}};
	long n = tls_seal(s, 23, iov, 3, sizeof(plain), out);
	ck_assert_int_gt(n, (long)sizeof(plain));
	ck_assert_uint_le((size_t)n, tls_seal_room(sizeof(plain)));

	/* 16384 + 16384 + 7232: records full up to the last. */
	size_t at = 0, got = 0;
	unsigned char type;
	for (int r = 0; r < 3; r++, seq++) {
		long m = open_record(cipher, key, iv12, tls13, explicit_nonce, seq, out + at, back,
				     &type);
		ck_assert_int_eq(m, r < 2 ? 16384 : (long)sizeof(plain) - 32768);
		ck_assert_uint_eq(type, 23);
		ck_assert(memcmp(back, plain + got, (size_t)m) == 0);
		got += (size_t)m;
		at += 5 + (((size_t)out[at + 3] << 8) | out[at + 4]);
	}
	ck_assert_uint_eq(at, (size_t)n);

	/* The next record (an alert) goes on with the sequence, also after the
	 * connection was idle (the cipher context made again from the key). */
	tls_sealer_idle(s);
	struct iovec alert = {"\x01\x00", 2};
	n = tls_seal(s, 21, &alert, 1, 2, out);
	ck_assert_int_eq(open_record(cipher, key, iv12, tls13, explicit_nonce, seq, out, back,
				     &type),
			 2);
	ck_assert_uint_eq(type, 21);
	/* A record opened with the wrong sequence does not authenticate. */
	if (!explicit_nonce || !tls13)
		ck_assert_int_eq(open_record(cipher, key, iv12, tls13, explicit_nonce, seq + 1, out,
					     back, &type),
				 -1);
	tls_sealer_free(s);
}

START_TEST(test_tls13)
{
	roundtrip(TLS_1_3_VERSION, TLS_CIPHER_AES_GCM_128);
	roundtrip(TLS_1_3_VERSION, TLS_CIPHER_AES_GCM_256);
	roundtrip(TLS_1_3_VERSION, TLS_CIPHER_CHACHA20_POLY1305);
}
END_TEST

START_TEST(test_tls12)
{
	roundtrip(TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_128);
	roundtrip(TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_256);
	roundtrip(TLS_1_2_VERSION, TLS_CIPHER_CHACHA20_POLY1305);
}
END_TEST

START_TEST(test_refuses)
{
	struct tls12_crypto_info_aes_gcm_128 ci;
	struct tls_sealer *s;

	memset(&ci, 0, sizeof(ci));
	ci.info.version = TLS_1_3_VERSION;
	ci.info.cipher_type = TLS_CIPHER_AES_CCM_128;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci), NULL, 0, 0), -EOPNOTSUPP);
	ci.info.cipher_type = TLS_CIPHER_AES_GCM_128;
	ci.info.version = 0x0301;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci), NULL, 0, 0), -EOPNOTSUPP);
	ci.info.version = TLS_1_3_VERSION;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, 4, NULL, 0, 0), -EOPNOTSUPP);
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci) - 1, NULL, 0, 0), -EOPNOTSUPP);
}
END_TEST

/* HKDF-Expand-Label(secret, label, "", n) by OpenSSL's TLS 1.3 KDF, the one
 * libssl uses: not the sealer's code. */
static void expand_label(const char *digest, const unsigned char *secret, size_t slen,
			 const char *label, unsigned char *out, size_t n)
{
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
	    OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, slen),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PREFIX, "tls13 ", 6),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_LABEL, (void *)label, strlen(label)),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_DATA, "", 0),
	    OSSL_PARAM_construct_end(),
	};
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS13-KDF", NULL);
	EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);

	ck_assert_ptr_nonnull(kctx);
	ck_assert_int_gt(EVP_KDF_derive(kctx, out, n, params), 0);
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
}

/* A TLS 1.3 suite's keys from its secret, as crypto_info for the sealer. */
struct suite13 {
	unsigned short cipher_type;
	const EVP_CIPHER *cipher;
	const char *digest;
	size_t klen, hlen;
	unsigned char secret[48], key[32], iv[12];
	union {
		struct tls12_crypto_info_aes_gcm_128 g128;
		struct tls12_crypto_info_aes_gcm_256 g256;
		struct tls12_crypto_info_chacha20_poly1305 c20;
	} ci;
};

static void suite_keys(struct suite13 *t)
{
	expand_label(t->digest, t->secret, t->hlen, "key", t->key, t->klen);
	expand_label(t->digest, t->secret, t->hlen, "iv", t->iv, 12);
}

static void suite_init(struct suite13 *t, unsigned short cipher_type)
{
	memset(t, 0, sizeof(*t));
	t->cipher_type = cipher_type;
	t->cipher = cipher_type == TLS_CIPHER_AES_GCM_128   ? EVP_aes_128_gcm()
		    : cipher_type == TLS_CIPHER_AES_GCM_256 ? EVP_aes_256_gcm()
							    : EVP_chacha20_poly1305();
	t->klen = cipher_type == TLS_CIPHER_AES_GCM_128 ? 16 : 32;
	t->hlen = cipher_type == TLS_CIPHER_AES_GCM_256 ? 48 : 32;
	t->digest = t->hlen == 48 ? "SHA384" : "SHA256";
	for (size_t i = 0; i < t->hlen; i++)
		t->secret[i] = (unsigned char)(0x40 + 3 * i);
	suite_keys(t);
	t->ci.g128.info.version = TLS_1_3_VERSION;
	t->ci.g128.info.cipher_type = cipher_type;
	switch (cipher_type) {
	case TLS_CIPHER_AES_GCM_128:
		memcpy(t->ci.g128.key, t->key, 16), memcpy(t->ci.g128.salt, t->iv, 4);
		memcpy(t->ci.g128.iv, t->iv + 4, 8);
		break;
	case TLS_CIPHER_AES_GCM_256:
		memcpy(t->ci.g256.key, t->key, 32), memcpy(t->ci.g256.salt, t->iv, 4);
		memcpy(t->ci.g256.iv, t->iv + 4, 8);
		break;
	default:
		memcpy(t->ci.c20.key, t->key, 32), memcpy(t->ci.c20.iv, t->iv, 12);
		break;
	}
}

/* The keys after a KeyUpdate: the next secret, and key and iv from it. */
static void suite_next(struct suite13 *t)
{
	unsigned char next[48];

	expand_label(t->digest, t->secret, t->hlen, "traffic upd", next, t->hlen);
	memcpy(t->secret, next, t->hlen);
	suite_keys(t);
}

/* Opens the record at out + *at with t's keys at seq: its length, type
 * and first plaintext byte must be as said. */
static void expect_record(const struct suite13 *t, uint64_t seq, const unsigned char *out,
			  size_t *at, long len, unsigned char type, unsigned char first)
{
	static unsigned char back[TLS_SEAL_MAX_PLAIN + 32];
	unsigned char got;

	ck_assert_int_eq(open_record(t->cipher, t->key, t->iv, true, false, seq, out + *at, back,
				     &got),
			 len);
	ck_assert_uint_eq(got, type);
	ck_assert_uint_eq(back[0], first);
	*at += 5 + (((size_t)out[*at + 3] << 8) | out[*at + 4]);
}

/* OpenSSL's KeyUpdate (its answer to a client's update_requested) is
 * sealed under the old keys, what follows under the next ones; at the
 * re-key point the sealer sends a KeyUpdate of its own. */
static void rekey(unsigned short cipher_type)
{
	static unsigned char out[8 * (TLS_SEAL_MAX_PLAIN + 64)];
	static const unsigned char ku[5] = {24, 0, 0, 1, 0};
	struct suite13 t;
	struct tls_sealer *s;
	size_t at = 0;

	suite_init(&t, cipher_type);
	ck_assert_int_eq(tls_sealer_new(&s, &t.ci, sizeof(t.ci), t.secret, t.hlen, 4), 0);
	ck_assert(tls_sealer_can_rekey(s));

	struct iovec iov = {big, 3 * TLS_SEAL_MAX_PLAIN};
	long n = tls_seal(s, 23, &iov, 1, iov.iov_len, out);
	ck_assert_uint_le((size_t)n, tls_seal_room(iov.iov_len));
	for (uint64_t q = 0; q < 3; q++)
		expect_record(&t, q, out, &at, TLS_SEAL_MAX_PLAIN, 23, big[q * TLS_SEAL_MAX_PLAIN]);
	ck_assert_uint_eq(at, (size_t)n);

	struct iovec kiov = {(void *)ku, 5};
	n = tls_seal(s, 22, &kiov, 1, 5, out);
	at = 0;
	expect_record(&t, 3, out, &at, 5, 22, 24);
	ck_assert_uint_eq(at, (size_t)n);

	/* Under the next keys from 0: four records, then (the re-key point
	 * 4) a KeyUpdate of the sealer's, update_not_requested, then the
	 * keys after that. */
	suite_next(&t);
	iov.iov_len = 6 * TLS_SEAL_MAX_PLAIN;
	n = tls_seal(s, 23, &iov, 1, iov.iov_len, out);
	ck_assert_uint_le((size_t)n, tls_seal_room(iov.iov_len));
	at = 0;
	for (uint64_t q = 0; q < 4; q++)
		expect_record(&t, q, out, &at, TLS_SEAL_MAX_PLAIN, 23, big[q * TLS_SEAL_MAX_PLAIN]);
	expect_record(&t, 4, out, &at, 5, 22, 24);
	suite_next(&t);
	for (uint64_t q = 0; q < 2; q++)
		expect_record(&t, q, out, &at, TLS_SEAL_MAX_PLAIN, 23,
			      big[(4 + q) * TLS_SEAL_MAX_PLAIN]);
	ck_assert_uint_eq(at, (size_t)n);
	ck_assert(!tls_sealer_worn(s));
	tls_sealer_free(s);
}

START_TEST(test_rekey)
{
	rekey(TLS_CIPHER_AES_GCM_128);
	rekey(TLS_CIPHER_AES_GCM_256);
	rekey(TLS_CIPHER_CHACHA20_POLY1305);
}
END_TEST

/* The sealer's KeyUpdate says update_not_requested: its plaintext. */
START_TEST(test_own_key_update_not_requested)
{
	static unsigned char out[4 * (TLS_SEAL_MAX_PLAIN + 64)], back[64];
	struct suite13 t;
	struct tls_sealer *s;
	unsigned char type;

	suite_init(&t, TLS_CIPHER_AES_GCM_128);
	ck_assert_int_eq(tls_sealer_new(&s, &t.ci, sizeof(t.ci), t.secret, t.hlen, 1), 0);
	struct iovec iov = {plain, 100};
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	long n = tls_seal(s, 23, &iov, 1, 100, out); /* the KeyUpdate, then this record */
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(open_record(t.cipher, t.key, t.iv, true, false, 1, out, back, &type), 5);
	ck_assert_uint_eq(type, 22);
	ck_assert(memcmp(back, "\x18\x00\x00\x01\x00", 5) == 0);
	tls_sealer_free(s);
}
END_TEST

/* A TLS 1.3 secret that does not make the key and iv given, or has the
 * wrong length for the suite's hash, is refused: the keys after a
 * KeyUpdate would be wrong. */
START_TEST(test_rekey_refuses_wrong_secret)
{
	struct suite13 t;
	struct tls_sealer *s;

	suite_init(&t, TLS_CIPHER_AES_GCM_256);
	ck_assert_int_eq(tls_sealer_new(&s, &t.ci, sizeof(t.ci), t.secret, 32, 0), -EINVAL);
	t.secret[0] ^= 1;
	ck_assert_int_eq(tls_sealer_new(&s, &t.ci, sizeof(t.ci), t.secret, t.hlen, 0), -EINVAL);
	t.secret[0] ^= 1;
	ck_assert_int_eq(tls_sealer_new(&s, &t.ci, sizeof(t.ci), t.secret, t.hlen, 0), 0);
	tls_sealer_free(s);
}
END_TEST

/* TLS 1.2 (no KeyUpdate): past the re-key point the sealer is worn and goes
 * on sealing, up to AES-GCM's limit, where it refuses; ChaCha20-Poly1305
 * has no such limit. */
START_TEST(test_limits_tls12)
{
	static unsigned char out[4 * (TLS_SEAL_MAX_PLAIN + 64)];
	struct tls12_crypto_info_aes_gcm_128 g;
	struct tls12_crypto_info_chacha20_poly1305 c;
	struct tls_sealer *s;
	struct iovec iov = {plain, 100};

	memset(&g, 0, sizeof(g));
	g.info.version = TLS_1_2_VERSION;
	g.info.cipher_type = TLS_CIPHER_AES_GCM_128;
	ck_assert_int_eq(tls_sealer_new(&s, &g, sizeof(g), NULL, 0, 2), 0);
	ck_assert(!tls_sealer_can_rekey(s));
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	ck_assert(!tls_sealer_worn(s));
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	ck_assert(tls_sealer_worn(s));
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	tls_sealer_free(s);

	/* The record sequence from OpenSSL one short of the limit. */
	for (int i = 0; i < 8; i++)
		g.rec_seq[i] = (unsigned char)((TLS_LIMIT_GCM_MAX - 1) >> (56 - 8 * i));
	ck_assert_int_eq(tls_sealer_new(&s, &g, sizeof(g), NULL, 0, 0), 0);
	ck_assert(tls_sealer_worn(s));
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	ck_assert_int_eq(tls_seal(s, 23, &iov, 1, 100, out), -EKEYEXPIRED);
	tls_sealer_free(s);

	memset(&c, 0, sizeof(c));
	c.info.version = TLS_1_2_VERSION;
	c.info.cipher_type = TLS_CIPHER_CHACHA20_POLY1305;
	for (int i = 0; i < 8; i++)
		c.rec_seq[i] = (unsigned char)((TLS_LIMIT_GCM_MAX - 1) >> (56 - 8 * i));
	ck_assert_int_eq(tls_sealer_new(&s, &c, sizeof(c), NULL, 0, 0), 0);
	ck_assert(!tls_sealer_worn(s));
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	ck_assert_int_gt(tls_seal(s, 23, &iov, 1, 100, out), 0);
	tls_sealer_free(s);
}
END_TEST

/* tls_seal_fits: plaintext whose records fit in a buffer of room bytes,
 * short of room by little more than the records' own overhead. */
START_TEST(test_seal_fits)
{
	for (size_t room = 0; room <= (4u << 20); room += room < 70000 ? 1 : 4093) {
		size_t fits = tls_seal_fits(room);

		ck_assert_uint_le(fits, room);
		if (fits > 0)
			ck_assert_uint_le(tls_seal_room(fits), room);
		if (room >= 1024)
			ck_assert_uint_ge(fits, room - room / 256 - 57);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls_seal");
	TCase *tc = tcase_create("tls_seal");

	fill_plain();
	tcase_add_test(tc, test_tls13);
	tcase_add_test(tc, test_tls12);
	tcase_add_test(tc, test_refuses);
	tcase_add_test(tc, test_rekey);
	tcase_add_test(tc, test_own_key_update_not_requested);
	tcase_add_test(tc, test_rekey_refuses_wrong_secret);
	tcase_add_test(tc, test_limits_tls12);
	tcase_add_test(tc, test_seal_fits);
	suite_add_tcase(s, tc);
	return check_run(s);
}
