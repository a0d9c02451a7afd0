/* The files a configuration names, as one reading of them: the config
 * file, every site's root (an open folder) and certificates and keys, the
 * session-ticket key files and the MIME types.
 *
 * Where the process may read them itself (a start, a --test-config, a
 * reload without --user), it passes NULL and each is read from disk as the
 * build asks for it (file_read.h). Under --user, the server has no
 * privilege left to read a root-only key, so the privileged helper
 * (privsep.h) loads the configuration itself, records every file it names
 * (privsep_gather) and sends that reading over its socket
 * (conf_files_pack); the server builds from what it received
 * (conf_files_unpack), looking each path up there and never on disk. The
 * server never names a path to the helper: a compromised server cannot
 * make it read anything the configuration does not name. */
#ifndef KTLSD_SERVER_CONF_FILES_H
#define KTLSD_SERVER_CONF_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "server/conf/config-t.h"

struct conf_file {
	char *path;
	int err;                 /* 0, or the -errno its read or open gave */
	char *data;              /* a file's bytes (NUL-terminated) */
	size_t len;
	bool dir;                /* a root: fd, not data */
	int fd;                  /* the root, O_PATH (-1 when err) */
};

struct conf_files {
	bool received;           /* from the helper: what is not here is not read */
	struct conf_file *v;
	size_t n, cap;
};

/* Empty, recording: each path is read from disk the first time it is asked
 * for and kept, so that asking again gives the same bytes. */
void conf_files_init(struct conf_files *cf);
/* Closes the roots, wipes the bytes (keys among them) and frees. */
void conf_files_free(struct conf_files *cf);

/* path's bytes, as file_read_whole gives them, in *out for the caller to
 * free: read from disk (cf NULL, or recording) or looked up in what was
 * received (-ENOMSG when it is not there). */
int conf_files_read(struct conf_files *cf, const char *path, char **out, size_t *len);
/* path opened as a folder (O_PATH | O_DIRECTORY), a new fd for the caller,
 * or -errno, on the same terms. */
int conf_files_open_dir(struct conf_files *cf, const char *path);

/* The roots' fds in a message: at most this many per reading. */
#define CONF_FILES_MAX_DIRS (CONFIG_MAX_SITES + 1)

/* cf as bytes in a new memfd (*memfd) plus the roots' fds (borrowed from
 * cf, in order) in fds[0, *nfds): 0 or -errno. */
int conf_files_pack(const struct conf_files *cf, int *memfd, int *fds, size_t *nfds);
/* The reverse, into an empty cf (which owns every fd from then on, whatever
 * the result; memfd is closed): 0, or -EBADMSG for a message that does not
 * parse, -ENOMEM. */
int conf_files_unpack(struct conf_files *cf, int memfd, const int *fds, size_t nfds);

#endif
