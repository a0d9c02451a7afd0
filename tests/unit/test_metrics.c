/* Tests server/status/metrics.c (and the snapshot arithmetic of server/core/stats.c):
 * which numbers land in which series, that every series has its HELP and
 * TYPE, the JSON totals, and a text that grows past its first buffer. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/status/metrics.h"
#include "server/core/stats.h"
#include "tests/unit/check_run.h"

static void fill(struct worker_snapshot *w, uint64_t base)
{
	memset(w, 0, sizeof(*w));
	w->stats.accepted = base + 1;
	w->stats.requests[STAT_HTTP1][1] = base + 2;     /* 2xx */
	w->stats.requests[STAT_HTTP2][3] = base + 3;     /* 4xx */
	w->stats.bytes_out[STAT_VIA_SPLICE][STAT_TLS_KERNEL] = base + 4;
	w->stats.bytes_out[STAT_VIA_SEND][STAT_TLS_USER] = base + 5;
	w->stats.handshakes[STAT_HS_RESUMED] = base + 6;
	w->stats.ktls_off = base + 7;
	w->stats.body_splice = base + 8;
	w->stats.recv_ops = base + 9;
	w->stats.timeouts[STAT_TO_SEND] = base + 10;
	w->stats.limits[STAT_LIMIT_H2_FLOOD] = base + 11;
	w->stats.truncated = base + 12;
	w->conns[STAT_CONN_IDLE] = base + 13;
	w->conns_tls[STAT_TLS_NONE] = base + 14;
	w->open_files = base + 15;
	w->file_cache_misses = base + 16;
	w->file_cache_mem_hits = base + 17;
	w->buffer_bytes_kept = base + 18;
	w->stats.refused_sends = base + 19;
	w->stats.h2_stalls = base + 20;
}

static struct metrics_view view(const struct worker_snapshot *w, unsigned n)
{
	struct metrics_view v = {
	    .version = "1.2.3",
	    .openssl = "3.0.13",
	    .kernel_tls = true,
	    .pid = 42,
	    .start_time = 1700000000.5,
	    .uptime = 12.25,
	    .open_fds = 30,
	    .max_fds = 1024,
	    .resident_bytes = 4096,
	    .cpu_seconds = 1.5,
	    .nworkers = n,
	    .workers = w,
	};
	return v;
}

static void has_line(const struct metrics_buf *b, const char *line)
{
	char *want;

	ck_assert_int_gt(asprintf(&want, "\n%s\n", line), 0);
	ck_assert_msg(strstr(b->p, want), "no line '%s'", line);
	free(want);
}

