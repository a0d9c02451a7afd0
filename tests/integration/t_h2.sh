# shellcheck shell=bash
# HTTP/2 (ALPN h2): the static semantics of HTTP/1.1 over h2 with curl,
# nghttp and h2load; many streams on one connection, byte-exact and fairly
# shared; --h2 off; SIGTERM with a stream open; and the syscall budget of the
# batched send path (ring operations per MiB, against HTTP/1.1).

# Every kcurl / fetch below speaks HTTP/2 unless it says otherwise.
# shellcheck disable=SC2034 # read by lib.sh's kcurl
KCURL_HTTP=--http2
H2PY="$(dirname "${BASH_SOURCE[0]}")/h2_client.py"
want=$(cat "$FIX/big.sha256")
big=$FIX/root/big.bin
big_size=$(size "$big")
big_mib=$((big_size >> 20))

# h2c SUBCOMMAND ARGS...: h2_client.py (see its header), bounded in time.
h2c() {
	timeout 40 "$PY" "$H2PY" "$@"
}

# field LINE KEY: the value of KEY=VALUE in LINE.
field() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# le NAME A B: A <= B (integers).
le() {
	if [ -n "$2" ] && [ -n "$3" ] && [ "$2" -le "$3" ]; then
		pass "$1"
	else
		fail "$1" "got $2, want at most $3"
	fi
}

# ge NAME A B: A >= B (integers).
ge() {
	if [ -n "$2" ] && [ -n "$3" ] && [ "$2" -ge "$3" ]; then
		pass "$1"
	else
		fail "$1" "got $2, want at least $3"
	fi
}

# need TOOL: the tool is installed (records a failure if not).
need() {
	if command -v "$1" >/dev/null 2>&1; then
		return 0
	fi
	fail "$1 installed" "not found in PATH; its checks are skipped"
	return 1
}

# slice FILE FIRST LAST OUT: bytes FIRST..LAST (inclusive) of FILE into OUT.
slice() {
	tail -c +$(($2 + 1)) "$1" | head -c $(($3 - $2 + 1)) >"$4"
}

alog=$T/access.log
start_ktlsd --access-log "$alog" || return 0

# ---- curl: the static semantics over HTTP/2 ----------------------------------

