#include "server/core/clock.h"

#include <time.h>

void clock_update(struct clock *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	c->now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	c->now_sec = (int64_t)ts.tv_sec;
}

const char *clock_date(struct clock *c)
{
	if (c->now_sec != c->date_sec || !c->date[0]) {
		httpdate_format((time_t)c->now_sec, c->date);
		c->date_sec = c->now_sec;
	}
	return c->date;
}

uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}
