# shellcheck shell=bash
# timeout: 240
# Certificates from an ACME CA, end to end and offline: Debian's pebble (the
# CA) and pebble-challtestsrv (its DNS, every name on 127.0.0.1) on
# loopback, ktlsd as the client and as the server the CA validates
# (start_pebble below has the commands). Checked: issuance
# by HTTP-01 and by TLS-ALPN-01, two sites by SNI, a restart that serves the
# stored certificate with no new order, a failed challenge that stops
# nothing and a SIGHUP that retries it, the CA down, bad nonces, renewal
# during a download that spans it with fds and memory flat, --user, and
# --test-config's refusals; ARI's renewal window through a proxy that adds
# it to pebble (ari_proxy.py); and certbot --webroot against the same CA,
# as README's "Certificates" has it.

if ! command -v pebble >/dev/null || ! command -v pebble-challtestsrv >/dev/null; then
	skip "ACME against pebble" "pebble is not installed (scripts/install-deps installs it)"
	return 0
fi

P=$T/pebble
mkdir -p "$P"
ACME_PORT=$(freeport) MGMT_PORT=$(freeport) DNS_PORT=$(freeport) DNS_MGMT_PORT=$(freeport)
PLAIN_PORT=$(freeport) TLS_PORT=$(freeport) STATUS_PORT=$(freeport)
DIR_URL=https://127.0.0.1:$ACME_PORT/dir

# pebble's own HTTPS certificate, for 127.0.0.1 (Debian ships none).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=wfe-test-ca -keyout "$P/wfe-ca.key" -out "$P/wfe-ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-keyout "$P/wfe.key" -out "$P/wfe.csr" 2>/dev/null
openssl x509 -req -in "$P/wfe.csr" -CA "$P/wfe-ca.pem" -CAkey "$P/wfe-ca.key" -CAcreateserial \
	-days 2 -out "$P/wfe.pem" 2>/dev/null \
	-extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')

CHALLTESTSRV_PID= PEBBLE_PID=
stop_pebble() {
	[ -n "$PEBBLE_PID" ] && kill "$PEBBLE_PID" 2>/dev/null && wait "$PEBBLE_PID" 2>/dev/null
	PEBBLE_PID=
	wait_until 10 eval '! port_open $ACME_PORT'
}
stop_all() {
	stop_pebble
	[ -n "${ARI_PID:-}" ] && kill "$ARI_PID" 2>/dev/null
	ARI_PID=
	[ -n "$CHALLTESTSRV_PID" ] && kill "$CHALLTESTSRV_PID" 2>/dev/null
	CHALLTESTSRV_PID=
	[ -n "${KTLSD_PID:-}" ] && kill -KILL "$KTLSD_PID" 2>/dev/null
}
trap stop_all EXIT
trap 'stop_all; exit 1' TERM

pebble-challtestsrv -defaultIPv4 127.0.0.1 -defaultIPv6 "" -dns01 "127.0.0.1:$DNS_PORT" \
	-http01 "" -https01 "" -tlsalpn01 "" -management "127.0.0.1:$DNS_MGMT_PORT" \
	>"$P/challtestsrv.log" 2>&1 &
CHALLTESTSRV_PID=$!

# start_pebble VALIDITY NONCEREJECT [EAB-MEMBERS]: a new CA (new root, no accounts) on
# the same ports; PEBBLE_ROOT is the root of what it issues.
PEBBLE_STARTS=0
start_pebble() {
	PEBBLE_STARTS=$((PEBBLE_STARTS + 1))
	PEBBLE_LOG=$P/pebble.$PEBBLE_STARTS.log
	local eab=${3:-'"externalAccountBindingRequired": false,'}
	cat >"$P/pebble.json" <<JSON
{"pebble": {"listenAddress": "127.0.0.1:$ACME_PORT", "managementListenAddress": "127.0.0.1:$MGMT_PORT",
  "certificate": "$P/wfe.pem", "privateKey": "$P/wfe.key", "httpPort": $PLAIN_PORT, "tlsPort": $TLS_PORT,
  "ocspResponderURL": "", $eab
  "certificateValidityPeriod": $1}}
JSON
	# -strict=false, never "-strict false": Go's flags stop at the bare word.
	PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=$2 PEBBLE_AUTHZREUSE=0 \
		pebble -config "$P/pebble.json" -dnsserver "127.0.0.1:$DNS_PORT" -strict=false \
		>"$PEBBLE_LOG" 2>&1 &
	PEBBLE_PID=$!
	PEBBLE_ROOT=$P/root.$PEBBLE_STARTS.pem
	wait_until 20 curl -sf --cacert "$P/wfe-ca.pem" "$DIR_URL" -o /dev/null &&
		curl -sf --cacert "$P/wfe-ca.pem" "https://127.0.0.1:$MGMT_PORT/roots/0" -o "$PEBBLE_ROOT"
}

