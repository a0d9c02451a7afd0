/* The Range header for byte ranges (RFC 9110 14.1, 14.2).
 *
 * Accepts: "bytes=" (unit case-insensitive, no whitespace around '=') then a
 * comma list of "a-b", "a-" and "-n" with optional whitespace around the
 * commas and empty members ("bytes=0-1,,2-3"), per the RFC 9110 5.6.1 list
 * rules. Refuses (RANGE_NONE, i.e. serve 200 as RFC 9110 14.2 tells us to do
 * with an invalid Range): any other unit, an empty set, stray characters,
 * a > b, numbers past 2^64 - 1, more than max members, and sets whose
 * satisfiable lengths add up to more than the file (the overlap
 * amplification nginx also refuses: "bytes=0-,0-,0-..." would make us send
 * the file many times for one request). */
#include "proto/range.h"

#include <stdbool.h>
#include <strings.h>

enum spec_result { SPEC_INVALID, SPEC_UNSATISFIABLE, SPEC_OK };

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_ows(const char *p, const char *end)
{
	while (p < end && is_ows(*p))
		p++;
	return p;
}

/* 1*DIGIT; false when there is no digit or the value does not fit 64 bits. */
static bool parse_u64(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p == end || !is_digit(*p))
		return false;
	for (; p < end && is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return true;
}

/* One range-spec at *pp, clamped to the file. A size-0 file satisfies
 * nothing, not even "-n": an empty range has no "first-last" to put in
 * Content-Range, so it gets 416 "bytes * /0", as nginx answers. */
static enum spec_result parse_spec(const char **pp, const char *end, uint64_t size,
                                   struct byte_range *r)
{
	uint64_t first, last = UINT64_MAX;

	if (**pp == '-') { /* suffix-range: the last n bytes */
		(*pp)++;
		if (!parse_u64(pp, end, &last))
			return SPEC_INVALID;
		if (last == 0 || size == 0)
			return SPEC_UNSATISFIABLE;
		r->first = last < size ? size - last : 0;
		r->last = size - 1;
		return SPEC_OK;
	}
	if (!parse_u64(pp, end, &first) || *pp == end || **pp != '-')
		return SPEC_INVALID;
	(*pp)++;
	if (*pp < end && is_digit(**pp)) {
		if (!parse_u64(pp, end, &last) || last < first)
			return SPEC_INVALID;
	}
	if (first >= size)
		return SPEC_UNSATISFIABLE;
	r->first = first;
	r->last = last < size - 1 ? last : size - 1;
	return SPEC_OK;
}

enum range_result range_parse(const char *value, size_t len, uint64_t size, struct byte_range *out,
                              size_t max, size_t *n)
{
	const char *p, *end;
	size_t members = 0, kept = 0;
	uint64_t total = 0;

	*n = 0;
	if (value == NULL)
		return RANGE_NONE;
	end = value + len;
	p = skip_ows(value, end);
	/* len checked first: value need not be NUL-terminated. */
	if ((size_t)(end - p) < 6 || strncasecmp(p, "bytes=", 6) != 0)
		return RANGE_NONE;
	p += 6;
	for (;;) {
		struct byte_range r;
		enum spec_result s;

		p = skip_ows(p, end);
		if (p == end)
			break;
		if (*p == ',') {
			p++;
			continue;
		}
		s = parse_spec(&p, end, size, &r);
		if (s == SPEC_INVALID || ++members > max)
			return RANGE_NONE;
		if (s == SPEC_OK) {
			uint64_t l = r.last - r.first + 1;

			/* total <= size holds, so size - total cannot wrap. */
			if (l > size - total)
				return RANGE_NONE;
			total += l;
			out[kept++] = r;
		}
		p = skip_ows(p, end);
		if (p < end && *p != ',')
			return RANGE_NONE;
	}
	if (members == 0)
		return RANGE_NONE;
	if (kept == 0)
		return RANGE_UNSATISFIABLE;
	*n = kept;
	return RANGE_OK;
}
