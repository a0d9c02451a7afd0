# shellcheck shell=bash
# TLS: versions, certificate choice by key type, ALPN, session resumption,
# cipher configuration, with openssl s_client and curl.

# sclient ARGS...: openssl s_client to the server, sending one GET. Output in
# $T/sc.out, exit code in SC_RC; NEGOTIATED is "New|Reused, VERSION, CIPHER"
# (from s_client's summary line) or empty. s_client quits when its stdin
# ends, so stdin stays open until the response (or an error) is in: that
# does not depend on how fast the server closes, and TLS 1.3 tickets, which
# come before the response, have been read by then.
sclient() {
	local out=$T/sc.out
	: >"$out"
	# shellcheck disable=SC2094 # reading the file s_client writes is the point
	{
		printf 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
		wait_until 10 grep -qE 'aaaaaaaaaa|\(NONE\)|:error:|errno=' "$out"
	} | timeout 15 openssl s_client -connect "127.0.0.1:$PORT" "$@" >"$out" 2>&1
	SC_RC=$?
	NEGOTIATED=$(grep -m1 -E '^(New|Reused), ' "$out" | sed 's/ Cipher is//')
	case $NEGOTIATED in *"(NONE)"*) NEGOTIATED= ;; esac
}

# peer_cert: "ec" or "rsa" (which fixture certificate the server sent), or
# "none" / "unknown".
peer_cert() {
	local fp
	fp=$(sed -n '/BEGIN CERTIFICATE/,/END CERTIFICATE/p' "$T/sc.out" |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2)
	if [ -z "$fp" ]; then echo none
	elif [ "$fp" = "$(cat "$FIX/ec.fp")" ]; then echo ec
	elif [ "$fp" = "$(cat "$FIX/rsa.fp")" ]; then echo rsa
	else echo unknown; fi
}

# got_response: the HTTP response to our GET came back through s_client.
got_response() {
	grep -q '^HTTP/1\.1 200' "$T/sc.out" && grep -q 'aaaaaaaaaa' "$T/sc.out"
}

# expect_refused NAME: the last sclient did not complete a handshake.
expect_refused() {
	if [ "$SC_RC" -ne 0 ] && [ -z "$NEGOTIATED" ] && ! got_response; then
		pass "$1"
	else
		fail "$1" "s_client rc=$SC_RC negotiated '${NEGOTIATED:-nothing}'"
	fi
}

start_ktlsd --tls-session-tickets on || return 0

sclient -servername localhost -tls1_2
expect_match "TLS 1.2 handshake" "$NEGOTIATED" '^New, TLSv1\.2, '
check "TLS 1.2: HTTP response" got_response
sclient -servername localhost -tls1_3
expect_match "TLS 1.3 handshake" "$NEGOTIATED" '^New, TLSv1\.3, '
check "TLS 1.3: HTTP response" got_response
sclient -noservername
expect_match "no SNI: handshake still works" "$NEGOTIATED" '^New, TLSv1\.[23], '
sclient -servername other.example -tls1_3
expect_match "unknown SNI name: handshake still works" "$NEGOTIATED" '^New, TLSv1\.3, '

# Certificate by key type: ECDSA-only clients get the EC cert, RSA-only the RSA one.
sclient -servername localhost -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256
expect_eq "TLS 1.2 ECDSA-only cipher: cipher" "$NEGOTIATED" "New, TLSv1.2, ECDHE-ECDSA-AES128-GCM-SHA256"
expect_eq "TLS 1.2 ECDSA-only cipher: EC certificate" "$(peer_cert)" ec
sclient -servername localhost -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256
expect_eq "TLS 1.2 RSA-only cipher: cipher" "$NEGOTIATED" "New, TLSv1.2, ECDHE-RSA-AES128-GCM-SHA256"
expect_eq "TLS 1.2 RSA-only cipher: RSA certificate" "$(peer_cert)" rsa
sclient -servername localhost -tls1_3 -sigalgs rsa_pss_rsae_sha256
expect_match "TLS 1.3 rsa_pss_rsae_sha256 only: handshake" "$NEGOTIATED" '^New, TLSv1\.3, '
expect_eq "TLS 1.3 rsa_pss_rsae_sha256 only: RSA certificate" "$(peer_cert)" rsa
sclient -servername localhost -tls1_3 -sigalgs ecdsa_secp256r1_sha256
expect_match "TLS 1.3 ecdsa_secp256r1_sha256 only: handshake" "$NEGOTIATED" '^New, TLSv1\.3, '
expect_eq "TLS 1.3 ecdsa_secp256r1_sha256 only: EC certificate" "$(peer_cert)" ec

