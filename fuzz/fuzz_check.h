/* Helpers shared by the libFuzzer targets: an assertion that reports and
 * aborts (libFuzzer saves the input as crash-*), a small PRNG for deriving
 * feed splits from the input, and the invariants of a static-file decision,
 * checked the way a sender would walk the body. */
#ifndef KTLSD_FUZZ_CHECK_H
#define KTLSD_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/static_file.h"

/* Not assert(): it must fire whatever NDEBUG says, and say what broke. */
#define FZ_ASSERT(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant '%s' broken: ", __FILE__, __LINE__,      \
			        #cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* splitmix64: any seed, even 0, gives well-spread output. */
static inline uint64_t fz_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Checks resp against req and file: the status is one static_file_respond
 * may give, lengths agree with the ranges and the multipart framing
 * (static_part_header, static_multipart_trailer and the sender's walk in
 * server/body.c, with room sizes drawn from rng), and every range lies in
 * the file. Aborts with a message on the first broken invariant. */
void fz_check_static_response(const struct static_request *req, const struct static_file *file,
                              const struct static_response *resp, uint64_t *rng);

#endif