# served_serial NAME: the serial of the certificate served for NAME
# (lower case, as pebble logs it).
served_serial() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" -servername "$1" \
		2>/dev/null | openssl x509 -noout -serial 2>/dev/null | sed 's/^serial=//' |
		tr 'A-F' 'a-f'
}
# file_serial FILE: the serial of the certificate in FILE, as served_serial
# prints it.
file_serial() {
	openssl x509 -in "$1" -noout -serial 2>/dev/null | sed 's/^serial=//' | tr 'A-F' 'a-f'
}
# expect_new_serial LABEL NAME OLD [FILE]: a serial is served for NAME and
# it is not OLD; with FILE, it is FILE's certificate's. (A served_serial
# that got nothing prints nothing, which differs from any OLD.)
expect_new_serial() {
	local now want
	now=$(served_serial "$2")
	want=${4:+$(file_serial "$4")}
	check "$1 ($3 -> ${now:-none})" [ -n "$now" -a "$now" != "$3" -a "${4:+$want}" = "${4:+$now}" ]
}
# verified NAME: an HTTPS GET of / for NAME that verifies against the CA's root.
verified() {
	curl -sS --max-time 20 --cacert "$PEBBLE_ROOT" --resolve "$1:$TLS_PORT:127.0.0.1" \
		"https://$1:$TLS_PORT/"
}
orders() {
	grep -c 'POST /order-plz' "$PEBBLE_LOG"
}
# launch_acme ARGS...: ktlsd on the two ports pebble validates, as the
# pebble client.
launch_acme() {
	PORT=$TLS_PORT
	launch --listen "127.0.0.1:$TLS_PORT" --acme-ca "$DIR_URL" --acme-ca-cert "${CA_CERT:-$P/wfe-ca.pem}" \
		--acme-terms-agreed on --workers 2 "$@"
}

mkdir -p "$T/root"
echo "served over ACME" >"$T/root/index.html"

if ! start_pebble 3600 0; then
	fail "pebble starts" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
	return 0
fi
pass "pebble starts"

