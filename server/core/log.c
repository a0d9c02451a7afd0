#include "server/core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/core/file_create.h"

static int error_fd = 2;
static const char *error_path; /* NULL: stderr */
/* Set at start and by SIGHUP (main thread), read by every worker: atomic,
 * so a reload may change it while workers log. */
static atomic_int error_level = LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

const char *log_file_named(const char *path)
{
	return !path || strcmp(path, "stderr") == 0 || strcmp(path, "/dev/stderr") == 0 ? NULL
											  : path;
}

int log_open(const char *path, int level)
{
	log_set_level(level);
	if (!log_file_named(path)) {
		error_fd = 2;
		return 0;
	}
	int fd = file_create_log(path, NULL);
	if (fd < 0)
		return fd;
	error_fd = fd;
	error_path = path;
	return 0;
}

int log_file_replace(int fd, int nfd)
{
	int rc = 0;

	/* dup3 swaps the file under the same number at once: a write in
	 * another thread goes wholly to the old file or to the new. */
	if (dup3(nfd, fd, O_CLOEXEC) < 0)
		rc = -errno;
	close(nfd);
	return rc;
}

int log_file_reopen_onto(const char *path, int fd)
{
	int nfd = file_create_log(path, NULL);

	return nfd < 0 ? nfd : log_file_replace(fd, nfd);
}

int log_reopen(void)
{
	return error_path ? log_file_reopen_onto(error_path, error_fd) : 0;
}

int log_replace(int nfd)
{
	if (!error_path) {
		close(nfd);
		return 0;
	}
	return log_file_replace(error_fd, nfd);
}

int log_fd(void)
{
	return error_fd;
}

void log_set_level(int level)
{
	atomic_store_explicit(&error_level, level, memory_order_relaxed);
}

int log_level(void)
{
	return atomic_load_explicit(&error_level, memory_order_relaxed);
}

static size_t timestamp(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	return strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void log_msg(int level, const char *fmt, ...)
{
	char line[1024];
	size_t len;
	va_list ap;

	if (level > log_level())
		return;
	len = timestamp(line, sizeof(line));
	len += (size_t)snprintf(line + len, sizeof(line) - len, " [%s] ", level_names[level]);
	va_start(ap, fmt);
	int n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	len = n < 0 ? len : len + (size_t)n;
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* One write per line: lines from different workers never interleave. */
	ssize_t w = write(error_fd, line, len);
	(void)w;
}
