/* Sending an HTTP/1.1 response body: its bytes in order (body.h: head,
 * multipart framing, file ranges), handed to the transport, which picks
 * how they travel (sock.h, "bodies"):
 *
 *  copy:      the ring reads the file into the transport's room, one chunk
 *             at a time, and the transport sends (sealing it first under
 *             user-space TLS, while the next chunk is read). A small file
 *             whose bytes the file cache keeps is copied from there: with
 *             its head, one record and one send. Under ktlsd's own TLS
 *             records a chunk of a larger file whose pages are cached is
 *             sealed from them instead, mapped (sock_body_map): no read.
 *  zero copy: framing goes into the transport's room, file bytes by
 *             sock_send_file (sendfile of cached pages, else splices
 *             through a pipe), where sock_body_zero_copy says so. */
#ifndef KTLSD_SERVER_BODY_SEND_H
#define KTLSD_SERVER_BODY_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn;

/* The response head is queued; send its body from fd (owned from now on),
 * by the path the flags and the socket allow. mem: the file's bytes, when
 * the file cache keeps them (they are copied, never read again). */
void body_send_start(struct conn *c, int fd, const void *mem);

/* Moves the response on: produce and send. true when all of it is out. */
bool body_send_pump(struct conn *c);

/* The transport's splice of file bytes into its pipe ended (res bytes; 0:
 * the file shrank). */
void body_send_spliced(struct conn *c, int res);

/* The response is over (all of it out, or the connection closed): its
 * file's mapping goes. */
struct response;
void body_send_end(struct response *r);

#endif
