/* The sites with --acme on, once every source is read: their certificate
 * becomes the bundle the ACME client keeps in --acme-dir (one file, the key
 * then the chain, so that one rename replaces the pair), and what would make
 * an order fail at the CA is refused here, at load, where an operator sees
 * it: a site with its own cert, no exact name to ask for, a challenge
 * nothing could answer. */
#include <stdlib.h>
#include <string.h>

#include "proto/acme.h"
#include "server/conf/config-int.h"
#include "server/conf/config.h"
#include "server/conf/config_value.h"

size_t config_acme_names(const struct config_site *site, const char **out)
{
	size_t n = 0;

	for (size_t i = 0; i < site->nserver_names; i++)
		if (site->server_names[i][0] != '*')
			out[n++] = site->server_names[i];
	return n;
}

int config_acme_site_dir(const struct config *cfg, const struct config_site *site, char *buf,
			 size_t len)
{
	int n = snprintf(buf, len, "%s/sites/%s", cfg->acme_dir, site->name ? site->name : "_top");
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Whether the section gave a cert or key line itself (what it inherits
 * from the top level is not its own). */
static bool own_certs(const struct config_site *site)
{
	if (!site->name)
		return site->ncerts > 0;
	for (size_t i = 0; i < config_noptions; i++)
		if (config_options[i].type == T_CERT && site->set[i])
			return true;
	return false;
}

static int complete_site(const struct config *cfg, struct config_site *site, FILE *errfp)
{
	const char *names[CONFIG_MAX_SERVER_NAMES];
	char what[96], path[4096];

	config_site_label(site, "acme", what, sizeof(what));
	if (own_certs(site)) {
		fprintf(errfp, "ktlsd: %s on: the site names its own cert and key; the ACME "
			       "client keeps the site's certificate itself (drop one of them)\n",
			what);
		return -1;
	}
	if (config_acme_names(site, names) == 0) {
		fprintf(errfp, "ktlsd: %s on: no exact server-name to ask a certificate for "
			       "(wildcards need DNS-01, which ktlsd does not do)\n",
			what);
		return -1;
	}
	if (config_acme_site_dir(cfg, site, path, sizeof(path)) < 0 ||
	    strlen(path) + sizeof("/bundle.pem") > sizeof(path)) {
		fprintf(errfp, "ktlsd: --acme-dir %s: too long\n", cfg->acme_dir);
		return -1;
	}
	strcat(path, "/bundle.pem");
	for (size_t i = 0; i < site->ncerts; i++) {
		free(site->certs[i].cert_file);
		free(site->certs[i].key_file);
		site->certs[i] = (struct config_cert){0};
	}
	site->certs[0].cert_file = config_value_strdup(path);
	site->certs[0].key_file = config_value_strdup(path);
	site->ncerts = 1;
	site->acme_dir = cfg->acme_dir;
	return 0;
}

int config_acme_complete(struct config *cfg, FILE *errfp)
{
	const struct config_site *served[CONFIG_MAX_SITES + 1];
	size_t n = config_served_sites(cfg, served), nacme = 0;

	for (size_t i = 0; i < n; i++)
		nacme += served[i]->acme;
	if (nacme == 0)
		return 0;
	if (strncmp(cfg->acme_ca, "https://", 8) != 0) {
		fprintf(errfp, "ktlsd: --acme-ca %s: an ACME directory is an https:// URL\n",
			cfg->acme_ca);
		return -1;
	}
	if (!cfg->acme_dir || cfg->acme_dir[0] != '/') {
		fprintf(errfp, "ktlsd: --acme-dir %s: an absolute path, please\n",
			cfg->acme_dir ? cfg->acme_dir : "");
		return -1;
	}
	if (cfg->nlisten == 0) {
		fputs("ktlsd: --acme on: no TLS listener (--listen) to serve the certificate on\n",
		      errfp);
		return -1;
	}
	if (cfg->acme_challenge == CONFIG_ACME_HTTP01 && cfg->nlisten_plain == 0) {
		fputs("ktlsd: --acme-challenge http-01: no --listen-plain for the CA to ask "
		      "(port 80)\n",
		      errfp);
		return -1;
	}
	if (cfg->acme_eab) {
		const char *sp = strchr(cfg->acme_eab, ' ');
		if (!sp || sp == cfg->acme_eab || !sp[1] || strchr(sp + 1, ' ')) {
			fprintf(errfp, "ktlsd: --acme-eab \"%s\": \"KID FILE\", the CA's key id and "
				       "the file of its MAC key\n",
				cfg->acme_eab);
			return -1;
		}
	}
	if (cfg->acme_profile && !acme_profile_ok(cfg->acme_profile)) {
		fprintf(errfp, "ktlsd: --acme-profile %s: a profile's name is letters, digits, "
			       "'-', '_' and '.', at most %d\n",
			cfg->acme_profile, ACME_PROFILE_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (served[i]->acme && complete_site(cfg, (struct config_site *)served[i], errfp))
			return -1;
	return 0;
}
