#include "server/conf/site_certs.h"

#include <stdio.h>
#include <string.h>

#include "ktls/tls_cert_facts.h"
#include "server/conf/config.h"
#include "server/conf/site.h"
#include "server/core/log.h"

#define DAY_S 86400

static void when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm))
		snprintf(buf, len, "?");
}

/* Whether an earlier site (sections take the top level's files) or an
 * earlier pair of this one named the same file: one line per file. */
static bool seen_before(const struct site *sites, size_t si, size_t ci)
{
	const char *file = sites[si].certs[ci].cert_file;

	for (size_t i = 0; i <= si; i++)
		for (size_t j = 0; j < (i < si ? sites[i].ncerts : ci); j++)
			if (strcmp(sites[i].certs[j].cert_file, file) == 0)
				return true;
	return false;
}

static unsigned check_expiry(const struct site *sites, size_t si, time_t now, bool strict)
{
	const struct site *s = &sites[si];
	unsigned errors = 0;
	char what[96], end[40];

	config_site_label(s->cfg, "cert", what, sizeof(what));
	for (size_t i = 0; i < s->ncerts; i++) {
		const struct tls_cert_pair *p = &s->certs[i];
		time_t t;

		if (seen_before(sites, si, i) || tls_cert_not_after(p, &t) < 0)
			continue; /* tls_pem_use refused it already */
		when(t, end, sizeof(end));
		if (t <= now) {
			log_msg(strict ? LOG_ERROR : LOG_WARN,
				"%s %s: expired on %s (%lld days ago): clients refuse it", what,
				p->cert_file, end, (long long)((now - t) / DAY_S));
			errors += strict;
		} else if (t - now < (time_t)SITE_CERTS_WARN_DAYS * DAY_S && !s->cfg->acme) {
			/* (An --acme on site's is renewed before then by the
			 * client, which says so when it cannot.) */
			log_msg(LOG_WARN, "%s %s: expires on %s, in %lld days", what, p->cert_file,
				end, (long long)((t - now) / DAY_S));
		}
	}
	return errors;
}

static unsigned check_names(const struct site *s, bool strict)
{
	const struct config_site *cfg = s->cfg;
	unsigned errors = 0;
	char what[96];

	if (s->ncerts == 0)
		return 0;
	config_site_label(cfg, "server-name", what, sizeof(what));
	for (size_t j = 0; j < cfg->nserver_names; j++) {
		const char *name = cfg->server_names[j];
		bool covered = false;

		for (size_t i = 0; i < s->ncerts && !covered; i++)
			covered = tls_cert_covers(&s->certs[i], name);
		if (covered)
			continue;
		log_msg(strict ? LOG_ERROR : LOG_WARN,
			"%s %s: no certificate of the site covers it (%s%s): clients asking "
			"for it refuse the connection",
			what, name, s->certs[0].cert_file, s->ncerts > 1 ? " and the others" : "");
		errors += strict;
	}
	return errors;
}

unsigned site_certs_check(const struct site *sites, size_t n, time_t now, bool strict)
{
	unsigned errors = 0;

	/* A placeholder's dates and names say nothing: the ACME client
	 * replaces it (site_build said so already). */
	for (size_t i = 0; i < n; i++)
		if (!sites[i].acme_placeholder)
			errors += check_expiry(sites, i, now, strict) + check_names(&sites[i], strict);
	return errors;
}

size_t site_certs_count(const struct site *sites, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sites[i].ncerts; j++)
			count += !seen_before(sites, i, j);
	return count;
}