# Old protocol versions: the client is allowed them (SECLEVEL=0), the server
# must refuse.
sclient -servername localhost -tls1 -cipher 'DEFAULT@SECLEVEL=0'
expect_refused "TLS 1.0 client refused"
sclient -servername localhost -tls1_1 -cipher 'DEFAULT@SECLEVEL=0'
expect_refused "TLS 1.1 client refused"

sclient -servername localhost -alpn http/1.1
expect_match "ALPN http/1.1 selected" "$(grep -m1 '^ALPN protocol' "$T/sc.out")" '^ALPN protocol: http/1\.1$'
check "ALPN http/1.1: HTTP response" got_response
# grep -a: the h2 answer to our HTTP/1.1 GET is binary.
sclient -servername localhost -alpn h2
expect_match "ALPN h2 selected" "$(grep -a -m1 '^ALPN protocol' "$T/sc.out")" '^ALPN protocol: h2$'
sclient -servername localhost -alpn foo,http/1.1
expect_match "ALPN foo,http/1.1: http/1.1 selected" "$(grep -m1 '^ALPN protocol' "$T/sc.out")" '^ALPN protocol: http/1\.1$'
check "ALPN foo,http/1.1: HTTP response" got_response
# RFC 7301 3.2: ALPN offered but nothing in common is a fatal
# no_application_protocol alert, not a connection without ALPN.
sclient -servername localhost -alpn foo
expect_refused "ALPN foo only: handshake refused"
check "ALPN foo only: no_application_protocol alert" grep -q 'alert no application protocol' "$T/sc.out"
sclient -servername localhost -alpn http/1.0
expect_match "ALPN http/1.0 (curl --http1.0) still served" "$(grep -m1 '^ALPN protocol' "$T/sc.out")" '^ALPN protocol: http/1\.0$'
# No ALPN at all: HTTP/1.1 as before.
sclient -servername localhost
check "no ALPN offered: HTTP response" got_response

# Resumption: each connection resumes the session the previous one saved.
# With two workers the ticket keys must be shared, so try several times.
for v in 1_2 1_3; do
	sclient -servername localhost "-tls$v" -sess_out "$T/sess.$v.0"
	expect_match "TLS ${v/_/.} full handshake before resumption" "$NEGOTIATED" '^New, '
	if [ "$v" = 1_2 ]; then
		check "TLS 1.2 server issued a session ticket" grep -q 'TLS session ticket:' "$T/sc.out"
	fi
	reused=0 fresh=0
	for i in 1 2 3 4; do
		[ -s "$T/sess.$v.$((i - 1))" ] || break
		sclient -servername localhost "-tls$v" -sess_in "$T/sess.$v.$((i - 1))" -sess_out "$T/sess.$v.$i"
		case $NEGOTIATED in Reused,*) reused=$((reused + 1)) ;; esac
		# s_client writes -sess_out only when it got a new session (TLS 1.2
		# resumption may not issue one): then the old one is still good.
		if [ -s "$T/sess.$v.$i" ]; then
			fresh=$((fresh + 1))
		else
			cp "$T/sess.$v.$((i - 1))" "$T/sess.$v.$i"
		fi
	done
	expect_eq "TLS ${v/_/.} session resumed (4 of 4 connections say Reused)" "$reused" 4
	if [ "$v" = 1_3 ]; then
		# TLS 1.3 tickets are for one use: every resumption must bring a
		# new one, or a browser-like client resumes only every other time.
		expect_eq "TLS 1.3: each resumption issues a fresh ticket (4 of 4)" "$fresh" 4
	fi
