/* The access log: lines formatted without printf into a worker's buffer,
 * and written out in whole lines. See access_log.h. */
#include "server/core/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/authority.h"
#include "proto/numfmt.h"
#include "server/core/file_create.h"
#include "server/core/log.h"

/* The longest line: the client's fields are cut to these many bytes once
 * escaped, so that a line always fits in one write of PIPE_BUF bytes (a
 * pipe keeps such a write whole between workers). The rest of a line is
 * well under 700 bytes, JSON's keys included. */
#define LINE_MAX_BYTES PIPE_BUF
#define METHOD_MAX 32
#define TARGET_MAX 1900
#define REFERER_MAX 640
#define USER_AGENT_MAX 512
#define HOST_MAX 256

_Static_assert(METHOD_MAX + TARGET_MAX + REFERER_MAX + USER_AGENT_MAX + HOST_MAX + 700 <=
		   LINE_MAX_BYTES,
	       "an access-log line must fit in one PIPE_BUF write");

static const char hex_upper[] = "0123456789ABCDEF";

const char *access_log_file_named(const char *path)
{
	static const char *const streams[] = {"stdout", "/dev/stdout", "stderr", "/dev/stderr"};

	for (size_t i = 0; path && i < sizeof(streams) / sizeof(streams[0]); i++)
		if (strcmp(path, streams[i]) == 0)
			return NULL;
	return path;
}

int access_log_file_open(struct access_log_file *f, const char *path)
{
	struct stat st;

	f->fd = -1;
	f->whole_writes = false;
	f->path = NULL;
	if (!path)
		return 0;
	/* The descriptors themselves: open("/dev/stdout") fails with ENXIO
	 * when stdout is a socket (systemd's journal). */
	if (!access_log_file_named(path)) {
		f->fd = strstr(path, "stdout") ? 1 : 2;
	} else {
		f->fd = file_create_log(path, NULL);
		f->path = path;
	}
	if (f->fd < 0) {
		int rc = f->fd;
		f->fd = -1;
		return rc;
	}
	f->whole_writes = fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}

int access_log_file_reopen(struct access_log_file *f)
{
	return f->fd < 0 || !f->path ? 0 : log_file_reopen_onto(f->path, f->fd);
}

int access_log_file_replace(struct access_log_file *f, int nfd)
{
	if (f->fd < 0 || !f->path) {
		close(nfd);
		return 0;
	}
	return log_file_replace(f->fd, nfd);
}

void access_log_file_close(struct access_log_file *f)
{
	if (f->fd > 2)
		close(f->fd);
	f->fd = -1;
}

void access_log_init(struct access_log *al, const struct access_log_file *f,
		     enum access_log_format format)
{
	al->fd = f->fd;
	al->whole_writes = f->whole_writes;
	al->len = 0;
	access_log_set_format(al, format);
}

void access_log_set_format(struct access_log *al, enum access_log_format format)
{
	al->format = format;
	al->when[0] = '\0'; /* the time is written differently */
}

/* ---- writing out ---- */

/* Writes all of p[0, n) to fd, or gives up: false on an error other than
 * EINTR, or when a non-blocking reader takes nothing for a second. */
static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* stdout can be a socket someone made non-blocking. */
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			if (poll(&pfd, 1, 1000) > 0)
				continue;
		}
		return false;
	}
	return true;
}

void access_log_flush(struct access_log *al)
{
	size_t off = 0;

	if (al->fd >= 0 && al->whole_writes)
		write_all(al->fd, al->buf, al->len);
	while (al->fd >= 0 && !al->whole_writes && off < al->len) {
		/* Whole lines, at most PIPE_BUF bytes in each write. */
		size_t n = al->len - off;
		if (n > LINE_MAX_BYTES) {
			n = LINE_MAX_BYTES;
			while (n > 0 && al->buf[off + n - 1] != '\n')
				n--;
			if (n == 0)
				n = LINE_MAX_BYTES; /* cannot happen: lines are shorter */
		}
		if (!write_all(al->fd, al->buf + off, n))
			break;
		off += n;
	}
	al->len = 0;
}

/* ---- formatting ---- */

/* Where a line is being written: never past end. */
struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (n > (size_t)(o->end - o->p))
		n = (size_t)(o->end - o->p);
	memcpy(o->p, s, n);
	o->p += n;
}

#define PUT_LIT(o, lit) put(o, lit, sizeof(lit) - 1)

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[NUMFMT_U64_MAX];
	put(o, tmp, numfmt_u64(tmp, v));
}

/* ms as seconds with three decimals: "12.345". */
static void put_seconds(struct out *o, uint64_t ms)
{
	char tmp[NUMFMT_U64_MAX + 4];
	size_t n = numfmt_u64(tmp, ms / 1000);
	unsigned frac = (unsigned)(ms % 1000);

	tmp[n++] = '.';
	tmp[n++] = (char)('0' + frac / 100);
	tmp[n++] = (char)('0' + frac / 10 % 10);
	tmp[n++] = (char)('0' + frac % 10);
	put(o, tmp, n);
}

