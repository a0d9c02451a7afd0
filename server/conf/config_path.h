/* The config file's "[path PREFIX]" sections (config-t.h, struct
 * config_path): what they hold and how their lines are read. config.c
 * reads the file and hands them the lines of such a section. */
#ifndef KTLSD_SERVER_CONFIG_PATH_H
#define KTLSD_SERVER_CONFIG_PATH_H

#include "server/conf/config-t.h"

/* A new section "[path PREFIX]" of site at line: *out, or -1 with a reason
 * in why (a PREFIX that is no absolute path, a second one of the same
 * PREFIX in the site, too many). */
int config_path_start(struct config_site *site, const char *prefix, size_t len, unsigned line,
		      char why[static 256], struct config_path **out);

/* One line of the section: header "Name: value" (repeatable), redirect
 * CODE URL, allow ADDR[/BITS]|all, deny ADDR[/BITS]|all (repeatable, in
 * order). 0, or -1 with a reason in why. */
int config_path_apply(struct config_path *p, const char *key, const char *value,
		      char why[static 256]);

/* The keys a section takes, for messages and the manual. */
extern const char config_path_keys[];

void config_paths_free(struct config_site *site);

#endif