done

# curl with each certificate type, trusting only that certificate.
for c in ec:ECDHE-ECDSA-AES128-GCM-SHA256 rsa:ECDHE-RSA-AES128-GCM-SHA256; do
	st=$(curl -sS --max-time 15 --cacert "$FIX/${c%%:*}.pem" --resolve "localhost:$PORT:127.0.0.1" \
		--tlsv1.2 --tls-max 1.2 --ciphers "${c#*:}" -o /dev/null -w '%{http_code}' "$BASE/a.txt")
	expect_eq "curl TLS 1.2 with the ${c%%:*} certificate (verified)" "$st" 200
done
st=$(kcurl --tlsv1.3 -o /dev/null -w '%{http_code}' "$BASE/a.txt")
expect_eq "curl TLS 1.3" "$st" 200

stop_ktlsd

start_ktlsd --tls-protocols TLSv1.3 || return 0
sclient -servername localhost -tls1_2
expect_refused "--tls-protocols TLSv1.3: TLS 1.2 client refused"
sclient -servername localhost -tls1_3
expect_match "--tls-protocols TLSv1.3: TLS 1.3 works" "$NEGOTIATED" '^New, TLSv1\.3, '
stop_ktlsd

start_ktlsd --tls-protocols TLSv1.2 || return 0
sclient -servername localhost -tls1_3
expect_refused "--tls-protocols TLSv1.2: TLS 1.3 client refused"
sclient -servername localhost -tls1_2
expect_match "--tls-protocols TLSv1.2: TLS 1.2 works" "$NEGOTIATED" '^New, TLSv1\.2, '
stop_ktlsd

start_ktlsd --tls13-ciphersuites TLS_CHACHA20_POLY1305_SHA256 \
	--tls12-ciphers ECDHE-ECDSA-CHACHA20-POLY1305 --tls-session-tickets off || return 0
sclient -servername localhost -tls1_3
expect_eq "--tls13-ciphersuites: negotiated" "$NEGOTIATED" "New, TLSv1.3, TLS_CHACHA20_POLY1305_SHA256"
check "--tls13-ciphersuites: HTTP response" got_response
sclient -servername localhost -tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256
expect_refused "--tls13-ciphersuites: a client without it is refused"
sclient -servername localhost -tls1_2
expect_eq "--tls12-ciphers: negotiated" "$NEGOTIATED" "New, TLSv1.2, ECDHE-ECDSA-CHACHA20-POLY1305"
check "--tls-session-tickets off: no TLS 1.2 ticket" sh -c "! grep -q 'TLS session ticket:' '$T/sc.out'"
sclient -servername localhost -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256
expect_refused "--tls12-ciphers: a client without it is refused"
stop_ktlsd

# Whose order picks the cipher. OpenSSL's own client (curl's, wget's) asks
# for AES-256-GCM first; the server's lists put AES-128-GCM first, and by
# default their order wins, except for a client that puts ChaCha20 first.
start_ktlsd || return 0
sclient -servername localhost -tls1_3
expect_eq "cipher order: TLS 1.3, ours (AES-128-GCM over the client's AES-256-GCM)" \
	"$NEGOTIATED" "New, TLSv1.3, TLS_AES_128_GCM_SHA256"
sclient -servername localhost -tls1_2 -cipher ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256
expect_eq "cipher order: TLS 1.2, ours" "$NEGOTIATED" "New, TLSv1.2, ECDHE-ECDSA-AES128-GCM-SHA256"
sclient -servername localhost -tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256
expect_eq "cipher order: a client that puts ChaCha20 first gets it" \
	"$NEGOTIATED" "New, TLSv1.3, TLS_CHACHA20_POLY1305_SHA256"
