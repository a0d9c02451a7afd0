/* libFuzzer target: the config file parser (server/conf/config.c).
 *
 * The input is written to a memfd and config_parse_file reads it through
 * /proc/self/fd/N, on a fresh config (config_defaults) that config_free
 * releases after, so LeakSanitizer sees any string the parser drops. The
 * one-line error goes to /dev/null. On success the fields must be within
 * the ranges the option table promises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz/fuzz_check.h"
#include "server/conf/config.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

static void check_config(const struct config *cfg)
{
	FZ_ASSERT(cfg->nlisten <= CONFIG_MAX_LISTEN && cfg->nlisten_plain <= CONFIG_MAX_LISTEN,
	          "%zu + %zu listeners", cfg->nlisten, cfg->nlisten_plain);
	FZ_ASSERT(cfg->site.ncerts <= CONFIG_MAX_CERTS, "%zu certs", cfg->site.ncerts);
	FZ_ASSERT(cfg->nsites <= CONFIG_MAX_SITES, "%zu sites", cfg->nsites);
	for (size_t i = 0; i < cfg->nsites; i++) {
		const struct config_site *s = &cfg->sites[i];

		FZ_ASSERT(s->name && s->ncerts <= CONFIG_MAX_CERTS &&
		              s->nserver_names <= CONFIG_MAX_SERVER_NAMES &&
		              s->nheaders <= CONFIG_MAX_HEADERS,
		          "site %zu out of bounds", i);
		for (size_t j = 0; j < s->nheaders; j++)
			FZ_ASSERT(!strpbrk(s->headers[j], "\r\n"), "a header with a line break");
	}
	for (size_t i = 0; i < cfg->nlisten; i++) {
		sa_family_t fam = cfg->listen[i].addr.ss_family;

		FZ_ASSERT(fam == AF_INET || fam == AF_INET6 || fam == AF_UNIX, "listener %zu family %d",
		          i, fam);
		if (fam == AF_UNIX) {
			const struct sockaddr_un *u = (const void *)&cfg->listen[i].addr;
			FZ_ASSERT(u->sun_path[0] == '/' &&
			              strnlen(u->sun_path, sizeof(u->sun_path)) < sizeof(u->sun_path),
			          "listener %zu: a Unix path not absolute or not terminated", i);
		}
		FZ_ASSERT(strnlen(cfg->listen[i].text, sizeof(cfg->listen[i].text)) <
		              sizeof(cfg->listen[i].text),
		          "listener text not terminated");
	}
	FZ_ASSERT(cfg->workers <= 1024, "workers %u", cfg->workers);
	FZ_ASSERT(cfg->max_header_bytes >= 1024 && cfg->max_header_bytes <= 65536,
	          "max-header-size %u", cfg->max_header_bytes);
	FZ_ASSERT(cfg->max_headers >= 1 && cfg->max_headers <= 1000, "max-headers %u",
	          cfg->max_headers);
	FZ_ASSERT(cfg->max_uri >= 64 && cfg->max_uri <= 16384, "max-uri %u", cfg->max_uri);
	FZ_ASSERT(cfg->handshake_timeout_ms >= 1 && cfg->handshake_timeout_ms <= 3600000,
	          "handshake-timeout %u ms", cfg->handshake_timeout_ms);
	FZ_ASSERT(cfg->header_timeout_ms >= 1 && cfg->idle_timeout_ms >= 1 &&
	              cfg->send_timeout_ms >= 1,
	          "a timeout of 0");
	FZ_ASSERT(cfg->h2_buffer >= 32768 && cfg->h2_buffer <= 4194304, "h2-buffer %u",
	          cfg->h2_buffer);
	FZ_ASSERT(cfg->h2_max_streams >= 1 && cfg->h2_max_continuations >= 1 &&
	              cfg->h2_reset_rate >= 1,
	          "an h2 limit of 0");
	FZ_ASSERT(cfg->ktls >= CONFIG_AUTO && cfg->ktls <= CONFIG_OFF, "ktls %d", (int)cfg->ktls);
	FZ_ASSERT(cfg->log_level >= CONFIG_LOG_ERROR && cfg->log_level <= CONFIG_LOG_DEBUG,
	          "log-level %d", cfg->log_level);
	FZ_ASSERT(cfg->tls_protocols != NULL, "tls-protocols NULL");
	FZ_ASSERT(cfg->check == false, "--check set from a file");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char path[64];
	int fd = memfd_create("fuzz_config", MFD_CLOEXEC);
	int rc;

	if (fd < 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	config_defaults(&cfg);
	rc = config_parse_file(&cfg, path, devnull);
	FZ_ASSERT(rc == 0 || rc < 0, "config_parse_file: %d", rc);
	if (rc == 0)
		check_config(&cfg);
	config_free(&cfg);
	close(fd);
	return 0;
}
