/* The ACME client's HTTPS requests (RFC 8555 §6.1): blocking, for the ACME
 * thread only, one request per connection (Connection: close), HTTP/1.1
 * alone. The CA is one origin, so a client is made for its directory URL
 * and refuses any other scheme, host or port: a URL in a CA's answer
 * cannot send the account's signed requests elsewhere.
 *
 * Every wait is a poll against one deadline for the whole exchange
 * (resolving the name excepted: the resolver's own timeouts bound it), and
 * the stop flag is looked at between steps and at least every
 * ACME_HTTP_STOP_POLL_MS while waiting, so a stop never waits on a hung CA.
 * The certificate is verified against the CA file or the system's store,
 * by name with SNI, or by address for an IP literal (no SNI: RFC 6066 §3
 * forbids one). Responses are parsed by llhttp (chunked, Content-Length or
 * to the end of the connection), their bodies at most ACME_HTTP_BODY_MAX. */
#ifndef KTLSD_SERVER_ACME_HTTP_H
#define KTLSD_SERVER_ACME_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/acme/acme_http_resp.h" /* struct acme_http_resp */

#define ACME_HTTP_STOP_POLL_MS 100

struct acme_http_client; /* the SSL_CTX and the CA's host/port */

/* base_url: the directory URL (https only). ca_file: PEM file of CA
 * certificates to trust, or NULL for the system store. NULL with a
 * one-line reason. */
struct acme_http_client *acme_http_new(const char *base_url, const char *ca_file, char *err,
                                       size_t errlen);
void acme_http_free(struct acme_http_client *c);

/* One request on a new connection (Connection: close): GET, HEAD or POST
 * to url, which must be on the same scheme://host:port as base_url (else
 * -EPERM); POST bodies are sent with Content-Type: application/jose+json.
 * timeout_ms bounds the whole exchange. stop: checked between steps (NULL:
 * none), gives -ECANCELED. 0 with *r filled (any HTTP status), or -errno
 * with a one-line reason in err naming the step ("connect
 * 127.0.0.1:14000: Connection refused", "TLS: certificate verify failed:
 * …", "response: over 1 MiB", "response: timed out"); *r is then empty
 * (status 0, no body). A header the struct keeps that does not fit its
 * field is an error (a cut Location or nonce would be a wrong one). */
int acme_http_do(struct acme_http_client *c, const char *method, const char *url, const char *body,
                 size_t blen, int timeout_ms, const volatile bool *stop, struct acme_http_resp *r,
                 char *err, size_t errlen);

#endif
