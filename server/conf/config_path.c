#include "server/conf/config_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/conf/config_value.h"

const char config_path_keys[] = "header, redirect, allow, deny";

int config_path_start(struct config_site *site, const char *prefix, size_t len, unsigned line,
		      char why[static 256], struct config_path **out)
{
	if (len == 0 || prefix[0] != '/' || len > 1024 || memchr(prefix, '"', len)) {
		snprintf(why, 256, "a [path PREFIX] needs a PREFIX that starts with '/', got '%.*s'",
			 (int)(len > 64 ? 64 : len), prefix);
		return -1;
	}
	for (size_t i = 0; i < site->npaths; i++)
		if (strlen(site->paths[i].prefix) == len &&
		    memcmp(site->paths[i].prefix, prefix, len) == 0) {
			snprintf(why, 256, "a second [path %.*s] in this site (line %u)", (int)len,
				 prefix, site->paths[i].line);
			return -1;
		}
	if (site->npaths == CONFIG_MAX_PATHS) {
		snprintf(why, 256, "at most %d [path] sections a site", CONFIG_MAX_PATHS);
		return -1;
	}
	struct config_path *paths = realloc(site->paths, (site->npaths + 1) * sizeof(*paths));
	if (!paths) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	site->paths = paths;
	struct config_path *p = &paths[site->npaths++];
	memset(p, 0, sizeof(*p));
	p->prefix = strndup(prefix, len);
	if (!p->prefix) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	p->line = line;
	*out = p;
	return 0;
}

/* "CODE URL": a redirect status and an absolute URL or path, without
 * blanks or control bytes (it goes into a Location field as it is). */
static int parse_redirect(struct config_path *p, const char *v, char why[static 256])
{
	char *end;
	long code = strtol(v, &end, 10);
	const char *url = end + strspn(end, " \t");
	bool ok = end != v && (code == 301 || code == 302 || code == 307 || code == 308) &&
		  url != end && (url[0] == '/' || strncmp(url, "https://", 8) == 0 ||
				 strncmp(url, "http://", 7) == 0);

	for (const unsigned char *c = (const unsigned char *)url; ok && *c; c++)
		ok = *c > 0x20 && *c < 0x7f;
	if (!ok) {
		snprintf(why, 256,
			 "redirect: expected \"CODE URL\", CODE 301, 302, 307 or 308 and URL "
			 "https://..., http://... or /..., got '%.80s'",
			 v);
		return -1;
	}
	if (p->redirect_status) {
		snprintf(why, 256, "redirect: given twice in this [path]: say it once");
		return -1;
	}
	p->redirect_status = (int)code;
	p->redirect_to = config_value_strdup(url);
	return 0;
}

int config_path_apply(struct config_path *p, const char *key, const char *value,
		      char why[static 256])
{
	if (strcmp(key, "header") == 0) {
		char *h = config_value_header(value, why);
		if (!h)
			return -1;
		if (p->nheaders == CONFIG_MAX_HEADERS) {
			free(h);
			snprintf(why, 256, "header: at most %d in a [path]", CONFIG_MAX_HEADERS);
			return -1;
		}
		p->headers[p->nheaders++] = h;
		return 0;
	}
	if (strcmp(key, "redirect") == 0)
		return parse_redirect(p, value, why);
	if (strcmp(key, "allow") == 0 || strcmp(key, "deny") == 0) {
		if (p->nacl == CONFIG_MAX_ACL) {
			snprintf(why, 256, "%s: at most %d allow and deny lines in a [path]", key,
				 CONFIG_MAX_ACL);
			return -1;
		}
		if (path_acl_parse(value, key[0] == 'a', &p->acl[p->nacl]) < 0) {
			snprintf(why, 256, "%s: expected ADDR, ADDR/BITS (IPv4 or IPv6) or all, got '%.80s'",
				 key, value);
			return -1;
		}
		p->nacl++;
		return 0;
	}
	snprintf(why, 256, "not a [path] key '%.40s' (a [path] takes %s)", key, config_path_keys);
	return -1;
}

void config_paths_free(struct config_site *site)
{
	for (size_t i = 0; i < site->npaths; i++) {
		struct config_path *p = &site->paths[i];
		free(p->prefix);
		free(p->redirect_to);
		for (size_t j = 0; j < p->nheaders; j++)
			free(p->headers[j]);
	}
	free(site->paths);
	site->paths = NULL;
	site->npaths = 0;
}
