/* The types of an HTTP/1.1 exchange (h1_conn.h has its functions): the
 * parser, the response being sent and where its body comes from. Types
 * only, shared by h1_conn.c and body_send.c; a connection holds its
 * exchange behind c->proto_state, which conn.c never looks into. */
#ifndef KTLSD_SERVER_H1_CONN_T_H
#define KTLSD_SERVER_H1_CONN_T_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/body.h"
#include "proto/h1_parser.h"
#include "proto/static_file.h"
#include "server/core/ring.h"
#include "server/net/sock.h"

enum body_path { BODY_PATH_NONE, BODY_PATH_COPY, BODY_PATH_SPLICE };

struct conn;
struct lister_job;

/* The HTTP/1.1 response being sent. */
struct response {
	struct conn *conn;           /* whose (the file read's completion finds it so) */
	int file_fd;                 /* -1 when the body is not from a file */
	const unsigned char *mem;    /* the file's bytes, when the file cache keeps them */
	struct static_file file;
	struct static_response sr;
	struct body body;
	enum body_path path;
	uint64_t resident_to;        /* file bytes before it are in the page cache */
	struct sock_map map;         /* the file's pages the sealer reads (sock_body_map) */
	bool truncated;              /* the file shrank under us: close after what we have */
	int status;
	uint64_t bytes_base;         /* the sock's bytes sent when the response began */
	uint64_t head_len;           /* of the response head */
	uint64_t body_len;           /* of the body to send (0 for HEAD, a 304...) */
	uint64_t start_ms;
	const void *site;            /* the site the request named (static_target's root) */
	struct ring_op read_op;      /* the file read of the copy path */
	char *read_dst;              /* where it reads to */
	bool read_posted;
	struct lister_job *listing;  /* --autoindex: the listing being made; the
				      * response (and the requests behind it) waits */
	char request_line[256];      /* for error messages */
	struct resp_extras extras;   /* a listing's site fields, while it is made */
};

enum h1_phase { H1_READ_HEAD, H1_RESPOND };

/* The parser (17 KB, most of it the header arena) and the response (1 KB)
 * exist only while a request head is read or answered: they share one
 * block of the worker's buffer pool, which an idle keep-alive connection
 * gives back. Both pointers are NULL then. */
struct h1_exchange {
	enum h1_phase phase;
	struct h1_parser *parser;
	struct response *resp;
	size_t block_cap;            /* of their buffer-pool block */
	bool head_started;           /* bytes of the next request head have arrived */
	unsigned requests;
};

#endif
