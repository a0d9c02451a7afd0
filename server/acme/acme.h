/* The ACME client: one thread ("ktlsd-acme"), never a worker, that keeps
 * each --acme on site's certificate issued and renewed (README, "Certificates").
 *
 * It runs as the service user with no capability, in --acme-dir, which
 * acme_store_prepare made for it at start. It sleeps until a site is due
 * (no certificate, names or CA changed, 2/3 of the lifetime gone, or the
 * backoff after a failure over), orders one site at a time, stores the
 * bundle (acme_store.h), and then asks the main thread for a certificate
 * reload (SIGNAL_ACME_RELOAD, run.h): new connections get the new
 * certificate, those in flight finish with theirs. The CA being down or a
 * challenge failing never stops serving: the old certificate or the
 * placeholder stays, and the next attempt waits 1 min, 10 min, 1 h, then
 * 6 h (proto/acme.h's acme_backoff). */
#ifndef KTLSD_SERVER_ACME_H
#define KTLSD_SERVER_ACME_H

#include <pthread.h>
#include <stdbool.h>

#include "server/conf/config-t.h"

struct acme_client;

/* Whether cfg has any site with --acme on. */
bool acme_wanted(const struct config *cfg);

/* Starts the thread for cfg's --acme on sites (after the privileges are
 * dropped); it signals notify (the main thread) with sig after storing a
 * certificate. cfg is copied. 0, or -errno after the logged reason. */
int acme_start(struct acme_client **out, const struct config *cfg, pthread_t notify, int sig);

/* SIGHUP: the sites and names of the new configuration, the failed ones
 * tried again at once (a fix should not wait 6 h). */
void acme_reconfigure(struct acme_client *a, const struct config *cfg);

/* Stops the thread, waiting at most for the request in flight (its
 * timeout), and frees it. NULL: nothing. */
void acme_stop(struct acme_client *a);

#endif
