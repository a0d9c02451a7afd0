#include "ktls/tls_seal.h"

#include <errno.h>
#include <linux/tls.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "ktls/tls_limit.h"

struct tls_sealer {
	/* The cipher context (its key schedule and GCM tables, ~1 KiB) only
	 * while responses are sent, waits for room included: an idle
	 * connection keeps the key itself (tls_sealer_idle), 10,000 idle
	 * connections 10 MiB less. */
	EVP_CIPHER_CTX *ctx;
	const EVP_CIPHER *cipher;
	unsigned char key[32];
	bool tls13;
	bool explicit_nonce;   /* TLS 1.2 AES-GCM: 8 bytes of nonce go on the wire */
	uint8_t iv[12];        /* salt || iv: XORed with the sequence, or salt || counter */
	uint64_t seq;          /* of the next record under this key */
	struct tls_key_limit limit;
	/* TLS 1.3: the traffic secret key and iv come from (RFC 8446 7.3), and
	 * the next keys from it (7.2); 0 long: the keys cannot change. */
	unsigned char secret[48];
	size_t secret_len;
	const char *digest;    /* the cipher suite's hash, for HKDF */
};

static uint64_t load_be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void store_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* HKDF-Expand-Label(secret, label, "", n) (RFC 8446 7.1). */
static bool expand_label(const struct tls_sealer *s, const char *label, unsigned char *out,
			 size_t n)
{
	unsigned char info[2 + 1 + 6 + 12 + 1];
	size_t ll = strlen(label);
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
	bool ok = false;

	if (ll > 12)
		return false;
	info[0] = (unsigned char)(n >> 8), info[1] = (unsigned char)n;
	info[2] = (unsigned char)(6 + ll);
	memcpy(info + 3, "tls13 ", 6);
	memcpy(info + 9, label, ll);
	info[9 + ll] = 0; /* no context */
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
	    OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)s->digest, 0),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)s->secret, s->secret_len),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, 10 + ll),
	    OSSL_PARAM_construct_end(),
	};
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	if (kctx)
		ok = EVP_KDF_derive(kctx, out, n, params) > 0;
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	return ok;
}

/* The key and iv of s->secret (RFC 8446 7.3). */
static bool keys_of_secret(const struct tls_sealer *s, unsigned char key[32],
			   unsigned char iv[12])
{
	return expand_label(s, "key", key, (size_t)EVP_CIPHER_key_length(s->cipher)) &&
	       expand_label(s, "iv", iv, 12);
}

/* The next traffic secret, key and iv, the sequence from 0 (RFC 8446
 * 4.6.3, 7.2); the cipher context is made again from the new key. */
static bool next_keys(struct tls_sealer *s)
{
	unsigned char next[sizeof(s->secret)];
	bool ok = expand_label(s, "traffic upd", next, s->secret_len);

	if (ok) {
		memcpy(s->secret, next, s->secret_len);
		ok = keys_of_secret(s, s->key, s->iv);
	}
	OPENSSL_cleanse(next, sizeof(next));
	EVP_CIPHER_CTX_free(s->ctx);
	s->ctx = NULL;
	s->seq = 0;
	return ok;
}

/* A TLS 1.3 sealer keeps the secret only if it makes the key and iv it was
 * given: a wrong one would make the keys after a KeyUpdate wrong. */
static int take_secret(struct tls_sealer *s, const unsigned char *secret, size_t len)
{
	unsigned char key[32], iv[12];
	/* TLS_AES_256_GCM_SHA384; the other two suites hash with SHA-256. */
	size_t want = s->cipher == EVP_aes_256_gcm() ? 48 : 32;
	int rc = -EINVAL;

	if (!secret || !s->tls13)
		return 0;
	if (len != want)
		return -EINVAL;
	s->digest = want == 48 ? "SHA384" : "SHA256";
	memcpy(s->secret, secret, len);
	s->secret_len = len;
	if (keys_of_secret(s, key, iv) &&
	    CRYPTO_memcmp(key, s->key, (size_t)EVP_CIPHER_key_length(s->cipher)) == 0 &&
	    CRYPTO_memcmp(iv, s->iv, 12) == 0)
		rc = 0;
	OPENSSL_cleanse(key, sizeof(key));
	if (rc < 0) {
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
		s->secret_len = 0;
	}
	return rc;
}

