# shellcheck shell=bash
# Virtual hosts: several sites in one process, each with its names, root,
# certificates, header fields and Content-Types. SNI picks the certificate
# (openssl s_client -servername), Host picks nothing the certificate was not
# chosen for (421), plain HTTP goes by Host alone, sessions stay with their
# site, and a reload adds a site.

S=$T/sites
mkdir -p "$S/top" "$S/a/sub" "$S/b" "$S/c"
echo top >"$S/top/which.txt"
echo a >"$S/a/which.txt"
echo b >"$S/b/which.txt"
echo c >"$S/c/which.txt"
echo pkg >"$S/a/thing.kpkg"
echo pkg >"$S/top/thing.kpkg"
echo sub >"$S/a/sub/index.html"
printf 'a' | gzip -c >"$S/a/which.txt.gz"
printf 'top' | gzip -c >"$S/top/which.txt.gz"
# Settled files: one changed in the last 2 s has another ETag (README, "What
# it serves"), and the 304 check below reuses an ETag taken seconds before.
find "$S" -type f -exec touch -d '1 minute ago' {} +

# cert NAME CN SAN TYPE: a self-signed certificate NAME.pem/NAME.key.
cert() {
	local newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
	[ "$4" = rsa ] && newkey=(-newkey rsa:2048)
	openssl req -x509 "${newkey[@]}" -nodes -keyout "$S/$1.key" -out "$S/$1.pem" -days 30 \
		-subj "/CN=$2" -addext "subjectAltName=$3" 2>/dev/null
}
cert a dl-a.test DNS:dl-a.test,DNS:*.a.test ec
cert a-rsa dl-a.test DNS:dl-a.test,DNS:*.a.test rsa
cert b dl-b.test DNS:dl-b.test,DNS:*.b.test ec
cert c dl-c.test DNS:dl-c.test ec
cat "$S/a.pem" "$S/a-rsa.pem" "$S/b.pem" "$S/c.pem" "$FIX/ca.pem" >"$S/ca.pem"

PORT=$(freeport)
PLAIN=$(freeport)
SPORT=$(freeport)
MPY="$(dirname "${BASH_SOURCE[0]}")/metrics_check.py"
cat >"$S/ktlsd.conf" <<CONF
# The top level: the site for clients that name none of the others.
root $S/top
cert $FIX/ec.pem
key $FIX/ec.key
header "X-Top: yes"
access-log $S/access.log
status-listen 127.0.0.1:$SPORT
listen 127.0.0.1:$PORT
listen-plain 127.0.0.1:$PLAIN
workers 2

[site a]
server-name dl-a.test
server-name *.a.test
root $S/a
cert $S/a.pem
key $S/a.key
cert $S/a-rsa.pem
key $S/a-rsa.key
header "Cache-Control: public, max-age=3600"
header "Strict-Transport-Security: max-age=31536000"
mime-type "kpkg application/x-ktlsd-test"
precompressed on

[site b]
server-name dl-b.test
server-name *.b.test
root $S/b
cert $S/b.pem
key $S/b.key
autoindex on
limit-conn 1
CONF

# subject NAME [ARGS...]: the CN of the certificate the server sends for SNI
# NAME ("-" for no SNI).
subject() {
	local sni=(-servername "$1")
	[ "$1" = - ] && sni=(-noservername)
	shift
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" "${sni[@]}" "$@" \
		2>/dev/null | sed -n 's/^subject=.*CN *= *//p'
}

# get NAME HOST PATH [CURL-ARGS...]: GET https://HOST:PORT/PATH, connecting to
# 127.0.0.1 (SNI: HOST). STATUS, $T/NAME.h and $T/NAME.b as fetch sets them.
get() {
	local name=$1 host=$2 path=$3
	shift 3
	STATUS=$(curl -sS --max-time 30 --cacert "$S/ca.pem" --resolve "$host:$PORT:127.0.0.1" \
		-D "$T/$name.h" -o "$T/$name.b" -w '%{http_code}' "$@" \
		"https://$host:$PORT$path" 2>"$T/$name.err")
}

check "the sites' configuration tests ok" "$KTLSD" --config "$S/ktlsd.conf" --test-config

if ! launch --config "$S/ktlsd.conf"; then
	fail "start with sites" "$(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	return 0
fi

