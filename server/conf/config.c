/* Configuration: defaults, the config file, the command line and --help are
 * all driven by the one table below, so a flag and its config key cannot
 * drift apart.
 *
 * Sources apply in order, each overriding the last: defaults, the --config
 * file, the command line. A repeatable option given in a later source
 * replaces the earlier source's list instead of appending to it, so
 * "--listen :9000" means exactly one listener even if the file names three.
 * --cert and --key replace together, as they form one list of pairs.
 *
 * The argv parser is a plain loop with no getopt globals, so config_load can
 * run many times in one process (the unit tests do). Long options only,
 * spelled in full: "--name VALUE" or "--name=VALUE".
 *
 * The config file's "[site NAME]" sections each describe one more site
 * with the site options; what a section does not set it takes from the top
 * level once every source is read (config_site.c). One value of one
 * option is config_value.c's; what a reload keeps, config_reload.c's. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/conf/conf_files.h"
#include "server/conf/config-int.h"
#include "server/conf/config.h"
#include "server/conf/config_options.h"
#include "server/conf/config_path.h"
#include "server/conf/config_value.h"
#include "server/conf/file_read.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

const char *config_default_file = CONFIG_DEFAULT_FILE;

/* Where a value came from, for error messages and list replacement. */
struct ctx {
	FILE *errfp;                    /* NULL: stay quiet (the first pass over argv) */
	const char *file;               /* NULL: the command line */
	unsigned line;                  /* 0: the file as a whole */
	bool seen[CONFIG_MAX_OPTIONS];   /* options met in this source so far */
	/* The config file's line of each single-valued option in the current
	 * section (0: not given there yet). */
	unsigned section_line[CONFIG_MAX_OPTIONS];
	struct config_site *site;       /* where site options go: the top level or a section */
	struct config_path *path;       /* a [path] section's lines go here; NULL: none open */
};

/* Prints "ktlsd: [FILE:LINE: ]{--name|name}: MESSAGE" as one line. */
static void __attribute__((format(printf, 3, 4)))
report(const struct ctx *c, const struct opt *o, const char *fmt, ...)
{
	va_list ap;

	if (!c->errfp)
		return;
	fputs("ktlsd: ", c->errfp);
	if (c->file && c->line)
		fprintf(c->errfp, "%s:%u: ", c->file, c->line);
	else if (c->file)
		fprintf(c->errfp, "%s: ", c->file);
	if (o)
		fprintf(c->errfp, "%s%s: ", c->file ? "" : "--", o->name);
	va_start(ap, fmt);
	vfprintf(c->errfp, fmt, ap);
	va_end(ap);
	fputc('\n', c->errfp);
}

void config_set_string(void *base, size_t off, char *s)
{
	char **field = FIELD(base, off, char *);

	free(*field);
	*field = s;
}

/* How many entries of certs[] have their cert (or key) half set. Both halves
 * fill from index 0 up, so they pair by position. */
size_t config_cert_count(const struct config_site *site, size_t off)
{
	size_t n = 0;

	while (n < site->ncerts && *FIELD(&site->certs[n], off, char *))
		n++;
	return n;
}

static void free_certs(struct config_site *site)
{
	for (size_t i = 0; i < CONFIG_MAX_CERTS; i++) {
		free(site->certs[i].cert_file);
		free(site->certs[i].key_file);
	}
	memset(site->certs, 0, sizeof(site->certs));
	site->ncerts = 0;
}

static void free_paths(char **paths, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free(paths[i]);
		paths[i] = NULL;
	}
	*n = 0;
}

/* True on the first occurrence of a list option in this source; --cert and
 * --key count as one list. */
static bool list_fresh(const struct opt *o, const struct ctx *c)
{
	for (size_t i = 0; i < config_noptions; i++)
		if (c->seen[i] &&
		    (&config_options[i] == o || (o->type == T_CERT && config_options[i].type == T_CERT)))
			return false;
	return true;
}

