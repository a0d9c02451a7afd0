/* What the config module's files share and nothing else sees: config.c
 * reads the sources into fields, config_site.c completes and checks the
 * sites after every source is read, config_reload.c keeps what a reload
 * cannot change. */
#ifndef KTLSD_SERVER_CONFIG_INT_H
#define KTLSD_SERVER_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "server/conf/config-t.h"
#include "server/conf/config_options.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD(base, off, type) ((type *)(void *)((char *)(base) + (off)))

static inline bool config_is_list(enum opt_type t)
{
	return t == T_PATHS || t == T_NAME || t == T_HEADER || t == T_MIME;
}

static inline bool config_is_string(enum opt_type t)
{
	return t == T_STRING || t == T_PATH_OR || t == T_PROTOCOLS;
}

/* Frees the string at base + off and stores s (owned) there. */
void config_set_string(void *base, size_t off, char *s);

/* How many entries of certs[] have their cert (or key) half set. */
size_t config_cert_count(const struct config_site *site, size_t off);

/* config_site.c: site takes what it did not set of top's options. */
void config_site_inherit(struct config_site *site, const struct config_site *top);
/* A site's own checks (a root, cert and key in pairs): 0, or -1 after one
 * line to errfp. */
int config_site_check(const struct config_site *site, FILE *errfp);
/* config_acme.c: each --acme on site's certificate becomes its bundle in
 * --acme-dir, after the checks an order needs: 0, or -1 after one line to
 * errfp. */
int config_acme_complete(struct config *cfg, FILE *errfp);
/* No server name claimed twice: 0, or -1 after one line to errfp. */
int config_sites_check_names(const struct config *cfg, FILE *errfp);

#endif
