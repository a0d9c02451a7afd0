# shellcheck shell=bash
# Logging: the access log line's fields, and one-line start-up errors.

alog=$T/access.log
start_ktlsd --access-log "$alog" || return 0
size_log=$(size "$FIX/root/log.bin")
st=$(kcurl --tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256 -o "$T/log.b" -w '%{http_code}' "$BASE/log.bin")
expect_eq "request to log: 200" "$st" 200
st=$(kcurl --tlsv1.3 -o /dev/null -w '%{http_code}' "$BASE/no-such-file")
expect_eq "second request to log: 404" "$st" 404

# A request target with '"', '\' and a byte over 0x7e, sent raw: logged
# escaped as nginx does, so it cannot close the quoted field and make what
# follows it in the line look like other fields.
raw 'send=GET /forged"\\"\xff1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' all=5
# The same over HTTP/2, where :path reaches the log through nghttp2.
"$PY" "$(dirname "${BASH_SOURCE[0]}")/h2_client.py" get "$PORT" '/h2forged"\"1' >/dev/null 2>&1

# An operator tailing the log sees the line soon, not only at exit.
if wait_until 5 grep -q 'GET /log.bin' "$alog"; then
	pass "access log line written while the server runs"
else
	fail "access log line written while the server runs" "nothing for /log.bin after 5 s"
fi
stop_ktlsd

line=$(grep -a 'GET /log.bin' "$alog" | head -n1)
expect_ne "access log has a line for GET /log.bin" "$line" ""
for field in "127.0.0.1" "GET /log.bin HTTP/1.1" "TLSv1.3" "TLS_AES_128_GCM_SHA256" "body="; do
	if [[ $line == *"$field"* ]]; then
		pass "access log line contains '$field'"
	else
		fail "access log line contains '$field'" "line: $line"
	fi
done
expect_match "access log line has the status 200" "$line" '(^|[^0-9])200([^0-9]|$)'
# "bytes" may be the body (nginx's $body_bytes_sent) or everything sent for
# the response (headers, perhaps TLS framing): some number in that window.
bytes=$(printf '%s\n' "$line" | grep -oE '[0-9]+' |
	awk -v lo="$size_log" -v hi=$((size_log + 2048)) '$1 >= lo && $1 <= hi { print; exit }')
if [ -n "$bytes" ]; then
	pass "access log line has the bytes sent ($size_log-byte body)"
else
	fail "access log line has the bytes sent ($size_log-byte body)" "no number in [$size_log, $((size_log + 2048))]: $line"
fi
forged=$(grep -a 'GET /forged' "$alog" | head -n1)
expect_ne "access log has a line for the forging request" "$forged" ""
case $forged in
*'"GET /forged\x22\x5C\x22'*) pass "forging target: '\"' and '\\' logged as \\x22 and \\x5C" ;;
*) fail "forging target: '\"' and '\\' logged as \\x22 and \\x5C" "line: $forged" ;;
esac
# Exactly the two quotes of the request field, and only known escapes in it.
expect_match "forging target: the line keeps its shape" "$forged" \
	'^[^ "]+ \[[^]"]+\] "([^"\\]|\\x[0-9A-F]{2})*" [0-9]{3} [0-9]+ [^"]*$'
expect_match "forging target: the byte 0xff logged as \\xFF" "$forged" '\\xFF1 HTTP/1\.1" '
h2forged=$(grep -a 'GET /h2forged' "$alog" | head -n1)
expect_match "forging :path over HTTP/2: escaped, the line keeps its shape" "$h2forged" \
	'^[^ "]+ \[[^]"]+\] "GET /h2forged\\x22\\x5C\\x221 HTTP/2" [0-9]{3} [0-9]+ [^"]*$'
line404=$(grep -a 'GET /no-such-file' "$alog" | head -n1)
expect_match "access log line for the 404 has status 404" "$line404" '(^|[^0-9])404([^0-9]|$)'
expect_eq "access log: one line for the one GET /log.bin" "$(grep -c 'GET /log.bin' "$alog")" 1

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