v=$(kcurl -o /dev/null -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
expect_eq "curl --http2 negotiates HTTP/2" "$v" "2 200"
v=$(kcurl --tlsv1.2 --tls-max 1.2 -o /dev/null -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
expect_eq "curl --http2 over TLS 1.2 negotiates HTTP/2" "$v" "2 200"

# In the page cache, so that the access-log check below knows its path.
cat "$big" >/dev/null
fetch big /big.bin
expect_eq "32 MiB over h2: status" "$STATUS" 200
expect_eq "32 MiB over h2: curl exit code" "$RC" 0
expect_match "32 MiB over h2: the response is HTTP/2" "$(head -n1 "$T/big.h")" '^HTTP/2 200'
expect_eq "32 MiB over h2: Content-Length" "$(hdr "$T/big.h" Content-Length)" "$big_size"
expect_eq "32 MiB over h2: sha256" "$(sha "$T/big.b")" "$want"
rm -f "$T/big.b"

fetch head /big.bin -I
expect_eq "HEAD over h2: 200" "$STATUS" 200
expect_eq "HEAD over h2: Content-Length" "$(hdr "$T/head.h" Content-Length)" "$big_size"
# (curl -I stores the head as the body: ask h2_client.py about DATA.)
line=$(h2c get --method HEAD "$PORT" /big.bin 2>&1 | grep '^STREAM 1 ')
expect_eq "HEAD over h2: 200 and no DATA frame" "$(field "$line" status) $(field "$line" frames)" "200 0"
expect_match "HEAD over h2: the stream ended" "$(field "$line" end)" '^[0-9.]+$'
etag=$(hdr "$T/head.h" ETag)
lm=$(hdr "$T/head.h" Last-Modified)
expect_match "HEAD over h2: ETag" "$etag" '^(W/)?"[^"]+"$'
expect_ne "HEAD over h2: Last-Modified" "$lm" ""
expect_eq "HEAD over h2: Accept-Ranges" "$(hdr "$T/head.h" Accept-Ranges)" bytes

fetch nf /no-such-file
expect_eq "missing file over h2: 404" "$STATUS" 404
fetch dot /.secret
expect_eq "dotfile over h2: 404" "$STATUS" 404
expect_file_lacks "dotfile over h2: not served" "$T/dot.b" DOTFILE-SECRET

fetch del /a.txt -X DELETE
expect_eq "DELETE over h2: 405" "$STATUS" 405
expect_match "DELETE over h2: Allow lists GET and HEAD" "$(hdr "$T/del.h" Allow)" 'GET.*HEAD|HEAD.*GET'
# A request body the server does not want must not wedge the stream.
head -c $((1 << 20)) /dev/zero >"$T/post.in"
fetch post /a.txt --data-binary "@$T/post.in"
expect_eq "POST with a 1 MiB body over h2: 405" "$STATUS" 405
expect_eq "POST with a 1 MiB body over h2: curl exit code" "$RC" 0

fetch dir /sub
expect_eq "directory without slash over h2: 301" "$STATUS" 301
expect_match "directory without slash over h2: Location" "$(hdr "$T/dir.h" Location)" '^(https://localhost(:[0-9]+)?)?/sub/$'
fetch dirindex /sub/
expect_eq "directory index over h2: 200" "$STATUS" 200
expect_eq "directory index over h2: body" "$(cat "$T/dirindex.b")" SUB-INDEX-PAGE

fetch inm /big.bin -H "If-None-Match: $etag"
expect_eq "If-None-Match with the ETag over h2: 304" "$STATUS" 304
expect_eq "304 over h2: no body" "$(size "$T/inm.b")" 0
expect_eq "304 over h2: the ETag again" "$(hdr "$T/inm.h" ETag)" "$etag"
fetch ims /big.bin -H "If-Modified-Since: $lm"
expect_eq "If-Modified-Since with Last-Modified over h2: 304" "$STATUS" 304
fetch im /big.bin -H 'If-Match: "not-the-etag"'
expect_eq "If-Match with another ETag over h2: 412" "$STATUS" 412
fetch im2 /a.txt -H 'If-Match: *'
expect_eq "If-Match: * over h2: 200" "$STATUS" 200

fetch range /big.bin -H "Range: bytes=1000000-3000000"
expect_eq "single range over h2: 206" "$STATUS" 206
expect_eq "single range over h2: Content-Range" "$(hdr "$T/range.h" Content-Range)" "bytes 1000000-3000000/$big_size"
expect_eq "single range over h2: Content-Length" "$(hdr "$T/range.h" Content-Length)" 2000001
slice "$big" 1000000 3000000 "$T/range.want"
check "single range over h2: bytes equal the file's" cmp -s "$T/range.b" "$T/range.want"
rm -f "$T/range.b" "$T/range.want"

ranges="0-9,1000-1099,$((big_size - 50))-$((big_size - 1))"
fetch multi /big.bin -H "Range: bytes=0-9,1000-1099,-50"
expect_eq "multi-range over h2: 206" "$STATUS" 206
ctype=$(hdr "$T/multi.h" Content-Type)
expect_match "multi-range over h2: multipart/byteranges" "$ctype" '^multipart/byteranges; *boundary='
expect_eq "multi-range over h2: Content-Length is the body length" "$(hdr "$T/multi.h" Content-Length)" "$(size "$T/multi.b")"
problems=$("$PY" "$LIBPY" multipart "$T/multi.b" "$ctype" "$big" "$ranges" 2>&1)
expect_eq "multi-range over h2: parts, Content-Range and bytes" "$problems" ""

# Many small parts (16, the most the server honours) in one response, and
# so in one send batch.
spec=
for ((i = 0; i < 16; i++)); do
	spec+="$((i * 5000))-$((i * 5000 + 99)),"
done
spec=${spec%,}
fetch multi16 /big.bin -H "Range: bytes=$spec"
expect_eq "16-part multi-range over h2: 206" "$STATUS" 206
problems=$("$PY" "$LIBPY" multipart "$T/multi16.b" "$(hdr "$T/multi16.h" Content-Type)" "$big" "$spec" 2>&1)
expect_eq "16-part multi-range over h2: parts, Content-Range and bytes" "$(printf '%s' "$problems" | head -n3 | tr '\n' ' ')" ""

fetch unsat /big.bin -H "Range: bytes=$big_size-"
expect_eq "unsatisfiable range over h2: 416" "$STATUS" 416
expect_eq "unsatisfiable range over h2: Content-Range bytes */SIZE" "$(hdr "$T/unsat.h" Content-Range)" "bytes */$big_size"

# Content types: the same as over HTTP/1.1, and the expected ones.
for f in style.css app.js data.json image.png index.html text.txt; do
	fetch ct2 "/$f"
	t2=$(hdr "$T/ct2.h" Content-Type)
	fetch ct1 "/$f" --http1.1
	expect_eq "Content-Type of $f: the same over h2 as over HTTP/1.1" "$t2" "$(hdr "$T/ct1.h" Content-Type)"
	case $f in
	*.css) expect_match "Content-Type of $f over h2" "$t2" '^text/css' ;;
	*.js) expect_match "Content-Type of $f over h2" "$t2" '^(text|application)/javascript' ;;
	esac
