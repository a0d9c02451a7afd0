/* The certificates' table for the metrics (cert_status.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/core/cert_status.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct cert_status_all all;

void cert_status_begin(void)
{
	pthread_mutex_lock(&mu);
	for (unsigned i = 0; i < STAT_SITES; i++)
		all.sites[i].shown = false;
	pthread_mutex_unlock(&mu);
}

void cert_status_site(unsigned slot, time_t not_after, bool acme, bool placeholder)
{
	if (slot >= STAT_SITES)
		return;
	pthread_mutex_lock(&mu);
	struct cert_status *s = &all.sites[slot];
	s->shown = true;
	s->not_after = not_after;
	s->placeholder = placeholder;
	if (s->acme != acme) { /* what the client said was of another life */
		s->renew_at = s->next_attempt = 0;
		s->failures = 0;
		s->last_error[0] = '\0';
	}
	s->acme = acme;
	pthread_mutex_unlock(&mu);
}

void cert_status_acme(unsigned slot, time_t renew_at, time_t next_attempt, unsigned failures,
		      const char *error)
{
	if (slot >= STAT_SITES)
		return;
	pthread_mutex_lock(&mu);
	struct cert_status *s = &all.sites[slot];
	s->renew_at = renew_at;
	s->next_attempt = next_attempt;
	s->failures = failures;
	snprintf(s->last_error, sizeof(s->last_error), "%s", error ? error : "");
	pthread_mutex_unlock(&mu);
}

void cert_status_order(bool issued)
{
	pthread_mutex_lock(&mu);
	if (issued)
		all.orders_issued++;
	else
		all.orders_failed++;
	pthread_mutex_unlock(&mu);
}

void cert_status_read(struct cert_status_all *out)
{
	pthread_mutex_lock(&mu);
	*out = all;
	pthread_mutex_unlock(&mu);
}
