/* --acme-dir on disk (README, "Certificates"): what the ACME client keeps and
 * how it writes it.
 *
 *   acme-dir/                     0700, the service user's
 *     accounts/CA-ID/account.key  0600  the account is this key (P-256)
 *     sites/NAME/bundle.pem       0600  the key, then the leaf and chain
 *     sites/NAME/cert.pem         0644  the leaf and chain alone, for others
 *     sites/NAME/state.json       0600  the CA, names, serial and dates
 *
 * Every write is a new file beside the old one (O_EXCL | O_NOFOLLOW, its
 * mode set with fchmod, whatever the umask), fsync'd, renamed over the
 * name, then the folder fsync'd: a crash leaves the old file or the new,
 * never half of one. Everything is opened beneath the folder's fd, no
 * symbolic link followed. Nothing is ever removed: an operator removes a
 * site's folder to force a new order. */
#ifndef KTLSD_SERVER_ACME_STORE_H
#define KTLSD_SERVER_ACME_STORE_H

#include <stddef.h>
#include <sys/types.h>

/* As root at start, before the privileges go: acme_dir (its parents 0755
 * when missing) made 0700 with sites/ and accounts/, owned by user (NULL:
 * whoever runs). An existing acme_dir that someone else owns is refused,
 * not taken over (it could be anything): -EPERM, with the reason in err,
 * as for every other failure. 0 or -errno. */
int acme_store_prepare(const char *acme_dir, const char *user, char *err, size_t errlen);

/* The folder, for the calls below: an fd or -errno. */
int acme_store_open(const char *acme_dir);

/* rel's folder made (0700) beneath dfd when missing, each component
 * ("sites/mirror"): 0 or -errno. */
int acme_store_mkdirs(int dfd, const char *rel);

/* Replaces rel beneath dfd with data, atomically, mode as given: 0 or
 * -errno. */
int acme_store_write(int dfd, const char *rel, const void *data, size_t len, mode_t mode);

/* rel's bytes (NUL-terminated) for the caller to free, if it is a file of
 * this process's user with one link (acme_bundle_open): 0 or -errno. */
int acme_store_read(int dfd, const char *rel, char **out, size_t *len);

#endif
