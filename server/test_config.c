#include "server/test_config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/core/access_log.h"
#include "server/core/file_create.h"
#include "server/core/log.h"
#include "server/conf/config.h"
#include "server/conf/server.h"
#include "server/conf/site_certs.h"

/* 0 when pw's user may list and read root, else its errno: asked in a
 * child that becomes the user (access(2) answers for the real ids), since
 * only that user's own look is the answer (groups, ACLs, every folder on
 * the way). */
static int root_access_as(const struct passwd *pw, const char *root)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0; /* no answer: a start will tell */
	if (pid == 0) {
		if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
		    setuid(pw->pw_uid) < 0)
			_exit(0);
		_exit(access(root, R_OK | X_OK) == 0 ? 0 : errno & 0x7f);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

/* A root the --user cannot read loads and starts, then answers every
 * request 403: said here, as nginx's open() error says it at run time. */
static int roots_readable(const struct server *srv, const char *user)
{
	const struct passwd *pw = getpwnam(user);
	char what[96];
	int bad = 0;

	if (!pw || geteuid() != 0)
		return 0; /* only root becomes --user: a start fails first */
	for (size_t i = 0; i < srv->nsites; i++) {
		const struct config_site *site = srv->sites[i].cfg;
		int e = root_access_as(pw, site->root);
		if (e == 0)
			continue;
		config_site_label(site, "root", what, sizeof(what));
		log_msg(LOG_ERROR, "%s %s: --user %s cannot read it (%s): every request would get 403",
			what, site->root, user, strerror(e));
		bad = 1;
	}
	return bad;
}

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
	if (cfg->user && roots_readable(srv, cfg->user)) {
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
	/* server_new logged each of them. */
	if (srv->cert_errors) {
		log_msg(LOG_ERROR, "configuration not ok: %u certificate problem%s above",
			srv->cert_errors, srv->cert_errors > 1 ? "s" : "");
		rc = 1;
		goto out;
	}
	char what[PATH_MAX + 64];
	size_t ncerts = site_certs_count(srv->sites, srv->nsites);
	printf("ktlsd: configuration ok (root %s; listeners: %zu HTTPS, %zu plain HTTP; "
	       "certificates: %zu)\n",
	       server_serving_text(srv, what, sizeof(what)), cfg->nlisten, cfg->nlisten_plain,
	       ncerts);
out:
	server_put(srv);
	return rc;
}
