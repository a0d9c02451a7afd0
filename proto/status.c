/* Status codes: reason phrases and the small HTML bodies of error responses.
 * The pages name the status and nothing else: no server name or version for
 * a scanner to fingerprint. */
#include <stdio.h>

#include "proto/status.h"

/* Every code the server sends; RFC 9110 section 15 gives the phrases (429 and 431
 * come from RFC 6585). */
static const struct {
	int code;
	const char *reason;
} reasons[] = {
    {200, "OK"},
    {204, "No Content"},
    {206, "Partial Content"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {304, "Not Modified"},
    {307, "Temporary Redirect"},
    {308, "Permanent Redirect"},
    {400, "Bad Request"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {412, "Precondition Failed"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {416, "Range Not Satisfiable"},
    {421, "Misdirected Request"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {503, "Service Unavailable"},
    {505, "HTTP Version Not Supported"},
};

const char *status_reason(int code)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == code)
			return reasons[i].reason;
	return "Unknown";
}

size_t status_page(int code, char *out, size_t outsz)
{
	const char *reason = status_reason(code);
	int n;

	if (outsz == 0)
		return 0;
	n = snprintf(out, outsz,
	             "<html><head><title>%d %s</title></head>"
	             "<body><h1>%d %s</h1></body></html>\n",
	             code, reason, code, reason);
	if (n < 0) { /* cannot happen with these conversions; keep out a string */
		out[0] = '\0';
		return 0;
	}
	return (size_t)n < outsz ? (size_t)n : outsz - 1;
}
