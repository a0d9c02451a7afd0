/* libFuzzer target: the header-value parsers behind ranges and conditional
 * requests (proto/range.c, proto/cond.c, proto/httpdate.c).
 *
 * Input: one flags byte, then up to six '\n'-separated values, in order
 * Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since,
 * If-Range (missing lines are absent headers; flags bits 0-5 make a present
 * one absent too). Flags bits 6-7 pick the file's mtime. Every value is
 * handed over in a heap buffer of exactly its length, without a NUL, so an
 * over-read is an ASan report.
 *
 * Checked: range_parse keeps its ranges inside the file, adds up to no more
 * than the file, never writes past max, and gives the same set whatever
 * max as long as it fits; cond_evaluate and cond_if_range_matches give the
 * answers the RFC fixes for the file's own validators; every date that
 * parses formats back to itself (the exact text for IMF-fixdate) and parses
 * again to the same time. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_check.h"
#include "proto/cond.h"
#include "proto/httpdate.h"
#include "proto/range.h"

#define NFIELDS 6
#define TIME_MIN (-62135596800LL) /* 0001-01-01, as httpdate.c clamps */
#define TIME_MAX 253402300799LL   /* 9999-12-31 23:59:59 */

enum { F_RANGE, F_IF_MATCH, F_IF_NONE_MATCH, F_IMS, F_IUS, F_IF_RANGE };

static const uint64_t sizes[] = {
    0, 1, 2, 10, 1000, UINT64_C(5) << 30, UINT64_C(1) << 63, UINT64_MAX - 1, UINT64_MAX,
};

static const time_t mtimes[4] = {1580608922, 784111777, 0, 253402300799};

struct field {
	char *p; /* NULL: absent */
	size_t len;
};

static void check_ranges(const struct field *f)
{
	static const size_t maxes[] = {1, 4, STATIC_MAX_RANGES};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct byte_range all[STATIC_MAX_RANGES];
		size_t nall = 0;
		enum range_result rall = RANGE_NONE;

		for (size_t m = 0; m < 3; m++) {
			size_t max = maxes[m], n = 99;
			struct byte_range *out = malloc(max * sizeof(*out));
			uint64_t total = 0;

			if (!out)
				abort();
			enum range_result r = range_parse(f->p, f->len, sizes[s], out, max, &n);
			FZ_ASSERT(r == RANGE_NONE || r == RANGE_OK || r == RANGE_UNSATISFIABLE,
			          "result %d", (int)r);
			FZ_ASSERT(r == RANGE_OK ? n >= 1 && n <= max : n == 0,
			          "result %d with n %zu (max %zu)", (int)r, n, max);
			for (size_t i = 0; i < n; i++) {
				FZ_ASSERT(
				    out[i].first <= out[i].last && out[i].last < sizes[s],
				    "range %llu-%llu of %llu", (unsigned long long)out[i].first,
				    (unsigned long long)out[i].last, (unsigned long long)sizes[s]);
				total += out[i].last - out[i].first + 1;
				FZ_ASSERT(total <= sizes[s] && total > 0,
				          "ranges add up past the file");
			}
			if (f->p == NULL)
				FZ_ASSERT(r == RANGE_NONE, "no header, result %d", (int)r);
			if (sizes[s] == 0)
				FZ_ASSERT(r != RANGE_OK, "a range of an empty file");
			if (max == STATIC_MAX_RANGES) {
				rall = r;
				nall = n;
				memcpy(all, out, n * sizeof(*out));
			}
			free(out);
		}
		/* A smaller max that still holds every member must agree: redo the
		 * smaller ones now that the full answer is known. */
		for (size_t m = 0; m < 2; m++) {
			struct byte_range out[STATIC_MAX_RANGES];
			size_t n;

			if (rall == RANGE_NONE || nall > maxes[m])
				continue;
			enum range_result r =
			    range_parse(f->p, f->len, sizes[s], out, maxes[m], &n);
			if (r == RANGE_NONE) /* more members than max, some unsatisfiable */
				continue;
			FZ_ASSERT(r == rall && n == nall && memcmp(out, all, n * sizeof(*out)) == 0,
			          "max %zu changes the answer", maxes[m]);
		}
	}
}

/* Every date that parses survives a format and a second parse. */
static void check_date(const struct field *f)
{
	char text[HTTPDATE_LEN + 1];
	time_t t, t2;

	if (!f->p || httpdate_parse(f->p, f->len, &t) != 0)
		return;
	if ((long long)t < TIME_MIN || (long long)t > TIME_MAX)
		return; /* year 0000 or 9999-12-31 23:59:60: formatting clamps */
	httpdate_format(t, text);
	FZ_ASSERT(strlen(text) == HTTPDATE_LEN, "formatted '%s'", text);
	FZ_ASSERT(httpdate_parse(text, HTTPDATE_LEN, &t2) == 0 && t2 == t,
	          "'%.*s' -> %lld -> '%s' does not parse back", (int)f->len, f->p, (long long)t,
	          text);
	/* IMF-fixdate is canonical: except for a leap second (:60 moves to the
	 * next minute), the text itself comes back. */
	if (f->len == HTTPDATE_LEN && f->p[3] == ',' && memcmp(f->p + 23, "60", 2) != 0)
		FZ_ASSERT(memcmp(text, f->p, HTTPDATE_LEN) == 0, "'%.*s' formats as '%s'",
		          (int)f->len, f->p, text);
}

