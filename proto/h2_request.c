/* An HTTP/2 stream's request: the stream made on its HEADERS frame, and
 * the fields ktlsd acts on kept in its arena. See proto/h2_stream.h. */
#include "proto/h2_stream.h"

#include <stdlib.h>
#include <string.h>

static struct h2_field *field_of(struct h2_stream *s, const uint8_t *name, size_t len)
{
#define FIELD(name, member) {name, sizeof(name) - 1, offsetof(struct h2_stream, member)}
	static const struct {
		const char *name;
		size_t len;
		size_t off;
	} fields[] = {
	    FIELD(":method", method),
	    FIELD(":path", path),
	    FIELD(":authority", authority),
	    FIELD("host", host),
	    FIELD("range", range),
	    FIELD("if-match", if_match),
	    FIELD("if-none-match", if_none_match),
	    FIELD("if-modified-since", if_modified_since),
	    FIELD("if-unmodified-since", if_unmodified_since),
	    FIELD("if-range", if_range),
	    FIELD("accept-encoding", accept_encoding),
	    FIELD("referer", referer),
	    FIELD("user-agent", user_agent),
	    FIELD("accept", accept),
	};
#undef FIELD
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].len == len && memcmp(fields[i].name, name, len) == 0)
			return (struct h2_field *)((char *)s + fields[i].off);
	return NULL;
}

struct h2_stream *h2_stream_new(struct h2_session *hs, int32_t id)
{
	struct h2_stream *s = hs->spare;
	char *arena = NULL;
	uint32_t arena_cap = 0;
	struct iovec *iov = NULL;

	if (s) {
		hs->spare = s->next;
		hs->nspare--;
		arena = s->arena;
		arena_cap = s->arena_cap;
		iov = s->iov;
	} else if (!(s = malloc(sizeof(*s)))) {
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->arena = arena;
	s->arena_cap = arena_cap;
	s->iov = iov;
	s->hs = hs;
	s->id = id;
	s->file_fd = -1;
	s->start_ms = h2_now(hs);
	s->next = hs->streams;
	if (hs->streams)
		hs->streams->prev = s;
	hs->streams = s;
	return s;
}

/* Room for need more bytes at the arena's top; the arena grows to what the
 * request carries (bounded by --h2-max-header-list). */
static bool arena_room(struct h2_stream *s, size_t need)
{
	if (s->arena_used + need > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 256;
		while (cap < s->arena_used + need)
			cap *= 2;
		char *a = realloc(s->arena, cap);
		if (!a)
			return false;
		s->arena = a;
		s->arena_cap = (uint32_t)cap;
	}
	return true;
}

/* Keeps a copy of a field we act on. */
static bool keep_field(struct h2_stream *s, struct h2_field *f, const uint8_t *value, size_t len)
{
	if (!arena_room(s, len + 1))
		return false;
	memcpy(s->arena + s->arena_used, value, len);
	s->arena[s->arena_used + len] = '\0';
	f->off = s->arena_used;
	f->len = (uint32_t)len;
	f->set = true;
	s->arena_used += (uint32_t)len + 1;
	return true;
}

/* A repeat of list field f: "old, value". Appended in place when f is the
 * arena's last value (repeats in a row); else f moves to the top first,
 * which the other kept fields, each kept once, allow only a few times: a
 * thousand repeats cost linear, not quadratic, copying. */
static bool join_field(struct h2_stream *s, struct h2_field *f, const uint8_t *value, size_t len)
{
	size_t old = f->len;
	bool on_top = f->off + old + 1 == s->arena_used;

	if (!arena_room(s, (on_top ? 0 : old + 1) + 2 + len))
		return false;
	if (!on_top) {
		memcpy(s->arena + s->arena_used, s->arena + f->off, old + 1);
		f->off = s->arena_used;
		s->arena_used += (uint32_t)(old + 1);
	}
	char *end = s->arena + f->off + old; /* its NUL */
	memcpy(end, ", ", 2);
	memcpy(end + 2, value, len);
	end[2 + len] = '\0';
	f->len = (uint32_t)(old + 2 + len);
	s->arena_used += (uint32_t)(2 + len);
	return true;
}

int h2_stream_header(struct h2_stream *s, const uint8_t *name, size_t namelen,
		     const uint8_t *value, size_t valuelen)
{
	size_t max = s->hs->env.limits.max_header_list;
	struct h2_field *f;

	/* RFC 9113 6.5.2 counts 32 bytes of overhead per field. */
	if (s->header_bytes <= max && s->header_bytes + namelen + valuelen + 32 > max)
		s->hs->counters.header_list++; /* once per stream */
	s->header_bytes += namelen + valuelen + 32;
	if (s->header_bytes > max)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	f = field_of(s, name, namelen);
	if (!f)
		return 0;
	/* Fields kept only for the log: the first one is logged, and a
	 * failure to keep it costs the log, not the request. Accept too: the
	 * first one decides a listing's format, and a failure costs HTML. */
	if (f == &s->referer || f == &s->user_agent || f == &s->accept) {
		if (!f->set)
			keep_field(s, f, value, valuelen);
		return 0;
	}
	if (f == &s->accept_encoding && f->set) {
		if (!join_field(s, f, value, valuelen))
			s->bad = true;
		return 0;
	}
	/* A repeated field we act on is ambiguous, as in HTTP/1.1. */
	if (f->set || !keep_field(s, f, value, valuelen))
		s->bad = true;
	return 0;
}
