/* Tests server/conf/config.c: every option type in both flag forms, the config
 * file syntax, the order sources override each other in, and every error
 * message, which must be exactly one line. Runs under ASan, so each test
 * frees what it loads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/conf/config.h"
#include "server/conf/config_options.h"
#include "tests/unit/check_run.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

/* The default file these tests see: none (main points config_default_file
 * here), whatever a make install left on this machine. */
#define NO_DEFAULT "/nonexistent/ktlsd-test/ktlsd.conf"
#define NO_ROOT                                                                                    \
	"ktlsd: --root is required (or --config FILE; with neither, " NO_DEFAULT                   \
	" is read where it exists)"

struct run {
	struct config cfg;
	enum config_result rc;
	char *out, *err;
	size_t outlen, errlen;
};

/* Runs config_load on "ktlsd" plus the NULL-terminated arguments. */
static void run_argv(struct run *r, ...)
{
	char *argv[64] = {"ktlsd"};
	int argc = 1;
	va_list ap;
	FILE *out, *err;

	memset(r, 0, sizeof(*r));
	va_start(ap, r);
	for (char *a; (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	out = open_memstream(&r->out, &r->outlen);
	err = open_memstream(&r->err, &r->errlen);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(err);
	r->rc = config_load(&r->cfg, argc, argv, NULL, out, err);
	fclose(out);
	fclose(err);
}
#define RUN(r, ...) run_argv(r, ##__VA_ARGS__, (char *)NULL)

static void done(struct run *r)
{
	config_free(&r->cfg);
	free(r->out);
	free(r->err);
}

/* Loads successfully, with nothing on either stream. */
#define RUN_OK(r, ...)                                                                             \
	do {                                                                                       \
		RUN(r, __VA_ARGS__);                                                               \
		ck_assert_str_eq((r)->err, "");                                                    \
		ck_assert_str_eq((r)->out, "");                                                    \
		ck_assert_int_eq((r)->rc, CONFIG_RUN);                                             \
	} while (0)

/* Fails with exactly the one line msg (given without its newline). */
#define RUN_ERR(msg, ...)                                                                          \
	do {                                                                                       \
		struct run r_;                                                                     \
		RUN(&r_, ##__VA_ARGS__);                                                           \
		ck_assert_str_eq(r_.err, msg "\n");                                                \
		ck_assert_str_eq(r_.out, "");                                                      \
		ck_assert_int_eq(r_.rc, CONFIG_EXIT_ERR);                                          \
		done(&r_);                                                                         \
	} while (0)

/* A config file with the given text; the caller unlinks and frees it. */
static char *conf(const char *text)
{
	char *path = strdup("/tmp/ktlsd-test-config-XXXXXX");
	int fd;

	ck_assert_ptr_nonnull(path);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void unconf(char *path)
{
	unlink(path);
	free(path);
}

/* config_parse_file of text into a fresh default config; *err gets what it
 * printed. */
static int parse_text(struct config *cfg, const char *text, char **err)
{
	char *path = conf(text);
	size_t len;
	FILE *fp = open_memstream(err, &len);
	int rc;

	config_defaults(cfg);
	rc = config_parse_file(cfg, path, fp);
	fclose(fp);
	unconf(path);
	return rc;
}

#define FILE_ERR(text, msg)                                                                        \
	do {                                                                                       \
		struct config c_;                                                                  \
		char *path_ = conf(text), *err_, *want_;                                           \
		size_t len_;                                                                       \
		FILE *fp_ = open_memstream(&err_, &len_);                                          \
		config_defaults(&c_);                                                              \
		ck_assert_int_eq(config_parse_file(&c_, path_, fp_), -EINVAL);                     \
		fclose(fp_);                                                                       \
		ck_assert_int_gt(asprintf(&want_, "ktlsd: %s:%s\n", path_, msg), 0);               \
		ck_assert_str_eq(err_, want_);                                                     \
		free(want_);                                                                       \
		free(err_);                                                                        \
		config_free(&c_);                                                                  \
		unconf(path_);                                                                     \
	} while (0)

static unsigned port_of(const struct config_listen *l)
{
	if (l->addr.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&l->addr)->sin6_port);
	return ntohs(((const struct sockaddr_in *)&l->addr)->sin_port);
}

static const char *addr_of(const struct config_listen *l, char buf[static INET6_ADDRSTRLEN])
{
	const void *a = l->addr.ss_family == AF_INET6
	                    ? (const void *)&((const struct sockaddr_in6 *)&l->addr)->sin6_addr
	                    : (const void *)&((const struct sockaddr_in *)&l->addr)->sin_addr;

	return inet_ntop(l->addr.ss_family, a, buf, INET6_ADDRSTRLEN);
}

START_TEST(test_defaults)
{
	struct run r;
	char buf[INET6_ADDRSTRLEN];

	RUN_OK(&r, "--root", "/srv");
	ck_assert_str_eq(r.cfg.site.root, "/srv");
	ck_assert_uint_eq(r.cfg.nlisten, 1);
	ck_assert_str_eq(r.cfg.listen[0].text, "0.0.0.0:8443");
	ck_assert_int_eq(r.cfg.listen[0].addr.ss_family, AF_INET);
	ck_assert_uint_eq(r.cfg.listen[0].addrlen, sizeof(struct sockaddr_in));
	ck_assert_str_eq(addr_of(&r.cfg.listen[0], buf), "0.0.0.0");
	ck_assert_uint_eq(port_of(&r.cfg.listen[0]), 8443);
	ck_assert_uint_eq(r.cfg.nlisten_plain, 0);
	ck_assert_uint_eq(r.cfg.site.ncerts, 0);
	ck_assert_uint_eq(r.cfg.workers, 0);
	ck_assert_ptr_null(r.cfg.config_file);
	ck_assert_str_eq(r.cfg.tls_protocols, "TLSv1.2 TLSv1.3");
	ck_assert_str_eq(
	    r.cfg.tls13_ciphersuites,
	    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
	ck_assert_str_eq(r.cfg.tls12_ciphers,
	                 "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
	                 "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
	                 "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305");
	ck_assert(r.cfg.tls_session_tickets);
	ck_assert_uint_eq(r.cfg.tls_session_cache, 20000);
	ck_assert_uint_eq(r.cfg.tls_ticket_rotate_s, 3600);
	ck_assert_int_eq(r.cfg.ktls, CONFIG_AUTO);
	ck_assert_int_eq(r.cfg.sendfile, CONFIG_AUTO);
	ck_assert(r.cfg.h2);
	ck_assert_uint_eq(r.cfg.max_header_bytes, 8192);
	ck_assert_uint_eq(r.cfg.max_headers, 100);
	ck_assert_uint_eq(r.cfg.max_uri, 4096);
	ck_assert_uint_eq(r.cfg.max_connections, 16384);
	ck_assert_uint_eq(r.cfg.keepalive_requests, 10000);
	ck_assert_uint_eq(r.cfg.handshake_timeout_ms, 10000);
	ck_assert_uint_eq(r.cfg.header_timeout_ms, 10000);
	ck_assert_uint_eq(r.cfg.idle_timeout_ms, 60000);
	ck_assert_uint_eq(r.cfg.send_timeout_ms, 60000);
	ck_assert_uint_eq(r.cfg.shutdown_grace_ms, 30000);
	ck_assert(!r.cfg.dotfiles);
	ck_assert(!r.cfg.site.precompressed);
	ck_assert(!r.cfg.site.autoindex);
	ck_assert_ptr_null(r.cfg.access_log);
	ck_assert_ptr_null(r.cfg.error_log);
	ck_assert_int_eq(r.cfg.log_level, CONFIG_LOG_INFO);
	ck_assert_ptr_null(r.cfg.pid_file);
	done(&r);
}
END_TEST

START_TEST(test_defaults_alone)
{
	struct config cfg;

	config_defaults(&cfg);
	ck_assert_uint_eq(cfg.nlisten, 0); /* the listen default is config_load's */
	ck_assert_ptr_null(cfg.site.root);
	ck_assert_uint_eq(cfg.idle_timeout_ms, 60000);
	config_free(&cfg);
	config_free(&cfg); /* twice is harmless */
}
END_TEST

START_TEST(test_both_flag_forms)
{
	struct run r;

	RUN_OK(&r, "--root=/a", "--workers", "8", "--ktls=off", "--h2", "off", "--log-level=debug",
	       "--pid-file", "/run/k.pid", "--tls13-ciphersuites=TLS_AES_128_GCM_SHA256",
	       "--tls12-ciphers", "ECDHE-RSA-AES128-GCM-SHA256");
	ck_assert_str_eq(r.cfg.site.root, "/a");
	ck_assert_uint_eq(r.cfg.workers, 8);
	ck_assert_int_eq(r.cfg.ktls, CONFIG_OFF);
	ck_assert(!r.cfg.h2);
	ck_assert_int_eq(r.cfg.log_level, CONFIG_LOG_DEBUG);
	ck_assert_str_eq(r.cfg.pid_file, "/run/k.pid");
	ck_assert_str_eq(r.cfg.tls13_ciphersuites, "TLS_AES_128_GCM_SHA256");
	ck_assert_str_eq(r.cfg.tls12_ciphers, "ECDHE-RSA-AES128-GCM-SHA256");
	done(&r);

	/* A value may itself contain '=' and start with '-'. */
	RUN_OK(&r, "--root", "-odd=dir", "--root=x=y", "--pid-file", "--looks-like-a-flag");
	ck_assert_str_eq(r.cfg.site.root, "x=y");
	ck_assert_str_eq(r.cfg.pid_file, "--looks-like-a-flag");
	done(&r);
}
END_TEST

/* --limit-rate and --limit-rate-after: bytes with nginx's k/m suffixes, and g. */
START_TEST(test_bytes)
{
	struct run r;

	RUN_OK(&r, "--root", "/");
	ck_assert_uint_eq(r.cfg.site.limit_conn, 0);
	ck_assert_uint_eq(r.cfg.site.limit_rate, 0);
	ck_assert_uint_eq(r.cfg.site.limit_rate_after, 0);
	done(&r);

	RUN_OK(&r, "--root", "/", "--limit-rate", "256k", "--limit-rate-after=1M", "--limit-conn",
	       "3");
	ck_assert_uint_eq(r.cfg.site.limit_rate, 256 * 1024);
	ck_assert_uint_eq(r.cfg.site.limit_rate_after, 1024 * 1024);
	ck_assert_uint_eq(r.cfg.site.limit_conn, 3);
	done(&r);

	RUN_OK(&r, "--root", "/", "--limit-rate", "1g", "--limit-rate-after", "2g");
	ck_assert_uint_eq(r.cfg.site.limit_rate, 1u << 30);
	ck_assert_uint_eq(r.cfg.site.limit_rate_after, 2u << 30);
	done(&r);

	RUN_OK(&r, "--root", "/", "--limit-rate", "1000");
	ck_assert_uint_eq(r.cfg.site.limit_rate, 1000);
	done(&r);

	RUN_ERR("ktlsd: --limit-rate: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 to "
	        "1g, got '2g'",
	        "--root", "/", "--limit-rate", "2g");
	RUN_ERR("ktlsd: --limit-rate: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 to "
	        "1g, got '1kb'",
	        "--root", "/", "--limit-rate", "1kb");
	RUN_ERR("ktlsd: --limit-rate: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 to "
	        "1g, got 'k'",
	        "--root", "/", "--limit-rate", "k");
	RUN_ERR("ktlsd: --limit-rate: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 to "
	        "1g, got '1t'",
	        "--root", "/", "--limit-rate", "1t");
	RUN_ERR("ktlsd: --limit-rate-after: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 "
	        "to 2g, got '99999999999999999999k'",
	        "--root", "/", "--limit-rate-after", "99999999999999999999k");
	RUN_ERR("ktlsd: --limit-rate: expected bytes (k, m, g: 1024, 1024^2, 1024^3) from 0 to "
	        "1g, got '-1'",
	        "--root", "/", "--limit-rate=-1");
}
END_TEST

START_TEST(test_uint)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--workers", "1024", "--max-header-size=1024", "--max-headers",
	       "1000", "--max-uri", "64", "--max-connections", "1", "--keepalive-requests=1",
	       "--tls-session-cache", "0", "--tls-ticket-rotate", "60");
	ck_assert_uint_eq(r.cfg.workers, 1024);
	ck_assert_uint_eq(r.cfg.max_header_bytes, 1024);
	ck_assert_uint_eq(r.cfg.max_headers, 1000);
	ck_assert_uint_eq(r.cfg.max_uri, 64);
	ck_assert_uint_eq(r.cfg.max_connections, 1);
	ck_assert_uint_eq(r.cfg.keepalive_requests, 1);
	ck_assert_uint_eq(r.cfg.tls_session_cache, 0);
	ck_assert_uint_eq(r.cfg.tls_ticket_rotate_s, 60);
	done(&r);

	RUN_OK(&r, "--root", "/", "--workers", "007");
	ck_assert_uint_eq(r.cfg.workers, 7);
	done(&r);

	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got 'abc'", "--root", "/",
	        "--workers", "abc");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '1025'", "--root", "/",
	        "--workers", "1025");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '-1'", "--root", "/",
	        "--workers=-1");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '+1'", "--root", "/",
	        "--workers=+1");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got ' 1'", "--root", "/",
	        "--workers= 1");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '1.5'", "--root", "/",
	        "--workers=1.5");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '0x10'", "--root", "/",
	        "--workers=0x10");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '99999999999999999999999'",
	        "--root", "/", "--workers=99999999999999999999999");
	/* 2^64 + 5: must not wrap around to 5. */
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '18446744073709551621'",
	        "--root", "/", "--workers=18446744073709551621");
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got '2.'", "--root", "/",
	        "--workers=2.");
	RUN_ERR("ktlsd: --max-header-size: expected a number from 1024 to 65536, got '1023'",
	        "--root", "/", "--max-header-size", "1023");
	RUN_ERR("ktlsd: --max-headers: expected a number from 1 to 1000, got '0'", "--root", "/",
	        "--max-headers", "0");
	RUN_ERR("ktlsd: --tls-ticket-rotate: expected a number from 60 to 604800, got '2.5'",
	        "--root", "/", "--tls-ticket-rotate", "2.5");
}
END_TEST

