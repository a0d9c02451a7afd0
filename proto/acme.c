/* ACME's small rules: which strings from a CA may be kept (URLs, tokens,
 * names), and the clock arithmetic (Retry-After, RFC 3339 times, when to
 * renew, how long to back off). The JSON lives in acme_json.c and
 * acme_payload.c. */
#include "proto/acme.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "proto/httpdate.h"

/* A URL we may later put in a request line and a JWS header: https only, and
 * none of the bytes that would need quoting there. */
bool acme_url_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < sizeof("https://x") - 1 || n >= ACME_URL_MAX || strncasecmp(s, "https://", 8) != 0)
		return false;
	if (s[8] == '/' || s[8] == '?' || s[8] == '#')
		return false; /* no host */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>')
			return false;
	}
	return true;
}

/* 1..max letters, digits and the characters of extra. */
static bool word_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isascii(c) || !(isalnum(c) || strchr(extra, c)))
			return false;
	}
	return true;
}

/* Tokens end up in a file name (HTTP-01's path) and in the key
 * authorization; RFC 8555 §8.1 fixes their alphabet to base64url. */
bool acme_token_ok(const char *s)
{
	return word_ok(s, ACME_TOKEN_MAX, "-_");
}

/* A profile's name goes into the log and the order; the draft gives no
 * alphabet, the CAs' names so far (classic, tlsserver, shortlived) are
 * words. */
bool acme_profile_ok(const char *s)
{
	return word_ok(s, ACME_PROFILE_MAX, "-_.");
}

/* RFC 1123 host names: labels of 1..63 letters, digits and inner hyphens,
 * the whole at most 253 bytes, no trailing dot, no '*'. */
bool acme_name_ok(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!isascii(c) || !(isalnum(c) || c == '-'))
			return false;
		if (c == '-' && label == 0)
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && s[n - 1] != '-';
}

/* RFC 9110 10.2.3. delta-seconds beyond what a long holds are clamped: the
 * RFC asks recipients to treat an overflow as the largest value they can. */
long acme_retry_after(const char *v, time_t now)
{
	const char *b = v, *e = v + strlen(v);

	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (b == e)
		return -1;
	if (isdigit((unsigned char)*b)) {
		long secs = 0;
		for (const char *p = b; p < e; p++) {
			if (!isdigit((unsigned char)*p))
				goto date; /* "6, 12 Nov ..." is no HTTP-date either */
			int d = *p - '0';
			secs = secs > (LONG_MAX - d) / 10 ? LONG_MAX : secs * 10 + d;
		}
		return secs;
	}
date:;
	time_t t;
	if (httpdate_parse(b, (size_t)(e - b), &t) != 0)
		return -1;
	return t > now ? (long)(t - now) : 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, int n, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return true;
}

static unsigned days_in_month(unsigned y, unsigned m)
{
	static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dim[m - 1];
}

/* RFC 3339 §5.6 date-time; fractions are dropped (certificates and ARI
 * windows are in whole seconds), a leap second counts as the next one. */
time_t acme_rfc3339(const char *s)
{
	unsigned y, mo, d, h, mi, sec, oh = 0, om = 0;
	size_t n = strlen(s);

	if (n < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	const char *p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	int sign = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -1;
		p += 6;
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (int64_t)(oh * 3600 + om * 60);
	return (time_t)t;
}

static double clamp_unit(double j)
{
	if (!(j >= -1.0)) /* NaN too */
		return j > 1.0 ? 1.0 : -1.0;
	return j > 1.0 ? 1.0 : j;
}

/* Let's Encrypt's integration guidance (as Certbot 4.0 applies it): 2/3 of
 * the lifetime, 1/2 for short-lived certificates, spread by +-2 %. */
time_t acme_renew_at(time_t nb, time_t na, double jitter_unit)
{
	if (na <= nb)
		return nb; /* nothing valid to wait for: renew now */
	int64_t life = (int64_t)na - (int64_t)nb;
	int64_t at = life <= 10 * 86400 ? life / 2 : life / 3 * 2 + life % 3 * 2 / 3;
	at += (int64_t)(0.02 * (double)life * clamp_unit(jitter_unit));
	return (time_t)((int64_t)nb + at);
}

/* 1 min, 10 min, 1 h, then 6 h: at most 3 failures in a name's first hour,
 * under Let's Encrypt's 5 failed validations per hostname and hour. */
long acme_backoff(unsigned nth, double jitter_unit, time_t now, time_t na)
{
	static const long steps[] = {60, 600, 3600, 6 * 3600};
	size_t i = nth == 0 ? 0 : nth - 1;

	if (i >= sizeof(steps) / sizeof(steps[0]))
		i = sizeof(steps) / sizeof(steps[0]) - 1;
	long wait = (long)((double)steps[i] * (1.0 + 0.1 * clamp_unit(jitter_unit)));
	if (na != 0) {
		/* Half of what is left leaves room for a second try before
		 * the certificate runs out. */
		long half = na > now ? (long)((na - now) / 2) : 0;
		if (wait > half)
			wait = half;
	}
	return wait < 60 ? 60 : wait;
}
