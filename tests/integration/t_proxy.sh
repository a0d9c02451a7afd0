# shellcheck shell=bash
# Behind a load balancer: listeners with "proxy-protocol" read a PROXY v1 or
# v2 header first (curl --haproxy-protocol, Python for raw v1/v2 with a TLS
# handshake behind it) and log the client it names; one without a valid
# header is closed with no answer and counted, while a normal listener
# serves as ever. Unix-socket listeners (unix:/PATH) for a proxy on the same
# machine: HTTPS, plain HTTP and proxy-protocol on them, their file's mode,
# its removal at exit, a file left over, and socket activation.

PPY="$(dirname "${BASH_SOURCE[0]}")/proxy_clients.py"
alog=$T/access.log
PTLS=$(freeport)
PPLAIN=$(freeport)
PLAIN=$(freeport)
SPORT=$(freeport)
US=$T/https.sock
UP=$T/http.sock
UX=$T/proxy.sock
start_ktlsd --access-log "$alog" --handshake-timeout 2 --status-listen "127.0.0.1:$SPORT" \
	--listen "127.0.0.1:$PTLS proxy-protocol" --listen-plain "127.0.0.1:$PPLAIN  proxy-protocol" \
	--listen-plain "127.0.0.1:$PLAIN" --listen "unix:$US" --listen-plain "unix:$UP" \
	--listen "unix:$UX proxy-protocol" || return 0

# client_of CASE: the client field of the access log line of the request
# for /a.txt?case=CASE (waits for the log's next flush).
client_of() {
	wait_until 10 grep -qF "?case=$1 HTTP" "$alog"
	grep -F "?case=$1 HTTP" "$alog" | tail -n 1 | cut -d' ' -f1
}

# proxied NAME CASE ARGS...: proxy_clients.py get ARGS... /a.txt?case=CASE;
# expects a 200 with the 1000-byte file.
proxied() {
	local name=$1 case=$2
	shift 2
	py_client 60 "$PPY" get "$@" "/a.txt?case=$case"
	expect_match "$name: 200 with the file" "$OUT" '^RESP 200 1000'
}

# refused NAME ARGS...: proxy_clients.py refused ARGS...: closed, no byte back.
REFUSED=0
refused() {
	local name=$1
	shift
	py_client 60 "$PPY" refused "$@"
	expect_eq "$name: closed without an answer" "$OUT" "CLOSED 0"
	REFUSED=$((REFUSED + 1))
}