# ---- 1. HTTP-01, the placeholder first ---------------------------------------
A=$T/acme-a
if launch_acme --root "$T/root" --server-name a.ktlsd.test --acme on --acme-dir "$A" \
	--listen-plain "127.0.0.1:$PLAIN_PORT" --access-log "$T/a.access" \
	--status-listen "127.0.0.1:$STATUS_PORT"; then
	check "no certificate yet: a placeholder is served, and the log says so" \
		grep -q "serving a self-signed placeholder" "$KTLSD_LOG"
	wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
	check "http-01: the log says the certificate is issued" \
		grep -q "acme: site _top (a.ktlsd.test): certificate issued" "$KTLSD_LOG"
	wait_until 10 grep -q "certificates reloaded" "$KTLSD_LOG"
	expect_eq "http-01: the site's HTTPS verifies against the CA's root" \
		"$(verified a.ktlsd.test)" "served over ACME"
	S1=$(served_serial a.ktlsd.test)
	check "... and serves the serial pebble issued" grep -q "Issued certificate serial $S1 " \
		"$PEBBLE_LOG"
	check "the CA's validations were answered 200 (access log)" \
		grep -qE '"GET /\.well-known/acme-challenge/[A-Za-z0-9_-]+ HTTP/1\.1" 200 ' "$T/a.access"
	expect_eq "plain HTTP serves the site meanwhile" \
		"$(curl -sS --max-time 10 "http://127.0.0.1:$PLAIN_PORT/")" "served over ACME"
	expect_eq "file modes: acme-dir, bundle.pem, cert.pem, state.json, account.key" \
		"$(stat -c %a "$A" "$A/sites/_top/bundle.pem" "$A/sites/_top/cert.pem" \
			"$A/sites/_top/state.json" "$A"/accounts/*/account.key | tr '\n' ' ')" \
		"700 600 644 600 600 "
	check "cert.pem is the chain alone (no key)" sh -c "! grep -q PRIVATE '$A/sites/_top/cert.pem'"
	check "state.json names the CA" grep -qF "\"$DIR_URL\"" "$A/sites/_top/state.json"
	curl -sS --max-time 10 "http://127.0.0.1:$STATUS_PORT/metrics" >"$T/a.metrics"
	na=$(date -d "$(openssl x509 -noout -enddate -in "$A/sites/_top/cert.pem" | cut -d= -f2)" +%s)
	check "metrics: the certificate's expiry, to the second" \
		grep -qx "ktlsd_certificate_expiry_timestamp_seconds{site=\"-\"} $na" "$T/a.metrics"
	check "metrics: the site's ACME state is valid" \
		grep -qx 'ktlsd_acme_certificate_state{site="-",state="valid"} 1' "$T/a.metrics"
	check "metrics: one order issued, none failed" sh -c \
		"grep -qx 'ktlsd_acme_orders_total{result=\"issued\"} 1' '$T/a.metrics' && grep -qx 'ktlsd_acme_orders_total{result=\"failed\"} 0' '$T/a.metrics'"
	check "metrics: the http-01 validations answered" \
		grep -qE '^ktlsd_acme_challenges_total\{type="http-01"\} [1-9]' "$T/a.metrics"
	check "metrics: the renewal time, within the certificate's life" \
		sh -c "r=\$(sed -n 's/^ktlsd_acme_renewal_timestamp_seconds{site=\"-\"} //p' '$T/a.metrics'); [ \"\$r\" -gt $(date +%s) ] && [ \"\$r\" -lt $na ]"
	n=$(orders)
	stop_ktlsd

	# ---- 2. a restart serves the stored certificate, orders nothing --
	if launch_acme --root "$T/root" --server-name a.ktlsd.test --acme on --acme-dir "$A" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		expect_eq "restart: the stored certificate from the first connection" \
			"$(served_serial a.ktlsd.test)" "$S1"
		check "... no placeholder" sh -c "! grep -q placeholder '$KTLSD_LOG'"
		sleep 3
		expect_eq "... and no new order" "$(orders)" "$n"
		stop_ktlsd
	fi

	# ---- 3. the CA down: serving goes on ---------------------------
	stop_pebble
	if launch_acme --root "$T/root" --server-name a.ktlsd.test --acme on --acme-dir "$A" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		expect_eq "CA down: the stored certificate is still served" \
			"$(served_serial a.ktlsd.test)" "$S1"
		stop_ktlsd
	fi
	if launch_acme --root "$T/root" --server-name d.ktlsd.test --acme on --acme-dir "$T/acme-d" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		wait_until 30 grep -q "order failed" "$KTLSD_LOG"
		check "CA down, no certificate: the failure names the directory and the refusal" \
			grep -qE "acme: site _top \(d\.ktlsd\.test\): order failed: GET $DIR_URL: .*(refused|connect)" \
			"$KTLSD_LOG"
		check "... and when it tries next" grep -qE "next attempt at .* \(failure 1\)" "$KTLSD_LOG"
		expect_eq "... while plain HTTP serves" \
			"$(curl -sS --max-time 10 "http://127.0.0.1:$PLAIN_PORT/")" "served over ACME"
		check "... and HTTPS answers (with the placeholder)" \
			sh -c "curl -sSk --max-time 10 --resolve d.ktlsd.test:$TLS_PORT:127.0.0.1 https://d.ktlsd.test:$TLS_PORT/ | grep -q ACME"
		if start_pebble 3600 0; then
			kill -HUP "$KTLSD_PID"
			wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
			wait_until 10 grep -q "acme: certificates reloaded" "$KTLSD_LOG"
			expect_eq "the CA back and a SIGHUP: issued at once, verified by the new root" \
				"$(verified d.ktlsd.test)" "served over ACME"
		else
			fail "pebble starts again" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
		fi
		stop_ktlsd
	fi
fi

# ---- 4. a challenge that fails, then a SIGHUP ------------------------------
curl -sS -o /dev/null -d '{"host":"c.ktlsd.test","addresses":["127.0.0.2"]}' \
	"http://127.0.0.1:$DNS_MGMT_PORT/add-a"
