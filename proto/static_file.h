/* The static-file decision shared by HTTP/1.1 and HTTP/2: given what the
 * client asked (method and validators) and what the file is (metadata only),
 * say what to answer: status, representation headers, and the body as a list
 * of file byte ranges, with the multipart/byteranges framing around them.
 * Sans-I/O: it never opens, reads or sends. */
#ifndef KTLSD_PROTO_STATIC_FILE_H
#define KTLSD_PROTO_STATIC_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/cond.h"
#include "proto/httpdate.h"
#include "proto/range.h"

struct mime_table;

#define STATIC_MAX_RANGES 16 /* more members than this: Range ignored, 200 */
#define STATIC_BOUNDARY_LEN 20

struct static_request {
	bool head;
	struct cond_headers cond;
	const char *range;    /* NULL when absent */
	size_t range_len;
	const char *if_range; /* NULL when absent */
	size_t if_range_len;
};

struct static_file {
	uint64_t size;
	uint64_t ino;
	int64_t mtime_sec;
	long mtime_nsec;
	bool recent;              /* modified within ETAG_SETTLED_S (cond.h) or later */
	/* The validators as sent, made once by the opener's memo (struct
	 * static_memo), or NULL: made from the fields above. Valid while the
	 * file is open: static_file_respond copies them. */
	const char *etag;
	const char *last_modified;
	const char *content_type; /* from mime_lookup (a sidecar: the original's) */
	/* A precompressed sidecar's coding ("br"), else NULL; vary: the answer
	 * depends on Accept-Encoding (--precompressed), sidecar or not. */
	const char *content_encoding;
	bool vary;
};

/* What of a response head the file alone decides, made once per file by
 * an opener that keeps files open (the server's open-file cache keeps one
 * with each entry, new with each stat), so that a request formats none of
 * it: static_target_resolve fills what is missing and answers from it.
 * The validators are made only once the file is settled (not recent): a
 * recent file's ETag is another form (cond.h), and what is made is never
 * changed while responses point at it. */
struct static_memo {
	bool validators;                    /* etag and last_modified are made */
	char etag[ETAG_MAX];
	char last_modified[HTTPDATE_LEN + 1];
	/* content_type is what types said for the file's name; NULL: not
	 * looked up. The opener forgets it when a new configuration (new
	 * tables) arrives: a freed table's address may come back. */
	const struct mime_table *types;
	const char *content_type;
};

/* A field a site adds to its responses (--header), in both spellings so
 * that neither protocol converts names per response. */
struct resp_extra {
	const char *name_h1, *name_h2;    /* "Cache-Control", "cache-control" */
	size_t name_len;
	const char *value;
	size_t value_len;
};

#define RESP_EXTRA_MAX 16

/* A site's page for an error status (--error-page), in place of
 * status_page's. */
struct resp_page {
	int status;
	const char *body;
	size_t len;
};

struct resp_extras {
	const struct resp_extra *f;
	size_t n;
	size_t h1_bytes;                  /* of the lines "Name: value\r\n" together */
	/* The site's error pages: they go with its fields, which a 4xx or 5xx
	 * does not send (resp_head_extras). */
	const struct resp_page *pages;
	size_t npages;
};

/* The page x has for status, or NULL (x NULL: none). */
const struct resp_page *resp_extras_page(const struct resp_extras *x, int status);

/* What of a request decides what it comes to: the target, the host it
 * names (the site) and the codings it takes (a precompressed sidecar). */
struct static_ask {
	const char *target;
	size_t target_len;
	const char *host;                 /* the authority naming the site; NULL: none */
	size_t host_len;
	const char *accept_encoding;      /* NULL: none */
	size_t ae_len;
};

/* What a request-target comes to, for both HTTP versions: the server fills
 * it (it opens files beneath the root, server/http/resolve.c), the protocol code
 * answers from it. */
/* static_target's status for a folder to list (--autoindex): not an HTTP
 * status; rel is the folder, nothing is open. */
#define STATIC_LIST_DIR 1
/* static_target's status for an ACME HTTP-01 challenge the server is being
 * validated by (RFC 8555 8.3): not an HTTP status; the answer is 200 with
 * key_authz as a text/plain body that no cache keeps (resp_head_challenge).
 * Nothing is open. */
#define STATIC_ACME_CHALLENGE 2
#define STATIC_KEY_AUTHZ_MAX 255

struct static_target {
	int status;                       /* 0: serve fd; STATIC_LIST_DIR; STATIC_ACME_CHALLENGE;
					   * else 301, 400, 403, 404, 414, 421, 500, 503 */
	struct resp_extras extras;        /* the site's fields for a 2xx or 3xx answer */
	const void *root;                 /* the opener's: where rel is, to open it again;
					   * NULL when no site was named (421, 429) */
	int fd;                           /* status 0: the open file, owned by the caller */
	const void *mem;                  /* status 0: its bytes, when the opener keeps them (or NULL) */
	struct static_file file;          /* status 0: its metadata */
	bool list_dotfiles;               /* STATIC_LIST_DIR: list names starting with '.' */
	char rel[PATH_MAX];               /* the file, relative to the root */
	char location[PATH_MAX * 3 + 4];  /* 301: the directory with its slash, %-encoded */
	char key_authz[STATIC_KEY_AUTHZ_MAX + 1]; /* STATIC_ACME_CHALLENGE: the body */
	size_t key_authz_len;
};

struct static_response {
	int status;                 /* 200, 206, 304, 412, 416 */
	char etag[ETAG_MAX];
	char last_modified[32];
	const char *content_type;   /* of the representation (or multipart/byteranges; see below) */
	const char *content_encoding; /* the file's, for 200 and 206; else NULL */
	bool vary;                  /* Vary: Accept-Encoding, whatever the status */
	char multipart_type[80];    /* "multipart/byteranges; boundary=..." when nranges > 1 */
	char content_range[80];     /* "bytes a-b/size" for one range, "bytes * /size" (no space) for 416 */
	uint64_t content_length;    /* of the body as sent on the wire (including multipart framing) */
	bool send_body;             /* false for HEAD, 304, 412; the length headers still describe it */
	size_t nranges;             /* 0: whole file (200) or no body; 1: single range; >1: multipart */
	struct byte_range ranges[STATIC_MAX_RANGES];
	char boundary[STATIC_BOUNDARY_LEN + 1];
};

/* Fills resp. boundary_seed makes the multipart boundary unpredictable per
 * response (the caller passes a per-worker counter or random value). */
void static_file_respond(const struct static_request *req, const struct static_file *file,
			 uint64_t boundary_seed, struct static_response *resp);

/* The framing of a multipart/byteranges body: before range i
 * ("\r\n--B\r\nContent-Type: T\r\nContent-Range: bytes a-b/size\r\n\r\n"; the
 * first part starts without the leading CRLF), and after the last range
 * ("\r\n--B--\r\n"). Return the length written (out must hold
 * STATIC_PART_HEADER_MAX bytes). */
#define STATIC_PART_HEADER_MAX 256
size_t static_part_header(const struct static_response *resp, const struct static_file *file,
			  size_t i, char *out);
size_t static_multipart_trailer(const struct static_response *resp, char *out);

#endif
