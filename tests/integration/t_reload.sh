# shellcheck shell=bash
# Operations that must not lose work: SIGHUP reloads certificates and the
# configuration while a download spans the reload; --user drops root.

# Certificates under names the config file points at, so that "replace the
# files, send SIGHUP" is the operator's whole reload procedure.
mkdir -p "$T/reload"
for n in one two; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-keyout "$T/reload/$n.key" -out "$T/reload/$n.pem" -subj "/CN=reload-$n" \
		-addext "subjectAltName=DNS:localhost" 2>/dev/null
done
cp "$T/reload/one.pem" "$T/reload/cur.pem"
cp "$T/reload/one.key" "$T/reload/cur.key"
PORT=$(freeport)
cat >"$T/reload/ktlsd.conf" <<CONF
root $FIX/root
listen 127.0.0.1:$PORT
cert $T/reload/cur.pem
key $T/reload/cur.key
workers 2
CONF

subject() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
		2>/dev/null | sed -n 's/^subject=.*CN *= *//p'
}

if launch --config "$T/reload/ktlsd.conf"; then
	expect_eq "before SIGHUP: the first certificate" "$(subject)" "reload-one"

	# A download that spans the reload (32 MiB at 8 MiB/s: about 4 s).
	curl -sSk --max-time 60 --http1.1 --limit-rate 8M -o "$T/reload/spanning.b" \
		"https://localhost:$PORT/big.bin" --resolve "localhost:$PORT:127.0.0.1" &
	dl=$!
	sleep 1
	cp "$T/reload/two.pem" "$T/reload/cur.pem"
	cp "$T/reload/two.key" "$T/reload/cur.key"
	kill -HUP "$KTLSD_PID"
	wait_until 10 grep -q "reloaded" "$KTLSD_LOG"
	check "SIGHUP is logged as a reload" grep -q "reloaded" "$KTLSD_LOG"
	expect_eq "after SIGHUP: new connections get the new certificate" "$(subject)" "reload-two"
	check "the server is still running after SIGHUP" kill -0 "$KTLSD_PID"
	wait "$dl"
	expect_eq "a download spanning the reload completes" "$?" 0
	expect_eq "... byte-identical" "$(sha256sum <"$T/reload/spanning.b" | cut -d' ' -f1)" \
		"$(sha256sum <"$FIX/root/big.bin" | cut -d' ' -f1)"

	# A broken certificate on reload: one error, and the old one stays.
	echo "not a certificate" >"$T/reload/cur.pem"
	kill -HUP "$KTLSD_PID"
	wait_until 10 grep -q "keeping the running" "$KTLSD_LOG"
	check "a bad certificate on SIGHUP is refused with an error" \
		grep -q "keeping the running" "$KTLSD_LOG"
	expect_eq "... and the running certificate stays" "$(subject)" "reload-two"
	stop_ktlsd
fi

# What a SIGHUP may change, and what it may not. Listeners are bound once at
# start (and root may be gone by the time of a reload), so a reload that
# changes them, or anything else fixed at start (workers, user, pid-file,
# error-log, access-log), is refused as a whole with one error line, and the
# running configuration keeps serving. Everything else is applied.
mkdir -p "$T/reload/root2"
echo ROOT-TWO >"$T/reload/root2/which.txt"
PORT=$(freeport)
PPORT=$(freeport)
ops_conf=(
	"root $FIX/root"
	"listen 127.0.0.1:$PORT"
	"listen-plain 127.0.0.1:$PPORT"
	"cert $FIX/ec.pem"
	"key $FIX/ec.key"
	"workers 2"
)

# tls_status PATH / plain_status PATH: the status of a GET on each listener
# (000: no answer).
tls_status() {
	curl -sk --max-time 10 --http1.1 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT$1"
}
plain_status() {
	curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPORT$1"
}

# hup SKIP-RE LINE...: rewrite the config file as ops_conf without the lines
# matching SKIP-RE ('^$' keeps them all), plus LINE..., then SIGHUP. Waits
# for the reload's outcome and sets HUP_LOG to every line the server logged
# since (one per line, "|"-joined).
hup() {
	local skip=$1 start
	shift
	{ printf '%s\n' "${ops_conf[@]}" | grep -Ev -- "$skip"; printf '%s\n' "$@"; } >"$T/reload/ops.conf"
	start=$(($(grep -c '' "$KTLSD_LOG") + 1))
	kill -HUP "$KTLSD_PID"
	wait_until 10 sh -c 'tail -n +"$2" "$1" | grep -q SIGHUP' sh "$KTLSD_LOG" "$start"
	sleep 0.3 # a worker's own complaint would come just after
	HUP_LOG=$(tail -n +"$start" "$KTLSD_LOG" | tr '\n' '|')
}

