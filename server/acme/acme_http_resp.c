/* An ACME response on llhttp 8.1: see acme_http_resp.h for the contract. */
#include "server/acme/acme_http_resp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void acme_http_resp_free(struct acme_http_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* Records the first refusal only; returns what a callback returns. */
static int parse_fail(struct acme_http_parse *p, int rc, const char *why)
{
	if (!p->fail_rc) {
		p->fail_rc = rc;
		snprintf(p->why, sizeof(p->why), "%s", why);
	}
	return HPE_USER;
}

/* llhttp may hand a name or a value over in pieces (a read that ends
 * inside it): they are joined here, and what does not fit is marked. */
static int head_piece(struct acme_http_parse *p, char *buf, size_t cap, size_t *len, bool *too_long,
                      const char *at, size_t n)
{
	if ((p->head_bytes += n) > ACME_HTTP_HEAD_MAX)
		return parse_fail(p, -EMSGSIZE, "head over 64 KiB");
	if (n >= cap - *len) {
		*too_long = true;
		return 0;
	}
	memcpy(buf + *len, at, n);
	*len += n;
	return 0;
}

static int on_header_field(llhttp_t *ll, const char *at, size_t n)
{
	struct acme_http_parse *p = ll->data;

	return head_piece(p, p->field, sizeof(p->field), &p->field_len, &p->field_long, at, n);
}

static int on_header_value(llhttp_t *ll, const char *at, size_t n)
{
	struct acme_http_parse *p = ll->data;

	return head_piece(p, p->value, sizeof(p->value), &p->value_len, &p->value_long, at, n);
}

/* Whether the rel value [v, end) has "up" among its space-separated
 * relation types (RFC 8288 §3.3). */
static bool rel_has_up(const char *v, const char *end)
{
	while (v < end) {
		const char *t = v;

		while (v < end && *v != ' ' && *v != '\t')
			v++;
		if (v - t == 2 && strncasecmp(t, "up", 2) == 0)
			return true;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
	}
	return false;
}

/* The first link of a Link value (RFC 8288 §3: "<URI>; name=value; …",
 * links separated by commas) whose rel has "up", into out; "" when none
 * does. A URI cannot hold '>'; a quoted value may hold ',' and ';'. */
static void link_up(const char *v, char *out, size_t outlen)
{
	out[0] = '\0';
	for (;;) {
		const char *uri, *uri_end;
		bool up = false;

		v += strspn(v, " \t,");
		if (*v != '<' || !(uri_end = strchr(v, '>')))
			return;
		uri = v + 1;
		v = uri_end + 1;
		while (*(v += strspn(v, " \t")) == ';') {
			const char *name, *val, *val_end;
			size_t nlen;

			v++;
			name = v += strspn(v, " \t");
			nlen = strcspn(name, " \t=;,");
			v += nlen;
			v += strspn(v, " \t");
			if (*v != '=')
				continue;
			v++;
			v += strspn(v, " \t");
			if (*v == '"') {
				val = ++v;
				while (*v && *v != '"')
					v += (*v == '\\' && v[1]) ? 2 : 1;
				val_end = v;
				v += *v == '"';
			} else {
				val = v;
				v += strcspn(v, " \t;,");
				val_end = v;
			}
			if (nlen == 3 && strncasecmp(name, "rel", 3) == 0)
				up = up || rel_has_up(val, val_end);
		}
		if (up && (size_t)(uri_end - uri) < outlen) {
			memcpy(out, uri, (size_t)(uri_end - uri));
			out[uri_end - uri] = '\0';
			return;
		}
		v += strcspn(v, ",");
	}
}

#define KEPT(field, member)                                                                        \
	{                                                                                          \
		field, offsetof(struct acme_http_resp, member),                                    \
		    sizeof(((struct acme_http_resp *)0)->member)                                   \
	}

/* The fields kept as sent, and where. */
static const struct kept {
	const char *name;
	size_t off, size;
} kept[] = {
    KEPT("Replay-Nonce", nonce),
    KEPT("Location", location),
    KEPT("Retry-After", retry_after),
    KEPT("Content-Type", content_type),
};

