/* A response head as a list of fields, built once for both HTTP versions:
 * HTTP/1.1 serializes it as text (resp_head_h1), HTTP/2 hands the fields to
 * HPACK under their lowercase names. The order of the fields is the order
 * on the wire in both. Sans-I/O.
 *
 * Values are not copied: they must outlive the head (the static_response,
 * the Date string, a Location), except the numbers the head formats itself
 * (the status code, Content-Length), which it keeps. */
#ifndef KTLSD_PROTO_RESP_HEAD_H
#define KTLSD_PROTO_RESP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proto/static_file.h"

/* Every field ktlsd ever sends: a fixed vocabulary, so each name exists in
 * both spellings without a conversion at run time. */
enum resp_name {
	RESP_SERVER,
	RESP_DATE,
	RESP_CONTENT_TYPE,
	RESP_CONTENT_LENGTH,
	RESP_LAST_MODIFIED,
	RESP_ETAG,
	RESP_CONTENT_RANGE,
	RESP_ACCEPT_RANGES,
	RESP_ALLOW,
	RESP_LOCATION,
	RESP_CONNECTION, /* HTTP/1.1 only (RFC 9113 8.2.2 forbids it in HTTP/2) */
	RESP_CONTENT_ENCODING,
	RESP_VARY,
	RESP_CACHE_CONTROL,
};

/* The most fields a head can hold: a file response has 10 (8, and a
 * sidecar's Content-Encoding and Vary), HTTP/1.1 adds Connection; room for
 * a few more. */
#define RESP_HEAD_MAX_FIELDS 14

struct resp_field {
	enum resp_name name;
	const char *value;
	size_t value_len;
};

struct resp_head {
	int status;
	char status_text[4];          /* "200": HTTP/2's :status */
	char content_length[24];
	size_t n;
	bool overflow;                /* a field did not fit: the head is unusable */
	struct resp_field f[RESP_HEAD_MAX_FIELDS];
	struct resp_extras extras;    /* the site's own fields, after f */
};

/* "Content-Length", and "content-length" for HTTP/2. */
const char *resp_name_h1(enum resp_name name);
const char *resp_name_h2(enum resp_name name);
size_t resp_name_len(enum resp_name name); /* of either spelling */

/* Starts a head: the status, then Server and Date (date must outlive h). */
void resp_head_init(struct resp_head *h, int status, const char *date);

/* Appends a field (value must outlive h). A full head sets overflow. */
void resp_head_add(struct resp_head *h, enum resp_name name, const char *value);

/* The head of a static-file response (static_file_respond's answer). */
void resp_head_file(struct resp_head *h, const struct static_response *sr, const char *date);

/* The head of a generated page (status_page) of page_len bytes: an error,
 * or a 301 to location (NULL otherwise); a 405 says what is allowed. */
void resp_head_page(struct resp_head *h, int status, const char *date, size_t page_len,
		    const char *location);

/* Adds the site's fields (--header) to a 2xx or 3xx head, as nginx's
 * add_header does: error pages go out without them. x must outlive h. */
void resp_head_extras(struct resp_head *h, const struct resp_extras *x);

/* The head of a directory listing (proto/autoindex.h) of body_len bytes
 * in content_type: it depends on Accept (Vary), and is made afresh for
 * each request, so it carries no validators and caches ask each time. */
void resp_head_listing(struct resp_head *h, const char *date, const char *content_type,
		       unsigned long long body_len);

/* The head of an ACME HTTP-01 answer (STATIC_ACME_CHALLENGE) of body_len
 * bytes: 200, text/plain, and Cache-Control: no-store, since the key
 * authorization is for the one validation. */
void resp_head_challenge(struct resp_head *h, const char *date, size_t body_len);

/* Serializes h as an HTTP/1.1 head ("HTTP/1.1 200 OK\r\n", a line per
 * field, the empty line) into out, NUL-terminated. Returns its length
 * (without the NUL), or -ENOSPC when it and its NUL do not fit in cap
 * bytes or the head overflowed; out then holds nothing usable. */
ssize_t resp_head_h1(const struct resp_head *h, char *out, size_t cap);

#endif
