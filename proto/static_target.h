/* From a request-target to what to serve, for both HTTP versions and for the
 * fuzz target alike: the path rules, dotfiles, directories (a 301 to add the
 * slash, else their index.html, else with autoindex a listing) and the
 * status when there is nothing to serve, and a precompressed sidecar in the
 * file's place when the client takes one. Sans-I/O: files are opened and closed through the caller's
 * callbacks (the server: openat2 beneath the root, through its open-file
 * cache). */
#ifndef KTLSD_PROTO_STATIC_TARGET_H
#define KTLSD_PROTO_STATIC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto/accept_enc.h"
#include "proto/mime.h"
#include "proto/static_file.h"

/* A file the opener opened. */
struct static_opened {
	struct stat st;             /* a regular file or a directory */
	const void *mem;            /* its whole bytes, if the opener has them in memory */
	struct static_memo *memo;   /* where the opener keeps what is made of this file
				     * (static_file.h), or NULL */
};

struct static_opener {
	/* Opens rel beneath the root: the fd, with f filled (mem and memo
	 * valid until the close), or -ENOENT, -EACCES, -ENAMETOOLONG, -EMFILE,
	 * -ENFILE or another -errno (server/core/file.h's vocabulary). */
	int (*open)(void *ctx, const char *rel, struct static_opened *f);
	void (*close)(void *ctx, int fd);
	void *ctx;
};

/* Fills out: with status 0, out->fd is open (the caller's, to close
 * through op->close) and out->file describes it (its type from mime; it is
 * recent, cond.h, when modified less than ETAG_SETTLED_S before now_sec,
 * the wall clock). What the opener's memo holds is used, and what it
 * lacks made there.
 *
 * autoindex: a folder (asked for with its slash) without an index.html
 * gets STATIC_LIST_DIR, out->rel the folder, rather than 404.
 *
 * ae: NULL with --precompressed off. Else what the client accepts: once the
 * target is a regular file (a directory's index.html too), the sidecars
 * rel.br, rel.zst, rel.gz are tried through op in accept_enc_order's order,
 * and the first that is a regular file is served instead: out->fd, out->rel
 * and out->file's size and times are the sidecar's, the Content-Type stays
 * the original's, file.content_encoding names the coding. A sidecar that is
 * missing, not a regular file or refused by op (outside the root, say) is
 * passed over; the original must exist, so a sidecar alone is a 404 as
 * before. With ae, every file response varies (file.vary), sidecar or not:
 * a cache must not hand the identity bytes to a client that asked for br,
 * nor br to one that cannot take it. */
void static_target_resolve(const char *target, size_t len, bool dotfiles, bool autoindex,
			   const struct mime_table *mime, const struct static_opener *op,
			   const struct accept_enc *ae, int64_t now_sec, struct static_target *out);

#endif
