#include "server/conf/config_options.h"

#include <string.h>

static const char *const group_names[G_COUNT] = {"General", "TLS", "HTTP limits and timeouts",
						 "Logging", "Certificates from an ACME CA"};

#define OPT(n, v, t, g, o, d, h, ...)                                                              \
	{                                                                                          \
		.name = n, .value = v, .type = t, .group = g, .off = o, .def = d, .help = h,       \
		__VA_ARGS__                                                                        \
	}
#define S_MS(s) ((s)*1000u)

const struct opt config_options[] = {
    OPT("root", "DIR", T_STRING, G_GENERAL, SITE_OFF(root), NULL,
        "Directory to serve (required, unless every [site] section of the config file "
        "names its own).",
        .site = true),
    OPT("server-name", "NAME", T_NAME, G_GENERAL, SITE_OFF(server_names), NULL,
        "A host name of the site, exact (dl.example.org) or a wildcard of one or more "
        "leading labels (*.example.org); repeatable. TLS picks the site's certificate by "
        "the client's SNI, and a request whose Host names another site of this server "
        "is answered 421. The top-level site, or else the first [site], also serves "
        "clients that name none of them.",
        .count_off = SITE_OFF(nserver_names), .max = CONFIG_MAX_SERVER_NAMES, .site = true),
    OPT("listen", "ADDR:PORT", T_LISTEN, G_GENERAL, OFF(listen), "0.0.0.0:8443",
        "Accept HTTPS here; repeatable. ADDR:PORT, [IPV6]:PORT, :PORT, PORT or unix:/PATH (a "
        "Unix socket, mode 0666, removed at exit), optionally followed by proxy-protocol: "
        "each connection must then begin with a PROXY protocol v1 or v2 header (from HAProxy, "
        "a cloud load balancer), whose client address the logs show; one without it is "
        "closed. The default applies only when neither --listen nor --listen-plain is given.",
        .count_off = OFF(nlisten)),
    OPT("listen-plain", "ADDR:PORT", T_LISTEN, G_GENERAL, OFF(listen_plain), NULL,
        "Accept plain HTTP here; repeatable, same forms and options as --listen.",
        .count_off = OFF(nlisten_plain)),
    OPT("status-listen", "ADDR:PORT", T_LISTEN, G_GENERAL, OFF(status_listen), NULL,
        "Serve metrics here over plain HTTP: Prometheus text at /metrics, JSON at /status. "
        "One address, same forms as --listen; keep it on loopback or a private network. "
        "Off unless given.",
        .count_off = OFF(nstatus_listen), .max = 1),
    OPT("workers", "N", T_UINT, G_GENERAL, OFF(workers), "0",
        "Worker threads; 0 means one per CPU this process may run on.", .max = 1024),
    OPT("config", "FILE", T_STRING, G_GENERAL, OFF(config_file), NULL,
        "Read options from FILE first, one \"name value\" per line; flags override it. "
        "With neither --config nor --root, " CONFIG_DEFAULT_FILE " is read where it exists.",
        .cli_only = true),
    OPT("help", NULL, T_ACTION, G_GENERAL, 0, NULL, "Print this help and exit.", .cli_only = true),
    OPT("version", NULL, T_ACTION, G_GENERAL, 0, NULL, "Print the version and exit.",
        .cli_only = true),
    OPT("check", NULL, T_FLAG, G_GENERAL, OFF(check), NULL,
        "Print what this machine offers (kernel TLS, OpenSSL, io_uring) and the path a "
        "connection would take under the other flags; given a root, also load the "
        "configuration as --test-config does. Exit non-zero if it does not load.",
        .cli_only = true),
    OPT("test-config", NULL, T_FLAG, G_GENERAL, OFF(test_config), NULL,
        "Load the configuration as a start would (config file, root, certificates and "
        "keys, the listeners' syntax, --user, log files) without binding or serving; "
        "print the first problem and exit non-zero, or print \"configuration ok\" and "
        "exit 0. It also fails on a root the --user cannot read, and on what a start only "
        "warns of: an expired certificate, a server name no certificate of its site "
        "covers; a certificate that ends within 14 days is warned of.",
        .cli_only = true),

    OPT("cert", "FILE", T_CERT, G_TLS, CERT_OFF(cert_file), NULL,
        "Certificate chain (PEM); repeatable, paired in order with --key: one ECDSA "
        "and one RSA pair per site, picked by the client's signature algorithms.",
        .site = true),
    OPT("key", "FILE", T_CERT, G_TLS, CERT_OFF(key_file), NULL,
        "Private key (PEM) for the --cert in the same place.", .site = true),
    OPT("tls-ticket-key-file", "FILE", T_PATHS, G_TLS, OFF(ticket_key_files), NULL,
        "Session ticket keys shared by a fleet, in nginx's ssl_session_ticket_key format (48 "
        "or 80 random bytes); repeatable, up to 8: the first encrypts, all decrypt. SIGHUP "
        "rereads them. Default: keys derived from a random secret, rotated every "
        "--tls-ticket-rotate.",
        .count_off = OFF(nticket_key_files), .max = CONFIG_MAX_TICKET_KEYS),
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
    OPT("tls-prefer-server-ciphers", "on|off", T_BOOL, G_TLS, OFF(tls_prefer_server_ciphers), "on",
        "Choose the cipher in the order of --tls13-ciphersuites and --tls12-ciphers, not the "
        "client's (nginx's ssl_prefer_server_ciphers). A client that puts ChaCha20-Poly1305 "
        "first (one without AES instructions) still gets it."),
    OPT("tls-session-tickets", "on|off", T_BOOL, G_TLS, OFF(tls_session_tickets), "on",
        "Offer stateless session resumption."),
    OPT("tls-session-cache", "N", T_UINT, G_TLS, OFF(tls_session_cache), "20000",
        "Session cache entries per worker; 0 turns the cache off.", .max = 1000000),
    OPT("tls-ticket-rotate", "SECONDS", T_UINT, G_TLS, OFF(tls_ticket_rotate_s), "3600",
        "Replace the session ticket key this often.", .min = 60, .max = 604800),
    OPT("ktls", "auto|on|off", T_TRISTATE, G_TLS, OFF(ktls), "auto",
        "Kernel TLS: auto falls back to user space, on refuses to start without it."),
    OPT("sendfile", "auto|on|off", T_TRISTATE, G_TLS, OFF(sendfile), "auto",
        "Zero-copy file bodies where the socket encrypts by itself (kTLS) or is plain HTTP: "
        "HTTP/1.1 by sendfile of cached file bytes (else file -> pipe -> socket splices on "
        "the ring), HTTP/2 from the file's mapped pages (files of 256 KiB and more). auto: "
        "zero copy only where measured faster than copying (kTLS bodies of 64 KiB and "
        "more); on: wherever possible; off: "
        "never (read into user memory, then send). Under --tls-records ktlsd, auto and on "
        "seal HTTP/1.1 bodies and HTTP/2 DATA of 256 KiB and more from the file's mapped "
        "pages where they are cached, rather than read them first, for downloads whose file "
        "comes from the disk; other downloads of cached pages, slow or fast, read them, "
        "which seals for less."),
    OPT("tls-records", "ktlsd|openssl", T_ENUM, G_TLS, OFF(tls_records), "ktlsd",
        "Who encrypts what is sent where the kernel does not (no kernel TLS, or --ktls "
        "off): ktlsd seals records straight from its send buffer (or the file's mapped "
        "pages: --sendfile) with the keys OpenSSL "
        "hands over as it would to the kernel, one copy of every byte less than openssl, "
        "which takes them through SSL_write. The handshake is OpenSSL's either way."),
    OPT("tls-rekey-records", "N", T_UINT, G_TLS, OFF(tls_rekey_records), "0",
        "TLS records one key seals before it is replaced: ktlsd re-keys a TLS 1.3 connection "
        "whose records it seals (KeyUpdate), and ends any other (TLS 1.2, kernel TLS, "
        "--tls-records openssl) after its current response. 0: each cipher's own limit "
        "(RFC 8446 5.5): 16777216 for AES-GCM, none for ChaCha20-Poly1305. A value may lower "
        "a limit, never raise it.",
        .max = 16777216),
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
    OPT("limit-req", "N", T_UINT, G_HTTP, SITE_OFF(limit_req), "0",
        "Requests per second per client address (IPv6: the full address), across all "
        "workers, with a burst of one second's worth; 0: no limit. Over it a request is "
        "answered 429 and the connection stays. Counted against the connection's site, as "
        "--limit-conn.",
        .max = 1000000, .site = true),
    OPT("limit-conn", "N", T_UINT, G_HTTP, SITE_OFF(limit_conn), "0",
        "Open connections per client address (IPv6: the full address), across all workers; "
        "0: no limit. Over it, HTTP/1.1 answers 429 to the first request and closes; HTTP/2 "
        "answers 429 to the streams, then GOAWAY. HTTP/2 counts the connection, not its "
        "streams. A TLS connection counts against its SNI's site; plain HTTP, whose site "
        "each request names anew, against the top-level site's (or the first [site]'s).",
        .max = 1000000, .site = true),
    OPT("limit-rate", "BYTES", T_BYTES, G_HTTP, SITE_OFF(limit_rate), "0",
        "Bytes per second each connection may send (HTTP/2: the whole connection), k, m or g "
        "after the number for 1024, 1024^2, 1024^3; 0: no limit.",
        .max = 1u << 30, .site = true),
    OPT("limit-rate-after", "BYTES", T_BYTES, G_HTTP, SITE_OFF(limit_rate_after), "0",
        "With --limit-rate, the first BYTES of each connection (not of each request) go out "
        "unlimited.",
        .max = 2u << 30, .site = true),
    OPT("keepalive-requests", "N", T_UINT, G_HTTP, OFF(keepalive_requests), "10000",
        "Requests per connection (HTTP/2: streams) before it is closed.", .min = 1, .max = 1000000),
    OPT("handshake-timeout", "SECONDS", T_MS, G_HTTP, OFF(handshake_timeout_ms), "10",
        "Time allowed for the TLS handshake; decimals allowed (2.5).", .min = 1, .max = S_MS(3600)),
    OPT("header-timeout", "SECONDS", T_MS, G_HTTP, OFF(header_timeout_ms), "10",
        "Time allowed to receive a request head (HTTP/2: a header block).", .min = 1, .max = S_MS(3600)),
    OPT("idle-timeout", "SECONDS", T_MS, G_HTTP, OFF(idle_timeout_ms), "60",
        "Close a connection idle between requests (HTTP/2: streams) this long.", .min = 1, .max = S_MS(86400)),
    OPT("send-timeout", "SECONDS", T_MS, G_HTTP, OFF(send_timeout_ms), "60",
        "Close a connection whose socket accepts nothing of ours this long.", .min = 1, .max = S_MS(86400)),
    OPT("drain-delay", "SECONDS", T_MS, G_HTTP, OFF(drain_delay_ms), "0",
        "After SIGTERM, go on serving this long with /healthz on --status-listen answering 503, "
        "so that a load balancer drains this node before its listeners close; a second SIGTERM "
        "ends the wait.",
        .max = S_MS(3600)),
    OPT("shutdown-grace", "SECONDS", T_MS, G_HTTP, OFF(shutdown_grace_ms), "30",
        "On SIGTERM, let requests in flight finish this long; 0 closes at once.",
        .max = S_MS(3600)),
    OPT("h2-max-streams", "N", T_UINT, G_HTTP, OFF(h2_max_streams), "128",
        "HTTP/2: concurrent streams per connection.", .min = 1, .max = 10000),
    OPT("h2-max-header-list", "BYTES", T_UINT, G_HTTP, OFF(h2_max_header_list), "65536",
        "HTTP/2: largest decoded request header list.", .min = 1024, .max = 1048576),
    OPT("h2-reset-rate", "N", T_UINT, G_HTTP, OFF(h2_reset_rate), "100",
        "HTTP/2: stream resets per second a client may cause, its own or ours (burst "
        "10x), before GOAWAY (rapid reset, MadeYouReset).",
        .min = 1, .max = 1000000),
    OPT("h2-max-continuations", "N", T_UINT, G_HTTP, OFF(h2_max_continuations), "8",
        "HTTP/2: CONTINUATION frames per header block (CONTINUATION flood).", .min = 1,
        .max = 1000),
    OPT("h2-buffer", "BYTES", T_UINT, G_HTTP, OFF(h2_buffer), "262144",
        "HTTP/2: write buffer per connection; each fills with whole frames and leaves in "
        "one send.",
        .min = 32768, .max = 4194304),
    OPT("dotfiles", "on|off", T_BOOL, G_HTTP, OFF(dotfiles), "off",
        "Serve names starting with '.'; off answers 404, except for a leading "
        "/.well-known/ (RFC 8615: ACME HTTP-01 challenges, security.txt), whose own "
        "dot names stay hidden."),
    OPT("header", "\"NAME: VALUE\"", T_HEADER, G_HTTP, SITE_OFF(headers), NULL,
        "Add this field to the site's file responses and redirects (2xx and 3xx), e.g. "
        "\"Strict-Transport-Security: max-age=31536000\"; repeatable, up to 16. A "
        "[site] that gives none takes the top level's.",
        .count_off = SITE_OFF(nheaders), .max = CONFIG_MAX_HEADERS, .site = true),
    OPT("mime-type", "\"EXT TYPE\"", T_MIME, G_HTTP, SITE_OFF(mime_overrides), NULL,
        "Serve files ending in .EXT as TYPE, over --mime-types, e.g. \"iso "
        "application/x-iso9660-image\"; repeatable, up to 32.",
        .count_off = SITE_OFF(nmime_overrides), .max = CONFIG_MAX_MIME_OVERRIDES, .site = true),
    OPT("precompressed", "on|off", T_BOOL, G_HTTP, SITE_OFF(precompressed), "off",
        "Serve FILE.br, FILE.zst or FILE.gz in place of FILE to a client whose "
        "Accept-Encoding takes that coding (highest q; ties: br, zstd, gzip), with "
        "Content-Encoding and FILE's Content-Type; every file response then carries "
        "Vary: Accept-Encoding. Nothing is compressed on the fly. Off by default: a .gz "
        "beside a file is not always its compressed copy.",
        .site = true),
    OPT("autoindex", "on|off", T_BOOL, G_HTTP, SITE_OFF(autoindex), "off",
        "List a folder that has no index.html, as HTML or, for Accept: application/json or "
        "?format=json, as JSON; off answers 404.",
        .site = true),
    OPT("error-page", "\"CODE FILE\"", T_PATHS, G_HTTP, SITE_OFF(error_pages), NULL,
        "Answer the status CODE (400 to 599) with FILE's bytes as its HTML page, in place "
        "of ktlsd's own; repeatable, up to 16. FILE (at most 16 KiB) is read at start and "
        "at each reload, as the certificates are.",
        .count_off = SITE_OFF(nerror_pages), .max = CONFIG_MAX_ERROR_PAGES, .site = true),
    OPT("https-redirect", "on|off", T_BOOL, G_HTTP, SITE_OFF(https_redirect), "off",
        "Answer every plain HTTP request with a 301 to the same URL over https:// (the "
        "host without its port, and the first --listen's port unless it is 443), as "
        "nginx's \"return 301 https://$host$request_uri\"; the TLS listeners serve as "
        "before.",
        .site = true),
    OPT("autoindex-max-entries", "N", T_UINT, G_HTTP, SITE_OFF(autoindex_max_entries), "250000",
        "The most entries a listing shows. A folder with more is answered 500 (a limit of "
        "the server's, not the client's fault), with one warning naming it in the error "
        "log; while it stays unchanged (its mtime), asking again answers at once, without "
        "reading it anew. Each entry holds about 100 bytes of the listing thread's memory "
        "while the listing is made.",
        .min = 1, .max = 10000000, .site = true),
    OPT("mime-types", "FILE", T_STRING, G_HTTP, OFF(mime_types), "/etc/mime.types",
        "Content-Type by file extension, in mime.types format (\"type ext ext...\"); a "
        "built-in list fills in what the file lacks, or all of it if the file cannot be read."),

    OPT("access-log", "FILE|stdout|stderr|off", T_PATH_OR, G_LOG, OFF(access_log), "off",
        "Log each request to FILE (reopened on SIGUSR1 and SIGHUP; never through a symbolic "
        "link, nor a file with other hard links), or to stdout or stderr as they are: a pipe, "
        "a socket (journald), a terminal."),
    OPT("access-log-format", "combined|json", T_ENUM, G_LOG, OFF(access_log_format), "combined",
        "combined: nginx's combined format, then ktlsd's fields (request time, protocol, TLS "
        "version, cipher, ktls= body= path, host=, sent=, end=); json: one JSON object per "
        "line with the same fields."),
    OPT("error-log", "FILE|stderr", T_PATH_OR, G_LOG, OFF(error_log), "stderr",
        "Where errors and notices go (a FILE as --access-log's)."),
    OPT("log-level", "error|warn|info|debug", T_ENUM, G_LOG, OFF(log_level), "info",
        "Least severe message to log."),
    OPT("pid-file", "FILE", T_STRING, G_LOG, OFF(pid_file), NULL, "Write the process id to FILE (never through a symbolic link); it is removed at exit."),

    OPT("acme", "on|off", T_BOOL, G_ACME, SITE_OFF(acme), "off",
        "Get the site's certificate from --acme-ca and renew it, for its exact server "
        "names (wildcards need DNS-01, which ktlsd does not do: they are left out). The "
        "certificate is kept in --acme-dir and served from the first connection after a "
        "restart; until the CA issues the first one, the site serves a self-signed "
        "placeholder that says so. A site with acme on names no cert or key of its own.",
        .site = true),
    OPT("acme-ca", "URL", T_STRING, G_ACME, OFF(acme_ca),
        "https://acme-v02.api.letsencrypt.org/directory",
        "The ACME directory of the CA (https:// only), e.g. Let's Encrypt's staging "
        "https://acme-staging-v02.api.letsencrypt.org/directory while trying things out."),
    OPT("acme-ca-cert", "FILE", T_STRING, G_ACME, OFF(acme_ca_cert), NULL,
        "CA certificates (PEM) to verify the ACME server by, for a private CA (step-ca, "
        "pebble); the system's trust store unless given."),
    OPT("acme-dir", "DIR", T_STRING, G_ACME, OFF(acme_dir), ACME_DIR_DEFAULT,
        "Where the account keys, certificates and their state are kept: made mode 0700 "
        "at start, owned by --user, and written by nobody else. Keep it across restarts: "
        "a CA limits how often it issues the same names."),
    OPT("acme-email", "ADDRESS", T_STRING, G_ACME, OFF(acme_email), NULL,
        "The account's contact, for the CA's expiry and policy mail; none unless given."),
    OPT("acme-terms-agreed", "on|off", T_BOOL, G_ACME, OFF(acme_terms_agreed), "off",
        "Agree to the CA's terms of service. A CA that has terms makes no account without "
        "this; the error log then gives their URL."),
    OPT("acme-challenge", "auto|http-01|tls-alpn-01", T_ENUM, G_ACME, OFF(acme_challenge), "auto",
        "How the CA checks that the names are this server's: http-01 asks port 80 for "
        "/.well-known/acme-challenge/ (needs a --listen-plain the CA reaches there), "
        "tls-alpn-01 asks port 443 for a handshake (needs a --listen there); auto is "
        "http-01 when there is a --listen-plain, else tls-alpn-01. The workers answer "
        "either without blocking."),
    OPT("acme-eab", "\"KID FILE\"", T_STRING, G_ACME, OFF(acme_eab), NULL,
        "External account binding, for CAs that want it (ZeroSSL, Google Trust Services): "
        "the key id the CA gave and a file holding its MAC key, base64url."),
    OPT("acme-profile", "NAME", T_STRING, G_ACME, OFF(acme_profile), NULL,
        "The certificate profile to order, one of those the CA's directory lists "
        "(Let's Encrypt: classic, tlsserver, shortlived); the CA's default unless given. A "
        "name the CA does not list orders nothing: the error log gives the CA's list."),
    OPT("user", "USER", T_STRING, G_GENERAL, OFF(user), NULL,
        "After binding the listeners and reading the keys, run as USER with no capability; a "
        "privileged helper process stays root only to read the files a reload needs and to "
        "reopen the logs."),
};