# ---- curl --haproxy-protocol (v1, the real address) ----
st=$(PORT=$PTLS kcurl --haproxy-protocol -o "$T/c1.b" -w '%{http_code}' "https://localhost:$PTLS/a.txt?case=curl_tls")
expect_eq "curl --haproxy-protocol over HTTPS: 200" "$st" 200
expect_eq "... the whole file" "$(size "$T/c1.b")" 1000
expect_eq "... the log shows the client curl named" "$(client_of curl_tls)" 127.0.0.1
st=$(curl -sS --max-time 30 --haproxy-protocol -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPLAIN/a.txt?case=curl_plain")
expect_eq "curl --haproxy-protocol over plain HTTP: 200" "$st" 200
expect_eq "... logged with its address" "$(client_of curl_plain)" 127.0.0.1
st=$(PORT=$PTLS KCURL_HTTP=--http2 kcurl --haproxy-protocol -o /dev/null -w '%{http_code} %{http_version}' "https://localhost:$PTLS/a.txt?case=curl_h2")
expect_eq "HTTP/2 through a proxy-protocol listener" "$st" "200 2"
check "... logged as HTTP/2" wait_until 10 grep -qF "?case=curl_h2 HTTP/2.0" "$alog"

# ---- spoofed v1, raw v2 (header and ClientHello in one write) ----
proxied "v1 TCP4, then TLS" v1tls --tls "$FIX/ca.pem" "tcp:$PTLS" v1:198.51.100.23
expect_eq "... the log shows the address the header named" "$(client_of v1tls)" 198.51.100.23
proxied "v1 TCP6, then plain HTTP in the same write" v1plain "tcp:$PPLAIN" v1-6:2001:db8::23
expect_eq "... logged as 2001:db8::23" "$(client_of v1plain)" 2001:db8::23
proxied "v1 UNKNOWN" v1unknown "tcp:$PPLAIN" v1-unknown
expect_eq "... keeps the socket's address" "$(client_of v1unknown)" 127.0.0.1
proxied "v2 IPv4, then TLS" v2tls --tls "$FIX/ca.pem" "tcp:$PTLS" v2:203.0.113.7
expect_eq "... logged as 203.0.113.7" "$(client_of v2tls)" 203.0.113.7
proxied "v2 IPv6, then TLS" v2tls6 --tls "$FIX/ca.pem" "tcp:$PTLS" v2-6:2001:db8::7
expect_eq "... logged as 2001:db8::7" "$(client_of v2tls6)" 2001:db8::7
proxied "v2 LOCAL, then TLS" v2local --tls "$FIX/ca.pem" "tcp:$PTLS" v2-local
expect_eq "... keeps the socket's address" "$(client_of v2local)" 127.0.0.1
proxied "v2 with TLVs, then TLS" v2tlv --tls "$FIX/ca.pem" "tcp:$PTLS" v2-tlv:203.0.113.8
expect_eq "... TLVs skipped, logged as 203.0.113.8" "$(client_of v2tlv)" 203.0.113.8
proxied "v2 with TLVs, then plain HTTP" v2tlvplain "tcp:$PPLAIN" v2-tlv:203.0.113.9
expect_eq "... logged as 203.0.113.9" "$(client_of v2tlvplain)" 203.0.113.9
py_client 60 "$PPY" get --tls "$FIX/ca.pem" --alpn h2 "tcp:$PTLS" v2:203.0.113.10
expect_match "v2 then a TLS handshake offering only h2: ALPN h2" "$OUT" 'ALPN h2'

# ---- no valid header: closed, no answer, counted ----
refused "TLS without a header" --tls "$FIX/ca.pem" "tcp:$PTLS" none
refused "plain HTTP without a header" "tcp:$PPLAIN" none
refused "a v1 line with a field missing" "tcp:$PPLAIN" v1-bad
refused "v2 with version 3" --tls "$FIX/ca.pem" "tcp:$PTLS" v2-badver
refused "half a header, then silence (--handshake-timeout 2)" "tcp:$PTLS" partial
st=$(PORT=$PTLS kcurl -o /dev/null -w '%{http_code}' "https://localhost:$PTLS/a.txt" 2>/dev/null)
expect_eq "curl without --haproxy-protocol: no response" "$st" 000
REFUSED=$((REFUSED + 1))
fetch normal /a.txt
expect_eq "... while the normal listener serves" "$STATUS" 200
st=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PLAIN/a.txt")
expect_eq "... and so does a plain one without proxy-protocol" "$st" 200
# proxy_refused: the workers' proxy_header limit hits on /metrics.
proxy_refused() {
	curl -sS --max-time 10 "http://127.0.0.1:$SPORT/metrics" |
		awk '/^ktlsd_limit_hits_total\{.*limit="proxy_header"/ { n += $2 } END { print n + 0 }'
}
refusals_counted() {
	[ "$(proxy_refused)" -ge "$REFUSED" ]
}
wait_until 10 refusals_counted
expect_eq "each refusal counted: ktlsd_limit_hits_total{limit=\"proxy_header\"}" "$(proxy_refused)" "$REFUSED"
lines=$(grep -c 'proxy-protocol listener' "$KTLSD_LOG")
check "... and logged sparingly: at most one info line per worker ($lines for $REFUSED)" [ "$lines" -ge 1 ] && [ "$lines" -le 2 ]
check "... saying why" grep -qE 'proxy-protocol listener: (no PROXY header|PROXY v|no complete|the peer closed)' "$KTLSD_LOG"

# ---- Unix sockets ----
expect_eq "unix: socket file, mode 0666" "$(stat -c '%F %a' "$US")" "socket 666"
st=$(curl -sS --max-time 30 --cacert "$FIX/ca.pem" --unix-socket "$US" -o /dev/null -w '%{http_code}' "https://localhost/a.txt?case=unix_tls")
expect_eq "curl --unix-socket, HTTPS: 200" "$st" 200
expect_eq "... logged as unix:" "$(client_of unix_tls)" "unix:"
st=$(curl -sS --max-time 30 --http2 --cacert "$FIX/ca.pem" --unix-socket "$US" -o /dev/null -w '%{http_code} %{http_version}' "https://localhost/a.txt?case=unix_h2")
expect_eq "... HTTP/2 too" "$st" "200 2"
st=$(curl -sS --max-time 30 --unix-socket "$UP" -o "$T/u.b" -w '%{http_code}' "http://localhost/a.txt?case=unix_plain")
expect_eq "curl --unix-socket, plain HTTP: 200" "$st" 200
expect_eq "... the whole file" "$(size "$T/u.b")" 1000
expect_eq "... logged as unix:" "$(client_of unix_plain)" "unix:"
ok=0
for _ in $(seq 1 12); do
	st=$(curl -sS --max-time 30 --unix-socket "$UP" -o /dev/null -w '%{http_code}' "http://localhost/a.txt")
	[ "$st" = 200 ] && ok=$((ok + 1))
done
expect_eq "... 12 connections one after another, all served" "$ok" 12
st=$(curl -sS --max-time 30 --haproxy-protocol --cacert "$FIX/ca.pem" --unix-socket "$UX" -o /dev/null -w '%{http_code}' "https://localhost/a.txt?case=unix_pp")
expect_eq "proxy-protocol on a Unix socket: curl --haproxy-protocol (PROXY UNKNOWN)" "$st" 200
expect_eq "... logged as unix:" "$(client_of unix_pp)" "unix:"
proxied "... a v2 header naming a client" unix_v2 --tls "$FIX/ca.pem" "unix:$UX" v2:192.0.2.44
expect_eq "... logged as that client" "$(client_of unix_v2)" 192.0.2.44
proxied "... a v2 header naming a Unix client" unix_v2u --tls "$FIX/ca.pem" "unix:$UX" v2-unix
expect_eq "... logged as unix:" "$(client_of unix_v2u)" "unix:"
refused "... none: refused" --tls "$FIX/ca.pem" "unix:$UX" none

stop_ktlsd
check "every worker's stats at exit" grep -q 'worker 1 stats: accepted=' "$KTLSD_LOG"
# shellcheck disable=SC2016 # sh -c gets the paths as arguments
check "the socket files are removed at exit" sh -c '! [ -e "$1" ] && ! [ -e "$2" ] && ! [ -e "$3" ]' sh "$US" "$UP" "$UX"

# ---- --limit-conn counts the client the header names ----
# Every connection comes from the balancer (127.0.0.1); the PROXY headers
# name 10.0.0.1, 10.0.0.2, then 10.0.0.1 again, each held open: with
# --limit-conn 1 only the third is over the limit.
LPORT=$(freeport)
start_ktlsd --limit-conn 1 --listen-plain "127.0.0.1:$LPORT proxy-protocol" || return 0
py_client 30 - "$LPORT" <<'PY'
import socket, sys
port = int(sys.argv[1])
held = []
for src in ("10.0.0.1", "10.0.0.2", "10.0.0.1"):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(f"PROXY TCP4 {src} 127.0.0.1 40000 80\r\n".encode() +
              b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
    print(s.recv(12).decode().split()[1], end=" ")
    held.append(s)
PY
expect_eq "limit-conn 1 by the PROXY header's address: 10.0.0.1, 10.0.0.2, 10.0.0.1 again" "$OUT" "200 200 429"
stop_ktlsd

# ---- what is at the path before the start ----
# A socket a dead process left: replaced.
"$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)' "$UP"
check "a socket left over by a dead process" test -S "$UP"
start_ktlsd --listen-plain "unix:$UP" || return 0
st=$(curl -sS --max-time 30 --unix-socket "$UP" -o /dev/null -w '%{http_code}' "http://localhost/a.txt")
expect_eq "... is replaced, and served" "$st" 200
check "... saying so" grep -q "listen unix:$UP: removing the socket a previous process left there" "$KTLSD_LOG"
# A socket someone accepts on: ktlsd refuses to take it.
timeout 20 "$KTLSD" --root "$FIX/root" --listen-plain "unix:$UP" >"$T/live.out" 2>"$T/live.err"
expect_eq "a path another server listens on: exit 1" "$?" 1
expect_match "... saying so" "$(cat "$T/live.err")" "listen unix:$UP: another process is listening on $UP"
st=$(curl -sS --max-time 30 --unix-socket "$UP" -o /dev/null -w '%{http_code}' "http://localhost/a.txt")
expect_eq "... and the running one still serves" "$st" 200
stop_ktlsd
# Anything but a socket is never removed.
echo precious >"$T/file.sock"
timeout 20 "$KTLSD" --root "$FIX/root" --listen-plain "unix:$T/file.sock" >"$T/file.out" 2>"$T/file.err"
expect_eq "a regular file at the path: exit 1" "$?" 1
expect_match "... saying so" "$(cat "$T/file.err")" "listen unix:$T/file.sock: $T/file.sock exists and is not a socket; not replacing it"
expect_eq "... and the file is untouched" "$(cat "$T/file.sock")" precious
timeout 20 "$KTLSD" --root "$FIX/root" --listen-plain "unix:$T/no-such-dir/k.sock" >"$T/nodir.out" 2>"$T/nodir.err"
expect_eq "a path in a missing folder: exit 1" "$?" 1
expect_match "... with one line naming it" "$(cat "$T/nodir.err")" "listen unix:$T/no-such-dir/k.sock: No such file or directory"

# ---- socket activation: a passed socket takes the options of its address ----
if command -v systemd-socket-activate >/dev/null; then
	PORT=$(freeport)
	KTLSD_STARTS=$((${KTLSD_STARTS:-0} + 1))
	KTLSD_LOG="$T/ktlsd.$KTLSD_STARTS.log"
	systemd-socket-activate -l "127.0.0.1:$PORT" -l "$US" -l "$UX" "$KTLSD" --root "$FIX/root" \
		--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 2 \
		--listen "127.0.0.1:$PORT proxy-protocol" --listen "unix:$UX proxy-protocol" \
		</dev/null >>"$KTLSD_LOG" 2>&1 &
	KTLSD_PID=$!
	echo "$KTLSD_PID" >>"$T/pids"
	wait_until 10 test -S "$US"
	st=$(kcurl --haproxy-protocol -o /dev/null -w '%{http_code}' "https://localhost:$PORT/a.txt")
	expect_eq "socket activation: a passed socket with the address of a proxy-protocol line" "$st" 200
	wait_until 20 grep -q "serving .* with" "$KTLSD_LOG"
	check "... the log names each with its options" grep -qF "socket activation: serving the passed sockets (https 127.0.0.1:$PORT (fd 3) proxy-protocol, https unix:$US (fd 4), https unix:$UX (fd 5) proxy-protocol)" "$KTLSD_LOG"
	refused "... a connection without a header" --tls "$FIX/ca.pem" "tcp:$PORT" none
	st=$(curl -sS --max-time 30 --cacert "$FIX/ca.pem" --unix-socket "$US" -o /dev/null -w '%{http_code}' "https://localhost/a.txt")
	expect_eq "... a passed Unix socket, no line for it: HTTPS without PROXY header" "$st" 200
	st=$(curl -sS --max-time 30 --haproxy-protocol --cacert "$FIX/ca.pem" --unix-socket "$UX" -o /dev/null -w '%{http_code}' "https://localhost/a.txt")
	expect_eq "... a passed Unix socket with a proxy-protocol line: curl --haproxy-protocol" "$st" 200
	refused "... and without a header" --tls "$FIX/ca.pem" "unix:$UX" none
	stop_ktlsd
	check "... a passed Unix socket stays: it is the manager's" test -S "$US"
fi
