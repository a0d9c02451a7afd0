#include "server/test_config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "server/core/access_log.h"
#include "server/core/file_create.h"
#include "server/core/log.h"
#include "server/conf/server.h"

int test_config(struct config *cfg)
{
	struct server *srv;
	int rc;

	/* Only what stops a start is worth a line here. */
	log_set_level(LOG_WARN);
	/* server_new reads every certificate and key and builds a TLS
	 * context from them, as a start does. */
	rc = server_new(&srv, cfg, false, NULL, NULL);
	if (rc < 0)
		return rc == -EINVAL ? 2 : 1;
	if (cfg->user && !getpwnam(cfg->user)) {
		log_msg(LOG_ERROR, "--user %s: no such user", cfg->user);
		rc = 1;
		goto out;
	}
	/* The logs are opened (and created) as a start would open them; the
	 * access log's stdout and stderr are taken as they are. */
	const char *elog = log_file_named(cfg->error_log);
	int fd = elog ? file_create_log(elog, NULL) : 0;
	if (fd < 0) {
		log_msg(LOG_ERROR, "--error-log %s: %s", elog, file_create_error(fd));
		rc = 2; /* as main() ends */
		goto out;
	}
	if (fd > 0)
		close(fd);
	struct access_log_file alog;
	int arc = access_log_file_open(&alog, cfg->access_log);
	if (arc < 0) {
		log_msg(LOG_ERROR, "--access-log %s: %s", cfg->access_log, file_create_error(arc));
		rc = 1; /* as main() ends */
		goto out;
	}
	access_log_file_close(&alog);
	char what[PATH_MAX + 64];
	printf("ktlsd: configuration ok (root %s; listeners: %zu HTTPS, %zu plain HTTP; "
	       "certificates: %zu)\n",
	       server_serving_text(srv, what, sizeof(what)), cfg->nlisten, cfg->nlisten_plain,
	       srv->sites[0].ncerts);
out:
	server_put(srv);
	return rc;
}