static size_t escape_nginx(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)src[i];
		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			if (n + 1 > cap)
				break;
			dst[n++] = (char)b;
			continue;
		}
		if (n + 4 > cap)
			break;
		dst[n++] = '\\';
		dst[n++] = 'x';
		dst[n++] = hex_upper[b >> 4];
		dst[n++] = hex_upper[b & 15];
	}
	return n;
}

size_t access_log_escape(char *dst, size_t cap, const char *src, size_t len)
{
	if (cap == 0)
		return 0;
	size_t n = escape_nginx(dst, cap - 1, src, len);
	dst[n] = '\0';
	return n;
}

/* The client's bytes, escaped, at most max of them; "-" when absent. */
static void put_field(struct out *o, const char *s, size_t len, size_t max)
{
	size_t room = (size_t)(o->end - o->p);

	if (!s) {
		PUT_LIT(o, "-");
		return;
	}
	o->p += escape_nginx(o->p, max < room ? max : room, s, len);
}

/* The host the request named, without its port (nginx's $host keeps none
 * either: one site reached on two ports is one host to a log reader); as
 * sent when it does not parse. */
static void host_of(const struct access_record *r, const char **host, size_t *len)
{
	struct authority a;

	*host = r->host;
	*len = r->host_len;
	if (!r->host || authority_parse(r->host, r->host_len, &a) < 0)
		return;
	/* An IP literal keeps its brackets: "[::1]". */
	*len = (size_t)(a.host + a.host_len - r->host) + (r->host[0] == '[');
}

static void put_host(struct out *o, const struct access_record *r)
{
	const char *h;
	size_t n;

	host_of(r, &h, &n);
	put_field(o, h, n, HOST_MAX);
}

static const char *const end_names[] = {
    [ACCESS_END_COMPLETE] = "complete", [ACCESS_END_RESET] = "reset",
    [ACCESS_END_LOST] = "lost",         [ACCESS_END_TIMEOUT] = "timeout",
    [ACCESS_END_SHUTDOWN] = "shutdown", [ACCESS_END_TRUNCATED] = "truncated",
    [ACCESS_END_ERROR] = "error",
};

/* The time field, formatted once a second. UTC, as the error log. */
static void update_time(struct access_log *al, time_t now)
{
	struct tm tm;

	if (al->when[0] && now == al->when_sec)
		return;
	al->when_sec = now;
	gmtime_r(&now, &tm);
	strftime(al->when, sizeof(al->when),
		 al->format == ACCESS_LOG_JSON ? "%Y-%m-%dT%H:%M:%S+00:00" : "%d/%b/%Y:%H:%M:%S +0000",
		 &tm);
}

static void format_combined(struct access_log *al, struct out *o, const struct access_record *r)
{
	put_str(o, r->client[0] ? r->client : "-");
	PUT_LIT(o, " - - [");
	put_str(o, al->when);
	PUT_LIT(o, "] \"");
	put_field(o, r->method, r->method_len, METHOD_MAX);
	PUT_LIT(o, " ");
	put_field(o, r->target, r->target_len, TARGET_MAX);
	PUT_LIT(o, " ");
	put_str(o, r->version);
	PUT_LIT(o, "\" ");
	put_u64(o, (uint64_t)r->status);
	PUT_LIT(o, " ");
	put_u64(o, r->body_bytes);
	PUT_LIT(o, " \"");
	put_field(o, r->referer, r->referer_len, REFERER_MAX);
	PUT_LIT(o, "\" \"");
	put_field(o, r->user_agent, r->user_agent_len, USER_AGENT_MAX);
	PUT_LIT(o, "\" ");
	/* ktlsd's fields, after nginx's. */
	put_seconds(o, r->duration_ms);
	PUT_LIT(o, " ");
	put_str(o, r->protocol);
	PUT_LIT(o, " ");
	put_str(o, r->tls_version);
	PUT_LIT(o, " ");
	put_str(o, r->tls_cipher);
	if (r->ktls_tx)
		PUT_LIT(o, " ktls=tx body=");
	else
		PUT_LIT(o, " ktls=off body=");
	put_str(o, r->body_path);
	/* On every line, "-" for none: a field that comes and goes would
	 * shift the columns of a reader that counts them (goaccess's
	 * custom formats). */
	PUT_LIT(o, " enc=");
	put_str(o, r->encoding ? r->encoding : "-");
	PUT_LIT(o, " site=\"");
	put_field(o, r->site ? r->site : "-", r->site ? strlen(r->site) : 1, HOST_MAX);
	PUT_LIT(o, "\" host=\"");
	put_host(o, r);
	PUT_LIT(o, "\" sent=");
	put_u64(o, r->sent_bytes);
	PUT_LIT(o, " end=");
	put_str(o, end_names[r->end]);
}

