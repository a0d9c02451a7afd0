/* The read-only state workers serve from, built from one loaded
 * configuration (types only; server.h has its functions and says how it
 * is counted). Apart from the worker, so that the connection code and the
 * request resolution read a server without the worker's types. */
#ifndef KTLSD_SERVER_SERVER_T_H
#define KTLSD_SERVER_SERVER_T_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "ktls/ktls.h"
#include "ktls/tls.h"
#include "proto/mime.h"
#include "proto/vhost.h"
#include "server/core/access_log.h"
#include "server/conf/config.h"
#include "server/conf/site.h"

struct conn_proto;

/* Read-only once built, and counted: the main thread, the workers and the
 * connections that use one each hold a reference. */
struct server {
	atomic_uint refs;            /* server_get, server_put */
	struct config *owned_cfg;    /* freed with it (a reload's); NULL: main's, at start */
	/* A certificate reload (server_new_certs) moved owned_cfg to a newer
	 * server, which this one keeps (its cfg is that one's). */
	const struct server *cfg_keeper;
	const struct config *cfg;
	/* [0] serves requests that name no site (the top level's when it has
	 * a root, else the first section's); the rest in the config's order. */
	struct site *sites;
	size_t nsites;
	struct vhost_table names;    /* every site's server names */
	struct tls_site tls_sites[CONFIG_MAX_SITES + 1];
	struct mime_table *mime;     /* --mime-types, shared by sites without overrides */
	struct ktls_support ktls;
	bool ktls_probed;            /* ktls holds a probe's answer */
	bool use_ktls;               /* --ktls on, or auto with a kernel that has it */
	bool seal_records;           /* without kernel TLS, ktlsd seals records (--tls-records) */
	struct tls_settings tls;
	/* What --test-config counts as errors in the certificates
	 * (site_certs.h); a start only warns of them. */
	unsigned cert_errors;
	/* The access log file, the same for every configuration (the main
	 * thread's: it cannot change without a restart; main sets it on the
	 * first, server_new copies it from the running one). */
	const struct access_log_file *access_log;
	/* The protocols a connection may run (main.c fills them in). */
	const struct conn_proto *h1, *h2;
};

#endif
