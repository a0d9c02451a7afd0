/* HTTP/1.x request heads on llhttp 8.1: see h1_parser.h for the contract.
 *
 * Debian builds llhttp in loose mode (LLHTTP_STRICT_MODE 0) and we enable no
 * lenient flags. What llhttp 8.1 refuses by itself, with 400 here:
 *   Content-Length with Transfer-Encoding (either order), a second
 *   Content-Length (even an equal one), a Content-Length that is empty, signed,
 *   has inner spaces or overflows, "chunked" followed by another coding, CTLs
 *   other than HTAB in the target, NUL and CTLs in names and values, bare CR.
 * What it lets through and this file refuses:
 *   a bare LF ending the request line or the head, obs-fold (a line starting
 *   with SP/HTAB), SP in a header name ("Host : x" is parsed as "Host "), an
 *   empty header name, HTAB in the target, HTTP/0.9 and HTTP/2.0 request lines,
 *   Transfer-Encoding whose final coding is not chunked (llhttp would only say
 *   so after on_headers_complete, which we leave by pausing).
 * What we let through that llhttp 8.1 refuses: HTTP/1.2 to 1.9, served as
 *   1.1 (RFC 9110 2.5); see h1_parser_init. */
#include "proto/h1_parser.h"
#include "proto/authority.h"
#include "proto/static_file.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* The headers we keep. Repeats of the unique ones are ambiguous (which Host
 * did the front end route on?), so they get 400; the others are joined with
 * ", " as RFC 9110 5.3 allows for lists. A joined If-Modified-Since is no
 * longer a date and is ignored, as RFC 9110 13.1.3 asks for "more than one
 * member". */
static const struct h1_field {
	const char *name;
	size_t off;             /* of the struct h1_str in struct h1_parser */
	const char *dup_reason; /* NULL: repeats are joined */
} h1_fields[] = {
    {"Host", offsetof(struct h1_parser, req.host), "repeated Host"},
    {"Range", offsetof(struct h1_parser, req.range), "repeated Range"},
    {"If-Range", offsetof(struct h1_parser, req.if_range), "repeated If-Range"},
    {"If-Match", offsetof(struct h1_parser, req.if_match), NULL},
    {"If-None-Match", offsetof(struct h1_parser, req.if_none_match), NULL},
    {"If-Modified-Since", offsetof(struct h1_parser, req.if_modified_since), NULL},
    {"If-Unmodified-Since", offsetof(struct h1_parser, req.if_unmodified_since), NULL},
    {"Accept-Encoding", offsetof(struct h1_parser, req.accept_encoding), NULL},
    {"User-Agent", offsetof(struct h1_parser, req.user_agent), NULL},
    {"Referer", offsetof(struct h1_parser, req.referer), NULL},
    {"Accept", offsetof(struct h1_parser, req.accept), NULL},
    {"Transfer-Encoding", offsetof(struct h1_parser, te), NULL},
};

#define H1_NFIELDS (sizeof(h1_fields) / sizeof(h1_fields[0]))

static struct h1_str *field_str(struct h1_parser *p, int i)
{
	return (struct h1_str *)((char *)p + h1_fields[i].off);
}

/* Records the first failure only: a later callback must not overwrite the
 * reason the request was refused for. Returns what a data callback returns. */
