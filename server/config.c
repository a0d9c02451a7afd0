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
 * spelled in full: "--name VALUE" or "--name=VALUE". */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/config.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define OFF(field) offsetof(struct config, field)
#define CERT_OFF(field) offsetof(struct config_cert, field)

enum opt_type {
	T_STRING,    /* char *, replaced */
	T_PATH_OR,   /* char *; the word after '|' in the placeholder stores NULL */
	T_UINT,      /* unsigned in [min, max] */
	T_MS,        /* seconds with up to 3 decimals, stored as ms in [min, max] */
	T_BOOL,      /* on|off */
	T_TRISTATE,  /* auto|on|off, in the order of enum config_tristate */
	T_ENUM,      /* int: position of the value in the placeholder "a|b|c" */
	T_PROTOCOLS, /* TLSv1.2 and/or TLSv1.3, stored normalised */
	T_LISTEN,    /* appends to a struct config_listen array; count at count_off */
	T_CERT,      /* appends the cert_file or key_file half (off) of certs[] */
	T_ACTION,    /* --help, --version: takes no value */
	T_FLAG,      /* bool set by the bare flag (--check): takes no value */
};

enum opt_group { G_GENERAL, G_TLS, G_HTTP, G_LOG, G_COUNT };
static const char *const group_names[G_COUNT] = {"General", "TLS", "HTTP limits and timeouts",
                                                 "Logging"};

struct opt {
	const char *name;
	/* Placeholder for --help; NULL: the option takes no value. For the word
	 * types it is also the list of accepted words, so the two cannot differ. */
	const char *value;
	enum opt_type type;
	enum opt_group group;
	size_t off;
	const char *def; /* default, parsed exactly like user input; NULL: none */
	const char *help;
	size_t count_off; /* T_LISTEN */
	unsigned min, max;
	bool cli_only;
};

#define OPT(n, v, t, g, o, d, h, ...)                                                              \
	{                                                                                          \
		.name = n, .value = v, .type = t, .group = g, .off = o, .def = d, .help = h,       \
		__VA_ARGS__                                                                        \
	}
#define S_MS(s) ((s)*1000u)