done

# ---- nghttp and h2load ---------------------------------------------------------

url="https://127.0.0.1:$PORT"
if need nghttp; then
	timeout 30 nghttp -n -v -t 20 "$url/a.txt" >"$T/nghttp.v" 2>&1
	expect_eq "nghttp -v: exit code" "$?" 0
	check "nghttp -v: negotiated h2" grep -q 'The negotiated protocol: h2' "$T/nghttp.v"
	check "nghttp -v: :status 200" grep -q ':status: 200' "$T/nghttp.v"
	check "nghttp -v: a DATA frame ends the stream" grep -Eq 'recv DATA frame <[^>]*flags=0x0[19]' "$T/nghttp.v"
	check "nghttp -v: server SETTINGS advertise 128 streams" grep -q 'SETTINGS_MAX_CONCURRENT_STREAMS(0x03):128' "$T/nghttp.v"
	check "nghttp -v: server SETTINGS disable push" grep -q 'SETTINGS_ENABLE_PUSH(0x02):0' "$T/nghttp.v"

	# -m 20: the same URI 20 times, all on one connection at once.
	timeout 30 nghttp -n -s -t 20 -m 20 "$url/text.txt" >"$T/nghttp.m" 2>&1
	expect_eq "nghttp -m 20: exit code" "$?" 0
	expect_eq "nghttp -m 20: 20 responses with status 200" \
		"$(awk '$NF == "/text.txt" && $5 == 200' "$T/nghttp.m" | wc -l)" 20
fi

if need h2load; then
	timeout 60 h2load -n 200 -c 2 -m 20 "$url/text.txt" >"$T/h2load.small" 2>&1
	expect_eq "h2load 200 small requests: exit code" "$?" 0
	expect_match "h2load 200 small requests: all succeeded" "$(grep '^requests:' "$T/h2load.small")" \
		'200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored'
	expect_match "h2load 200 small requests: all 2xx" "$(grep '^status codes:' "$T/h2load.small")" '^status codes: 200 2xx'

	timeout 60 h2load -n 8 -c 1 -m 8 "$url/big.bin" >"$T/h2load.big" 2>&1
	expect_eq "h2load 8 x 32 MiB on one connection: exit code" "$?" 0
	expect_match "h2load 8 x 32 MiB on one connection: all succeeded" "$(grep '^requests:' "$T/h2load.big")" \
		'8 total, 8 started, 8 done, 8 succeeded, 0 failed, 0 errored'
	# "traffic: 265.00MB (277873157) total, 409B (409) headers (...), 256.00MB (268435456) data"
	traffic=$(grep '^traffic:' "$T/h2load.big")
	total=$(printf '%s\n' "$traffic" | sed -n 's/^traffic: [^(]*(\([0-9]*\)) total.*/\1/p')
	data=$(printf '%s\n' "$traffic" | sed -n 's/.*(\([0-9]*\)) data.*/\1/p')
	expect_eq "h2load 8 x 32 MiB: DATA payload is 8 x the file" "$data" $((8 * big_size))
	ge "h2load 8 x 32 MiB: traffic at least 8 x the file" "$total" $((8 * big_size))
	# Frame headers of full-size (16 KiB) DATA frames cost 0.05%; a server
	# that sends small frames (256 B: 3.5%) spends far more than 1%.
	le "h2load 8 x 32 MiB: framing overhead under 1%" "$total" $((8 * big_size + 8 * big_size / 100))
