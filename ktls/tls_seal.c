#include "ktls/tls_seal.h"

#include <errno.h>
#include <linux/tls.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

struct tls_sealer {
	/* The cipher context (its key schedule and GCM tables, ~1 KiB) only
	 * while records are sealed: an idle connection keeps the key itself
	 * (tls_sealer_idle), 10,000 idle connections 10 MiB less. */
	EVP_CIPHER_CTX *ctx;
	const EVP_CIPHER *cipher;
	unsigned char key[32];
	bool tls13;
	bool explicit_nonce;   /* TLS 1.2 AES-GCM: 8 bytes of nonce go on the wire */
	uint8_t iv[12];        /* salt || iv: XORed with the sequence, or salt || counter */
	uint64_t seq;
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

int tls_sealer_new(struct tls_sealer **out, const void *crypto_info, size_t len)
{
	struct tls_crypto_info head;
	const EVP_CIPHER *cipher;
	const unsigned char *key, *iv, *salt, *seq;
	size_t iv_len, salt_len;
	struct tls_sealer *s;

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
	memcpy(s->key, key, (size_t)EVP_CIPHER_key_length(cipher));
	*out = s;
	return 0;
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
	while (done < len) {
		size_t n = len - done < TLS_SEAL_MAX_PLAIN ? len - done : TLS_SEAL_MAX_PLAIN;
		long r = seal_record(s, type, &iov, &off, n, out + total);
		if (r < 0)
			return r;
		total += r;
		done += n;
	}
	return total;
}