static const struct opt options[] = {
    OPT("root", "DIR", T_STRING, G_GENERAL, OFF(root), NULL, "Directory to serve (required)."),
    OPT("listen", "ADDR:PORT", T_LISTEN, G_GENERAL, OFF(listen), "0.0.0.0:8443",
        "Accept HTTPS here; repeatable. ADDR:PORT, [IPV6]:PORT, :PORT or PORT. The default "
        "applies only when neither --listen nor --listen-plain is given.",
        .count_off = OFF(nlisten)),
    OPT("listen-plain", "ADDR:PORT", T_LISTEN, G_GENERAL, OFF(listen_plain), NULL,
        "Accept plain HTTP here; repeatable, same forms as --listen.",
        .count_off = OFF(nlisten_plain)),
    OPT("workers", "N", T_UINT, G_GENERAL, OFF(workers), "0",
        "Worker threads; 0 means one per online CPU.", .max = 1024),
    OPT("config", "FILE", T_STRING, G_GENERAL, OFF(config_file), NULL,
        "Read options from FILE first, one \"name value\" per line; flags override it.",
        .cli_only = true),
    OPT("help", NULL, T_ACTION, G_GENERAL, 0, NULL, "Print this help and exit.", .cli_only = true),
    OPT("version", NULL, T_ACTION, G_GENERAL, 0, NULL, "Print the version and exit.",
        .cli_only = true),
    OPT("check", NULL, T_FLAG, G_GENERAL, OFF(check), NULL,
        "Print what this machine offers (kernel TLS, OpenSSL, io_uring) and the path a "
        "connection would take under the other flags, then exit.",
        .cli_only = true),

    OPT("cert", "FILE", T_CERT, G_TLS, CERT_OFF(cert_file), NULL,
        "Certificate chain (PEM); repeatable, paired in order with --key."),
    OPT("key", "FILE", T_CERT, G_TLS, CERT_OFF(key_file), NULL,
        "Private key (PEM) for the --cert in the same place."),
    OPT("tls-protocols", "LIST", T_PROTOCOLS, G_TLS, OFF(tls_protocols), "TLSv1.2 TLSv1.3",
        "TLS versions to accept: TLSv1.2, TLSv1.3 or both."),
    OPT("tls13-ciphersuites", "LIST", T_STRING, G_TLS, OFF(tls13_ciphersuites),
        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
        "TLS 1.3 cipher suites, in OpenSSL syntax."),
    /* Mozilla's "intermediate" profile. */
    OPT("tls12-ciphers", "LIST", T_STRING, G_TLS, OFF(tls12_ciphers),
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
        "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305",
        "TLS 1.2 ciphers, in OpenSSL syntax."),
    OPT("tls-session-tickets", "on|off", T_BOOL, G_TLS, OFF(tls_session_tickets), "on",
        "Offer stateless session resumption."),
    OPT("tls-session-cache", "N", T_UINT, G_TLS, OFF(tls_session_cache), "20000",
        "Session cache entries per worker; 0 turns the cache off.", .max = 1000000),
    OPT("tls-ticket-rotate", "SECONDS", T_UINT, G_TLS, OFF(tls_ticket_rotate_s), "3600",
        "Replace the session ticket key this often.", .min = 60, .max = 604800),
    OPT("ktls", "auto|on|off", T_TRISTATE, G_TLS, OFF(ktls), "auto",
        "Kernel TLS: auto falls back to user space, on refuses to start without it."),
    OPT("sendfile", "on|off", T_BOOL, G_TLS, OFF(sendfile), "on",
        "Send file bodies with zero-copy sendfile/splice."),
    OPT("h2", "on|off", T_BOOL, G_TLS, OFF(h2), "on", "Offer HTTP/2 through ALPN."),
    OPT("h2-sendfile", "on|off", T_BOOL, G_TLS, OFF(h2_sendfile), "off",
        "Expert: send each HTTP/2 DATA frame as a header write plus a zero-copy splice, as "
        "nginx does with sendfile, to measure what big coalesced writes save."),

    OPT("max-header-size", "BYTES", T_UINT, G_HTTP, OFF(max_header_bytes), "8192",
        "Largest request head.", .min = 1024, .max = 65536),
    OPT("max-headers", "N", T_UINT, G_HTTP, OFF(max_headers), "100",
        "Most header fields in a request.", .min = 1, .max = 1000),
    OPT("max-uri", "BYTES", T_UINT, G_HTTP, OFF(max_uri), "4096", "Longest request target.",
        .min = 64, .max = 16384),
    OPT("max-connections", "N", T_UINT, G_HTTP, OFF(max_connections), "16384",
        "Open connections per worker.", .min = 1, .max = 1048576),
    OPT("keepalive-requests", "N", T_UINT, G_HTTP, OFF(keepalive_requests), "10000",
        "Requests per connection before it is closed.", .min = 1, .max = 1000000),
    OPT("handshake-timeout", "SECONDS", T_MS, G_HTTP, OFF(handshake_timeout_ms), "10",
        "Time allowed for the TLS handshake; decimals allowed (2.5).", .min = 1, .max = S_MS(3600)),
    OPT("header-timeout", "SECONDS", T_MS, G_HTTP, OFF(header_timeout_ms), "10",
        "Time allowed to receive a request head.", .min = 1, .max = S_MS(3600)),
    OPT("idle-timeout", "SECONDS", T_MS, G_HTTP, OFF(idle_timeout_ms), "60",
        "Close a connection idle between requests this long.", .min = 1, .max = S_MS(86400)),
    OPT("send-timeout", "SECONDS", T_MS, G_HTTP, OFF(send_timeout_ms), "60",
        "Close a connection whose client reads nothing this long.", .min = 1, .max = S_MS(86400)),
    OPT("shutdown-grace", "SECONDS", T_MS, G_HTTP, OFF(shutdown_grace_ms), "30",
        "On SIGTERM, let requests in flight finish this long; 0 closes at once.",
        .max = S_MS(3600)),
    OPT("h2-max-streams", "N", T_UINT, G_HTTP, OFF(h2_max_streams), "128",
        "HTTP/2: concurrent streams per connection.", .min = 1, .max = 10000),
    OPT("h2-max-header-list", "BYTES", T_UINT, G_HTTP, OFF(h2_max_header_list), "65536",
        "HTTP/2: largest decoded request header list.", .min = 1024, .max = 1048576),
    OPT("h2-reset-rate", "N", T_UINT, G_HTTP, OFF(h2_reset_rate), "100",
        "HTTP/2: stream resets per second a client may cause (burst 10x) before GOAWAY "
        "(rapid reset).",
        .min = 1, .max = 1000000),
    OPT("h2-max-continuations", "N", T_UINT, G_HTTP, OFF(h2_max_continuations), "8",
        "HTTP/2: CONTINUATION frames per header block (CONTINUATION flood).", .min = 1,
        .max = 1000),
    OPT("h2-buffer", "BYTES", T_UINT, G_HTTP, OFF(h2_buffer), "262144",
        "HTTP/2: write buffer per connection; each fills with whole frames and leaves in "
        "one send.",
        .min = 32768, .max = 4194304),
    OPT("dotfiles", "on|off", T_BOOL, G_HTTP, OFF(dotfiles), "off",
        "Serve names starting with '.'; off answers 404."),

    OPT("access-log", "FILE|off", T_PATH_OR, G_LOG, OFF(access_log), "off",
        "Log each request to FILE."),
    OPT("error-log", "FILE|stderr", T_PATH_OR, G_LOG, OFF(error_log), "stderr",
        "Where errors and notices go."),
    OPT("log-level", "error|warn|info|debug", T_ENUM, G_LOG, OFF(log_level), "info",
        "Least severe message to log."),
    OPT("pid-file", "FILE", T_STRING, G_LOG, OFF(pid_file), NULL, "Write the process id to FILE."),
    OPT("user", "USER", T_STRING, G_GENERAL, OFF(user), NULL,
        "After binding the listeners and reading the keys, run as USER (drops root)."),
};

