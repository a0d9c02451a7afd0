# shellcheck shell=bash
# Request limits (URI, header block, header count), request smuggling shapes,
# and the handshake / header / idle / send timeouts.

# rep CHAR N: CHAR repeated N times.
rep() {
	head -c "$2" /dev/zero | tr '\0' "$1"
}

# headers N: N lines "X-Hn: v\r\n" as lib.py raw escapes.
headers() {
	local i
	for ((i = 0; i < $1; i++)); do printf 'X-H%d: v\\r\\n' "$i"; done
}

# status_of: the status of response 0 in RAW_OUT (empty if none).
status_of() {
	printf '%s\n' "$RAW_OUT" | sed -n '1s/^RESP \([0-9]*\) .*/\1/p'
}

# expect_closed_within NAME SECS: RAW_OUT says the server closed the
# connection, within SECS seconds.
expect_closed_within() {
	local t
	t=$(printf '%s\n' "$RAW_OUT" | sed -n 's/^CLOSED //p')
	if [ -n "$t" ] && awk -v t="$t" -v max="$2" 'BEGIN { exit !(t <= max) }'; then
		pass "$1"
	else
		fail "$1" "$(printf '%s\n' "$RAW_OUT" | tr '\n' ' ')(want CLOSED within $2 s)"
	fi
}

# expect_rejected NAME REQUEST: REQUEST (lib.py escapes) gets exactly one
# response, a 400, and then the server closes the connection.
expect_rejected() {
	raw "send=$2" all=5
	expect_eq "$1: one 400, then close" "$(raw_summary | sed 's/RESP 400 [0-9]*/RESP 400/')" "RESP 400 CLOSED"
}

start_ktlsd || return 0
hostl='Host: localhost\r\n'

# Defaults: --max-uri 4096, --max-header-size 8192, --max-headers 100.
fetch uri_ok "/$(rep a 3000)"
expect_eq "3000-byte URI (under the default limit): 404" "$STATUS" 404
fetch uri_long "/$(rep a 5000)"
expect_eq "5000-byte URI (over the default 4096): 414" "$STATUS" 414
raw "send=GET / HTTP/1.1\\r\\n${hostl}X-Big: $(rep b 6000)\\r\\nConnection: close\\r\\n\\r\\n" resp
expect_eq "6000-byte header (under the default 8192): 200" "$(status_of)" 200
raw "send=GET / HTTP/1.1\\r\\n${hostl}X-Big: $(rep b 9000)\\r\\n\\r\\n" resp
expect_eq "9000-byte header (over the default 8192): 431" "$(status_of)" 431
raw "send=GET / HTTP/1.1\\r\\n${hostl}$(headers 10)X-Big: $(rep b 4000)\\r\\nX-Big2: $(rep b 4500)\\r\\n\\r\\n" resp
expect_eq "header block of 8.5 KB in several headers: 431" "$(status_of)" 431
raw "send=GET / HTTP/1.1\\r\\n${hostl}$(headers 60)Connection: close\\r\\n\\r\\n" resp
expect_eq "60 headers (under the default 100): 200" "$(status_of)" 200
raw "send=GET / HTTP/1.1\\r\\n${hostl}$(headers 120)\\r\\n" resp
expect_eq "120 headers (over the default 100): 431" "$(status_of)" 431

# Smuggling shapes: each must be refused and the connection closed, and the
# request hidden behind it must never be answered.
behind='GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
expect_rejected "Content-Length and Transfer-Encoding" \
	"POST / HTTP/1.1\\r\\n${hostl}Content-Length: 6\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n$behind"
expect_rejected "Transfer-Encoding and Content-Length (GET)" \
	"GET / HTTP/1.1\\r\\n${hostl}Transfer-Encoding: chunked\\r\\nContent-Length: 6\\r\\n\\r\\n0\\r\\n\\r\\n$behind"
expect_rejected "duplicate Content-Length" \
	"GET / HTTP/1.1\\r\\n${hostl}Content-Length: 0\\r\\nContent-Length: 44\\r\\n\\r\\n$behind"
expect_rejected "bare LF line endings" \
	"GET /a.txt HTTP/1.1\\n${hostl}X-A: b\\n\\n$behind"
expect_rejected "bare LF after the headers only" \
	"GET /a.txt HTTP/1.1\\r\\n${hostl}\\n$behind"
