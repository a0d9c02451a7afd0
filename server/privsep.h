/* The privileged helper: with --user, the one process that stays root
 * after start, and the one thing it does not do is serve clients.
 *
 * ktlsd forks it once everything a start opens is open, just before the
 * server drops root (privs.h); the server is its parent, the process the
 * pid file, systemd's $MAINPID and the signals name. Its memory is not the
 * server's (a worker bug can neither read nor write it), it never reads a
 * byte from a client, and it answers three requests over a socketpair,
 * none of which carries a path, so a compromised server can have it read
 * nothing but what the configuration names:
 *
 *   reload:      load the configuration again, as the server was started
 *                (its own copy of argv), and send back the files it names
 *                (conf_files.h): the server builds from those bytes;
 *   reopen logs: open the error and access logs the start opened (their
 *                paths are fixed until a restart) and send back the fds,
 *                made as file_create.h says, so logrotate's renamed files
 *                are replaced whoever owns the folder;
 *   clean up:    at exit, remove the pid file and the Unix sockets the
 *                start made, if they are still those files.
 *
 * It keeps CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH and nothing else,
 * no_new_privs, not dumpable, the system call filter; it ignores every
 * signal a service manager or a terminal sends (the server exits, and it
 * follows: end of its socket, or PR_SET_PDEATHSIG). ps shows it as
 * "ktlsd: privileged helper". */
#ifndef KTLSD_SERVER_PRIVSEP_H
#define KTLSD_SERVER_PRIVSEP_H

#include <stdbool.h>
#include <sys/types.h>

#include "server/conf/config-t.h"
#include "server/core/file_create.h"

struct conf_files;

/* The server's end. */
struct privsep {
	int fd;                  /* -1: no helper (no --user): the server does it all */
	pid_t pid;
	unsigned seq;            /* of the last request: a late answer is told apart */
};

/* What the helper is given at fork, all of it from the start, before any
 * client byte was read. */
struct privsep_duties {
	const struct config *cfg;        /* the start's: log paths, Unix sockets */
	const struct file_id *pid_file;  /* the pid file written (cfg->pid_file), or NULL */
	int argc;
	char **argv;                     /* main's: loaded again on reload */
};

/* Starts the helper (before privs_drop, with no thread yet). 0, or -errno
 * after logging why. */
int privsep_start(struct privsep *ps, const struct privsep_duties *d);

/* Reload: cf (empty) receives the files the configuration names as the
 * helper read them. 0, or -errno (the helper gone, or no answer within
 * PRIVSEP_TIMEOUT_S): cf is then empty. */
int privsep_reload(struct privsep *ps, struct conf_files *cf);

/* Reopen logs: *error_fd and *access_fd are new fds (-1: that log is not
 * a file, or could not be opened: *error_rc, *access_rc say why, 0 or
 * -errno). 0, or -errno when the helper did not answer. */
int privsep_reopen_logs(struct privsep *ps, int *error_fd, int *access_fd, int *error_rc,
			int *access_rc);

/* Exit: the pid file and the Unix sockets removed; waits for that. */
void privsep_clean_up(struct privsep *ps);

/* Closes the socket (the helper exits) and reaps it if it is gone. */
void privsep_close(struct privsep *ps);

/* Reads into cf (recording) every file cfg names that a build reads
 * (server.h): what the helper sends for a reload. A file that cannot be
 * read is kept with its error, which the build then reports as it would
 * from disk. */
void privsep_gather(struct conf_files *cf, const struct config *cfg);

/* How long the server waits for an answer before it gives up on one. */
#define PRIVSEP_TIMEOUT_S 60

#endif