# ---- certificates by SNI ----
expect_eq "SNI dl-a.test: site a's certificate" "$(subject dl-a.test)" "dl-a.test"
expect_eq "SNI DL-B.TEST. (case, trailing dot): site b's" "$(subject DL-B.TEST.)" "dl-b.test"
expect_eq "SNI x.y.b.test: site b's by its wildcard" "$(subject x.y.b.test)" "dl-b.test"
expect_eq "SNI of no site: the top level's" "$(subject other.test)" "localhost"
expect_eq "no SNI: the top level's" "$(subject -)" "localhost"
expect_eq "a client that takes only RSA gets site a's RSA certificate" \
	"$(subject dl-a.test -tls1_2 -sigalgs RSA+SHA256:RSA-PSS+SHA256)" "dl-a.test"
echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -servername dl-a.test -tls1_2 \
	-sigalgs RSA+SHA256:RSA-PSS+SHA256 2>/dev/null >"$T/rsa.out"
expect_match "...and it is the RSA one" "$(grep -m1 'Server public key is' "$T/rsa.out")" '2048 bit'

# ---- each site its root ----
get a dl-a.test /which.txt
expect_eq "dl-a.test serves site a's root" "$STATUS $(cat "$T/a.b")" "200 a"
get a2 www.a.test /which.txt
expect_eq "www.a.test (wildcard) serves site a" "$STATUS $(cat "$T/a2.b")" "200 a"
get b dl-b.test /which.txt --http2
expect_eq "dl-b.test over HTTP/2 serves site b" "$STATUS $(cat "$T/b.b")" "200 b"
get top localhost /which.txt
expect_eq "a name of no site: the top level" "$STATUS $(cat "$T/top.b")" "200 top"
get nofile dl-b.test /thing.kpkg
expect_eq "site b has no thing.kpkg" "$STATUS" 404

# ---- 421: Host must name the connection's site ----
get mis dl-a.test /which.txt -H "Host: dl-b.test"
expect_eq "HTTP/1.1: Host of another site than SNI's: 421" "$STATUS" 421
get mis2 dl-a.test /which.txt --http2 -H "Host: dl-b.test:$PORT"
expect_eq "HTTP/2: :authority of another site than SNI's: 421" "$STATUS" 421
expect_eq "...with no site fields on the error" "$(hdr "$T/mis2.h" strict-transport-security)" ""
get unknown dl-a.test /which.txt -H "Host: unknown.test"
expect_eq "a Host of no site stays on the connection's site" "$STATUS $(cat "$T/unknown.b")" "200 a"
STATUS=$(curl -sS --max-time 30 -k -o /dev/null -w '%{http_code}' -H "Host: dl-a.test" \
	"https://127.0.0.1:$PORT/which.txt")
expect_eq "no SNI (an IP), Host of a site: 421" "$STATUS" 421
STATUS=$(curl -sS --max-time 30 -k -o "$T/ip.b" -w '%{http_code}' "https://127.0.0.1:$PORT/which.txt")
expect_eq "no SNI, Host the IP: the top level" "$STATUS $(cat "$T/ip.b")" "200 top"

# ---- plain HTTP goes by Host ----
plain() {
	curl -sS --max-time 30 -H "Host: $1" "http://127.0.0.1:$PLAIN/which.txt"
}
expect_eq "plain HTTP, Host dl-b.test: site b" "$(plain dl-b.test)" "b"
expect_eq "plain HTTP, Host w.a.test:80: site a" "$(plain w.a.test:80)" "a"
expect_eq "plain HTTP, Host of no site: the top level" "$(plain nowhere.test)" "top"

# ---- the site a request names: absolute-form targets, Host values ----
# RFC 9112 3.2.2: an absolute-form target's authority names the site and
# Host is ignored for it (curl --http1.1 --request-target); RFC 9112 3.2: a missing,
# repeated or invalid Host is 400 (raw requests: curl tidies what it sends).
# The TLS rule holds whatever names the site: another site than SNI's is 421.

