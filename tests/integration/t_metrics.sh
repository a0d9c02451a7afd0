# shellcheck shell=bash
# --status-listen: after known traffic (HTTP/1.1, HTTP/2, plain HTTP, 404s, a
# 431, a failed and a resumed handshake, a header timeout), /metrics, parsed
# by prometheus_client's own parser, and /status (JSON) count exactly that;
# the public port does not serve them; the status listener refuses what it
# does not serve, and a silent client neither blocks a scrape nor stays.

MPY="$(dirname "${BASH_SOURCE[0]}")/metrics_check.py"

if ! "$PY" -c 'import prometheus_client.parser' 2>/dev/null; then
	fail "python3-prometheus-client is installed" "$PY cannot import prometheus_client (scripts/install-deps)"
	return 0
fi

SPORT=$(freeport)
PPORT=$(freeport)
start_ktlsd --status-listen "127.0.0.1:$SPORT" --listen-plain "127.0.0.1:$PPORT" \
	--header-timeout 3 || return 0

# mexpect NAME EXPR...: metrics_check.py expect (waits for the next ticks).
mexpect() {
	local name=$1
	shift
	py_client 60 "$MPY" expect "$SPORT" "$@"
	expect_eq "$name" "$OUT" OK
}

# ---- the traffic ----
fetch h1_ok /a.txt
expect_eq "HTTP/1.1 GET /a.txt" "$STATUS" 200
fetch h1_404 /no-such-file
expect_eq "HTTP/1.1 GET of a missing file" "$STATUS" 404
KCURL_HTTP=--http2 fetch h2_ok /b.txt
expect_eq "HTTP/2 GET /b.txt" "$STATUS" 200
expect_match "HTTP/2 GET /b.txt is HTTP/2" "$(head -n1 "$T/h2_ok.h")" '^HTTP/2 200'
KCURL_HTTP=--http2 fetch h2_404 /no-such-file
expect_eq "HTTP/2 GET of a missing file" "$STATUS" 404
st=$(curl -sS --max-time 30 -o "$T/plain.b" -w '%{http_code}' "http://127.0.0.1:$PPORT/c.txt")
expect_eq "plain HTTP GET /c.txt" "$st" 200

# The public port knows nothing of the status pages: a missing file there.
fetch pub_metrics /metrics
expect_eq "the public port answers /metrics 404" "$STATUS" 404
check "the public port's /metrics is no Prometheus text" test "$(grep -c ktlsd_ "$T/pub_metrics.b")" -eq 0
fetch pub_status /status
expect_eq "the public port answers /status 404" "$STATUS" 404

# A request head over --max-header-size: 431 (a limit hit).
raw "send=GET /a.txt HTTP/1.1\r\nHost: localhost\r\nX-Long: $(head -c 9000 /dev/zero | tr '\0' a)\r\n\r\n" all=10
expect_match "a head over --max-header-size: 431" "$(raw_summary)" '^RESP 431 '

# Plain text on the TLS port: a handshake OpenSSL refuses.
timeout 30 "$PY" "$LIBPY" raw --plain "$PORT" 'send=GET / HTTP/1.0\r\n\r\n' close=10 >/dev/null 2>&1

py_client 60 "$MPY" resume "$PORT" /a.txt
expect_eq "a second connection resumes the first one's TLS session" "$OUT" "first=full second=resumed"

# Open connections by state and by who encrypts, then a header timeout.
py_client 90 "$MPY" gauges "$PORT" "$PPORT" "$SPORT"
expect_match "gauges: two keep-alive connections answered" "$OUT" '^responses 200 200 '
expect_match "gauges: both idle, one plain, one encrypted" "$OUT" 'idle ([2-9]|[1-9][0-9]+) plain [1-9][0-9]* encrypted [1-9]'
expect_match "gauges: half a request head shows as reading" "$OUT" 'reading [1-9]'
expect_match "gauges: the half head is dropped at --header-timeout" "$OUT" 'dropped after the header timeout'

# ---- what /metrics says: exactly the traffic above ----
# TLS connections: h1_ok h1_404 h2_ok h2_404 pub_metrics pub_status, the 431,
# the first of resume, the one of gauges (full); resume's second; the plain
# text. Plain connections: c.txt and gauges'. Accepted: those 13, and the
# probes of start_ktlsd that waited for the port.
mexpect "/metrics: handshakes full, resumed, failed" \
	'ktlsd_tls_handshakes_total{result=full}==9' \
	'ktlsd_tls_handshakes_total{result=resumed}==1' \
	'ktlsd_tls_handshakes_total{result=failed}==1' \
	'ktlsd_tls_connections_total==10' \
	'ktlsd_connections_accepted_total>=13'
mexpect "/metrics: requests by protocol and status class" \
	'ktlsd_requests_total{protocol=http1,class=2xx}==6' \
	'ktlsd_requests_total{protocol=http1,class=4xx}==4' \
	'ktlsd_requests_total{protocol=http2,class=2xx}==1' \
	'ktlsd_requests_total{protocol=http2,class=4xx}==1' \
	'ktlsd_requests_total==12'
# The same per site (one here, the top level's: "-") and status code; the
# bodies are the files' 10000 bytes and the error pages'.
mexpect "/metrics: per site, by status code, body bytes and latency" \
	'ktlsd_site_responses_total{site=-,code=200}==7' \
	'ktlsd_site_responses_total{site=-,code=404}==4' \
	'ktlsd_site_responses_total{site=-,code=431}==1' \
	'ktlsd_site_responses_total{site=-,code=other}==0' \
	'ktlsd_site_responses_total==12' \
	'ktlsd_site_body_bytes_total{site=-}>=10000' \
	'ktlsd_site_request_duration_seconds_count{site=-}==12' \
	'ktlsd_site_request_duration_seconds_bucket{site=-,le=+Inf}==12'
