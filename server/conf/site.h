/* One site as the workers serve it, built from its configuration: the open
 * root, the Content-Types with its overrides, its certificates as read
 * from disk, and its extra response fields in both spellings. Read-only
 * once built; a configuration's sites live as long as its server. */
#ifndef KTLSD_SERVER_SITE_H
#define KTLSD_SERVER_SITE_H

#include <limits.h>
#include <stddef.h>

#include "ktls/tls_pem.h"
#include "proto/mime.h"
#include "proto/path_rule.h"
#include "proto/static_file.h"
#include "server/conf/config-t.h"
#include "server/core/file.h"

struct conf_files;

/* The largest --error-page file: an error page is a page, not a download. */
#define SITE_PAGE_MAX (16 * 1024)

/* What a [path] rule's fields and prefix are made of (its path_rule points
 * into it). */
struct site_path {
	char prefix[PATH_MAX];        /* normalised: "nightly", "." */
	struct resp_extra extra[RESP_EXTRA_MAX];
	char *names;                  /* the fields' lowercase names, one block */
};

struct site {
	const struct config_site *cfg;
	struct file_root root;        /* fd -1: not opened */
	struct mime_table *mime;      /* its own when it has --mime-type lines */
	const struct mime_table *types; /* mime, or else the server's shared table */
	struct tls_cert_pair certs[CONFIG_MAX_CERTS];
	size_t ncerts;
	struct resp_extra extra[CONFIG_MAX_HEADERS];
	char *extra_names;            /* the lowercase (HTTP/2) names, one block */
	struct resp_extras extras;
	unsigned stat_slot;           /* its metrics' slot (stats.h), the same after a reload */
	struct resp_page pages_of[CONFIG_MAX_ERROR_PAGES]; /* --error-page, bodies malloc'd */
	size_t npages;
	struct path_rule *rules;      /* its [path] sections, for path_rule_match */
	struct site_path *paths;      /* what they point into */
	size_t npaths;
	bool acme_placeholder;        /* --acme on, no certificate issued yet */
};

/* Opens the root, reads the certificates and keys through cf (conf_files.h:
 * NULL reads them from disk) and prepares the rest. types is the server's
 * table, which a site without overrides shares; a site with --mime-type
 * lines builds its own from mime_text (the mime.types bytes, NULL: none).
 * On failure a one-line reason in err ("--root /x: No such file or
 * directory") and -errno; site_release then frees what was built. */
int site_build(struct site *s, const struct config_site *cfg, const struct mime_table *types,
	       const char *mime_text, size_t mime_len, struct conf_files *cf, char *err,
	       size_t errlen);
void site_release(struct site *s);

#endif
