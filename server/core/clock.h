/* A worker's clock, read once per loop turn, as nginx caches its time
 * (src/core/ngx_times.c): what a turn does (deadlines, the Date header, an
 * ETag's recency, the access log's time) sees one instant, and a request
 * reads no clock of its own. Worker-local: no lock. */
#ifndef KTLSD_SERVER_CLOCK_H
#define KTLSD_SERVER_CLOCK_H

#include <stdint.h>

#include "proto/httpdate.h"

struct clock {
	uint64_t now_ms;             /* CLOCK_MONOTONIC_COARSE: deadlines, durations */
	int64_t now_sec;             /* CLOCK_REALTIME_COARSE: dates, a file's age */
	int64_t date_sec;            /* the second date was formatted for */
	char date[HTTPDATE_LEN + 1];
};

/* Reads the clocks: at the start of a loop turn. The coarse clocks are
 * the kernel's tick (a few ms), the one it stamps files' mtimes with, so
 * a file's age against now_sec is measured on one clock. */
void clock_update(struct clock *c);

/* now_sec as an HTTP date (the Date header), formatted once a second. */
const char *clock_date(struct clock *c);

/* CLOCK_MONOTONIC in ns, read now: for measuring the work of one turn,
 * not for what a request sees. */
uint64_t clock_ns(void);

#endif