fi

# ---- many streams on one connection (h2_client.py) ---------------------------

# Four 32 MiB streams at once: byte-exact, and shared fairly (when the first
# one ends, each of the others has at least half of its body).
h2c get "$PORT" /big.bin /big.bin /big.bin /big.bin >"$T/four.out" 2>&1
expect_eq "4 concurrent 32 MiB streams: all ended" "$(tail -n1 "$T/four.out")" DONE
for sid in 1 3 5 7; do
	line=$(grep "^STREAM $sid " "$T/four.out")
	expect_eq "4 concurrent streams: stream $sid status" "$(field "$line" status)" 200
	expect_eq "4 concurrent streams: stream $sid sha256" "$(field "$line" sha256)" "$want"
	# Full-size DATA frames: 16384 is the largest the client allows.
	frames=$(field "$line" frames)
	ge "4 concurrent streams: stream $sid DATA frames average >= 8 KiB" \
		"$(( ${frames:-0} > 0 ? big_size / frames : 0 ))" 8192
done
echo "# 4 x 32 MiB on one connection: $(grep -E '^(ORDER|FAIR)' "$T/four.out" | tr '\n' ' ')"
fair=$(sed -n 's/^FAIR //p' "$T/four.out")
if [ -n "$fair" ] && awk -v f="$fair" 'BEGIN { exit !(f >= 0.5) }'; then
	pass "4 concurrent streams: each had >= 50% when the first ended (FAIR $fair)"
else
	fail "4 concurrent streams: each had >= 50% when the first ended" "FAIR '$fair'; $(tr '\n' ' ' <"$T/four.out" | head -c 600)"
fi

# The client's default 64 KiB windows: the server must wait for
# WINDOW_UPDATE and resume, on both streams, many times over.
h2c get --window 65535 "$PORT" /big.bin /log.bin >"$T/smallwin.out" 2>&1
expect_eq "64 KiB windows: both streams ended" "$(tail -n1 "$T/smallwin.out")" DONE
expect_eq "64 KiB windows: 32 MiB sha256" "$(field "$(grep '^STREAM 1 ' "$T/smallwin.out")" sha256)" "$want"
expect_eq "64 KiB windows: log.bin sha256" "$(field "$(grep '^STREAM 3 ' "$T/smallwin.out")" sha256)" "$(sha "$FIX/root/log.bin")"

# Mixed sizes, 30 streams: every body byte-exact.
paths=()
for i in 1 2 3; do
	paths+=(/a.txt /b.txt /c.txt /text.txt /log.bin /index.html /style.css /app.js /data.json /image.png)
done
h2c get "$PORT" "${paths[@]}" >"$T/mixed.out" 2>&1
expect_eq "30 mixed streams: all ended" "$(tail -n1 "$T/mixed.out")" DONE
bad=
sid=1
for p in "${paths[@]}"; do
	line=$(grep "^STREAM $sid " "$T/mixed.out")
	if [ "$(field "$line" status)" != 200 ] || [ "$(field "$line" sha256)" != "$(sha "$FIX/root$p")" ]; then
		bad+="$sid:$p "
	fi
	sid=$((sid + 2))
done
expect_eq "30 mixed streams: every body byte-exact with status 200" "$bad" ""

stop_ktlsd

# The access log says HTTP/2 and how the body left.
line=$(grep -a 'GET /big.bin HTTP/2.0' "$alog" | head -n1)
expect_ne "access log: a line for GET /big.bin over HTTP/2" "$line" ""
expect_match "access log: the h2 line has status 200" "$line" '" 200 '
# A large file's DATA: sent from the file's mapping under kTLS; under
# ktlsd's sealer read into the batch while the file is cached, sealed from
# its mapping once its pages went back to the disk (which path a body
# takes: tests/unit/test_sock_send.c, t_truncate). The cat above cannot
# hold the pages: /tmp is a disk here, and the kTLS guest suite, which
# scripts/test runs beside the ASan build's, streams files through the
# host's page cache (hostfs) and can evict them before the request (CI saw
# body=mmap there).
h2_body='(framed|mmap)'
case $line in *" ktls=tx "*) h2_body=mmap ;; esac
expect_match "access log: the h2 line says body=$h2_body" "$line" "body=$h2_body "
expect_eq "access log: one line per GET /big.bin stream (curl, h2load, h2_client)" \
	"$(grep -ac 'GET /big.bin HTTP/2.0" 200 ' "$alog")" $((1 + 8 + 4 + 1))

