/* The per-worker access log. See access_log.h. */
#include "server/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int access_log_open(struct access_log *al, const char *path)
{
	al->len = 0;
	al->fd = -1;
	if (!path || strcmp(path, "off") == 0)
		return 0;
	al->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	return al->fd < 0 ? -errno : 0;
}

void access_log_flush(struct access_log *al)
{
	size_t off = 0;
	while (al->fd >= 0 && off < al->len) {
		ssize_t n = write(al->fd, al->buf + off, al->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* a full disk loses log lines, never requests */
		off += (size_t)n;
	}
	al->len = 0;
}

void access_log_line(struct access_log *al, const char *fmt, ...)
{
	va_list ap;
	if (al->fd < 0)
		return;
	for (int attempt = 0; attempt < 2; attempt++) {
		size_t room = sizeof(al->buf) - al->len;
		va_start(ap, fmt);
		int n = vsnprintf(al->buf + al->len, room, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n + 1 < room) {
			al->len += (size_t)n;
			al->buf[al->len++] = '\n';
			return;
		}
		access_log_flush(al);
	}
}

size_t access_log_escape(char *dst, size_t cap, const char *src, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (cap == 0)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)src[i];
		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			if (n + 1 >= cap)
				break;
			dst[n++] = (char)b;
			continue;
		}
		if (n + 4 >= cap)
			break;
		dst[n++] = '\\';
		dst[n++] = 'x';
		dst[n++] = hex[b >> 4];
		dst[n++] = hex[b & 15];
	}
	dst[n] = '\0';
	return n;
}

void access_log_time(char *out)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(out, 32, "%d/%b/%Y:%H:%M:%S +0000", &tm);
}

void access_log_close(struct access_log *al)
{
	access_log_flush(al);
	if (al->fd >= 0)
		close(al->fd);
	al->fd = -1;
}