# expect_refused NAME ERE: the last reload logged exactly one line, an error
# matching ERE that says the running configuration stays; both listeners
# still serve and the server runs.
expect_refused() {
	expect_match "$1: one error line" "$HUP_LOG" \
		"^[^|]*\\[error\\] SIGHUP: [^|]*$2[^|]*; keeping the running configuration\\|\$"
	expect_eq "$1: HTTPS still served" "$(tls_status /a.txt)" 200
	expect_eq "$1: plain HTTP still served" "$(plain_status /a.txt)" 200
	check "$1: the server still runs" kill -0 "$KTLSD_PID"
	kill -0 "$KTLSD_PID" 2>/dev/null
}

# expect_kept NAME ERE: the last reload applied, but for one setting fixed
# at start: one warning line matching ERE saying what stays until a
# restart, then the reload's line saying so; both listeners still serve.
expect_kept() {
	expect_match "$1: a warning says what stays, then the reload" "$HUP_LOG" \
		"^[^|]*\\[warn\\] SIGHUP: $2 until a restart \\(the configuration says [^|]*\\)\\|[^|]*\\[info\\] SIGHUP: configuration and certificates reloaded, but for the 1 setting above\\|\$"
	expect_eq "$1: HTTPS still served" "$(tls_status /a.txt)" 200
	expect_eq "$1: plain HTTP still served" "$(plain_status /a.txt)" 200
	check "$1: the server still runs" kill -0 "$KTLSD_PID"
	kill -0 "$KTLSD_PID" 2>/dev/null
}

# ops_checks: the reloads above, in turn; stops at the first that kills the
# server (each later check would only repeat that failure).
ops_checks() {
	hup '^listen 127'
	expect_kept "listen removed (listen-plain kept)" \
		"--listen stays 127\\.0\\.0\\.1:$PORT" || return
	# A second client, on a fresh connection to each worker's socket.
	expect_eq "listen removed: HTTPS still served, again" "$(tls_status /b.txt)" 200

	NPORT=$(freeport)
	hup '^listen-plain' "listen-plain 127.0.0.1:$NPORT"
	expect_kept "listen-plain moved to another port" \
		"--listen-plain stays 127\\.0\\.0\\.1:$PPORT" || return
	hup '^listen 127' "listen 127.0.0.2:$PORT"
	expect_kept "listen moved to another address" \
		"--listen stays 127\\.0\\.0\\.1:$PORT" || return
	hup '^workers' "workers 3"
	expect_kept "workers 2 -> 3" "--workers stays 2" || return
	hup '^$' "user nobody"
	expect_kept "user set" "--user stays none" || return
	hup '^$' "pid-file $T/reload/new.pid"
	expect_kept "pid-file set" "--pid-file stays none" || return
	check "pid-file set: no pid file written by a reload" test ! -e "$T/reload/new.pid"
	hup '^$' "error-log $T/reload/new-error.log"
	expect_kept "error-log moved" "--error-log stays stderr" || return
	hup '^$' "access-log $T/reload/new-access.log"
	expect_kept "access-log set" "--access-log stays off" || return
	# What a reload can apply applies even beside what it cannot: a
	# certificate renewed in the same reload as a --workers change.
	cp "$T/reload/two.pem" "$T/reload/ops-cert.pem"
	cp "$T/reload/two.key" "$T/reload/ops-cert.key"
	hup '^(cert|key|workers) ' "cert $T/reload/ops-cert.pem" "key $T/reload/ops-cert.key" "workers 4"
	expect_kept "certificate renewed with workers 2 -> 4" "--workers stays 2" || return
	expect_eq "... the new certificate is served" "$(subject)" "reload-two"
	hup '^(cert|key) '
	expect_refused "certificates removed, TLS listener kept" \
		"a TLS listener needs at least one certificate" || return
	hup '^root' "root $T/reload/no-such-root"
	expect_refused "root that does not exist" "--root $T/reload/no-such-root: No such file" || return
	if grep -q "kernel TLS unavailable" "$KTLSD_LOG"; then
		hup '^$' "ktls on"
		expect_refused "ktls on, on a kernel without kTLS" "--ktls on: " || return
	fi

	# What may change is applied, to new connections.
	hup '^root' "root $T/reload/root2" "h2 off" "max-connections 5"
	expect_match "root, h2, max-connections changed: reloaded" "$HUP_LOG" \
		'^[^|]*SIGHUP: configuration and certificates reloaded\|$'
	expect_eq "... the new root is served" \
		"$(curl -sk --max-time 10 "https://127.0.0.1:$PORT/which.txt")" ROOT-TWO
	expect_eq "... h2 off: ALPN no longer offers h2" \
		"$(curl -sk --max-time 10 --http2 -o /dev/null -w '%{http_version}' "https://127.0.0.1:$PORT/which.txt")" 1.1
}