/* Where a value came from, for error messages and list replacement. */
struct ctx {
	FILE *errfp;                    /* NULL: stay quiet (the first pass over argv) */
	const char *file;               /* NULL: the command line */
	unsigned line;                  /* 0: the file as a whole */
	bool seen[ARRAY_SIZE(options)]; /* options met in this source so far */
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

/* Running out of memory while reading the configuration leaves nothing
 * sensible to run, so stop here instead of threading ENOMEM through every
 * setter. */
static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		fputs("ktlsd: out of memory\n", stderr);
		abort();
	}
	return p;
}

static void set_string(struct config *cfg, size_t off, char *s)
{
	char **field = FIELD(cfg, off, char *);

	free(*field);
	*field = s;
}

static const struct opt *find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (strlen(options[i].name) == len && memcmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

/* Unsigned decimal with at most `decimals` digits after an optional '.',
 * scaled by 10^decimals: with 3, "2.5" seconds is 2500 ms. No sign, blanks,
 * base prefix or floating point (so no locale decimal comma); finer input
 * than the scale is refused rather than silently rounded. */
static int parse_fixed(const char *s, int decimals, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v = 0;
	int digits = 0, frac = -1; /* -1: no '.' yet */

	for (; *s; s++) {
		if (*s == '.' && frac < 0 && decimals > 0) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || frac == decimals)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
		digits++;
		frac += frac >= 0;
		if (v > max) /* v only grows when scaled below */
			return -1;
	}
	for (int i = frac < 0 ? 0 : frac; i < decimals; i++)
		v *= 10;
	if (!digits || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* "MIN to MAX" of a T_UINT or T_MS, as the user would write them. */
static const char *range(const struct opt *o, char buf[static 64])
{
	if (o->type == T_MS)
		snprintf(buf, 64, "%.10g to %.10g", o->min / 1000.0, o->max / 1000.0);
	else
		snprintf(buf, 64, "%u to %u", o->min, o->max);
	return buf;
}

/* Position of the len bytes at s among the '|'-separated words of list,
 * ignoring case; -1 if absent. */
static int find_word(const char *list, const char *s, size_t len)
{
	for (int i = 0; *list; i++) {
		size_t n = strcspn(list, "|");

		if (n == len && strncasecmp(list, s, n) == 0)
			return i;
		list += n + (list[n] == '|');
	}
	return -1;
}

/* Accepts TLSv1.2 and TLSv1.3 in any case, separated by blanks or commas,
 * and stores them as OpenSSL spells them (ktls/ compares them exactly),
 * oldest first, blank-separated. */
static char *parse_protocols(const char *s)
{
	static const char *const canonical[] = {NULL, "TLSv1.2", "TLSv1.3", "TLSv1.2 TLSv1.3"};
	unsigned mask = 0;

	for (s += strspn(s, " \t,"); *s; s += strspn(s, " \t,")) {
		size_t n = strcspn(s, " \t,");
		int i = find_word("TLSv1.2|TLSv1.3", s, n);

		if (i < 0)
			return NULL;
		mask |= 1u << i;
		s += n;
	}
	return mask ? xstrdup(canonical[mask]) : NULL;
}

static int parse_port(const char *s, in_port_t *port)
{
	unsigned v;

	if (parse_fixed(s, 0, 1, 65535, &v))
		return -1;
	*port = htons((in_port_t)v);
	return 0;
}

/* "[V6]:PORT", "V4:PORT", ":PORT" or "PORT" (the last two mean 0.0.0.0).
 * Addresses are numeric: resolving names at start-up would make the server
 * depend on DNS to boot. A bare IPv6 address needs brackets, since its last
 * colon would otherwise be mistaken for the port separator. */
static int parse_listen(const char *s, struct config_listen *l)
{
	char host[sizeof(l->text)];
	const char *port;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (strlen(s) >= sizeof(l->text))
		return -1;
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -1;
		n = (size_t)(end - s - 1);
		memcpy(host, s + 1, n);
		host[n] = '\0';
		port = end + 2;
		a6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1 ||
		    parse_port(port, &a6->sin6_port))
			return -1;
		l->addrlen = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;
		const char *colon = strrchr(s, ':');

		n = colon ? (size_t)(colon - s) : 0;
		memcpy(host, s, n);
		host[n] = '\0';
		port = colon ? colon + 1 : s;
		if (!n)
			strcpy(host, "0.0.0.0");
		a4->sin_family = AF_INET;
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1 || parse_port(port, &a4->sin_port))
			return -1;
		l->addrlen = sizeof(*a4);
	}
	strcpy(l->text, s);
	return 0;
}

