/* The challenge table. Global, against the rule that workers share no
 * mutable state: the ACME thread writes it and every worker reads it, and
 * a validation must find its answer on whichever worker the CA reaches.
 * Entries are few (one or two per name of an order) and live for seconds,
 * so a mutex and a linear walk are all it needs; the count lets the
 * request path and the ClientHello skip both while nothing is pending. */
#include "server/core/acme_chal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

enum chal_type { CHAL_HTTP01, CHAL_ALPN01 };

struct chal {
	enum chal_type type;
	size_t name_len, token_len, key_authz_len;
	char name[ACME_CHAL_NAME_MAX + 1];         /* lower case, no trailing dot */
	char token[ACME_CHAL_TOKEN_MAX + 1];       /* HTTP-01 */
	char key_authz[ACME_CHAL_KEY_AUTHZ_MAX + 1];
	SSL_CTX *ctx;                              /* TLS-ALPN-01: the table's reference */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct chal table[ACME_CHAL_MAX]; /* [0, used) */
static size_t used;
/* used, for readers without the lock. A relaxed load may see a put a
 * moment late; the ACME thread puts before it asks the CA to validate,
 * which is a network round trip at least before any request comes. */
static atomic_uint count;
static atomic_uint_fast64_t answered_http01, answered_alpn01;

bool acme_chal_active(void)
{
	return atomic_load_explicit(&count, memory_order_relaxed) != 0;
}

/* name, lower case and without its trailing dot, into out (room for
 * ACME_CHAL_NAME_MAX + 1): its length, or -1 when it is empty, too long or
 * holds a byte no DNS name has (a table key must not hold a NUL). */
static int name_norm(const char *name, size_t len, char out[static ACME_CHAL_NAME_MAX + 1])
{
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > ACME_CHAL_NAME_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c <= 0x20 || c >= 0x7f)
			return -1;
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
	}
	out[len] = '\0';
	return (int)len;
}

/* RFC 8555 8.3: a token is base64url (RFC 4648 5), without padding. */
static bool token_ok(const char *t, size_t len)
{
	if (len == 0 || len > ACME_CHAL_TOKEN_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* It goes into a response body as it is: printable, no line breaks. */
static bool key_authz_ok(const char *k, size_t len)
{
	if (len == 0 || len > ACME_CHAL_KEY_AUTHZ_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)k[i] <= 0x20 || (unsigned char)k[i] >= 0x7f)
			return false;
	return true;
}

/* The entry of type for name (and token, for HTTP-01), or NULL. Under the
 * lock. */
static struct chal *find(enum chal_type type, const char *name, size_t name_len,
			 const char *token, size_t token_len)
{
	for (size_t i = 0; i < used; i++) {
		struct chal *e = &table[i];
		if (e->type != type || e->name_len != name_len || memcmp(e->name, name, name_len))
			continue;
		if (type == CHAL_HTTP01 &&
		    (e->token_len != token_len || memcmp(e->token, token, token_len)))
			continue;
		return e;
	}
	return NULL;
}

/* A new entry at the end, or NULL when the table is full. Under the lock;
 * the count follows once it is filled (publish). */
static struct chal *append(void)
{
	if (used == ACME_CHAL_MAX)
		return NULL;
	struct chal *e = &table[used++];
	memset(e, 0, sizeof(*e));
	return e;
}

static void publish(void)
{
	atomic_store_explicit(&count, (unsigned)used, memory_order_relaxed);
}

int acme_chal_put_http(const char *name, const char *token, const char *key_authz)
{
	char n[ACME_CHAL_NAME_MAX + 1];
	int nl = name ? name_norm(name, strlen(name), n) : -1;
	size_t tl = token ? strlen(token) : 0, kl = key_authz ? strlen(key_authz) : 0;

	if (nl < 0 || !token_ok(token, tl) || !key_authz_ok(key_authz, kl))
		return -EINVAL;
	pthread_mutex_lock(&lock);
	struct chal *e = find(CHAL_HTTP01, n, (size_t)nl, token, tl);
	if (!e && (e = append()) != NULL) {
		e->type = CHAL_HTTP01;
		memcpy(e->name, n, (size_t)nl + 1);
		e->name_len = (size_t)nl;
		memcpy(e->token, token, tl + 1);
		e->token_len = tl;
	}
	if (e) {
		memcpy(e->key_authz, key_authz, kl + 1);
		e->key_authz_len = kl;
		publish();
	}
	pthread_mutex_unlock(&lock);
	return e ? 0 : -ENOSPC;
}

int acme_chal_put_alpn(const char *name, SSL_CTX *ctx)
{
	char n[ACME_CHAL_NAME_MAX + 1];
	int nl = name ? name_norm(name, strlen(name), n) : -1;
	SSL_CTX *old = NULL;

	if (nl < 0 || !ctx)
		return -EINVAL;
	if (!SSL_CTX_up_ref(ctx))
		return -ENOMEM;
	pthread_mutex_lock(&lock);
	struct chal *e = find(CHAL_ALPN01, n, (size_t)nl, NULL, 0);
	if (!e && (e = append()) != NULL) {
		e->type = CHAL_ALPN01;
		memcpy(e->name, n, (size_t)nl + 1);
		e->name_len = (size_t)nl;
	}
	if (e) {
		old = e->ctx;
		e->ctx = ctx;
		publish();
	}
	pthread_mutex_unlock(&lock);
	/* Outside the lock: the last reference frees a whole context. */
	SSL_CTX_free(e ? old : ctx);
	return e ? 0 : -ENOSPC;
}

void acme_chal_drop(const char *name)
{
	char n[ACME_CHAL_NAME_MAX + 1];
	int nl = name ? name_norm(name, strlen(name), n) : -1;
	SSL_CTX *gone[ACME_CHAL_MAX];
	size_t ngone = 0;

	if (nl < 0)
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < used;) {
		struct chal *e = &table[i];
		if (e->name_len != (size_t)nl || memcmp(e->name, n, (size_t)nl)) {
			i++;
			continue;
		}
		if (e->ctx)
			gone[ngone++] = e->ctx;
		*e = table[--used]; /* the order of entries means nothing */
	}
	publish();
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < ngone; i++)
		SSL_CTX_free(gone[i]);
}

