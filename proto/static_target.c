#include "proto/static_target.h"

#include <errno.h>
#include <string.h>

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

/* The file's metadata as the static-file decision wants it. */
static void describe(const struct mime_table *mime, const struct stat *st,
		     struct static_target *out)
{
	out->file.size = (uint64_t)st->st_size;
	out->file.ino = (uint64_t)st->st_ino;
	out->file.mtime_sec = st->st_mtim.tv_sec;
	out->file.mtime_nsec = st->st_mtim.tv_nsec;
	/* The safe tag until the opener, which knows the time, says it
	 * settled (server/resolve.c). */
	out->file.recent = true;
	out->file.content_type = mime_lookup(mime, out->rel);
	out->file.content_encoding = NULL;
	out->file.vary = false;
}

/* out is the regular file out->rel: serve, in its place, the first sidecar
 * the client takes that is a regular file too. */
static void try_sidecars(const struct accept_enc *ae, const struct static_opener *op,
                         struct static_target *out)
{
	enum coding order[CODING_N];
	size_t n = accept_enc_order(ae, order);
	size_t rl = strlen(out->rel);
	struct stat st;
	const void *mem;

	out->file.vary = true;
	for (size_t i = 0; i < n; i++) {
		const char *suffix = accept_enc_suffix(order[i]);
		size_t sl = strlen(suffix);

		if (rl + sl >= sizeof(out->rel))
			continue; /* no such file can exist; a shorter suffix may fit */
		memcpy(out->rel + rl, suffix, sl + 1);
		int fd = op->open(op->ctx, out->rel, &st, &mem);
		if (fd >= 0 && S_ISREG(st.st_mode)) {
			op->close(op->ctx, out->fd);
			out->fd = fd;
			out->mem = mem;
			out->file.size = (uint64_t)st.st_size;
			out->file.ino = (uint64_t)st.st_ino;
			out->file.mtime_sec = st.st_mtim.tv_sec;
			out->file.mtime_nsec = st.st_mtim.tv_nsec;
			out->file.content_encoding = accept_enc_name(order[i]);
			return;
		}
		if (fd >= 0)
			op->close(op->ctx, fd);
		out->rel[rl] = '\0';
	}
}

void static_target_resolve(const char *target, size_t len, bool dotfiles, bool autoindex,
			   const struct mime_table *mime, const struct static_opener *op,
			   const struct accept_enc *ae, struct static_target *out)
{
	struct path_info info;
	struct stat st;
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
	out->fd = op->open(op->ctx, out->rel, &st, &out->mem);
	if (out->fd < 0) {
		out->status = status_for_open_error(out->fd);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		describe(mime, &st, out);
		if (ae)
			try_sidecars(ae, op, out);
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
	out->fd = op->open(op->ctx, out->rel, &st, &out->mem);
	if (out->fd >= 0 && S_ISREG(st.st_mode)) {
		describe(mime, &st, out);
		if (ae)
			try_sidecars(ae, op, out);
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