/* Parses v for option o into cfg (a site option: into c->site). Returns 0,
 * or -1 after one line to c. */
static int apply(struct config *cfg, const struct opt *o, const char *v, struct ctx *c)
{
	bool fresh = list_fresh(o, c);
	void *base = o->site ? (void *)c->site : (void *)cfg;
	char buf[64], why[256];
	int i;

	c->seen[o - config_options] = true;
	if (o->site)
		c->site->set[o - config_options] = true;
	if (!*v) {
		report(c, o, "missing value");
		return -1;
	}
	switch (o->type) {
	case T_STRING:
		config_set_string(base, o->off, config_value_strdup(v));
		return 0;
	case T_PATH_OR:
		config_set_string(base, o->off, config_value_path_or_word(o->value, v));
		return 0;
	case T_UINT:
	case T_MS:
		if (config_value_fixed(v, o->type == T_MS ? 3 : 0, o->min, o->max,
		                FIELD(base, o->off, unsigned)) == 0)
			return 0;
		report(c, o, "expected %s from %s, got '%s'",
		       o->type == T_MS ? "seconds" : "a number", config_option_range(o, buf), v);
		return -1;
	case T_BYTES:
		if (config_value_bytes(v, o->min, o->max, FIELD(base, o->off, unsigned)) == 0)
			return 0;
		report(c, o, "expected bytes (k, m, g: 1024, 1024^2, 1024^3) from %s, got '%s'",
		       config_option_range(o, buf), v);
		return -1;
	case T_BOOL:
	case T_TRISTATE:
	case T_ENUM:
		i = config_value_word(o->value, v, strlen(v));
		if (i < 0) {
			report(c, o, "expected %s, got '%s'", o->value, v);
			return -1;
		}
		if (o->type == T_BOOL)
			*FIELD(base, o->off, bool) = i == 0; /* "on|off" */
		else if (o->type == T_TRISTATE)
			*FIELD(base, o->off, enum config_tristate) = (enum config_tristate)i;
		else
			*FIELD(base, o->off, int) = i;
		return 0;
	case T_PROTOCOLS: {
		char *p = config_value_protocols(v);

		if (!p) {
			report(c, o, "expected TLSv1.2, TLSv1.3 or both, got '%s'", v);
			return -1;
		}
		config_set_string(base, o->off, p);
		return 0;
	}
	case T_LISTEN: {
		size_t *n = FIELD(base, o->count_off, size_t);
		struct config_listen *l = FIELD(base, o->off, struct config_listen);

		/* A listener of one address (max 1) takes the last one given,
		 * as any single-valued option does. */
		if (fresh || o->max == 1)
			*n = 0;
		if (*n == CONFIG_MAX_LISTEN) {
			report(c, o, "at most %d addresses", CONFIG_MAX_LISTEN);
			return -1;
		}
		if (config_value_listen(v, &l[*n], why)) {
			if (why[0])
				report(c, o, "%s", why);
			else
				report(
				    c, o,
				    "expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a numeric "
				    "address and a port from 1 to 65535, got '%s'",
				    v);
			return -1;
		}
		/* The metrics listener is plain TCP, on its own thread. */
		if (o->off == OFF(status_listen) &&
		    (l[*n].proxy_protocol || l[*n].addr.ss_family == AF_UNIX)) {
			report(c, o, "takes ADDR:PORT alone (no unix:, no options), got '%s'", v);
			return -1;
		}
		(*n)++;
		return 0;
	}
	case T_CERT: {
		struct config_site *site = c->site;
		size_t n;

		if (fresh)
			free_certs(site);
		n = config_cert_count(site, o->off);
		if (n == CONFIG_MAX_CERTS) {
			report(c, o, "at most %d certificates", CONFIG_MAX_CERTS);
			return -1;
		}
		*FIELD(&site->certs[n], o->off, char *) = config_value_strdup(v);
		if (site->ncerts < n + 1)
			site->ncerts = n + 1;
		return 0;
	}
	case T_PATHS:
	case T_NAME:
	case T_HEADER:
	case T_MIME: {
		size_t *n = FIELD(base, o->count_off, size_t);
		char **paths = FIELD(base, o->off, char *);
		char *item = o->type == T_NAME     ? config_value_name(v, why)
			     : o->type == T_HEADER ? config_value_header(v, why)
			     : o->type == T_MIME   ? config_value_mime(v, why)
						   : config_value_strdup(v);

		if (!item) {
			report(c, o, "%s", why);
			return -1;
		}
		if (fresh)
			free_paths(paths, n);
		if (*n == o->max) {
			report(c, o, "at most %u", o->max);
			free(item);
			return -1;
		}
		paths[(*n)++] = item;
		return 0;
	}
	case T_ACTION:
	case T_FLAG:
		break;
	}
	return 0;
}

