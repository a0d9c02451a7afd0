/* The transport's TLS: the handshake, what the access log and the
 * protocols ask of the session, when OpenSSL may write, close_notify
 * (sock.h's "TLS" part). */
#include "server/net/sock-int.h"

#include <string.h>

#include "ktls/tls.h"
#include "server/core/access_log.h"
#include "server/net/sock.h"

/* ---- TLS ---- */

bool sock_is_tls(const struct sock *s)
{
	return s->ssl != NULL;
}

bool sock_ktls_tx(const struct sock *s)
{
	return s->wire.ktls_tx && !s->wire.sealing;
}

bool sock_user_tls(const struct sock *s)
{
	return s->ssl && !s->wire.ktls_tx;
}

const char *sock_tls_version(const struct sock *s)
{
	return s->ssl ? tls_version_name(s->ssl) : "-";
}

const char *sock_tls_cipher(const struct sock *s)
{
	return s->ssl ? tls_cipher_name(s->ssl) : "-";
}

const char *sock_tls_servername(const struct sock *s)
{
	return s->ssl ? tls_servername(s->ssl) : NULL;
}

void sock_log_tls(const struct sock *s, struct access_record *rec)
{
	rec->tls_version = sock_tls_version(s);
	rec->tls_cipher = sock_tls_cipher(s);
	rec->ktls_tx = sock_ktls_tx(s);
}

bool sock_alpn_is(const struct sock *s, const char *proto)
{
	const char *p;
	unsigned len;

	if (!s->ssl)
		return false;
	tls_alpn(s->ssl, &p, &len);
	return p && len == strlen(proto) && memcmp(p, proto, len) == 0;
}

bool sock_rekey_needed(const struct sock *s)
{
	return s->ssl && tls_rekey_needed(s->ssl);
}

/* OpenSSL may write (tickets, alerts, the switch to kTLS): with user-space
 * TLS only while nothing of tx is on its way, so that what it writes
 * follows what is queued and tx does not move under a send. Under kTLS its
 * writes are queued control records and never touch tx. */
bool sock_openssl_may_run(const struct sock *s)
{
	return !s->send_posted && !s->ctrl_posted;
}

/* Whether OpenSSL left something to send that no protocol step will: its
 * ciphertext in tx (user-space TLS), or control records with no plaintext
 * of ours in front (kTLS; plaintext in tx may be an HTTP/2 batch waiting
 * for its file reads, which must not leave early). */
bool sock_openssl_output_waits(const struct sock *s)
{
	if (!s->wire.ktls_tx || s->wire.switch_pending)
		return s->wire.tx_len > s->tx_sent;
	return s->wire.ctrl && s->wire.ctrl->at == s->tx_sent && s->wire.tx_len == s->tx_sent;
}

enum sock_handshake sock_handshake(struct sock *s)
{
	if (!sock_openssl_may_run(s))
		return SOCK_HS_AGAIN;
	enum tls_status st = tls_handshake(s->ssl);
	if (sock_openssl_output_waits(s))
		sock_post_next_send(s);
	if (st == TLS_FAILED) {
		s->env->stats->handshakes[STAT_HS_FAILED]++;
		return SOCK_HS_FAILED;
	}
	if (st == TLS_DONE) {
		struct worker_stats *stats = s->env->stats;
		if (sock_ktls_tx(s))
			stats->ktls_tx++;
		else
			stats->ktls_off++;
		stats->handshakes[SSL_session_reused(s->ssl) ? STAT_HS_RESUMED : STAT_HS_FULL]++;
		return SOCK_HS_DONE;
	}
	return SOCK_HS_AGAIN;
}

void sock_close_notify(struct sock *s)
{
	if (s->ssl && SSL_is_init_finished(s->ssl) && sock_openssl_may_run(s))
		tls_shutdown(s->ssl);
}