/* How many entries of certs[] have their cert (or key) half set. Both halves
 * fill from index 0 up, so they pair by position. */
static size_t cert_count(struct config *cfg, size_t off)
{
	size_t n = 0;

	while (n < cfg->ncerts && *FIELD(&cfg->certs[n], off, char *))
		n++;
	return n;
}

static void free_certs(struct config *cfg)
{
	for (size_t i = 0; i < CONFIG_MAX_CERTS; i++) {
		free(cfg->certs[i].cert_file);
		free(cfg->certs[i].key_file);
	}
	memset(cfg->certs, 0, sizeof(cfg->certs));
	cfg->ncerts = 0;
}

/* True on the first occurrence of a list option in this source; --cert and
 * --key count as one list. */
static bool list_fresh(const struct opt *o, const struct ctx *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (c->seen[i] &&
		    (&options[i] == o || (o->type == T_CERT && options[i].type == T_CERT)))
			return false;
	return true;
}

/* Parses v for option o into cfg. Returns 0, or -1 after one line to c. */
static int apply(struct config *cfg, const struct opt *o, const char *v, struct ctx *c)
{
	bool fresh = list_fresh(o, c);
	char buf[64];
	int i;

	c->seen[o - options] = true;
	if (!*v) {
		report(c, o, "missing value");
		return -1;
	}
	switch (o->type) {
	case T_STRING:
		set_string(cfg, o->off, xstrdup(v));
		return 0;
	case T_PATH_OR:
		set_string(cfg, o->off, find_word(o->value, v, strlen(v)) == 1 ? NULL : xstrdup(v));
		return 0;
	case T_UINT:
	case T_MS:
		if (parse_fixed(v, o->type == T_MS ? 3 : 0, o->min, o->max,
		                FIELD(cfg, o->off, unsigned)) == 0)
			return 0;
		report(c, o, "expected %s from %s, got '%s'",
		       o->type == T_MS ? "seconds" : "a number", range(o, buf), v);
		return -1;
	case T_BOOL:
	case T_TRISTATE:
	case T_ENUM:
		i = find_word(o->value, v, strlen(v));
		if (i < 0) {
			report(c, o, "expected %s, got '%s'", o->value, v);
			return -1;
		}
		if (o->type == T_BOOL)
			*FIELD(cfg, o->off, bool) = i == 0; /* "on|off" */
		else if (o->type == T_TRISTATE)
			*FIELD(cfg, o->off, enum config_tristate) = (enum config_tristate)i;
		else
			*FIELD(cfg, o->off, int) = i;
		return 0;
	case T_PROTOCOLS: {
		char *p = parse_protocols(v);

		if (!p) {
			report(c, o, "expected TLSv1.2, TLSv1.3 or both, got '%s'", v);
			return -1;
		}
		set_string(cfg, o->off, p);
		return 0;
	}
	case T_LISTEN: {
		size_t *n = FIELD(cfg, o->count_off, size_t);
		struct config_listen *l = FIELD(cfg, o->off, struct config_listen);

		if (fresh)
			*n = 0;
		if (*n == CONFIG_MAX_LISTEN) {
			report(c, o, "at most %d addresses", CONFIG_MAX_LISTEN);
			return -1;
		}
		if (parse_listen(v, &l[*n])) {
			report(c, o,
			       "expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a numeric "
			       "address and a port from 1 to 65535, got '%s'",
			       v);
			return -1;
		}
		(*n)++;
		return 0;
	}
	case T_CERT: {
		size_t n;

		if (fresh)
			free_certs(cfg);
		n = cert_count(cfg, o->off);
		if (n == CONFIG_MAX_CERTS) {
			report(c, o, "at most %d certificates", CONFIG_MAX_CERTS);
			return -1;
		}
		*FIELD(&cfg->certs[n], o->off, char *) = xstrdup(v);
		if (cfg->ncerts < n + 1)
			cfg->ncerts = n + 1;
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

/* One line: "key value", "key = value" or "key=value", blank or comment. */
static int parse_line(struct config *cfg, char *s, struct ctx *c)
{
	const struct opt *o;
	size_t klen;
	char *v;

	s += strspn(s, " \t\r\n");
	if (!*s || *s == '#')
		return 0;
	klen = strcspn(s, " \t\r\n=#");
	v = s + klen + strspn(s + klen, " \t");
	if (*v == '=')
		v += 1 + strspn(v + 1, " \t");
	s[klen] = '\0';
	o = find_opt(s, klen);
	if (!o) {
		report(c, NULL, "unknown key '%s'", s);
		return -1;
	}
	if (o->cli_only) {
		report(c, o, "only valid on the command line");
		return -1;
	}
	if (unquote(v, o, c))
		return -1;
	return apply(cfg, o, v, c);
}

int config_parse_file(struct config *cfg, const char *path, FILE *errfp)
{
	struct ctx c = {.errfp = errfp, .file = path};
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		rc = -errno;
		report(&c, NULL, "cannot open: %s", strerror(-rc));
		return rc;
	}
	while (rc == 0) {
		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		c.line++;
		if (parse_line(cfg, line, &c))
			rc = -EINVAL;
	}
	/* getline reads a directory happily until the first read() gives EISDIR. */
	if (rc == 0 && ferror(f)) {
		rc = errno ? -errno : -EIO;
		c.line = 0;
		report(&c, NULL, "cannot read: %s", strerror(-rc));
	}
	free(line);
	fclose(f);
	return rc;
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
	*o = find_opt(name, len);
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

enum { HELP_INDENT = 32, HELP_WIDTH = 80 };

/* Prints text from column HELP_INDENT, which the caller has reached, wrapped
 * to fit HELP_WIDTH at blanks and after the ':' of cipher lists. */
static void print_wrapped(FILE *out, const char *text)
{
	size_t col = HELP_INDENT;
	bool blank = false; /* a blank separates this word from the last */

	while (*text) {
		size_t n = strcspn(text, " :");

		n += text[n] == ':';
		if (col > HELP_INDENT && col + blank + n >= HELP_WIDTH) {
			fprintf(out, "\n%*s", HELP_INDENT, "");
			col = HELP_INDENT;
		} else if (blank) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, n, out);
		col += n;
		blank = text[n] == ' ';
		text += n + strspn(text + n, " ");
	}
	fputc('\n', out);
}

static void print_help(FILE *out)
{
	fputs("Usage: ktlsd --root DIR [OPTION]...\n"
	      "Serve the files under DIR over HTTPS, with kernel TLS where available.\n",
	      out);
	for (int g = 0; g < G_COUNT; g++) {
		fprintf(out, "\n%s:\n", group_names[g]);
		for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
			const struct opt *o = &options[i];
			char lhs[64], note[256], buf[64];
			int n;

			if (o->group != (enum opt_group)g)
				continue;
			n = snprintf(lhs, sizeof(lhs), "  --%s%s%s", o->name, o->value ? " " : "",
			             o->value ? o->value : "");
			if (n + 2 > HELP_INDENT)
				fprintf(out, "%s\n%*s", lhs, HELP_INDENT, "");
			else
				fprintf(out, "%-*s", HELP_INDENT, lhs);
			print_wrapped(out, o->help);
			if (o->type == T_UINT || o->type == T_MS)
				snprintf(note, sizeof(note), "(%s; default: %s)", range(o, buf),
				         o->def);
			else if (o->def)
				snprintf(note, sizeof(note), "(default: %s)", o->def);
			else
				continue;
			fprintf(out, "%*s", HELP_INDENT, "");
			print_wrapped(out, note);
		}
	}
	fputs("\nEvery option but --config, --check, --help and --version can also be set in the\n"
	      "--config file, one \"name value\" or \"name = value\" per line, '#' starting a\n"
	      "comment; quotes around a value are optional. Flags override the file, and a\n"
	      "repeatable flag (--listen, --listen-plain, --cert/--key) replaces the file's\n"
	      "list instead of adding to it.\n",
	      out);
}

void config_defaults(struct config *cfg)
{
	struct ctx c = {.errfp = stderr};

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].def && options[i].type != T_LISTEN &&
		    apply(cfg, &options[i], options[i].def, &c))
			abort(); /* a default that does not parse is a bug in the table */
}

