# shellcheck shell=bash
# Logging: the access log line (nginx's "combined", then ktlsd's fields),
# one line per request whatever its end, and one-line start-up errors.

H2PY="$(dirname "${BASH_SOURCE[0]}")/h2_client.py"

# A quoted field: anything but '"' and '\', or nginx's \xHH escapes.
q='"([^"\\]|\\x[0-9A-F]{2})*"'
combined_re="^[^ \"]+ - - \\[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \\+0000\\] $q [0-9]{3} [0-9]+ $q $q"
combined_re+=" [0-9]+\\.[0-9]{3} HTTP/(1\\.1|2) [^ \"]+ [^ \"]+ ktls=(tx|off) body=(splice|copy|mmap|framed|none) enc=(br|zstd|gzip|-) site=$q"
combined_re+=" host=$q sent=[0-9]+ end=(complete|reset|lost|timeout|shutdown|truncated|error)\$"

# body_bytes LINE: the body bytes field of a combined line (nginx's $body_bytes_sent).
body_bytes() {
	printf '%s\n' "$1" | sed -E 's/^[^"]*"([^"\\]|\\x[0-9A-F]{2})*" [0-9]{3} ([0-9]+) .*/\2/'
}

# goaccess_counts LOG: "total valid failed" as goaccess, reading LOG as nginx's
# combined format, counts its lines.
goaccess_counts() {
	rm -f "$T/goaccess.json"
	timeout 60 goaccess "$1" --log-format=COMBINED --no-global-config \
		-o "$T/goaccess.json" >"$T/goaccess.out" 2>&1 || return 1
	"$PY" -c 'import json, sys
g = json.load(open(sys.argv[1]))["general"]
print(g["total_requests"], g["valid_requests"], g["failed_requests"])' "$T/goaccess.json"
}

alog=$T/access.log
PPORT=$(freeport)
start_ktlsd --access-log "$alog" --listen-plain "127.0.0.1:$PPORT" || return 0
size_log=$(size "$FIX/root/log.bin")
st=$(kcurl --tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256 -H 'Referer: https://example.com/from' \
	-A 'ktlsd-test/1.0 "quoted"' -o "$T/log.b" -w '%{http_code}' "$BASE/log.bin")
expect_eq "request to log: 200" "$st" 200
st=$(kcurl --tlsv1.3 -o /dev/null -w '%{http_code}' "$BASE/no-such-file")
expect_eq "second request to log: 404" "$st" 404

# The same 1,000-byte file over HTTP/1.1, HTTP/2 and plain HTTP: its body is
# 1000 bytes on every line, whatever the framing and the TLS around it.
kcurl --http1.1 -o /dev/null "$BASE/a.txt?via=h1"
kcurl --http2 -o /dev/null "$BASE/a.txt?via=h2"
curl -sS --max-time 30 -o /dev/null "http://127.0.0.1:$PPORT/a.txt?via=plain"

# A request target with '"', '\' and a byte over 0x7e, sent raw: logged
# escaped as nginx does, so it cannot close the quoted field and make what
# follows it in the line look like other fields.
raw 'send=GET /forged"\\"\xff1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' all=5
# The same over HTTP/2, where :path reaches the log through nghttp2.
"$PY" "$H2PY" get "$PORT" '/h2forged"\"1' >/dev/null 2>&1

# An operator tailing the log sees the line soon, not only at exit.
if wait_until 5 grep -q 'GET /log.bin' "$alog"; then
	pass "access log line written while the server runs"
else
	fail "access log line written while the server runs" "nothing for /log.bin after 5 s"
fi

# Three HTTP/2 downloads on one connection, abandoned by a client that stops
# reading (1 MB windows it never tops up) and goes away: three lines, each
# with the body bytes the server sent, at least what the client got.
h2_window=1000000
timeout 30 "$PY" "$H2PY" get --window "$h2_window" --pause-after 1 --resume-file "$T/never" \
	--timeout 2 "$PORT" /big.bin /big.bin /big.bin >"$T/h2abort.out" 2>&1
h2_got=$(awk '/^STREAM /{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) { sub(/bytes=/, "", $i); s += $i } } END { print s + 0 }' "$T/h2abort.out")
# Three HTTP/2 downloads the client resets (RST_STREAM) at once.
timeout 30 "$PY" "$H2PY" rst-flood "$PORT" 3 /c.txt 2 >/dev/null 2>&1
# An HTTP/1.1 download the client gives up on.
kcurl --limit-rate 1M --max-time 1 -o "$T/h1abort.b" "$BASE/big.bin?h1abort" 2>/dev/null
h1_got=$(size "$T/h1abort.b" 2>/dev/null || echo 0)
stop_ktlsd