# named NAME MODE REQUEST: one raw request, MODE an SNI name or "plain":
# "status" and, for a 200, the body.
named() {
	local mode=(--sni "$2") port=$PORT out status
	[ "$2" = plain ] && mode=(--plain) port=$PLAIN
	out=$(timeout 30 "$PY" "$LIBPY" raw "${mode[@]}" --dir "$T/named.$1" "$port" "send=$3" resp 2>&1)
	status=$(printf '%s\n' "$out" | awk '$1 == "RESP" { print $2 }')
	if [ "$status" = 200 ]; then
		echo "$status $(cat "$T/named.$1/0.body")"
	else
		echo "${status:-none: $out}"
	fi
}
# req TARGET FIELDS: an HTTP/1.1 GET head, written as send= takes it.
req() {
	printf 'GET %s HTTP/1.1\\r\\n%s\\r\\n' "$1" "$2"
}
expect_eq "plain HTTP, http://dl-b.test/ target, Host dl-a.test: site b" \
	"$(named abs1 plain "$(req http://dl-b.test/which.txt 'Host: dl-a.test\r\n')")" "200 b"
get abs2 dl-b.test /which.txt --http1.1 --request-target "https://dl-b.test:$PORT/which.txt" \
	-H "Host: dl-a.test"
expect_eq "SNI dl-b.test, https://dl-b.test/ target, Host dl-a.test: site b" \
	"$STATUS $(cat "$T/abs2.b")" "200 b"
get abs3 dl-a.test /which.txt --http1.1 --request-target "http://dl-b.test/which.txt"
expect_eq "SNI dl-a.test, a target naming site b: 421" "$STATUS" 421
get abs4 dl-a.test /which.txt --http1.1 --request-target "http://nowhere.test/which.txt"
expect_eq "SNI dl-a.test, a target naming no site: the connection's" \
	"$STATUS $(cat "$T/abs4.b")" "200 a"
expect_eq "plain HTTP, an https:// target: 421 (RFC 9110 7.4)" \
	"$(named abs5 plain "$(req https://dl-b.test/which.txt 'Host: dl-b.test\r\n')")" 421
expect_eq "plain HTTP, a target whose port is not digits: 400" \
	"$(named abs6 plain "$(req http://dl-b.test:x/which.txt 'Host: dl-b.test\r\n')")" 400
expect_eq "plain HTTP, a target with userinfo: 400" \
	"$(named abs7 plain "$(req http://u@dl-b.test/which.txt 'Host: dl-b.test\r\n')")" 400
expect_eq "an absolute-form target still needs a valid Host: 400" \
	"$(named abs8 dl-a.test "$(req http://dl-a.test/which.txt 'Host: dl-a.test x\r\n')")" 400
expect_eq "Host 'dl-a.test x': 400" \
	"$(named h1 dl-a.test "$(req /which.txt 'Host: dl-a.test x\r\n')")" 400
expect_eq "Host 'dl-b.test:abc' on site a's connection: 400, not 421" \
	"$(named h2 dl-a.test "$(req /which.txt 'Host: dl-b.test:abc\r\n')")" 400
expect_eq "plain HTTP, Host 'dl-b.test:abc': 400" \
	"$(named h3 plain "$(req /which.txt 'Host: dl-b.test:abc\r\n')")" 400
expect_eq "plain HTTP, Host with userinfo: 400" \
	"$(named h4 plain "$(req /which.txt 'Host: u@dl-b.test\r\n')")" 400
expect_eq "an empty Host: 400 (RFC 9110 4.2.1)" \
	"$(named h5 dl-a.test "$(req /which.txt 'Host:\r\n')")" 400
expect_eq "two Host fields: 400" \
	"$(named h6 plain "$(req /which.txt 'Host: dl-a.test\r\nHost: dl-b.test\r\n')")" 400
expect_eq "HTTP/1.1 without Host: 400" "$(named h7 plain "$(req /which.txt '')")" 400
expect_eq "HTTP/1.0 without Host: the default site" \
	"$(named h8 plain 'GET /which.txt HTTP/1.0\r\n\r\n')" "200 top"
expect_eq "Host DL-A.TEST.:8443 (case, trailing dot, port): site a" \
	"$(named h9 dl-a.test "$(req /which.txt 'Host: DL-A.TEST.:8443\r\n')")" "200 a"
expect_eq "Host [::1]:8443: the connection's site" \
	"$(named h10 dl-a.test "$(req /which.txt 'Host: [::1]:8443\r\n')")" "200 a"
# HTTP/2 (SNI localhost: the top level): RFC 9113 8.3.1, and 8.1.1's stream
# error PROTOCOL_ERROR (1) for a malformed request.
h2auth() {
	py_client 30 "$H2PY" authority "$PORT" /which.txt "$@"
	echo "$OUT"
}
H2PY="$(dirname "${BASH_SOURCE[0]}")/h2_client.py"
expect_eq "HTTP/2 :authority localhost: served" "$(h2auth localhost)" "STATUS 1 200"
expect_eq "HTTP/2 :authority 'localhost:abc': PROTOCOL_ERROR" "$(h2auth localhost:abc)" "RESET 1 1"
expect_eq "HTTP/2 :authority with userinfo: PROTOCOL_ERROR" "$(h2auth u@localhost)" "RESET 1 1"
expect_eq "HTTP/2 :authority localhost, host dl-a.test: PROTOCOL_ERROR" \
	"$(h2auth localhost dl-a.test)" "RESET 1 1"
expect_eq "HTTP/2 :authority localhost, host LOCALHOST:443 (the same origin): served" \
	"$(h2auth localhost LOCALHOST:443)" "STATUS 1 200"
expect_eq "HTTP/2 host alone: served" "$(h2auth - localhost)" "STATUS 1 200"
expect_eq "HTTP/2 host alone, 'localhost:abc': PROTOCOL_ERROR" "$(h2auth - localhost:abc)" \
	"RESET 1 1"
expect_eq "HTTP/2 host alone naming site b: 421" "$(h2auth - dl-b.test)" "STATUS 1 421"

# ---- the access log names each request's site, and its host without the port ----
get logged-a dl-a.test '/which.txt?logged=a' --http1.1
get logged-top localhost '/which.txt?logged=top' --http2
wait_until 10 sh -c 'grep -q "logged=a" "$1" && grep -q "logged=top" "$1"' sh "$S/access.log"
expect_match "access log: a request to dl-a.test names its site, the host without its port" \
	"$(grep -a 'logged=a' "$S/access.log")" ' site="a" host="dl-a.test" '
expect_match "access log: one to the top level names none" \
	"$(grep -a 'logged=top' "$S/access.log")" ' site="-" host="localhost" '
expect_match "access log: a 421 names none" \
	"$(grep -a ' 421 ' "$S/access.log" | tail -n 1)" ' site="-" host="'

# ---- header fields and Content-Types per site ----
expect_eq "site a: its Cache-Control" "$(hdr "$T/a.h" cache-control)" "public, max-age=3600"
expect_eq "site a: its Strict-Transport-Security" "$(hdr "$T/a.h" Strict-Transport-Security)" \
	"max-age=31536000"
expect_eq "site a gave fields of its own: not the top level's" "$(hdr "$T/a.h" x-top)" ""
expect_eq "site b takes the top level's fields (HTTP/2)" "$(hdr "$T/b.h" x-top)" "yes"
expect_eq "the top level's own field" "$(hdr "$T/top.h" x-top)" "yes"
expect_eq "a 404 goes out without site fields" "$(hdr "$T/nofile.h" x-top)" ""
get redir dl-a.test /sub
expect_eq "a 301 carries the site's fields" \
	"$STATUS $(hdr "$T/redir.h" cache-control)" "301 public, max-age=3600"
get c304 dl-a.test /which.txt -H "If-None-Match: $(hdr "$T/a.h" etag)"
expect_eq "a 304 carries them too" "$STATUS $(hdr "$T/c304.h" cache-control)" \
	"304 public, max-age=3600"
get pkg dl-a.test /thing.kpkg --http2
expect_eq "site a's mime-type override (HTTP/2)" "$(hdr "$T/pkg.h" content-type)" \
	"application/x-ktlsd-test"
get pkg2 localhost /thing.kpkg
expect_eq "the top level keeps the default type" "$(hdr "$T/pkg2.h" content-type)" \
	"application/octet-stream"

# ---- listings, precompressed files and limits per site ----
get list dl-b.test / -H "Accept: application/json"
expect_eq "site b lists its folder (autoindex on)" \
	"$STATUS $(grep -o '"name": *"which.txt"' "$T/list.b" | tr -d ' ')" '200 "name":"which.txt"'
get nolist dl-a.test /
expect_eq "site a does not (autoindex off)" "$STATUS" 404
get gz dl-a.test /which.txt -H "Accept-Encoding: gzip"
expect_eq "site a serves which.txt.gz (precompressed on)" \
	"$STATUS $(hdr "$T/gz.h" content-encoding)" "200 gzip"
get nogz localhost /which.txt -H "Accept-Encoding: gzip"
expect_eq "the top level does not (precompressed off)" \
	"$STATUS $(hdr "$T/nogz.h" content-encoding) $(cat "$T/nogz.b")" "200  top"
# One connection to site b held open (limit-conn 1 there): the next one to
# site b gets 429, one to site a from the same address does not.
# Earlier connections to site b may still be closing (they count until
# they are gone): the holder tries again until it is the one counted.
timeout 40 "$PY" -c 'import socket, ssl, sys, time
c = ssl.create_default_context(cafile=sys.argv[2])
while True:
    s = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))),
                      server_hostname="dl-b.test")
    s.sendall(b"GET /which.txt HTTP/1.1\r\nHost: dl-b.test\r\n\r\n")
    status = s.recv(12).decode().split()[1]
    if status != "429":
        break
    s.close()
    time.sleep(0.2)
print(status, flush=True)
time.sleep(30)' "$PORT" "$S/ca.pem" >"$T/held.out" 2>&1 &
held=$!
wait_until 20 grep -q . "$T/held.out"
expect_eq "site b: the first connection, held open, is served" "$(cat "$T/held.out")" 200
over_b() {
	get over dl-b.test /which.txt
	[ "$STATUS" = 429 ]
}
check "site b's limit-conn 1: a second connection gets 429" wait_until 15 over_b
get under dl-a.test /which.txt
expect_eq "site a's connections are not limited by site b's" "$STATUS" 200
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null

# ---- sessions stay with their site ----
# s_client's stdin stays open until the response is in: the TLS 1.3 ticket
# comes before it, and is in the session file by then.
{
	printf 'GET /which.txt HTTP/1.1\r\nHost: dl-a.test\r\n\r\n'
	wait_until 10 grep -q '^a$' "$T/sess.out"
} | timeout 15 openssl s_client -connect "127.0.0.1:$PORT" -servername dl-a.test -tls1_3 \
	-sess_out "$T/a.sess" >"$T/sess.out" 2>&1
resumed() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -servername "$1" -tls1_3 \
		-sess_in "$T/a.sess" 2>/dev/null | grep -m1 -oE '^(New|Reused)'
}
expect_eq "a session of site a resumes on site a" "$(resumed dl-a.test)" "Reused"
expect_eq "...but not on site b" "$(resumed dl-b.test)" "New"