START_TEST(test_prometheus_series)
{
	struct worker_snapshot w[2];
	struct metrics_buf b = {0};

	fill(&w[0], 0);
	fill(&w[1], 100);
	struct metrics_view v = view(w, 2);
	metrics_prometheus(&b, &v);
	ck_assert(!b.failed);
	ck_assert(b.len > 0 && b.p[b.len - 1] == '\n');
	has_line(&b, "ktlsd_build_info{version=\"1.2.3\",openssl=\"3.0.13\",kernel_tls=\"on\"} 1");
	has_line(&b, "ktlsd_start_time_seconds 1700000000.500");
	has_line(&b, "ktlsd_uptime_seconds 12.250");
	has_line(&b, "ktlsd_workers 2");
	has_line(&b, "process_open_fds 30");
	has_line(&b, "process_max_fds 1024");
	has_line(&b, "ktlsd_connections_accepted_total{worker=\"0\"} 1");
	has_line(&b, "ktlsd_connections_accepted_total{worker=\"1\"} 101");
	has_line(&b, "ktlsd_requests_total{worker=\"0\",protocol=\"http1\",class=\"2xx\"} 2");
	has_line(&b, "ktlsd_requests_total{worker=\"0\",protocol=\"http1\",class=\"4xx\"} 0");
	has_line(&b, "ktlsd_requests_total{worker=\"1\",protocol=\"http2\",class=\"4xx\"} 103");
	has_line(&b, "ktlsd_sent_bytes_total{worker=\"0\",via=\"splice\",tls=\"kernel\"} 4");
	has_line(&b, "ktlsd_sent_bytes_total{worker=\"0\",via=\"send\",tls=\"user\"} 5");
	has_line(&b, "ktlsd_tls_handshakes_total{worker=\"1\",result=\"resumed\"} 106");
	has_line(&b, "ktlsd_tls_connections_total{worker=\"0\",tls=\"user\"} 7");
	has_line(&b, "ktlsd_file_bodies_total{worker=\"0\",path=\"splice\"} 8");
	has_line(&b, "ktlsd_ring_operations_total{worker=\"0\",op=\"recv\"} 9");
	has_line(&b, "ktlsd_timeouts_total{worker=\"0\",kind=\"send\"} 10");
	has_line(&b, "ktlsd_limit_hits_total{worker=\"0\",limit=\"h2_flood\"} 11");
	has_line(&b, "ktlsd_truncated_responses_total{worker=\"0\"} 12");
	has_line(&b, "ktlsd_buffer_bytes{worker=\"1\",state=\"kept\"} 118");
	has_line(&b, "ktlsd_buffer_bytes{worker=\"0\",state=\"used\"} 0");
	has_line(&b, "ktlsd_refused_sends_total{worker=\"0\"} 19");
	has_line(&b, "ktlsd_h2_stalls_total{worker=\"1\"} 120");
	has_line(&b, "ktlsd_connections{worker=\"0\",state=\"idle\"} 13");
	has_line(&b, "ktlsd_connections_tls{worker=\"1\",tls=\"none\"} 114");
	has_line(&b, "ktlsd_open_files{worker=\"0\"} 15");
	has_line(&b, "ktlsd_file_cache_lookups_total{worker=\"0\",result=\"miss\"} 16");
	has_line(&b, "ktlsd_file_cache_memory_hits_total{worker=\"0\"} 17");
	metrics_buf_free(&b);
}
END_TEST

/* Every sample follows the HELP and TYPE of its own name; counters end in
 * _total; no name is described twice. */
START_TEST(test_prometheus_shape)
{
	struct worker_snapshot w[3];
	struct metrics_buf b = {0};
	char typed[128] = "", seen[8192] = " ";
	bool histogram = false;

	for (unsigned i = 0; i < 3; i++)
		fill(&w[i], i);
	struct metrics_view v = view(w, 3);
	metrics_prometheus(&b, &v);
	ck_assert(!b.failed);
	metrics_printf(&b, "%c", '\0');
	for (char *line = strtok(b.p, "\n"); line; line = strtok(NULL, "\n")) {
		char name[128], type[16], key[140];

		if (sscanf(line, "# HELP %127s", name) == 1) {
			snprintf(key, sizeof(key), " %s ", name);
			ck_assert_msg(!strstr(seen, key), "%s described twice", name);
			ck_assert_uint_lt(strlen(seen) + strlen(key), sizeof(seen));
			strcat(seen, key + 1);
			continue;
		}
		if (sscanf(line, "# TYPE %127s %15s", name, type) == 2) {
			ck_assert_msg(strstr(seen, name), "TYPE before HELP: %s", line);
			ck_assert(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
				  strcmp(type, "histogram") == 0);
			histogram = strcmp(type, "histogram") == 0;
			if (strcmp(type, "counter") == 0)
				ck_assert_msg(strlen(name) > 6 &&
						  strcmp(name + strlen(name) - 6, "_total") == 0,
					      "counter %s", name);
			strcpy(typed, name);
			continue;
		}
		size_t n = strcspn(line, "{ "), t = strlen(typed);
		/* A histogram's samples: NAME_bucket, NAME_sum, NAME_count. */
		bool ok = n == t && strncmp(line, typed, n) == 0;
		if (histogram && !ok && n > t && strncmp(line, typed, t) == 0)
			ok = (n - t == 7 && strncmp(line + t, "_bucket", 7) == 0) ||
			     (n - t == 4 && strncmp(line + t, "_sum", 4) == 0) ||
			     (n - t == 6 && strncmp(line + t, "_count", 6) == 0);
		ck_assert_msg(ok, "'%s' under TYPE %s", line, typed);
	}
	metrics_buf_free(&b);
}
END_TEST

