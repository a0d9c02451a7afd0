/* The values of the configuration's options, one parser per kind: numbers,
 * seconds and sizes, words, TLS versions, listeners, host names, header
 * fields and Content-Type lines. Each checks and normalises one value and
 * says in one line why it refuses it; config.c applies them. */
#include "server/conf/config_value.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Running out of memory while reading the configuration leaves nothing
 * sensible to run, so stop here instead of threading ENOMEM through every
 * setter. */
char *config_value_strdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	return p;
}

/* Unsigned decimal with at most `decimals` digits after an optional '.',
 * scaled by 10^decimals: with 3, "2.5" seconds is 2500 ms. No sign, blanks,
 * base prefix or floating point (so no locale decimal comma); finer input
 * than the scale is refused rather than silently rounded. */
int config_value_fixed(const char *s, int decimals, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v = 0;
	int digits = 0, frac = -1; /* -1: no '.' yet */

	for (; *s; s++) {
		if (*s == '.' && frac < 0 && decimals > 0) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || frac == decimals)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
		digits++;
		frac += frac >= 0;
		if (v > max) /* v only grows when scaled below */
			return -1;
	}
	for (int i = frac < 0 ? 0 : frac; i < decimals; i++)
		v *= 10;
	if (!digits || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A T_BYTES value: digits, then k, m or g (either case) for 1024, 1024^2
 * or 1024^3, as nginx writes sizes. */
int config_value_bytes(const char *s, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			return -1;
	}
	if (p == s)
		return -1;
	if (*p) {
		const char *u = strchr("kmg", *p | 0x20);
		if (!u || !*u || p[1])
			return -1;
		v <<= 10 * (u - "kmg" + 1);
	}
	if (v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Position of the len bytes at s among the '|'-separated words of list,
 * ignoring case; -1 if absent. */
int config_value_word(const char *list, const char *s, size_t len)
{
	for (int i = 0; *list; i++) {
		size_t n = strcspn(list, "|");

		if (n == len && strncasecmp(list, s, n) == 0)
			return i;
		list += n + (list[n] == '|');
	}
	return -1;
}

/* A T_PATH_OR value: NULL for the last word of the placeholder
 * ("FILE|stdout|stderr|off": off), another word as the placeholder spells
 * it ("STDOUT" is stdout), anything else (the first word included) a path
 * as given. */
char *config_value_path_or_word(const char *list, const char *v)
{
	int i = config_value_word(list, v, strlen(v)), n = 0;

	for (const char *p = list; (p = strchr(p, '|')) != NULL; p++)
		n++;
	if (i == n)
		return NULL;
	if (i <= 0)
		return config_value_strdup(v);
	while (i-- > 0)
		list = strchr(list, '|') + 1;
	char *w = config_value_strdup(list);
	w[strcspn(w, "|")] = '\0';
	return w;
}

/* Accepts TLSv1.2 and TLSv1.3 in any case, separated by blanks or commas,
 * and stores them as OpenSSL spells them (ktls/ compares them exactly),
 * oldest first, blank-separated. */
char *config_value_protocols(const char *s)
{
	static const char *const canonical[] = {NULL, "TLSv1.2", "TLSv1.3", "TLSv1.2 TLSv1.3"};
	unsigned mask = 0;

	for (s += strspn(s, " \t,"); *s; s += strspn(s, " \t,")) {
		size_t n = strcspn(s, " \t,");
		int i = config_value_word("TLSv1.2|TLSv1.3", s, n);

		if (i < 0)
			return NULL;
		mask |= 1u << i;
		s += n;
	}
	return mask ? config_value_strdup(canonical[mask]) : NULL;
}

static int parse_port(const char *s, in_port_t *port)
{
	unsigned v;

	if (config_value_fixed(s, 0, 1, 65535, &v))
		return -1;
	*port = htons((in_port_t)v);
	return 0;
}

/* "[V6]:PORT", "V4:PORT", ":PORT" or "PORT" (the last two mean 0.0.0.0).
 * Addresses are numeric: resolving names at start-up would make the server
 * depend on DNS to boot. A bare IPv6 address needs brackets, since its last
 * colon would otherwise be mistaken for the port separator. */
static int parse_inet(const char *s, struct config_listen *l)
{
	char host[sizeof(l->text)];
	const char *port;
	size_t n;

	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -1;
		n = (size_t)(end - s - 1);
		memcpy(host, s + 1, n);
		host[n] = '\0';
		port = end + 2;
		a6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1 ||
		    parse_port(port, &a6->sin6_port))
			return -1;
		l->addrlen = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;
		const char *colon = strrchr(s, ':');

		n = colon ? (size_t)(colon - s) : 0;
		memcpy(host, s, n);
		host[n] = '\0';
		port = colon ? colon + 1 : s;
		if (!n)
			strcpy(host, "0.0.0.0");
		a4->sin_family = AF_INET;
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1 || parse_port(port, &a4->sin_port))
			return -1;
		l->addrlen = sizeof(*a4);
	}
	return 0;
}

/* "unix:/PATH": absolute, so that it does not depend on the directory
 * ktlsd happens to start in. addrlen counts the path and its NUL, as
 * getsockname() reports it (listen_fds.c compares the two). */
static int parse_unix(const char *path, struct config_listen *l)
{
	struct sockaddr_un *a = (struct sockaddr_un *)&l->addr;

	if (path[0] != '/' || strlen(path) >= sizeof(a->sun_path))
		return -1;
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	l->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	return 0;
}

/* A listener: an address (parse_inet, or "unix:/PATH"), then options
 * separated by blanks, as in nginx's "listen 443 ssl proxy_protocol":
 * "0.0.0.0:8443 proxy-protocol". Returns 0, or -1 with why filled in
 * (empty: the address is wrong, and the caller says what it expects). */
