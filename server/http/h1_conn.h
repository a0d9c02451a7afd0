/* HTTP/1.1 on a connection: reads request heads (llhttp), turns each into a
 * response (status line and headers from the shared static-file code, the
 * body by body_send.c), keeps the connection alive or closes it, and writes
 * the access log line when a response is done. conn.c runs it through its
 * protocol table. */
#ifndef KTLSD_SERVER_H1_CONN_H
#define KTLSD_SERVER_H1_CONN_H

#include "server/http/conn.h"

extern const struct conn_proto h1_proto;

#endif