static int fail(struct h1_parser *p, int status, const char *reason)
{
	if (p->error_status == 0) {
		p->error_status = status;
		p->error_reason = reason;
	}
	return HPE_USER;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static int arena_put(struct h1_parser *p, const char *s, size_t n)
{
	if (n > sizeof(p->arena) - p->arena_used)
		return -ENOSPC;
	memcpy(p->arena + p->arena_used, s, n);
	p->arena_used += n;
	return 0;
}

static int on_method(llhttp_t *ll, const char *at, size_t len)
{
	struct h1_parser *p = ll->data;
	char *name = p->req.method_name;
	size_t have = strnlen(name, sizeof(p->req.method_name) - 1);
	size_t n = sizeof(p->req.method_name) - 1 - have;

	memcpy(name + have, at, len < n ? len : n); /* the rest stays NUL from reset */
	return 0;
}

static int on_url(llhttp_t *ll, const char *at, size_t len)
{
	struct h1_parser *p = ll->data;
	struct h1_str *t = &p->req.target;

	/* llhttp 8.1 (loose) accepts HTAB inside the target; refuse every CTL. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)at[i] < 0x20 || at[i] == 0x7f)
			return fail(p, 400, "control character in request target");
	if (t->len + len > p->limits.max_uri)
		return fail(p, 414, "request target too long");
	if (!t->ptr)
		t->ptr = p->arena + p->arena_used;
	/* The arena can only run out here if max_uri is configured above its size. */
	if (arena_put(p, at, len) < 0)
		return fail(p, 414, "request target too long for the arena");
	t->len += len;
	return 0;
}

static int on_url_complete(llhttp_t *ll)
{
	struct h1_parser *p = ll->data;

	p->url_done = true;
	return 0;
}

static int on_header_field(llhttp_t *ll, const char *at, size_t len)
{
	struct h1_parser *p = ll->data;

	/* Loose llhttp takes "Content-Length : 5" as a header named
	 * "Content-Length " that it does not count as a length, while other
	 * servers may: RFC 9112 5.1 says reject. */
	for (size_t i = 0; i < len; i++) {
		if (is_ows(at[i]))
			return fail(p, 400, "whitespace in header name");
		if (p->name_len + i < sizeof(p->name))
			p->name[p->name_len + i] = at[i];
	}
	p->name_len += len;
	return 0;
}

static int on_header_field_complete(llhttp_t *ll)
{
	struct h1_parser *p = ll->data;
	size_t n = p->name_len;

	p->name_len = 0;
	p->cur_field = -1;
	p->in_value = false;
	if (n == 0)
		return fail(p, 400, "empty header name");
	if (++p->header_count > p->limits.max_headers)
		return fail(p, 431, "too many header fields");
	if (n > sizeof(p->name))
		return 0;
	for (size_t i = 0; i < H1_NFIELDS; i++) {
		if (strlen(h1_fields[i].name) != n || strncasecmp(h1_fields[i].name, p->name, n))
			continue;
		struct h1_str *s = field_str(p, (int)i);
		if (s->ptr && h1_fields[i].dup_reason)
			return fail(p, 400, h1_fields[i].dup_reason);
		/* Set now so that an empty value still counts as present. */
		if (!s->ptr)
			s->ptr = p->arena + p->arena_used;
		p->cur_field = (int)i;
		return 0;
	}
	return 0;
}

/* Opens the value in the arena at its first non-OWS byte. A value must end at
 * the top of the arena while pieces arrive, so an earlier value of a joined
 * field that is no longer on top is copied up first. */
static int value_open(struct h1_parser *p, struct h1_str *s)
{
	char *top = p->arena + p->arena_used;

	if (s->len == 0) {
		s->ptr = top;
		return 0;
	}
	if (s->ptr + s->len != top) {
		if (arena_put(p, s->ptr, s->len) < 0)
			return -ENOSPC;
		s->ptr = top;
	}
	if (arena_put(p, ", ", 2) < 0)
		return -ENOSPC;
	s->len += 2;
	return 0;
}

static int on_header_value(llhttp_t *ll, const char *at, size_t len)
{
	struct h1_parser *p = ll->data;

	if (p->cur_field < 0)
		return 0;
	struct h1_str *s = field_str(p, p->cur_field);
	if (!p->in_value) {
		/* llhttp skips leading OWS itself; this covers a value whose
		 * first piece is only whitespace. */
		while (len > 0 && is_ows(*at)) {
			at++;
			len--;
		}
		if (len == 0)
			return 0;
		if (value_open(p, s) < 0)
			return fail(p, 431, "request header fields too large");
		p->in_value = true;
	}
	if (arena_put(p, at, len) < 0)
		return fail(p, 431, "request header fields too large");
	s->len += len;
	return 0;
}

static int on_header_value_complete(llhttp_t *ll)
{
	struct h1_parser *p = ll->data;

	if (p->cur_field >= 0 && p->in_value) {
		struct h1_str *s = field_str(p, p->cur_field);
		/* llhttp hands trailing OWS over as part of the value. */
		while (s->len > 0 && is_ows(s->ptr[s->len - 1])) {
			s->len--;
			p->arena_used--;
		}
	}
	p->cur_field = -1;
	p->in_value = false;
	return 0;
}

/* Transfer codings RFC 9112 7 and the IANA registry define. One we do not
 * know gets 501 (RFC 9112 6.1); one we know but do not decode gets 400 when
 * chunked does not follow it, 501 when it does. */
static bool te_coding_known(const char *s, size_t n)
{
	static const char *const known[] = {"chunked", "compress",   "deflate",
	                                    "gzip",    "x-compress", "x-gzip"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i]) == n && strncasecmp(known[i], s, n) == 0)
			return true;
	return false;
}