/* Strips an optional pair of quotes around v (no escapes inside; quotes keep
 * blanks and '#'), or else a trailing comment: '#' at the start of the value
 * or after a blank, so "a#b" stays a value. Then trailing blanks. */
static int unquote(char *v, const struct opt *o, const struct ctx *c)
{
	char *end;

	if (*v == '"' || *v == '\'') {
		char *close = strchr(v + 1, *v), *rest;

		if (!close) {
			report(c, o, "missing closing %c", *v);
			return -1;
		}
		rest = close + 1 + strspn(close + 1, " \t\r\n");
		if (*rest && *rest != '#') {
			report(c, o, "unexpected text after the closing quote");
			return -1;
		}
		memmove(v, v + 1, (size_t)(close - v - 1));
		v[close - v - 1] = '\0';
		return 0;
	}
	for (end = v; *end; end++)
		if (*end == '#' && (end == v || end[-1] == ' ' || end[-1] == '\t'))
			break;
	while (end > v && strchr(" \t\r\n", end[-1]))
		end--;
	*end = '\0';
	return 0;
}

/* "[site NAME]": the lines after it, up to the next section, describe the
 * site NAME. */
static int start_section(struct config *cfg, char *s, struct ctx *c)
{
	char *close = strchr(s, ']'), *name = s + 1 + strspn(s + 1, " \t");
	size_t n;

	if (close && close[1 + strspn(close + 1, " \t\r\n")] == '\0' &&
	    strncmp(name, "path", 4) == 0 && strchr(" \t", name[4])) {
		char why[256];
		name += 4 + strspn(name + 4, " \t");
		n = (size_t)(close - name);
		while (n && strchr(" \t", name[n - 1]))
			n--;
		if (config_path_start(c->site, name, n, c->line, why, &c->path) < 0) {
			report(c, NULL, "%s", why);
			return -1;
		}
		return 0;
	}
	if (!close || close[1 + strspn(close + 1, " \t\r\n")] != '\0' ||
	    strncmp(name, "site", 4) != 0 || !strchr(" \t", name[4])) {
		report(c, NULL, "expected a section line \"[site NAME]\" or \"[path PREFIX]\"");
		return -1;
	}
	c->path = NULL;
	name += 4 + strspn(name + 4, " \t");
	n = (size_t)(close - name);
	while (n && strchr(" \t", name[n - 1]))
		n--;
	bool printable = true;
	for (size_t i = 0; i < n; i++)
		printable = printable && (unsigned char)name[i] >= 0x20 && name[i] != 0x7f;
	if (n == 0 || n > 64 || memchr(name, '"', n) || memchr(name, '\\', n) || !printable) {
		report(c, NULL, "a [site NAME] needs a NAME of 1 to 64 printable characters, without "
				"quotes or backslashes");
		return -1;
	}
	/* The metrics and the access log name the top level's site "-" and
	 * sites past their slots "other" (stats.h). */
	if ((n == 1 && name[0] == '-') || (n == 5 && memcmp(name, "other", 5) == 0)) {
		report(c, NULL, "[site %.*s]: a name the metrics keep for themselves", (int)n, name);
		return -1;
	}
	for (size_t i = 0; i < cfg->nsites; i++)
		if (strlen(cfg->sites[i].name) == n && memcmp(cfg->sites[i].name, name, n) == 0) {
			report(c, NULL, "a second [site %.*s]", (int)n, name);
			return -1;
		}
	if (cfg->nsites == CONFIG_MAX_SITES) {
		report(c, NULL, "at most %d sites", CONFIG_MAX_SITES);
		return -1;
	}
	struct config_site *sites = realloc(cfg->sites, (cfg->nsites + 1) * sizeof(*sites));
	if (!sites) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	cfg->sites = sites;
	c->site = &sites[cfg->nsites++];
	memset(c->site, 0, sizeof(*c->site));
	memset(c->section_line, 0, sizeof(c->section_line));
	name[n] = '\0';
	/* Zeroed: a section's lists start empty, not appended to the top
	 * level's (so seen[] need not be reset: appending to an empty list is
	 * starting it). */
	c->site->name = config_value_strdup(name);
	return 0;
}

