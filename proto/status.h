/* Status codes: reason phrases and small error pages. Sans-I/O. */
#ifndef KTLSD_PROTO_STATUS_H
#define KTLSD_PROTO_STATUS_H

#include <stddef.h>

/* "Not Found" for 404; "Unknown" for codes we never send. */
const char *status_reason(int code);

/* A short text/html error page for code into out; returns its length
 * (truncated to outsz - 1, always NUL-terminated). */
size_t status_page(int code, char *out, size_t outsz);

#endif
