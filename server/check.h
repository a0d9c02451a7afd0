/* ktlsd --check: what this machine offers and what ktlsd would do with it. */
#ifndef KTLSD_SERVER_CHECK_H
#define KTLSD_SERVER_CHECK_H

#include <stdio.h>

#include "server/conf/config.h"

/* Prints the report to out; returns the process exit code (0). */
int check_report(const struct config *cfg, FILE *out);

#endif