# ---- --h2-buffer 32768: the smallest batch (one full DATA frame) ----------------

start_ktlsd --h2-buffer 32768 || return 0
fetch small /big.bin
expect_eq "--h2-buffer 32768: 32 MiB sha256" "$(sha "$T/small.b")" "$want"
rm -f "$T/small.b"
fetch smallmulti /big.bin -H "Range: bytes=0-9,1000-1099,-50"
problems=$("$PY" "$LIBPY" multipart "$T/smallmulti.b" "$(hdr "$T/smallmulti.h" Content-Type)" "$big" \
	"0-9,1000-1099,$((big_size - 50))-$((big_size - 1))" 2>&1)
expect_eq "--h2-buffer 32768: multi-range parts" "$problems" ""
h2c get "$PORT" /big.bin /text.txt /big.bin /log.bin >"$T/smallbuf.out" 2>&1
expect_eq "--h2-buffer 32768: 4 concurrent streams ended" "$(tail -n1 "$T/smallbuf.out")" DONE
got=$(grep '^STREAM' "$T/smallbuf.out" | tr ' ' '\n' | sed -n 's/^sha256=//p' | tr '\n' ' ')
expect_eq "--h2-buffer 32768: 4 concurrent streams byte-exact" "$got" \
	"$want $(sha "$FIX/root/text.txt") $want $(sha "$FIX/root/log.bin") "
stop_ktlsd

# ---- --h2 off: ALPN offers only http/1.1 ---------------------------------------

