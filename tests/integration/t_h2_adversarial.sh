# shellcheck shell=bash
# HTTP/2 under hostile or odd clients (h2_client.py, each case on its own
# connection): bad preface, rapid reset, CONTINUATION / SETTINGS / PING
# floods, zero window, oversized header blocks, unknown frame types, too many
# streams, an idle connection. After each, the server must still answer a
# normal curl --http2 request.

# shellcheck disable=SC2034 # read by lib.sh's kcurl
KCURL_HTTP=--http2
H2PY="$(dirname "${BASH_SOURCE[0]}")/h2_client.py"

# A root of our own: a 1 MiB file, and a.txt for the "still serving" probes.
root=$T/root
mkdir -p "$root"
head -c $((1 << 20)) /dev/urandom >"$root/mid.bin"
cp "$FIX/root/a.txt" "$root/a.txt"
mid_sha=$(sha "$root/mid.bin")

# h2c SUBCOMMAND ARGS...: h2_client.py (see its header), bounded in time:
# OUT and PY_OUT as lib.sh's py_client sets them.
h2c() {
	py_client 30 "$H2PY" "$@"
}

# still_serving NAME: the server is running and answers curl --http2.
still_serving() {
	local v
	if ! kill -0 "$KTLSD_PID" 2>/dev/null; then
		fail "$1: the server is still running" "it exited; log: $(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
		return
	fi
	v=$(kcurl --max-time 10 -o "$T/still.b" -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
	if [ "$v" = "2 200" ] && cmp -s "$T/still.b" "$root/a.txt"; then
		pass "$1: then a normal HTTP/2 request succeeds"
	else
		fail "$1: then a normal HTTP/2 request succeeds" "got '$v'"
	fi
}

# ended NAME: OUT shows the server ended the connection: it closed it, or
# sent a GOAWAY with an error code (not NO_ERROR).
ended() {
	if [[ " $OUT " == *" CLOSED "* ]] || [[ " $OUT " =~ \ GOAWAY\ [1-9][0-9]*\  ]]; then
		pass "$1"
	else
		fail "$1" "got '$OUT', want GOAWAY with an error code, or CLOSED"
	fi
}

# expect_no_status NAME: OUT shows no response to stream 1.
expect_no_status() {
	if [[ " $OUT " == *" STATUS 1 "* ]]; then
		fail "$1" "the request was answered: $OUT"
	else
		pass "$1"
	fi
}

# A short grace: a connection left hanging must not hold up the exit (other
# checks say what went wrong with it).
start_ktlsd --root "$root" --shutdown-grace 3 || return 0

# ---- malformed start and floods -------------------------------------------------

h2c preface "$PORT"
expect_match "garbage instead of the preface: connection closed" "$OUT" '(^| )CLOSED [0-9.]+$'
still_serving "garbage preface"

# Rapid reset (CVE-2023-44487): burst 10 x --h2-reset-rate (100) = 1000.
h2c rst-flood "$PORT" 2000 /mid.bin
ended "2000 streams opened and reset at once: GOAWAY or close"
echo "# rapid reset: $OUT"
still_serving "rapid reset flood"
h2c rst-flood "$PORT" 20 /mid.bin 1
expect_eq "20 streams opened and reset (under the burst): connection kept" "$OUT" "RESETS 0 OPEN"

# CONTINUATION flood (CVE-2024-28182): --h2-max-continuations 8.
h2c cont-flood "$PORT" 100 /a.txt
ended "HEADERS + 100 CONTINUATION frames: GOAWAY or close"
expect_no_status "HEADERS + 100 CONTINUATION frames: the request is not answered"
still_serving "CONTINUATION flood"
h2c cont-flood "$PORT" 8 /a.txt 1
expect_eq "HEADERS + 8 CONTINUATION frames (the limit): answered, connection kept" "$OUT" "STATUS 1 200 OPEN"

h2c settings-flood "$PORT" 10000
ended "10000 SETTINGS frames, ACKs unread: GOAWAY or close"
still_serving "SETTINGS flood"
h2c ping-flood "$PORT" 10000
ended "10000 PINGs, ACKs unread: GOAWAY or close"
still_serving "PING flood"
h2c ping-flood "$PORT" 50 1
expect_eq "50 PINGs: connection kept" "$OUT" OPEN

# ---- flow control ------------------------------------------------------------------

h2c zero-window "$PORT" /mid.bin
expect_match "zero window: HEADERS arrive" "$OUT" '^HEADERS 200 '
expect_match "zero window: no DATA for 1 s" "$OUT" ' DATA_WHILE_CLOSED 0 '
expect_eq "zero window: WINDOW_UPDATE lets the 1 MiB body complete byte-exact" \
	"$(sed -n 's/^COMPLETE //p' "$PY_OUT")" "$((1 << 20)) $mid_sha"
still_serving "zero window"

# ---- header blocks -------------------------------------------------------------------

# One 100 KiB value: over --h2-max-header-list (65536) and over what HPACK
# decoders take in one field.
h2c big-header "$PORT" 102400 /a.txt
case " $OUT " in
*" STATUS 1 431 "*) pass "100 KiB header value: refused (431)" ;;
*" STATUS 1 "*) fail "100 KiB header value: refused" "answered: $OUT" ;;
*" RESET 1 "*) pass "100 KiB header value: refused (stream reset)" ;;
*) ended "100 KiB header value: refused (GOAWAY or close)" ;;
esac
echo "# 100 KiB header: $OUT"
still_serving "100 KiB header value"

