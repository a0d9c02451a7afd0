/* One site as the workers serve it, built from its configuration: the open
 * root, the Content-Types with its overrides, its certificates as read
 * from disk, and its extra response fields in both spellings. Read-only
 * once built; a configuration's sites live as long as its server. */
#ifndef KTLSD_SERVER_SITE_H
#define KTLSD_SERVER_SITE_H

#include <stddef.h>

#include "ktls/tls_pem.h"
#include "proto/mime.h"
#include "proto/static_file.h"
#include "server/config-t.h"

struct site {
	const struct config_site *cfg;
	int root_fd;
	struct mime_table *mime;      /* its own when it has --mime-type lines */
	const struct mime_table *types; /* mime, or else the server's shared table */
	struct tls_cert_pair certs[CONFIG_MAX_CERTS];
	size_t ncerts;
	struct resp_extra extra[CONFIG_MAX_HEADERS];
	char *extra_names;            /* the lowercase (HTTP/2) names, one block */
	struct resp_extras extras;
};

/* Opens the root, reads the certificates and keys (before privileges are
 * dropped) and prepares the rest. types is the server's table, which a
 * site without overrides shares. On failure a one-line reason in err
 * ("--root /x: No such file or directory") and -errno; site_release then
 * frees what was built. */
int site_build(struct site *s, const struct config_site *cfg, const struct mime_table *types,
	       const char *mime_file, char *err, size_t errlen);
void site_release(struct site *s);

#endif
