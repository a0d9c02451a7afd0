/* Closed HTTP/2 streams: see h2_closed.h. The marks are a ring over the
 * last H2_CLOSED_KEEP odd stream ids; a slot is cleared when the highest id
 * moves past it, so it only ever holds the mark of an id in range. */
#include "proto/h2_closed.h"

#include <stdbool.h>

#include <nghttp2/nghttp2.h>

static unsigned slot(int32_t id)
{
	return (unsigned)(id >> 1) % H2_CLOSED_KEEP;
}

static enum h2_closed_how get(const struct h2_closed *t, int32_t id)
{
	unsigned k = slot(id);

	return (enum h2_closed_how)((t->how[k / 4] >> (k % 4 * 2)) & 3);
}

static void set(struct h2_closed *t, int32_t id, enum h2_closed_how how)
{
	unsigned k = slot(id);
	uint8_t *b = &t->how[k / 4];

	*b = (uint8_t)((*b & ~(3u << (k % 4 * 2))) | ((unsigned)how << (k % 4 * 2)));
}

/* id is one of the kept ones: a client stream, at most H2_CLOSED_KEEP
 * streams below the highest. */
static bool kept(const struct h2_closed *t, int32_t id)
{
	return id > 0 && (id & 1) && id <= t->highest &&
	       (int64_t)t->highest - id < 2 * (int64_t)H2_CLOSED_KEEP;
}

void h2_closed_opened(struct h2_closed *t, int32_t id)
{
	if (id <= t->highest || !(id & 1))
		return;
	/* The slots of the ids it passes (itself included) held marks of
	 * ids H2_CLOSED_KEEP streams older, or nothing. */
	int64_t from = t->highest ? (int64_t)t->highest + 2 : 1;
	if (id - from >= 2 * (int64_t)H2_CLOSED_KEEP)
		from = id - 2 * (int64_t)(H2_CLOSED_KEEP - 1);
	t->highest = id;
	for (int64_t i = from; i <= id; i += 2)
		set(t, (int32_t)i, H2_CLOSED_UNSEEN);
}

void h2_closed_mark(struct h2_closed *t, int32_t id, enum h2_closed_how how)
{
	if (kept(t, id) && get(t, id) < how)
		set(t, id, how);
}

struct h2_closed_answer h2_closed_judge(const struct h2_closed *t, uint8_t type, int32_t id)
{
	const struct h2_closed_answer ignore = {H2_CLOSED_IGNORE, 0},
	                              reset = {H2_CLOSED_STREAM_ERROR, NGHTTP2_STREAM_CLOSED},
	                              ended = {H2_CLOSED_CONN_ERROR, NGHTTP2_STREAM_CLOSED},
	                              reused = {H2_CLOSED_CONN_ERROR, NGHTTP2_PROTOCOL_ERROR};

	if (!kept(t, id))
		return reset;
	switch (get(t, id)) {
	case H2_CLOSED_OUR_RST:
		return ignore;
	case H2_CLOSED_PEER_RST:
		return reset;
	case H2_CLOSED_ENDED:
		return ended;
	case H2_CLOSED_UNSEEN:
		break;
	}
	return type == NGHTTP2_HEADERS ? reused : reset;
}
