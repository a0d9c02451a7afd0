/* Sending a response body: the two send paths and their ring completions.
 *
 *  copy:   the ring reads the file into a user buffer; with user-space TLS,
 *          OpenSSL seals it into a second buffer so the next read overlaps
 *          this send; with kTLS or plain HTTP the buffer is sent as is.
 *          A small file whose bytes the file cache keeps is copied from
 *          there: with its head, one record and one send.
 *  splice: zero copy, file -> pipe -> socket through the transport's
 *          sock_splice_file (io_uring has no sendfile); only where the
 *          socket encrypts by itself (kTLS) or nothing needs encrypting
 *          (plain HTTP). */
#ifndef KTLSD_SERVER_BODY_SEND_H
#define KTLSD_SERVER_BODY_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --sendfile auto splices kTLS bodies from this size up. Below it one read
 * and one send (the head in the same record) beat a send and two splices
 * through a pipe: on plain HTTP, 32 KiB bodies ran 37% and 64 KiB ones 23%
 * more requests per server CPU-second by copy. */
#define BODY_SPLICE_MIN (64 * 1024)

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

#endif