expect_rejected "obs-fold header line" \
	"GET /a.txt HTTP/1.1\\r\\n${hostl}X-Folded: a\\r\\n b\\r\\n\\r\\n$behind"
expect_rejected "space before the colon" \
	"GET /a.txt HTTP/1.1\\r\\nHost : localhost\\r\\n\\r\\n$behind"
expect_rejected "HTTP/1.1 without Host" \
	"GET /a.txt HTTP/1.1\\r\\nX-A: b\\r\\n\\r\\n$behind"
expect_rejected "two Host headers" \
	"GET /a.txt HTTP/1.1\\r\\n${hostl}Host: other\\r\\n\\r\\n$behind"
raw "send=GET /a.txt HTTP/9.9\\r\\n${hostl}\\r\\n" resp
expect_in "unknown HTTP version: 400 or 505" "$(status_of)" 400 505

# RFC 9112 6.1: a transfer coding the server does not understand is a 501
# (then a close, as for every refused framing), wherever it is in the list;
# chunked not final among codings it knows stays a 400.
for te in foo 'foo, chunked'; do
	raw "send=POST / HTTP/1.1\\r\\n${hostl}Transfer-Encoding: $te\\r\\n\\r\\n0\\r\\n\\r\\n$behind" all=5
	expect_eq "Transfer-Encoding: $te: one 501, then close" \
		"$(raw_summary | sed 's/RESP 501 [0-9]*/RESP 501/')" "RESP 501 CLOSED"
done
expect_rejected "Transfer-Encoding: gzip (chunked not final)" \
	"POST / HTTP/1.1\\r\\n${hostl}Transfer-Encoding: gzip\\r\\n\\r\\n$behind"

# RFC 9110 2.5: HTTP/1.2 is answered as HTTP/1.1 and the connection stays
# open; HTTP/2.0 and 3.0 request lines on the HTTP/1.1 parser get 505.
raw "send=GET /a.txt HTTP/1.2\\r\\n${hostl}\\r\\n" resp "send=GET /b.txt HTTP/1.2\\r\\n${hostl}\\r\\n" resp close=1
expect_eq "HTTP/1.2: two responses on one connection, kept open" "$(raw_summary)" \
	"RESP 200 $(size "$FIX/root/a.txt") RESP 200 $(size "$FIX/root/b.txt") OPEN"
expect_match "HTTP/1.2: answered with HTTP/1.1" "$(head -n1 "$RAWDIR/0.head")" '^HTTP/1\.1 200 '
for v in 2.0 3.0; do
	raw "send=GET /a.txt HTTP/$v\\r\\n${hostl}\\r\\n" resp
	expect_eq "HTTP/$v on HTTP/1.1: 505" "$(status_of)" 505
done

# The server survived all that.
fetch alive /a.txt
expect_eq "server still answers after the bad requests" "$STATUS" 200
stop_ktlsd

# Small limits and 1-second timeouts given as flags. Each timeout check
# allows 8 s: below the defaults (10 s for the handshake and the head, 60 s
# idle or stalled), so it proves the flag took effect, yet a loaded machine
# that is slow to close does not fail it.
start_ktlsd --max-uri 200 --max-header-size 2048 --max-headers 10 \
	--handshake-timeout 1 --header-timeout 1 --idle-timeout 1 --send-timeout 1 || return 0
fetch uri_ok2 "/$(rep a 150)"
expect_eq "--max-uri 200: 150-byte URI: 404" "$STATUS" 404
fetch uri_long2 "/$(rep a 300)"
expect_eq "--max-uri 200: 300-byte URI: 414" "$STATUS" 414
raw "send=GET / HTTP/1.1\\r\\n${hostl}X-Big: $(rep b 3000)\\r\\n\\r\\n" resp
expect_eq "--max-header-size 2048: 3000-byte header: 431" "$(status_of)" 431
raw "send=GET / HTTP/1.1\\r\\n${hostl}$(headers 5)Connection: close\\r\\n\\r\\n" resp
expect_eq "--max-headers 10: 7 headers: 200" "$(status_of)" 200
raw "send=GET / HTTP/1.1\\r\\n${hostl}$(headers 15)\\r\\n" resp
expect_eq "--max-headers 10: 16 headers: 431" "$(status_of)" 431

