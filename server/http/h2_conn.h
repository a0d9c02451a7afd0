/* HTTP/2 on a connection: the ring glue of the sans-I/O session in
 * proto/h2_session.c. conn.c runs it through its protocol table.
 *
 * Writes are batches: the session packs frames into one large buffer (64
 * KiB to a few MiB, --h2-buffer); DATA payloads are not copied through
 * nghttp2 (NGHTTP2_DATA_FLAG_NO_COPY): the frame header goes in, the
 * payload's place is left as a hole, and after the batch one ring readv per
 * stream fills the holes straight from the file. The whole buffer then
 * leaves in one send (with kTLS the kernel cuts it into full records;
 * without, OpenSSL seals it into full records). No frame header is ever
 * sent on its own. This is what nginx's kTLS + sendfile gets wrong for
 * HTTP/2: a sendfile per DATA frame, and a tiny record per frame header. */
#ifndef KTLSD_SERVER_H2_CONN_H
#define KTLSD_SERVER_H2_CONN_H

#include "server/http/conn.h"

extern const struct conn_proto h2_proto;

#endif
