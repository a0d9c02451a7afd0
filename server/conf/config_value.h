/* One value of an option, checked and normalised (config_value.c): private
 * to the config module, which applies them to the options of the table. */
#ifndef KTLSD_SERVER_CONFIG_VALUE_H
#define KTLSD_SERVER_CONFIG_VALUE_H

#include <stddef.h>

#include "server/conf/config-t.h"

/* strdup that ends the process when memory runs out: a configuration
 * cannot be half read. */
char *config_value_strdup(const char *s);

/* Unsigned decimal with at most `decimals` digits after a '.', scaled by
 * 10^decimals, in [min, max]. 0 or -1. */
int config_value_fixed(const char *s, int decimals, unsigned min, unsigned max, unsigned *out);

/* Bytes: digits, then k, m or g (1024, 1024^2, 1024^3), in [min, max].
 * 0 or -1. */
int config_value_bytes(const char *s, unsigned min, unsigned max, unsigned *out);

/* Position of the len bytes at s among the '|'-separated words of list,
 * ignoring case; -1 if absent. */
int config_value_word(const char *list, const char *s, size_t len);

/* A T_PATH_OR value: NULL for the last word of list, another word as list
 * spells it, anything else a path as given. */
char *config_value_path_or_word(const char *list, const char *v);

/* TLSv1.2 and/or TLSv1.3 as OpenSSL spells them, oldest first; NULL if
 * anything else. */
char *config_value_protocols(const char *s);

/* A listener: an address ([V6]:PORT, V4:PORT, :PORT, PORT or unix:/PATH),
 * then options (proxy-protocol). 0, or -1 with the reason in why ("" for
 * the generic address message). */
int config_value_listen(const char *s, struct config_listen *l, char why[static 256]);

/* "Name: value" (--header), a host name (--server-name, stored lowercase
 * without a trailing dot) and "EXT TYPE" (--mime-type, the extension
 * lowercase): the stored form, or NULL with the reason in why. */
char *config_value_header(const char *v, char why[static 256]);
/* The FILE of an --error-page "CODE FILE" (what follows CODE and blanks). */
const char *config_value_page_file(const char *v);
char *config_value_name(const char *v, char why[static 256]);
char *config_value_mime(const char *v, char why[static 256]);

#endif