/* ---- JSON lines ---- */

/* src[0, len) as the inside of a JSON string, at most cap bytes, never half
 * an escape: '"' and '\' escaped, and every byte outside printable ASCII
 * written as \u00XX. The client's bytes need not be UTF-8 and the line must
 * stay valid JSON whatever they are (nginx's escape=json passes them
 * through): a reader gets each such byte back as the code point of the
 * same number. */
static size_t escape_json(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)src[i];
		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			if (n + 1 > cap)
				break;
			dst[n++] = (char)b;
		} else if (b == '"' || b == '\\') {
			if (n + 2 > cap)
				break;
			dst[n++] = '\\';
			dst[n++] = (char)b;
		} else {
			if (n + 6 > cap)
				break;
			memcpy(dst + n, "\\u00", 4);
			dst[n + 4] = hex_upper[b >> 4];
			dst[n + 5] = hex_upper[b & 15];
			n += 6;
		}
	}
	return n;
}

/* A JSON string of the client's bytes, or null when absent. */
static void put_json(struct out *o, const char *s, size_t len, size_t max)
{
	size_t room = (size_t)(o->end - o->p);

	if (!s) {
		PUT_LIT(o, "null");
		return;
	}
	if (room < 2) {
		o->p = o->end;
		return;
	}
	*o->p++ = '"';
	room -= 2;
	o->p += escape_json(o->p, max < room ? max : room, s, len);
	*o->p++ = '"';
}

/* A string of ours ("-": null, as the combined line's "-"). */
static void put_json_ours(struct out *o, const char *s)
{
	if (s[0] == '-' && s[1] == '\0') {
		PUT_LIT(o, "null");
		return;
	}
	PUT_LIT(o, "\"");
	put_str(o, s);
	PUT_LIT(o, "\"");
}

static void format_json(struct access_log *al, struct out *o, const struct access_record *r)
{
	PUT_LIT(o, "{\"time\":\"");
	put_str(o, al->when);
	PUT_LIT(o, "\",\"client\":");
	put_json_ours(o, r->client[0] ? r->client : "-");
	PUT_LIT(o, ",\"method\":");
	put_json(o, r->method, r->method_len, METHOD_MAX);
	PUT_LIT(o, ",\"target\":");
	put_json(o, r->target, r->target_len, TARGET_MAX);
	PUT_LIT(o, ",\"version\":");
	put_json_ours(o, r->version);
	PUT_LIT(o, ",\"status\":");
	put_u64(o, (uint64_t)r->status);
	PUT_LIT(o, ",\"body_bytes\":");
	put_u64(o, r->body_bytes);
	PUT_LIT(o, ",\"referer\":");
	put_json(o, r->referer, r->referer_len, REFERER_MAX);
	PUT_LIT(o, ",\"user_agent\":");
	put_json(o, r->user_agent, r->user_agent_len, USER_AGENT_MAX);
	PUT_LIT(o, ",\"request_time\":");
	put_seconds(o, r->duration_ms);
	PUT_LIT(o, ",\"protocol\":");
	put_json_ours(o, r->protocol);
	PUT_LIT(o, ",\"tls_version\":");
	put_json_ours(o, r->tls_version);
	PUT_LIT(o, ",\"tls_cipher\":");
	put_json_ours(o, r->tls_cipher);
	if (r->ktls_tx)
		PUT_LIT(o, ",\"ktls\":true,\"body\":");
	else
		PUT_LIT(o, ",\"ktls\":false,\"body\":");
	put_json_ours(o, r->body_path);
	if (r->encoding) {
		PUT_LIT(o, ",\"encoding\":");
		put_json_ours(o, r->encoding);
	}
	PUT_LIT(o, ",\"site\":");
	put_json(o, r->site, r->site ? strlen(r->site) : 0, HOST_MAX);
	PUT_LIT(o, ",\"host\":");
	const char *h;
	size_t hn;
	host_of(r, &h, &hn);
	put_json(o, h, hn, HOST_MAX);
	PUT_LIT(o, ",\"sent\":");
	put_u64(o, r->sent_bytes);
	PUT_LIT(o, ",\"end\":\"");
	put_str(o, end_names[r->end]);
	PUT_LIT(o, "\"}");
}

void access_log_write(struct access_log *al, const struct access_record *r)
{
	if (al->fd < 0)
		return;
	if (sizeof(al->buf) - al->len < LINE_MAX_BYTES)
		access_log_flush(al);
	update_time(al, r->when);

	/* One byte kept for the newline. */
	struct out o = {al->buf + al->len, al->buf + al->len + LINE_MAX_BYTES - 1};
	if (al->format == ACCESS_LOG_JSON)
		format_json(al, &o, r);
	else
		format_combined(al, &o, r);
	*o.p++ = '\n';
	al->len = (size_t)(o.p - al->buf);
}