# a.txt (1000 bytes) four times and b.txt (2000) once over TLS, c.txt (3000)
# and a.txt over plain HTTP; heads and handshakes come on top.
mexpect "/metrics: bytes sent, at least the bodies" \
	'ktlsd_sent_bytes_total>=10000' \
	'ktlsd_sent_bytes_total{tls=none}>=4000' \
	'ktlsd_file_bodies_total==7'
mexpect "/metrics: timeouts and limits by kind" \
	'ktlsd_timeouts_total{kind=header}==1' \
	'ktlsd_timeouts_total{kind=handshake}==0' \
	'ktlsd_timeouts_total{kind=send}==0' \
	'ktlsd_timeouts_total{kind=idle}==0' \
	'ktlsd_limit_hits_total{limit=header}==1' \
	'ktlsd_limit_hits_total{limit=uri}==0' \
	'ktlsd_limit_hits_total{limit=connections}==0'
mexpect "/metrics: no connection left open; files cached" \
	'ktlsd_connections==0' \
	'ktlsd_connections_tls==0' \
	'ktlsd_open_files>=3' \
	'ktlsd_file_cache_entries>=3' \
	'ktlsd_workers==2'

py_client 60 "$MPY" json "$SPORT"
expect_match "/status: JSON whose totals are the workers' sums and agree with /metrics" "$OUT" '^OK '
expect_match "/status: the totals" "$OUT" 'requests=12 full=9 resumed=1 failed=1 accepted=[0-9]+$'
accepted=${OUT##*accepted=}

# ---- what the status listener refuses ----
st=$(curl -sS --max-time 30 -D "$T/post.h" -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$SPORT/metrics")
expect_eq "status listener: POST /metrics is 405" "$st" 405
expect_eq "status listener: 405 says Allow: GET, HEAD" "$(hdr "$T/post.h" Allow)" "GET, HEAD"
st=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SPORT/index.html")
expect_eq "status listener: another path is 404" "$st" 404
st=$(curl -sS --max-time 30 -I -o "$T/head.h" -w '%{http_code} %{size_download}' "http://127.0.0.1:$SPORT/metrics")
expect_eq "status listener: HEAD /metrics is 200 without a body" "$st" "200 0"
check "status listener: HEAD /metrics gives the body's length" test "$(hdr "$T/head.h" Content-Length)" -gt 1000
st=$(curl -sS --max-time 30 -o "$T/slash.b" -w '%{http_code}' "http://127.0.0.1:$SPORT/status/")
expect_eq "status listener: /status/ is the JSON too" "$st" 200
check "status listener: /status/ is JSON" "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/slash.b"
py_client 60 "$MPY" overlong "$SPORT"
expect_eq "status listener: an over-long request head gets 431 and a close" "$OUT" \
	"HTTP/1.1 431 Request Header Fields Too Large closed"
py_client 60 "$MPY" silent "$SPORT"
expect_eq "status listener: a silent client blocks no scrape and is closed" "$OUT" \
	"scrape 200 while silent silent closed"

# The status listener's own requests are no part of the counts.
mexpect "/metrics: the scrapes counted nothing" \
	'ktlsd_requests_total==12' \
	"ktlsd_connections_accepted_total==$accepted"
# A download its client does not read is a connection writing (after the
# counts above: it is a request of its own).
py_client 60 "$MPY" writing "$PPORT" "$SPORT"
expect_match "gauges: an unread download shows as writing" "$OUT" '^writing [1-9]'
stop_ktlsd

# ---- /healthz and --drain-delay: a load balancer drains the node first ----
SPORT=$(freeport)
start_ktlsd --status-listen "127.0.0.1:$SPORT" --drain-delay 3 || return 0
health() { curl -sS --max-time 30 -o "$T/health.b" -w '%{http_code}' "http://127.0.0.1:$SPORT/healthz"; }
expect_eq "/healthz while serving: 200" "$(health)" 200
expect_eq "/healthz while serving: says ok" "$(cat "$T/health.b")" ok
kill -TERM "$KTLSD_PID"
wait_until 30 sh -c '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$1/healthz")" = 503 ]' sh "$SPORT"
expect_eq "/healthz after SIGTERM with --drain-delay 3: 503" "$(health)" 503
fetch drain /a.txt
expect_eq "... while the node drains, the files are still served" "$STATUS" 200
check "... and the server still runs" kill -0 "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 60; then
	expect_eq "after the drain delay the server stops by itself, exit 0" "$EXIT_CODE" 0
else
	fail "after the drain delay the server stops by itself" "still running 60 s later"
	kill -KILL "$KTLSD_PID" 2>/dev/null
fi
check "no sanitizer report (drain)" sanitizer_clean "$KTLSD_LOG"
check "the log says the drain, then the stop" sh -c \
	'grep -q "SIGTERM: /healthz answers 503; serving 3000 ms more" "$1" && grep -q "SIGTERM: finishing responses in flight" "$1"' \
	sh "$KTLSD_LOG"
KTLSD_PID=

# A second SIGTERM ends the drain at once.
start_ktlsd --status-listen "127.0.0.1:$SPORT" --drain-delay 600 || return 0
kill -TERM "$KTLSD_PID"
wait_until 30 sh -c '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$1/healthz")" = 503 ]' sh "$SPORT"
kill -TERM "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 60; then
	expect_eq "--drain-delay 600: a second SIGTERM stops the server now, exit 0" "$EXIT_CODE" 0
else
	fail "--drain-delay 600: a second SIGTERM stops the server now" "still running 60 s later"
	kill -KILL "$KTLSD_PID" 2>/dev/null
fi
KTLSD_PID=
