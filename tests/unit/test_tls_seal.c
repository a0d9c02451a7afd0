/* Tests ktls/tls_seal.c: records it seals open with the key, nonce and
 * additional data RFC 8446 (TLS 1.3) and RFC 5288/7905 (TLS 1.2) define,
 * opened here by EVP on their own terms. Interop with real clients is the
 * integration tests' part: every HTTPS test runs through the sealer on a
 * kernel without TLS. */
#include <check.h>
#include <errno.h>
#include <linux/tls.h>
#include <string.h>

#include <openssl/evp.h>

#include "ktls/tls_seal.h"
#include "tests/unit/check_run.h"

static unsigned char plain[40000];

static void fill_plain(void)
{
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (unsigned char)(i * 7 + i / 256);
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
	uint64_t seq = 0x0102030405060708ull;

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
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci)), 0);

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
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci)), -EOPNOTSUPP);
	ci.info.cipher_type = TLS_CIPHER_AES_GCM_128;
	ci.info.version = 0x0301;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci)), -EOPNOTSUPP);
	ci.info.version = TLS_1_3_VERSION;
	ck_assert_int_eq(tls_sealer_new(&s, &ci, 4), -EOPNOTSUPP);
	ck_assert_int_eq(tls_sealer_new(&s, &ci, sizeof(ci) - 1), -EOPNOTSUPP);
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
	suite_add_tcase(s, tc);
	return check_run(s);
}
