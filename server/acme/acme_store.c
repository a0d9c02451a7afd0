/* --acme-dir: made at start, written atomically after (acme_store.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/acme/acme_store.h"
#include "server/conf/acme_bundle.h"
#include "server/conf/file_read.h"

/* The parents of path, made 0755 when missing (/var/lib/ktlsd outside
 * systemd's StateDirectory=). */
static int make_parents(char *path)
{
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		int rc = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		*p = '/';
		if (rc < 0)
			return rc;
	}
	return 0;
}

int acme_store_prepare(const char *acme_dir, const char *user, char *err, size_t errlen)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char path[4096];
	struct stat st;
	int dfd, rc;

	if (user) {
		struct passwd *pw = getpwnam(user);
		if (!pw) {
			snprintf(err, errlen, "--user %s: no such user", user);
			return -ENOENT;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (snprintf(path, sizeof(path), "%s", acme_dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = make_parents(path);
	if (rc == 0 && mkdir(acme_dir, 0700) == 0) {
		/* Made here, by us: ours to give to the user. */
		int fd = open(acme_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchown(fd, uid, gid) < 0)
			rc = -errno;
		if (fd >= 0)
			close(fd);
	} else if (rc == 0 && errno != EEXIST) {
		rc = -errno;
	}
	if (rc < 0) {
		snprintf(err, errlen, "--acme-dir %s: %s", acme_dir, strerror(-rc));
		return rc;
	}
	dfd = open(acme_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "--acme-dir %s: %s", acme_dir,
			 rc == -ELOOP || rc == -ENOTDIR ? "not a folder (a symbolic link is not "
							  "followed)"
							: strerror(-rc));
		if (dfd >= 0)
			close(dfd);
		return rc;
	}
	if (st.st_uid != uid) {
		struct passwd *owner = getpwuid(st.st_uid);
		snprintf(err, errlen,
			 "--acme-dir %s is owned by %s, not %s: chown it to the user ktlsd runs as",
			 acme_dir, owner ? owner->pw_name : "another user", user ? user : "this user");
		close(dfd);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		/* Keys live here: nobody but the owner reads the folder. */
		if (fchmod(dfd, 0700) < 0) {
			rc = -errno;
			snprintf(err, errlen, "--acme-dir %s: chmod 0700: %s", acme_dir, strerror(-rc));
			close(dfd);
			return rc;
		}
	}
	static const char *const subs[] = {"sites", "accounts"};
	for (size_t i = 0; i < 2; i++) {
		if (mkdirat(dfd, subs[i], 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(err, errlen, "--acme-dir %s/%s: %s", acme_dir, subs[i], strerror(-rc));
			close(dfd);
			return rc;
		}
		int fd = openat(dfd, subs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat sst;
		if (fd < 0 || fstat(fd, &sst) < 0 || (sst.st_uid != uid && fchown(fd, uid, gid) < 0)) {
			rc = -errno;
			snprintf(err, errlen, "--acme-dir %s/%s: %s", acme_dir, subs[i], strerror(-rc));
			if (fd >= 0)
				close(fd);
			close(dfd);
			return rc;
		}
		close(fd);
	}
	close(dfd);
	return 0;
}

int acme_store_open(const char *acme_dir)
{
	int fd = open(acme_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int acme_store_mkdirs(int dfd, const char *rel)
{
	char path[1024];
	int fd = dup(dfd);

	if (fd < 0)
		return -errno;
	if (snprintf(path, sizeof(path), "%s", rel) >= (int)sizeof(path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	for (char *save = NULL, *part = strtok_r(path, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, "..") == 0 || strcmp(part, ".") == 0) {
			close(fd);
			return -EINVAL;
		}
		if (mkdirat(fd, part, 0700) < 0 && errno != EEXIST) {
			int rc = -errno;
			close(fd);
			return rc;
		}
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int rc = next < 0 ? -errno : 0;
		close(fd);
		if (rc < 0)
			return rc;
		fd = next;
	}
	close(fd);
	return 0;
}

/* rel's folder (beneath dfd, no link followed) and its last component. */
static int open_parent(int dfd, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char dir[1024];

	*base = slash ? slash + 1 : rel;
	if (!slash)
		return dup(dfd) < 0 ? -errno : fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if ((size_t)(slash - rel) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	int fd = acme_bundle_open(dfd, dir, 0); /* a folder: refused as one, see below */
	if (fd == -EISDIR) {
		fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? -ENOTDIR : fd;
}

int acme_store_write(int dfd, const char *rel, const void *data, size_t len, mode_t mode)
{
	const char *base;
	char tmp[300];
	int pfd = open_parent(dfd, rel, &base), fd, rc = 0;

	if (pfd < 0)
		return pfd;
	if (snprintf(tmp, sizeof(tmp), ".%s.tmp", base) >= (int)sizeof(tmp)) {
		close(pfd);
		return -ENAMETOOLONG;
	}
	/* A .tmp left by a crash is ours to replace. */
	unlinkat(pfd, tmp, 0);
	fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	for (size_t off = 0; off < len && rc == 0;) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
		if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (rc == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(pfd, tmp, pfd, base) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(pfd, tmp, 0);
	else if (fsync(pfd) < 0)
		rc = -errno;
	close(pfd);
	return rc;
}

int acme_store_read(int dfd, const char *rel, char **out, size_t *len)
{
	int fd = acme_bundle_open(dfd, rel, (unsigned)geteuid());

	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	int rc = buf ? 0 : -ENOMEM;
	while (rc == 0 && n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno != EINTR)
			rc = -errno;
		else if (r == 0)
			break;
		else if (r > 0)
			n += (size_t)r;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
