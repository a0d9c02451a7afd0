/* The client's view of what the HTTP/2 session sends, for
 * fuzz_h2_session.c: frames chained across batches, header blocks decoded
 * with HPACK, and each response's body checked against the file bytes it
 * announced (every fixture file holds file_byte(offset)). FZ_ASSERT on
 * anything else. */
#ifndef KTLSD_FUZZ_H2_WIRE_H
#define KTLSD_FUZZ_H2_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "proto/h2_session.h"

/* 1 MiB and a bit: its 65th DATA frame finds MAX_IOV holes in a 4 MiB batch. */
#define BIG_SIZE ((1u << 20) + 40000)
#define MAX_PAYLOAD 16384 /* nghttp2's DATA payload, whatever the peer allows */

/* The bytes of every file: content[i] == file_byte(i) (wire_init). */
extern uint8_t content[BIG_SIZE];
void wire_init(void);

struct resp {
	int32_t id;
	int status;
	bool headers, ended, multipart, have_len, have_range, check;
	uint64_t clen, base, got;
	/* multipart/byteranges: the part head being read, then its range */
	char part[STATIC_PART_HEADER_MAX];
	size_t part_len;
	uint64_t part_off, part_left;
};

struct wire {
	uint8_t hd[FRAME_HEADER];
	size_t hd_have;
	unsigned hd_batch; /* the batch the frame header began in */
	unsigned batch;
	uint32_t left; /* payload of the current frame still to come */
	uint8_t type, flags;
	int32_t id;
	size_t cur;    /* resps index of the current DATA frame or header block */
	bool in_block; /* a header block waits for its CONTINUATION */
	bool block_end_stream;
	nghttp2_hd_inflater *inf;
	struct resp *resps;
	size_t nresps, cap;
};

/* Reads n more bytes of what the server sent; w->batch is the batch they
 * are part of. */
void wire_feed(struct wire *w, const uint8_t *p, size_t n);

#endif
