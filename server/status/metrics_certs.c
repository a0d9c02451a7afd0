/* The certificates' metrics: every site's expiry, and for --acme on sites
 * what the ACME client last did (cert_status.h), in the names
 * README's Metrics table gives them. Formatting only, like metrics.c. */
#include <stdio.h>
#include <time.h>

#include "server/core/stats.h"
#include "server/status/metrics.h"

/* A site's state in the client's words: placeholder (nothing issued yet),
 * expired, or valid. */
static const char *acme_state(const struct cert_status *s, time_t now)
{
	if (s->placeholder)
		return "placeholder";
	return s->not_after && s->not_after <= now ? "expired" : "valid";
}

static bool any_acme(const struct cert_status_all *c)
{
	for (unsigned i = 0; i < STAT_SITES; i++)
		if (c->sites[i].shown && c->sites[i].acme)
			return true;
	return false;
}

/* name{site="S"} value, for each site shown (acme_only: with --acme on). */
static void per_site(struct metrics_buf *b, const struct cert_status_all *c, const char *name,
		     bool acme_only, long long (*value)(const struct cert_status *))
{
	for (unsigned i = 0; i < STAT_SITES; i++) {
		const struct cert_status *s = &c->sites[i];
		if (!s->shown || (acme_only && !s->acme) || (!acme_only && !s->not_after))
			continue;
		metrics_printf(b, "%s{site=\"", name);
		metrics_label_value(b, stats_site_name(i));
		metrics_printf(b, "\"} %lld\n", value(s));
	}
}

static long long not_after(const struct cert_status *s)
{
	return (long long)s->not_after;
}
static long long renew_at(const struct cert_status *s)
{
	return (long long)s->renew_at;
}
static long long next_attempt(const struct cert_status *s)
{
	return (long long)s->next_attempt;
}
static long long failures(const struct cert_status *s)
{
	return (long long)s->failures;
}

void metrics_certs_prometheus(struct metrics_buf *b, const struct metrics_view *v)
{
	const struct cert_status_all *c = v->certs;
	time_t now = time(NULL);

	if (!c)
		return;
	metrics_family_head(b, "ktlsd_certificate_expiry_timestamp_seconds", "gauge",
			    "When the earliest certificate of each site ends (notAfter), in "
			    "seconds since the Unix epoch: alert on it.");
	per_site(b, c, "ktlsd_certificate_expiry_timestamp_seconds", false, not_after);
	if (!any_acme(c))
		return;
	metrics_family_head(b, "ktlsd_acme_certificate_state", "gauge",
			    "1 for each --acme on site's state: valid, placeholder (none issued "
			    "yet) or expired.");
	for (unsigned i = 0; i < STAT_SITES; i++) {
		const struct cert_status *s = &c->sites[i];
		if (!s->shown || !s->acme)
			continue;
		metrics_printf(b, "ktlsd_acme_certificate_state{site=\"");
		metrics_label_value(b, stats_site_name(i));
		metrics_printf(b, "\",state=\"%s\"} 1\n", acme_state(s, now));
	}
	metrics_family_head(b, "ktlsd_acme_renewal_timestamp_seconds", "gauge",
			    "When the ACME client renews the site's certificate (0: as soon as "
			    "it can, or not known).");
	per_site(b, c, "ktlsd_acme_renewal_timestamp_seconds", true, renew_at);
	metrics_family_head(b, "ktlsd_acme_next_attempt_timestamp_seconds", "gauge",
			    "After a failed order, when the next is made (0: not failing).");
	per_site(b, c, "ktlsd_acme_next_attempt_timestamp_seconds", true, next_attempt);
	metrics_family_head(b, "ktlsd_acme_failures", "gauge",
			    "The site's failed orders in a row (0 after an issued one).");
	per_site(b, c, "ktlsd_acme_failures", true, failures);
	metrics_family_head(b, "ktlsd_acme_orders_total", "counter",
			    "Orders the ACME client finished, by result.");
	metrics_printf(b, "ktlsd_acme_orders_total{result=\"issued\"} %llu\n",
		       (unsigned long long)c->orders_issued);
	metrics_printf(b, "ktlsd_acme_orders_total{result=\"failed\"} %llu\n",
		       (unsigned long long)c->orders_failed);
	metrics_family_head(b, "ktlsd_acme_challenges_total", "counter",
			    "The CA's validation requests the workers answered, by type.");
	metrics_printf(b, "ktlsd_acme_challenges_total{type=\"http-01\"} %llu\n",
		       (unsigned long long)v->acme_http01);
	metrics_printf(b, "ktlsd_acme_challenges_total{type=\"tls-alpn-01\"} %llu\n",
		       (unsigned long long)v->acme_alpn01);
}

void metrics_certs_json(struct metrics_buf *b, const struct metrics_view *v)
{
	const struct cert_status_all *c = v->certs;
	time_t now = time(NULL);
	bool first = true;

	if (!c)
		return;
	metrics_printf(b, ",\"certificates\":{");
	for (unsigned i = 0; i < STAT_SITES; i++) {
		const struct cert_status *s = &c->sites[i];
		if (!s->shown)
			continue;
		metrics_printf(b, "%s", first ? "" : ",");
		first = false;
		metrics_json_string(b, stats_site_name(i));
		metrics_printf(b, ":{\"not_after\":%lld", (long long)s->not_after);
		if (s->acme) {
			metrics_printf(b,
				       ",\"acme\":{\"state\":\"%s\",\"renew_at\":%lld,"
				       "\"next_attempt\":%lld,\"failures\":%u,\"last_error\":",
				       acme_state(s, now), (long long)s->renew_at,
				       (long long)s->next_attempt, s->failures);
			metrics_json_string(b, s->last_error);
			metrics_printf(b, "}");
		}
		metrics_printf(b, "}");
	}
	metrics_printf(b, "},\"acme_orders\":{\"issued\":%llu,\"failed\":%llu}",
		       (unsigned long long)c->orders_issued, (unsigned long long)c->orders_failed);
}