static void check_cond(const struct field *f, time_t mtime)
{
	struct cond_headers h = {
	    .if_match = f[F_IF_MATCH].p,
	    .if_match_len = f[F_IF_MATCH].len,
	    .if_none_match = f[F_IF_NONE_MATCH].p,
	    .if_none_match_len = f[F_IF_NONE_MATCH].len,
	    .if_modified_since = f[F_IMS].p,
	    .if_modified_since_len = f[F_IMS].len,
	    .if_unmodified_since = f[F_IUS].p,
	    .if_unmodified_since_len = f[F_IUS].len,
	};
	char etag[ETAG_MAX], date[HTTPDATE_LEN + 1];
	enum cond_result r;

	etag_format(etag, sizeof(etag), 0x2a, UINT64_C(5) << 30, mtime, 123, mtime & 1);
	FZ_ASSERT(strlen(etag) < ETAG_MAX - 1, "ETag %s fills its buffer", etag);
	r = cond_evaluate(&h, etag, mtime);
	FZ_ASSERT(r == COND_PROCEED || r == COND_NOT_MODIFIED || r == COND_PRECONDITION_FAILED,
	          "cond_evaluate: %d", (int)r);
	FZ_ASSERT(cond_evaluate(&h, etag, mtime) == r, "cond_evaluate is not a function");
	if (!h.if_match && !h.if_unmodified_since)
		FZ_ASSERT(r != COND_PRECONDITION_FAILED, "412 without a precondition");
	if (!h.if_none_match && !h.if_modified_since)
		FZ_ASSERT(r != COND_NOT_MODIFIED, "304 without a validator to match");
	/* A NULL current tag (no representation) must not crash either. */
	(void)cond_evaluate(&h, NULL, mtime);

	if (f[F_IF_RANGE].p) {
		bool m = cond_if_range_matches(f[F_IF_RANGE].p, f[F_IF_RANGE].len, etag, mtime);
		(void)cond_if_range_matches(f[F_IF_RANGE].p, f[F_IF_RANGE].len, NULL, mtime);
		if (m && f[F_IF_RANGE].len > 0 && memchr(f[F_IF_RANGE].p, '"', f[F_IF_RANGE].len))
			FZ_ASSERT(memmem(f[F_IF_RANGE].p, f[F_IF_RANGE].len, etag, strlen(etag)),
			          "If-Range '%.*s' matches %s", (int)f[F_IF_RANGE].len,
			          f[F_IF_RANGE].p, etag);
	}

	/* The file's own validators always match. */
	struct cond_headers self = {.if_match = etag, .if_match_len = strlen(etag)};
	FZ_ASSERT(cond_evaluate(&self, etag, mtime) == COND_PROCEED, "If-Match: own ETag");
	self = (struct cond_headers){.if_none_match = etag, .if_none_match_len = strlen(etag)};
	FZ_ASSERT(cond_evaluate(&self, etag, mtime) == COND_NOT_MODIFIED,
	          "If-None-Match: own ETag");
	FZ_ASSERT(cond_if_range_matches(etag, strlen(etag), etag, mtime), "If-Range: own ETag");
	httpdate_format(mtime, date);
	FZ_ASSERT(cond_if_range_matches(date, HTTPDATE_LEN, etag, mtime) ==
	              ((long long)mtime >= TIME_MIN && (long long)mtime <= TIME_MAX),
	          "If-Range: own Last-Modified %s", date);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct field f[NFIELDS] = {{0}};
	const uint8_t *p, *end = data + size;
	uint8_t flags;

	if (size < 1)
		return 0;
	flags = data[0];
	p = data + 1;
	for (int i = 0; i < NFIELDS && p <= end; i++) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (!(flags & (1u << i))) {
			f[i].p = malloc(n ? n : 1);
			if (!f[i].p)
				abort();
			memcpy(f[i].p, p, n);
			f[i].len = n;
		}
		if (!nl)
			break;
		p = nl + 1;
	}

	check_ranges(&f[F_RANGE]);
	for (int i = 0; i < NFIELDS; i++)
		check_date(&f[i]);
	check_cond(f, mtimes[flags >> 6]);

	/* Any 64-bit time formats into 29 bytes that parse back, clamped. */
	if (size >= 9) {
		int64_t v;
		time_t t;
		char text[HTTPDATE_LEN + 1];

		memcpy(&v, data + 1, sizeof(v));
		httpdate_format((time_t)v, text);
		FZ_ASSERT(strlen(text) == HTTPDATE_LEN &&
		              httpdate_parse(text, HTTPDATE_LEN, &t) == 0,
		          "%lld formats as unparseable '%s'", (long long)v, text);
		long long want = v < TIME_MIN ? TIME_MIN : v > TIME_MAX ? TIME_MAX : v;
		FZ_ASSERT((long long)t == want, "%lld -> '%s' -> %lld", (long long)v, text,
		          (long long)t);
	}
	for (int i = 0; i < NFIELDS; i++)
		free(f[i].p);
	return 0;
}