START_TEST(test_seconds)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--handshake-timeout", "2.5", "--header-timeout=.25",
	       "--idle-timeout", "0.001", "--send-timeout", "86400", "--shutdown-grace", "0");
	ck_assert_uint_eq(r.cfg.handshake_timeout_ms, 2500);
	ck_assert_uint_eq(r.cfg.header_timeout_ms, 250);
	ck_assert_uint_eq(r.cfg.idle_timeout_ms, 1);
	ck_assert_uint_eq(r.cfg.send_timeout_ms, 86400000);
	ck_assert_uint_eq(r.cfg.shutdown_grace_ms, 0);
	done(&r);

	RUN_OK(&r, "--root", "/", "--idle-timeout", "1.125", "--send-timeout", "7.");
	ck_assert_uint_eq(r.cfg.idle_timeout_ms, 1125);
	ck_assert_uint_eq(r.cfg.send_timeout_ms, 7000);
	done(&r);

#define SECONDS_ERR(got)                                                                           \
	RUN_ERR("ktlsd: --handshake-timeout: expected seconds from 0.001 to 3600, got '" got "'",  \
	        "--root", "/", "--handshake-timeout", got)
	SECONDS_ERR("0");
	SECONDS_ERR("0.0001");
	SECONDS_ERR("1.2345");
	SECONDS_ERR("3600.001");
	SECONDS_ERR("abc");
	SECONDS_ERR("1e3");
	SECONDS_ERR(".");
	SECONDS_ERR("1.2.3");
	SECONDS_ERR("-1");
	SECONDS_ERR("10s");
	SECONDS_ERR("99999999999999999999");
	RUN_ERR("ktlsd: --shutdown-grace: expected seconds from 0 to 3600, got '1,5'", "--root",
	        "/", "--shutdown-grace=1,5");
	RUN_ERR("ktlsd: --shutdown-grace: expected seconds from 0 to 3600, got '.'", "--root", "/",
	        "--shutdown-grace=.");
	RUN_ERR(
	    "ktlsd: --shutdown-grace: expected seconds from 0 to 3600, got '18446744073709552.616'",
	    "--root", "/", "--shutdown-grace=18446744073709552.616");
}
END_TEST

