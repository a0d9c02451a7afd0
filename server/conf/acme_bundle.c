/* Reading a --acme on site's bundle.pem safely, or a placeholder in its
 * stead (acme_bundle.h says why each check is there). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktls/acme_crypto.h"
#include "server/conf/acme_bundle.h"
#include "server/conf/config.h"
#include "server/conf/file_read.h"

int acme_bundle_open(int dfd, const char *relpath, unsigned owner)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, dfd, relpath, &how, sizeof(how));

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	/* A hard link is a second name the user may have made for a file
	 * that is not theirs to name (fs.protected_hardlinks aside). */
	if (st.st_uid != owner || st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	if (st.st_size > FILE_READ_MAX) {
		close(fd);
		return -EFBIG;
	}
	return fd;
}

/* fd's bytes, at most FILE_READ_MAX (NUL-terminated): 0 or -errno. */
static int read_fd(int fd, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;
			explicit_bzero(buf, n);
			free(buf);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			char *bigger = cap >= FILE_READ_MAX ? NULL : realloc(buf, cap * 2 + 1);
			if (!bigger) {
				explicit_bzero(buf, n);
				free(buf);
				return cap >= FILE_READ_MAX ? -EFBIG : -ENOMEM;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* The stored bundle, checked: 0, or -errno with the reason in err. */
static int read_stored(const struct config_site *site, const char *const *names, size_t nnames,
		       char **pem, size_t *len, char *err, size_t errlen)
{
	char rel[512];
	struct stat st;
	struct acme_cert_info info;
	int dfd, fd, rc;

	if (snprintf(rel, sizeof(rel), "sites/%s/bundle.pem", site->name ? site->name : "_top") >=
	    (int)sizeof(rel))
		return -ENAMETOOLONG;
	dfd = open(site->acme_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", site->acme_dir, strerror(-rc));
		return rc;
	}
	if (fstat(dfd, &st) < 0) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	fd = acme_bundle_open(dfd, rel, st.st_uid);
	close(dfd);
	if (fd < 0) {
		snprintf(err, errlen, "%s/%s: %s", site->acme_dir, rel,
			 fd == -ELOOP   ? "a symbolic link on the way, not followed"
			 : fd == -EPERM ? "not a file of the folder's owner with one link"
					: file_read_error(fd));
		return fd;
	}
	rc = read_fd(fd, pem, len);
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "%s/%s: %s", site->acme_dir, rel, file_read_error(rc));
		return rc;
	}
	/* A bundle whose key does not match, or that stopped covering the
	 * names, would fail the build (tls_pem) or the clients: better the
	 * placeholder, which the client replaces at once. */
	char why[256];
	if (acme_cert_check(*pem, *len, NULL, names, nnames, &info, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s/%s: %s", site->acme_dir, rel, why);
		explicit_bzero(*pem, *len);
		free(*pem);
		*pem = NULL;
		return -EINVAL;
	}
	return 0;
}

int acme_bundle_read(const struct config_site *site, char **pem, size_t *len, bool *placeholder,
		     char *err, size_t errlen)
{
	const char *names[CONFIG_MAX_SERVER_NAMES];
	size_t n = config_acme_names(site, names);

	*placeholder = false;
	err[0] = '\0';
	if (read_stored(site, names, n, pem, len, err, errlen) == 0)
		return 0;
	*placeholder = true;
	if (acme_placeholder(names, n, pem, len) < 0)
		return -ENOMEM;
	return 0;
}
