/* HTTP/2 on a connection, with nghttp2.
 *
 * Writes are batches: nghttp2 packs frames into one large buffer (64 KiB to
 * a few MiB, --h2-buffer), DATA payloads are not copied through nghttp2
 * (NGHTTP2_DATA_FLAG_NO_COPY): the frame header goes in, the payload's
 * place is left as a hole, and after the batch one ring readv per stream
 * fills the holes straight from the file. The whole buffer then leaves in
 * one send (with kTLS the kernel cuts it into full records; without, OpenSSL
 * seals it into full records). No frame header is ever sent on its own.
 * This is what nginx's kTLS + sendfile gets wrong for HTTP/2: a sendfile
 * per DATA frame, and a tiny record per frame header. */
#ifndef KTLSD_SERVER_H2_CONN_H
#define KTLSD_SERVER_H2_CONN_H

#include <stdbool.h>
#include <stdint.h>

struct conn;
struct h2_stream;

/* ALPN chose h2: set the session up and start. */
void h2_conn_start(struct conn *c);

/* Moves the session on after any event of its conn. */
void h2_drive(struct conn *c);

/* The transport's splice of a --h2-sendfile payload into its pipe ended. */
void h2_spliced(struct conn *c, int res);

/* The conn's deadline passed: GOAWAY, then close if the client lingers. */
void h2_timeout(struct conn *c);

/* Timer tick on a quiet session: give back the batch and send buffers. */
void h2_release_idle(struct conn *c);

/* Graceful stop: GOAWAY, let open streams finish. */
void h2_shutdown(struct conn *c);

/* Frees the session and its streams (no operation in flight). */
void h2_conn_free(struct conn *c);

#endif
