/* Request-target to a relative path under the served root.
 *
 * This is the first of two walls around the root (the second is openat2 with
 * RESOLVE_BENEATH), so it is written to be airtight on its own:
 *  - query and fragment are cut on the raw bytes, before any decoding, so
 *    "%3F" and "%23" stay part of the name and "/a?x=../.." never reaches ".."
 *    handling;
 *  - percent-decoding happens exactly once; "%252e" is the 3-byte name "%2e",
 *    never ".";
 *  - a decoded '/' ("%2F") separates segments just like a raw '/', as nginx
 *    does (decode, then normalise). Keeping it inside a segment would let a
 *    file name contain '/', which the file system cannot honour anyway, and
 *    treating it as a separator means "%2F..%2F" meets the ".." rules instead
 *    of slipping past them;
 *  - "." and ".." are recognised only after decoding ("%2e%2e" is ".."), and
 *    only as whole segments of exactly those bytes: overlong UTF-8 such as
 *    "%c0%ae" is two ordinary bytes, as Linux sees it;
 *  - backslash is an ordinary byte (Linux does not treat it as a separator).
 *
 * Segments are walked from the right with a count of pending "..": a name is
 * dropped while a ".." to its right is unmatched, and a ".." left unmatched
 * at the root is an error. That matches the usual left-to-right stack (it is
 * bracket matching either way) but writes only the segments that survive, so
 * -ENAMETOOLONG is about the result and "/<long>/../x" still fits. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/authority.h"
#include "proto/path.h"

enum seg_kind { SEG_EMPTY, SEG_DOT, SEG_DOTDOT, SEG_NAME };

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Finds the path part of an origin-form or absolute-form target: *path and
 * *plen cover it from its leading '/' up to (not including) '?' or '#'.
 * Absolute-form without a path means the root. */
static int split_target(const char *t, size_t len, const char **path, size_t *plen)
{
	enum target_scheme scheme;
	const char *auth;
	size_t auth_len;
	long at = target_split(t, len, &scheme, &auth, &auth_len);

	if (at < 0)
		return -EINVAL;
	size_t i = (size_t)at;
	if (i == len || t[i] != '/') {
		*path = "/";
		*plen = 1;
		return 0;
	}
	size_t start = i;
	while (i < len && t[i] != '?' && t[i] != '#')
		i++;
	*path = t + start;
	*plen = i - start;
	return 0;
}

/* Every '%' starts a well-formed escape that does not decode to NUL, and no
 * raw byte is a control character or space. Later passes rely on the first
 * property to find "%2F" separators by looking backwards. */
static int validate(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c <= 0x20 || c == 0x7f)
			return -EINVAL;
		if (c != '%')
			continue;
		if (n - i < 3)
			return -EINVAL; /* truncated: "%" or "%4" at the end */
		int hi = hexval(p[i + 1]), lo = hexval(p[i + 2]);
		if (hi < 0 || lo < 0 || (hi | lo) == 0)
			return -EINVAL; /* "%zz", "%00" */
		i += 2;
	}
	return 0;
}

/* Length of the separator ending just before p + k: 1 for '/', 3 for "%2F",
 * 0 for none. Unambiguous because every '%' begins an escape (validate()). */
static size_t sep_before(const char *p, size_t k)
{
	if (k >= 1 && p[k - 1] == '/')
		return 1;
	if (k >= 3 && p[k - 3] == '%' && p[k - 2] == '2' && (p[k - 1] | 0x20) == 'f')
		return 3;
	return 0;
}

/* Decodes raw segment s[0..n) into dst (when not NULL); returns its decoded
 * length. */
static size_t seg_decode(const char *s, size_t n, char *dst)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++, o++) {
		char c = s[i];
		if (c == '%') {
			c = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
			i += 2;
		}
		if (dst)
			dst[o] = c;
	}
	return o;
}

static enum seg_kind seg_classify(const char *s, size_t n, size_t *dlen)
{
	char head[3];

	*dlen = seg_decode(s, n, NULL);
	if (*dlen == 0)
		return SEG_EMPTY;
	if (*dlen > 2)
		return SEG_NAME;
	/* at most 2 decoded bytes, so at most 6 raw bytes: cheap to decode */
	seg_decode(s, n, head);
	if (head[0] != '.')
		return SEG_NAME;
	if (*dlen == 1)
		return SEG_DOT;
	return head[1] == '.' ? SEG_DOTDOT : SEG_NAME;
}

/* A segment of the normalised path starts with '.', other than a leading
 * ".well-known": RFC 8615 reserves that prefix for well-known locations,
 * which other hosts ask for (ACME's HTTP-01 challenges, RFC 8555 8.3,
 * security.txt), so it is served where dotfiles are not; names starting
 * with '.' inside it are still dotfiles. */
static bool has_dot_segment(const char *rel)
{
	static const char well_known[] = ".well-known";
	const char *p = rel;

	if (strncmp(p, well_known, sizeof(well_known) - 1) == 0 &&
	    (p[sizeof(well_known) - 1] == '/' || p[sizeof(well_known) - 1] == '\0'))
		p += sizeof(well_known) - 1;
	else if (*p == '.')
		return true;
	for (; (p = strchr(p, '/')) != NULL; p++)
		if (p[1] == '.')
			return true;
	return false;
}

int path_from_target(const char *target, size_t len, char *out, size_t outsz,
                     struct path_info *info)
{
	struct path_info dummy;
	const char *p;
	size_t plen;
	int rc;

	if (!info)
		info = &dummy;
	info->trailing_slash = false;
	info->dotfile = false;
	if (outsz > 0)
		out[0] = '\0';

	if (memchr(target, '\0', len)) /* a raw NUL would cut the name short */
		return -EINVAL;
	rc = split_target(target, len, &p, &plen);
	if (rc < 0)
		return rc;
	rc = validate(p, plen);
	if (rc < 0)
		return rc;

	/* Surviving segments are written right to left, each preceded by '/',
	 * ending at out + outsz; the leading '/' is dropped at the end, which
	 * leaves exactly room for the NUL. */
	size_t pos = outsz, end = plen, skip = 0;
	bool last = true, too_long = false;

	while (end > 0) {
		size_t start = end, seplen, dlen;

		while ((seplen = sep_before(p, start)) == 0)
			start--; /* stops at the latest at p[0] == '/' */
		enum seg_kind kind = seg_classify(p + start, end - start, &dlen);

		if (last && kind != SEG_NAME)
			info->trailing_slash = true; /* "/a/", "/a/.", "/a/b/.." */
		last = false;

		if (kind == SEG_DOTDOT) {
			skip++;
		} else if (kind == SEG_NAME && skip > 0) {
			skip--;
		} else if (kind == SEG_NAME && (too_long || pos < dlen + 1)) {
			too_long = true; /* keep walking: "above the root" outranks */
		} else if (kind == SEG_NAME) {
			pos -= dlen;
			seg_decode(p + start, end - start, out + pos);
			out[--pos] = '/';
		}
		end = start - seplen;
	}
	if (skip > 0 || too_long) {
		/* out holds junk; callers that print it anyway get "" */
		if (outsz > 0)
			out[0] = '\0';
		return skip > 0 ? -EINVAL : -ENAMETOOLONG;
	}

	if (pos == outsz) { /* nothing survived: the root */
		if (outsz < 2)
			return -ENAMETOOLONG;
		info->trailing_slash = true;
		memcpy(out, ".", 2);
		return 0;
	}
	size_t n = outsz - pos - 1;
	memmove(out, out + pos + 1, n);
	out[n] = '\0';
	info->dotfile = has_dot_segment(out);
	return 0;
}