/* Every coding of the joined Transfer-Encoding list is one we know. Empty
 * list elements are skipped (RFC 9110 5.6.1); a coding's parameters
 * (";q=...") are not part of its name. */
static bool te_codings_known(const struct h1_str *te)
{
	size_t i = 0;

	while (te->ptr && i < te->len) {
		while (i < te->len && (te->ptr[i] == ',' || is_ows(te->ptr[i])))
			i++;
		size_t start = i;
		while (i < te->len && te->ptr[i] != ',' && te->ptr[i] != ';' && !is_ows(te->ptr[i]))
			i++;
		if (i > start && !te_coding_known(te->ptr + start, i - start))
			return false;
		while (i < te->len && te->ptr[i] != ',')
			i++;
	}
	return true;
}

static int on_headers_complete(llhttp_t *ll)
{
	struct h1_parser *p = ll->data;
	struct h1_request *r = &p->req;
	unsigned flags = ll->flags;

	/* Loose llhttp 8.1 lets 0.9 (also a bare "GET /") and 2.0 through,
	 * and with LENIENT_VERSION any digit.digit. */
	if (ll->http_major != 1) {
		fail(p, 505, "unsupported HTTP version");
		return -1;
	}
	r->version_major = 1;
	/* RFC 9110 2.5: a 1.x we do not know is answered as the highest 1.x
	 * we do; llhttp's keep-alive default already treats it as 1.1. */
	r->version_minor = ll->http_minor > 1 ? 1 : ll->http_minor;
	if (flags & F_TRANSFER_ENCODING) {
		/* RFC 9112 6.1: the framing of a 1.0 message with
		 * Transfer-Encoding is faulty, whatever else it says. */
		if (ll->http_minor == 0) {
			fail(p, 400, "Transfer-Encoding in HTTP/1.0");
			return -1;
		}
		/* RFC 9112 6.1: SHOULD answer 501 to a coding we do not
		 * understand, wherever it is in the list. */
		if (!te_codings_known(&p->te)) {
			fail(p, 501, "unknown transfer coding");
			return -1;
		}
		/* RFC 9112 6.3: MUST answer 400 when chunked is not final. */
		if (!(flags & F_CHUNKED)) {
			fail(p, 400, "Transfer-Encoding without final chunked");
			return -1;
		}
		/* A known coding before the final chunked ("gzip, chunked"):
		 * we decode none but chunked, so 501 again. */
		if (p->te.len != 7 || strncasecmp(p->te.ptr, "chunked", 7) != 0) {
			fail(p, 501, "unsupported transfer coding");
			return -1;
		}
	}
	switch (ll->method) {
	case HTTP_GET:
		r->method = H1_GET;
		break;
	case HTTP_HEAD:
		r->method = H1_HEAD;
		break;
	default:
		r->method = H1_OTHER;
		break;
	}
	r->has_body = (flags & F_CHUNKED) || ll->content_length > 0;
	/* We never read a body, so whatever follows a head with one is not a
	 * request: a caller that only looks at keep_alive must still close. */
	r->keep_alive = llhttp_should_keep_alive(ll) && !r->has_body;
	if (r->has_body) {
		p->complete = true;
		return HPE_PAUSED;
	}
	return 0;
}

