/* A --acme on site's certificate as the ACME client keeps it:
 * ACME_DIR/sites/NAME/bundle.pem, the key then the leaf and its chain, one
 * file so that one rename(2) replaces the pair (README, "Certificates").
 *
 * The folder belongs to the service user (--user), who writes it; a start
 * reads it as root. So the bundle is opened beneath the folder with
 * openat2 and no symbolic link anywhere (RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and read only if it is a regular file with one
 * link, owned by the folder's owner: a link the service user planted to a
 * root-only key (nginx's CVE-2016-1247 was a log file's) is refused, not
 * read. The privileged helper never reads these files (privsep.c): the
 * server reads them itself, as root at start and as the user after. */
#ifndef KTLSD_SERVER_ACME_BUNDLE_H
#define KTLSD_SERVER_ACME_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

struct config_site;

/* The site's bundle bytes (NUL-terminated) in *pem for the caller to free
 * (explicit_bzero first: it holds a key). When there is none yet, or it
 * cannot be read, or it does not parse, a self-signed placeholder for the
 * site's names (*placeholder true; the reason in err, one line, for the
 * warning). 0, or -errno when not even a placeholder could be made. */
int acme_bundle_read(const struct config_site *site, char **pem, size_t *len, bool *placeholder,
		     char *err, size_t errlen);

/* Opens relpath beneath the folder dfd the way acme_bundle_read does (no
 * symbolic link, a regular file with one link owned by owner), read-only:
 * an fd or -errno (-ELOOP for a link, -EPERM for a stranger's file). */
int acme_bundle_open(int dfd, const char *relpath, unsigned owner);

#endif
