/* HTTP dates (RFC 9110 5.6.7).
 *
 * Names come from our own tables, not strftime("%a %b"): those follow the
 * locale, and an HTTP date is always English. Formatting computes the UTC
 * fields itself (gmtime_r takes glibc's time-zone lock on every call, a
 * per-response cost for Last-Modified); parsing uses timegm. Both are
 * thread-safe and independent of TZ.
 *
 * Parsing is strict about structure (exact lengths, fixed separators, the
 * case of names, "GMT") and about values: a day that does not exist in its
 * month ("Feb 30") or a weekday that does not match the date is refused, so
 * garbage never turns into a plausible time. Seconds may be 60 (a leap
 * second), which timegm carries into the next minute. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/httpdate.h"

static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const days_long[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                         "Thursday", "Friday", "Saturday"};
static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* IMF-fixdate has a four-digit year; times outside years 1..9999 are clamped
 * to those ends rather than printed malformed. */
#define TIME_MIN (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define TIME_MAX 253402300799LL   /* 9999-12-31T23:59:59Z */

static char *put2(char *p, int v)
{
	*p++ = (char)('0' + v / 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

/* The UTC fields of t, as gmtime_r fills them: days to a proleptic
 * Gregorian date by Howard Hinnant's civil_from_days (eras of 400 years,
 * years starting in March so the leap day comes last). */
static void utc_fields(long long t, struct tm *tm)
{
	long long ndays = t / 86400, secs = t % 86400;

	if (secs < 0) {
		secs += 86400;
		ndays--;
	}
	tm->tm_hour = (int)(secs / 3600);
	tm->tm_min = (int)(secs / 60 % 60);
	tm->tm_sec = (int)(secs % 60);
	tm->tm_wday = (int)((ndays % 7 + 7 + 4) % 7); /* 1970-01-01 was a Thursday */

	long long z = ndays + 719468; /* days since 0000-03-01 */
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned month = mp < 10 ? mp + 3 : mp - 9;

	tm->tm_mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->tm_mon = (int)month - 1;
	tm->tm_year = (int)((long long)yoe + era * 400 + (month <= 2) - 1900);
}

void httpdate_format(time_t t, char *out)
{
	struct tm tm;
	char *p = out;

	if ((long long)t < TIME_MIN)
		t = (time_t)TIME_MIN;
	if ((long long)t > TIME_MAX)
		t = (time_t)TIME_MAX;
	utc_fields((long long)t, &tm);

	int year = tm.tm_year + 1900;
	memcpy(p, days[tm.tm_wday], 3);
	p += 3;
	*p++ = ',';
	*p++ = ' ';
	p = put2(p, tm.tm_mday);
	*p++ = ' ';
	memcpy(p, months[tm.tm_mon], 3);
	p += 3;
	*p++ = ' ';
	p = put2(p, year / 100);
	p = put2(p, year % 100);
	*p++ = ' ';
	p = put2(p, tm.tm_hour);
	*p++ = ':';
	p = put2(p, tm.tm_min);
	*p++ = ':';
	p = put2(p, tm.tm_sec);
	memcpy(p, " GMT", 5); /* with the NUL */
}

/* n digits at s, or -1. */
void httpdate_rfc3339(time_t t, char *out)
{
	struct tm tm;
	char *p = out;

	utc_fields((long long)t, &tm);
	int year = tm.tm_year + 1900;
	p = put2(p, year / 100);
	p = put2(p, year % 100);
	*p++ = '-';
	p = put2(p, tm.tm_mon + 1);
	*p++ = '-';
	p = put2(p, tm.tm_mday);
	*p++ = 'T';
	p = put2(p, tm.tm_hour);
	*p++ = ':';
	p = put2(p, tm.tm_min);
	*p++ = ':';
	p = put2(p, tm.tm_sec);
	memcpy(p, "Z", 2); /* with the NUL */
}

static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int month_index(const char *s)
{
	for (int i = 0; i < 12; i++)
		if (memcmp(s, months[i], 3) == 0)
			return i;
	return -1;
}

static int day_index(const char *s, size_t len, bool long_name)
{
	for (int i = 0; i < 7; i++) {
		const char *name = long_name ? days_long[i] : days[i];
		if (strlen(name) == len && memcmp(s, name, len) == 0)
			return i;
	}
	return -1;
}

/* "08:49:37" into tm. */
static bool parse_time(const char *s, struct tm *tm)
{
	if (s[2] != ':' || s[5] != ':')
		return false;
	tm->tm_hour = digits(s, 2);
	tm->tm_min = digits(s + 3, 2);
	tm->tm_sec = digits(s + 6, 2);
	return tm->tm_hour >= 0 && tm->tm_hour <= 23 && tm->tm_min >= 0 && tm->tm_min <= 59 &&
	       tm->tm_sec >= 0 && tm->tm_sec <= 60;
}

/* RFC 9110: a two-digit year more than 50 years in the future is the most
 * recent past year with those digits. */
static int expand_year(int yy)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm))
		return 1900 + yy;
	int cur = tm.tm_year + 1900;
	int year = cur - cur % 100 + yy;
	if (year > cur + 50)
		year -= 100;
	return year;
}

