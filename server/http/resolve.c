#include "server/http/resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "proto/authority.h"
#include "proto/static_target.h"
#include "proto/vhost.h"
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

void resolve_target(const struct server *srv, struct filecache *fc, int64_t now_sec, bool tls,
		    unsigned conn_site, const struct static_ask *ask, struct static_target *out)
{
	const struct site *site = pick_site(srv, tls, conn_site, ask->host, ask->host_len);

	if (!site) {
		out->status = 421;
		out->extras = (struct resp_extras){0};
		out->root = NULL; /* no site: the access log says none */
		return;
	}
	struct opener_ctx o = {.site = site, .fc = fc, .now_sec = now_sec};
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
