/* Configuration: one table of options serves the command line, the config
 * file and --help, so a flag and its config key can never drift apart.
 * Read-only after start; workers share it. */
#ifndef KTLSD_SERVER_CONFIG_H
#define KTLSD_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#define CONFIG_MAX_LISTEN 16
#define CONFIG_MAX_CERTS 4

struct config_listen {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char text[64]; /* as the user wrote it, for messages */
};

struct config_cert {
	char *cert_file;
	char *key_file;
};

enum config_tristate { CONFIG_AUTO, CONFIG_ON, CONFIG_OFF };

/* --log-level, in order of verbosity: a message is logged when its level is
 * at most cfg->log_level. */
enum config_log_level { CONFIG_LOG_ERROR, CONFIG_LOG_WARN, CONFIG_LOG_INFO, CONFIG_LOG_DEBUG };

struct config {
	char *root;                      /* --root DIR (required) */
	struct config_listen listen[CONFIG_MAX_LISTEN];   /* --listen ADDR:PORT, repeatable; 0.0.0.0:8443 when no --listen nor --listen-plain is given */
	size_t nlisten;
	struct config_listen listen_plain[CONFIG_MAX_LISTEN]; /* --listen-plain ADDR:PORT, repeatable; default none */
	size_t nlisten_plain;
	struct config_cert certs[CONFIG_MAX_CERTS];       /* --cert FILE --key FILE, paired in order */
	size_t ncerts;
	unsigned workers;                /* --workers N; 0 = one per allowed CPU */
	char *config_file;               /* --config FILE */
	bool check;                      /* --check: describe this machine, then exit */

	/* TLS */
	char *tls_protocols;             /* --tls-protocols "TLSv1.2 TLSv1.3" */
	char *tls13_ciphersuites;        /* --tls13-ciphersuites (OpenSSL syntax) */
	char *tls12_ciphers;             /* --tls12-ciphers (OpenSSL syntax) */
	bool tls_session_tickets;        /* --tls-session-tickets on|off */
	unsigned tls_session_cache;      /* --tls-session-cache N (entries per worker, 0 = off) */
	unsigned tls_ticket_rotate_s;    /* --tls-ticket-rotate SECONDS */
	enum config_tristate ktls;       /* --ktls auto|on|off */
	bool sendfile;                   /* --sendfile on|off */
	bool h2;                         /* --h2 on|off */
	bool h2_sendfile;                /* --h2-sendfile on|off (expert, off) */
	unsigned h2_max_streams;         /* --h2-max-streams N */
	unsigned h2_max_header_list;     /* --h2-max-header-list BYTES */
	unsigned h2_reset_rate;          /* --h2-reset-rate N per second */
	unsigned h2_max_continuations;   /* --h2-max-continuations N */
	unsigned h2_buffer;              /* --h2-buffer BYTES */

	/* HTTP limits and timeouts */
	unsigned max_header_bytes;       /* --max-header-size BYTES */
	unsigned max_headers;            /* --max-headers N */
	unsigned max_uri;                /* --max-uri BYTES */
	unsigned max_connections;        /* --max-connections N (per worker) */
	unsigned keepalive_requests;     /* --keepalive-requests N */
	unsigned handshake_timeout_ms;   /* --handshake-timeout SECONDS */
	unsigned header_timeout_ms;      /* --header-timeout SECONDS */
	unsigned idle_timeout_ms;        /* --idle-timeout SECONDS */
	unsigned send_timeout_ms;        /* --send-timeout SECONDS */
	unsigned shutdown_grace_ms;      /* --shutdown-grace SECONDS */
	bool dotfiles;                   /* --dotfiles on|off (off: 404) */
	char *mime_types;                /* --mime-types FILE (default /etc/mime.types) */

	/* Logging */
	char *access_log;                /* --access-log FILE|off (default off); NULL = off */
	char *error_log;                 /* --error-log FILE|stderr (default stderr); NULL = stderr */
	int log_level;                   /* --log-level error|warn|info|debug: enum config_log_level */
	char *pid_file;                  /* --pid-file FILE; NULL = none */
	char *user;                      /* --user USER: drop root after binding; NULL = stay */
};

enum config_result {
	CONFIG_RUN = 0,      /* start the server */
	CONFIG_EXIT_OK = 1,  /* --help or --version printed: exit 0 */
	CONFIG_EXIT_ERR = 2, /* bad flag or config: a one-line error was printed: exit 2 */
};

/* Defaults, then the config file (if --config appears anywhere on the command
 * line), then the command line, so flags override the file. A repeatable
 * option (--listen, --listen-plain, --cert/--key as one list of pairs) given
 * on the command line replaces the file's list instead of appending to it.
 * --help and --version win over everything else on the line. Errors go to
 * errfp as one line naming the key and the reason. cfg need not be
 * initialised; on CONFIG_EXIT_* it has already been freed (config_free on it
 * is then a harmless no-op). */
enum config_result config_load(struct config *cfg, int argc, char **argv, FILE *outfp,
			       FILE *errfp);

/* Parses one config file (same keys as the flags without "--", "key value"
 * or "key = value" per line, '#' comments). Within the file a repeatable key
 * appends; its first occurrence replaces what cfg held. Exposed for tests.
 * Returns 0, or a negative errno after printing one line to errfp. */
int config_parse_file(struct config *cfg, const char *path, FILE *errfp);

/* Fills every field with its default, except the listen default, which
 * config_load applies only when no listener was configured. */
void config_defaults(struct config *cfg);
/* Frees what cfg owns and zeroes it, so calling it twice is safe. */
void config_free(struct config *cfg);

/* Whether running with new instead of old (a SIGHUP) needs a restart: the
 * listeners are bound, the logs and the pid file opened, and root dropped
 * once at start, so --listen, --listen-plain (addresses, not only counts),
 * --user, --pid-file, --error-log and --access-log cannot change in a
 * running process. --workers is compared by the caller, which knows what 0
 * stands for. Returns true and writes the first difference into why
 * ("listeners cannot change without a restart (listen 127.0.0.1:8443
 * removed)"); false when new can be applied as it is. */
bool config_restart_needed(const struct config *old, const struct config *new, char *why,
			   size_t n);

/* Name (without "--") of the i-th option in the table, NULL past the end:
 * lets tests and shell completion walk every option. */
const char *config_option_name(size_t i);

#endif
