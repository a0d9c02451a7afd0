/* Walks the body of a static response: the file ranges of a
 * static_response, with the multipart/byteranges framing between them. The
 * caller owns the buffers and the I/O; this only says what comes next. */
#ifndef KTLSD_PROTO_BODY_H
#define KTLSD_PROTO_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/static_file.h"

struct body {
	const struct static_response *resp;
	const struct static_file *file;
	size_t part;          /* current range (0 for a whole file) */
	uint64_t off;         /* next file offset to produce */
	uint64_t end;         /* end of the current range, exclusive */
	bool header_done;     /* the current part's multipart header is out */
	bool done;
	uint64_t remaining;   /* body bytes not yet produced */
};

void body_start(struct body *b, const struct static_response *resp,
		const struct static_file *file);

enum body_step {
	BODY_DONE,    /* nothing left */
	BODY_LITERAL, /* *n framing bytes were copied to out */
	BODY_FILE,    /* read *n bytes of the file at *offset into out */
	BODY_FULL,    /* out has no room for the next framing piece */
};

/* Produces the next piece into out (room bytes). For BODY_FILE the caller
 * reads, then reports the bytes it got with body_advance. */
enum body_step body_next(struct body *b, char *out, size_t room, size_t *n, uint64_t *offset);
void body_advance(struct body *b, uint64_t got);

/* Every file byte of the body has been produced: the file may be closed
 * (what remains, if anything, is multipart framing). */
bool body_file_done(const struct body *b);

#endif