/* Pausing here leaves a pipelined request behind this one unparsed in the
 * caller's buffer; llhttp_get_error_pos() then marks where this one ended. */
static int on_message_complete(llhttp_t *ll)
{
	struct h1_parser *p = ll->data;

	p->complete = true;
	return HPE_PAUSED;
}

/* Loose llhttp 8.1 accepts a bare LF as the end of the request line and of
 * the head, and folds a line that starts with SP/HTAB into the previous value.
 * Both are classic smuggling splits (RFC 9112 2.2, 5.2), so we look at the
 * head bytes ourselves; last_byte carries the context across feeds. */
static const char *scan_head(struct h1_parser *p, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		if (c == '\n' && p->last_byte != '\r')
			return "bare LF line ending";
		if (p->last_byte == '\n' && is_ows(c))
			return "obs-fold line";
		p->last_byte = c;
	}
	return NULL;
}

static enum h1_parse_result parse_error(struct h1_parser *p, int status, const char *reason)
{
	fail(p, status, reason);
	p->complete = false;
	return H1_PARSE_ERROR;
}

/* Maps an error llhttp found on its own to a status. */
static int llhttp_status(const llhttp_t *ll, llhttp_errno_t err)
{
	/* "PRI * HTTP/2.0": h2 is negotiated by ALPN, never on this path. */
	if (err == HPE_PAUSED_H2_UPGRADE)
		return 505;
	/* Also raised for junk after a good version ("HTTP/1.1 \r\n"): only a
	 * well-formed other major version (3.0) gets 505; 1.x is ours. */
	if (err == HPE_INVALID_VERSION && ll->http_major != 1)
		return 505;
	return 400;
}

void h1_parser_init(struct h1_parser *p, const struct h1_limits *limits)
{
	memset(p, 0, offsetof(struct h1_parser, arena));
	p->limits = *limits;
	llhttp_settings_init(&p->settings);
	p->settings.on_method = on_method;
	p->settings.on_url = on_url;
	p->settings.on_url_complete = on_url_complete;
	p->settings.on_header_field = on_header_field;
	p->settings.on_header_field_complete = on_header_field_complete;
	p->settings.on_header_value = on_header_value;
	p->settings.on_header_value_complete = on_header_value_complete;
	p->settings.on_headers_complete = on_headers_complete;
	p->settings.on_message_complete = on_message_complete;
	llhttp_init(&p->llhttp, HTTP_REQUEST, &p->settings);
	/* llhttp 8.1 refuses HTTP/1.2 ("Invalid minor version") where RFC
	 * 9110 2.5 wants it served as 1.1. Its generated parser honours
	 * LENIENT_VERSION, which 8.1 has no setter for (9.x adds
	 * llhttp_set_lenient_version), so set the bit; llhttp_reset keeps it.
	 * It only widens the digits accepted: on_headers_complete still
	 * refuses every major but 1 with 505. */
	p->llhttp.lenient_flags |= LENIENT_VERSION;
	p->llhttp.data = p;
	h1_parser_reset(p);
}

void h1_parser_reset(struct h1_parser *p)
{
	/* Also clears a sticky llhttp error; keeps settings and data. */
	llhttp_reset(&p->llhttp);
	memset(&p->req, 0, sizeof(p->req));
	p->req.method = H1_OTHER;
	p->header_bytes = 0;
	p->header_count = 0;
	p->error_status = 0;
	p->error_reason = NULL;
	p->complete = false;
	p->cur_field = -1;
	p->in_value = false;
	p->arena_used = 0;
	p->name_len = 0;
	p->last_byte = 0;
	p->url_done = false;
	p->te = (struct h1_str){NULL, 0};
}

