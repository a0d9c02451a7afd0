/* Validators and conditional requests (RFC 9110 8.8, 13). Sans-I/O. */
#ifndef KTLSD_PROTO_COND_H
#define KTLSD_PROTO_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ETAG_MAX 64

/* A file modified less than this long ago is "recent" (static_file.h). */
#define ETAG_SETTLED_S 2

/* Strong ETag from mtime and size in nginx's form, "\"<mtime s hex>-<size
 * hex>\"", so that mirrors of one file (same bytes, size and mtime, as
 * rsync -t keeps them) give the same tag, nginx's among them, and a
 * download resumes with If-Range on any of them. A recent file's tag adds
 * its inode and the mtime's nanoseconds, "\"<mtime s>-<size>-<ino>-<ns>\"":
 * two versions written within one second (a rename over the file, a
 * rewrite in place) must not share a tag, and once a file is settled a
 * same-size change in the same second as the last one is no longer
 * likely. */
void etag_format(char *out, size_t outsz, uint64_t ino, uint64_t size, int64_t mtime_sec,
		 long mtime_nsec, bool recent);

struct cond_headers { /* each NULL when absent */
	const char *if_match;
	size_t if_match_len;
	const char *if_none_match;
	size_t if_none_match_len;
	const char *if_modified_since;
	size_t if_modified_since_len;
	const char *if_unmodified_since;
	size_t if_unmodified_since_len;
};

enum cond_result {
	COND_PROCEED,             /* serve the representation */
	COND_NOT_MODIFIED,        /* 304 */
	COND_PRECONDITION_FAILED, /* 412 */
};

/* Evaluates in the RFC 9110 13.2.2 order for GET/HEAD: If-Match, then
 * If-Unmodified-Since (only without If-Match), then If-None-Match (weak
 * comparison, "*" matches), then If-Modified-Since (only without
 * If-None-Match). Unparseable dates are ignored. */
enum cond_result cond_evaluate(const struct cond_headers *h, const char *etag, time_t mtime);

/* If-Range: true when the Range header should be honoured — the value is the
 * current strong ETag, or an HTTP date equal to Last-Modified. */
bool cond_if_range_matches(const char *value, size_t len, const char *etag, time_t mtime);

#endif
