/* Validators and conditional requests (RFC 9110 8.8, 13). Sans-I/O. */
#ifndef KTLSD_PROTO_COND_H
#define KTLSD_PROTO_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ETAG_MAX 64

/* Strong ETag from inode, size and mtime (ns): "\"<ino hex>-<size hex>-<mtime hex>\"". */
void etag_format(char *out, size_t outsz, uint64_t ino, uint64_t size, int64_t mtime_sec,
		 long mtime_nsec);

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