# 80 headers of 1000 bytes: over the list limit, each field harmless. The
# stream is refused and the connection keeps working.
h2c big-header "$PORT" 80000 /a.txt split
expect_match "80 KB header list: the stream is reset or gets 431" "$OUT" '^(RESET 1 [0-9]+|STATUS 1 431) '
expect_match "80 KB header list: the next request on the connection gets 200" "$OUT" ' NEXT 200 '
still_serving "80 KB header list"
h2c big-header "$PORT" 50000 /a.txt split
expect_match "50 KB header list (under the limit): 200" "$OUT" '^STATUS 1 200 '

# ---- unknown frame types ---------------------------------------------------------------

h2c unknown-frame "$PORT" /a.txt
expect_eq "unknown frame types are ignored: the request on the connection succeeds" "$OUT" "STATUS 200 bytes=$(size "$root/a.txt")"
still_serving "unknown frame types"
# 1 MiB of them in one write: the server reads its receive buffer full many
# times over and must keep reading to find the request behind.
h2c unknown-frame "$PORT" /a.txt $((1 << 20))
expect_eq "1 MiB of unknown frames, then a request: answered" "$OUT" "STATUS 200 bytes=$(size "$root/a.txt")"
still_serving "1 MiB of unknown frames"

# ---- a file that shrinks under a response -------------------------------------

# The server must never send bytes it does not have: the client gets a
# prefix of the file, then a reset or a close.
head -c $((8 << 20)) /dev/urandom >"$root/shrink.bin"
cp "$root/shrink.bin" "$T/shrink.orig"
rm -f "$T/resume"
timeout 30 "$PY" "$H2PY" get --window 1048576 --pause-after $((2 << 20)) --resume-file "$T/resume" \
	"$PORT" /shrink.bin >"$T/shrink.out" 2>&1 &
client=$!
if wait_until 10 grep -q '^PAUSED' "$T/shrink.out"; then
	truncate -s $((4 << 20)) "$root/shrink.bin"
fi
touch "$T/resume"
wait "$client"
line=$(grep '^STREAM 1 ' "$T/shrink.out")
got=$(printf '%s\n' "$line" | tr ' ' '\n' | sed -n 's/^bytes=//p')
expect_match "file shrinks mid-response: the stream does not end normally" "$(tail -n1 "$T/shrink.out")" '^INCOMPLETE'
if [ -n "$got" ] && [ "$got" -le $((4 << 20)) ] &&
	[ "$(head -c "$got" "$T/shrink.orig" | sha256sum | cut -d' ' -f1)" = "$(printf '%s\n' "$line" | tr ' ' '\n' | sed -n 's/^sha256=//p')" ]; then
	pass "file shrinks mid-response: the client got only a prefix of the file ($got bytes)"
else
	fail "file shrinks mid-response: the client got only a prefix of the file" "$(tr '\n' ' ' <"$T/shrink.out")"
fi
rm -f "$root/shrink.bin" "$T/shrink.orig"
still_serving "file shrinking under a response"

stop_ktlsd

