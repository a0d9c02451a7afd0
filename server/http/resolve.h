/* proto/static_target.c's resolution on the server's files: the site a
 * request names, then its file opened with openat2 beneath the site's root
 * (file.c), through the worker's open-file cache. */
#ifndef KTLSD_SERVER_RESOLVE_H
#define KTLSD_SERVER_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/autoindex.h"
#include "proto/static_file.h"

struct server;
struct filecache;
struct file_root;
struct lister_job;

/* The request's site and the file it asks for:
 * - tls: whether it came over TLS; conn_site: the connection's site, by
 *   the name its client sent (resolve_conn_site, once per connection);
 * - ask->host: the authority the request names its site by (NULL:
 *   none), checked by the protocol code: an absolute-form target's, else
 *   Host or :authority (proto/authority.h). One that names another site
 *   than the TLS connection's is answered 421 (RFC 9110 15.5.20): a client
 *   may reuse a connection for every name its certificate covers, and must
 *   not reach a site that certificate was not chosen for. One that names
 *   no site takes the connection's;
 * - ask->accept_encoding (NULL: none), for --precompressed.
 * Fills out; with status 0, out->fd is open and out->file describes it.
 * Files come through the worker's open-file cache fc (NULL: none); now_sec
 * is the wall clock (a file modified within ETAG_SETTLED_S is recent).
 * client: the client's address (16 bytes, IPv4 mapped; NULL: not an IP
 * one), for the [path] rules' allow and deny. */
void resolve_target(const struct server *srv, struct filecache *fc, int64_t now_sec, bool tls,
		    unsigned conn_site, const uint8_t *client, const struct static_ask *ask,
		    struct static_target *out);

/* ACME's HTTP-01 (RFC 8555 8.3; server/core/acme_chal.h): whether ask is
 * GET or HEAD (the caller checked) of /.well-known/acme-challenge/TOKEN
 * from a CA validating ask->host (its port stripped) by that token. Then
 * out says STATIC_ACME_CHALLENGE with the key authorization, and the site
 * the request names (NULL: misdirected, the answer goes all the same);
 * else out is untouched and the request goes on as any other: a miss says
 * nothing of which tokens are pending. */
bool resolve_challenge(const struct server *srv, bool tls, unsigned conn_site,
		       const struct static_ask *ask, struct static_target *out);

/* The index in srv->sites of a connection's site: the one its TLS SNI
 * names, else the default (0). */
unsigned resolve_conn_site(const struct server *srv, const char *sni);

/* The root behind static_target's root, to open its rel again. */
const struct file_root *resolve_root(const void *root);
/* Its [site NAME]'s NAME, for the access log; NULL for the top level's
 * site, and for no root (a request refused before it named a site). */
const char *resolve_site_name(const void *root);
/* Its slot in the per-site metrics (stats.h); 0 for none. */
unsigned resolve_site_slot(const void *root);

/* The job that lists res (status STATIC_LIST_DIR, from resolve_target) as
 * f, beneath the root it was resolved in, or NULL (no memory). */
struct lister_job *resolve_listing(const struct static_target *res, enum autoindex_format f);

#endif
