#include "server/conf/site.h"

#include "server/conf/acme_bundle.h"
#include "server/conf/conf_files.h"
#include "server/conf/config.h"
#include "server/conf/config_value.h"
#include "server/conf/file_read.h"
#include "ktls/tls.h"
#include "proto/path.h"
#include "server/core/log.h"
#include "server/core/stats.h"

#include <ctype.h>
#include <strings.h>
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
 * lowercase (RFC 9113 8.2.1), HTTP/1.1 gets it as written. The n fields
 * of headers into f[] (and their lowercase names into *names, one block),
 * described by *out. */
static int build_fields(char *const *headers, size_t n, struct resp_extra *f, char **names,
			struct resp_extras *out)
{
	size_t len = 0;

	*out = (struct resp_extras){0};
	for (size_t i = 0; i < n; i++)
		len += strcspn(headers[i], ":") + 1;
	if (n && !(*names = malloc(len)))
		return -ENOMEM;
	char *p = *names;
	for (size_t i = 0; i < n; i++) {
		const char *h = headers[i];
		size_t k = strcspn(h, ":");
		struct resp_extra *x = &f[i];

		for (size_t j = 0; j < k; j++)
			p[j] = (char)tolower((unsigned char)h[j]);
		p[k] = '\0';
		*x = (struct resp_extra){.name_h1 = h, .name_h2 = p, .name_len = k,
					 .value = h + k + 2, .value_len = strlen(h + k + 2)};
		out->h1_bytes += k + 2 + x->value_len + 2;
		p += k + 1;
	}
	out->f = f;
	out->n = n;
	return 0;
}

static int build_extras(struct site *s)
{
	return build_fields(s->cfg->headers, s->cfg->nheaders, s->extra, &s->extra_names,
			    &s->extras);
}

static bool same_name(const char *a, const char *b)
{
	size_t n = strcspn(a, ":");

	return n == strcspn(b, ":") && strncasecmp(a, b, n) == 0;
}

/* The site's [path] sections as rules (proto/path_rule.h): each prefix
 * normalised as a request's path is, its fields the site's with its own in
 * place of those of the same name. */