if launch_acme --root "$T/root" --server-name c.ktlsd.test --acme on --acme-dir "$T/acme-c" \
	--listen-plain "127.0.0.1:$PLAIN_PORT" --status-listen "127.0.0.1:$STATUS_PORT"; then
	wait_until 60 grep -q "order failed" "$KTLSD_LOG"
	check "a failed challenge: the log carries the CA's problem" \
		grep -qE "order failed: authorization for c\.ktlsd\.test invalid: urn:ietf:params:acme:error:[a-z]+: .*127\.0\.0\.2" \
		"$KTLSD_LOG"
	curl -sS --max-time 10 "http://127.0.0.1:$STATUS_PORT/status" >"$T/c.status"
	expect_match "/status: the failure, the CA's problem and when next" \
		"$("$PY" -c 'import json, sys
a = json.load(open(sys.argv[1]))["certificates"]["-"]["acme"]
print(a["state"], a["failures"], a["next_attempt"] > 0, a["last_error"])' "$T/c.status")" \
		"^placeholder 1 True .*urn:ietf:params:acme:error:"
	check "... the server goes on" kill -0 "$KTLSD_PID"
	curl -sS -o /dev/null -d '{"host":"c.ktlsd.test"}' "http://127.0.0.1:$DNS_MGMT_PORT/clear-a"
	kill -HUP "$KTLSD_PID"
	wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
	wait_until 10 grep -q "acme: certificates reloaded" "$KTLSD_LOG"
	expect_eq "... the name fixed, a SIGHUP tries again at once: issued" \
		"$(verified c.ktlsd.test)" "served over ACME"
	stop_ktlsd
fi

# ---- 5. TLS-ALPN-01, two sites by SNI --------------------------------------
cat >"$T/two.conf" <<CONF
acme-challenge tls-alpn-01
acme-dir $T/acme-two
access-log $T/two.access
[site one]
server-name one.ktlsd.test
root $T/root
acme on
[site two]
server-name two.ktlsd.test
server-name www.two.ktlsd.test
root $T/root
acme on
CONF
if launch_acme --config "$T/two.conf"; then
	wait_until 60 sh -c "[ \$(grep -c 'certificate issued' '$KTLSD_LOG') -ge 2 ]"
	check "tls-alpn-01: both sites issued" \
		sh -c "[ \$(grep -c 'certificate issued' '$KTLSD_LOG') -eq 2 ]"
	wait_until 10 sh -c "[ \$(grep -c 'certificates reloaded' '$KTLSD_LOG') -ge 2 ]"
	expect_eq "site one verifies" "$(verified one.ktlsd.test)" "served over ACME"
	expect_eq "site two verifies, by its second name too" "$(verified www.two.ktlsd.test)" \
		"served over ACME"
	expect_ne "each site has its own certificate" "$(served_serial one.ktlsd.test)" \
		"$(served_serial two.ktlsd.test)"
	expect_match "site two's certificate names both of its names" \
		"$(echo | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" \
			-servername two.ktlsd.test 2>/dev/null | openssl x509 -noout -ext subjectAltName)" \
		"DNS:two\.ktlsd\.test, DNS:www\.two\.ktlsd\.test|DNS:www\.two\.ktlsd\.test, DNS:two\.ktlsd\.test"
	check "no HTTP request was made for it" sh -c "! grep -q acme-challenge '$T/two.access'"
	expect_match "with no challenge pending, acme-tls/1 alone gets no protocol" \
		"$(echo | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" \
			-servername one.ktlsd.test -alpn acme-tls/1 2>&1)" "no application protocol|alert number 120"
	stop_ktlsd
fi

