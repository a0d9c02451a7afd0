/* --test-config (and --check given a root): a start's checks without the
 * start. */
#ifndef KTLSD_SERVER_TEST_CONFIG_H
#define KTLSD_SERVER_TEST_CONFIG_H

#include "server/conf/config-t.h"

/* Loads what a start loads (the root, the kernel TLS policy, the
 * certificates and keys, --user, the log files, as file_read.h and
 * file_create.h say) without binding a listener or starting a worker.
 * Prints the first problem as one line and returns the exit code a start
 * would end with, or prints "configuration ok" and returns 0. */
int test_config(struct config *cfg);

#endif
