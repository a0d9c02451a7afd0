#include "server/resolve.h"

#include <time.h>
#include <unistd.h>

#include "proto/cond.h"
#include "proto/static_target.h"
#include "server/file.h"
#include "server/filecache.h"
#include "server/lister.h"
#include "server/worker-t.h"

struct opener_ctx {
	const struct server *srv;
	struct filecache *fc;
	uint64_t now_ms;
};

static int open_file(void *ctx, const char *rel, struct stat *st, const void **mem)
{
	const struct opener_ctx *o = ctx;

	if (o->fc)
		return filecache_open(o->fc, o->srv->root_fd, rel, o->now_ms, st, mem);
	*mem = NULL;
	return file_open_beneath(o->srv->root_fd, rel, st);
}

static void close_file(void *ctx, int fd)
{
	const struct opener_ctx *o = ctx;

	if (o->fc)
		filecache_release(o->fc, fd);
	else
		close(fd);
}

void resolve_target(const struct server *srv, struct filecache *fc, uint64_t now_ms,
		    const char *target, size_t len, struct static_target *out)
{
	struct opener_ctx o = {.srv = srv, .fc = fc, .now_ms = now_ms};
	const struct static_opener op = {.open = open_file, .close = close_file, .ctx = &o};

	static_target_resolve(target, len, srv->cfg->dotfiles, srv->cfg->autoindex, srv->mime, &op,
			      out);
	if (out->status == 0)
		out->file.recent = (int64_t)time(NULL) - out->file.mtime_sec < ETAG_SETTLED_S;
}

struct lister_job *resolve_listing(const struct server *srv, const struct static_target *res,
				   enum autoindex_format f)
{
	return lister_job_new(srv->root_fd, res->rel, res->list_dotfiles, f);
}
