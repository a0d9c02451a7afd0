/* An ACME response as llhttp (HTTP_RESPONSE mode) reads it: the head fields
 * the ACME client keeps and the body (chunked, Content-Length or to the
 * end of the connection), at most ACME_HTTP_BODY_MAX. Sans-I/O: bytes in as
 * they come, in pieces of any size; acme_http.c feeds it from TLS. */
#ifndef KTLSD_SERVER_ACME_HTTP_RESP_H
#define KTLSD_SERVER_ACME_HTTP_RESP_H

#include <stdbool.h>
#include <stddef.h>

#include <llhttp.h>

#define ACME_HTTP_BODY_MAX (1u << 20)

struct acme_http_resp {
	int status;           /* 0 when no response came */
	char nonce[256];      /* Replay-Nonce, "" when absent */
	char location[1024];  /* Location */
	char retry_after[64]; /* Retry-After as sent */
	char content_type[128];
	char link_up[1024]; /* Link: <…>;rel="up" (the chain's issuer), "" when none */
	char *body;         /* malloc'd, NUL-terminated; at most 1 MiB */
	size_t len;
};

void acme_http_resp_free(struct acme_http_resp *r);

/* A response head's field names and values, in all: a CA's are a few
 * hundred bytes; this only stops a server that sends fields forever. */
#define ACME_HTTP_HEAD_MAX (64u << 10)

struct acme_http_parse {
	llhttp_t ll;
	struct acme_http_resp *r;
	bool head_only; /* HEAD: a Content-Length but no body */
	bool done;
	size_t head_bytes;
	size_t body_cap; /* allocated for r->body */
	int fail_rc;     /* why a callback refused, with why */
	char why[64];
	char field[16]; /* the longest name kept is 12 bytes */
	size_t field_len;
	bool field_long;
	char value[4096]; /* a Link may hold other links beside the one kept */
	size_t value_len;
	bool value_long;
};

/* Starts reading the response to a request into r (emptied). head_only:
 * the request was HEAD. */
void acme_http_parse_init(struct acme_http_parse *p, struct acme_http_resp *r, bool head_only);

/* Feeds the next n bytes. eof: the connection ended (cleanly: a TLS
 * caller says so after close_notify only) and no more bytes follow.
 * 1: the response is complete, r filled and r->body NUL-terminated (bytes
 * after it are ignored); 0: more wanted; or -errno with a one-line reason
 * in err: "over 1 MiB" (-EMSGSIZE), "Location over 1023 bytes" (a kept
 * field cut would be a wrong one), "not HTTP/1.1: …" or "the connection
 * ended before the body did" (-EBADMSG). A repeat of a kept field is
 * ignored: the first one counts. The caller frees r with
 * acme_http_resp_free whatever the answer. */
int acme_http_parse(struct acme_http_parse *p, const char *buf, size_t n, bool eof, char *err,
                    size_t errlen);

#endif
