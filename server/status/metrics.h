/* The metrics --status-listen serves: the workers' snapshots (stats.h)
 * written as Prometheus text (/metrics) or JSON (/status). Formatting
 * only: the caller gathers the numbers, so this is tested on its own. */
#ifndef KTLSD_SERVER_METRICS_H
#define KTLSD_SERVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/core/cert_status.h"
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
	/* The sites' certificates and the ACME client's doings (NULL: not
	 * shown), and the challenges the workers answered. */
	const struct cert_status_all *certs;
	uint64_t acme_http01, acme_alpn01;
};

/* Prometheus text format 0.0.4: per-worker series with a "worker" label
 * (sum them in PromQL), HELP and TYPE for every family. */
void metrics_prometheus(struct metrics_buf *out, const struct metrics_view *v);

/* One JSON object: the process, the totals of all workers, and each
 * worker with the same members as the totals. */
void metrics_json(struct metrics_buf *out, const struct metrics_view *v);

/* The pieces metrics.c and metrics_certs.c share: a label value escaped
 * for the text format, a family's HELP and TYPE lines, a JSON string. */
void metrics_label_value(struct metrics_buf *b, const char *s);
void metrics_family_head(struct metrics_buf *b, const char *name, const char *type,
			 const char *help);
void metrics_json_string(struct metrics_buf *b, const char *s);

/* metrics_certs.c: the certificates' families (v->certs), and their
 * "certificates" member of /status (with its leading comma). */
void metrics_certs_prometheus(struct metrics_buf *b, const struct metrics_view *v);
void metrics_certs_json(struct metrics_buf *b, const struct metrics_view *v);

#endif
