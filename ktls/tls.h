/* The OpenSSL side of a worker: its SSL_CTX (certificates, protocols,
 * ciphers, ALPN, session resumption) and the per-connection handshake, read,
 * write and shutdown over a tls_wire. Knows nothing of HTTP.
 *
 * Each worker builds its own SSL_CTX from the same settings, so the session
 * cache needs no lock. Session tickets work across workers without sharing
 * anything mutable: ticket keys are derived from one random master secret and
 * the current rotation epoch, so every worker computes the same keys. */
#ifndef KTLSD_KTLS_TLS_H
#define KTLSD_KTLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "ktls/tls_bio.h"
#include "ktls/tls_pem.h"

#define TLS_TICKET_MASTER_LEN 32
#define TLS_TICKET_FILE_KEYS_MAX 8

/* A session-ticket key from a file, as nginx's ssl_session_ticket_key:
 * 48 bytes (name, AES-128 key, HMAC key: 16 each) or 80 (name 16, HMAC
 * key 32, AES-256 key 32). */
struct tls_ticket_key {
	uint8_t name[16];
	uint8_t aes[32];
	uint8_t mac[32];
	bool aes256;                  /* 80-byte key: AES-256-CBC and a 32-byte HMAC key */
};

/* One key file's n bytes (path only names it in err): 0, or -EINVAL with a
 * one-line reason naming the file. */
int tls_ticket_key_parse(const char *path, const char *buf, size_t n, struct tls_ticket_key *k,
			 char *err, size_t errlen);

/* The certificates of one site: ECDSA and RSA pairs, one context each. */
/* One of each key type a site may use: RSA, RSA-PSS, ECDSA, Ed25519. */
#define TLS_SITE_MAX_CERTS 4

struct tls_site {
	const struct tls_cert_pair *certs;
	size_t ncerts;
	/* Its name, different for every site and the same after a reload:
	 * sessions resume only on the site that made them. NULL: the
	 * top-level site. */
	const char *name;
};

struct tls_settings {
	const struct tls_site *sites; /* [0] serves clients whose SNI names no other */
	size_t nsites;
	/* Which of sites a client's SNI names, or -1. Called for each
	 * handshake that sends SNI when there are several sites. */
	int (*site_of)(const void *arg, const char *name, size_t len);
	const void *site_arg;
	/* TLS-ALPN-01 (RFC 8737; ktls/tls_acme.h), or NULL: no challenge
	 * is ever answered. acme_active: whether any is being answered now,
	 * asked of every ClientHello, so it must cost next to nothing.
	 * acme_ctx_of: the challenge context for the name a ClientHello
	 * sent in SNI (arg: site_arg), a reference the handshake drops, or
	 * NULL; asked only when acme-tls/1 is the one protocol it offers. */
	bool (*acme_active)(void);
	SSL_CTX *(*acme_ctx_of)(const void *arg, const char *name, size_t len);
	const char *protocols;        /* "TLSv1.2 TLSv1.3" */
	const char *tls13_ciphersuites;
	const char *tls12_ciphers;
	bool session_tickets;
	bool prefer_server_ciphers; /* our cipher order over the client's (ChaCha20 first stays) */
	unsigned session_cache;       /* entries; 0 = no stateful cache */
	unsigned ticket_rotate_s;
	bool ktls;                    /* ask OpenSSL to switch to kernel TLS where it can */
	/* ktlsd seals TX records itself (no kernel TLS): it needs each TLS 1.3
	 * traffic secret to follow a KeyUpdate, and OpenSSL tells them only to
	 * a key log callback (see tls.c, keylog_cb). */
	bool seal;
	bool h2;                      /* offer h2 in ALPN */
	uint64_t rekey_records;       /* --tls-rekey-records: records per key (0: the cipher's limit) */
	uint8_t ticket_master[TLS_TICKET_MASTER_LEN];
	/* With keys from files, these and nothing else: the first encrypts. */
	struct tls_ticket_key file_keys[TLS_TICKET_FILE_KEYS_MAX];
	size_t nfile_keys;
};

struct tls_server;

/* Builds a worker's context, holding one reference. On failure, a one-line
 * reason in err. */
int tls_server_new(struct tls_server **out, const struct tls_settings *s, char *err,
		   size_t errlen);

/* Each connection holds a reference (taken by tls_conn_new, dropped with
 * tls_server_put after SSL_free), so a reload can replace the worker's
 * context while connections made with the old one finish. Worker-local:
 * no atomics. */
void tls_server_put(struct tls_server *srv);

enum tls_status {
	TLS_DONE = 0,        /* handshake complete / bytes transferred */
	TLS_WANT_READ = 1,   /* feed more received bytes */
	TLS_CLOSED = 2,      /* the peer sent close_notify */
	TLS_FAILED = -1,     /* fatal: drop the connection */
};

/* The name the client sent in SNI, or NULL. */
const char *tls_servername(const SSL *ssl);

/* A new server-side connection on w; NULL on allocation failure. */
SSL *tls_conn_new(struct tls_server *srv, struct tls_wire *w);

enum tls_status tls_handshake(SSL *ssl);

/* Decrypts up to len bytes into out; *n is set when TLS_DONE. TLS_FAILED
 * also marks the wire failed (its alert may still wait to be sent). */
enum tls_status tls_read(SSL *ssl, char *out, size_t len, size_t *n);

/* OpenSSL holds received bytes it has not decrypted, or decrypted bytes
 * not yet read (its read-ahead buffer): tls_read has work without new input. */
bool tls_read_pending(const SSL *ssl);

/* Encrypts all len bytes into the wire's output (never partial). */
enum tls_status tls_write(SSL *ssl, const char *data, size_t len);

/* Queues close_notify. */
void tls_shutdown(SSL *ssl);

/* For the access log: "TLSv1.3", cipher name, ALPN ("http/1.1", "h2" or ""). */
const char *tls_version_name(const SSL *ssl);
const char *tls_cipher_name(const SSL *ssl);
void tls_alpn(const SSL *ssl, const char **proto, unsigned *len);

/* The TX key cannot go on and cannot be replaced: the client sent a TLS 1.3
 * KeyUpdate that the kernel cannot follow (OpenSSL 3.0 cannot re-key kTLS),
 * or the key sealed as many records as it should (tls_limit.h) where
 * nothing can replace it (TLS 1.2, the kernel's, OpenSSL's). Finish the
 * response in progress, then close. (ktlsd's sealer replaces a TLS 1.3 key
 * by itself.) */
bool tls_rekey_needed(const SSL *ssl);

/* Last OpenSSL error as text, for logs. */
const char *tls_last_error(char *buf, size_t len);

#endif
