/* The metrics --status-listen serves: the workers' snapshots (stats.h)
 * written as Prometheus text (/metrics) or JSON (/status). Formatting
 * only: the caller gathers the numbers, so this is tested on its own. */
#ifndef KTLSD_SERVER_METRICS_H
#define KTLSD_SERVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/core/stats-t.h"

/* A growing text. An allocation that fails leaves failed set and the text
 * as it was; everything after is dropped. */
struct metrics_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3))) void metrics_printf(struct metrics_buf *b,
							  const char *fmt, ...);
void metrics_buf_free(struct metrics_buf *b);

/* What is shown: the process and each worker's last snapshot. */
struct metrics_view {
	const char *version;         /* of ktlsd */
	const char *openssl;         /* OpenSSL's version, "3.0.13" */
	bool kernel_tls;             /* kTLS is used where the cipher allows */
	long pid;
	double start_time;           /* seconds since the Unix epoch */
	double uptime;               /* seconds */
	/* The process as a whole, as Prometheus client libraries name it. */
	uint64_t open_fds, max_fds, resident_bytes;
	double cpu_seconds;
	unsigned nworkers;
	const struct worker_snapshot *workers;
};

/* Prometheus text format 0.0.4: per-worker series with a "worker" label
 * (sum them in PromQL), HELP and TYPE for every family. */
void metrics_prometheus(struct metrics_buf *out, const struct metrics_view *v);

/* One JSON object: the process, the totals of all workers, and each
 * worker with the same members as the totals. */
void metrics_json(struct metrics_buf *out, const struct metrics_view *v);

#endif