# --header-timeout 1: half a request line, then nothing.
raw 'send=GET /a.txt HT' close=15
expect_closed_within "--header-timeout 1: silent half request closed within 8 s" 8
# ... and a client that keeps dribbling bytes (slowloris) is closed as well.
raw "drip=GET /$(rep a 15)"
expect_closed_within "--header-timeout 1: slowloris closed within 8 s" 8

# --handshake-timeout 1: a TCP connection that never starts TLS, and one that
# stops after a TLS record header.
RAW_OUT=$(timeout 30 "$PY" "$LIBPY" raw --plain "$PORT" close=15 2>&1)
expect_closed_within "--handshake-timeout 1: silent TCP connection closed within 8 s" 8
RAW_OUT=$(timeout 30 "$PY" "$LIBPY" raw --plain "$PORT" 'send=\x16\x03\x01\x02\x00\x01' close=15 2>&1)
expect_closed_within "--handshake-timeout 1: half ClientHello closed within 8 s" 8

# --idle-timeout 1: a keep-alive connection with nothing more to say.
raw "send=GET /a.txt HTTP/1.1\\r\\n${hostl}\\r\\n" resp close=15
expect_match "--idle-timeout 1: first the response" "$RAW_OUT" '^RESP 200 '
expect_closed_within "--idle-timeout 1: idle keep-alive closed within 8 s" 8

# --send-timeout 1: a client that stops reading a 32 MiB body is dropped; when
# it reads again it gets what was buffered, then the close, not the whole file.
# What is buffered (socket buffers, several MB) takes a while to drain on a
# loaded machine: the proof is the close before the whole file, not how fast
# the client reads, so the deadline is generous.
raw "send=GET /big.bin HTTP/1.1\\r\\n${hostl}\\r\\n" sleep=4 close=60
extra=$(printf '%s\n' "$RAW_OUT" | sed -n 's/^EXTRA //p')
expect_closed_within "--send-timeout 1: the server closes the stalled reader" 60
if [ "${extra:-0}" -lt $((32 << 20)) ]; then
	pass "--send-timeout 1: stalled reader did not get the whole file"
else
	fail "--send-timeout 1: stalled reader did not get the whole file" "got $extra bytes"
fi

fetch alive2 /a.txt
expect_eq "server still answers after the timeouts" "$STATUS" 200
stop_ktlsd

# Response heads are bounded: a Content-Type too long for the head buffer is
# a 500 on a connection that goes on, never bytes past the buffer; one that
# fits is sent whole; a 301 for a directory whose %-encoded name is several
# KB (within --max-uri) carries its whole Location.
hroot=$T/heads
mkdir -p "$hroot"
printf 'fits\n' >"$hroot/f.fits"
printf 'long\n' >"$hroot/f.long"
{
	printf 'application/x-%s fits\n' "$(rep f 1500)"
	printf 'application/x-%s long\n' "$(rep l 3000)"
} >"$T/mime.types"
dir= enc=
for ((i = 0; i < 10; i++)); do
	# 100 "é": 200 bytes on disk (NAME_MAX is 255), 600 once %-encoded
	dir="$dir/$(for ((j = 0; j < 100; j++)); do printf '\303\251'; done)"
	enc="$enc/$(for ((j = 0; j < 100; j++)); do printf '%%C3%%A9'; done)"
done
mkdir -p "$hroot$dir"
start_ktlsd --root "$hroot" --mime-types "$T/mime.types" --max-uri 16384 || return 0
fetch ct_fits /f.fits
expect_eq "1.5 KB Content-Type: 200" "$STATUS" 200
expect_eq "1.5 KB Content-Type: sent whole" "$(hdr "$T/ct_fits.h" Content-Type)" "application/x-$(rep f 1500)"
raw "send=GET /f.long HTTP/1.1\\r\\n${hostl}\\r\\n" resp "send=GET /f.fits HTTP/1.1\\r\\n${hostl}\\r\\n" resp close=1
expect_eq "3 KB Content-Type: 500, then the next request on the connection" \
	"$(raw_summary | sed 's/RESP 500 [0-9]*/RESP 500/')" "RESP 500 RESP 200 5 OPEN"
fetch longdir "$enc"
expect_eq "directory with a ${#enc}-byte URL, no slash: 301" "$STATUS" 301
expect_eq "directory with a ${#enc}-byte URL: Location is it with the slash" \
	"$(hdr "$T/longdir.h" Location)" "$enc/"
stop_ktlsd
