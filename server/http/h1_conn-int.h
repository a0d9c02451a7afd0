/* What HTTP/1.1's two files share: h1_conn.c runs the exchange (read a
 * head, answer it, again) and the protocol table; h1_response.c turns a
 * parsed request into its response and logs it when it is done. */
#ifndef KTLSD_SERVER_H1_CONN_INT_H
#define KTLSD_SERVER_H1_CONN_INT_H

#include "server/core/access_log.h"
#include "server/http/conn.h"
#include "server/http/h1_conn-t.h"

/* The connection's HTTP/1.1 state (h1_create made it). */
static inline struct h1_exchange *h1_exchange_of(const struct conn *c)
{
	return c->proto_state;
}

/* A request head was parsed: start its response (file, listing, redirect
 * or error page). */
void h1_on_request(struct conn *c);

/* The head could not be parsed: answer status and close after it. */
void h1_on_parse_error(struct conn *c, int status);

/* The response is over (end says how): its access log line, its counters. */
void h1_on_response_done(struct conn *c, enum access_end end);

#endif
