/* One process start, as its files share it: main.c starts and stops,
 * signals.c takes the signals and runs the loop that answers them,
 * reload.c loads a configuration again on SIGHUP. */
#ifndef KTLSD_SERVER_RUN_H
#define KTLSD_SERVER_RUN_H

#include <signal.h>

#include "server/core/access_log.h"
#include "server/conf/config.h"
#include "server/core/file_create.h"
#include "server/notify.h"
#include "server/privsep.h"

struct acme_client;
struct server;
struct status_listen;
struct worker;

/* What one process start set up and must undo at its exit. */
struct run {
	struct config cfg;                /* the start's: what is fixed until a restart */
	struct access_log_file access_log;
	struct file_id pid_file;          /* the pid file written (valid), for its removal */
	struct privsep helper;            /* with --user (fd -1 without) */
	struct notify notify;
	int argc;
	char **argv;
	struct acme_client *acme;         /* the ACME client's thread (NULL: no --acme on site) */
};

/* main.c: at exit, the pid file and the Unix sockets bound here go (by the
 * helper under --user: their folders may be root's), the sockets close. */
void run_remove_files(struct run *r);

/* signals.c: blocks the signals the main thread takes with sigwait, from
 * the first instruction on (the workers and the helper inherit the mask). */
void signals_take(sigset_t *sigs);

/* signals.c: the signal loop, until every worker has finished after
 * SIGTERM (SIGINT and SIGQUIT exit at once). *current is the running
 * server, whose reference the loop keeps: a reload's replaces it. */
void signals_serve(struct run *r, sigset_t *sigs, struct worker *workers, unsigned n,
		   struct status_listen *status, const struct server **current);

/* reload.c: SIGHUP's new configuration handed to the n workers, or NULL
 * after one logged reason (the running one stays). */
const struct server *reload_configuration(struct run *r, const struct server *cur,
					   struct worker *workers, unsigned n);
/* reload.c: the certificates read again for the running configuration
 * (the ACME client's SIGNAL_ACME_RELOAD), handed to the workers; or NULL
 * after one logged reason. */
const struct server *reload_certificates(struct run *r, const struct server *cur,
					  struct worker *workers, unsigned n);

/* The signal the ACME client's thread sends the main thread when it has
 * stored a certificate (server/acme/acme.h). */
#define SIGNAL_ACME_RELOAD (SIGRTMIN + 1)

#endif
