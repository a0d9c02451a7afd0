/* The error log: levels, one line per event (the access log is access_log.h). */
#ifndef KTLSD_SERVER_LOG_H
#define KTLSD_SERVER_LOG_H

#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Opens the error log ("stderr", "/dev/stderr" or a file, made as
 * file_create.h says: never through a link). Set once at start, before the
 * workers exist; path must stay valid for the life of the process. 0 or
 * -errno (file_create_error says it in words). */
int log_open(const char *path, int level);
/* path if --error-log path names a file, NULL for stderr. */
const char *log_file_named(const char *path);
/* Opens the error log's file again (SIGUSR1: logrotate renamed it) in the
 * place of the old one, which workers may be writing to meanwhile: each of
 * their lines goes whole to one file or the other. 0 (also for stderr, which
 * is not reopened) or -errno, the old file kept. */
int log_reopen(void);

/* The error log's file replaced by nfd, opened elsewhere (by the
 * privileged helper, under --user): as log_reopen, and nfd is closed. */
int log_replace(int nfd);
/* The error log's fd, for the privileged helper, which keeps it. */
int log_fd(void);

/* Opens path again (file_create_log) onto fd, the number the writers use:
 * 0 or -errno (fd keeps the old file then). */
int log_file_reopen_onto(const char *path, int fd);
/* Puts nfd's file under fd at once and closes nfd: 0 or -errno. */
int log_file_replace(int fd, int nfd);
/* The least severe level logged: set at start and on SIGHUP, safe to change
 * while workers log. */
void log_set_level(int level);
int log_level(void);

__attribute__((format(printf, 2, 3))) void log_msg(int level, const char *fmt, ...);

#endif
