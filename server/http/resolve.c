#include "server/http/resolve.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "proto/authority.h"
#include "proto/static_target.h"
#include "proto/vhost.h"
#include "server/core/file.h"
#include "server/core/filecache.h"
#include "server/http/lister.h"
#include "server/conf/server-t.h"

struct opener_ctx {
	const struct site *site;
	struct filecache *fc;
};

static int open_file(void *ctx, const char *rel, struct static_opened *f)
{
	const struct opener_ctx *o = ctx;

	if (o->fc)
		return filecache_open(o->fc, &o->site->root, rel, f);
	f->mem = NULL;
	f->memo = NULL;
	return file_open_beneath(o->site->root.fd, rel, &f->st);
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

void resolve_target(const struct server *srv, struct filecache *fc, int64_t now_sec, bool tls,
		    unsigned conn_site, const struct static_ask *ask, struct static_target *out)
{
	const struct site *site = pick_site(srv, tls, conn_site, ask->host, ask->host_len);

	if (!site) {
		out->status = 421;
		out->extras = (struct resp_extras){0};
		return;
	}
	struct opener_ctx o = {.site = site, .fc = fc};
	const struct static_opener op = {.open = open_file, .close = close_file, .ctx = &o};
	bool precompressed = site->cfg->precompressed;
	struct accept_enc ae;

	if (precompressed)
		accept_enc_parse(ask->accept_encoding, ask->ae_len, &ae);
	static_target_resolve(ask->target, ask->target_len, srv->cfg->dotfiles, site->cfg->autoindex,
			      site->types, &op, precompressed ? &ae : NULL, now_sec, out);
	out->extras = site->extras;
	out->root = site;
}

const struct file_root *resolve_root(const void *root)
{
	return &((const struct site *)root)->root;
}

struct lister_job *resolve_listing(const struct static_target *res, enum autoindex_format f)
{
	return lister_job_new(resolve_root(res->root)->fd, res->rel, res->list_dotfiles, f);
}
