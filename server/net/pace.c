#include "server/net/pace.h"

/* A tenth of a second's worth: ten sends (and ten timer wake-ups) a
 * second per limited connection, whatever its rate, and never less than
 * one chunk (PACE_CHUNK, or the whole rate below it). */
static uint64_t burst_of(uint64_t rate)
{
	uint64_t chunk = rate < PACE_CHUNK ? rate : PACE_CHUNK;
	return rate / 10 > chunk ? rate / 10 : chunk;
}

void pace_init(struct pace *p, uint64_t rate, uint64_t after, uint64_t now_ms)
{
	p->rate = rate;
	p->free_left = rate ? after : 0;
	p->burst = burst_of(rate);
	p->tokens = p->burst * 1000;
	p->last_ms = now_ms;
}

static void refill(struct pace *p, uint64_t now_ms)
{
	uint64_t full = p->burst * 1000;

	if (now_ms <= p->last_ms)
		return;
	uint64_t dt = now_ms - p->last_ms;
	p->last_ms = now_ms;
	/* No overflow: past a full bucket's time the answer is full anyway. */
	if (dt >= full / p->rate + 1) {
		p->tokens = full;
		return;
	}
	p->tokens += dt * p->rate;
	if (p->tokens > full)
		p->tokens = full;
}

size_t pace_grant(struct pace *p, size_t want, uint64_t now_ms)
{
	if (!p->rate || want == 0)
		return want;
	if (p->free_left >= want)
		return want;
	refill(p, now_ms);
	uint64_t have = p->tokens / 1000 + p->free_left;
	uint64_t need = want < p->burst ? want : p->burst;
	if (have < need)
		return 0;
	return have < want ? (size_t)have : want;
}

uint64_t pace_wait_ms(const struct pace *p, size_t want)
{
	uint64_t need = want < p->burst ? want : p->burst;
	uint64_t have = p->tokens + p->free_left * 1000;

	if (!p->rate || have >= need * 1000)
		return 1;
	uint64_t ms = (need * 1000 - have + p->rate - 1) / p->rate;
	return ms ? ms : 1;
}

void pace_spend(struct pace *p, size_t n)
{
	if (!p->rate)
		return;
	if (p->free_left >= n) {
		p->free_left -= n;
		return;
	}
	n -= (size_t)p->free_left;
	p->free_left = 0;
	uint64_t t = (uint64_t)n * 1000;
	p->tokens = t < p->tokens ? p->tokens - t : 0;
}
