/* File name to Content-Type, from /etc/mime.types (Debian media-types) with a
 * built-in fallback. Loaded once at start (and on each reload), read-only
 * after: shared by workers. The file is the caller's to read: this module
 * does no I/O. */
#ifndef KTLSD_PROTO_MIME_H
#define KTLSD_PROTO_MIME_H

#include <stddef.h>

struct mime_table;

/* text: the len bytes of a mime.types file, or NULL (none could be read:
 * the built-in table serves alone). Returns 0 or -ENOMEM. */
int mime_table_load(struct mime_table **out, const char *text, size_t len);
void mime_table_free(struct mime_table *t);

/* Makes ext (without its dot, any case) map to type, whatever the table
 * said: a site's --mime-type. Returns 0, -EINVAL (an extension no lookup
 * can ask for) or -ENOMEM. */
int mime_table_override(struct mime_table *t, const char *ext, const char *type);

/* Never NULL: "application/octet-stream" when the extension is unknown.
 * Extension match is case-insensitive; text types get "; charset=utf-8"? no:
 * types are returned exactly as the table says. */
const char *mime_lookup(const struct mime_table *t, const char *filename);

#endif
