/* proto/static_target.c's resolution on the server's files: opened with
 * openat2 beneath the root (file.c), through the worker's open-file cache. */
#ifndef KTLSD_SERVER_RESOLVE_H
#define KTLSD_SERVER_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/static_file.h"

struct server;
struct filecache;

/* Fills out; with status 0, out->fd is open and out->file describes it.
 * Files come through the worker's open-file cache fc (NULL: none).
 * accept_encoding: the request's field value (NULL when absent), for
 * --precompressed. */
void resolve_target(const struct server *srv, struct filecache *fc, uint64_t now_ms,
                    const char *target, size_t len, const char *accept_encoding, size_t ae_len,
                    struct static_target *out);

#endif
