/* File name to Content-Type, from /etc/mime.types (Debian media-types) with a
 * built-in fallback. Loaded once at start, read-only after: shared by workers. */
#ifndef KTLSD_PROTO_MIME_H
#define KTLSD_PROTO_MIME_H

struct mime_table;

/* path NULL means /etc/mime.types. A missing or unreadable file is not an
 * error: the built-in table serves. Returns 0 or -ENOMEM. */
int mime_table_load(struct mime_table **out, const char *path);
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