printf '%s\n' "${ops_conf[@]}" >"$T/reload/ops.conf"
if launch --config "$T/reload/ops.conf"; then
	ops_checks
	stop_ktlsd
fi

# --user: bind a privileged port as root, then run as nobody.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	PORT=$(( 600 + RANDOM % 300 ))
	if launch --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" \
		--key "$FIX/ec.key" --workers 1 --user nobody; then
		# The port opens before the drop (the listeners are made as
		# root, main.c); the workers start after it. An answer shows
		# the drop is done: reading the uid before one raced it (an
		# ASan build on a busy machine saw '0 0 0 0').
		code=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' \
			"https://127.0.0.1:$PORT/index.html")
		check "--user: still answering on the privileged port ($code)" test "$code" != 000
		expect_eq "--user: the process runs as nobody" \
			"$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$KTLSD_PID/status")" \
			"$(id -u nobody) $(id -u nobody) $(id -u nobody) $(id -u nobody)"
		stop_ktlsd
	fi

	# A root-only key (0600 root in a 0700 root folder, as packages and
	# certbot leave them), with the config file beside it: after --user, a
	# SIGHUP still reads them all, through the privileged helper, while
	# the server keeps no capability (t_privs.sh looks at every thread).
	# Reload errors, with their reason, go to the error log.
	priv=$T/reload/private
	mkdir -p "$priv"
	cp "$T/reload/one.pem" "$priv/cur.pem"
	cp "$T/reload/one.key" "$priv/cur.key"
	chown root:root "$priv" "$priv/cur.key"
	chmod 0600 "$priv/cur.key"
	chmod 0700 "$priv"
	PORT=$(( 600 + RANDOM % 300 ))
	user_conf=(
		"root $FIX/root"
		"listen 127.0.0.1:$PORT"
		"cert $priv/cur.pem"
		"key $priv/cur.key"
		"workers 2"
		"user nobody"
		"error-log $priv/error.log"
	)
	printf '%s\n' "${user_conf[@]}" >"$priv/ktlsd.conf"
	if launch --config "$priv/ktlsd.conf"; then
		expect_eq "--user, root-only key: the first certificate" "$(subject)" "reload-one"
		cp "$T/reload/two.pem" "$priv/cur.pem"
		cp "$T/reload/two.key" "$priv/cur.key"
		kill -HUP "$KTLSD_PID"
		wait_until 30 grep -q "SIGHUP: configuration and certificates reloaded" "$priv/error.log"
		check "--user, root-only key: SIGHUP reloads" grep -q "SIGHUP: configuration and certificates reloaded" "$priv/error.log"
		expect_eq "--user, root-only key: new connections get the new certificate" "$(subject)" "reload-two"
		expect_eq "--user, root-only key: the key is still 0600 root" "$(stat -c '%a %U' "$priv/cur.key")" "600 root"
		# /proc/PID/status: CapPrm, CapEff as hex masks.
		caps_of() { awk '/^Cap(Prm|Eff):/ {printf "%s ", $2}' "$1/status"; }
		expect_match "--user, after the reload: no thread of the server holds a capability" \
			"$(for t in /proc/"$KTLSD_PID"/task/*; do caps_of "$t"; done)" '^(0{16} ){4,}$'
		printf '%s\n' "${user_conf[@]}" "idle-timeout many" >"$priv/ktlsd.conf"
		kill -HUP "$KTLSD_PID"
		wait_until 30 grep -qE "SIGHUP: .*idle-timeout.*many.*; keeping the running configuration" "$priv/error.log"
		check "--user: why a reload failed is in the error log" \
			grep -qE "SIGHUP: .*idle-timeout.*many.*; keeping the running configuration" "$priv/error.log"
		expect_eq "--user: ... and the running certificate stays" "$(subject)" "reload-two"
		stop_ktlsd
	fi
	check "--user with an unknown user refuses to start" \
		sh -c '! "$1" --root "$2" --listen 127.0.0.1:0 --cert "$3" --key "$4" --user no-such-user-x 2>/dev/null' \
		sh "$KTLSD" "$FIX/root" "$FIX/ec.pem" "$FIX/ec.key"
else
	skip "--user" "needs root"
fi
