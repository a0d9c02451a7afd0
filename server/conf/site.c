#include "server/conf/site.h"

#include "server/conf/conf_files.h"
#include "server/conf/config.h"
#include "server/conf/file_read.h"
#include "ktls/tls.h"
#include "server/core/stats.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(CONFIG_MAX_HEADERS <= RESP_EXTRA_MAX, "a site's fields must fit a response");
_Static_assert(CONFIG_MAX_CERTS <= TLS_SITE_MAX_CERTS, "a site's certificates must fit its context");

/* config.c stored each field as "Name: value"; HTTP/2 wants the name in
 * lowercase (RFC 9113 8.2.1), HTTP/1.1 gets it as written. */
static int build_extras(struct site *s)
{
	const struct config_site *cfg = s->cfg;
	size_t names = 0;

	for (size_t i = 0; i < cfg->nheaders; i++)
		names += strcspn(cfg->headers[i], ":") + 1;
	if (cfg->nheaders && !(s->extra_names = malloc(names)))
		return -ENOMEM;
	char *p = s->extra_names;
	for (size_t i = 0; i < cfg->nheaders; i++) {
		const char *h = cfg->headers[i];
		size_t n = strcspn(h, ":");
		struct resp_extra *x = &s->extra[i];

		for (size_t j = 0; j < n; j++)
			p[j] = (char)tolower((unsigned char)h[j]);
		p[n] = '\0';
		*x = (struct resp_extra){.name_h1 = h, .name_h2 = p, .name_len = n,
					 .value = h + n + 2, .value_len = strlen(h + n + 2)};
		s->extras.h1_bytes += n + 2 + x->value_len + 2;
		p += n + 1;
	}
	s->extras.f = s->extra;
	s->extras.n = cfg->nheaders;
	return 0;
}

static int build_mime(struct site *s, const char *mime_text, size_t mime_len, char *err,
		      size_t errlen)
{
	const struct config_site *cfg = s->cfg;

	if (cfg->nmime_overrides == 0)
		return 0;
	if (mime_table_load(&s->mime, mime_text, mime_len) < 0)
		goto nomem;
	for (size_t i = 0; i < cfg->nmime_overrides; i++) {
		char ext[80];
		const char *o = cfg->mime_overrides[i];
		size_t n = strcspn(o, " ");

		snprintf(ext, sizeof(ext), "%.*s", (int)n, o);
		int rc = mime_table_override(s->mime, ext, o + n + 1);
		if (rc == -ENOMEM)
			goto nomem;
		if (rc < 0) {
			char what[96];
			config_site_label(cfg, "mime-type", what, sizeof(what));
			snprintf(err, errlen, "%s %s: the extension is too long", what, o);
			return rc;
		}
	}
	s->types = s->mime;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory loading MIME types");
	return -ENOMEM;
}

/* One certificate pair's files into p: 0, or -EINVAL with a one-line
 * reason naming the file ("key /etc/k.pem: Permission denied"). */
static int read_pair(struct tls_cert_pair *p, struct conf_files *cf, char *err, size_t errlen)
{
	int rc = conf_files_read(cf, p->cert_file, &p->cert_pem, &p->cert_len);

	if (rc < 0) {
		snprintf(err, errlen, "cert %s: %s", p->cert_file, file_read_error(rc));
		return -EINVAL;
	}
	rc = conf_files_read(cf, p->key_file, &p->key_pem, &p->key_len);
	if (rc < 0) {
		snprintf(err, errlen, "key %s: %s", p->key_file, file_read_error(rc));
		tls_pem_release(p);
		return -EINVAL;
	}
	return 0;
}

int site_build(struct site *s, const struct config_site *cfg, const struct mime_table *types,
	       const char *mime_text, size_t mime_len, struct conf_files *cf, char *err,
	       size_t errlen)
{
	char what[96];
	struct stat st;
	int rc;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->types = types;
	s->root.fd = conf_files_open_dir(cf, cfg->root);
	if (s->root.fd < 0) {
		rc = s->root.fd;
		config_site_label(cfg, "root", what, sizeof(what));
		snprintf(err, errlen, "%s %s: %s", what, cfg->root, file_read_error(rc));
		return rc;
	}
	if (fstat(s->root.fd, &st) < 0) {
		rc = -errno;
		config_site_label(cfg, "root", what, sizeof(what));
		snprintf(err, errlen, "%s %s: %s", what, cfg->root, strerror(-rc));
		return rc;
	}
	s->stat_slot = stats_site_slot(cfg->name);
	s->root.dev = (uint64_t)st.st_dev;
	s->root.ino = (uint64_t)st.st_ino;
	for (size_t i = 0; i < cfg->ncerts; i++) {
		s->certs[i].cert_file = cfg->certs[i].cert_file;
		s->certs[i].key_file = cfg->certs[i].key_file;
		s->ncerts++;
		if (read_pair(&s->certs[i], cf, err, errlen) < 0) {
			if (cfg->name) { /* name the site: its files may be the top level's */
				char reason[512];
				snprintf(reason, sizeof(reason), "%s", err);
				snprintf(err, errlen, "[site %s] %s", cfg->name, reason);
			}
			return -EINVAL;
		}
	}
	if (build_extras(s) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return build_mime(s, mime_text, mime_len, err, errlen);
}

void site_release(struct site *s)
{
	if (s->root.fd >= 0)
		close(s->root.fd);
	s->root.fd = -1;
	mime_table_free(s->mime);
	s->mime = NULL;
	for (size_t i = 0; i < CONFIG_MAX_CERTS; i++)
		tls_pem_release(&s->certs[i]);
	free(s->extra_names);
	s->extra_names = NULL;
}