# ---- a reload adds a site ----
cat >>"$S/ktlsd.conf" <<CONF

[site c]
server-name dl-c.test
root $S/c
cert $S/c.pem
key $S/c.key
CONF
kill -HUP "$KTLSD_PID"
wait_until 10 grep -q "reloaded" "$KTLSD_LOG"
expect_eq "after SIGHUP: the new site's certificate" "$(subject dl-c.test)" "dl-c.test"
get c dl-c.test /which.txt
expect_eq "after SIGHUP: the new site's root" "$STATUS $(cat "$T/c.b")" "200 c"
get a3 dl-a.test /which.txt
expect_eq "after SIGHUP: the others still serve" "$STATUS $(cat "$T/a3.b")" "200 a"
# Per-site metrics: each site its series, kept across the reload (a's count
# goes on), the new one with its own.
py_client 60 "$MPY" expect "$SPORT" 'ktlsd_site_responses_total{site=c,code=200}==1' \
	'ktlsd_site_responses_total{site=a,code=200}>=3' \
	'ktlsd_site_responses_total{site=b,code=200}>=1' \
	'ktlsd_site_responses_total{site=-,code=421}>=1' \
	'ktlsd_site_request_duration_seconds_count{site=c}==1' \
	'ktlsd_site_body_bytes_total{site=c}==2'
expect_eq "/metrics: responses, latency and bytes per site, across the reload" "$OUT" OK
stop_ktlsd

# ---- what does not start ----
printf '[site x]\nserver-name x.test\nroot %s\n' "$S/a" >"$S/nocert.conf"
"$KTLSD" --config "$S/nocert.conf" --listen "127.0.0.1:$(freeport)" >"$T/nocert.out" 2>&1
expect_eq "a TLS listener and a site without a certificate: exit 2" "$?" 2
check "...saying which site" grep -q "\[site x\]: a TLS listener needs a certificate" "$T/nocert.out"
printf '[site x]\nroot %s/none\ncert %s\nkey %s\n' "$S" "$FIX/ec.pem" "$FIX/ec.key" >"$S/noroot.conf"
"$KTLSD" --config "$S/noroot.conf" --listen "127.0.0.1:$(freeport)" >"$T/noroot.out" 2>&1
expect_eq "a site whose root is missing: exit 2" "$?" 2
check "...naming the site and the root" grep -q "\[site x\] root $S/none: No such file" "$T/noroot.out"