const size_t config_noptions = sizeof(config_options) / sizeof(config_options[0]);
_Static_assert(sizeof(config_options) / sizeof(config_options[0]) <= CONFIG_MAX_OPTIONS,
	       "raise CONFIG_MAX_OPTIONS");

const struct opt *config_find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < config_noptions; i++)
		if (strlen(config_options[i].name) == len && memcmp(config_options[i].name, name, len) == 0)
			return &config_options[i];
	return NULL;
}

/* A T_BYTES bound with the largest suffix that divides it ("1g"). */
static void bytes_text(unsigned v, char buf[static 16])
{
	static const char units[] = "kmg";
	int u = 0;

	while (u < 3 && v && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, 16, u ? "%u%c" : "%u", v, u ? units[u - 1] : 0);
}

/* "MIN to MAX" of a T_UINT, T_MS or T_BYTES, as the user would write them. */
const char *config_option_range(const struct opt *o, char buf[static 64])
{
	char lo[16], hi[16];

	if (o->type == T_MS) {
		snprintf(buf, 64, "%.10g to %.10g", o->min / 1000.0, o->max / 1000.0);
	} else if (o->type == T_BYTES) {
		bytes_text(o->min, lo);
		bytes_text(o->max, hi);
		snprintf(buf, 64, "%s to %s", lo, hi);
	} else {
		snprintf(buf, 64, "%u to %u", o->min, o->max);
	}
	return buf;
}

