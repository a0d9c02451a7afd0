#include "server/http/resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "proto/authority.h"
#include "proto/path.h"
#include "proto/path_rule.h"
#include "proto/static_target.h"
#include "proto/vhost.h"
#include "server/core/acme_chal.h"
#include "server/core/file.h"
#include "server/core/filecache.h"
#include "server/core/log.h"
#include "server/http/lister.h"
#include "server/conf/server-t.h"

struct opener_ctx {
	const struct site *site;
	struct filecache *fc;
	int64_t now_sec;
};

/* Seconds between two open-failure lines of one worker. */
#define OPEN_FAILURE_LOG_GAP 10

/* A file the service user may not open (403), or one that could not be
 * opened for a reason no request explains (500), is the operator's to
 * hear of, with the path and the error, as nginx's open() "..." failed
 * (13: Permission denied): a root the --user cannot read otherwise answers
 * 403 to everything in silence. The first at once, then at most one every
 * OPEN_FAILURE_LOG_GAP seconds per worker with how many went unsaid, so
 * that clients cannot fill the log. */
static void log_open_failure(const struct opener_ctx *o, const char *rel, int err)
{
	static _Thread_local int64_t last_sec = INT64_MIN;
	static _Thread_local unsigned unsaid;

	/* file.h's answers: a missing file or a name no file can have is the
	 * client's; out of descriptors (503) is the load's, not a file's. */
	switch (err) {
	case -ENOENT:
	case -ENAMETOOLONG:
	case -EMFILE:
	case -ENFILE:
		return;
	}
	if (last_sec != INT64_MIN && o->now_sec - last_sec < OPEN_FAILURE_LOG_GAP) {
		unsaid++;
		return;
	}
	/* file.h's -EACCES is also a symlink out of the root or a FIFO: asked
	 * again (only when a line is written), so that the line says which. */
	const char *why = strerror(-err);
	if (err == -EACCES && faccessat(o->site->root.fd, rel, R_OK, AT_EACCESS) == 0)
		why = "a symlink that leaves the root, or not a regular file or folder";
	else if (err == -EACCES)
		why = strerror(errno == EACCES || errno == EPERM ? errno : EACCES);
	if (unsaid)
		log_msg(LOG_WARN, "open \"%s\" under --root %s failed: %s (and %u more open failures in %lld s)",
			rel, o->site->cfg->root, why, unsaid, (long long)(o->now_sec - last_sec));
	else
		log_msg(LOG_WARN, "open \"%s\" under --root %s failed: %s", rel, o->site->cfg->root,
			why);
	last_sec = o->now_sec;
	unsaid = 0;
}

static int open_file(void *ctx, const char *rel, struct static_opened *f)
{
	const struct opener_ctx *o = ctx;
	int fd;

	if (o->fc) {
		fd = filecache_open(o->fc, &o->site->root, rel, f);
	} else {
		f->mem = NULL;
		f->memo = NULL;
		fd = file_open_beneath(o->site->root.fd, rel, &f->st);
	}
	if (fd < 0)
		log_open_failure(o, rel, fd);
	return fd;
}

static void close_file(void *ctx, int fd)
{
	const struct opener_ctx *o = ctx;

	if (o->fc)
		filecache_release(o->fc, fd);
	else
		close(fd);
}

/* The site named by host (an authority the protocol code checked), or -1. */
static int site_of_host(const struct server *srv, const char *host, size_t len)
{
	struct authority a;

	if (!host || authority_parse(host, len, &a) < 0)
		return -1;
	return vhost_find(&srv->names, a.host, a.host_len);
}

unsigned resolve_conn_site(const struct server *srv, const char *sni)
{
	int i = sni && srv->names.n ? vhost_find(&srv->names, sni, strlen(sni)) : -1;

	return i < 0 ? 0 : (unsigned)i;
}

/* NULL: the request is misdirected (421). */
static const struct site *pick_site(const struct server *srv, bool tls, unsigned conn_site,
				    const char *host, size_t host_len)
{
	int by_conn = (int)conn_site, by_host;

	if (srv->names.n == 0)
		return &srv->sites[0];
	by_host = site_of_host(srv, host, host_len);
	if (!tls) /* plain HTTP: Host alone picks the site */
		return &srv->sites[by_host < 0 ? 0 : by_host];
	if (by_host < 0 || by_host == by_conn)
		return &srv->sites[by_conn];
	return NULL;
}

