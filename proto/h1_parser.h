/* HTTP/1.1 request head parsing on llhttp: sans-I/O, bytes in, a request out.
 *
 * The parser copies the request target and the few header values the static
 * file server acts on into a fixed arena, so a request survives the reuse of
 * the receive buffer it came from. It enforces the limits and refuses the
 * request-smuggling shapes (Content-Length with Transfer-Encoding, duplicate
 * Content-Length, bare LF line ends, obs-fold) with 400. */
#ifndef KTLSD_PROTO_H1_PARSER_H
#define KTLSD_PROTO_H1_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <llhttp.h>

enum h1_method { H1_GET, H1_HEAD, H1_OTHER };

struct h1_limits {
	size_t max_header_bytes; /* request line + all header lines; over: 431 (or 414 for the URI) */
	size_t max_headers;      /* header field count; over: 431 */
	size_t max_uri;          /* request-target length; over: 414 */
};

/* A header value we act on; .ptr is NULL when the header was absent. */
struct h1_str {
	const char *ptr;
	size_t len;
};

struct h1_request {
	enum h1_method method;
	char method_name[24];       /* as sent, for the access log (truncated) */
	unsigned version_major, version_minor;
	bool keep_alive;            /* per version and Connection header */
	bool has_body;              /* Content-Length > 0 or chunked: we answer and close */
	struct h1_str target;       /* raw request-target as sent */
	struct h1_str host;
	struct h1_str range;
	struct h1_str if_match;
	struct h1_str if_none_match;
	struct h1_str if_modified_since;
	struct h1_str if_unmodified_since;
	struct h1_str if_range;
	struct h1_str accept_encoding; /* repeats joined with ", " */
	struct h1_str user_agent;
	struct h1_str referer;
	struct h1_str accept;       /* for a listing's format (proto/autoindex.h) */
};

#define H1_ARENA_SIZE 16384

struct h1_parser {
	llhttp_t llhttp;
	llhttp_settings_t settings;
	struct h1_limits limits;
	struct h1_request req;
	size_t header_bytes;        /* bytes of head seen so far, for the limit */
	size_t header_count;
	int error_status;           /* HTTP status to answer with after an error */
	const char *error_reason;   /* short text for the error log */
	bool complete;
	/* internal: which field the current header value belongs to */
	int cur_field;
	bool in_value;
	size_t arena_used;
	char name[20];              /* header name so far: room for the longest name we match */
	size_t name_len;            /* its full length, which may exceed sizeof(name) */
	char last_byte;             /* previous head byte, to see a bare LF across feeds */
	bool url_done;
	struct h1_str te;           /* Transfer-Encoding values, joined with ", " */
	char arena[H1_ARENA_SIZE];
};

enum h1_parse_result {
	H1_PARSE_ERROR = -1,  /* answer p->error_status, then close the connection */
	H1_PARSE_AGAIN = 0,   /* all input consumed, the head is not complete yet */
	H1_PARSE_DONE = 1,    /* p->req is a complete request; *consumed says where it ended */
};

void h1_parser_init(struct h1_parser *p, const struct h1_limits *limits);

/* Forget the previous request and get ready for the next on the same connection. */
void h1_parser_reset(struct h1_parser *p);

/* Feeds len bytes. Stops at the end of one complete request so that pipelined
 * requests behind it stay unconsumed: *consumed tells how many bytes were used.
 * A request with a body is reported DONE at the end of its head (has_body set):
 * the server answers it and closes, it never reads bodies. */
enum h1_parse_result h1_parser_feed(struct h1_parser *p, const char *data, size_t len,
				    size_t *consumed);

/* The authority that names the site of req (RFC 9112 3.2, 3.2.2): an
 * absolute-form target's (Host is then ignored, but must still be valid),
 * else Host's (*host NULL: none, HTTP/1.0). 0, or the status to answer:
 * 400 for an HTTP/1.1 request without Host, or a Host or target authority
 * that is not one (proto/authority.h); 421 for an https target over plain
 * TCP (tls false), which RFC 9110 7.4 says MUST be rejected. */
int h1_request_authority(const struct h1_request *req, bool tls, const char **host,
			 size_t *host_len);

/* What the static-file decision needs of a request: the method and the
 * validator and Range headers (pointers into the parser's arena). */
struct static_request;
void h1_static_request(const struct h1_request *req, struct static_request *s);

#endif
