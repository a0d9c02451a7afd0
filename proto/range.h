/* The Range header (RFC 9110 14.2) for byte ranges. Sans-I/O. */
#ifndef KTLSD_PROTO_RANGE_H
#define KTLSD_PROTO_RANGE_H

#include <stddef.h>
#include <stdint.h>

struct byte_range {
	uint64_t first, last; /* inclusive, last < size */
};

enum range_result {
	RANGE_NONE,          /* absent, syntactically invalid, or ignored by policy: send 200 */
	RANGE_OK,            /* *n satisfiable ranges in out: send 206 */
	RANGE_UNSATISFIABLE, /* valid, but no range overlaps the file: send 416 */
};

/* Parses "bytes=a-b, c-, -n". Unsatisfiable members are dropped; if none
 * remain the result is RANGE_UNSATISFIABLE. More than max members, or ranges
 * whose total length exceeds the file size (overlap amplification), are
 * ignored (RANGE_NONE), as nginx does. 64-bit throughout. */
enum range_result range_parse(const char *value, size_t len, uint64_t size,
			      struct byte_range *out, size_t max, size_t *n);

#endif