bool resolve_challenge(const struct server *srv, bool tls, unsigned conn_site,
		       const struct static_ask *ask, struct static_target *out)
{
	static const char prefix[] = "/.well-known/acme-challenge/";
	const size_t pl = sizeof(prefix) - 1;
	const char *t = ask->target;
	size_t tl = ask->target_len;
	struct authority a;

	/* Every request of every site passes here: one relaxed load while
	 * no challenge is pending, a prefix compare while one is. */
	if (!acme_chal_active() || !ask->host || tl == 0)
		return false;
	if (t[0] != '/') { /* absolute-form: its path */
		enum target_scheme scheme;
		const char *auth;
		size_t auth_len;
		long skip = target_split(t, tl, &scheme, &auth, &auth_len);
		if (skip < 0)
			return false;
		t += skip;
		tl -= (size_t)skip;
	}
	/* The token as sent: base64url needs no %-encoding, and a validator
	 * sends none (anything after it, a query too, is no token). */
	if (tl <= pl || memcmp(t, prefix, pl) != 0 ||
	    authority_parse(ask->host, ask->host_len, &a) < 0)
		return false;
	int n = acme_chal_http(a.host, a.host_len, t + pl, tl - pl, out->key_authz,
			       sizeof(out->key_authz));
	if (n < 0)
		return false;
	out->status = STATIC_ACME_CHALLENGE;
	out->key_authz_len = (size_t)n;
	out->fd = -1;
	out->mem = NULL;
	out->extras = (struct resp_extras){0}; /* the CA's, not the site's content */
	out->root = pick_site(srv, tls, conn_site, ask->host, ask->host_len);
	return true;
}

/* The port of the first TLS listener, for an https:// URL ("" for 443 or
 * none). */
static void https_port(const struct config *cfg, char buf[static 8])
{
	buf[0] = '\0';
	for (size_t i = 0; i < cfg->nlisten; i++) {
		const struct sockaddr_storage *a = &cfg->listen[i].addr;
		unsigned port = a->ss_family == AF_INET
					? ntohs(((const struct sockaddr_in *)(const void *)a)->sin_port)
				: a->ss_family == AF_INET6
					? ntohs(((const struct sockaddr_in6 *)(const void *)a)->sin6_port)
					: 0;
		if (port) {
			if (port != 443)
				snprintf(buf, 8, ":%u", port);
			return;
		}
	}
}

/* --https-redirect: the same URL over https://, into out->location: the
 * host the request named without its port (else the site's first
 * server-name), the target's path and query as sent (origin-form; an
 * absolute-form's past its authority), a byte no field may hold
 * %-encoded. The status: 301, or 400 where there is no host to name or
 * the URL does not fit. Never the file: plain HTTP is what this turns
 * away. */
static int https_location(const struct config *cfg, const struct site *site,
			  const struct static_ask *ask, struct static_target *out)
{
	static const char hex[] = "0123456789ABCDEF";
	struct authority a = {0};
	enum target_scheme scheme;
	const char *t = ask->target, *auth, *host;
	size_t tl = ask->target_len, auth_len, host_len;
	char port[8];
	bool literal = false;

	if (ask->host && authority_parse(ask->host, ask->host_len, &a) == 0) {
		host = a.host;
		host_len = a.host_len;
		literal = ask->host[0] == '[';
	} else if (site->cfg->nserver_names && site->cfg->server_names[0][0] != '*') {
		host = site->cfg->server_names[0];
		host_len = strlen(host);
	} else {
		return 400;
	}
	long skip = target_split(t, tl, &scheme, &auth, &auth_len);
	if (skip < 0)
		return 400;
	t += skip;
	tl -= (size_t)skip;
	if (tl == 0 || t[0] != '/')
		return 400;
	https_port(cfg, port);
	int n = snprintf(out->location, sizeof(out->location), "https://%s%.*s%s%s",
			 literal ? "[" : "", (int)host_len, host, literal ? "]" : "", port);
	if (n < 0 || (size_t)n >= sizeof(out->location))
		return 400;
	size_t len = (size_t)n;
	for (size_t i = 0; i < tl; i++) {
		unsigned char c = (unsigned char)t[i];
		bool plain = c > 0x20 && c < 0x7f;
		if (len + (plain ? 1 : 3) >= sizeof(out->location))
			return 400;
		if (plain) {
			out->location[len++] = (char)c;
		} else {
			out->location[len++] = '%';
			out->location[len++] = hex[c >> 4];
			out->location[len++] = hex[c & 15];
		}
	}
	out->location[len] = '\0';
	return 301;
}