/* One line: "key value", "key = value" or "key=value", blank, comment or
 * a section. */
static int parse_line(struct config *cfg, char *s, struct ctx *c)
{
	const struct opt *o;
	size_t klen;
	char *v;

	s += strspn(s, " \t\r\n");
	if (!*s || *s == '#')
		return 0;
	if (*s == '[')
		return start_section(cfg, s, c);
	klen = strcspn(s, " \t\r\n=#");
	v = s + klen + strspn(s + klen, " \t");
	if (*v == '=')
		v += 1 + strspn(v + 1, " \t");
	s[klen] = '\0';
	if (c->path) {
		char why[256];
		if (unquote(v, NULL, c))
			return -1;
		if (config_path_apply(c->path, s, v, why) < 0) {
			report(c, NULL, "[path %s] %s", c->path->prefix, why);
			return -1;
		}
		return 0;
	}
	o = config_find_option(s, klen);
	if (!o) {
		report(c, NULL, "unknown key '%s'", s);
		return -1;
	}
	if (o->cli_only) {
		report(c, o, "only valid on the command line");
		return -1;
	}
	if (c->site != &cfg->site && !o->site) {
		report(c, o, "not a site option: it goes above the first [site] section");
		return -1;
	}
	if (unquote(v, o, c))
		return -1;
	/* In a file a second "root" is a slip, not an override (that is what
	 * the command line is for): nginx refuses a duplicate directive too. */
	if (!config_is_list(o->type) && o->type != T_CERT && !(o->type == T_LISTEN && o->max != 1)) {
		unsigned *first = &c->section_line[o - config_options];
		if (*first) {
			report(c, o, "given twice in this %s (line %u too): say it once",
			       c->site == &cfg->site ? "file's top level" : "section", *first);
			return -1;
		}
		*first = c->line;
	}
	return apply(cfg, o, v, c);
}

/* path's lines, from what conf_files_read gives (cf NULL: the disk). */
static int parse_file(struct config *cfg, const char *path, struct conf_files *cf, FILE *errfp)
{
	struct ctx c = {.errfp = errfp, .file = path, .site = &cfg->site};
	char *text, *line;
	size_t len;
	int rc = conf_files_read(cf, path, &text, &len);

	if (rc < 0) {
		/* A folder is refused as getline would have refused it. */
		if (rc == -EISDIR)
			report(&c, NULL, "cannot read: %s", strerror(EISDIR));
		else
			report(&c, NULL, "cannot open: %s", file_read_error(rc));
		return rc;
	}
	line = malloc(len + 2);
	for (size_t off = 0; line && rc == 0 && off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) + 1 : len - off;

		/* The line as getline gave it: its newline and a NUL after. */
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n;
		c.line++;
		if (parse_line(cfg, line, &c))
			rc = -EINVAL;
	}
	if (!line) {
		report(&c, NULL, "cannot read: %s", strerror(ENOMEM));
		rc = -ENOMEM;
	}
	free(line);
	free(text);
	return rc;
}

