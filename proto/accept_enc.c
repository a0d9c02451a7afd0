/* Accept-Encoding: see accept_enc.h. The grammar (RFC 9110 12.5.3, 12.4.2):
 *   Accept-Encoding = #( codings [ weight ] )
 *   codings = content-coding / "identity" / "*"
 *   weight  = OWS ";" OWS "q=" qvalue
 *   qvalue  = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
#include "proto/accept_enc.h"

#include <string.h>
#include <strings.h>

static const struct {
	const char *name, *suffix;
} codings[CODING_N] = {
    [CODING_BR] = {"br", ".br"},
    [CODING_ZSTD] = {"zstd", ".zst"},
    [CODING_GZIP] = {"gzip", ".gz"},
};

const char *accept_enc_name(enum coding c)
{
	return codings[c].name;
}

const char *accept_enc_suffix(enum coding c)
{
	return codings[c].suffix;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* A member's token ends at these. */
static bool ends_token(char c)
{
	return c == ',' || c == ';' || is_ows(c);
}

static bool token_is(const char *p, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

int accept_enc_qvalue(const char *p, size_t n)
{
	int q, scale = 100;

	if (n == 0 || (p[0] != '0' && p[0] != '1'))
		return -1;
	q = (p[0] - '0') * 1000;
	if (n == 1)
		return q;
	if (p[1] != '.' || n > 5)
		return -1;
	for (size_t i = 2; i < n; i++, scale /= 10) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		q += (p[i] - '0') * scale;
	}
	return q > 1000 ? -1 : q;
}

/* The weight after a member's token, from *i to the member's end (a ',' or
 * the end of s): its q in thousandths (1000 without one), or -1 when the
 * rest of the member is not a weight. *i ends at the member's end. */
static int parse_weight(const char *s, size_t len, size_t *i)
{
	int q = 1000;
	bool bad = false;

	for (;;) {
		while (*i < len && is_ows(s[*i]))
			(*i)++;
		if (*i == len || s[*i] == ',')
			break;
		if (s[*i] != ';') {
			bad = true;
			break;
		}
		(*i)++;
		while (*i < len && is_ows(s[*i]))
			(*i)++;
		/* "q=" exactly: the parameter name is case-insensitive (RFC
		 * 9110 5.6.6), no whitespace around '='. */
		if (len - *i < 2 || (s[*i] != 'q' && s[*i] != 'Q') || s[*i + 1] != '=') {
			bad = true;
			break;
		}
		*i += 2;
		size_t start = *i;
		while (*i < len && !ends_token(s[*i]))
			(*i)++;
		q = accept_enc_qvalue(s + start, *i - start);
		if (q < 0) {
			bad = true;
			break;
		}
	}
	while (*i < len && s[*i] != ',')
		(*i)++;
	return bad ? -1 : q;
}

void accept_enc_parse(const char *s, size_t len, struct accept_enc *out)
{
	int named[CODING_N], star = -1, identity = -1;

	for (size_t c = 0; c < CODING_N; c++)
		named[c] = -1;
	for (size_t i = 0; s && i < len;) {
		while (i < len && (s[i] == ',' || is_ows(s[i])))
			i++; /* empty list elements (RFC 9110 5.6.1) */
		if (i == len)
			break;
		size_t start = i;
		while (i < len && !ends_token(s[i]))
			i++;
		const char *tok = s + start;
		size_t n = i - start;
		int q = parse_weight(s, len, &i);
		if (q < 0)
			q = 0;

		int *slot = NULL;
		if (token_is(tok, n, "br"))
			slot = &named[CODING_BR];
		else if (token_is(tok, n, "zstd"))
			slot = &named[CODING_ZSTD];
		else if (token_is(tok, n, "gzip") || token_is(tok, n, "x-gzip"))
			slot = &named[CODING_GZIP];
		else if (token_is(tok, n, "identity"))
			slot = &identity;
		else if (token_is(tok, n, "*"))
			slot = &star;
		if (slot && (*slot < 0 || q < *slot))
			*slot = q;
	}
	for (size_t c = 0; c < CODING_N; c++)
		out->q[c] = (uint16_t)(named[c] >= 0 ? named[c] : star >= 0 ? star : 0);
	out->identity_named = identity >= 0;
	out->identity_q = (uint16_t)(identity >= 0 ? identity : 1000);
}

size_t accept_enc_order(const struct accept_enc *ae, enum coding order[CODING_N])
{
	size_t n = 0;

	for (int c = 0; c < CODING_N; c++) {
		uint16_t q = ae->q[c];
		if (q == 0 || (ae->identity_named && q < ae->identity_q))
			continue;
		/* Insertion after every coding with a q at least as high keeps
		 * the enum's order between equals. */
		size_t at = n;
		while (at > 0 && ae->q[order[at - 1]] < q) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = (enum coding)c;
		n++;
	}
	return n;
}