START_TEST(test_ticket_key_files)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--tls-ticket-key-file", "/k/new", "--tls-ticket-key-file",
	       "/k/old");
	ck_assert_uint_eq(r.cfg.nticket_key_files, 2);
	ck_assert_str_eq(r.cfg.ticket_key_files[0], "/k/new");
	ck_assert_str_eq(r.cfg.ticket_key_files[1], "/k/old");
	done(&r);
	RUN(&r, "--root", "/", "--tls-ticket-key-file", "1", "--tls-ticket-key-file", "2",
	    "--tls-ticket-key-file", "3", "--tls-ticket-key-file", "4", "--tls-ticket-key-file", "5",
	    "--tls-ticket-key-file", "6", "--tls-ticket-key-file", "7", "--tls-ticket-key-file", "8",
	    "--tls-ticket-key-file", "9");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_ERR);
	ck_assert_ptr_nonnull(strstr(r.err, "at most 8"));
	done(&r);
}
END_TEST

START_TEST(test_words)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--tls-session-tickets", "off", "--sendfile=OFF", "--dotfiles",
	       "on", "--ktls", "on", "--log-level", "error", "--autoindex", "on");
	ck_assert(!r.cfg.tls_session_tickets);
	ck_assert_int_eq(r.cfg.sendfile, CONFIG_OFF);
	ck_assert(r.cfg.dotfiles);
	ck_assert(r.cfg.site.autoindex);
	ck_assert_int_eq(r.cfg.ktls, CONFIG_ON);
	ck_assert_int_eq(r.cfg.log_level, CONFIG_LOG_ERROR);
	done(&r);

	RUN_OK(&r, "--root", "/", "--precompressed", "on");
	ck_assert(r.cfg.site.precompressed);
	done(&r);

	RUN_OK(&r, "--root", "/", "--ktls", "off", "--ktls", "auto", "--log-level", "warn");
	ck_assert_int_eq(r.cfg.ktls, CONFIG_AUTO);
	ck_assert_int_eq(r.cfg.log_level, CONFIG_LOG_WARN);
	done(&r);

	RUN_ERR("ktlsd: --h2: expected on|off, got 'yes'", "--root", "/", "--h2", "yes");
	RUN_ERR("ktlsd: --ktls: expected auto|on|off, got 'maybe'", "--root", "/", "--ktls=maybe");
	RUN_ERR("ktlsd: --log-level: expected error|warn|info|debug, got 'trace'", "--root", "/",
	        "--log-level", "trace");
	RUN_ERR("ktlsd: --log-level: expected error|warn|info|debug, got 'info|debug'", "--root",
	        "/", "--log-level", "info|debug");
}
END_TEST

START_TEST(test_log_files)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--access-log", "/var/log/a.log", "--error-log=/var/log/e.log");
	ck_assert_str_eq(r.cfg.access_log, "/var/log/a.log");
	ck_assert_str_eq(r.cfg.error_log, "/var/log/e.log");
	done(&r);

	/* The later flag wins, and the special words go back to NULL. */
	RUN_OK(&r, "--root", "/", "--access-log", "/a", "--access-log", "off", "--error-log", "/e",
	       "--error-log", "stderr");
	ck_assert_ptr_null(r.cfg.access_log);
	ck_assert_ptr_null(r.cfg.error_log);
	ck_assert_int_eq(r.cfg.access_log_format, 0); /* combined */
	done(&r);

	/* stdout and stderr are words, spelled as the help spells them. */
	RUN_OK(&r, "--root", "/", "--access-log", "STDOUT");
	ck_assert_str_eq(r.cfg.access_log, "stdout");
	done(&r);
	RUN_OK(&r, "--root", "/", "--access-log", "stderr", "--error-log", "/e");
	ck_assert_str_eq(r.cfg.access_log, "stderr");
	done(&r);
	RUN_OK(&r, "--root", "/", "--access-log", "./stdout");
	ck_assert_str_eq(r.cfg.access_log, "./stdout");
	done(&r);

	RUN_OK(&r, "--root", "/", "--access-log-format", "json");
	ck_assert_int_eq(r.cfg.access_log_format, 1);
	done(&r);
	RUN_OK(&r, "--root", "/", "--access-log-format=json", "--access-log-format", "combined");
	ck_assert_int_eq(r.cfg.access_log_format, 0);
	done(&r);
	RUN(&r, "--root", "/", "--access-log-format", "xml");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_ERR);
	ck_assert_str_eq(r.err, "ktlsd: --access-log-format: expected combined|json, got 'xml'\n");
	done(&r);
}
END_TEST

START_TEST(test_protocols)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--tls-protocols", "TLSv1.3");
	ck_assert_str_eq(r.cfg.tls_protocols, "TLSv1.3");
	done(&r);
	RUN_OK(&r, "--root", "/", "--tls-protocols=tlsv1.3, TLSv1.2");
	ck_assert_str_eq(r.cfg.tls_protocols, "TLSv1.2 TLSv1.3");
	done(&r);
	RUN_OK(&r, "--root", "/", "--tls-protocols", " TLSv1.2 ");
	ck_assert_str_eq(r.cfg.tls_protocols, "TLSv1.2");
	done(&r);

	RUN_ERR("ktlsd: --tls-protocols: expected TLSv1.2, TLSv1.3 or both, got 'TLSv1.1 TLSv1.2'",
	        "--root", "/", "--tls-protocols", "TLSv1.1 TLSv1.2");
	RUN_ERR("ktlsd: --tls-protocols: expected TLSv1.2, TLSv1.3 or both, got ' , '", "--root",
	        "/", "--tls-protocols", " , ");
	RUN_ERR("ktlsd: --tls-protocols: expected TLSv1.2, TLSv1.3 or both, got 'TLSv1.23'",
	        "--root", "/", "--tls-protocols", "TLSv1.23");
}
END_TEST

START_TEST(test_listen)
{
	struct run r;
	char buf[INET6_ADDRSTRLEN];

	RUN_OK(&r, "--root", "/", "--listen", "127.0.0.1:80", "--listen=[::1]:8443", "--listen",
	       "[::]:443", "--listen", ":8080", "--listen", "9090", "--listen-plain",
	       "[2001:db8::1]:80", "--listen-plain", "10.0.0.1:8000");
	ck_assert_uint_eq(r.cfg.nlisten, 5);
	ck_assert_str_eq(addr_of(&r.cfg.listen[0], buf), "127.0.0.1");
	ck_assert_uint_eq(port_of(&r.cfg.listen[0]), 80);
	ck_assert_uint_eq(r.cfg.listen[0].addrlen, sizeof(struct sockaddr_in));
	ck_assert_int_eq(r.cfg.listen[1].addr.ss_family, AF_INET6);
	ck_assert_uint_eq(r.cfg.listen[1].addrlen, sizeof(struct sockaddr_in6));
	ck_assert_str_eq(addr_of(&r.cfg.listen[1], buf), "::1");
	ck_assert_uint_eq(port_of(&r.cfg.listen[1]), 8443);
	ck_assert_str_eq(r.cfg.listen[1].text, "[::1]:8443");
	ck_assert_str_eq(addr_of(&r.cfg.listen[2], buf), "::");
	ck_assert_uint_eq(port_of(&r.cfg.listen[2]), 443);
	ck_assert_int_eq(r.cfg.listen[3].addr.ss_family, AF_INET);
	ck_assert_str_eq(addr_of(&r.cfg.listen[3], buf), "0.0.0.0");
	ck_assert_uint_eq(port_of(&r.cfg.listen[3]), 8080);
	ck_assert_str_eq(addr_of(&r.cfg.listen[4], buf), "0.0.0.0");
	ck_assert_uint_eq(port_of(&r.cfg.listen[4]), 9090);
	ck_assert_str_eq(r.cfg.listen[4].text, "9090");
	ck_assert_uint_eq(r.cfg.nlisten_plain, 2);
	ck_assert_str_eq(addr_of(&r.cfg.listen_plain[0], buf), "2001:db8::1");
	ck_assert_uint_eq(port_of(&r.cfg.listen_plain[0]), 80);
	ck_assert_str_eq(addr_of(&r.cfg.listen_plain[1], buf), "10.0.0.1");
	ck_assert_uint_eq(port_of(&r.cfg.listen_plain[1]), 8000);
	done(&r);

	/* Plain listeners alone mean no default HTTPS listener. */
	RUN_OK(&r, "--root", "/", "--listen-plain", "8080");
	ck_assert_uint_eq(r.cfg.nlisten, 0);
	ck_assert_uint_eq(r.cfg.nlisten_plain, 1);
	done(&r);

#define LISTEN_ERR(got)                                                                            \
	RUN_ERR("ktlsd: --listen: expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a numeric "  \
	        "address and a port from 1 to 65535, got '" got "'",                               \
	        "--root", "/", "--listen", got)
	LISTEN_ERR("::1:8443");
	LISTEN_ERR("[::1]8443");
	LISTEN_ERR("[::1]:");
	LISTEN_ERR("[::1:443");
	LISTEN_ERR("[1.2.3.4]:443");
	LISTEN_ERR("[::1]:0");
	LISTEN_ERR("1.2.3.4:0");
	LISTEN_ERR("1.2.3.4:65536");
	LISTEN_ERR("1.2.3.4:");
	LISTEN_ERR("1.2.3:80");
	LISTEN_ERR("localhost:80");
	LISTEN_ERR("1.2.3.4:http");
	LISTEN_ERR("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000]:443");
	/* Valid but longer than config_listen.text can hold. */
	LISTEN_ERR("1.2.3.4:0000000000000000000000000000000000000000000000000000000000000000000000"
	           "0000000000000000000000000000000000000000000000000000000000000000000000000000"
	           "0000000000000080");
	RUN_ERR("ktlsd: --listen-plain: expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a "
	        "numeric address and a port from 1 to 65535, got 'x'",
	        "--root", "/", "--listen-plain", "x");

	RUN_ERR("ktlsd: --listen: at most 16 addresses", "--root", "/", "--listen", "1", "--listen",
	        "2", "--listen", "3", "--listen", "4", "--listen", "5", "--listen", "6", "--listen",
	        "7", "--listen", "8", "--listen", "9", "--listen", "10", "--listen", "11",
	        "--listen", "12", "--listen", "13", "--listen", "14", "--listen", "15", "--listen",
	        "16", "--listen", "17");
}
END_TEST

