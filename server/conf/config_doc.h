/* The option table (config_options.c) printed as documentation: the OPTIONS
 * section of ktlsd(8) and the sample config file, so that neither can drift
 * from --help. Used by the build (doc/docgen.c), never by the server. */
#ifndef KTLSD_SERVER_CONFIG_DOC_H
#define KTLSD_SERVER_CONFIG_DOC_H

#include <stdio.h>

/* Roff for ktlsd(8): one .SS per group of --help, one .TP per option with
 * its placeholder, help text and default, then the config file rules. Text
 * is escaped for roff ("\-" for every '-', so options render as typed). */
void config_doc_man_options(FILE *out);

/* A ktlsd.conf with every key the file takes, in --help's order and groups:
 * its help text as a comment, then the key commented out, with its default
 * (or its placeholder, for a key without one). */
void config_doc_sample(FILE *out);

#endif
