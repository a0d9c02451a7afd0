/* Configuration: one table of options serves the command line, the config
 * file and --help, so a flag and its config key can never drift apart.
 * Read-only after start; workers share it. */
#ifndef KTLSD_SERVER_CONFIG_H
#define KTLSD_SERVER_CONFIG_H

#include <stdio.h>

#include "server/conf/config-t.h"

/* Defaults, then the config file (if --config appears anywhere on the command
 * line), then the command line, so flags override the file. A repeatable
 * option (--listen, --listen-plain, --cert/--key as one list of pairs) given
 * on the command line replaces the file's list instead of appending to it.
 * --help and --version win over everything else on the line. Errors go to
 * errfp as one line naming the key and the reason. cfg need not be
 * initialised; on CONFIG_EXIT_* it has already been freed (config_free on it
 * is then a harmless no-op). The config file is read through cf
 * (conf_files.h; NULL: from disk), and refused unless it is a regular file. */
struct conf_files;
/* With neither --config nor --root (nor --check) on the command line,
 * config_load reads this file where it exists (CONFIG_DEFAULT_FILE); a
 * variable so that unit tests can point it elsewhere. */
extern const char *config_default_file;
enum config_result config_load(struct config *cfg, int argc, char **argv, struct conf_files *cf,
			       FILE *outfp, FILE *errfp);

/* Parses one config file (same keys as the flags without "--", "key value"
 * or "key = value" per line, '#' comments). Within the file a repeatable key
 * appends; its first occurrence replaces what cfg held. Exposed for tests.
 * Returns 0, or a negative errno after printing one line to errfp. */
int config_parse_file(struct config *cfg, const char *path, FILE *errfp);

/* Fills every field with its default, except the listen default, which
 * config_load applies only when no listener was configured. */
void config_defaults(struct config *cfg);
/* Frees what cfg owns and zeroes it, so calling it twice is safe. */
void config_free(struct config *cfg);

/* The sites a server serves, into all (room for CONFIG_MAX_SITES + 1), in
 * the order workers look them up: the top level's first when it has a
 * root (it serves clients that name no site), then the sections. Returns
 * how many. */
size_t config_served_sites(const struct config *cfg, const struct config_site **all);

/* "--root" for the top-level site, "[site NAME] root" for a section's:
 * how messages name a site option where the user wrote it. */
const char *config_site_label(const struct config_site *site, const char *opt, char *buf,
			      size_t len);

/* The --acme on site's exact server names (its wildcards left out), into
 * out (room for CONFIG_MAX_SERVER_NAMES): how many. */
size_t config_acme_names(const struct config_site *site, const char **out);
/* "ACME_DIR/sites/NAME" (NAME "_top" for the top level's site): where the
 * ACME client keeps the site's bundle and state. 0, or -1 when too long. */
int config_acme_site_dir(const struct config *cfg, const struct config_site *site, char *buf,
			 size_t len);

/* For a SIGHUP: what only a restart can change keeps its running value in
 * new, and say() hears each such setting in one line ("--workers stays 2
 * until a restart (the configuration says 3)"), so the rest of new still
 * applies. The listeners are bound, the logs and the pid file opened, root
 * dropped and the workers started once: --listen, --listen-plain,
 * --status-listen (addresses, not only counts), --user, --pid-file,
 * --error-log, --access-log and --workers. Returns how many were kept. */
size_t config_keep_fixed(const struct config *old, struct config *new,
			 void (*say)(void *ctx, const char *line), void *ctx);


#endif