int config_parse_file(struct config *cfg, const char *path, FILE *errfp)
{
	return parse_file(cfg, path, NULL, errfp);
}

/* Takes argv[*i] (and the value after it, moving *i past it) as one option. */
static int next_arg(int argc, char **argv, int *i, struct ctx *c, const struct opt **o,
                    const char **value)
{
	const char *arg = argv[*i], *name = arg + 2;
	size_t len;

	*value = NULL;
	if (arg[0] != '-' || !arg[1]) {
		report(c, NULL, "unexpected argument '%s' (see --help)", arg);
		return -1;
	}
	if (arg[1] != '-') {
		report(c, NULL, "unknown option %s (see --help)", arg);
		return -1;
	}
	len = strcspn(name, "=");
	*o = config_find_option(name, len);
	if (!*o) {
		report(c, NULL, "unknown option --%.*s (see --help)", (int)len, name);
		return -1;
	}
	if (!(*o)->value) {
		if (name[len] == '=') {
			report(c, *o, "takes no value");
			return -1;
		}
		return 0;
	}
	if (name[len] == '=')
		*value = name + len + 1;
	else if (*i + 1 < argc)
		*value = argv[++*i];
	else {
		report(c, *o, "missing value");
		return -1;
	}
	return 0;
}

void config_defaults(struct config *cfg)
{
	struct ctx c = {.errfp = stderr, .site = &cfg->site};

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < config_noptions; i++)
		if (config_options[i].def && config_options[i].type != T_LISTEN &&
		    apply(cfg, &config_options[i], config_options[i].def, &c))
			abort(); /* a default that does not parse is a bug in the table */
}

/* Frees what the options of one side (site or not) own in base. */
static void free_options(void *base, bool site)
{
	for (size_t i = 0; i < config_noptions; i++) {
		const struct opt *o = &config_options[i];

		if (o->site != site)
			continue;
		if (config_is_string(o->type))
			config_set_string(base, o->off, NULL);
		if (config_is_list(o->type))
			free_paths(FIELD(base, o->off, char *), FIELD(base, o->count_off, size_t));
	}
}

static void free_site(struct config_site *site)
{
	free_options(site, true);
	free_certs(site);
	config_paths_free(site);
	free(site->name);
	memset(site, 0, sizeof(*site));
}

void config_free(struct config *cfg)
{
	free_options(cfg, false);
	free_site(&cfg->site);
	for (size_t i = 0; i < cfg->nsites; i++)
		free_site(&cfg->sites[i]);
	free(cfg->sites);
	memset(cfg, 0, sizeof(*cfg));
}

/* The same address twice would fail the start with "Address already in
 * use", naming neither line. */
static int check_listeners(const struct config *cfg, FILE *errfp)
{
	const struct config_listen *all[2 * CONFIG_MAX_LISTEN + 1];
	const char *kind[2 * CONFIG_MAX_LISTEN + 1];
	size_t n = 0;

	for (size_t i = 0; i < cfg->nlisten; i++, n++)
		all[n] = &cfg->listen[i], kind[n] = "listen";
	for (size_t i = 0; i < cfg->nlisten_plain; i++, n++)
		all[n] = &cfg->listen_plain[i], kind[n] = "listen-plain";
	if (cfg->nstatus_listen)
		all[n] = &cfg->status_listen, kind[n++] = "status-listen";
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (all[i]->addrlen && all[i]->addrlen == all[j]->addrlen &&
			    memcmp(&all[i]->addr, &all[j]->addr, all[i]->addrlen) == 0) {
				fprintf(errfp, "ktlsd: --%s %s: the same address as --%s %s\n",
					kind[i], all[i]->text, kind[j], all[j]->text);
				return -1;
			}
	return 0;
}

/* After all sources: the listen default, what sections inherit, and the
 * checks that span options. */