/* Per site: summed over the workers, one series per site and code, a
 * histogram whose buckets add up. */
START_TEST(test_sites)
{
	struct worker_snapshot w[2];
	struct metrics_buf b = {0};

	memset(w, 0, sizeof(w));
	w[0].stats.sites[0].codes[0] = 3;  /* 200 */
	w[1].stats.sites[0].codes[0] = 4;
	w[1].stats.sites[0].codes[10] = 2; /* 404 */
	w[0].stats.sites[0].latency[0] = 5;
	w[1].stats.sites[0].latency[2] = 4;
	w[0].stats.sites[0].latency_ms = 1500;
	w[1].stats.sites[0].body_bytes = 12345;
	struct metrics_view v = view(w, 2);
	metrics_prometheus(&b, &v);
	metrics_printf(&b, "%c", '\0');
	has_line(&b, "ktlsd_site_responses_total{site=\"-\",code=\"200\"} 7");
	has_line(&b, "ktlsd_site_responses_total{site=\"-\",code=\"404\"} 2");
	has_line(&b, "ktlsd_site_responses_total{site=\"-\",code=\"other\"} 0");
	has_line(&b, "ktlsd_site_body_bytes_total{site=\"-\"} 12345");
	has_line(&b, "ktlsd_site_request_duration_seconds_bucket{site=\"-\",le=\"0.005\"} 5");
	has_line(&b, "ktlsd_site_request_duration_seconds_bucket{site=\"-\",le=\"0.025\"} 5");
	has_line(&b, "ktlsd_site_request_duration_seconds_bucket{site=\"-\",le=\"0.100\"} 9");
	has_line(&b, "ktlsd_site_request_duration_seconds_bucket{site=\"-\",le=\"+Inf\"} 9");
	has_line(&b, "ktlsd_site_request_duration_seconds_sum{site=\"-\"} 1.500");
	has_line(&b, "ktlsd_site_request_duration_seconds_count{site=\"-\"} 9");
	ck_assert_ptr_null(strstr(b.p, "site=\"other\"")); /* not used: not shown */
	metrics_buf_free(&b);
}
END_TEST

/* needle is in the JSON's totals: after total, before the workers. */
static void in_total(const char *total, const char *workers, const char *needle)
{
	const char *p = strstr(total, needle);

	ck_assert_msg(p && p < workers, "not in the totals: %s", needle);
}

START_TEST(test_json_totals)
{
	struct worker_snapshot w[2];
	struct metrics_buf b = {0};

	fill(&w[0], 0);
	fill(&w[1], 100);
	struct metrics_view v = view(w, 2);
	metrics_json(&b, &v);
	ck_assert(!b.failed);
	metrics_printf(&b, "%c", '\0');
	static const char head[] = "{\"ktlsd\":{\"version\":\"1.2.3\",\"openssl\":\"3.0.13\","
				   "\"kernel_tls\":true,\"pid\":42,\"workers\":2,"
				   "\"start_time\":\"2023-11-14T22:13:20Z\",";
	ck_assert(strncmp(b.p, head, strlen(head)) == 0);
	char *total = strstr(b.p, "\"total\":{");
	char *workers = strstr(b.p, "\"workers\":[{\"id\":0,");
	ck_assert(total && workers && total < workers);
	ck_assert(strstr(total, "\"connections\":{\"accepted\":102,\"open\":126,") == total + 9);
	in_total(total, workers,
		 "\"requests\":{\"total\":210,"
		 "\"http1\":{\"1xx\":0,\"2xx\":104,\"3xx\":0,\"4xx\":0,\"5xx\":0},"
		 "\"http2\":{\"1xx\":0,\"2xx\":0,\"3xx\":0,\"4xx\":106,\"5xx\":0}}");
	in_total(total, workers,
		 "\"sent_bytes\":{\"total\":218,"
		 "\"send\":{\"kernel\":0,\"user\":110,\"none\":0},"
		 "\"splice\":{\"kernel\":108,\"user\":0,\"none\":0}}");
	ck_assert(strstr(workers, "{\"id\":1,\"connections\":{\"accepted\":101,\"open\":113,"));
	ck_assert(strstr(b.p, "\"tls\":{\"handshakes\":{\"full\":0,\"resumed\":112,\"failed\":0},"
			      "\"completed\":{\"kernel\":0,\"user\":114}}"));
	ck_assert(strstr(b.p, "\"files\":{\"open\":130,\"cache\":{\"entries\":0,"
			      "\"lookups\":{\"hit\":0,\"revalidated\":0,\"miss\":132},"
			      "\"memory_hits\":134}},"
			      "\"buffer_bytes\":{\"used\":0,\"kept\":136},"));
	ck_assert_str_eq(b.p + strlen(b.p) - 4, "}]}\n");
	metrics_buf_free(&b);
}
END_TEST