# ---- --h2-max-streams, --h2-max-header-list, --h2-reset-rate, --h2-max-continuations ----

start_ktlsd --root "$root" --shutdown-grace 3 --h2-max-streams 4 --h2-max-header-list 4096 \
	--h2-reset-rate 1 --h2-max-continuations 2 || return 0

# Requests sent with the preface, before the client could acknowledge the
# server's SETTINGS: RFC 9113 5.1.2 lets the server refuse the excess with
# REFUSED_STREAM (7) or PROTOCOL_ERROR (1); the first four are answered.
h2c max-streams --early "$PORT" 10 /mid.bin
expect_match "--h2-max-streams 4: advertised" "$OUT" '^MAX_CONCURRENT 4 '
answered=$(grep -c '^ANSWERED' "$PY_OUT")
refused=$(grep -cE '^REFUSED [0-9]+ (1|7)$' "$PY_OUT")
expect_eq "10 streams at once with the limit 4: 4 answered, 6 refused" "$answered $refused" "4 6"
still_serving "10 streams before SETTINGS ACK"

# After the ACK, the excess is the client's fault for sure: streams past the
# limit must not be answered; refusing them or ending the connection with
# PROTOCOL_ERROR are both within RFC 9113.
h2c max-streams "$PORT" 10 /mid.bin
answered=$(grep -c '^ANSWERED' "$PY_OUT")
refused=$(grep -cE '^REFUSED [0-9]+ (1|7)$' "$PY_OUT")
goaway=$(sed -n 's/^GOAWAY \([0-9]*\) .*/\1/p' "$PY_OUT")
if [ "$answered" -le 4 ] && { [ "$refused" -eq $((10 - answered)) ] || [ "$goaway" = 1 ]; }; then
	pass "10 streams after SETTINGS ACK with the limit 4: excess refused (RST or GOAWAY PROTOCOL_ERROR)"
else
	fail "10 streams after SETTINGS ACK with the limit 4: excess refused" "got '$OUT'"
fi
echo "# max streams after ACK: $OUT"
still_serving "10 streams after SETTINGS ACK"

h2c big-header "$PORT" 8000 /a.txt split
expect_match "--h2-max-header-list 4096: 8 KB of headers refused" "$OUT" '^(RESET 1 [0-9]+|STATUS 1 431) '
expect_match "--h2-max-header-list 4096: the connection keeps working" "$OUT" ' NEXT 200 '
h2c big-header "$PORT" 2000 /a.txt split
expect_match "--h2-max-header-list 4096: 2 KB of headers accepted" "$OUT" '^STATUS 1 200 '
still_serving "--h2-max-header-list"

# --h2-reset-rate 1: a burst of 10.
h2c rst-flood "$PORT" 30 /mid.bin 3
ended "--h2-reset-rate 1: 30 streams reset at once: GOAWAY or close"
h2c rst-flood "$PORT" 5 /mid.bin 1
expect_eq "--h2-reset-rate 1: 5 streams reset: connection kept" "$OUT" "RESETS 0 OPEN"
h2c cont-flood "$PORT" 3 /a.txt 3
ended "--h2-max-continuations 2: HEADERS + 3 CONTINUATION frames: GOAWAY or close"
h2c cont-flood "$PORT" 2 /a.txt 1
expect_eq "--h2-max-continuations 2: HEADERS + 2 CONTINUATION frames: answered" "$OUT" "STATUS 1 200 OPEN"
still_serving "--h2-reset-rate and --h2-max-continuations"

stop_ktlsd

# ---- idle connection --------------------------------------------------------------------------

start_ktlsd --root "$root" --idle-timeout 1 || return 0
h2c idle "$PORT" 4
t=$(sed -n 's/^CLOSED //p' "$PY_OUT")
if [ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t >= 0.5 && t <= 3) }'; then
	pass "--idle-timeout 1: an idle h2 connection is closed after about 1 s"
else
	fail "--idle-timeout 1: an idle h2 connection is closed after about 1 s" "got '$OUT'"
fi
# RFC 9113 9.1: the side that closes SHOULD first send GOAWAY, so the client
# knows no request of its was being processed.
expect_match "--idle-timeout 1: GOAWAY (NO_ERROR) before the close" "$OUT" '(^| )GOAWAY 0 [0-9]+ CLOSED'
still_serving "idle timeout"
stop_ktlsd