bad=$(grep -avE "$combined_re" "$alog" | head -n 3)
expect_eq "every access log line has the combined shape, then ktlsd's fields" "$bad" ""

line=$(grep -a 'GET /log.bin' "$alog" | head -n1)
expect_ne "access log has a line for GET /log.bin" "$line" ""
expect_match "combined fields: client - - [time] \"request\" status bytes \"referer\" \"user-agent\"" "$line" \
	'^127\.0\.0\.1 - - \[[^]]+\] "GET /log\.bin HTTP/1\.1" 200 [0-9]+ "https://example\.com/from" "ktlsd-test/1\.0 \\x22quoted\\x22" '
expect_eq "body bytes: the body, $size_log bytes" "$(body_bytes "$line")" "$size_log"
for field in "TLSv1.3" "TLS_AES_128_GCM_SHA256" "body=" "site=\"-\"" "host=\"localhost\"" "end=complete"; do
	if [[ $line == *" $field"* ]]; then
		pass "access log line contains '$field'"
	else
		fail "access log line contains '$field'" "line: $line"
	fi
done
sent=$(printf '%s\n' "$line" | sed -nE 's/.* sent=([0-9]+) .*/\1/p')
check "sent= counts the head too ($sent > $size_log)" test "${sent:-0}" -gt "$size_log"
for via in h1 h2 plain; do
	l=$(grep -a "GET /a.txt?via=$via " "$alog")
	expect_eq "1000-byte file over $via: body bytes 1000" "$(body_bytes "$l")" 1000
done
expect_match "HTTP/2 request line as nginx writes it" "$(grep -a 'via=h2' "$alog")" '"GET /a\.txt\?via=h2 HTTP/2\.0" 200 1000 .* HTTP/2 '
expect_match "plain HTTP: no TLS version nor cipher" "$(grep -a 'via=plain' "$alog")" ' HTTP/1\.1 - - ktls=off '

forged=$(grep -a 'GET /forged' "$alog" | head -n1)
expect_ne "access log has a line for the forging request" "$forged" ""
case $forged in
*'"GET /forged\x22\x5C\x22'*) pass "forging target: '\"' and '\\' logged as \\x22 and \\x5C" ;;
*) fail "forging target: '\"' and '\\' logged as \\x22 and \\x5C" "line: $forged" ;;
esac
expect_match "forging target: the byte 0xff logged as \\xFF" "$forged" '\\xFF1 HTTP/1\.1" '
h2forged=$(grep -a 'GET /h2forged' "$alog" | head -n1)
expect_match "forging :path over HTTP/2: escaped" "$h2forged" '"GET /h2forged\\x22\\x5C\\x221 HTTP/2\.0" [0-9]{3} '
line404=$(grep -a 'GET /no-such-file' "$alog" | head -n1)
expect_match "access log line for the 404 has status 404" "$line404" '" 404 [0-9]+ "'
expect_eq "access log: one line for the one GET /log.bin" "$(grep -c 'GET /log.bin' "$alog")" 1

h2lines=$(grep -a '"GET /big.bin HTTP/2.0"' "$alog")
expect_eq "3 abandoned HTTP/2 downloads: 3 lines" "$(printf '%s\n' "$h2lines" | grep -c 'end=lost$')" 3
h2_logged=0 h2_bad=
while read -r l; do
	b=$(body_bytes "$l")
	h2_logged=$((h2_logged + b))
	[ "$b" -gt 0 ] && [ "$b" -le "$h2_window" ] || h2_bad+="$b "
done <<<"$h2lines"
expect_eq "abandoned HTTP/2 downloads: partial body bytes, within the window" "$h2_bad" ""
check "abandoned HTTP/2 downloads: logged bytes ($h2_logged) >= received ($h2_got > 0)" \
	test "$h2_logged" -ge "$h2_got" -a "$h2_got" -gt 0
expect_eq "3 HTTP/2 streams reset by the client: 3 lines, end=reset" \
	"$(grep -a '"GET /c.txt HTTP/2.0"' "$alog" | grep -c 'end=reset$')" 3
h1line=$(grep -a 'GET /big.bin?h1abort' "$alog")
expect_match "abandoned HTTP/1.1 download: one line, end=lost" "$h1line" 'end=lost$'
h1b=$(body_bytes "$h1line")
check "abandoned HTTP/1.1 download: partial body bytes ($h1b, client got $h1_got)" \
	test "${h1b:-0}" -ge "$h1_got" -a "${h1b:-0}" -lt "$(size "$FIX/root/big.bin")"

