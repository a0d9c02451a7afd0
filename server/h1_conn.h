/* HTTP/1.1 on a connection: turns a parsed request into a response (status
 * line, headers, and the body plan from the shared static-file code), and
 * writes the access log line when the response is done. */
#ifndef KTLSD_SERVER_H1_CONN_H
#define KTLSD_SERVER_H1_CONN_H

#include <stdbool.h>

struct conn;

/* c->parser->req is complete: set up c->resp and queue the head. */
void h1_on_request(struct conn *c);

/* The parser refused the request: queue an error response; the connection
 * closes after it. */
void h1_on_parse_error(struct conn *c, int status);

/* The last byte of the response was accepted by the socket (or the
 * connection died mid-response: aborted is true). */
void h1_on_response_done(struct conn *c, bool aborted);

#endif