int config_value_listen(const char *s, struct config_listen *l, char why[static 256])
{
	char addr[sizeof(l->text)];
	size_t n = strcspn(s, " \t");

	memset(l, 0, sizeof(*l));
	why[0] = '\0';
	if (strlen(s) >= sizeof(l->text))
		return -1;
	memcpy(addr, s, n);
	addr[n] = '\0';
	for (const char *p = s + n + strspn(s + n, " \t"); *p; p += n + strspn(p + n, " \t")) {
		n = strcspn(p, " \t");
		if (n == strlen("proxy-protocol") && memcmp(p, "proxy-protocol", n) == 0) {
			l->proxy_protocol = true;
			continue;
		}
		snprintf(why, 256,
		         "unknown option '%.*s' after the address (expected proxy-protocol)",
		         (int)(n > 40 ? 40 : n), p);
		return -1;
	}
	if (strncmp(addr, "unix:", 5) == 0) {
		if (parse_unix(addr + 5, l)) {
			snprintf(why, 256,
			         "expected unix:/PATH with an absolute path of at most %zu "
			         "bytes, got '%s'",
			         sizeof(((struct sockaddr_un *)0)->sun_path) - 1, addr);
			return -1;
		}
	} else if (parse_inet(addr, l)) {
		return -1;
	}
	strcpy(l->text, s);
	return 0;
}

/* The fields RFC 9110 and 9112 give the server to set, and those ktlsd
 * sets itself: a --header naming one would contradict the response. */
static bool header_reserved(const char *name, size_t len)
{
	static const char *const ours[] = {
	    "accept-ranges", "allow",         "connection",        "content-encoding",
	    "content-length", "content-range", "content-type",      "date",
	    "etag",          "keep-alive",    "last-modified",     "location",
	    "proxy-connection", "server",     "te",                "trailer",
	    "transfer-encoding", "upgrade",   "vary"};

	for (size_t i = 0; i < ARRAY_SIZE(ours); i++)
		if (strlen(ours[i]) == len && strncasecmp(ours[i], name, len) == 0)
			return true;
	return false;
}

/* RFC 9110 5.6.2 token characters. */
static bool is_tchar(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* "Name: value" with a token name and a value of visible characters,
 * blanks and obs-text (no control characters, so no header injection);
 * stored as "Name: value" with one blank. NULL with the reason in why. */
char *config_value_header(const char *v, char why[static 256])
{
	size_t n = 0;
	const char *val;

	while (is_tchar((unsigned char)v[n]))
		n++;
	if (n == 0 || v[n] != ':') {
		snprintf(why, 256, "expected \"Name: value\" with a field name of letters, digits and "
			     "!#$%%&'*+-.^_`|~, got '%s'",
		       v);
		return NULL;
	}
	if (header_reserved(v, n)) {
		snprintf(why, 256, "ktlsd sets %.*s itself", (int)n, v);
		return NULL;
	}
	val = v + n + 1 + strspn(v + n + 1, " \t");
	for (const unsigned char *p = (const unsigned char *)val; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
			snprintf(why, 256, "control character in the value of %.*s", (int)n, v);
			return NULL;
		}
	if (!*val) {
		snprintf(why, 256, "%.*s has an empty value", (int)n, v);
		return NULL;
	}
	char *out = malloc(n + 2 + strlen(val) + 1);
	if (!out) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	sprintf(out, "%.*s: %s", (int)n, v, val);
	return out;
}

/* A host name as SNI and Host compare it: lowercase, no trailing dot;
 * "*." may lead it (any one or more labels). Letters, digits, '-', '_'
 * and dots only: SNI carries no IP address (RFC 6066 3) and Host's port
 * is not part of the name. */
char *config_value_name(const char *v, char why[static 256])
{
	size_t len = strlen(v), start = strncmp(v, "*.", 2) == 0 ? 2 : 0;

	if (len && v[len - 1] == '.')
		len--;
	bool ok = len > start && len <= 253 && v[start] != '.';
	for (size_t i = start; ok && i < len; i++)
		ok = isalnum((unsigned char)v[i]) || (strchr("-_.", v[i]) && !(v[i] == '.' && v[i + 1] == '.'));
	if (!ok) {
		snprintf(why, 256, "expected a host name (dl.example.org, *.example.org), got '%s'", v);
		return NULL;
	}
	char *out = config_value_strdup(v);
	out[len] = '\0';
	for (char *p = out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return out;
}

/* "EXT TYPE" or ".EXT TYPE": stored as "ext TYPE", the extension lowercase. */
char *config_value_mime(const char *v, char why[static 256])
{
	size_t n;

	v += *v == '.';
	n = strcspn(v, " \t");
	const char *type = v + n + strspn(v + n, " \t");
	size_t tn = strcspn(type, " \t;");
	bool ok = n > 0 && n <= 64 && tn > 2 && memchr(type, '/', tn);
	for (size_t i = 0; ok && i < n; i++)
		ok = v[i] != '.' && v[i] != '/' && is_tchar((unsigned char)v[i]);
	for (const unsigned char *p = (const unsigned char *)type; ok && *p; p++)
		ok = *p >= 0x20 && *p != 0x7f;
	if (!ok) {
		snprintf(why, 256, "expected \"EXT TYPE\" (iso application/x-iso9660-image), got '%s'", v);
		return NULL;
	}
	char *out = config_value_strdup(v);
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	memmove(out + n + 1, type, strlen(type) + 1);
	out[n] = ' ';
	return out;
}

const char *config_value_page_file(const char *v)
{
	v += strcspn(v, " \t");
	return v + strspn(v, " \t");
}