/* Accepts bytes of one request head at a time, in pieces of any size; refuses
 * (H1_PARSE_ERROR, error_status set) anything over the limits, any llhttp
 * error and the smuggling shapes listed at the top of this file. */
enum h1_parse_result h1_parser_feed(struct h1_parser *p, const char *data, size_t len,
                                    size_t *consumed)
{
	*consumed = 0;
	if (p->error_status)
		return H1_PARSE_ERROR;
	if (p->complete)
		return H1_PARSE_DONE;

	/* Never hand llhttp more than the head may still grow by: the limit
	 * then also bounds the work done for a client that never ends it. */
	size_t room = p->limits.max_header_bytes - p->header_bytes;
	size_t n = len < room ? len : room;
	llhttp_errno_t err = llhttp_execute(&p->llhttp, data, n);
	size_t used = n;
	if (err != HPE_OK) {
		const char *pos = llhttp_get_error_pos(&p->llhttp);
		used = pos ? (size_t)(pos - data) : n;
	}

	if (err != HPE_OK && !(err == HPE_PAUSED && p->complete)) {
		if (p->error_status) /* refused by one of our callbacks */
			return parse_error(p, p->error_status, p->error_reason);
		/* llhttp stops at the offending byte; if that is our bare LF,
		 * say so rather than llhttp's "invalid header value char". */
		const char *ours = scan_head(p, data, used < n ? used + 1 : n);
		if (ours)
			return parse_error(p, 400, ours);
		return parse_error(p, llhttp_status(&p->llhttp, err),
		                   llhttp_get_error_reason(&p->llhttp));
	}

	const char *why = scan_head(p, data, used);
	if (why)
		return parse_error(p, 400, why);
	p->header_bytes += used;
	*consumed = used;
	if (p->complete)
		return H1_PARSE_DONE;
	if (n < len) {
		if (p->req.target.ptr && !p->url_done)
			return parse_error(p, 414, "request target too long");
		return parse_error(p, 431, "request head too large");
	}
	return H1_PARSE_AGAIN;
}

void h1_static_request(const struct h1_request *req, struct static_request *s)
{
	memset(s, 0, sizeof(*s));
	s->head = req->method == H1_HEAD;
	s->cond.if_match = req->if_match.ptr;
	s->cond.if_match_len = req->if_match.len;
	s->cond.if_none_match = req->if_none_match.ptr;
	s->cond.if_none_match_len = req->if_none_match.len;
	s->cond.if_modified_since = req->if_modified_since.ptr;
	s->cond.if_modified_since_len = req->if_modified_since.len;
	s->cond.if_unmodified_since = req->if_unmodified_since.ptr;
	s->cond.if_unmodified_since_len = req->if_unmodified_since.len;
	s->range = req->range.ptr;
	s->range_len = req->range.len;
	s->if_range = req->if_range.ptr;
	s->if_range_len = req->if_range.len;
}

int h1_request_authority(const struct h1_request *req, bool tls, const char **host,
			 size_t *host_len)
{
	struct authority a;
	enum target_scheme scheme;
	const char *auth;
	size_t auth_len;

	*host = req->host.ptr;
	*host_len = req->host.len;
	/* RFC 9112 3.2: a missing Host in 1.1, or an invalid one whatever
	 * the target, is 400 (a repeated one was refused by the parser). */
	if (req->version_minor >= 1 && !req->host.ptr)
		return 400;
	if (req->host.ptr && authority_parse(req->host.ptr, req->host.len, &a) < 0)
		return 400;
	if (!req->target.ptr ||
	    target_split(req->target.ptr, req->target.len, &scheme, &auth, &auth_len) < 0 ||
	    scheme == TARGET_ORIGIN)
		return 0; /* a malformed target is static_target's 400 */
	if (authority_parse(auth, auth_len, &a) < 0)
		return 400;
	if (scheme == TARGET_HTTPS && !tls)
		return 421;
	*host = auth;
	*host_len = auth_len;
	return 0;
}