start_ktlsd --h2 off || return 0
v=$(kcurl -o "$T/off.b" -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
expect_eq "--h2 off: curl --http2 falls back to HTTP/1.1" "$v" "1.1 200"
check "--h2 off: the body" cmp -s "$T/off.b" "$FIX/root/a.txt"
out=$(h2c get "$PORT" /a.txt 2>&1)
expect_match "--h2 off: a client offering only h2 does not get h2" "$out" '^TLSFAIL'
stop_ktlsd

# ---- SIGTERM with a stream open: GOAWAY, then the stream finishes --------------

start_ktlsd --shutdown-grace 20 || return 0
rm -f "$T/resume"
# 1 MiB windows; the client stops granting more after 4 MiB, so the
# response is still going when SIGTERM comes.
h2c get --window 1048576 --pause-after 4194304 --resume-file "$T/resume" "$PORT" /big.bin \
	>"$T/drain.out" 2>&1 &
client=$!
if wait_until 10 grep -q '^PAUSED' "$T/drain.out"; then
	pass "SIGTERM drain: stream under way"
else
	fail "SIGTERM drain: stream under way" "$(tr '\n' ' ' <"$T/drain.out")"
fi
kill -TERM "$KTLSD_PID"
sleep 0.5
if kill -0 "$KTLSD_PID" 2>/dev/null; then
	pass "SIGTERM drain: server waits for the open stream"
else
	fail "SIGTERM drain: server waits for the open stream" "it exited with the stream open"
fi
touch "$T/resume"
wait "$client"
expect_eq "SIGTERM drain: the client finished" "$(tail -n1 "$T/drain.out")" DONE
expect_eq "SIGTERM drain: sha256" "$(field "$(grep '^STREAM 1 ' "$T/drain.out")" sha256)" "$want"
expect_eq "SIGTERM drain: GOAWAY NO_ERROR naming stream 1" "$(sed -n 's/^GOAWAY //p' "$T/drain.out")" "0 1"
if wait_exit "$KTLSD_PID" 10; then
	expect_eq "SIGTERM drain: exit code" "$EXIT_CODE" 0
else
	fail "SIGTERM drain: exits once the stream is done" "still running 10 s later"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
check "SIGTERM drain: no sanitizer report" sanitizer_clean "$KTLSD_LOG"
KTLSD_PID=

# ---- SIGTERM with an idle h2 connection: GOAWAY, close, prompt exit -----------

start_ktlsd --shutdown-grace 20 || return 0
h2c idle "$PORT" 10 >"$T/idle.out" 2>&1 &
client=$!
# A signal during the handshake would be another case (an abort): wait for
# the connection to be HTTP/2's, however loaded the machine.
wait_until 10 grep -q '^STARTED' "$T/idle.out"
kill -TERM "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 5; then
	expect_eq "SIGTERM with an idle h2 connection: exit code" "$EXIT_CODE" 0
else
	fail "SIGTERM with an idle h2 connection: exits within 5 s" "still running"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
KTLSD_PID=
wait "$client"
expect_match "SIGTERM with an idle h2 connection: the client gets GOAWAY NO_ERROR, then the close" \
	"$(tr '\n' ' ' <"$T/idle.out")" '^STARTED GOAWAY 0 0 CLOSED '

# ---- syscall budget: ring operations for one 32 MiB download --------------------

# stat_of KEY: KEY's count in the "worker 0 stats" line of $KTLSD_LOG.
stat_of() {
	grep -a 'worker 0 stats:' "$KTLSD_LOG" | tail -n1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# budget_run NAME CURL-HTTP SERVER-ARGS...: one worker, one download of
# big.bin, SIGTERM; sets SEND_OPS and READ_OPS.
budget_run() {
	local name=$1 http=$2
	shift 2
	SEND_OPS=
	READ_OPS=
	start_ktlsd --workers 1 "$@" || return 1
	v=$(KCURL_HTTP=$http kcurl -o "$T/budget.b" -w '%{http_version} %{http_code}' "$BASE/big.bin" 2>&1)
	expect_eq "budget, $name: download" "$v" "$( [ "$http" = --http2 ] && echo 2 || echo 1.1) 200"
	expect_eq "budget, $name: sha256" "$(sha "$T/budget.b")" "$want"
	rm -f "$T/budget.b"
	stop_ktlsd
	SEND_OPS=$(stat_of send_ops)
	READ_OPS=$(stat_of read_ops)
	if [ -n "$SEND_OPS" ] && [ -n "$READ_OPS" ]; then
		pass "budget, $name: worker 0 stats logged at exit"
	else
		fail "budget, $name: worker 0 stats logged at exit" "no send_ops/read_ops in $KTLSD_LOG"
		return 1
	fi
}

# How many sends a download takes follows how fast the client reads: a
# full socket takes less at a time. In two fresh-clone runs of the whole
# suite (three test files at once, the kTLS guest beside the sanitizer
# part) HTTP/2 took 259-282 sends against HTTP/1.1's 162-181, over 1.25x in
# both tries of the second, where alone or beside three busy loops it takes
# 155-175 against 142-163 (this build and the one before it, sanitizer
# builds too). So the bound is 2x, and a pair over it is measured again,
# the last pair deciding. A send per DATA frame, what it is for, would be
# some 2,000; the 16 per MiB below holds it too.
for try in 1 2; do
	budget_run "HTTP/1.1 copy mode" --http1.1 --sendfile off || break
	h1_send=$SEND_OPS h1_read=$READ_OPS
	budget_run "HTTP/2" --http2 || break
	h2_send=$SEND_OPS h2_read=$READ_OPS
	echo "# budget for $big_mib MiB, try $try: HTTP/1.1 copy send_ops=$h1_send read_ops=$h1_read;" \
		"HTTP/2 send_ops=$h2_send read_ops=$h2_read" \
		"($(awk -v s="$h2_send" -v m="$big_mib" 'BEGIN { printf "%.1f", s / m }') sends/MiB)"
	h2_send_max=$((h1_send * 2 + 8))
	[ "$h2_send" -le "$h2_send_max" ] && break
done
if [ -n "${h2_send:-}" ]; then
	le "budget: HTTP/2 send_ops <= 2 x HTTP/1.1 copy mode + 8" "$h2_send" "$h2_send_max"
	le "budget: HTTP/2 send_ops under 16 per MiB" "$h2_send" $((16 * big_mib))
	le "budget: HTTP/2 read_ops <= 1.25 x HTTP/1.1 copy mode + 8" "$h2_read" $((h1_read * 5 / 4 + 8))
fi
