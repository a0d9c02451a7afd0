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

# --user: bind a privileged port as root, then run as nobody.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	PORT=$(( 600 + RANDOM % 300 ))
	if launch --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" \
		--key "$FIX/ec.key" --workers 1 --user nobody; then
		expect_eq "--user: the process runs as nobody" \
			"$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$KTLSD_PID/status")" \
			"$(id -u nobody) $(id -u nobody) $(id -u nobody) $(id -u nobody)"
		code=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' \
			"https://127.0.0.1:$PORT/index.html")
		check "--user: still answering on the privileged port ($code)" test "$code" != 000
		stop_ktlsd
	fi
	check "--user with an unknown user refuses to start" \
		sh -c '! "$1" --root "$2" --listen 127.0.0.1:0 --cert "$3" --key "$4" --user no-such-user-x 2>/dev/null' \
		sh "$KTLSD" "$FIX/root" "$FIX/ec.pem" "$FIX/ec.key"
else
	pass "--user: needs root; skipped"
fi