# ---- 6. --user: the folder is the user's, the thread has no capability -----
if [ "$(id -u)" = 0 ]; then
	U=$(mktemp -d /var/tmp/ktlsd-acme.XXXXXX)
	chmod 755 "$U"
	mkdir "$U/root" && cp "$T/root/index.html" "$U/root/" && chmod -R a+rX "$U/root"
	# The client reads the CA's certificate as the user, after the drop.
	cp "$P/wfe-ca.pem" "$U/" && chmod 644 "$U/wfe-ca.pem"
	CA_CERT=$U/wfe-ca.pem
	if launch_acme --root "$U/root" --server-name u.ktlsd.test --acme on --acme-dir "$U/acme" \
		--listen-plain "127.0.0.1:$PLAIN_PORT" --user nobody; then
		wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
		wait_until 10 grep -q "acme: certificates reloaded" "$KTLSD_LOG"
		expect_eq "--user nobody: issued" "$(verified u.ktlsd.test)" "served over ACME"
		expect_eq "... acme-dir and the bundle belong to nobody" \
			"$(stat -c %U "$U/acme" "$U/acme/sites/_top/bundle.pem" | tr '\n' ' ')" \
			"nobody nobody "
		check "... with a warning that nobody is shared" grep -q "acme: --user nobody: every other" \
			"$KTLSD_LOG"
		tid=$(grep -l '^ktlsd-acme$' /proc/"$KTLSD_PID"/task/*/comm | head -n1)
		expect_eq "... the ACME thread holds no capability" \
			"$(grep CapEff "${tid%/comm}/status" | cut -f2)" "0000000000000000"
		stop_ktlsd
	fi
	mkdir -m 700 "$U/rootowned"
	launch_acme --root "$U/root" --server-name u.ktlsd.test --acme on \
		--acme-dir "$U/rootowned" --listen-plain "127.0.0.1:$PLAIN_PORT" --user nobody
	expect_eq "an acme-dir of root's with --user nobody: refused at start" \
		"${KTLSD_PID:-exited}" "exited"
	check "... in one line that says why" grep -q "is owned by root, not nobody" "$KTLSD_LOG"
	CA_CERT=
	rm -rf "$U"
else
	skip "--user nobody with ACME" "not root"
fi

# ---- 7. --test-config ------------------------------------------------------
tc() {
	"$KTLSD" --test-config --listen 127.0.0.1:1 --root "$T/root" "$@" >"$T/tc.out" 2>&1
	echo $?
}
expect_eq "--test-config: acme on with no certificate yet is ok" \
	"$(tc --server-name a.ktlsd.test --acme on --acme-dir "$T/acme-tc")" 0
check "... and says a placeholder stands in" grep -q "no certificate yet" "$T/tc.out"
expect_eq "--test-config: acme on and the site's own cert: refused" \
	"$(tc --server-name a.ktlsd.test --acme on --cert "$FIX/ec.pem" --key "$FIX/ec.key")" 2
expect_eq "--test-config: acme on with wildcard names only: refused" \
	"$(tc --server-name '*.ktlsd.test' --acme on)" 2
check "... saying why" grep -q "wildcards need DNS-01" "$T/tc.out"
expect_eq "--test-config: http-01 without --listen-plain: refused" \
	"$(tc --server-name a.ktlsd.test --acme on --acme-challenge http-01)" 2
expect_eq "--test-config: an http:// CA: refused" \
	"$(tc --server-name a.ktlsd.test --acme on --acme-ca http://127.0.0.1/dir)" 2
expect_eq "--test-config: an --acme-profile that is no name: refused" \
	"$(tc --server-name a.ktlsd.test --acme on --acme-profile 'a/b')" 2

# ---- 8. external account binding ------------------------------------------
stop_pebble
EAB_KEY=zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W
if start_pebble 3600 0 "\"externalAccountBindingRequired\": true, \"externalAccountMACKeys\": {\"kid-1\": \"$EAB_KEY\"},"; then
	if launch_acme --root "$T/root" --server-name e.ktlsd.test --acme on --acme-dir "$T/acme-e" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		wait_until 30 grep -q "external account binding" "$KTLSD_LOG"
		check "EAB required, none given: one error saying what to add" \
			grep -q 'acme: site _top: the CA requires external account binding: add "acme-eab KID FILE"; no new attempt before a SIGHUP' \
			"$KTLSD_LOG"
		expect_eq "... and no order is made" "$(orders)" 0
		stop_ktlsd
	fi
	printf '%s\n' "$EAB_KEY" >"$T/eab.key"
	if launch_acme --root "$T/root" --server-name e.ktlsd.test --acme on --acme-dir "$T/acme-e" \
		--listen-plain "127.0.0.1:$PLAIN_PORT" --acme-eab "kid-1 $T/eab.key"; then
		wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
		wait_until 10 grep -q "acme: certificates reloaded" "$KTLSD_LOG"
		expect_eq "with --acme-eab: issued" "$(verified e.ktlsd.test)" "served over ACME"
		stop_ktlsd
	fi
else
	fail "pebble starts with EAB" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
fi

# ---- 9. renewal during a download, with bad nonces; nothing grows ----------
stop_pebble
if start_pebble 16 20; then
	R=$T/acme-r
	# ASan's quarantine (256 MiB) keeps what is freed to catch uses after
	# free, memory that grows with every free and is not the program's:
	# off for this one server, as in t_reload_growth.sh (the leak check at
	# exit runs as always).
	asan_saved=${ASAN_OPTIONS-}
	if ldd "$KTLSD" 2>/dev/null | grep -q libasan; then
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
	fi
	if launch_acme --root "$FIX/root" --server-name r.ktlsd.test --acme on --acme-dir "$R" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		wait_until 60 grep -q "certificate issued" "$KTLSD_LOG"
		wait_until 10 grep -q "certificates reloaded" "$KTLSD_LOG"
		S1=$(served_serial r.ktlsd.test)
		# 32 MiB at 2 MiB/s: 16 s, across the renewal at about 8 s.
		curl -sSk --max-time 90 --http1.1 --limit-rate 2M -o "$T/spanning.b" \
			--resolve "r.ktlsd.test:$TLS_PORT:127.0.0.1" "https://r.ktlsd.test:$TLS_PORT/big.bin" &
		dl=$!
		wait_until 40 grep -q "certificate renewed" "$KTLSD_LOG"
		wait_until 10 sh -c "[ \$(grep -c 'certificates reloaded' '$KTLSD_LOG') -ge 2 ]"
		expect_new_serial "renewal: a new serial is served" r.ktlsd.test "$S1"
		check "... and it verifies" sh -c "curl -sS --max-time 20 --cacert '$PEBBLE_ROOT' --resolve r.ktlsd.test:$TLS_PORT:127.0.0.1 https://r.ktlsd.test:$TLS_PORT/ -o /dev/null"
		wait "$dl"
		expect_eq "the download spanning the renewal completes" "$?" 0
		expect_eq "... byte-identical" "$(sha "$T/spanning.b")" "$(sha "$FIX/root/big.bin")"
		# Three renewals more, no connection open: every server built
		# for one went with its connections.
		fds1=$(ls "/proc/$KTLSD_PID/fd" | wc -l)
		rss1=$(awk '/VmRSS/ {print $2}' "/proc/$KTLSD_PID/status")
		r=$(grep -c 'certificates reloaded' "$KTLSD_LOG")
		wait_until 90 sh -c "[ \$(grep -c 'certificates reloaded' '$KTLSD_LOG') -ge $((r + 3)) ]"
		sleep 0.5
		fds4=$(ls "/proc/$KTLSD_PID/fd" | wc -l)
		rss4=$(awk '/VmRSS/ {print $2}' "/proc/$KTLSD_PID/status")
		check "three renewals more: no more open fds than before them ($fds1 -> $fds4)" \
			[ "$fds4" -le "$fds1" ]
		check "... resident memory within 4 MiB of it ($rss1 -> $rss4 KiB)" \
			[ "$rss4" -le $((rss1 + 4096)) ]
		# Five orders make some 45 POSTs, a fifth of whose nonces pebble
		# refuses by math/rand, which Debian's Go 1.19 build never seeds:
		# the draws repeat with the sequence of calls, so a run may meet
		# no refusal at all. Then this check did not run.
		if grep -q "badNonce; again" "$KTLSD_LOG"; then
			pass "five orders: the CA refused some nonces, each tried again, every order issued"
		else
			skip "five orders: bad nonces tried again" \
				"pebble refused no nonce in $(grep -c 'POST' "$PEBBLE_LOG") POSTs this run"
		fi
		stop_ktlsd
	fi
	export ASAN_OPTIONS=$asan_saved
else
	fail "pebble starts for renewals" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
fi
# ---- 10. certbot --webroot, as README's "Certificates" says -----------------
# First a plain-HTTP-only start (no certificate yet), certbot's HTTP-01
# files answered from the root with dotfiles off; then the TLS listener with
# certbot's live/ links; a renewal's deploy hook reloads with the new one.
stop_pebble
if ! command -v certbot >/dev/null; then
	skip "certbot --webroot" "certbot is not installed (scripts/install-deps installs it)"
elif start_pebble 3600 0; then
	CB=$T/certbot
	mkdir -p "$CB/root"
	echo "served by certbot's certificate" >"$CB/root/index.html"
	cb() {
		REQUESTS_CA_BUNDLE=$P/wfe-ca.pem timeout 120 certbot "$@" --non-interactive \
			--config-dir "$CB/etc" --work-dir "$CB/work" --logs-dir "$CB/logs" \
			>>"$CB/certbot.out" 2>&1
	}
	PORT=$PLAIN_PORT
	if launch --listen-plain "127.0.0.1:$PLAIN_PORT" --root "$CB/root" \
		--server-name c.ktlsd.test --dotfiles off; then
		check "certbot certonly --webroot: issued through ktlsd's plain listener" \
			cb certonly --webroot -w "$CB/root" -d c.ktlsd.test --server "$DIR_URL" \
			--agree-tos --register-unsafely-without-email --http-01-port "$PLAIN_PORT"
		stop_ktlsd
	fi
	LIVE=$CB/etc/live/c.ktlsd.test
	PORT=$TLS_PORT
	if [ -L "$LIVE/fullchain.pem" ] && launch --listen "127.0.0.1:$TLS_PORT" --root "$CB/root" \
		--server-name c.ktlsd.test --cert "$LIVE/fullchain.pem" --key "$LIVE/privkey.pem" \
		--listen-plain "127.0.0.1:$PLAIN_PORT"; then
		expect_eq "ktlsd serves certbot's live/ links, verified" \
			"$(verified c.ktlsd.test)" "served by certbot's certificate"
		S1=$(served_serial c.ktlsd.test)
		check "certbot renew: its deploy hook reloads ktlsd" \
			cb renew --force-renewal --no-random-sleep-on-renew --deploy-hook "kill -HUP $KTLSD_PID"
		wait_until 10 sh -c "grep -q 'SIGHUP: configuration and certificates reloaded' '$KTLSD_LOG'"
		expect_new_serial "... and the renewed certificate is served" c.ktlsd.test "$S1" \
			"$LIVE/cert.pem"
		stop_ktlsd
	else
		fail "ktlsd with certbot's certificate" "$(tail -n 3 "$CB/certbot.out" "$KTLSD_LOG" | tr '\n' ' ')"
	fi
else
	fail "pebble starts for certbot" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
fi
# ---- 11. ARI (RFC 9773): the CA's renewal window decides ---------------------
# pebble 2.4.0 has no renewalInfo: ari_proxy.py, in front of it, adds one
# and answers it from $ARI/windows. A window a day ahead: no order; the
# certificate's own window moved into the past and a SIGHUP: renewed at
# once, the new order saying which certificate it replaces. The proxy's
# directory lists profiles too: --acme-profile's name goes in the order, or
# one it does not list orders nothing. Certificates of
# 7 days: a window must end before a fifth of the life is left, or ktlsd
# renews before it (a CA's late window never lets one run out).
stop_pebble
# ari_id_of FILE: RFC 9773's identifier of the certificate in FILE, made
# from openssl's own view of it (the serial's DER keeps a leading zero
# byte when its top bit is set).
ari_id_of() {
	local aki ser
	aki=$(openssl x509 -in "$1" -noout -ext authorityKeyIdentifier |
		sed -n 's/^ *\(keyid:\)\{0,1\}\([0-9A-Fa-f:]\{2,\}\)$/\2/p' | tr -d ':')
	ser=$(openssl x509 -in "$1" -noout -serial | sed 's/^serial=//')
	[ $((${#ser} % 2)) = 1 ] && ser=0$ser
	case $ser in [89A-Fa-f]*) ser=00$ser ;; esac
	python3 -c 'import base64, sys
print(".".join(base64.urlsafe_b64encode(bytes.fromhex(h)).decode().rstrip("=") for h in sys.argv[1:]))' \
		"$aki" "$ser"
}
if start_pebble 604800 0; then
	ARI=$T/ari
	ARI_PORT=$(freeport)
	mkdir -p "$ARI"
	now=$(date +%s)
	echo "* $((now + 86400)) $((now + 2 * 86400))" >"$ARI/windows"
	python3 "$(dirname "${BASH_SOURCE[0]}")/ari_proxy.py" "$ARI_PORT" "$ACME_PORT" \
		"$P/wfe.pem" "$P/wfe.key" "$ARI/windows" "$ARI/log" >"$ARI/proxy.out" 2>&1 &
	ARI_PID=$!
	wait_until 20 port_open "$ARI_PORT"
	dir_saved=$DIR_URL
	DIR_URL=https://127.0.0.1:$ARI_PORT/dir
	if launch_acme --root "$T/root" --server-name i.ktlsd.test --acme on --acme-dir "$ARI/acme" \
		--listen-plain "127.0.0.1:$PLAIN_PORT" --acme-profile shortlived; then
		wait_until 60 grep -q "the CA's renewal window is" "$KTLSD_LOG"
		id1=$(ari_id_of "$ARI/acme/sites/_top/cert.pem")
		check "ari: the issued certificate's window is asked for by its identifier ($id1)" \
			grep -qx "ari $id1" "$ARI/log"
		at=$(sed -n "s/.*acme: site _top: the CA's renewal window is .*; renewal at \([0-9TZ:-]*\)$/\1/p" \
			"$KTLSD_LOG" | head -n 1)
		at_s=$(date -u -d "$at" +%s 2>/dev/null || echo 0)
		check "... a window a day ahead: the log names it, and a renewal time in it ($at)" \
			[ "$at_s" -ge $((now + 86400)) -a "$at_s" -le $((now + 2 * 86400)) ]
		check "... the first order replaced nothing, and asked for --acme-profile's profile" \
			sh -c "grep '^order ' '$ARI/log' | head -n 1 | grep -v replaces | grep -q '\"profile\":\"shortlived\"'"
		sleep 1
		expect_eq "... and no second order" "$(grep -c '^order ' "$ARI/log")" 1
		wait_until 10 grep -q "acme: certificates reloaded" "$KTLSD_LOG"
		S1=$(served_serial i.ktlsd.test)
		echo "$id1 $((now - 7200)) $((now - 3600))" >>"$ARI/windows"
		kill -HUP "$KTLSD_PID"
		wait_until 60 grep -q "certificate renewed" "$KTLSD_LOG"
		check "ari: its window moved into the past, a SIGHUP: the certificate is renewed" \
			grep -q "acme: site _top (i.ktlsd.test): certificate renewed" "$KTLSD_LOG"
		check "... the order says which one it replaces (\"replaces\": \"$id1\")" \
			grep -Eq "^order .*\"replaces\": ?\"$id1\"" "$ARI/log"
		wait_until 10 sh -c "[ \"\$(grep -c 'acme: certificates reloaded' '$KTLSD_LOG')\" -ge 2 ]"
		expect_new_serial "... and the new certificate is served" i.ktlsd.test "$S1" \
			"$ARI/acme/sites/_top/cert.pem"
		id2=$(ari_id_of "$ARI/acme/sites/_top/cert.pem")
		# The proxy logs the request before it answers: the third window
		# line is ktlsd's, once it has read the answer.
		wait_until 20 sh -c "[ \$(grep -c \"the CA's renewal window is\" '$KTLSD_LOG') -ge 3 ]"
		sleep 1
		check "... whose own window (a day ahead) is asked for, with no third order" \
			sh -c "grep -qx 'ari $id2' '$ARI/log' && [ \$(grep -c '^order ' '$ARI/log') = 2 ]"
		stop_ktlsd
	else
		fail "ktlsd starts for ARI" "$(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	fi
	if launch_acme --root "$T/root" --server-name j.ktlsd.test --acme on --acme-dir "$ARI/acme-j" \
		--listen-plain "127.0.0.1:$PLAIN_PORT" --acme-profile nosuch; then
		wait_until 30 grep -q "acme-profile nosuch" "$KTLSD_LOG"
		check "--acme-profile the CA does not list: the log gives the CA's list, no retry" \
			grep -q "acme-profile nosuch: .* lists no profile of that name; it lists: classic, shortlived; no new attempt before a SIGHUP" "$KTLSD_LOG"
		expect_eq "... and ordered nothing" "$(grep -c '^order .*j.ktlsd.test' "$ARI/log")" 0
		stop_ktlsd
	else
		fail "ktlsd starts with --acme-profile nosuch" "$(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	fi
	DIR_URL=$dir_saved
	kill "$ARI_PID" 2>/dev/null
	ARI_PID=
else
	fail "pebble starts for ARI" "$(tail -n 3 "$PEBBLE_LOG" | tr '\n' ' ')"
fi
stop_all
trap - EXIT TERM
