/* The access log: one line per request, whatever its end, in nginx's
 * "combined" format with ktlsd's fields after it:
 *
 *   client - - [time] "request" status body_bytes "referer" "user-agent"
 *     seconds protocol tls_version cipher ktls=tx|off body=PATH [enc=CODING]
 *     host="HOST" sent=BYTES end=HOW
 *
 * so that goaccess, awk scripts and log shippers that read nginx's default
 * read it unchanged; or, with --access-log-format json, one JSON object per
 * line with the same fields. enc= ("encoding" in JSON) is there only when a
 * precompressed sidecar was served (--precompressed), so lines without one
 * keep their shape.
 *
 * Lines gather in a worker's own buffer (struct access_log), written when
 * it fills and on each timer tick: a request costs no syscall and no printf.
 * Every worker writes to the one file description the main thread opened
 * (struct access_log_file). */
#ifndef KTLSD_SERVER_ACCESS_LOG_H
#define KTLSD_SERVER_ACCESS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* --access-log-format, in the order of its words. */
enum access_log_format { ACCESS_LOG_COMBINED, ACCESS_LOG_JSON };

/* How a request ended: the line's end= field. */
enum access_end {
	ACCESS_END_COMPLETE,  /* the whole response was handed to the connection */
	ACCESS_END_RESET,     /* the client reset the stream (HTTP/2 RST_STREAM) */
	ACCESS_END_LOST,      /* the connection failed under it: the client went away */
	ACCESS_END_TIMEOUT,   /* a timeout (--send-timeout) closed the connection */
	ACCESS_END_SHUTDOWN,  /* the server stopped under it (grace over, SIGINT) */
	ACCESS_END_TRUNCATED, /* the file shrank: a correct prefix, then the close */
	ACCESS_END_ERROR,     /* the server gave up on it (out of memory, a file that changed) */
};

/* One request, as both protocols describe it. The client's bytes (method,
 * target, referer, user agent, host) are escaped here; a NULL one is
 * logged as absent ("-"). */
struct access_record {
	time_t when;                 /* the line's second: the worker's clock (clock.h) */
	const char *client;          /* the address, as text */
	const char *method, *target, *referer, *user_agent, *host;
	size_t method_len, target_len, referer_len, user_agent_len, host_len;
	const char *version;         /* of the request line: "HTTP/1.1", "HTTP/2.0" */
	int status;
	uint64_t body_bytes;         /* of the body, sent (nginx's $body_bytes_sent) */
	uint64_t sent_bytes;         /* head and body, with HTTP/2's frame headers but not
				      * TLS's record overhead (nginx's $bytes_sent) */
	uint64_t duration_ms;
	const char *protocol;        /* "HTTP/1.1", "HTTP/2" */
	const char *tls_version;     /* "-" without TLS */
	const char *tls_cipher;
	bool ktls_tx;
	const char *body_path;       /* "splice", "copy", "mmap", "framed", "none" */
	const char *encoding;        /* a precompressed sidecar's coding ("br"), else NULL */
	const char *site;            /* the [site NAME] it named; NULL: the top level's, or none */
	enum access_end end;
};

/* Where the lines go, shared by every worker: opened by the main thread at
 * start, before the workers exist, and closed after they are joined. */
struct access_log_file {
	int fd;                      /* -1: off */
	bool whole_writes;           /* a regular file: O_APPEND takes a batch at once */
	const char *path;            /* of a file, to reopen it; NULL for stdout, stderr */
};

/* path: a file (created, appended to, never through a link: file_create.h),
 * "stdout" or "stderr" (also spelled
 * /dev/stdout, /dev/stderr: the descriptor as it is, a pipe or a socket
 * included) or NULL (off); it must outlive f. 0 or -errno. */
int access_log_file_open(struct access_log_file *f, const char *path);
/* path if --access-log path names a file; NULL for off and the streams. */
const char *access_log_file_named(const char *path);
/* Opens the file again (SIGUSR1: logrotate renamed it) under the same fd
 * the workers write to, so they need not know: a batch goes wholly to the
 * old file or to the new one, and no line is lost or written twice. 0 (also
 * when there is no file to reopen) or -errno, the old file kept. */
int access_log_file_reopen(struct access_log_file *f);
/* The same with nfd, opened elsewhere (by the privileged helper, under
 * --user), in place of the reopen; nfd is closed. */
int access_log_file_replace(struct access_log_file *f, int nfd);
void access_log_file_close(struct access_log_file *f);

/* A worker's buffer of lines. */
struct access_log {
	int fd;                      /* the shared file's, -1: off */
	bool whole_writes;
	enum access_log_format format;
	time_t when_sec;             /* the second when[] was formatted for */
	char when[32];               /* "30/Nov/2026:06:12:00 +0000" or, for JSON,
				      * "2026-11-30T06:12:00+00:00" */
	size_t len;
	char buf[32768];
};

void access_log_init(struct access_log *al, const struct access_log_file *f,
		     enum access_log_format format);
/* The format of the lines from now on (a reload may change it). */
void access_log_set_format(struct access_log *al, enum access_log_format format);
/* Appends r's line (after writing the buffer out, if it lacks room). */
void access_log_write(struct access_log *al, const struct access_record *r);
/* Writes out the buffer: one write for a regular file; for a pipe or a
 * socket, whole lines in writes of at most PIPE_BUF bytes, which the kernel
 * keeps whole between workers. A full disk or a reader gone loses lines,
 * never requests. */
void access_log_flush(struct access_log *al);

/* Copies src[0, len) into dst for a quoted access-log field, escaped as
 * nginx does: '"', '\', bytes below 0x20 and from 0x7f up become "\xHH"
 * (upper-case hex), so a client cannot close the field, forge a field after
 * it or break the line. Writes at most cap - 1 bytes, never half an escape,
 * and always a NUL when cap > 0. Returns the length written (without the
 * NUL). */
size_t access_log_escape(char *dst, size_t cap, const char *src, size_t len);

#endif
