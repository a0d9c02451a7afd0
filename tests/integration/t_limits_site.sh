# shellcheck shell=bash
# --limit-conn (connections per client address, across workers; HTTP/2 counts
# the connection, not its streams; 429 over it, logged and counted) and
# --limit-rate / --limit-rate-after (a paced download takes at least the
# time its rate says, and its bytes are intact on every send path).

LPY="$(dirname "${BASH_SOURCE[0]}")/limits_clients.py"
MPY="$(dirname "${BASH_SOURCE[0]}")/metrics_check.py"

# hold NAME N: keep N TLS keep-alive connections from 127.0.0.1 open (each
# answered 200 first) in the background; sets HOLD_PID. Returns 1 if they
# were not all answered 200 within 30 s.
hold() {
	"$PY" "$LPY" hold "$PORT" "$2" 120 >"$T/hold.$1.out" 2>&1 &
	HOLD_PID=$!
	if wait_until 30 grep -q '^HELD' "$T/hold.$1.out"; then
		pass "$1: $2 connections from 127.0.0.1 held, each answered 200"
		return 0
	fi
	fail "$1: $2 connections from 127.0.0.1 held, each answered 200" "$(cat "$T/hold.$1.out")"
	return 1
}

# unhold PID: end a holder (its connections close with it).
unhold() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# plain_status [CURL-ARGS...]: the status of GET /a.txt over plain HTTP.
plain_status() {
	curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "$@" "http://127.0.0.1:$PPORT/a.txt" 2>/dev/null
}

# h1_ok_again: a new HTTP/1.1 connection from 127.0.0.1 is answered 200.
h1_ok_again() {
	[ "$(kcurl -o /dev/null -w '%{http_code}' "$BASE/a.txt")" = 200 ]
}

# ---- --limit-conn 2 ----
SPORT=$(freeport)
PPORT=$(freeport)
start_ktlsd --limit-conn 2 --listen-plain "127.0.0.1:$PPORT" --status-listen "127.0.0.1:$SPORT" \
	--access-log "$T/access.log" --log-level debug || return 0

hold two 2 || return 0
two=$HOLD_PID

# A third from the same address: 429 to its first request, then closed
# (the request asked for keep-alive).
raw "send=GET /a.txt HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n" all=10
expect_eq "a third HTTP/1.1 connection from 127.0.0.1: one 429, then close" \
	"$(raw_summary | sed 's/RESP 429 [0-9]*/RESP 429/')" "RESP 429 CLOSED"
expect_eq "the 429 says Connection: close" "$(hdr "$RAWDIR/0.head" Connection)" close
fetch over_h1 /a.txt
expect_eq "curl, HTTP/1.1, third connection: 429" "$STATUS" 429
KCURL_HTTP=--http2 fetch over_h2 /a.txt
expect_eq "curl, HTTP/2, third connection: 429" "$STATUS" 429
expect_match "curl, HTTP/2, third connection: it is HTTP/2" "$(head -n1 "$T/over_h2.h")" '^HTTP/2 429'
# Plain HTTP counts against the same address.
expect_eq "plain HTTP from 127.0.0.1, third connection: 429" "$(plain_status)" 429

# Another address is another client (127.0.0.2 is loopback too).
fetch other_h1 /a.txt --interface 127.0.0.2
expect_eq "HTTP/1.1 from 127.0.0.2: 200" "$STATUS" 200
expect_eq "HTTP/1.1 from 127.0.0.2: the file" "$(sha "$T/other_h1.b")" "$(sha "$FIX/root/a.txt")"
KCURL_HTTP=--http2 fetch other_h2 /a.txt --interface 127.0.0.2
expect_eq "HTTP/2 from 127.0.0.2: 200" "$STATUS" 200
expect_eq "plain HTTP from 127.0.0.2: 200" "$(plain_status --interface 127.0.0.2)" 200

# Closing the two frees their slots.
unhold "$two"
check "after the two held connections closed, a new one is answered 200" wait_until 20 h1_ok_again