static int build_paths(struct site *s, char *err, size_t errlen)
{
	const struct config_site *cfg = s->cfg;
	char what[96];

	if (cfg->npaths == 0)
		return 0;
	s->paths = calloc(cfg->npaths, sizeof(*s->paths));
	s->rules = calloc(cfg->npaths, sizeof(*s->rules));
	if (!s->paths || !s->rules) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->npaths = cfg->npaths;
	for (size_t i = 0; i < cfg->npaths; i++) {
		const struct config_path *cp = &cfg->paths[i];
		struct site_path *sp = &s->paths[i];
		struct path_rule *r = &s->rules[i];
		struct path_info info;
		char *list[2 * CONFIG_MAX_HEADERS];
		size_t n = 0;

		config_site_label(cfg, "", what, sizeof(what));
		if (path_from_target(cp->prefix, strlen(cp->prefix), sp->prefix, sizeof(sp->prefix),
				     &info) < 0) {
			snprintf(err, errlen, "%s[path %s]: not a path a request can name (a '..' "
					      "above the root, a bad %%-escape)",
				 cfg->name ? what : "", cp->prefix);
			return -EINVAL;
		}
		/* "/private" and "/private/" (or "/%70rivate") are one folder:
		 * two sections for it would leave the second silent. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->paths[j].prefix, sp->prefix) == 0) {
				snprintf(err, errlen, "%s[path %s]: the same folder as [path %s] (line %u)",
					 cfg->name ? what : "", cp->prefix, cfg->paths[j].prefix,
					 cfg->paths[j].line);
				return -EINVAL;
			}
		for (size_t j = 0; j < cfg->nheaders; j++) {
			bool replaced = false;
			for (size_t k = 0; k < cp->nheaders && !replaced; k++)
				replaced = same_name(cfg->headers[j], cp->headers[k]);
			if (!replaced)
				list[n++] = cfg->headers[j];
		}
		for (size_t k = 0; k < cp->nheaders; k++)
			list[n++] = cp->headers[k];
		if (n > RESP_EXTRA_MAX) {
			snprintf(err, errlen, "[path %s]: %zu header fields with the site's, at most %d",
				 cp->prefix, n, RESP_EXTRA_MAX);
			return -EINVAL;
		}
		if (build_fields(list, n, sp->extra, &sp->names, &r->extras) < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		r->extras.pages = s->extras.pages;
		r->extras.npages = s->extras.npages;
		r->prefix = sp->prefix;
		r->prefix_len = strlen(sp->prefix);
		r->redirect_status = cp->redirect_status;
		r->redirect_to = cp->redirect_to;
		r->acl = cp->acl;
		r->nacl = cp->nacl;
	}
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

/* --error-page "CODE FILE": each file's bytes, read as the certificates
 * are (through cf: a reload under --user gets them from the privileged
 * helper). */
static int build_pages(struct site *s, struct conf_files *cf, char *err, size_t errlen)
{
	const struct config_site *cfg = s->cfg;
	char what[96];

	config_site_label(cfg, "error-page", what, sizeof(what));
	for (size_t i = 0; i < cfg->nerror_pages; i++) {
		const char *v = cfg->error_pages[i];
		char *end, *bytes;
		size_t len;
		long code = strtol(v, &end, 10);
		const char *file = config_value_page_file(v);

		if (end == v || code < 400 || code > 599 || !strchr(" \t", *end) || !*file) {
			snprintf(err, errlen, "%s '%s': expected \"CODE FILE\", CODE from 400 to 599",
				 what, v);
			return -EINVAL;
		}
		for (size_t j = 0; j < s->npages; j++)
			if (s->pages_of[j].status == (int)code) {
				snprintf(err, errlen, "%s: %ld given twice", what, code);
				return -EINVAL;
			}
		int rc = conf_files_read(cf, file, &bytes, &len);
		if (rc < 0) {
			snprintf(err, errlen, "%s %ld %s: %s", what, code, file, file_read_error(rc));
			return -EINVAL;
		}
		if (len > SITE_PAGE_MAX) {
			free(bytes);
			snprintf(err, errlen, "%s %ld %s: %zu bytes, at most %d", what, code, file, len,
				 SITE_PAGE_MAX);
			return -EINVAL;
		}
		s->pages_of[s->npages++] = (struct resp_page){.status = (int)code, .body = bytes,
							      .len = len};
	}
	s->extras.pages = s->pages_of;
	s->extras.npages = s->npages;
	return 0;
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

/* A --acme on site's one pair: its bundle, read by the server itself and
 * never through cf (acme_bundle.h), or a placeholder until the CA issues. */
static int read_acme_bundle(struct site *s, char *err, size_t errlen)
{
	struct tls_cert_pair *p = &s->certs[0];
	char why[512];
	bool placeholder;
	int rc = acme_bundle_read(s->cfg, &p->cert_pem, &p->cert_len, &placeholder, why,
				  sizeof(why));

	p->cert_file = s->cfg->certs[0].cert_file;
	p->key_file = s->cfg->certs[0].key_file;
	s->ncerts = 1;
	if (rc < 0) {
		snprintf(err, errlen, "acme: %s: no placeholder certificate: %s",
			 s->cfg->name ? s->cfg->name : "the top level's site", strerror(-rc));
		return rc;
	}
	p->key_pem = malloc(p->cert_len + 1);
	if (!p->key_pem) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(p->key_pem, p->cert_pem, p->cert_len + 1);
	p->key_len = p->cert_len;
	s->acme_placeholder = placeholder;
	if (placeholder)
		log_msg(LOG_WARN, "acme: site %s: no certificate yet (%s); serving a self-signed "
				  "placeholder until the CA issues one",
			s->cfg->name ? s->cfg->name : "_top", why[0] ? why : "none stored");
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
	if (cfg->acme)
		rc = read_acme_bundle(s, err, errlen);
	else
		rc = 0;
	if (rc < 0)
		return rc;
	for (size_t i = cfg->acme ? 1 : 0; i < cfg->ncerts; i++) {
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
	rc = build_pages(s, cf, err, errlen);
	if (rc < 0)
		return rc;
	rc = build_paths(s, err, errlen);
	if (rc < 0)
		return rc;
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
	for (size_t i = 0; i < s->npages; i++)
		free((char *)s->pages_of[i].body);
	s->npages = 0;
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i].names);
	free(s->paths);
	free(s->rules);
	s->paths = NULL;
	s->rules = NULL;
	s->npaths = 0;
}
