#include "ktls/ktls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ktls/tls_seal.h"
#include <openssl/ssl.h>

#ifndef SOL_TLS
#define SOL_TLS 282
#endif
#ifndef TCP_ULP
#define TCP_ULP 31
#endif

const char *const ktls_cipher_names[3] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305"};

/* The length of the kernel's crypto_info for a cipher. OpenSSL hands us
 * its own struct, which starts with the kernel's union (version, then
 * cipher_type) and ends with a length whose position depends on the kernel
 * headers OpenSSL was built with: compute the length from the cipher
 * instead of mirroring that struct. */
static unsigned crypto_info_len(unsigned short cipher)
{
	switch (cipher) {
	case TLS_CIPHER_AES_GCM_128:
		return sizeof(struct tls12_crypto_info_aes_gcm_128);
	case TLS_CIPHER_AES_GCM_256:
		return sizeof(struct tls12_crypto_info_aes_gcm_256);
	case TLS_CIPHER_AES_CCM_128:
		return sizeof(struct tls12_crypto_info_aes_ccm_128);
	case TLS_CIPHER_CHACHA20_POLY1305:
		return sizeof(struct tls12_crypto_info_chacha20_poly1305);
	default:
		return 0;
	}
}

int ktls_prepare_tx(struct tls_wire *w, const void *openssl_crypto_info)
{
	struct tls_crypto_info head;
	unsigned len;

	if ((!w->ktls_allowed && !w->seal_allowed) || w->ktls_tx)
		return -EAGAIN;
	memcpy(&head, openssl_crypto_info, sizeof(head));
	len = crypto_info_len(head.cipher_type);
	if (len == 0 || len > sizeof(w->keys.info)) {
		w->ktls_error = EOPNOTSUPP;
		return -EOPNOTSUPP;
	}
	w->key_limit = tls_key_limit(head.cipher_type == TLS_CIPHER_CHACHA20_POLY1305,
				     w->rekey_records);
	if (!w->ktls_allowed) {
		/* The sealer, made now: if it cannot take these keys, OpenSSL
		 * simply goes on sealing itself. A TLS 1.3 sealer must be able
		 * to follow a KeyUpdate (RFC 8446 4.6.3), so it needs the
		 * secret the keys came from. */
		int rc = head.version == TLS_1_3_VERSION && w->tx_secret_len == 0 ? -EINVAL : 0;
		if (rc == 0)
			rc = tls_sealer_new(&w->sealer, openssl_crypto_info, len, w->tx_secret,
					    w->tx_secret_len, w->rekey_records);
		OPENSSL_cleanse(w->tx_secret, sizeof(w->tx_secret));
		w->tx_secret_len = 0;
		if (rc < 0) {
			w->ktls_error = -rc;
			return rc;
		}
		w->sealing = true;
	} else if (setsockopt(w->fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) < 0 &&
		   errno != EEXIST) {
		/* The ULP now (no bytes move): if the kernel refuses it, OpenSSL
		 * simply goes on in user space. */
		w->ktls_error = errno;
		return -errno;
	} else {
		memcpy(w->keys.info.bytes, openssl_crypto_info, len);
		w->keys.len = len;
	}
	w->switch_at = w->tx_len;
	w->switch_pending = true;
	w->ktls_tx = true;
	return 0;
}

int ktls_switch_tx(struct tls_wire *w)
{
	int rc = 0;

	if (!w->sealing && setsockopt(w->fd, SOL_TLS, TLS_TX, w->keys.info.bytes, w->keys.len) < 0) {
		w->ktls_error = errno;
		rc = -errno;
	}
	OPENSSL_cleanse(&w->keys, sizeof(w->keys));
	w->switch_pending = false;
	return rc;
}

void ktls_account_tx(struct tls_wire *w, size_t bytes)
{
	/* Each send of n bytes starts at most ceil(n / 16 KiB) records:
	 * the kernel closes a record at 16 KiB, or at the end of a send
	 * without MSG_MORE, and a send that fills an open record starts none. */
	if (w->ktls_tx && !w->sealing)
		w->tx_records += (bytes + TLS_SEAL_MAX_PLAIN - 1) / TLS_SEAL_MAX_PLAIN;
}

bool ktls_tx_key_spent(const struct tls_wire *w)
{
	return w->ktls_tx && !w->sealing &&
	       w->tx_records + KTLS_RECORDS_IN_FLIGHT >= w->key_limit.max;
}

bool ktls_openssl_built(void)
{
#ifdef SSL_OP_ENABLE_KTLS
	return true;
#else
	return false;
#endif
}

void ktls_set_ctrl_record_type(struct tls_wire *w, int type)
{
	w->ctrl_record_type = type;
}

/* A connected loopback TCP pair; the ULP can only attach to an established socket. */
static int loopback_pair(int *client, int *server)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = -1;

	*client = *server = -1;
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		goto out;
	*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*client < 0 || connect(*client, (struct sockaddr *)&a, sizeof(a)) < 0)
		goto out;
	*server = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*server >= 0)
		rc = 0;
out:
	if (rc < 0)
		rc = -errno;
	close(l);
	if (rc < 0) {
		if (*client >= 0)
			close(*client);
		*client = -1;
	}
	return rc;
}

static bool probe_cipher(int version, int cipher)
{
	union {
		struct tls12_crypto_info_aes_gcm_128 g128;
		struct tls12_crypto_info_aes_gcm_256 g256;
		struct tls12_crypto_info_chacha20_poly1305 c20;
	} ci;
	socklen_t len;
	int c, s;
	bool ok = false;

	memset(&ci, 0, sizeof(ci));
	ci.g128.info.version = (unsigned short)version;
	ci.g128.info.cipher_type = (unsigned short)cipher;
	len = cipher == TLS_CIPHER_AES_GCM_128   ? sizeof(ci.g128)
	      : cipher == TLS_CIPHER_AES_GCM_256 ? sizeof(ci.g256)
						 : sizeof(ci.c20);
	if (loopback_pair(&c, &s) < 0)
		return false;
	if (setsockopt(s, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) == 0 &&
	    setsockopt(s, SOL_TLS, TLS_TX, &ci, len) == 0)
		ok = true;
	close(c);
	close(s);
	return ok;
}

void ktls_probe(struct ktls_support *s)
{
	static const int ciphers[3] = {TLS_CIPHER_AES_GCM_128, TLS_CIPHER_AES_GCM_256,
				       TLS_CIPHER_CHACHA20_POLY1305};
	static const int versions[2] = {TLS_1_2_VERSION, TLS_1_3_VERSION};
	int c, sv;

	memset(s, 0, sizeof(*s));
	s->openssl = ktls_openssl_built();
	if (loopback_pair(&c, &sv) < 0) {
		s->ulp_errno = errno;
		return;
	}
	if (setsockopt(sv, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) == 0)
		s->ulp = true;
	else
		s->ulp_errno = errno;
	close(c);
	close(sv);
	if (!s->ulp)
		return;
	for (int v = 0; v < 2; v++)
		for (int i = 0; i < 3; i++)
			s->tx[v][i] = probe_cipher(versions[v], ciphers[i]);
}