/* Checks the calendar and the weekday, then converts. timegm normalises an
 * impossible date (Feb 30 -> Mar 2), so a changed day or month means it did
 * not exist. */
static int finish(struct tm *tm, int year, int mon, int mday, int wday, time_t *out)
{
	int sec = tm->tm_sec;

	if (year < 0 || mon < 0 || mday < 1 || mday > 31 || wday < 0)
		return -EINVAL;
	tm->tm_year = year - 1900;
	tm->tm_mon = mon;
	tm->tm_mday = mday;
	tm->tm_sec = 0; /* so a leap second cannot move the day checked below */
	tm->tm_isdst = 0;
	time_t t = timegm(tm);
	if (tm->tm_mday != mday || tm->tm_mon != mon || tm->tm_year != year - 1900 ||
	    tm->tm_wday != wday)
		return -EINVAL;
	*out = t + sec;
	return 0;
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
static int parse_imf(const char *s, time_t *out)
{
	struct tm tm = {0};

	if (s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
	    memcmp(s + 25, " GMT", 4) != 0 || !parse_time(s + 17, &tm))
		return -EINVAL;
	return finish(&tm, digits(s + 12, 4), month_index(s + 8), digits(s + 5, 2),
	              day_index(s, 3, false), out);
}

/* "Sunday, 06-Nov-94 08:49:37 GMT" */
static int parse_rfc850(const char *s, size_t len, time_t *out)
{
	struct tm tm = {0};
	const char *comma = memchr(s, ',', len);

	if (!comma || len - (size_t)(comma - s) != 24)
		return -EINVAL;
	const char *d = comma + 2; /* "06-Nov-94 08:49:37 GMT" */
	if (comma[1] != ' ' || d[2] != '-' || d[6] != '-' || d[9] != ' ' ||
	    memcmp(d + 18, " GMT", 4) != 0 || !parse_time(d + 10, &tm))
		return -EINVAL;
	int yy = digits(d + 7, 2);
	if (yy < 0)
		return -EINVAL;
	return finish(&tm, expand_year(yy), month_index(d + 3), digits(d, 2),
	              day_index(s, (size_t)(comma - s), true), out);
}

/* "Sun Nov  6 08:49:37 1994" (the day is space-padded) */
static int parse_asctime(const char *s, time_t *out)
{
	struct tm tm = {0};
	int mday;

	if (s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[19] != ' ' || !parse_time(s + 11, &tm))
		return -EINVAL;
	if (s[8] == ' ')
		mday = digits(s + 9, 1);
	else
		mday = digits(s + 8, 2);
	return finish(&tm, digits(s + 20, 4), month_index(s + 4), mday, day_index(s, 3, false),
	              out);
}

int httpdate_parse(const char *s, size_t len, time_t *out)
{
	if (len == HTTPDATE_LEN && s[3] == ',')
		return parse_imf(s, out);
	if (len == 24 && s[3] == ' ')
		return parse_asctime(s, out);
	if (len >= 30 && len <= 33) /* "Monday, " .. "Wednesday, " + 22 */
		return parse_rfc850(s, len, out);
	return -EINVAL;
}
