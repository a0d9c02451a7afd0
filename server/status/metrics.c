#include "server/status/metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/core/stats.h"

/* ---- the text ---- */

static bool reserve(struct metrics_buf *b, size_t more)
{
	if (b->failed)
		return false;
	if (b->cap - b->len > more)
		return true;
	size_t cap = b->cap ? b->cap : 16384;
	while (cap - b->len <= more)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void metrics_printf(struct metrics_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!reserve(b, 256))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void metrics_buf_free(struct metrics_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- what the indexes of stats-t.h are called ---- */

static const char *const proto_names[STAT_PROTOS] = {"http1", "http2"};
static const char *const class_names[STAT_CLASSES] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
static const char *const tls_names[STAT_TLS_PATHS] = {"kernel", "user", "none"};
static const char *const via_names[STAT_VIAS] = {"send", "splice"};
static const char *const handshake_names[STAT_HANDSHAKES] = {"full", "resumed", "failed"};
static const char *const timeout_names[STAT_TIMEOUTS] = {"handshake", "header", "idle", "send",
							 "linger"};
static const char *const limit_names[STAT_LIMITS] = {
    "connections",    "fds",           "header",           "uri",
    "h2_header_list", "h2_reset_rate", "h2_continuations", "h2_flood",
    "conn_limit", "proxy_header", "req_limit"};
static const char *const conn_names[STAT_CONN_STATES] = {"handshake", "reading", "writing", "idle",
							 "closing"};

/* Counters that are separate fields of struct worker_stats but one family
 * here: they must stay side by side, in this order. */
static const char *const tls_done_names[] = {"kernel", "user"};   /* ktls_tx, ktls_off */
static const char *const body_names[] = {"copy", "splice"};       /* body_copy, body_splice */
static const char *const ring_names[] = {"send", "splice", "read", "recv"}; /* *_ops */
static const char *const cache_names[] = {"hit", "revalidated", "miss"};
static const char *const bufstate_names[] = {"used", "kept"}; /* buffer_bytes_* */

#define SNAP(field) offsetof(struct worker_snapshot, field)
#define ADJACENT(a, b) (SNAP(b) == SNAP(a) + sizeof(uint64_t))
_Static_assert(ADJACENT(stats.ktls_tx, stats.ktls_off), "ktls_tx, ktls_off");
_Static_assert(ADJACENT(stats.body_copy, stats.body_splice), "body_copy, body_splice");
_Static_assert(ADJACENT(stats.send_ops, stats.splice_ops) &&
		   ADJACENT(stats.splice_ops, stats.read_ops) &&
		   ADJACENT(stats.read_ops, stats.recv_ops),
	       "send_ops, splice_ops, read_ops, recv_ops");
_Static_assert(ADJACENT(file_cache_hits, file_cache_revalidations) &&
		   ADJACENT(file_cache_revalidations, file_cache_misses),
	       "file_cache_hits, file_cache_revalidations, file_cache_misses");
_Static_assert(ADJACENT(buffer_bytes_used, buffer_bytes_kept), "buffer_bytes_used, _kept");

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A label and the names of its values, one per index. */
struct dim {
	const char *label;
	const char *const *names;
	unsigned n;
};

#define DIM(label, names) {label, names, COUNT(names)}
static const struct dim d_proto = DIM("protocol", proto_names);
static const struct dim d_class = DIM("class", class_names);
static const struct dim d_tls = DIM("tls", tls_names);
static const struct dim d_via = DIM("via", via_names);
static const struct dim d_handshake = DIM("result", handshake_names);
static const struct dim d_timeout = DIM("kind", timeout_names);
static const struct dim d_limit = DIM("limit", limit_names);
static const struct dim d_conn = DIM("state", conn_names);
static const struct dim d_tls_done = DIM("tls", tls_done_names);
static const struct dim d_body = DIM("path", body_names);
static const struct dim d_ring = DIM("op", ring_names);
static const struct dim d_cache = DIM("result", cache_names);
static const struct dim d_bufstate = DIM("state", bufstate_names);

/* A family of per-worker series: the words at off in a snapshot, indexed
 * [i][j] by its dimensions (none, one or two). */
struct family {
	const char *name, *type, *help;
	size_t off;
	const struct dim *d1, *d2;
};

static const struct family families[] = {
    {"ktlsd_connections", "gauge",
     "Open connections by what they do: handshake, reading a request head, writing a "
     "response, idle between requests, closing.",
     SNAP(conns), &d_conn, NULL},
    {"ktlsd_connections_tls", "gauge",
     "Open connections by who encrypts what they send: kernel (kTLS), user (OpenSSL), "
     "none (plain HTTP).",
     SNAP(conns_tls), &d_tls, NULL},
    {"ktlsd_connections_accepted_total", "counter", "Connections accepted.",
     SNAP(stats.accepted), NULL, NULL},
    {"ktlsd_tls_handshakes_total", "counter",
     "TLS handshakes: completed in full, completed by resuming a session, or refused by "
     "OpenSSL (timeouts are counted in ktlsd_timeouts_total).",
     SNAP(stats.handshakes), &d_handshake, NULL},
    {"ktlsd_tls_connections_total", "counter",
     "Completed TLS handshakes by who encrypts afterwards: kernel (kTLS) or user (OpenSSL).",
     SNAP(stats.ktls_tx), &d_tls_done, NULL},
    {"ktlsd_requests_total", "counter",
     "Requests answered, by protocol and status class (counted when the response ends).",
     SNAP(stats.requests), &d_proto, &d_class},
    {"ktlsd_sent_bytes_total", "counter",
     "Bytes the sockets took, by how (send from user memory, or splice from the page "
     "cache: sendfile or ring splices) and who encrypted them (kernel, user, none).",
     SNAP(stats.bytes_out), &d_via, &d_tls},
    {"ktlsd_file_bodies_total", "counter",
     "Response bodies from files, by path: copy (read into memory, then sent; HTTP/2 "
     "frames) or splice (no copy: sendfile of cached bytes, else file to pipe to socket).",
     SNAP(stats.body_copy), &d_body, NULL},
    {"ktlsd_sendfile_calls_total", "counter",
     "sendfile(2) calls of cached file bytes (the rest of the zero-copy path is ring "
     "splices, counted in ktlsd_ring_operations_total).",
     SNAP(stats.sendfile_calls), NULL, NULL},
    {"ktlsd_socket_full_waits_total", "counter",
     "Times a response waited for room in a full socket holding no buffer but what the "
     "socket did not take of its last send (a slow client: the file's next bytes are read "
     "only once the socket takes them).",
     SNAP(stats.room_waits), NULL, NULL},
    {"ktlsd_refused_sends_total", "counter",
     "Sends of a slow or new connection that its socket took less than half of, though "
     "its room said it would take them: the machine's TCP memory (net.ipv4.tcp_mem) is "
     "spent. Until a tick passes without one, such connections send at most 64 KiB at once.",
     SNAP(stats.refused_sends), NULL, NULL},
    {"ktlsd_slow_connections_total", "counter",
     "Times a connection was found slow (its socket full, under 4 MiB/s accepted over a "
     "250 ms tick): from then on it holds send buffers only while its socket takes bytes.",
     SNAP(stats.slow_socks), NULL, NULL},
    {"ktlsd_h2_stalls_total", "counter",
     "Times a tick found an HTTP/2 connection owing bytes with nothing in flight to move "
     "them, and drove it again: a bug, or memory ran out for its next batch (logged as a "
     "warning once a worker; anything but 0 is worth a look).",
     SNAP(stats.h2_stalls), NULL, NULL},
    {"ktlsd_truncated_responses_total", "counter",
     "Responses cut short because their file shrank while it was sent.",
     SNAP(stats.truncated), NULL, NULL},
    {"ktlsd_timeouts_total", "counter",
     "Connections whose deadline passed, by which: handshake, header, idle, send "
     "(--*-timeout) or linger (a closing peer that did not close).",
     SNAP(stats.timeouts), &d_timeout, NULL},
    {"ktlsd_limit_hits_total", "counter",
     "Clients refused by a limit: connections (--max-connections), fds (accept found no "
     "file descriptor), header (--max-header-size, --max-headers), uri (--max-uri), "
     "h2_header_list, h2_reset_rate, h2_continuations, h2_flood, conn_limit (--limit-conn: "
     "429, once per connection), proxy_header (a proxy-protocol listener got no valid PROXY "
     "header within --handshake-timeout), req_limit (--limit-req: 429, once per request).",
     SNAP(stats.limits), &d_limit, NULL},
    {"ktlsd_conn_limit_untracked_total", "counter",
     "Connections --limit-conn let in without counting them: its table had no room for "
     "their address (it fails open).",
     SNAP(stats.conn_limit_untracked), NULL, NULL},
    {"ktlsd_open_files", "gauge",
     "Files the worker holds open: its file cache and the responses reading them.",
     SNAP(open_files), NULL, NULL},
    {"ktlsd_file_cache_entries", "gauge", "Entries of the worker's open-file cache.",
     SNAP(file_cache_entries), NULL, NULL},
    {"ktlsd_buffer_bytes", "gauge",
     "Bytes of pooled I/O buffers (send buffers, sealed records, plaintext stages, HTTP/2 "
     "batches, received bytes), by state: used (held by connections) or kept (free, "
     "kept for the next taker; trimmed every tick to the recent peak of use, and to "
     "what a wave of sends took in the last 4 s within 16 KiB per connection).",
     SNAP(buffer_bytes_used), &d_bufstate, NULL},
    {"ktlsd_file_cache_lookups_total", "counter",
     "File cache lookups: hit (trusted), revalidated (one stat), miss (opened).",
     SNAP(file_cache_hits), &d_cache, NULL},
    {"ktlsd_file_cache_memory_hits_total", "counter",
     "Responses whose small file's bytes the cache kept in memory.",
     SNAP(file_cache_mem_hits), NULL, NULL},
    {"ktlsd_ring_operations_total", "counter", "io_uring operations submitted, by kind.",
     SNAP(stats.send_ops), &d_ring, NULL},
};

static uint64_t word_at(const struct worker_snapshot *s, size_t off, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off + i * sizeof(v), sizeof(v));
	return v;
}

/* ---- Prometheus ---- */

/* A label value as the text format wants it: \, " and newline escaped. */
void metrics_label_value(struct metrics_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			metrics_printf(b, "\\%c", *s);
		else if (*s == '\n')
			metrics_printf(b, "\\n");
		else
			metrics_printf(b, "%c", *s);
	}
}