stop_ktlsd
start_ktlsd --tls-prefer-server-ciphers off || return 0
sclient -servername localhost -tls1_3
expect_eq "--tls-prefer-server-ciphers off: the client's order" \
	"$NEGOTIATED" "New, TLSv1.3, TLS_AES_256_GCM_SHA384"
stop_ktlsd

# Session tickets across a fleet: keys from files (nginx's
# ssl_session_ticket_key: 80 or 48 random bytes; the first encrypts, all
# decrypt), so a session from one ktlsd resumes on another. Each server
# below is a new process with its own random ticket secret.
openssl rand 80 >"$T/tk80.key"
openssl rand 48 >"$T/tk48.key"
for v in 1_2 1_3; do
	start_ktlsd --tls-ticket-key-file "$T/tk80.key" || return 0
	sclient -servername localhost "-tls$v" -sess_out "$T/fleet.$v"
	expect_match "ticket key file, TLS ${v/_/.}: a full handshake on the first server" "$NEGOTIATED" '^New, '
	stop_ktlsd
	start_ktlsd --tls-ticket-key-file "$T/tk80.key" || return 0
	sclient -servername localhost "-tls$v" -sess_in "$T/fleet.$v"
	expect_match "ticket key file, TLS ${v/_/.}: the session resumes on a second server" "$NEGOTIATED" '^Reused, '
	stop_ktlsd
	# Rotation: a new key first, the old one after it: old tickets still
	# resume, and the new ticket is sealed with the new key.
	start_ktlsd --tls-ticket-key-file "$T/tk48.key" --tls-ticket-key-file "$T/tk80.key" || return 0
	sclient -servername localhost "-tls$v" -sess_in "$T/fleet.$v" -sess_out "$T/fleet.$v.new"
	expect_match "ticket key file, TLS ${v/_/.}: after rotation the old ticket resumes" "$NEGOTIATED" '^Reused, '
	# The renewed ticket: its first 16 bytes name the key that sealed it.
	# (s_client saves no new session after a TLS 1.2 resumption; it prints
	# the ticket.)
	name48=$(head -c 16 "$T/tk48.key" | od -An -tx1 | tr -d ' \n' | sed 's/../& /g; s/ $//')
	ticket=$(sed -n '/TLS session ticket:/,/^$/p' "$T/sc.out" | sed -n 's/^ *[0-9a-f]\{4\} - //p' |
		head -n 1 | cut -c1-47 | tr '-' ' ' | tr -s ' ')
	expect_eq "ticket key file, TLS ${v/_/.}: ... renewed under the new key (ticket name)" \
		"$(echo "$ticket" | tr -d ' ' | cut -c1-32)" "$(echo "$name48" | tr -d ' ')"
	stop_ktlsd
	start_ktlsd --tls-ticket-key-file "$T/tk48.key" || return 0
	sclient -servername localhost "-tls$v" -sess_in "$T/fleet.$v"
	expect_match "ticket key file, TLS ${v/_/.}: a server without the old key does not resume it" "$NEGOTIATED" '^New, '
	stop_ktlsd
	start_ktlsd || return 0
	sclient -servername localhost "-tls$v" -sess_in "$T/fleet.$v"
	expect_match "ticket key file, TLS ${v/_/.}: a server without key files does not resume it" "$NEGOTIATED" '^New, '
	stop_ktlsd
done
head -c 32 /dev/urandom >"$T/tk32.key"
"$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key" \
	--tls-ticket-key-file "$T/tk32.key" >"$T/tk32.out" 2>&1
expect_eq "a ticket key file of 32 bytes: refused at start (exit 2)" "$?" 2
check "... saying what a key file must be" grep -q "tk32.key: must be 48 or 80 bytes" "$T/tk32.out"
