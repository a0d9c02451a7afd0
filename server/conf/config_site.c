/* The sites once every source is read: what a [site] section takes from
 * the top level, the checks a site must pass, and how the others find and
 * name them. */
#include <stdlib.h>
#include <string.h>

#include "server/conf/config-int.h"
#include "server/conf/config.h"
#include "server/conf/config_value.h"

/* Gives site what it did not set itself of the top level's options, copies
 * it owns: all but its server names, and the certificates as one list. */
void config_site_inherit(struct config_site *site, const struct config_site *top)
{
	bool certs_set = false;

	for (size_t i = 0; i < config_noptions; i++) {
		const struct opt *o = &config_options[i];

		if (o->type == T_CERT)
			certs_set = certs_set || site->set[i];
		if (!o->site || site->set[i] || o->type == T_NAME || o->type == T_CERT)
			continue;
		if (config_is_string(o->type)) {
			const char *v = *FIELD(top, o->off, char *const);
			config_set_string(site, o->off, v ? config_value_strdup(v) : NULL);
		} else if (config_is_list(o->type)) {
			size_t n = *FIELD(top, o->count_off, const size_t);
			char **to = FIELD(site, o->off, char *);
			char *const *from = FIELD(top, o->off, char *const);

			for (size_t j = 0; j < n; j++)
				to[j] = config_value_strdup(from[j]);
			*FIELD(site, o->count_off, size_t) = n;
		} else {
			/* Scalars: every one is an int-sized or bool field. */
			size_t size = o->type == T_BOOL ? sizeof(bool) : sizeof(unsigned);
			memcpy(FIELD(site, o->off, char), FIELD(top, o->off, const char), size);
		}
	}
	if (certs_set)
		return;
	for (size_t i = 0; i < top->ncerts; i++) {
		const struct config_cert *from = &top->certs[i];
		site->certs[i].cert_file = from->cert_file ? config_value_strdup(from->cert_file) : NULL;
		site->certs[i].key_file = from->key_file ? config_value_strdup(from->key_file) : NULL;
	}
	site->ncerts = top->ncerts;
}

size_t config_served_sites(const struct config *cfg, const struct config_site **all)
{
	size_t n = 0;

	if (cfg->site.root)
		all[n++] = &cfg->site;
	for (size_t i = 0; i < cfg->nsites; i++)
		all[n++] = &cfg->sites[i];
	return n;
}

/* "--root", or "[site NAME] root", for messages. */
const char *config_site_label(const struct config_site *site, const char *opt, char *buf,
			      size_t len)
{
	if (site->name)
		snprintf(buf, len, "[site %s] %s", site->name, opt);
	else
		snprintf(buf, len, "--%s", opt);
	return buf;
}

int config_site_check(const struct config_site *site, FILE *errfp)
{
	size_t ncert = config_cert_count(site, CERT_OFF(cert_file));
	size_t nkey = config_cert_count(site, CERT_OFF(key_file));
	char what[96];

	if (!site->root && site->name) {
		fprintf(errfp, "ktlsd: [site %s] has no root\n", site->name);
		return -1;
	}
	if (ncert != nkey && site->name) {
		fprintf(errfp, "ktlsd: %s and key must come in pairs, got %zu cert and %zu key\n",
			config_site_label(site, "cert", what, sizeof(what)), ncert, nkey);
		return -1;
	}
	if (ncert != nkey) {
		fprintf(errfp,
			"ktlsd: --cert and --key must come in pairs, got %zu --cert and %zu --key\n",
			ncert, nkey);
		return -1;
	}
	return 0;
}

/* A name two sites claim would make the answer depend on their order. */
int config_sites_check_names(const struct config *cfg, FILE *errfp)
{
	const struct config_site *all[CONFIG_MAX_SITES + 1];
	size_t n = 0;

	if (cfg->site.root || cfg->site.nserver_names)
		all[n++] = &cfg->site;
	for (size_t i = 0; i < cfg->nsites; i++)
		all[n++] = &cfg->sites[i];
	for (size_t a = 0; a < n; a++)
		for (size_t i = 0; i < all[a]->nserver_names; i++)
			for (size_t b = a; b < n; b++)
				for (size_t j = b == a ? i + 1 : 0; j < all[b]->nserver_names; j++)
					if (strcmp(all[a]->server_names[i], all[b]->server_names[j]) ==
					    0) {
						char what[96];
						fprintf(errfp, "ktlsd: server-name %s is given twice (%s)\n",
							all[a]->server_names[i],
							config_site_label(all[b], "server-name", what,
								   sizeof(what)));
						return -1;
					}
	return 0;
}