# goaccess, reading the log as nginx's combined format, takes every line.
if command -v goaccess >/dev/null; then
	nlines=$(grep -c '' "$alog")
	counts=$(goaccess_counts "$alog")
	expect_eq "goaccess --log-format=COMBINED: every line valid, none failed" "$counts" "$nlines $nlines 0"
else
	fail "goaccess --log-format=COMBINED" "goaccess is not installed (scripts/install-deps)"
fi

# Clients that stop reading: --send-timeout ends their downloads, and the
# lines say so (HTTP/1.1: the socket takes nothing; HTTP/2: the windows stay
# shut, then GOAWAY, then the close).
start_ktlsd --access-log "$T/timeout.log" --send-timeout 1 || return 0
raw 'send=GET /big.bin?stalled=h1 HTTP/1.1\r\nHost: localhost\r\n\r\n' sleep=5 &
raw_pid=$!
timeout 30 "$PY" "$H2PY" get --window 65535 --pause-after 1 --resume-file "$T/never" \
	--timeout 8 "$PORT" '/big.bin?stalled=h2' >/dev/null 2>&1
wait "$raw_pid"
stop_ktlsd
expect_match "send timeout, HTTP/1.1: logged, end=timeout" \
	"$(grep -a 'stalled=h1' "$T/timeout.log")" '" 200 [0-9]+ .* end=timeout$'
expect_match "send timeout, HTTP/2: logged, end=timeout" \
	"$(grep -a 'stalled=h2' "$T/timeout.log")" '" 200 [0-9]+ .* end=timeout$'

# --access-log-format json (here from the config file): one JSON object per
# line, valid JSON whatever bytes the client sent, with the same fields.
jlog=$T/access.json
printf 'access-log %s\naccess-log-format json\n' "$jlog" >"$T/json.conf"
PPORT=$(freeport)
start_ktlsd --config "$T/json.conf" --listen-plain "127.0.0.1:$PPORT" || return 0
kcurl --http1.1 -o /dev/null -A 'json "ua" \ end' "$BASE/a.txt?via=h1"
kcurl --http2 -o /dev/null -e 'https://example.com/' "$BASE/a.txt?via=h2"
curl -sS --max-time 30 -o /dev/null "http://127.0.0.1:$PPORT/a.txt?via=plain"
raw 'send=GET /json"\\\xff HTTP/1.1\r\nHost: localhost\r\nUser-Agent: \xe9t\xe9\r\nConnection: close\r\n\r\n' all=5
stop_ktlsd
jcheck=$("$PY" - "$jlog" <<'PYEOF'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
recs = []
for i, l in enumerate(lines):
    try:
        recs.append(json.loads(l))
    except ValueError as e:
        print("line %d is not JSON: %s: %r" % (i + 1, e, l[:200]))
        sys.exit(0)
by = {r["target"]: r for r in recs}
want = {
    "/a.txt?via=h1": dict(method="GET", version="HTTP/1.1", status=200, body_bytes=1000,
                          protocol="HTTP/1.1", user_agent='json "ua" \\ end', referer=None,
                          end="complete", body="copy"),
    "/a.txt?via=h2": dict(version="HTTP/2.0", status=200, body_bytes=1000, protocol="HTTP/2",
                          referer="https://example.com/", body="framed", end="complete"),
    "/a.txt?via=plain": dict(status=200, body_bytes=1000, tls_version=None, tls_cipher=None,
                             ktls=False),
    '/json"\\\xff': dict(status=404, user_agent="\xe9t\xe9"),
}
for target, fields in want.items():
    r = by.get(target)
    if r is None:
        print("no line for %r (have %r)" % (target, sorted(by, key=str)))
        continue
    for k, v in fields.items():
        if r.get(k) != v:
            print("%r: %s is %r, want %r" % (target, k, r.get(k), v))
for r in recs:
    if not (r["sent"] > r["body_bytes"] and isinstance(r["request_time"], float)
            and r["client"] == "127.0.0.1" and r["time"].endswith("+00:00")):
        print("odd line %r" % r)
print("OK %d" % len(recs))
PYEOF
)
expect_eq "--access-log-format json: every line parses, fields as sent" "$jcheck" "OK 4"

