#include "proto/static_target.h"

#include <errno.h>
#include <string.h>

#include "proto/cond.h"
#include "proto/httpdate.h"
#include "proto/path.h"

static int status_for_open_error(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENAMETOOLONG: /* a name over NAME_MAX: no such file can exist */
		return 404;
	case -EACCES:
		return 403;
	case -EMFILE:
	case -ENFILE:
		return 503;
	default:
		return 500;
	}
}

/* The decoded path, re-encoded, so nothing the client sent is echoed raw
 * into a header. -ENAMETOOLONG rather than a cut Location (out is sized so
 * that a path under PATH_MAX always fits). */
static int encode_location(const char *rel, char *out, size_t outsz)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	out[n++] = '/';
	for (const unsigned char *p = (const unsigned char *)rel; *p; p++) {
		if (n + 5 > outsz)
			return -ENAMETOOLONG;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~!$&'()*+,;=:@", *p)) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n++] = '/';
	out[n] = '\0';
	return 0;
}

/* The bytes out->file describes: f's, just opened as out->fd. */
static void take(struct static_target *out, int fd, const struct static_opened *f)
{
	out->fd = fd;
	out->mem = f->mem;
	out->file.size = (uint64_t)f->st.st_size;
	out->file.ino = (uint64_t)f->st.st_ino;
	out->file.mtime_sec = f->st.st_mtim.tv_sec;
	out->file.mtime_nsec = f->st.st_mtim.tv_nsec;
}

/* The file's metadata as the static-file decision wants it, its type by
 * its name (from f's memo, once looked up there). */
static void describe(const struct mime_table *mime, int fd, const struct static_opened *f,
		     struct static_target *out)
{
	struct static_memo *m = f->memo;

	take(out, fd, f);
	if (m && m->content_type && m->types == mime) {
		out->file.content_type = m->content_type;
	} else {
		out->file.content_type = mime_lookup(mime, out->rel);
		if (m) {
			m->types = mime;
			m->content_type = out->file.content_type;
		}
	}
	out->file.content_encoding = NULL;
	out->file.vary = false;
}

/* The validators of the file served (the original or its sidecar), from
 * its memo m once it is settled; until then made by each response, since
 * a recent file's tag changes form when it settles. */
static void stamp(struct static_memo *m, int64_t now_sec, struct static_target *out)
{
	out->file.recent = now_sec - out->file.mtime_sec < ETAG_SETTLED_S;
	out->file.etag = NULL;
	out->file.last_modified = NULL;
	if (!m || out->file.recent)
		return;
	if (!m->validators) {
		etag_format(m->etag, sizeof(m->etag), out->file.ino, out->file.size,
			    out->file.mtime_sec, out->file.mtime_nsec, false);
		httpdate_format((time_t)out->file.mtime_sec, m->last_modified);
		m->validators = true;
	}
	out->file.etag = m->etag;
	out->file.last_modified = m->last_modified;
}

/* out is the regular file out->rel (its memo *memo): serve, in its place,
 * the first sidecar the client takes that is a regular file too. */
static void try_sidecars(const struct accept_enc *ae, const struct static_opener *op,
                         struct static_memo **memo, struct static_target *out)
{
	enum coding order[CODING_N];
	size_t n = accept_enc_order(ae, order);
	size_t rl = strlen(out->rel);
	struct static_opened f;

	out->file.vary = true;
	for (size_t i = 0; i < n; i++) {
		const char *suffix = accept_enc_suffix(order[i]);
		size_t sl = strlen(suffix);

		if (rl + sl >= sizeof(out->rel))
			continue; /* no such file can exist; a shorter suffix may fit */
		memcpy(out->rel + rl, suffix, sl + 1);
		int fd = op->open(op->ctx, out->rel, &f);
		if (fd >= 0 && S_ISREG(f.st.st_mode)) {
			op->close(op->ctx, out->fd);
			take(out, fd, &f);
			*memo = f.memo;
			out->file.content_encoding = accept_enc_name(order[i]);
			return;
		}
		if (fd >= 0)
			op->close(op->ctx, fd);
		out->rel[rl] = '\0';
	}
}

/* out->rel is the regular file f, open as fd: serve it (or a sidecar). */
static void serve(const struct mime_table *mime, const struct static_opener *op,
		  const struct accept_enc *ae, int64_t now_sec, int fd,
		  const struct static_opened *f, struct static_target *out)
{
	struct static_memo *memo = f->memo;

	describe(mime, fd, f, out);
	if (ae)
		try_sidecars(ae, op, &memo, out);
	stamp(memo, now_sec, out);
}

void static_target_resolve(const char *target, size_t len, bool dotfiles, bool autoindex,
			   const struct mime_table *mime, const struct static_opener *op,
			   const struct accept_enc *ae, int64_t now_sec, struct static_target *out)
{
	struct path_info info;
	struct static_opened f;
	int rc;

	out->status = 0;
	out->fd = -1;
	out->mem = NULL;
	out->list_dotfiles = false;
	rc = path_from_target(target, len, out->rel, sizeof(out->rel), &info);
	if (rc < 0) {
		out->status = rc == -ENAMETOOLONG ? 414 : 400;
		return;
	}
	if (info.dotfile && !dotfiles) {
		out->status = 404;
		return;
	}
	out->fd = op->open(op->ctx, out->rel, &f);
	if (out->fd < 0) {
		out->status = status_for_open_error(out->fd);
		return;
	}
	if (!S_ISDIR(f.st.st_mode)) {
		serve(mime, op, ae, now_sec, out->fd, &f, out);
		return;
	}

	op->close(op->ctx, out->fd);
	out->fd = -1;
	out->mem = NULL;
	if (!info.trailing_slash) {
		out->status = encode_location(out->rel, out->location, sizeof(out->location)) < 0
				      ? 500
				      : 301;
		return;
	}
	size_t rl = strcmp(out->rel, ".") == 0 ? 0 : strlen(out->rel);
	if (rl + sizeof("/index.html") > sizeof(out->rel)) {
		out->status = 414;
		return;
	}
	memcpy(out->rel + rl, rl ? "/index.html" : "index.html", rl ? 12 : 11);
	out->fd = op->open(op->ctx, out->rel, &f);
	if (out->fd >= 0 && S_ISREG(f.st.st_mode)) {
		serve(mime, op, ae, now_sec, out->fd, &f, out);
		return;
	}
	if (out->fd >= 0)
		op->close(op->ctx, out->fd);
	if (autoindex && (out->fd >= 0 || out->fd == -ENOENT)) {
		/* No index.html (or one that is not a file): list the folder. */
		if (rl)
			out->rel[rl] = '\0';
		else
			memcpy(out->rel, ".", 2);
		out->fd = -1;
		out->mem = NULL;
		out->status = STATIC_LIST_DIR;
		out->list_dotfiles = dotfiles; /* the same rule as serving */
		return;
	}
	/* Without autoindex a folder without index.html is as good as absent. */
	out->status = out->fd == -EACCES ? 403 : 404;
	out->fd = -1;
	out->mem = NULL;
}