/* --status-listen: off by default, one address (the last given wins, in a
 * file as on the command line), and fixed for the life of the process. */
/* config_keep_fixed's say(): keeps the last line in ctx. */
static void last_line(void *ctx, const char *line)
{
	snprintf(ctx, 256, "%s", line);
}

START_TEST(test_status_listen)
{
	struct run r, r2;
	char buf[INET6_ADDRSTRLEN], why[256];
	char *path = conf("root /\nstatus-listen 127.0.0.1:9100\n");

	RUN_OK(&r, "--root", "/");
	ck_assert_uint_eq(r.cfg.nstatus_listen, 0);
	done(&r);

	RUN_OK(&r, "--root", "/", "--status-listen", "[::1]:9100",
	       "--status-listen=127.0.0.2:9101");
	ck_assert_uint_eq(r.cfg.nstatus_listen, 1);
	ck_assert_str_eq(addr_of(&r.cfg.status_listen, buf), "127.0.0.2");
	ck_assert_uint_eq(port_of(&r.cfg.status_listen), 9101);
	ck_assert_uint_eq(r.cfg.nlisten, 1); /* not a listener for the files */
	done(&r);

	RUN_OK(&r, "--config", path);
	ck_assert_uint_eq(r.cfg.nstatus_listen, 1);
	ck_assert_str_eq(r.cfg.status_listen.text, "127.0.0.1:9100");
	RUN_OK(&r2, "--config", path, "--status-listen", "9200");
	ck_assert_str_eq(r2.cfg.status_listen.text, "9200");
	why[0] = '\0';
	ck_assert_uint_eq(config_keep_fixed(&r.cfg, &r2.cfg, last_line, why), 1);
	ck_assert_str_eq(why, "--status-listen stays 127.0.0.1:9100 until a restart (the "
	                      "configuration says 9200)");
	ck_assert_str_eq(r2.cfg.status_listen.text, "127.0.0.1:9100"); /* kept */
	ck_assert_uint_eq(config_keep_fixed(&r.cfg, &r2.cfg, last_line, why), 0);
	done(&r2);
	RUN_OK(&r2, "--root", "/", "--workers", "3", "--pid-file", "/run/k.pid");
	ck_assert_uint_eq(config_keep_fixed(&r.cfg, &r2.cfg, last_line, why), 3);
	ck_assert_uint_eq(r2.cfg.nstatus_listen, 1);
	ck_assert_ptr_null(r2.cfg.pid_file);
	ck_assert_uint_eq(r2.cfg.workers, r.cfg.workers);
	ck_assert_str_eq(why, "--workers stays 0 until a restart (the configuration says 3)");
	done(&r2);
	done(&r);
	unconf(path);

	RUN_ERR("ktlsd: --status-listen: expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a "
	        "numeric address and a port from 1 to 65535, got 'localhost:9100'",
	        "--root", "/", "--status-listen", "localhost:9100");
}
END_TEST

/* Options after the address ("proxy-protocol") and Unix sockets. */
START_TEST(test_listen_options)
{
	struct run r, r2;
	char buf[INET6_ADDRSTRLEN], why[256];
	char *path = conf("root /\nlisten 127.0.0.1:8443 proxy-protocol # via the balancer\n"
	                  "listen-plain unix:/run/ktlsd.sock\n");
	const struct sockaddr_un *un;

	RUN_OK(&r, "--root", "/", "--listen", "0.0.0.0:8443 proxy-protocol", "--listen",
	       "[::1]:8443", "--listen-plain", "unix:/run/k.sock \t proxy-protocol");
	ck_assert(r.cfg.listen[0].proxy_protocol);
	ck_assert_str_eq(r.cfg.listen[0].text, "0.0.0.0:8443 proxy-protocol");
	ck_assert_str_eq(addr_of(&r.cfg.listen[0], buf), "0.0.0.0");
	ck_assert_uint_eq(port_of(&r.cfg.listen[0]), 8443);
	ck_assert(!r.cfg.listen[1].proxy_protocol);
	un = (const struct sockaddr_un *)&r.cfg.listen_plain[0].addr;
	ck_assert_int_eq(un->sun_family, AF_UNIX);
	ck_assert_str_eq(un->sun_path, "/run/k.sock");
	ck_assert_uint_eq(r.cfg.listen_plain[0].addrlen,
	                  offsetof(struct sockaddr_un, sun_path) + strlen("/run/k.sock") + 1);
	ck_assert(r.cfg.listen_plain[0].proxy_protocol);
	done(&r);

	RUN_OK(&r, "--config", path);
	ck_assert_uint_eq(r.cfg.nlisten, 1);
	ck_assert(r.cfg.listen[0].proxy_protocol);
	ck_assert_str_eq(r.cfg.listen[0].text, "127.0.0.1:8443 proxy-protocol");
	ck_assert_str_eq(r.cfg.listen_plain[0].text, "unix:/run/ktlsd.sock");
	ck_assert(!r.cfg.listen_plain[0].proxy_protocol);
	/* A reload that turns proxy-protocol off keeps the listener as it is
	 * until a restart: the workers read it when they bind. */
	RUN_OK(&r2, "--config", path, "--listen", "127.0.0.1:8443");
	why[0] = '\0';
	ck_assert_uint_eq(config_keep_fixed(&r.cfg, &r2.cfg, last_line, why), 1);
	ck_assert_str_eq(why, "--listen stays 127.0.0.1:8443 proxy-protocol until a restart (the "
	                      "configuration says 127.0.0.1:8443)");
	ck_assert(r2.cfg.listen[0].proxy_protocol);
	done(&r2);
	done(&r);
	unconf(path);

	RUN_ERR("ktlsd: --listen: unknown option 'proxy_protocol' after the address (expected "
	        "proxy-protocol)",
	        "--root", "/", "--listen", "8443 proxy_protocol");
	RUN_ERR("ktlsd: --listen-plain: unknown option 'ssl' after the address (expected "
	        "proxy-protocol)",
	        "--root", "/", "--listen-plain", "unix:/a proxy-protocol ssl");
	RUN_ERR("ktlsd: --listen: expected unix:/PATH with an absolute path of at most 107 bytes, "
	        "got 'unix:run/k.sock'",
	        "--root", "/", "--listen", "unix:run/k.sock");
	RUN_ERR("ktlsd: --listen: expected unix:/PATH with an absolute path of at most 107 bytes, "
	        "got 'unix:'",
	        "--root", "/", "--listen", "unix:");
	/* 108 bytes: one too many for sun_path and its NUL. */
#define LONG_PATH                                                                                  \
	"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"                                   \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	RUN_ERR("ktlsd: --listen: expected unix:/PATH with an absolute path of at most 107 bytes, "
	        "got 'unix:" LONG_PATH "'",
	        "--root", "/", "--listen", "unix:" LONG_PATH);
#undef LONG_PATH
	RUN_ERR("ktlsd: --listen: expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a numeric "
	        "address and a port from 1 to 65535, got 'localhost:1 proxy-protocol'",
	        "--root", "/", "--listen", "localhost:1 proxy-protocol");
	RUN_ERR("ktlsd: --status-listen: takes ADDR:PORT alone (no unix:, no options), got "
	        "'9100 proxy-protocol'",
	        "--root", "/", "--status-listen", "9100 proxy-protocol");
	RUN_ERR("ktlsd: --status-listen: takes ADDR:PORT alone (no unix:, no options), got "
	        "'unix:/run/m.sock'",
	        "--root", "/", "--status-listen", "unix:/run/m.sock");
}
END_TEST