void config_free(struct config *cfg)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		enum opt_type t = options[i].type;

		if (t == T_STRING || t == T_PATH_OR || t == T_PROTOCOLS)
			set_string(cfg, options[i].off, NULL);
	}
	free_certs(cfg);
	memset(cfg, 0, sizeof(*cfg));
}

const char *config_option_name(size_t i)
{
	return i < ARRAY_SIZE(options) ? options[i].name : NULL;
}

/* After all sources: the listen default and the checks that span options. */
static int finish(struct config *cfg, FILE *errfp)
{
	struct ctx c = {.errfp = errfp};
	size_t ncert = cert_count(cfg, CERT_OFF(cert_file));
	size_t nkey = cert_count(cfg, CERT_OFF(key_file));

	if (cfg->nlisten == 0 && cfg->nlisten_plain == 0) {
		const struct opt *o = find_opt("listen", strlen("listen"));

		if (apply(cfg, o, o->def, &c))
			abort();
	}
	if (!cfg->root && !cfg->check) {
		fputs("ktlsd: --root is required\n", errfp);
		return -1;
	}
	if (ncert != nkey) {
		fprintf(
		    errfp,
		    "ktlsd: --cert and --key must come in pairs, got %zu --cert and %zu --key\n",
		    ncert, nkey);
		return -1;
	}
	return 0;
}

enum config_result config_load(struct config *cfg, int argc, char **argv, FILE *outfp, FILE *errfp)
{
	struct ctx quiet = {0}, cli = {.errfp = errfp};
	const struct opt *o, *action = NULL;
	const char *v, *file = NULL;

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
	}
	if (action) {
		if (strcmp(action->name, "help") == 0)
			print_help(outfp);
		else
			fprintf(outfp, "ktlsd %s\n", PACKAGE_VERSION);
		config_free(cfg);
		return CONFIG_EXIT_OK;
	}
	if (file && *file && config_parse_file(cfg, file, errfp) < 0)
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