static int finish(struct config *cfg, FILE *errfp)
{
	struct ctx c = {.errfp = errfp, .site = &cfg->site};

	if (cfg->nlisten == 0 && cfg->nlisten_plain == 0) {
		const struct opt *o = config_find_option("listen", strlen("listen"));

		if (apply(cfg, o, o->def, &c))
			abort();
	}
	if (check_listeners(cfg, errfp))
		return -1;
	for (size_t i = 0; i < cfg->nsites; i++)
		config_site_inherit(&cfg->sites[i], &cfg->site);
	if (!cfg->site.root && !cfg->check && cfg->nsites == 0) {
		fprintf(errfp, "ktlsd: --root is required (or --config FILE; with neither, %s is read "
			       "where it exists)\n",
			config_default_file);
		return -1;
	}
	if (!cfg->site.root && cfg->site.npaths) {
		fprintf(errfp, "ktlsd: [path %s] above the first [site]: the top level has no root, "
			       "so it is no site and its rules would apply to nothing\n",
			cfg->site.paths[0].prefix);
		return -1;
	}
	if (!cfg->site.root && cfg->site.nserver_names) {
		fputs("ktlsd: --server-name needs a --root for its site\n", errfp);
		return -1;
	}
	if (config_site_check(&cfg->site, errfp))
		return -1;
	for (size_t i = 0; i < cfg->nsites; i++) {
		if (config_site_check(&cfg->sites[i], errfp))
			return -1;
		/* The default site is the top level's, or else the first
		 * section: any other is reached by its names alone. */
		bool is_default = i == 0 && !cfg->site.root;
		if (!is_default && cfg->sites[i].nserver_names == 0) {
			fprintf(errfp,
				"ktlsd: [site %s] has no server-name: no request would reach it\n",
				cfg->sites[i].name);
			return -1;
		}
	}
	if (config_acme_complete(cfg, errfp))
		return -1;
	return config_sites_check_names(cfg, errfp);
}

enum config_result config_load(struct config *cfg, int argc, char **argv, struct conf_files *cf,
			       FILE *outfp, FILE *errfp)
{
	struct ctx quiet = {0}, cli = {.errfp = errfp, .site = &cfg->site};
	const struct opt *o, *action = NULL;
	const char *v, *file = NULL;
	bool root_given = false, check = false;

	config_defaults(cfg);
	/* First pass, quietly: --help and --version win even over a broken
	 * line, and the file must be read before any flag is applied. */
	for (int i = 1; i < argc; i++) {
		if (next_arg(argc, argv, &i, &quiet, &o, &v))
			continue;
		if (o->type == T_ACTION && !action)
			action = o;
		else if (strcmp(o->name, "config") == 0)
			file = v;
		else if (strcmp(o->name, "root") == 0)
			root_given = true;
		else if (strcmp(o->name, "check") == 0)
			check = true;
	}
	/* As nginx reads its nginx.conf: "ktlsd --test-config" alone checks
	 * the file the systemd unit starts with. --check alone describes the
	 * machine, as it always did. */
	if (!file && !root_given && !check && access(config_default_file, F_OK) == 0)
		file = config_default_file;
	if (action) {
		if (strcmp(action->name, "help") == 0)
			config_print_help(outfp);
		else
			fprintf(outfp, "ktlsd %s\n", PACKAGE_VERSION);
		config_free(cfg);
		return CONFIG_EXIT_OK;
	}
	if (file && *file && parse_file(cfg, file, cf, errfp) < 0)
		goto fail;
	for (int i = 1; i < argc; i++) {
		if (next_arg(argc, argv, &i, &cli, &o, &v) || (v && apply(cfg, o, v, &cli)))
			goto fail;
		if (o->type == T_FLAG)
			*FIELD(cfg, o->off, bool) = true;
	}
	if (finish(cfg, errfp) == 0)
		return CONFIG_RUN;
fail:
	config_free(cfg);
	return CONFIG_EXIT_ERR;
}
