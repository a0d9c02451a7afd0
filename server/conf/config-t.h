/* The types of the configuration (config.h has its functions), so that
 * the option table (config_options.c) can name fields without including
 * the loader that includes it. */
#ifndef KTLSD_SERVER_CONFIG_T_H
#define KTLSD_SERVER_CONFIG_T_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "proto/path_rule.h"

/* The file make install puts there and the systemd unit starts with. */
#ifndef SYSCONFDIR
#define SYSCONFDIR "/usr/local/etc"
#endif
#define CONFIG_DEFAULT_FILE SYSCONFDIR "/ktlsd/ktlsd.conf"
/* The unit's StateDirectory=ktlsd, plus acme/ (systemd/ktlsd.service.in). */
#define ACME_DIR_DEFAULT "/var/lib/ktlsd/acme"

#define CONFIG_MAX_LISTEN 16
#define CONFIG_MAX_CERTS 4
#define CONFIG_MAX_TICKET_KEYS 8
#define CONFIG_MAX_SITES 64
#define CONFIG_MAX_OPTIONS 96 /* rows of the option table (config_options.c) */
#define CONFIG_MAX_SERVER_NAMES 16
#define CONFIG_MAX_HEADERS 16
#define CONFIG_MAX_MIME_OVERRIDES 32
#define CONFIG_MAX_PATHS 32              /* [path] sections of one site */
#define CONFIG_MAX_ACL 32                /* allow and deny lines of one [path] */
#define CONFIG_MAX_ERROR_PAGES 16

struct config_listen {
	struct sockaddr_storage addr; /* AF_INET, AF_INET6, or AF_UNIX ("unix:/path") */
	socklen_t addrlen;
	char text[160];      /* as the user wrote it, options included, for messages */
	int fd;              /* a socket the service manager passed (3 and up), 0: bind addr */
	bool bound_here;     /* fd: a Unix socket ktlsd bound itself (listen_unix.h), not passed */
	uint64_t bound_ino;  /* ... and its file's inode: exit removes that file, no successor's */
	bool proxy_protocol; /* "proxy-protocol": each connection starts with a PROXY header */
};

struct config_cert {
	char *cert_file;
	char *key_file;
};

enum config_tristate { CONFIG_AUTO, CONFIG_ON, CONFIG_OFF };

/* A "[path PREFIX]" section: what applies beneath PREFIX of the site it
 * follows (the top level's, before any [site]). Not inherited by other
 * sites. */
struct config_path {
	char *prefix;                    /* as written: "/nightly/" */
	char *headers[CONFIG_MAX_HEADERS]; /* header "Name: value" (config_value_header) */
	size_t nheaders;
	int redirect_status;             /* redirect CODE URL; 0: none */
	char *redirect_to;
	struct path_acl acl[CONFIG_MAX_ACL]; /* allow, deny: in order */
	size_t nacl;
	unsigned line;                   /* of the section line, for messages */
};

/* --tls-records: who seals TLS records in user space. */
enum config_tls_records { CONFIG_RECORDS_KTLSD, CONFIG_RECORDS_OPENSSL };

/* --log-level, in order of verbosity: a message is logged when its level is
 * at most cfg->log_level. */
enum config_log_level { CONFIG_LOG_ERROR, CONFIG_LOG_WARN, CONFIG_LOG_INFO, CONFIG_LOG_DEBUG };

/* What may differ between the sites one process serves: the options the
 * table marks .site. The command line's flags set the top-level site; each
 * "[site NAME]" section of the config file adds one, which takes from the
 * top level what it does not set itself (all but server names). */
struct config_site {
	char *name;                      /* the section's NAME; NULL for the top level */
	char *server_names[CONFIG_MAX_SERVER_NAMES]; /* --server-name, repeatable */
	size_t nserver_names;
	char *root;                      /* --root DIR */
	struct config_cert certs[CONFIG_MAX_CERTS];  /* --cert FILE --key FILE, paired in order */
	size_t ncerts;
	char *headers[CONFIG_MAX_HEADERS]; /* --header "Name: value", repeatable */
	size_t nheaders;
	char *mime_overrides[CONFIG_MAX_MIME_OVERRIDES]; /* --mime-type "EXT TYPE", repeatable */
	size_t nmime_overrides;
	char *error_pages[CONFIG_MAX_ERROR_PAGES]; /* --error-page "CODE FILE", repeatable */
	size_t nerror_pages;
	bool precompressed;              /* --precompressed on|off: serve .br/.zst/.gz sidecars */
	bool autoindex;                  /* --autoindex on|off: list folders without index.html */
	unsigned autoindex_max_entries;  /* --autoindex-max-entries N shown in one listing */
	unsigned limit_conn;             /* --limit-conn N per client address, 0 = unlimited (per site) */
	unsigned limit_req;              /* --limit-req N requests/s per client address, 0 = unlimited (per site) */
	unsigned limit_rate;             /* --limit-rate BYTES per second per connection, 0 = unlimited (per site) */
	unsigned limit_rate_after;       /* --limit-rate-after BYTES free per connection (per site) */
	/* Which site options the section gave, by option index: the rest are
	 * inherited from the top level once every source is read. */
	bool set[CONFIG_MAX_OPTIONS];
	struct config_path *paths;       /* its [path] sections */
	size_t npaths;
	bool https_redirect;             /* --https-redirect on|off: plain HTTP gets a 301 */
	bool acme;                       /* --acme on|off: certificates from --acme-ca */
	const char *acme_dir;            /* with acme: the config's --acme-dir (borrowed) */
};

