# shellcheck shell=bash
# HTTP/1.1 connection handling on one TLS connection: pipelining, keep-alive,
# HTTP/1.0 and "Connection: close".

start_ktlsd || return 0
R=$FIX/root

get() { # get PATH [EXTRA-HEADER-LINES]: one request as lib.py raw escapes
	printf 'GET %s HTTP/1.1\\r\\nHost: localhost\\r\\n%s\\r\\n' "$1" "${2:-}"
}

# Three requests in one write: three responses, in order.
raw "send=$(get /a.txt)$(get /b.txt)$(get /c.txt)" resp resp resp
expect_eq "pipelined: three responses" "$(raw_summary)" \
	"RESP 200 $(size "$R/a.txt") RESP 200 $(size "$R/b.txt") RESP 200 $(size "$R/c.txt")"
for i in 0:a 1:b 2:c; do
	check "pipelined: response ${i%%:*} is ${i#*:}.txt" cmp -s "$RAWDIR/${i%%:*}.body" "$R/${i#*:}.txt"
done

# Pipelined with a HEAD and a 404 in the middle: bodies must not shift.
raw "send=$(get /a.txt)HEAD /b.txt HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n$(get /missing.txt)$(get /c.txt)" \
	resp resp-head resp resp
expect_eq "pipelined GET, HEAD, 404, GET" "$(raw_summary | sed 's/RESP 404 [0-9]*/RESP 404 n/')" \
	"RESP 200 $(size "$R/a.txt") RESP 200 0 RESP 404 n RESP 200 $(size "$R/c.txt")"
check "pipelined after HEAD and 404: last body" cmp -s "$RAWDIR/3.body" "$R/c.txt"

# The same three requests split at awkward places across writes.
raw "trickle=$(get /a.txt)$(get /b.txt)$(get /c.txt)" resp resp resp
expect_eq "pipelined, split across writes" "$(raw_summary)" \
	"RESP 200 $(size "$R/a.txt") RESP 200 $(size "$R/b.txt") RESP 200 $(size "$R/c.txt")"

# Keep-alive: one request, its response, a second request later, and the
# connection still open afterwards.
raw "send=$(get /a.txt)" resp sleep=0.3 "send=$(get /b.txt)" resp close=1
expect_eq "keep-alive: two sequential requests, connection stays open" "$(raw_summary)" \
	"RESP 200 $(size "$R/a.txt") RESP 200 $(size "$R/b.txt") OPEN"
check "keep-alive: second body" cmp -s "$RAWDIR/1.body" "$R/b.txt"

# HTTP/1.0 without keep-alive: the server closes after the response.
raw 'send=GET /a.txt HTTP/1.0\r\nHost: localhost\r\n\r\n' resp close=5
expect_eq "HTTP/1.0: response, then the server closes" "$(raw_summary)" "RESP 200 $(size "$R/a.txt") CLOSED"
expect_match "HTTP/1.0: response has Content-Length" "$(hdr "$RAWDIR/0.head" Content-Length)" '^[0-9]+$'

# HTTP/1.0 with keep-alive may stay open; if it does, it must say so.
raw 'send=GET /a.txt HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n' resp close=1
case $RAW_OUT in
*OPEN*) expect_match "HTTP/1.0 keep-alive kept: response says keep-alive" \
	"$(hdr "$RAWDIR/0.head" Connection)" '^[Kk]eep-[Aa]live$' ;;
*) expect_eq "HTTP/1.0 keep-alive closed: a full response first" "$(raw_summary)" "RESP 200 $(size "$R/a.txt") CLOSED" ;;
esac

# HTTP/1.1 "Connection: close": the server closes after the response, and
# ignores a request sent behind it.
raw "send=$(get /a.txt 'Connection: close\r\n')$(get /b.txt)" resp close=5
expect_eq "Connection: close: response, then close, nothing more" "$(raw_summary)" "RESP 200 $(size "$R/a.txt") CLOSED"
expect_match "Connection: close: response says close" "$(hdr "$RAWDIR/0.head" Connection)" '^[Cc]lose$'
# The close (TLS close_notify or TCP FIN) follows the response at once: a
# client reading to EOF must not wait for a linger timer.
t=$(printf '%s\n' "$RAW_OUT" | sed -n 's/^CLOSED //p')
if [ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t < 1) }'; then
	pass "Connection: close: closed promptly (within 1 s)"
else
	fail "Connection: close: closed promptly (within 1 s)" "$(printf '%s\n' "$RAW_OUT" | tr '\n' ' ')"
fi

# Many requests on one connection (no per-connection leak or limit below 50).
many=
steps=()
for ((i = 0; i < 49; i++)); do
	many+=$(get /a.txt)
	steps+=(resp)
done
many+=$(get /b.txt)
raw "send=$many" "${steps[@]}" resp
expect_eq "50 pipelined requests: 50 responses" "$(printf '%s\n' "$RAW_OUT" | grep -c '^RESP 200 ')" 50
check "50 pipelined requests: last body" cmp -s "$RAWDIR/49.body" "$R/b.txt"

stop_ktlsd