# One held, and HTTP/2 with many streams on one more connection: the
# connection counts once, whatever its streams.
hold one 1 || return 0
one=$HOLD_PID
urls=()
for i in $(seq 1 20); do urls+=(-o /dev/null "$BASE/a.txt?$i"); done
out=$(KCURL_HTTP=--http2 kcurl -Z --parallel-max 20 -w '%{http_code} %{num_connects} %{http_version}\n' "${urls[@]}" 2>"$T/many.err")
expect_eq "20 HTTP/2 streams beside a held connection: all 200" \
	"$(printf '%s\n' "$out" | grep -c '^200 ')" 20
expect_eq "20 HTTP/2 streams: all HTTP/2" "$(printf '%s\n' "$out" | grep -c ' 2$')" 20
expect_eq "20 HTTP/2 streams: on one connection" \
	"$(printf '%s\n' "$out" | awk '{ n += $2 } END { print n }')" 1
hold one_more 1 || return 0
one_more=$HOLD_PID
KCURL_HTTP=--http2 fetch over_h2_again /a.txt
expect_eq "two held, HTTP/2 again: 429" "$STATUS" 429
unhold "$one"
unhold "$one_more"

# Counted and logged.
py_client 60 "$MPY" expect "$SPORT" 'ktlsd_limit_hits_total{limit="conn_limit"}>=5'
expect_eq "/metrics counts the refused connections (conn_limit)" "$OUT" OK
py_client 60 "$MPY" expect "$SPORT" 'ktlsd_conn_limit_untracked_total==0'
expect_eq "/metrics: every connection was tracked" "$OUT" OK
stop_ktlsd
expect_match "access log: HTTP/1.1 429 lines" "$(grep -c '"GET /a.txt HTTP/1.1" 429 ' "$T/access.log")" '^[3-9]$'
expect_match "access log: HTTP/2 429 lines" "$(grep -c '"GET /a.txt HTTP/2.0" 429 ' "$T/access.log")" '^[2-9]$'
expect_eq "error log: one debug line per refusal, no warning" \
	"$(grep -c 'limit-conn' "$KTLSD_LOG" | tr -d ' ')" \
	"$(grep -c 'over --limit-conn 2: 429' "$KTLSD_LOG" | tr -d ' ')"

# ---- SIGHUP: a new limit applies to new connections ----
# hup_to N: rewrite the config file with --limit-conn N and reload.
hup_to() {
	local start
	printf 'limit-conn %s\n' "$1" >"$T/lc.conf"
	start=$(($(grep -c '' "$KTLSD_LOG") + 1))
	kill -HUP "$KTLSD_PID"
	wait_until 10 sh -c 'tail -n +"$2" "$1" | grep -q "SIGHUP: configuration"' sh "$KTLSD_LOG" "$start"
}
printf 'limit-conn 1\n' >"$T/lc.conf"
start_ktlsd --config "$T/lc.conf" || return 0
hold held1 1 || return 0
held1=$HOLD_PID
fetch hup_over /a.txt
expect_eq "--limit-conn 1 from the config file, one held: 429" "$STATUS" 429
hup_to 3
check "SIGHUP to --limit-conn 3: a second connection is answered 200" wait_until 10 h1_ok_again
# The connection held from before the reload still counts.
hold held2 2 || return 0
held2=$HOLD_PID
fetch hup_over3 /a.txt
expect_eq "--limit-conn 3 after SIGHUP, one held from before and two after: 429" "$STATUS" 429
hup_to 0
check "SIGHUP to --limit-conn 0 (no limit): answered 200" wait_until 10 h1_ok_again
unhold "$held1"
unhold "$held2"
stop_ktlsd

# ---- --limit-rate 128k --limit-rate-after 512k ----
# 1 MiB at 128 KiB/s with the first 512 KiB free takes 4 s; at least 3 s is
# asserted (never an upper bound: the machine may be busy). --send-timeout 1
# is shorter than an HTTP/2 batch takes to leave at this rate: waiting for
# tokens must not count as a client that does not read.
mkdir -p "$T/rate"
head -c $((1 << 20)) /dev/urandom >"$T/rate/m.bin"
want=$(sha "$T/rate/m.bin")