# --access-log stdout (and /dev/stdout) when stdout is a pipe or a socket, as
# journald gives it: whole lines while the server runs, and every line by
# the time it exits, SIGINT included. stderr likewise.
for kind in pipe socket; do
	out=$T/stdout.$kind
	dest=stdout
	[ "$kind" = socket ] && dest=/dev/stdout # open() of it fails on a socket
	LAUNCH_WRAP=("$PY" "$LIBPY" stdout-to "$kind" "$out")
	start_ktlsd --access-log "$dest" || {
		LAUNCH_WRAP=()
		continue
	}
	LAUNCH_WRAP=()
	kcurl -o /dev/null "$BASE/a.txt?$kind=[1-20]" >/dev/null 2>&1
	KCURL_HTTP=--http2 kcurl -o /dev/null "$BASE/a.txt?$kind=h2"
	if wait_until 5 grep -q "?$kind=20 " "$out"; then
		pass "--access-log $dest on a $kind: lines arrive while the server runs"
	else
		fail "--access-log $dest on a $kind: lines arrive while the server runs" "none after 5 s"
	fi
	kcurl -o /dev/null "$BASE/a.txt?$kind=last"
	kill -INT "$KTLSD_PID"
	wait_exit "$KTLSD_PID" 10
	KTLSD_PID=
	wait_until 5 grep -q "?$kind=last " "$out"
	expect_eq "--access-log $dest on a $kind: 22 lines, the last one too after SIGINT" \
		"$(grep -c "GET /a.txt?$kind=" "$out")" 22
	expect_eq "--access-log $dest on a $kind: every line whole" "$(grep -avE "$combined_re" "$out" | head -n 2)" ""
done
start_ktlsd --access-log stderr || return 0
kcurl -o /dev/null "$BASE/a.txt?to=stderr"
stop_ktlsd
expect_match "--access-log stderr: the line is with the error log's" \
	"$(grep -a 'GET /a.txt?to=stderr' "$KTLSD_LOG")" "$combined_re"

# Start-up errors: one line, naming what is wrong, and a nonzero exit (not an
# OpenSSL error stack). --log-level error keeps start-up notes out of it.
# start_error NAME WHAT ARGS...: ktlsd ARGS fails at start with exactly one
# line on stderr that contains WHAT.
start_error() {
	local name=$1 what=$2 rc
	shift 2
	PORT=$(freeport)
	timeout 10 "$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$PORT" --workers 2 --log-level error "$@" \
		>"$T/se.out" 2>"$T/se.err" </dev/null
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
		pass "$name: nonzero exit ($rc)"
	else
		fail "$name: nonzero exit" "exit code $rc (124: still running after 10 s)"
	fi
	expect_eq "$name: one line on stderr" "$(grep -c '' "$T/se.err")" 1
	if grep -qF -- "$what" "$T/se.err"; then
		pass "$name: the line names $what"
	else
		fail "$name: the line names $what" "stderr: $(head -c 300 "$T/se.err")"
	fi
}

start_error "missing certificate file" "$T/no-such-cert.pem" \
	--cert "$T/no-such-cert.pem" --key "$FIX/ec.key"
printf 'this is not a certificate\n' >"$T/garbage.pem"
start_error "garbage certificate file" "$T/garbage.pem" \
	--cert "$T/garbage.pem" --key "$FIX/ec.key"
mkdir -p "$T/cert-dir"
start_error "certificate path is a directory" "$T/cert-dir" \
	--cert "$T/cert-dir" --key "$FIX/ec.key"
start_error "key that does not match the certificate" "$FIX/" \
	--cert "$FIX/rsa.pem" --key "$FIX/ec.key"

# With --error-log FILE, the start-up error still reaches the operator.
PORT=$(freeport)
timeout 10 "$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$PORT" --error-log "$T/error.log" \
	--cert "$T/no-such-cert.pem" --key "$FIX/ec.key" >/dev/null 2>"$T/se2.err" </dev/null
rc=$?
expect_in "--error-log FILE, missing certificate: exit code nonzero" "$([ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && echo nonzero || echo "$rc")" nonzero
if cat "$T/se2.err" "$T/error.log" 2>/dev/null | grep -qF "no-such-cert.pem"; then
	pass "--error-log FILE, missing certificate: reported (stderr or the file)"
else
	fail "--error-log FILE, missing certificate: reported (stderr or the file)" "neither names the file"
fi

# The error log at debug level records something while serving.
start_ktlsd --error-log "$T/debug.log" --log-level debug || return 0
fetch dbg /a.txt
expect_eq "--log-level debug: request served" "$STATUS" 200
stop_ktlsd
check "--error-log FILE --log-level debug: the file has lines" test -s "$T/debug.log"
