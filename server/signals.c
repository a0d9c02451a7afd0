/* The signals the main thread takes (with sigwait, the workers never see
 * them) and the loop that answers them: SIGTERM drains and stops, SIGINT
 * and SIGQUIT exit at once, SIGHUP reloads, SIGUSR1 reopens the logs, the
 * rest is logged and ignored. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/core/access_log.h"
#include "server/core/file_create.h"
#include "server/core/log.h"
#include "server/acme/acme.h"
#include "server/core/page_guard.h"
#include "server/notify.h"
#include "server/privsep.h"
#include "server/run.h"
#include "server/conf/server.h"
#include "server/status/status_listen.h"
#include "server/worker.h"

/* Signals an operator may send by habit, meant for other servers (nginx's
 * SIGUSR2 and SIGWINCH) or for nothing, that would end the process by
 * default: each is logged and ignored. */
static const int ignored_signals[] = {SIGUSR2, SIGWINCH, SIGALRM, SIGIO,
				      SIGPWR,  SIGVTALRM, SIGPROF, SIGSTKFLT};

/* The logs opened again: by the privileged helper under --user (the
 * server can no longer make a file in a folder of root's, nor should it
 * open one as root), else by the server. 0 or -errno for each. */
static void reopen_files(struct run *r, int *rc_err, int *rc_acc)
{
	int efd, afd, rc;

	if (r->helper.fd < 0) {
		*rc_err = log_reopen();
		*rc_acc = access_log_file_reopen(&r->access_log);
		return;
	}
	rc = privsep_reopen_logs(&r->helper, &efd, &afd, rc_err, rc_acc);
	if (rc < 0) {
		*rc_err = log_file_named(r->cfg.error_log) ? rc : 0;
		*rc_acc = access_log_file_named(r->cfg.access_log) ? rc : 0;
		return;
	}
	if (efd >= 0)
		*rc_err = log_replace(efd);
	if (afd >= 0)
		*rc_acc = access_log_file_replace(&r->access_log, afd);
}

/* SIGUSR1 (and SIGHUP): logrotate renamed the logs; open them again. A log
 * that cannot be reopened stays on its old file. */
static void reopen_logs(struct run *r, int sig)
{
	int rc_err, rc_acc;

	reopen_files(r, &rc_err, &rc_acc);
	if (rc_err < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the error log: %s; it stays on the old file",
			sigabbrev_np(sig), file_create_error(rc_err));
	if (rc_acc < 0)
		log_msg(LOG_ERROR, "SIG%s: reopening the access log: %s; it stays on the old file",
			sigabbrev_np(sig), file_create_error(rc_acc));
	if (sig == SIGUSR1 && rc_err == 0 && rc_acc == 0)
		log_msg(LOG_INFO, "SIGUSR1: logs reopened");
}

/* Signals are taken by the main thread alone, with sigwait; the workers,
 * started later, inherit the mask and never see them (nor does the
 * privileged helper, forked with it). Blocked from the first instruction
 * on: a SIGUSR1 during start-up waits for sigwait instead of killing the
 * process. A closed client must not kill us with SIGPIPE, nor a log over
 * RLIMIT_FSIZE with SIGXFSZ (the write fails instead), nor a file that
 * shrank under the sealer's read of its pages with SIGBUS (page_guard.h). */
void signals_take(sigset_t *sigs)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	page_guard_install();
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGQUIT);
	sigaddset(sigs, SIGHUP);
	sigaddset(sigs, SIGUSR1);
	sigaddset(sigs, SIGNAL_ACME_RELOAD);
	for (size_t i = 0; i < sizeof(ignored_signals) / sizeof(ignored_signals[0]); i++)
		sigaddset(sigs, ignored_signals[i]);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool all_finished(struct worker *workers, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!worker_finished(&workers[i]))
			return false;
	return true;
}

/* SIGINT, SIGQUIT: exit at once, but with the access log complete: each
 * worker logs the responses it cuts and writes its lines out first. */