const char *config_group_name(enum opt_group g)
{
	return g < G_COUNT ? group_names[g] : NULL;
}

const char *config_option_note(const struct opt *o, char buf[static 256])
{
	char range[64];

	if (o->type == T_UINT || o->type == T_MS || o->type == T_BYTES)
		snprintf(buf, 256, "(%s; default: %s)", config_option_range(o, range), o->def);
	else if (o->def)
		snprintf(buf, 256, "(default: %s)", o->def);
	else
		return NULL;
	return buf;
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

void config_print_help(FILE *out)
{
	fputs("Usage: ktlsd --root DIR [OPTION]...\n"
	      "Serve the files under DIR over HTTPS, with kernel TLS where available.\n",
	      out);
	for (int g = 0; g < G_COUNT; g++) {
		fprintf(out, "\n%s:\n", group_names[g]);
		for (size_t i = 0; i < config_noptions; i++) {
			const struct opt *o = &config_options[i];
			char lhs[64], buf[256];
			const char *note;
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
			note = config_option_note(o, buf);
			if (!note)
				continue;
			fprintf(out, "%*s", HELP_INDENT, "");
			print_wrapped(out, note);
		}
	}
	fputs("\n", out);
	fputs(config_file_rules, out);
	fputs("\nSignals: SIGTERM finishes the responses in flight (--shutdown-grace) and exits;\n"
	      "SIGINT and SIGQUIT exit at once; SIGHUP reloads the configuration and reopens\n"
	      "the logs; SIGUSR1 reopens the logs (logrotate: rename, then SIGUSR1).\n",
	      out);
}

const char config_file_rules[] =
    "Every option but --config, --check, --test-config, --help and --version can also\n"
    "be set in the --config file, one \"name value\" or \"name = value\" per line, '#'\n"
    "starting a comment; quotes around a value are optional. Flags override the file,\n"
    "and a repeatable flag (--listen, --listen-plain, --cert/--key,\n"
    "--tls-ticket-key-file) replaces the file's list instead of adding to it.\n"
    "\n"
    "More sites: a line \"[site NAME]\" in the file starts a section that ends at the\n"
    "next one or at the end of the file; in it go the options that may differ between\n"
    "sites: server-name, root, cert, key, header, mime-type, precompressed, autoindex,\n"
    "autoindex-max-entries, https-redirect, error-page, limit-req, limit-conn,\n"
    "limit-rate, limit-rate-after and acme. A section takes what it does not set\n"
    "(but server names) from the lines above the first section and the flags.\n"
    "\n"
    "Per folder: a line \"[path PREFIX]\" (PREFIX starting with '/') starts a section\n"
    "for the requests beneath PREFIX of the site above it (the top level's before any\n"
    "[site]); the longest PREFIX that holds a request's normalised path applies. In it:\n"
    "header \"Name: value\" (repeatable; replaces the site's field of that name),\n"
    "redirect CODE URL (301, 302, 307 or 308; what follows PREFIX, and the query, are\n"
    "added to URL), allow and deny ADDR, ADDR/BITS or all (in order, the first that\n"
    "matches the client decides; none: allowed; denied: 403). It ends at the next\n"
    "section.\n";

const char *config_option_name(size_t i)
{
	return i < config_noptions ? config_options[i].name : NULL;
}