int tls_sealer_new(struct tls_sealer **out, const void *crypto_info, size_t len,
		   const unsigned char *secret, size_t secret_len, uint64_t records)
{
	struct tls_crypto_info head;
	const EVP_CIPHER *cipher;
	const unsigned char *key, *iv, *salt, *seq;
	size_t iv_len, salt_len;
	struct tls_sealer *s;
	int rc;

	if (len < sizeof(head))
		return -EOPNOTSUPP;
	memcpy(&head, crypto_info, sizeof(head));
	switch (head.cipher_type) {
	case TLS_CIPHER_AES_GCM_128: {
		const struct tls12_crypto_info_aes_gcm_128 *c = crypto_info;
		if (len < sizeof(*c))
			return -EOPNOTSUPP;
		cipher = EVP_aes_128_gcm();
		key = c->key, iv = c->iv, salt = c->salt, seq = c->rec_seq;
		iv_len = sizeof(c->iv), salt_len = sizeof(c->salt);
		break;
	}
	case TLS_CIPHER_AES_GCM_256: {
		const struct tls12_crypto_info_aes_gcm_256 *c = crypto_info;
		if (len < sizeof(*c))
			return -EOPNOTSUPP;
		cipher = EVP_aes_256_gcm();
		key = c->key, iv = c->iv, salt = c->salt, seq = c->rec_seq;
		iv_len = sizeof(c->iv), salt_len = sizeof(c->salt);
		break;
	}
	case TLS_CIPHER_CHACHA20_POLY1305: {
		const struct tls12_crypto_info_chacha20_poly1305 *c = crypto_info;
		if (len < sizeof(*c))
			return -EOPNOTSUPP;
		cipher = EVP_chacha20_poly1305();
		key = c->key, iv = c->iv, salt = NULL, seq = c->rec_seq;
		iv_len = sizeof(c->iv), salt_len = 0;
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	if (head.version != TLS_1_2_VERSION && head.version != TLS_1_3_VERSION)
		return -EOPNOTSUPP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->tls13 = head.version == TLS_1_3_VERSION;
	s->explicit_nonce = !s->tls13 && head.cipher_type != TLS_CIPHER_CHACHA20_POLY1305;
	if (salt_len)
		memcpy(s->iv, salt, salt_len);
	memcpy(s->iv + salt_len, iv, iv_len);
	s->seq = load_be64(seq);
	s->cipher = cipher;
	s->limit = tls_key_limit(head.cipher_type == TLS_CIPHER_CHACHA20_POLY1305, records);
	memcpy(s->key, key, (size_t)EVP_CIPHER_key_length(cipher));
	rc = take_secret(s, secret, secret_len);
	if (rc < 0) {
		tls_sealer_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

bool tls_sealer_can_rekey(const struct tls_sealer *s)
{
	return s->secret_len > 0;
}

bool tls_sealer_worn(const struct tls_sealer *s)
{
	return s->seq >= s->limit.rekey_at && !tls_sealer_can_rekey(s);
}

/* The cipher context, keyed, made again after tls_sealer_idle. */
static bool keyed(struct tls_sealer *s)
{
	if (s->ctx)
		return true;
	s->ctx = EVP_CIPHER_CTX_new();
	if (s->ctx && EVP_EncryptInit_ex(s->ctx, s->cipher, NULL, NULL, NULL) &&
	    EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) &&
	    EVP_EncryptInit_ex(s->ctx, NULL, NULL, s->key, NULL))
		return true;
	EVP_CIPHER_CTX_free(s->ctx);
	s->ctx = NULL;
	return false;
}

void tls_sealer_idle(struct tls_sealer *s)
{
	if (s) {
		EVP_CIPHER_CTX_free(s->ctx);
		s->ctx = NULL;
	}
}

void tls_sealer_free(struct tls_sealer *s)
{
	if (!s)
		return;
	EVP_CIPHER_CTX_free(s->ctx);
	OPENSSL_cleanse(s, sizeof(*s));
	free(s);
}

/* One record of n plaintext bytes taken from *iov at *off onward. */
static long seal_record(struct tls_sealer *s, unsigned char type, const struct iovec **iov,
			size_t *off, size_t n, unsigned char *out)
{
	unsigned char nonce[12], aad[13], *p = out + 5;
	size_t body = n + 16 + (s->tls13 ? 1 : 0) + (s->explicit_nonce ? 8 : 0);
	int l;

	memcpy(nonce, s->iv, 12);
	if (s->explicit_nonce) {
		/* salt || counter: the counter goes out in clear, then counts up */
		memcpy(p, nonce + 4, 8);
		p += 8;
		store_be64(s->iv + 4, load_be64(s->iv + 4) + 1);
	} else {
		unsigned char sq[8];
		store_be64(sq, s->seq);
		for (int i = 0; i < 8; i++)
			nonce[4 + i] ^= sq[i];
	}
	out[0] = s->tls13 ? 23 : type;
	out[1] = 3, out[2] = 3;
	out[3] = (unsigned char)(body >> 8), out[4] = (unsigned char)body;
	if (s->tls13) {
		memcpy(aad, out, 5);
	} else {
		store_be64(aad, s->seq);
		aad[8] = type, aad[9] = 3, aad[10] = 3;
		aad[11] = (unsigned char)(n >> 8), aad[12] = (unsigned char)n;
	}
	if (!EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, nonce) ||
	    !EVP_EncryptUpdate(s->ctx, NULL, &l, aad, s->tls13 ? 5 : 13))
		return -EIO;
	for (size_t left = n; left > 0;) {
		size_t take = (*iov)->iov_len - *off;
		if (take > left)
			take = left;
		if (!EVP_EncryptUpdate(s->ctx, p, &l, (const unsigned char *)(*iov)->iov_base + *off,
				       (int)take))
			return -EIO;
		p += l;
		left -= take;
		*off += take;
		if (*off == (*iov)->iov_len) {
			(*iov)++;
			*off = 0;
		}
	}
	if (s->tls13) {
		if (!EVP_EncryptUpdate(s->ctx, p, &l, &type, 1))
			return -EIO;
		p += l;
	}
	if (!EVP_EncryptFinal_ex(s->ctx, p, &l))
		return -EIO;
	p += l;
	if (!EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_AEAD_GET_TAG, 16, p))
		return -EIO;
	p += 16;
	s->seq++;
	return p - out;
}

/* A KeyUpdate message (RFC 8446 4.6.3): type 24, length 1, request_update. */
static bool is_key_update(const struct iovec *iov, size_t len)
{
	const unsigned char *p = iov->iov_base;
	return len == 5 && iov->iov_len >= 5 && p[0] == 24 && p[1] == 0 && p[2] == 0 && p[3] == 1;
}

/* Before each record: past the re-key point, a KeyUpdate of ours under the
 * old key, then the new key (a TLS 1.2 key goes on to its limit, and
 * tls_sealer_worn says to end the connection). Returns the bytes written
 * at out. */
static long key_check(struct tls_sealer *s, unsigned char *out)
{
	static const unsigned char update_not_requested[5] = {24, 0, 0, 1, 0};
	struct iovec iov = {(void *)update_not_requested, 5};
	const struct iovec *piov = &iov;
	size_t off = 0;
	long n = 0;

	if (s->seq >= s->limit.rekey_at && tls_sealer_can_rekey(s)) {
		n = seal_record(s, 22, &piov, &off, 5, out);
		if (n < 0)
			return n;
		if (!next_keys(s))
			return -EIO;
	}
	if (s->seq >= s->limit.max)
		return -EKEYEXPIRED;
	if (!keyed(s))
		return -EIO;
	return n;
}

long tls_seal(struct tls_sealer *s, unsigned char type, const struct iovec *iov, int iovcnt,
	      size_t len, unsigned char *out)
{
	size_t off = 0, done = 0;
	long total = 0;

	(void)iovcnt;
	if (!keyed(s))
		return -EIO;
	while (iov->iov_len == 0 && len > 0)
		iov++;
	bool key_update = s->tls13 && type == 22 && is_key_update(iov, len);
	while (done < len) {
		size_t n = len - done < TLS_SEAL_MAX_PLAIN ? len - done : TLS_SEAL_MAX_PLAIN;
		long r = key_check(s, out + total);
		if (r < 0)
			return r;
		total += r;
		r = seal_record(s, type, &iov, &off, n, out + total);
		if (r < 0)
			return r;
		total += r;
		done += n;
	}
	/* OpenSSL answered a client's KeyUpdate: what follows it is sealed
	 * with the next keys, which the client now expects. */
	if (key_update && (!tls_sealer_can_rekey(s) || !next_keys(s)))
		return -EIO;
	return total;
}