static _Noreturn void quit_now(struct worker *workers, unsigned n, struct run *r, int sig)
{
	struct timespec deadline;

	log_msg(LOG_INFO, "SIG%s: exiting now", sigabbrev_np(sig));
	for (unsigned i = 0; i < n; i++)
		worker_request_quit(&workers[i]);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WORKER_QUIT_WAIT_S;
	for (unsigned i = 0; i < n; i++)
		if (!worker_wait_until(&workers[i], &deadline))
			log_msg(LOG_WARN, "worker %u did not stop within %d s", i,
				WORKER_QUIT_WAIT_S);
	run_remove_files(r);
	privsep_close(&r->helper);
	_exit(0);
}

/* The signal loop: until every worker has finished after SIGTERM (or
 * SIGINT, SIGQUIT exit at once). *current is the running server, whose
 * reference the loop keeps: a reload's replaces it. */
void signals_serve(struct run *r, sigset_t *sigs, struct worker *workers, unsigned n,
		   struct status_listen *status, const struct server **current)
{
	uint64_t drain_until = 0; /* SIGTERM with --drain-delay: stop then */
	int sig;

	for (bool stopping = false; !stopping || !all_finished(workers, n);) {
		/* While the workers drain, look at them ten times a second;
		 * while the node drains (--drain-delay), wait for its end. */
		struct timespec wait = {0, 100 * 1000 * 1000};
		uint64_t now = monotonic_ms();
		const struct config *cfg = (*current)->cfg;
		if (drain_until && !stopping && now < drain_until)
			wait = (struct timespec){(time_t)((drain_until - now) / 1000),
						 (long)((drain_until - now) % 1000) * 1000000};
		if (stopping || drain_until)
			sig = sigtimedwait(sigs, NULL, &wait);
		else if (sigwait(sigs, &sig) != 0)
			sig = -1;
		if (drain_until && !stopping && sig == -1 && monotonic_ms() >= drain_until)
			sig = SIGTERM; /* the drain is over: stop now (a second SIGTERM cuts it short) */
		if (sig == SIGNAL_ACME_RELOAD) {
			const struct server *next =
			    stopping ? NULL : reload_certificates(r, *current, workers, n);
			if (next) {
				server_put(*current);
				*current = next;
			}
			continue;
		}
		switch (sig) {
		case -1:
			break;
		case SIGINT:
		case SIGQUIT:
			quit_now(workers, n, r, sig);
		case SIGTERM:
			if (stopping)
				break;
			if (!drain_until) {
				status_listen_drain(status);
				notify_send(&r->notify, "STOPPING=1\nSTATUS=finishing responses in flight");
				if (cfg->drain_delay_ms) {
					/* A load balancer's health check sees 503
					 * and drains this node while it serves. */
					log_msg(LOG_INFO, "SIGTERM: /healthz answers 503; serving %u ms "
							  "more before the listeners close",
						cfg->drain_delay_ms);
					drain_until = monotonic_ms() + cfg->drain_delay_ms;
					break;
				}
			}
			log_msg(LOG_INFO, "SIGTERM: finishing responses in flight (grace %u ms)",
				cfg->shutdown_grace_ms);
			for (unsigned i = 0; i < n; i++)
				worker_request_stop(&workers[i]);
			stopping = true;
			break;
		case SIGUSR1:
			reopen_logs(r, sig);
			break;
		case SIGHUP: {
			reopen_logs(r, sig);
			if (stopping) {
				log_msg(LOG_INFO, "SIGHUP: stopping; the configuration is not reloaded");
				break;
			}
			notify_reloading(&r->notify);
			const struct server *next = reload_configuration(r, *current, workers, n);
			if (next) {
				server_put(*current);
				*current = next;
				if (r->acme)
					acme_reconfigure(r->acme, next->cfg);
				else if (acme_wanted(next->cfg))
					acme_start(&r->acme, next->cfg, pthread_self(),
						   SIGNAL_ACME_RELOAD);
			}
			char what[PATH_MAX + 64];
			notify_send(&r->notify, "READY=1\nSTATUS=serving %s with %u workers; %s",
				    server_serving_text(*current, what, sizeof(what)), n,
				    next ? "configuration reloaded" : "reload refused (see the log)");
			break;
		}
		default:
			log_msg(LOG_WARN, "SIG%s ignored (SIGHUP reloads, SIGUSR1 reopens the logs, "
					  "SIGTERM stops)",
				sigabbrev_np(sig));
			break;
		}
	}
}