START_TEST(test_certs)
{
	struct run r;

	RUN_OK(&r, "--root", "/", "--cert", "a.crt", "--key", "a.key", "--key=b.key",
	       "--cert=b.crt");
	ck_assert_uint_eq(r.cfg.site.ncerts, 2);
	ck_assert_str_eq(r.cfg.site.certs[0].cert_file, "a.crt");
	ck_assert_str_eq(r.cfg.site.certs[0].key_file, "a.key");
	ck_assert_str_eq(r.cfg.site.certs[1].cert_file, "b.crt");
	ck_assert_str_eq(r.cfg.site.certs[1].key_file, "b.key");
	done(&r);

	RUN_ERR("ktlsd: --cert and --key must come in pairs, got 2 --cert and 1 --key", "--root",
	        "/", "--cert", "a", "--key", "a", "--cert", "b");
	RUN_ERR("ktlsd: --cert and --key must come in pairs, got 0 --cert and 1 --key", "--root",
	        "/", "--key", "a");
	RUN_ERR("ktlsd: --cert: at most 4 certificates", "--root", "/", "--cert", "1", "--cert",
	        "2", "--cert", "3", "--cert", "4", "--cert", "5");
	RUN_ERR("ktlsd: --key: at most 4 certificates", "--root", "/", "--key", "1", "--key", "2",
	        "--key", "3", "--key", "4", "--key", "5");
}
END_TEST

START_TEST(test_cli_errors)
{
	RUN_ERR(NO_ROOT);
	RUN_ERR(NO_ROOT, "--workers", "2");
	RUN_ERR("ktlsd: unknown option --foo (see --help)", "--root", "/", "--foo");
	RUN_ERR("ktlsd: unknown option --foo (see --help)", "--root", "/", "--foo=bar");
	RUN_ERR("ktlsd: unknown option --roo (see --help)", "--roo", "/"); /* no abbreviations */
	RUN_ERR("ktlsd: unknown option -r (see --help)", "-r", "/");
	RUN_ERR("ktlsd: unexpected argument 'extra' (see --help)", "--root", "/", "extra");
	RUN_ERR("ktlsd: unexpected argument '-' (see --help)", "--root", "/", "-");
	RUN_ERR("ktlsd: unknown option -- (see --help)", "--root", "/", "--");
	RUN_ERR("ktlsd: --root: missing value", "--root");
	RUN_ERR("ktlsd: --root: missing value", "--root=");
	RUN_ERR("ktlsd: --workers: missing value", "--root", "/", "--workers");
	RUN_ERR("ktlsd: --listen: missing value", "--root", "/", "--listen", "");
	RUN_ERR("ktlsd: --help: takes no value", "--root", "/", "--help=yes");
	RUN_ERR("ktlsd: --config: missing value", "--root", "/", "--config=");
	/* The first error stops parsing. */
	RUN_ERR("ktlsd: --workers: expected a number from 0 to 1024, got 'x'", "--workers", "x",
	        "--bogus");
}
END_TEST

START_TEST(test_help)
{
	static const char *const header_names[] = {"root",
	                                           "listen",
	                                           "listen-plain",
	                                           "status-listen",
	                                           "cert",
	                                           "key",
	                                           "workers",
	                                           "config",
	                                           "help",
	                                           "version",
	                                           "tls-ticket-key-file",
	                                           "tls-protocols",
	                                           "tls13-ciphersuites",
	                                           "tls12-ciphers",
	                                           "tls-prefer-server-ciphers",
	                                           "tls-session-tickets",
	                                           "tls-session-cache",
	                                           "tls-ticket-rotate",
	                                           "ktls",
	                                           "sendfile",
	                                           "h2",
	                                           "max-header-size",
	                                           "max-headers",
	                                           "max-uri",
	                                           "max-connections",
	                                           "limit-req",
	                                           "limit-conn",
	                                           "limit-rate",
	                                           "limit-rate-after",
	                                           "keepalive-requests",
	                                           "handshake-timeout",
	                                           "header-timeout",
	                                           "idle-timeout",
	                                           "send-timeout",
	                                           "drain-delay",
	                                           "shutdown-grace",
	                                           "dotfiles",
	                                           "precompressed",
	                                           "autoindex",
	                                           "error-page",
	                                           "https-redirect",
	                                           "autoindex-max-entries",
	                                           "mime-types",
	                                           "tls-records",
	                                           "tls-rekey-records",
	                                           "server-name",
	                                           "header",
	                                           "mime-type",
	                                           "access-log",
	                                           "access-log-format",
	                                           "error-log",
	                                           "log-level",
	                                           "pid-file",
	                                           "acme",
	                                           "acme-ca",
	                                           "acme-ca-cert",
	                                           "acme-dir",
	                                           "acme-email",
	                                           "acme-terms-agreed",
	                                           "acme-challenge",
	                                           "acme-eab",
	                                           "acme-profile",
	                                           "check",
	                                           "test-config",
	                                           "h2-sendfile",
	                                           "h2-max-streams",
	                                           "h2-max-header-list",
	                                           "h2-reset-rate",
	                                           "h2-max-continuations",
	                                           "h2-buffer",
	                                           "user"};
	struct run r;
	const char *name, *general, *tls, *http, *logging;
	size_t i;

	RUN(&r, "--help");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_OK);
	ck_assert_str_eq(r.err, "");
	ck_assert(strncmp(r.out, "Usage: ktlsd --root DIR", 23) == 0);
	for (i = 0; (name = config_option_name(i)) != NULL; i++) {
		char *want;

		ck_assert_int_gt(asprintf(&want, "\n  --%s", name), 0);
		ck_assert_msg(strstr(r.out, want), "--help lacks --%s", name);
		free(want);
	}
	ck_assert_uint_eq(i, sizeof(header_names) / sizeof(header_names[0]));
	/* ...and the table has every option config.h documents. */
	for (size_t j = 0; j < sizeof(header_names) / sizeof(header_names[0]); j++) {
		for (i = 0; (name = config_option_name(i)) != NULL; i++)
			if (strcmp(name, header_names[j]) == 0)
				break;
		ck_assert_msg(name, "no option --%s", header_names[j]);
	}
	general = strstr(r.out, "\nGeneral:\n");
	tls = strstr(r.out, "\nTLS:\n");
	http = strstr(r.out, "\nHTTP limits and timeouts:\n");
	logging = strstr(r.out, "\nLogging:\n");
	ck_assert(general && tls && http && logging);
	ck_assert(general < tls && tls < http && http < logging);
	ck_assert(strstr(r.out, "--listen ADDR:PORT"));
	ck_assert(strstr(r.out, "(default: 0.0.0.0:8443)"));
	ck_assert(strstr(r.out, "--ktls auto|on|off"));
	ck_assert(strstr(r.out, "(0 to 1024; default: 0)"));
	ck_assert(strstr(r.out, "(0.001 to 3600; default: 10)"));
	ck_assert(strstr(r.out, "(default: TLSv1.2 TLSv1.3)"));
	ck_assert(strstr(r.out, "--log-level error|warn|info|debug"));
	ck_assert(strstr(r.out, "--version ") || strstr(r.out, "--version\n"));
	/* Every option sits in its group. */
	ck_assert(strstr(general, "--workers") < tls);
	ck_assert(strstr(tls, "--ktls") < http);
	ck_assert(strstr(http, "--idle-timeout") < logging);
	ck_assert(strstr(logging, "--pid-file"));
	/* The closing paragraph names every option the file refuses. */
	for (i = 0; i < config_noptions; i++) {
		char *want;

		if (!config_options[i].cli_only)
			continue;
		ck_assert_int_gt(asprintf(&want, "--%s", config_options[i].name), 0);
		ck_assert_msg(strstr(strstr(r.out, "\nEvery option but"), want),
		              "the --help footer lacks %s", want);
		free(want);
	}
	done(&r);
}
END_TEST

