/* The option table behind server/conf/config.c: every flag and config key with
 * its type, default, limits and help text, and the --help printer. Private to
 * the config module (config.c parses and applies, this file describes). */
#ifndef KTLSD_SERVER_CONFIG_OPTIONS_H
#define KTLSD_SERVER_CONFIG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "server/conf/config-t.h"

#define OFF(field) offsetof(struct config, field)
#define CERT_OFF(field) offsetof(struct config_cert, field)
#define SITE_OFF(field) offsetof(struct config_site, field)

enum opt_type {
	T_STRING,    /* char *, replaced */
	T_PATH_OR,   /* char *: a path, or one of the words after the first in the
		      * placeholder ("FILE|stdout|stderr|off"); the last stores NULL */
	T_UINT,      /* unsigned in [min, max] */
	T_MS,        /* seconds with up to 3 decimals, stored as ms in [min, max] */
	T_BYTES,     /* unsigned in [min, max]: a number of bytes, k, m or g after it
		      * multiplying by 1024, 1024^2, 1024^3 (nginx's sizes, and g) */
	T_BOOL,      /* on|off */
	T_TRISTATE,  /* auto|on|off, in the order of enum config_tristate */
	T_ENUM,      /* int: position of the value in the placeholder "a|b|c" */
	T_PROTOCOLS, /* TLSv1.2 and/or TLSv1.3, stored normalised */
	T_LISTEN,    /* appends to a struct config_listen array; count at count_off; max 1:
	              * one address, the last given */
	T_CERT,      /* appends the cert_file or key_file half (off) of certs[] */
	T_PATHS,     /* appends to a char *[max] array; count at count_off */
	T_NAME,      /* T_PATHS of host names ("dl.example.org", "*.example.org"), stored
		      * lowercase without a trailing dot */
	T_HEADER,    /* T_PATHS of "Name: value" response header fields */
	T_MIME,      /* T_PATHS of "EXT TYPE" Content-Type overrides */
	T_ACTION,    /* --help, --version: takes no value */
	T_FLAG,      /* bool set by the bare flag (--check): takes no value */
};

enum opt_group { G_GENERAL, G_TLS, G_HTTP, G_LOG, G_ACME, G_COUNT };

struct opt {
	const char *name;
	/* Placeholder for --help; NULL: the option takes no value. For the word
	 * types it is also the list of accepted words, so the two cannot differ. */
	const char *value;
	enum opt_type type;
	enum opt_group group;
	size_t off;
	const char *def; /* default, parsed exactly like user input; NULL: none */
	const char *help;
	size_t count_off; /* T_LISTEN, T_PATHS */
	unsigned min, max;
	bool cli_only;
	/* A site option: off and count_off are within struct config_site, and a
	 * [site] section of the config file may set it. */
	bool site;
};



extern const struct opt config_options[];
extern const size_t config_noptions;

/* The option named by the len bytes at name, or NULL. */
const struct opt *config_find_option(const char *name, size_t len);

/* "MIN to MAX" of a number or seconds option, as a user would write them. */
const char *config_option_range(const struct opt *o, char buf[static 64]);

/* The name of a group, "General", "TLS", ...: the headings of --help. */
const char *config_group_name(enum opt_group g);

/* What --help prints under an option's text: "(MIN to MAX; default: D)" or
 * "(default: D)"; NULL for an option without a default. */
const char *config_option_note(const struct opt *o, char buf[static 256]);

/* The paragraph that ends --help: which options the config file takes and
 * how it combines with the flags (also in ktlsd(8) and the sample file). */
extern const char config_file_rules[];

void config_print_help(FILE *out);

/* Name (without "--") of the i-th option in the table, NULL past the end:
 * lets tests and shell completion walk every option. */
const char *config_option_name(size_t i);

#endif