int acme_chal_http(const char *host, size_t hlen, const char *token, size_t tlen, char *out,
		   size_t outlen)
{
	char n[ACME_CHAL_NAME_MAX + 1];
	int nl, len = -1;

	if (!acme_chal_active() || !host || !token_ok(token, tlen) ||
	    (nl = name_norm(host, hlen, n)) < 0)
		return -1;
	pthread_mutex_lock(&lock);
	const struct chal *e = find(CHAL_HTTP01, n, (size_t)nl, token, tlen);
	if (e && e->key_authz_len < outlen) {
		memcpy(out, e->key_authz, e->key_authz_len + 1);
		len = (int)e->key_authz_len;
	}
	pthread_mutex_unlock(&lock);
	if (len >= 0)
		atomic_fetch_add_explicit(&answered_http01, 1, memory_order_relaxed);
	return len;
}

SSL_CTX *acme_chal_alpn(const char *name, size_t len)
{
	char n[ACME_CHAL_NAME_MAX + 1];
	SSL_CTX *ctx = NULL;
	int nl;

	if (!acme_chal_active() || !name || (nl = name_norm(name, len, n)) < 0)
		return NULL;
	pthread_mutex_lock(&lock);
	const struct chal *e = find(CHAL_ALPN01, n, (size_t)nl, NULL, 0);
	/* Under the lock: a drop cannot free it between the find and the
	 * reference. */
	if (e && SSL_CTX_up_ref(e->ctx))
		ctx = e->ctx;
	pthread_mutex_unlock(&lock);
	if (ctx)
		atomic_fetch_add_explicit(&answered_alpn01, 1, memory_order_relaxed);
	return ctx;
}

void acme_chal_counts(uint64_t *http01, uint64_t *alpn01)
{
	*http01 = atomic_load_explicit(&answered_http01, memory_order_relaxed);
	*alpn01 = atomic_load_explicit(&answered_alpn01, memory_order_relaxed);
}