/* Hundreds of workers: the text grows well past its first allocation. */
START_TEST(test_many_workers)
{
	enum { N = 300 };
	struct worker_snapshot *w = calloc(N, sizeof(*w));
	struct metrics_buf b = {0};

	ck_assert_ptr_nonnull(w);
	for (unsigned i = 0; i < N; i++)
		fill(&w[i], i * 1000);
	struct metrics_view v = view(w, N);
	metrics_prometheus(&b, &v);
	ck_assert(!b.failed);
	ck_assert_uint_gt(b.len, 500000); /* from a first buffer of 16 KiB */
	has_line(&b, "ktlsd_file_cache_memory_hits_total{worker=\"299\"} 299017");
	metrics_buf_free(&b);
	metrics_json(&b, &v);
	ck_assert(!b.failed);
	metrics_printf(&b, "%c", '\0');
	ck_assert(strstr(b.p, "{\"id\":299,\"connections\":{\"accepted\":299001,"));
	metrics_buf_free(&b);
	free(w);
}
END_TEST

START_TEST(test_label_escaping)
{
	struct metrics_buf b = {0};
	struct metrics_view v = view(NULL, 0);

	v.version = "a\"b\\c\nd";
	metrics_prometheus(&b, &v);
	ck_assert(!b.failed);
	has_line(&b, "ktlsd_build_info{version=\"a\\\"b\\\\c\\nd\",openssl=\"3.0.13\","
		     "kernel_tls=\"on\"} 1");
	metrics_buf_free(&b);
}
END_TEST

START_TEST(test_stats)
{
	struct worker_snapshot a, b, c;
	_Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS];
	struct worker_stats st = {0};

	fill(&a, 1);
	fill(&b, 10);
	stats_publish(shown, &a);
	stats_read(shown, &c);
	ck_assert(memcmp(&a, &c, sizeof(a)) == 0);
	stats_add(&c, &b);
	ck_assert_uint_eq(c.stats.accepted, 13);
	ck_assert_uint_eq(c.open_files, 41);
	ck_assert_uint_eq(stats_sum(c.stats.timeouts, STAT_TIMEOUTS), 31);
	stats_count_response(&st, STAT_HTTP1, 101);
	stats_count_response(&st, STAT_HTTP1, 599);
	stats_count_response(&st, STAT_HTTP2, 304);
	stats_count_response(&st, STAT_HTTP2, 0);
	ck_assert_uint_eq(st.requests[STAT_HTTP1][0], 1);
	ck_assert_uint_eq(st.requests[STAT_HTTP1][4], 1);
	ck_assert_uint_eq(st.requests[STAT_HTTP2][2], 1);
	ck_assert_uint_eq(st.requests[STAT_HTTP2][4], 1);
	ck_assert_int_eq(stats_tls_path(false, false), STAT_TLS_NONE);
	ck_assert_int_eq(stats_tls_path(true, false), STAT_TLS_USER);
	ck_assert_int_eq(stats_tls_path(true, true), STAT_TLS_KERNEL);
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_prometheus_series);
	tcase_add_test(tc, test_prometheus_shape);
	tcase_add_test(tc, test_sites);
	tcase_add_test(tc, test_json_totals);
	tcase_add_test(tc, test_many_workers);
	tcase_add_test(tc, test_label_escaping);
	tcase_add_test(tc, test_stats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(metrics_suite());
}
