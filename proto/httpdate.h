/* HTTP dates (RFC 9110 5.6.7). Sans-I/O. */
#ifndef KTLSD_PROTO_HTTPDATE_H
#define KTLSD_PROTO_HTTPDATE_H

#include <stddef.h>
#include <time.h>

#define HTTPDATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/* Writes IMF-fixdate and a NUL into out (at least HTTPDATE_LEN + 1 bytes). */
void httpdate_format(time_t t, char *out);

/* Accepts IMF-fixdate, obsolete RFC 850 and asctime forms. 0 or -EINVAL. */
/* "2026-12-01T07:33:53Z" (RFC 3339, UTC, with the NUL: 21 bytes) into
 * out, for t in years 0 to 9999; computed as httpdate_format's fields. */
void httpdate_rfc3339(time_t t, char *out);

int httpdate_parse(const char *s, size_t len, time_t *out);

#endif