START_TEST(test_help_and_version_win)
{
	struct run r;
	char *path = conf("workers = lots\n");

	/* --help wins over bad flags, a missing --root and a broken config file. */
	RUN(&r, "--bogus", "--workers", "x", "--config", path, "--help");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_OK);
	ck_assert_str_eq(r.err, "");
	ck_assert(strstr(r.out, "Usage: ktlsd"));
	done(&r);

	RUN(&r, "--version", "--help");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_OK);
	ck_assert_str_eq(r.out, "ktlsd " PACKAGE_VERSION "\n");
	ck_assert_str_eq(r.err, "");
	done(&r);

	RUN(&r, "--config", path, "--version");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_OK);
	ck_assert_str_eq(r.out, "ktlsd " PACKAGE_VERSION "\n");
	done(&r);

	/* "--help" as the value of another flag is not a request for help. */
	RUN(&r, "--root", "--help");
	ck_assert_int_eq(r.rc, CONFIG_RUN);
	ck_assert_str_eq(r.cfg.site.root, "--help");
	done(&r);
	unconf(path);
}
END_TEST

START_TEST(test_file_syntax)
{
	struct config cfg;
	char *err;

	ck_assert_int_eq(parse_text(&cfg,
	                            "# a comment\n"
	                            "\n"
	                            "   \t\n"
	                            "root /srv/www\n"
	                            "workers = 4\n"
	                            "max-uri=128\n"
	                            "  log-level\tdebug   # trailing comment\n"
	                            "pid-file \"/run/with space#hash.pid\"  # comment\n"
	                            "access-log '/var/log/a b.log'\n"
	                            "error-log /var/log/a#b.log\n"
	                            "\t# indented comment\n"
	                            "tls-protocols \"TLSv1.3\"\r\n"
	                            "idle-timeout = 2.5\r\n"
	                            "h2=off",
	                            &err),
	                 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(cfg.site.root, "/srv/www");
	ck_assert_uint_eq(cfg.workers, 4);
	ck_assert_uint_eq(cfg.max_uri, 128);
	ck_assert_int_eq(cfg.log_level, CONFIG_LOG_DEBUG);
	ck_assert_str_eq(cfg.pid_file, "/run/with space#hash.pid");
	ck_assert_str_eq(cfg.access_log, "/var/log/a b.log");
	ck_assert_str_eq(cfg.error_log, "/var/log/a#b.log");
	ck_assert_str_eq(cfg.tls_protocols, "TLSv1.3");
	ck_assert_uint_eq(cfg.idle_timeout_ms, 2500);
	ck_assert(!cfg.h2);
	free(err);
	config_free(&cfg);

	/* Within one file a repeatable key appends; the empty file is fine. */
	ck_assert_int_eq(parse_text(&cfg,
	                            "listen 1.1.1.1:1\nlisten [::1]:2\n"
	                            "cert a.crt\nkey a.key\ncert b.crt\nkey b.key\n",
	                            &err),
	                 0);
	ck_assert_uint_eq(cfg.nlisten, 2);
	ck_assert_uint_eq(cfg.site.ncerts, 2);
	ck_assert_str_eq(cfg.site.certs[1].key_file, "b.key");
	free(err);
	config_free(&cfg);

	ck_assert_int_eq(parse_text(&cfg, "", &err), 0);
	ck_assert_str_eq(err, "");
	free(err);
	config_free(&cfg);
}
END_TEST

START_TEST(test_file_errors)
{
	struct config cfg;
	char *err;
	size_t len;
	FILE *fp;

	FILE_ERR("# c\n\nroot /\n\n\n\n\n\n\n\n\nworkers abc\n",
	         "12: workers: expected a number from 0 to 1024, got 'abc'");
	FILE_ERR("root /\nbogus 1\n", "2: unknown key 'bogus'");
	FILE_ERR("--root /\n", "1: unknown key '--root'");
	FILE_ERR("config /etc/other.conf\n", "1: config: only valid on the command line");
	FILE_ERR("help\n", "1: help: only valid on the command line");
	FILE_ERR("root\n", "1: root: missing value");
	FILE_ERR("root =\n", "1: root: missing value");
	FILE_ERR("root \"\"\n", "1: root: missing value");
	FILE_ERR("root # nothing\n", "1: root: missing value");
	FILE_ERR("root \"/srv\n", "1: root: missing closing \"");
	FILE_ERR("root '/srv\n", "1: root: missing closing '");
	FILE_ERR("root \"/srv\" x\n", "1: root: unexpected text after the closing quote");
	FILE_ERR("h2 maybe\n", "1: h2: expected on|off, got 'maybe'");
	FILE_ERR("handshake-timeout 0\n",
	         "1: handshake-timeout: expected seconds from 0.001 to 3600, got '0'");
	FILE_ERR("listen ::1:80\n",
	         "1: listen: expected ADDR:PORT, [IPV6]:PORT, :PORT or PORT with a numeric address "
	         "and a port from 1 to 65535, got '::1:80'");

	config_defaults(&cfg);
	fp = open_memstream(&err, &len);
	ck_assert_int_eq(config_parse_file(&cfg, "/nonexistent/ktlsd.conf", fp), -ENOENT);
	fclose(fp);
	ck_assert_str_eq(
	    err, "ktlsd: /nonexistent/ktlsd.conf: cannot open: No such file or directory\n");
	free(err);

	fp = open_memstream(&err, &len);
	ck_assert_int_eq(config_parse_file(&cfg, "/tmp", fp), -EISDIR);
	fclose(fp);
	ck_assert_str_eq(err, "ktlsd: /tmp: cannot read: Is a directory\n");
	free(err);

	/* A FIFO is refused at once, not waited on for a writer; so is a
	 * device. */
	char fifo[] = "/tmp/ktlsd-test-config-fifo-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(fifo));
	char fifo_path[sizeof(fifo) + 8];
	snprintf(fifo_path, sizeof(fifo_path), "%s/fifo", fifo);
	ck_assert_int_eq(mkfifo(fifo_path, 0600), 0);
	fp = open_memstream(&err, &len);
	ck_assert_int_eq(config_parse_file(&cfg, fifo_path, fp), -EINVAL);
	fclose(fp);
	char want[sizeof(fifo_path) + 64];
	snprintf(want, sizeof(want), "ktlsd: %s: cannot open: not a regular file\n", fifo_path);
	ck_assert_str_eq(err, want);
	free(err);
	unlink(fifo_path);
	rmdir(fifo);
	fp = open_memstream(&err, &len);
	ck_assert_int_eq(config_parse_file(&cfg, "/dev/null", fp), -EINVAL);
	fclose(fp);
	ck_assert_str_eq(err, "ktlsd: /dev/null: cannot open: not a regular file\n");
	free(err);
	config_free(&cfg);

	/* Through config_load: the file's error, and nothing from the flags. */
	RUN_ERR("ktlsd: /nonexistent/ktlsd.conf: cannot open: No such file or directory", "--root",
	        "/", "--config", "/nonexistent/ktlsd.conf", "--workers", "x");
}
END_TEST

START_TEST(test_override_order)
{
	struct run r;
	char *path = conf("root /from-file\nworkers 4\nh2 off\nmax-uri 100\n");

	/* Flags win wherever --config appears, even after them. */
	RUN_OK(&r, "--workers", "8", "--config", path, "--max-uri=200");
	ck_assert_str_eq(r.cfg.site.root, "/from-file");
	ck_assert_uint_eq(r.cfg.workers, 8);
	ck_assert(!r.cfg.h2);
	ck_assert_uint_eq(r.cfg.max_uri, 200);
	ck_assert_str_eq(r.cfg.config_file, path);
	done(&r);

	char *empty = conf("");
	char eq[128];
	snprintf(eq, sizeof(eq), "--config=%s", empty);
	RUN_OK(&r, eq, "--root", "/");
	ck_assert_str_eq(r.cfg.config_file, empty);
	done(&r);
	unconf(empty);
	unconf(path);
}
END_TEST

/* A single-valued key given twice in one part of a file is refused (the
 * command line still overrides the file); the same listener twice is
 * refused at load rather than by bind. */
START_TEST(test_said_twice)
{
	FILE_ERR("root /\nworkers 2\nworkers 3\n",
		 "3: workers: given twice in this file's top level (line 2 too): say it once");
	FILE_ERR("root /\n[site a]\nserver-name a\nroot /a\n\nroot /b\n",
		 "6: root: given twice in this section (line 4 too): say it once");

	struct config cfg;
	char *err;
	/* Each section starts afresh: a key once in each is fine. */
	ck_assert_int_eq(parse_text(&cfg, "root /\n[site a]\nroot /a\n[site b]\nroot /b\n", &err),
			 0);
	ck_assert_str_eq(err, "");
	free(err);
	config_free(&cfg);

	char *path = conf("root /\nworkers 2\n");
	struct run r;
	RUN_OK(&r, "--config", path, "--workers", "3", "--workers", "4");
	ck_assert_uint_eq(r.cfg.workers, 4);
	done(&r);
	unconf(path);

	RUN_ERR("ktlsd: --listen-plain 127.0.0.1:80: the same address as --listen 127.0.0.1:80",
		"--root", "/", "--listen", "127.0.0.1:80", "--listen-plain", "127.0.0.1:80");
	RUN_ERR("ktlsd: --listen [::1]:443: the same address as --listen [::1]:443", "--root", "/",
		"--listen", "[::1]:443", "--listen", "[::1]:443");
	RUN_ERR("ktlsd: --listen unix:/run/k.sock: the same address as --listen unix:/run/k.sock",
		"--root", "/", "--listen", "unix:/run/k.sock", "--listen", "unix:/run/k.sock");
}
END_TEST

/* The installed file is read when the command line names neither a file
 * nor a root, and not for --check (which describes the machine alone). */
START_TEST(test_default_file)
{
	char *path = conf("root /srv/default\nworkers 3\n");
	struct run r;

	config_default_file = path;
	RUN_OK(&r, "--test-config");
	ck_assert_str_eq(r.cfg.site.root, "/srv/default");
	ck_assert_uint_eq(r.cfg.workers, 3);
	done(&r);
	RUN_OK(&r, "--root", "/other");
	ck_assert_str_eq(r.cfg.site.root, "/other");
	ck_assert_uint_eq(r.cfg.workers, 0);
	done(&r);
	RUN_OK(&r, "--check");
	ck_assert_ptr_null(r.cfg.site.root);
	done(&r);
	config_default_file = NO_DEFAULT;
	unconf(path);
}
END_TEST

START_TEST(test_lists_replace)
{
	struct run r;
	char *path = conf("root /\n"
	                  "listen 1.1.1.1:1\nlisten 2.2.2.2:2\n"
	                  "listen-plain 3.3.3.3:3\n"
	                  "cert f.crt\nkey f.key\n");

	/* Nothing repeatable on the command line: the file's lists stand. */
	RUN_OK(&r, "--config", path);
	ck_assert_uint_eq(r.cfg.nlisten, 2);
	ck_assert_str_eq(r.cfg.listen[1].text, "2.2.2.2:2");
	ck_assert_uint_eq(r.cfg.nlisten_plain, 1);
	ck_assert_uint_eq(r.cfg.site.ncerts, 1);
	done(&r);

	/* A repeatable flag replaces the file's list, and appends to itself. */
	RUN_OK(&r, "--config", path, "--listen", "9.9.9.9:9", "--listen", "8.8.8.8:8");
	ck_assert_uint_eq(r.cfg.nlisten, 2);
	ck_assert_str_eq(r.cfg.listen[0].text, "9.9.9.9:9");
	ck_assert_str_eq(r.cfg.listen[1].text, "8.8.8.8:8");
	ck_assert_uint_eq(r.cfg.nlisten_plain, 1); /* a separate list, untouched */
	ck_assert_str_eq(r.cfg.site.certs[0].cert_file, "f.crt");
	done(&r);

	RUN_OK(&r, "--config", path, "--listen-plain", "4.4.4.4:4");
	ck_assert_uint_eq(r.cfg.nlisten, 2);
	ck_assert_uint_eq(r.cfg.nlisten_plain, 1);
	ck_assert_str_eq(r.cfg.listen_plain[0].text, "4.4.4.4:4");
	done(&r);

	/* --cert and --key are one list of pairs: either flag replaces both. */
	RUN_OK(&r, "--config", path, "--key", "c.key", "--cert", "c.crt");
	ck_assert_uint_eq(r.cfg.site.ncerts, 1);
	ck_assert_str_eq(r.cfg.site.certs[0].cert_file, "c.crt");
	ck_assert_str_eq(r.cfg.site.certs[0].key_file, "c.key");
	done(&r);
	RUN_ERR("ktlsd: --cert and --key must come in pairs, got 1 --cert and 0 --key", "--config",
	        path, "--cert", "c.crt");
	unconf(path);
}
END_TEST

/* --check describes the machine: it needs no --root, takes no value, and
 * is refused in a config file. */
START_TEST(test_check_flag)
{
	struct run r;
	char *path;

	RUN_OK(&r, "--check");
	ck_assert(r.cfg.check);
	ck_assert_ptr_null(r.cfg.site.root);
	done(&r);
	RUN_OK(&r, "--root", "/srv", "--ktls", "off", "--check");
	ck_assert(r.cfg.check);
	done(&r);
	RUN_ERR("ktlsd: --check: takes no value", "--check=yes");
	path = conf("check\n");
	{
		struct run r2;
		RUN(&r2, "--config", path, "--root", "/srv");
		ck_assert_int_eq(r2.rc, CONFIG_EXIT_ERR);
		ck_assert_ptr_nonnull(strstr(r2.err, "check"));
		done(&r2);
	}
	unlink(path);
	free(path);
}
END_TEST

/* --test-config loads a configuration without serving it: it needs the
 * root a start needs, takes no value, and is refused in a config file. */
START_TEST(test_test_config_flag)
{
	struct run r, r2;
	char *path;

	RUN_OK(&r, "--root", "/srv", "--test-config");
	ck_assert(r.cfg.test_config);
	ck_assert(!r.cfg.check);
	done(&r);
	RUN_ERR(NO_ROOT, "--test-config");
	RUN_ERR("ktlsd: --test-config: takes no value", "--root", "/srv", "--test-config=yes");
	path = conf("test-config\n");
	RUN(&r2, "--config", path, "--root", "/srv");
	ck_assert_int_eq(r2.rc, CONFIG_EXIT_ERR);
	ck_assert_ptr_nonnull(strstr(r2.err, "test-config: only valid on the command line"));
	done(&r2);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_reentrant)
{
	struct run r;

	/* Parsing keeps no state between calls (no getopt optind). */
	for (int i = 0; i < 3; i++) {
		RUN_OK(&r, "--root", "/", "--workers", "3");
		ck_assert_uint_eq(r.cfg.workers, 3);
		done(&r);
		RUN_ERR(NO_ROOT, "--workers", "3");
	}
	/* After a failed load the config is already empty: freeing is harmless. */
	RUN(&r, "--bogus");
	ck_assert_int_eq(r.rc, CONFIG_EXIT_ERR);
	ck_assert_ptr_null(r.cfg.tls_protocols);
	done(&r);
}
END_TEST

START_TEST(test_sites)
{
	struct run r;
	char *path = conf("root /top\n"
			  "cert top.pem\nkey top.key\n"
			  "header \"Cache-Control: max-age=60\"\n"
			  "mime-type .ISO application/x-iso9660-image\n"
			  "[site a]\n"
			  "server-name DL-A.test.\n"
			  "server-name *.a.test\n"
			  "root /a\n"
			  "cert a.pem\nkey a.key\n"
			  "limit-rate 1m\n"
			  "[ site  b  ]\n"
			  "server-name dl-b.test\n"
			  "root /b\n"
			  "header Strict-Transport-Security:max-age=1\n");

	/* The flags set the top level, which sections take what they lack from. */
	RUN_OK(&r, "--config", path, "--header", "X-Top: 1", "--server-name", "top.test");
	ck_assert_str_eq(r.cfg.site.root, "/top");
	ck_assert_uint_eq(r.cfg.site.nserver_names, 1);
	ck_assert_str_eq(r.cfg.site.headers[0], "X-Top: 1");
	ck_assert_uint_eq(r.cfg.nsites, 2);
	ck_assert_str_eq(r.cfg.sites[0].name, "a");
	ck_assert_uint_eq(r.cfg.sites[0].nserver_names, 2);
	ck_assert_str_eq(r.cfg.sites[0].server_names[0], "dl-a.test");
	ck_assert_str_eq(r.cfg.sites[0].server_names[1], "*.a.test");
	ck_assert_str_eq(r.cfg.sites[0].root, "/a");
	ck_assert_uint_eq(r.cfg.sites[0].ncerts, 1);
	ck_assert_str_eq(r.cfg.sites[0].certs[0].cert_file, "a.pem");
	ck_assert_uint_eq(r.cfg.sites[0].nheaders, 1);
	ck_assert_str_eq(r.cfg.sites[0].headers[0], "X-Top: 1");
	ck_assert_str_eq(r.cfg.sites[0].mime_overrides[0], "iso application/x-iso9660-image");
	ck_assert_str_eq(r.cfg.sites[1].name, "b");
	ck_assert_str_eq(r.cfg.sites[1].certs[0].key_file, "top.key");
	ck_assert_uint_eq(r.cfg.sites[1].nheaders, 1);
	ck_assert_str_eq(r.cfg.sites[1].headers[0], "Strict-Transport-Security: max-age=1");
	/* A size option set in a section is the section's, not the top level's. */
	ck_assert_uint_eq(r.cfg.sites[0].limit_rate, 1u << 20);
	ck_assert_uint_eq(r.cfg.site.limit_rate, 0);
	ck_assert_uint_eq(r.cfg.sites[1].limit_rate, 0);
	done(&r);
	unconf(path);

	/* Sections alone: no top-level root needed. */
	path = conf("[site a]\nroot /a\n");
	RUN_OK(&r, "--config", path);
	ck_assert_ptr_null(r.cfg.site.root);
	ck_assert_uint_eq(r.cfg.nsites, 1);
	done(&r);
	unconf(path);
}
END_TEST

/* The rules --help, the man page and the sample file print name every
 * option a [site] section takes, and only those. */
START_TEST(test_site_rules_name_site_options)
{
	const char *list = strstr(config_file_rules, "between\nsites: ");
	char names[512];
	size_t nsite = 0, nlisted = 0;

	ck_assert_ptr_nonnull(list);
	list += strlen("between\nsites: ");
	snprintf(names, sizeof(names), "%.*s", (int)strcspn(list, "."), list);
	for (char *p = names; *p; p++) /* one name per word */
		if (*p == '\n' || *p == ',')
			*p = ' ';
	for (char *save, *w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "and") == 0)
			continue;
		const struct opt *o = config_find_option(w, strlen(w));
		ck_assert_msg(o && o->site, "the rules list %s, not a site option", w);
		nlisted++;
	}
	for (size_t i = 0; i < config_noptions; i++)
		nsite += config_options[i].site;
	ck_assert_uint_eq(nlisted, nsite);
}
END_TEST

