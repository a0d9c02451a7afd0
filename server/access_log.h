/* The access log: one line per request, gathered per worker. */
#ifndef KTLSD_SERVER_ACCESS_LOG_H
#define KTLSD_SERVER_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>

/* A worker's access log: lines gather in a buffer that is written when it
 * fills and on each timer tick, so logging costs no syscall per request.
 * Each worker has its own; lines of different workers interleave whole
 * (O_APPEND, one write per batch of whole lines). */
struct access_log {
	int fd;          /* -1: off */
	size_t len;
	char buf[32768];
};

int access_log_open(struct access_log *al, const char *path);
__attribute__((format(printf, 2, 3))) void access_log_line(struct access_log *al,
							    const char *fmt, ...);
void access_log_flush(struct access_log *al);

/* Copies src[0, len) into dst for a quoted access-log field, escaped as
 * nginx does: '"', '\', bytes below 0x20 and from 0x7f up become "\xHH"
 * (upper-case hex), so a client cannot close the field, forge a field after
 * it or break the line. Writes at most cap - 1 bytes, never half an escape,
 * and always a NUL when cap > 0. Returns the length written (without the
 * NUL). For every client-controlled field of every protocol's line. */
size_t access_log_escape(char *dst, size_t cap, const char *src, size_t len);

/* "30/Nov/2026:06:12:00 +0000", the common log format's time, into 32 bytes. */
void access_log_time(char *out);
void access_log_close(struct access_log *al);

#endif