/* What a [path] rule decides before the file is looked for: a client it
 * denies (403), a redirect; else its fields, for the response. false: go
 * on and serve. */
static bool apply_rule(const struct site *site, const struct static_ask *ask,
		       const uint8_t *client, struct static_target *out,
		       const struct path_rule **rule)
{
	struct path_info info;
	char rel[PATH_MAX];

	*rule = NULL;
	if (site->npaths == 0 ||
	    path_from_target(ask->target, ask->target_len, rel, sizeof(rel), &info) < 0)
		return false; /* static_target answers the bad target */
	const struct path_rule *r = path_rule_match(site->rules, site->npaths, rel);
	if (!r)
		return false;
	*rule = r;
	if (!path_acl_allows(r->acl, r->nacl, client)) {
		out->status = 403;
		out->extras = site->extras; /* its error pages; a 403 sends no field */
		return true;
	}
	if (!r->redirect_status)
		return false;
	const char *q = memchr(ask->target, '?', ask->target_len);
	size_t ql = q ? ask->target_len - (size_t)(q - ask->target) : 0;
	if (path_rule_location(r, rel, info.trailing_slash, q, ql, out->location,
			       sizeof(out->location)) < 0) {
		out->status = 414;
		out->extras = (struct resp_extras){0};
		return true;
	}
	out->status = r->redirect_status;
	out->extras = r->extras;
	return true;
}

void resolve_target(const struct server *srv, struct filecache *fc, int64_t now_sec, bool tls,
		    unsigned conn_site, const uint8_t *client, const struct static_ask *ask,
		    struct static_target *out)
{
	const struct site *site = pick_site(srv, tls, conn_site, ask->host, ask->host_len);
	const struct path_rule *rule;

	if (!site) {
		out->status = 421;
		out->extras = (struct resp_extras){0};
		out->root = NULL; /* no site: the access log says none */
		return;
	}
	out->root = site;
	out->fd = -1;
	out->mem = NULL;
	if (!tls && site->cfg->https_redirect && srv->cfg->nlisten > 0) {
		out->status = https_location(srv->cfg, site, ask, out);
		out->extras = site->extras;
		return;
	}
	if (apply_rule(site, ask, client, out, &rule))
		return;
	struct opener_ctx o = {.site = site, .fc = fc, .now_sec = now_sec};
	const struct static_opener op = {.open = open_file, .close = close_file, .ctx = &o};
	bool precompressed = site->cfg->precompressed;
	struct accept_enc ae;

	if (precompressed)
		accept_enc_parse(ask->accept_encoding, ask->ae_len, &ae);
	static_target_resolve(ask->target, ask->target_len, srv->cfg->dotfiles, site->cfg->autoindex,
			      site->types, &op, precompressed ? &ae : NULL, now_sec, out);
	out->extras = rule ? rule->extras : site->extras;
	out->root = site;
}

const struct file_root *resolve_root(const void *root)
{
	return &((const struct site *)root)->root;
}

const char *resolve_site_name(const void *root)
{
	return root ? ((const struct site *)root)->cfg->name : NULL;
}

unsigned resolve_site_slot(const void *root)
{
	return root ? ((const struct site *)root)->stat_slot : 0;
}

struct lister_job *resolve_listing(const struct static_target *res, enum autoindex_format f)
{
	const struct site *site = res->root;

	return lister_job_new(site->root.fd, res->rel, res->list_dotfiles,
			      site->cfg->autoindex_max_entries, f);
}