START_TEST(test_site_errors)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
	    {"[site a]\nworkers 2\n", ":2: workers: not a site option: it goes above the first "
				      "[site] section"},
	    {"[site a]\n", "ktlsd: [site a] has no root"},
	    {"root /\n[site a]\nroot /a\n", "ktlsd: [site a] has no server-name: no request would "
					   "reach it"},
	    {"[site a]\nroot /a\n[site b]\nroot /b\n", "ktlsd: [site b] has no server-name"},
	    {"[site \"a\"]\n", ":1: a [site NAME] needs a NAME of 1 to 64 printable characters, "
				  "without quotes or backslashes"},
	    {"[site a\tb]\n", ":1: a [site NAME] needs a NAME of 1 to 64 printable characters, "
				 "without quotes or backslashes"},
	    {"[site -]\n", ":1: [site -]: a name the metrics keep for themselves"},
	    {"[site other]\n", ":1: [site other]: a name the metrics keep for themselves"},
	    {"[host a]\n", ":1: expected a section line \"[site NAME]\""},
	    {"[site a\n", ":1: expected a section line \"[site NAME]\""},
	    {"[site a]\nroot /\n[site a]\n", ":3: a second [site a]"},
	    {"root /\nserver-name x.test\n[site a]\nroot /a\nserver-name X.test\n",
	     "ktlsd: server-name x.test is given twice ([site a] server-name)"},
	    {"[site a]\nroot /a\ncert c\n", "ktlsd: [site a] cert and key must come in pairs, got 1 "
					    "cert and 0 key"},
	    {"root /\nserver-name a..b\n", "server-name: expected a host name"},
	    {"root /\nserver-name *\n", "server-name: expected a host name"},
	    {"root /\nserver-name 'a b'\n", "server-name: expected a host name"},
	    {"root /\nheader Content-Type: text/plain\n", "header: ktlsd sets Content-Type itself"},
	    {"root /\nheader 'X-A: a\rb'\n", "header: control character in the value of X-A"},
	    {"root /\nheader 'X A: b'\n", "header: expected \"Name: value\""},
	    {"root /\nheader 'X-A:'\n", "header: X-A has an empty value"},
	    {"root /\nmime-type iso\n", "mime-type: expected \"EXT TYPE\""},
	    {"root /\nmime-type 'a/b text/plain'\n", "mime-type: expected \"EXT TYPE\""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r;
		char *path = conf(cases[i].text);

		RUN(&r, "--config", path);
		ck_assert_msg(strstr(r.err, cases[i].err), "case %zu: got %s", i, r.err);
		ck_assert_int_eq(r.rc, CONFIG_EXIT_ERR);
		done(&r);
		unconf(path);
	}
	/* --server-name names the top-level site, which needs a root. */
	char *path = conf("[site a]\nroot /a\n");
	RUN_ERR("ktlsd: --server-name needs a --root for its site", "--config", path,
		"--server-name", "a.test");
	unconf(path);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_defaults_alone);
	tcase_add_test(tc, test_both_flag_forms);
	tcase_add_test(tc, test_uint);
	tcase_add_test(tc, test_bytes);
	tcase_add_test(tc, test_seconds);
	tcase_add_test(tc, test_ticket_key_files);
	tcase_add_test(tc, test_words);
	tcase_add_test(tc, test_log_files);
	tcase_add_test(tc, test_protocols);
	tcase_add_test(tc, test_listen);
	tcase_add_test(tc, test_listen_options);
	tcase_add_test(tc, test_status_listen);
	tcase_add_test(tc, test_certs);
	tcase_add_test(tc, test_cli_errors);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_help_and_version_win);
	tcase_add_test(tc, test_file_syntax);
	tcase_add_test(tc, test_file_errors);
	tcase_add_test(tc, test_override_order);
	tcase_add_test(tc, test_lists_replace);
	tcase_add_test(tc, test_reentrant);
	tcase_add_test(tc, test_sites);
	tcase_add_test(tc, test_site_errors);
	tcase_add_test(tc, test_site_rules_name_site_options);
	tcase_add_test(tc, test_check_flag);
	tcase_add_test(tc, test_test_config_flag);
	tcase_add_test(tc, test_said_twice);
	tcase_add_test(tc, test_default_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	config_default_file = NO_DEFAULT;
	return check_run(config_suite());
}