# paced ID NAME URL CURL-ARGS...: download URL to $T/ID.b, check its bytes
# and that it took at least 3 s.
paced() {
	local id=$1 name=$2 url=$3 t
	shift 3
	t=$(curl -sS --max-time 60 --cacert "$FIX/ca.pem" --resolve "localhost:$PORT:127.0.0.1" \
		-o "$T/$id.b" -w '%{time_total}' "$@" "$url" 2>"$T/$id.err")
	expect_eq "$name: 1 MiB intact" "$(sha "$T/$id.b" 2>/dev/null)" "$want"
	if awk -v t="$t" 'BEGIN { exit !(t >= 3.0) }'; then
		pass "$name: took at least 3 s ($t s)"
	else
		fail "$name: took at least 3 s" "took $t s"
	fi
}

PPORT=$(freeport)
start_ktlsd --root "$T/rate" --listen-plain "127.0.0.1:$PPORT" --limit-rate 128k \
	--limit-rate-after 512k --send-timeout 1 --access-log "$T/rate.log" || return 0
paced h1 "HTTP/1.1 over TLS" "$BASE/m.bin" --http1.1
paced h2 "HTTP/2" "$BASE/m.bin" --http2
paced plain "plain HTTP (copy)" "http://127.0.0.1:$PPORT/m.bin"
stop_ktlsd
expect_eq "access log: the three downloads complete" "$(grep -c ' 200 1048576 .*end=complete' "$T/rate.log")" 3

PPORT=$(freeport)
start_ktlsd --root "$T/rate" --listen-plain "127.0.0.1:$PPORT" --limit-rate 128k \
	--limit-rate-after 512k --send-timeout 1 --sendfile on --access-log "$T/splice.log" || return 0
paced splice "plain HTTP, --sendfile on (splice)" "http://127.0.0.1:$PPORT/m.bin"
stop_ktlsd
expect_eq "access log: the plain download spliced" "$(grep -c 'body=splice .*end=complete' "$T/splice.log")" 1

# ---- --limit-req: requests per second per address, across the workers ----
# A burst of 2, refilled at 2 a second: 30 requests on one connection come
# faster than 15 s on any machine, so some are refused, and the connection
# stays for the rest (every one answered).
SPORT=$(freeport)
start_ktlsd --limit-req 2 --workers 2 --access-log "$T/req.log" --status-listen "127.0.0.1:$SPORT" ||
	return 0
for v in --http1.1 --http2; do
	sleep 1.2 # the budget back in full (2 a second)
	codes=$(kcurl "$v" -o /dev/null -w '%{http_code}\n' "$BASE/a.txt?req=[1-30]" 2>/dev/null | sort | uniq -c |
		awk '{printf "%s:%s ", $2, $1}')
	expect_match "--limit-req 2, 30 requests at once ($v): some 200 (the burst), the rest 429, none lost" \
		"$codes" '^200:([2-9]|1[0-4]) 429:(1[6-9]|2[0-8]) $'
done
fetch other_req /a.txt --interface 127.0.0.2
expect_eq "another address has its own budget: 200" "$STATUS" 200
sleep 1.2
fetch again_req /a.txt
expect_eq "a second later 127.0.0.1 may again: 200" "$STATUS" 200
py_client 60 "$MPY" expect "$SPORT" 'ktlsd_limit_hits_total{limit="req_limit"}>=32' \
	'ktlsd_site_responses_total{code="429"}>=32'
expect_eq "/metrics counts the refused requests (req_limit)" "$OUT" OK
stop_ktlsd
expect_eq "access log: the 429s logged" "$(grep -c '"GET /a.txt?req=[0-9]* HTTP/[12].[01]" 429 ' "$T/req.log")" \
	"$(grep -c ' 429 ' "$T/req.log")"
