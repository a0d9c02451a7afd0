#include "ktls/ktls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#ifndef SOL_TLS
#define SOL_TLS 282
#endif
#ifndef TCP_ULP
#define TCP_ULP 31
#endif

const char *const ktls_cipher_names[3] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305"};

/* Mirror of OpenSSL 3.0's internal struct tls_crypto_info_all (include/
 * internal/ktls.h): the union of the kernel's crypto_info structs, then the
 * length to pass to setsockopt. Only the length's position matters to us. */
struct ossl_ktls_crypto_info {
	union {
		struct tls12_crypto_info_aes_gcm_128 gcm128;
		struct tls12_crypto_info_aes_gcm_256 gcm256;
		struct tls12_crypto_info_aes_ccm_128 ccm128;
		struct tls12_crypto_info_chacha20_poly1305 chacha20poly1305;
	};
	size_t tls_crypto_info_len;
};

int ktls_flush_wire(struct tls_wire *w)
{
	size_t off = 0;
	int rc = 0;

	while (off < w->tx_len) {
		ssize_t n = send(w->fd, w->tx + off, w->tx_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* The socket buffer is empty at this point of a handshake,
			 * so this only waits on a pathological peer; bounded. */
			struct pollfd pfd = {.fd = w->fd, .events = POLLOUT};
			if (poll(&pfd, 1, 2000) > 0)
				continue;
		}
		rc = -(n < 0 ? errno : EPIPE);
		break;
	}
	memmove(w->tx, w->tx + off, w->tx_len - off);
	w->tx_len -= off;
	return rc;
}

int ktls_enable_tx(struct tls_wire *w, const void *openssl_crypto_info)
{
	const struct ossl_ktls_crypto_info *ci = openssl_crypto_info;

	if (!w->ktls_allowed || w->tx_len != 0 || w->tx_busy)
		return -EAGAIN;
	if (setsockopt(w->fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) < 0 && errno != EEXIST) {
		w->ktls_error = errno;
		return -errno;
	}
	if (setsockopt(w->fd, SOL_TLS, TLS_TX, ci, (socklen_t)ci->tls_crypto_info_len) < 0) {
		/* The ULP stays attached without TX keys: the socket goes on as
		 * plain TCP, and OpenSSL keeps encrypting in user space. */
		w->ktls_error = errno;
		return -errno;
	}
	w->ktls_tx = true;
	return 0;
}

void ktls_set_ctrl_record_type(struct tls_wire *w, int type)
{
	w->ctrl_record_type = type;
}

int ktls_send_ctrl_record(struct tls_wire *w, const char *buf, int len)
{
	unsigned char type = (unsigned char)(w->ctrl_record_type ? w->ctrl_record_type : 23);

	/* After a client KeyUpdate, OpenSSL 3.0 answers with its own and moves
	 * to new write keys, but the kernel keeps the old ones and cannot be
	 * re-keyed. Sending that KeyUpdate would make the client expect new
	 * keys and reject everything after it; holding it back keeps the old
	 * keys valid for both sides until we close (with close_notify). */
	if (w->key_update_seen && type == 22)
		return len;
	char cbuf[CMSG_SPACE(sizeof(type))];
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = (size_t)len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_TLS;
	c->cmsg_type = TLS_SET_RECORD_TYPE;
	c->cmsg_len = CMSG_LEN(sizeof(type));
	memcpy(CMSG_DATA(c), &type, sizeof(type));

	/* Rare and small (a session ticket after the handshake, an alert,
	 * close_notify), and only with no ring send in flight, so the socket
	 * has room; a peer that reads nothing costs at most a short wait. */
	for (int tries = 0; tries < 10; tries++) {
		ssize_t n = sendmsg(w->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0)
			return (int)n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		struct pollfd pfd = {.fd = w->fd, .events = POLLOUT};
		if (poll(&pfd, 1, 10) < 0)
			return -errno;
	}
	return -EAGAIN;
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
#ifdef SSL_OP_ENABLE_KTLS
	s->openssl = true;
#endif
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