static int on_header_value_complete(llhttp_t *ll)
{
	struct acme_http_parse *p = ll->data;
	struct acme_http_resp *r = p->r;
	const char *name = p->field;
	char why[64];

	p->field[p->field_len] = '\0';
	while (p->value_len > 0 &&
	       (p->value[p->value_len - 1] == ' ' || p->value[p->value_len - 1] == '\t'))
		p->value_len--;
	p->value[p->value_len] = '\0';
	if (!p->field_long && strcasecmp(name, "Link") == 0 && !r->link_up[0]) {
		if (p->value_long)
			return parse_fail(p, -EMSGSIZE, "Link over 4 KiB");
		link_up(p->value, r->link_up, sizeof(r->link_up));
	}
	for (size_t i = 0; !p->field_long && i < sizeof(kept) / sizeof(kept[0]); i++) {
		char *dst = (char *)r + kept[i].off;

		if (strcasecmp(name, kept[i].name) != 0 || dst[0])
			continue;
		if (p->value_long || p->value_len >= kept[i].size) {
			snprintf(why, sizeof(why), "%s over %zu bytes", kept[i].name,
			         kept[i].size - 1);
			return parse_fail(p, -EMSGSIZE, why);
		}
		memcpy(dst, p->value, p->value_len + 1);
	}
	p->field_len = p->value_len = 0;
	p->field_long = p->value_long = false;
	return 0;
}

static int on_headers_complete(llhttp_t *ll)
{
	struct acme_http_parse *p = ll->data;

	p->r->status = ll->status_code;
	if (p->head_only)
		return 1; /* llhttp: no body follows */
	/* Refused before a byte of it is read. */
	if ((ll->flags & F_CONTENT_LENGTH) && ll->content_length > ACME_HTTP_BODY_MAX)
		return parse_fail(p, -EMSGSIZE, "over 1 MiB");
	return 0;
}

static int on_body(llhttp_t *ll, const char *at, size_t n)
{
	struct acme_http_parse *p = ll->data;
	struct acme_http_resp *r = p->r;

	if (n > ACME_HTTP_BODY_MAX - r->len)
		return parse_fail(p, -EMSGSIZE, "over 1 MiB");
	if (r->len + n + 1 > p->body_cap) {
		size_t cap = p->body_cap ? p->body_cap : 4096;
		char *b;

		while (cap < r->len + n + 1)
			cap *= 2;
		if (cap > ACME_HTTP_BODY_MAX + 1)
			cap = ACME_HTTP_BODY_MAX + 1;
		if (!(b = realloc(r->body, cap)))
			return parse_fail(p, -ENOMEM, "out of memory");
		r->body = b;
		p->body_cap = cap;
	}
	memcpy(r->body + r->len, at, n);
	r->len += n;
	return 0;
}

/* A 1xx (103 Early Hints) is a message of its own before the response
 * (RFC 9110 §15.2): its fields are forgotten and the reading goes on. */
static int on_message_complete(llhttp_t *ll)
{
	struct acme_http_parse *p = ll->data;

	if (p->r->status >= 100 && p->r->status < 200) {
		memset(p->r, 0, offsetof(struct acme_http_resp, body));
		return 0;
	}
	p->done = true;
	return HPE_PAUSED; /* what follows is not ours to read */
}

static const llhttp_settings_t settings = {
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void acme_http_parse_init(struct acme_http_parse *p, struct acme_http_resp *r, bool head_only)
{
	memset(p, 0, sizeof(*p));
	memset(r, 0, sizeof(*r));
	p->r = r;
	p->head_only = head_only;
	llhttp_init(&p->ll, HTTP_RESPONSE, &settings);
	p->ll.data = p;
}

int acme_http_parse(struct acme_http_parse *p, const char *buf, size_t n, bool eof, char *err,
                    size_t errlen)
{
	struct acme_http_resp *r = p->r;
	llhttp_errno_t pe = HPE_OK;

	if (!p->done && !p->fail_rc)
		pe = eof ? llhttp_finish(&p->ll) : llhttp_execute(&p->ll, buf, n);
	if (p->fail_rc) {
		snprintf(err, errlen, "%s", p->why);
		return p->fail_rc;
	}
	if (p->done) {
		if (!r->body && !(r->body = malloc(1))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		r->body[r->len] = '\0';
		return 1;
	}
	if (eof) {
		snprintf(err, errlen, "%s",
		         r->status ? "the connection ended before the body did"
		                   : "none: the connection was closed");
		return -EBADMSG;
	}
	if (pe != HPE_OK) {
		snprintf(err, errlen, "not HTTP/1.1: %s", llhttp_get_error_reason(&p->ll));
		return -EBADMSG;
	}
	return 0;
}