struct config {
	struct config_site site;         /* the top level's: the command line's flags */
	struct config_site *sites;       /* the config file's [site NAME] sections */
	size_t nsites;
	struct config_listen listen[CONFIG_MAX_LISTEN];   /* --listen ADDR:PORT, repeatable; 0.0.0.0:8443 when no --listen nor --listen-plain is given */
	size_t nlisten;
	struct config_listen listen_plain[CONFIG_MAX_LISTEN]; /* --listen-plain ADDR:PORT, repeatable; default none */
	size_t nlisten_plain;
	struct config_listen status_listen; /* --status-listen ADDR:PORT (metrics); default none */
	size_t nstatus_listen;           /* 0 or 1 */
	char *ticket_key_files[CONFIG_MAX_TICKET_KEYS]; /* --tls-ticket-key-file, first encrypts */
	size_t nticket_key_files;
	unsigned workers;                /* --workers N; 0 = one per allowed CPU */
	char *config_file;               /* --config FILE */
	bool check;                      /* --check: describe this machine, then exit */
	bool test_config;                /* --test-config: load everything, then exit */

	/* TLS */
	char *tls_protocols;             /* --tls-protocols "TLSv1.2 TLSv1.3" */
	char *tls13_ciphersuites;        /* --tls13-ciphersuites (OpenSSL syntax) */
	char *tls12_ciphers;             /* --tls12-ciphers (OpenSSL syntax) */
	bool tls_session_tickets;        /* --tls-session-tickets on|off */
	bool tls_prefer_server_ciphers;  /* --tls-prefer-server-ciphers on|off */
	unsigned tls_session_cache;      /* --tls-session-cache N (entries per worker, 0 = off) */
	unsigned tls_ticket_rotate_s;    /* --tls-ticket-rotate SECONDS */
	enum config_tristate ktls;       /* --ktls auto|on|off */
	enum config_tristate sendfile;   /* --sendfile auto|on|off */
	int tls_records;                 /* --tls-records ktlsd|openssl: enum config_tls_records */
	unsigned tls_rekey_records;      /* --tls-rekey-records N (0: each cipher's limit) */
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
	unsigned drain_delay_ms;         /* --drain-delay SECONDS */
	bool dotfiles;                   /* --dotfiles on|off (off: 404) */
	char *mime_types;                /* --mime-types FILE (default /etc/mime.types) */

	/* Logging */
	char *access_log;                /* --access-log FILE|stdout|stderr|off (default off); NULL = off */
	int access_log_format;           /* --access-log-format combined|json: enum access_log_format */
	char *error_log;                 /* --error-log FILE|stderr (default stderr); NULL = stderr */
	int log_level;                   /* --log-level error|warn|info|debug: enum config_log_level */
	char *pid_file;                  /* --pid-file FILE; NULL = none */
	char *user;                      /* --user USER: drop root after binding; NULL = stay */

	/* ACME (the sites with --acme on) */
	char *acme_ca;                   /* --acme-ca URL: the CA's directory */
	char *acme_ca_cert;              /* --acme-ca-cert FILE; NULL = the system's trust store */
	char *acme_dir;                  /* --acme-dir DIR: accounts, certificates, their state */
	char *acme_email;                /* --acme-email ADDRESS; NULL = no contact */
	bool acme_terms_agreed;          /* --acme-terms-agreed on|off */
	int acme_challenge;              /* --acme-challenge auto|http-01|tls-alpn-01: enum config_acme_challenge */
	char *acme_eab;                  /* --acme-eab "KID FILE"; NULL = none */
	char *acme_profile;              /* --acme-profile NAME; NULL = the CA's default */
};

/* --acme-challenge, in the placeholder's order. */
enum config_acme_challenge { CONFIG_ACME_AUTO, CONFIG_ACME_HTTP01, CONFIG_ACME_TLSALPN01 };

enum config_result {
	CONFIG_RUN = 0,      /* start the server */
	CONFIG_EXIT_OK = 1,  /* --help or --version printed: exit 0 */
	CONFIG_EXIT_ERR = 2, /* bad flag or config: a one-line error was printed: exit 2 */
};

#endif