void metrics_family_head(struct metrics_buf *b, const char *name, const char *type,
			 const char *help)
{
	metrics_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void family(struct metrics_buf *b, const struct family *f, const struct metrics_view *v)
{
	unsigned n1 = f->d1 ? f->d1->n : 1, n2 = f->d2 ? f->d2->n : 1;

	metrics_family_head(b, f->name, f->type, f->help);
	for (unsigned w = 0; w < v->nworkers; w++) {
		for (unsigned i = 0; i < n1; i++) {
			for (unsigned j = 0; j < n2; j++) {
				uint64_t x = word_at(&v->workers[w], f->off, i * n2 + j);

				metrics_printf(b, "%s{worker=\"%u\"", f->name, w);
				if (f->d1)
					metrics_printf(b, ",%s=\"%s\"", f->d1->label,
						       f->d1->names[i]);
				if (f->d2)
					metrics_printf(b, ",%s=\"%s\"", f->d2->label,
						       f->d2->names[j]);
				metrics_printf(b, "} %llu\n", (unsigned long long)x);
			}
		}
	}
}

/* ---- per site: summed over the workers (a series per worker and site
 * would be the workers times as many) ---- */

/* The slots to show: those taken, and the last (names past them) when it
 * counted anything. */
static bool site_shown(const struct worker_snapshot *total, unsigned slot)
{
	if (slot < stats_site_count() && slot < STAT_SITES - 1)
		return true;
	return slot == STAT_SITES - 1 &&
	       stats_sum(total->stats.sites[slot].codes, STAT_CODES) > 0;
}

static void code_name(unsigned i, char buf[static 8])
{
	if (stat_codes[i])
		snprintf(buf, 8, "%d", stat_codes[i]);
	else
		snprintf(buf, 8, "other");
}

static void sites_prometheus(struct metrics_buf *b, const struct worker_snapshot *total)
{
	char code[8];

	metrics_family_head(b, "ktlsd_site_responses_total", "counter",
		    "Responses by site (its [site NAME]; \"-\": the top level's, and requests "
		    "refused before they named one) and status code (\"other\": codes not named), "
		    "counted when they end.");
	for (unsigned s = 0; s < STAT_SITES; s++) {
		if (!site_shown(total, s))
			continue;
		for (unsigned i = 0; i < STAT_CODES; i++) {
			code_name(i, code);
			metrics_printf(b, "ktlsd_site_responses_total{site=\"");
			metrics_label_value(b, stats_site_name(s));
			metrics_printf(b, "\",code=\"%s\"} %llu\n", code,
				       (unsigned long long)total->stats.sites[s].codes[i]);
		}
	}
	metrics_family_head(b, "ktlsd_site_body_bytes_total", "counter",
		    "Response body bytes sent, by site (nginx's $body_bytes_sent).");
	for (unsigned s = 0; s < STAT_SITES; s++) {
		if (!site_shown(total, s))
			continue;
		metrics_printf(b, "ktlsd_site_body_bytes_total{site=\"");
		metrics_label_value(b, stats_site_name(s));
		metrics_printf(b, "\"} %llu\n", (unsigned long long)total->stats.sites[s].body_bytes);
	}
	metrics_family_head(b, "ktlsd_site_request_duration_seconds", "histogram",
		    "From a request's head to its response's last byte taken by the socket, by "
		    "site (the access log's request time).");
	for (unsigned s = 0; s < STAT_SITES; s++) {
		const struct stat_site *st = &total->stats.sites[s];
		uint64_t cum = 0;

		if (!site_shown(total, s))
			continue;
		for (unsigned i = 0; i < STAT_LATENCY_BUCKETS; i++) {
			cum += st->latency[i];
			metrics_printf(b, "ktlsd_site_request_duration_seconds_bucket{site=\"");
			metrics_label_value(b, stats_site_name(s));
			if (stat_latency_bounds_ms[i] == UINT64_MAX)
				metrics_printf(b, "\",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
			else
				metrics_printf(b, "\",le=\"%.3f\"} %llu\n",
					       stat_latency_bounds_ms[i] / 1000.0,
					       (unsigned long long)cum);
		}
		metrics_printf(b, "ktlsd_site_request_duration_seconds_sum{site=\"");
		metrics_label_value(b, stats_site_name(s));
		metrics_printf(b, "\"} %.3f\n", st->latency_ms / 1000.0);
		metrics_printf(b, "ktlsd_site_request_duration_seconds_count{site=\"");
		metrics_label_value(b, stats_site_name(s));
		metrics_printf(b, "\"} %llu\n", (unsigned long long)cum);
	}
}

/* "name" as a JSON string: a site's name holds no control byte, '"' nor
 * '\' (config.c refuses them), escaped all the same. */
void metrics_json_string(struct metrics_buf *b, const char *s)
{
	metrics_printf(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20)
			metrics_printf(b, "\\u%04x", c);
		else
			metrics_printf(b, c == '"' || c == '\\' ? "\\%c" : "%c", c);
	}
	metrics_printf(b, "\"");
}

static void sites_json(struct metrics_buf *b, const struct worker_snapshot *total)
{
	char code[8];
	bool first = true;

	metrics_printf(b, "\"sites\":{");
	for (unsigned s = 0; s < STAT_SITES; s++) {
		const struct stat_site *st = &total->stats.sites[s];

		if (!site_shown(total, s))
			continue;
		metrics_printf(b, "%s", first ? "" : ",");
		first = false;
		metrics_json_string(b, stats_site_name(s));
		metrics_printf(b, ":{\"responses\":{");
		for (unsigned i = 0; i < STAT_CODES; i++) {
			code_name(i, code);
			metrics_printf(b, "%s\"%s\":%llu", i ? "," : "", code,
				       (unsigned long long)st->codes[i]);
		}
		metrics_printf(b, "},\"body_bytes\":%llu,\"duration_seconds_sum\":%.3f,"
				  "\"duration_buckets\":{",
			       (unsigned long long)st->body_bytes, st->latency_ms / 1000.0);
		uint64_t cum = 0;
		for (unsigned i = 0; i < STAT_LATENCY_BUCKETS; i++) {
			cum += st->latency[i];
			if (stat_latency_bounds_ms[i] == UINT64_MAX)
				metrics_printf(b, "%s\"+Inf\":%llu", i ? "," : "",
					       (unsigned long long)cum);
			else
				metrics_printf(b, "%s\"%.3f\":%llu", i ? "," : "",
					       stat_latency_bounds_ms[i] / 1000.0,
					       (unsigned long long)cum);
		}
		metrics_printf(b, "}}");
	}
	metrics_printf(b, "}");
}

void metrics_prometheus(struct metrics_buf *b, const struct metrics_view *v)
{
	metrics_family_head(b, "ktlsd_build_info", "gauge",
		    "Always 1; the labels say what runs: ktlsd's and OpenSSL's versions, and "
		    "whether kernel TLS is used.");
	metrics_printf(b, "ktlsd_build_info{version=\"");
	metrics_label_value(b, v->version);
	metrics_printf(b, "\",openssl=\"");
	metrics_label_value(b, v->openssl);
	metrics_printf(b, "\",kernel_tls=\"%s\"} 1\n", v->kernel_tls ? "on" : "off");
	metrics_family_head(b, "ktlsd_start_time_seconds", "gauge",
		    "When ktlsd started, in seconds since the Unix epoch.");
	metrics_printf(b, "ktlsd_start_time_seconds %.3f\n", v->start_time);
	metrics_family_head(b, "ktlsd_uptime_seconds", "gauge", "Seconds since ktlsd started.");
	metrics_printf(b, "ktlsd_uptime_seconds %.3f\n", v->uptime);
	metrics_family_head(b, "ktlsd_workers", "gauge", "Worker threads.");
	metrics_printf(b, "ktlsd_workers %u\n", v->nworkers);

	/* The names every Prometheus client library uses for its process. */
	metrics_family_head(b, "process_open_fds", "gauge", "Open file descriptors.");
	metrics_printf(b, "process_open_fds %llu\n", (unsigned long long)v->open_fds);
	metrics_family_head(b, "process_max_fds", "gauge", "The open file descriptor limit.");
	metrics_printf(b, "process_max_fds %llu\n", (unsigned long long)v->max_fds);
	metrics_family_head(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	metrics_printf(b, "process_resident_memory_bytes %llu\n",
		       (unsigned long long)v->resident_bytes);
	metrics_family_head(b, "process_cpu_seconds_total", "counter",
		    "User and system CPU time spent, in seconds.");
	metrics_printf(b, "process_cpu_seconds_total %.3f\n", v->cpu_seconds);
	metrics_family_head(b, "process_start_time_seconds", "gauge",
		    "Start time of the process since the Unix epoch, in seconds.");
	metrics_printf(b, "process_start_time_seconds %.3f\n", v->start_time);

	for (size_t i = 0; i < COUNT(families); i++)
		family(b, &families[i], v);

	struct worker_snapshot total = {0};
	for (unsigned w = 0; w < v->nworkers; w++)
		stats_add(&total, &v->workers[w]);
	sites_prometheus(b, &total);
	metrics_certs_prometheus(b, v);
}

/* ---- JSON ---- */

/* "key":{"name":value,...} for n words at off. */
static void json_values(struct metrics_buf *b, const char *key, const struct dim *d,
			const struct worker_snapshot *s, size_t off)
{
	metrics_printf(b, "\"%s\":{", key);
	for (unsigned i = 0; i < d->n; i++)
		metrics_printf(b, "%s\"%s\":%llu", i ? "," : "", d->names[i],
			       (unsigned long long)word_at(s, off, i));
	metrics_printf(b, "}");
}

/* The members of one snapshot (a worker's, or the totals). */
static void json_snapshot(struct metrics_buf *b, const struct worker_snapshot *s)
{
	const struct worker_stats *st = &s->stats;
	unsigned long long u;

	u = stats_sum(s->conns, STAT_CONN_STATES);
	metrics_printf(b, "\"connections\":{\"accepted\":%llu,\"open\":%llu,",
		       (unsigned long long)st->accepted, u);
	json_values(b, "state", &d_conn, s, SNAP(conns));
	metrics_printf(b, ",");
	json_values(b, "tls", &d_tls, s, SNAP(conns_tls));
	metrics_printf(b, "},\"tls\":{");
	json_values(b, "handshakes", &d_handshake, s, SNAP(stats.handshakes));
	metrics_printf(b, ",");
	json_values(b, "completed", &d_tls_done, s, SNAP(stats.ktls_tx));
	u = stats_sum(&st->requests[0][0], STAT_PROTOS * STAT_CLASSES);
	metrics_printf(b, "},\"requests\":{\"total\":%llu", u);
	for (unsigned p = 0; p < STAT_PROTOS; p++) {
		metrics_printf(b, ",");
		json_values(b, proto_names[p], &d_class, s,
			    SNAP(stats.requests) + p * sizeof(st->requests[0]));
	}
	u = stats_sum(&st->bytes_out[0][0], STAT_VIAS * STAT_TLS_PATHS);
	metrics_printf(b, "},\"sent_bytes\":{\"total\":%llu", u);
	for (unsigned i = 0; i < STAT_VIAS; i++) {
		metrics_printf(b, ",");
		json_values(b, via_names[i], &d_tls, s,
			    SNAP(stats.bytes_out) + i * sizeof(st->bytes_out[0]));
	}
	metrics_printf(b, "},");
	json_values(b, "file_bodies", &d_body, s, SNAP(stats.body_copy));
	metrics_printf(b, ",\"truncated_responses\":%llu,", (unsigned long long)st->truncated);
	json_values(b, "timeouts", &d_timeout, s, SNAP(stats.timeouts));
	metrics_printf(b, ",");
	json_values(b, "limit_hits", &d_limit, s, SNAP(stats.limits));
	metrics_printf(b, ",\"conn_limit_untracked\":%llu",
		       (unsigned long long)st->conn_limit_untracked);
	metrics_printf(b, ",\"files\":{\"open\":%llu,\"cache\":{\"entries\":%llu,",
		       (unsigned long long)s->open_files,
		       (unsigned long long)s->file_cache_entries);
	json_values(b, "lookups", &d_cache, s, SNAP(file_cache_hits));
	metrics_printf(b, ",\"memory_hits\":%llu}},", (unsigned long long)s->file_cache_mem_hits);
	json_values(b, "buffer_bytes", &d_bufstate, s, SNAP(buffer_bytes_used));
	metrics_printf(b, ",");
	json_values(b, "ring_operations", &d_ring, s, SNAP(stats.send_ops));
}

void metrics_json(struct metrics_buf *b, const struct metrics_view *v)
{
	struct worker_snapshot total = {0};
	time_t start = (time_t)v->start_time;
	struct tm tm;
	char when[32] = "";

	if (gmtime_r(&start, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* The strings are ours (a version, OpenSSL's version): nothing to
	 * escape in them but a '"' or '\', which they never hold. */
	metrics_printf(b,
		       "{\"ktlsd\":{\"version\":\"%s\",\"openssl\":\"%s\",\"kernel_tls\":%s,"
		       "\"pid\":%ld,\"workers\":%u,\"start_time\":\"%s\","
		       "\"start_time_seconds\":%.3f,\"uptime_seconds\":%.3f},",
		       v->version, v->openssl, v->kernel_tls ? "true" : "false", v->pid,
		       v->nworkers, when, v->start_time, v->uptime);
	metrics_printf(b,
		       "\"process\":{\"open_fds\":%llu,\"max_fds\":%llu,"
		       "\"resident_memory_bytes\":%llu,\"cpu_seconds\":%.3f},",
		       (unsigned long long)v->open_fds, (unsigned long long)v->max_fds,
		       (unsigned long long)v->resident_bytes, v->cpu_seconds);
	for (unsigned w = 0; w < v->nworkers; w++)
		stats_add(&total, &v->workers[w]);
	sites_json(b, &total);
	metrics_certs_json(b, v);
	metrics_printf(b, ",\"total\":{");
	json_snapshot(b, &total);
	metrics_printf(b, "},\"workers\":[");
	for (unsigned w = 0; w < v->nworkers; w++) {
		metrics_printf(b, "%s{\"id\":%u,", w ? "," : "", w);
		json_snapshot(b, &v->workers[w]);
		metrics_printf(b, "}");
	}
	metrics_printf(b, "]}\n");
}
