# shellcheck shell=bash
# The command line and the config file: --help, --version, errors (one line
# naming the key, exit 2), and a server configured only by a file.

# cli ARGS...: run ktlsd for at most 5 s (a server that wrongly starts is
# stopped by timeout and shows up as exit 124); stdout in $T/out, stderr in
# $T/err, exit code in CLI_RC.
cli() {
	timeout 5 "$KTLSD" "$@" >"$T/out" 2>"$T/err" </dev/null
	CLI_RC=$?
}

# expect_usage_error NAME KEY ARGS...: ktlsd ARGS exits 2 with exactly one
# line on stderr, and that line names KEY.
expect_usage_error() {
	local name=$1 key=$2
	shift 2
	cli "$@"
	expect_eq "$name: exit code" "$CLI_RC" 2
	expect_eq "$name: one line on stderr" "$(grep -c '' "$T/err")" 1
	expect_match "$name: stderr names '$key'" "$(cat "$T/err")" "$key"
}

PORT=$(freeport)
good=(--root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key")

cli --help
expect_eq "--help exits 0" "$CLI_RC" 0
missing=
for flag in --root --listen --cert --key --workers --config --listen-plain --help --version \
	--tls-protocols --tls13-ciphersuites --tls12-ciphers --tls-prefer-server-ciphers \
	--tls-session-tickets \
	--tls-session-cache --max-header-size --max-headers --max-uri --handshake-timeout \
	--header-timeout --idle-timeout --send-timeout --shutdown-grace --dotfiles \
	--mime-types --access-log --error-log --log-level --ktls --sendfile; do
	grep -qE -- "$flag([^a-z0-9-]|\$)" "$T/out" || missing="$missing $flag"
done
expect_eq "--help (stdout) lists every flag" "${missing# }" ""

cli --version
expect_eq "--version exits 0" "$CLI_RC" 0
expect_match "--version prints name and version" "$(cat "$T/out")" 'ktlsd.*[0-9]+\.[0-9]+'

expect_usage_error "unknown flag" "no-such-flag" "${good[@]}" --no-such-flag
expect_usage_error "flag without its value" "workers" "${good[@]}" --workers
expect_usage_error "--workers abc" "workers" "${good[@]}" --workers abc
expect_usage_error "--dotfiles maybe" "dotfiles" "${good[@]}" --dotfiles maybe
expect_usage_error "--ktls sometimes" "ktls" "${good[@]}" --ktls sometimes
expect_usage_error "--log-level loud" "log-level" "${good[@]}" --log-level loud
expect_usage_error "--max-uri -1" "max-uri" "${good[@]}" --max-uri -1
expect_usage_error "--idle-timeout soon" "idle-timeout" "${good[@]}" --idle-timeout soon
expect_usage_error "--tls-session-tickets perhaps" "tls-session-tickets" "${good[@]}" --tls-session-tickets perhaps
expect_usage_error "--listen nonsense" "listen" "${good[@]}" --listen not-an-address
expect_usage_error "--tls-protocols TLSv9" "tls-protocols" "${good[@]}" --tls-protocols TLSv9
expect_usage_error "no --root" "root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
expect_usage_error "--root that does not exist" "root" --root "$T/no-such-dir" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"

# Certificate problems: the file and the reason, in words, never OpenSSL's
# "error:0A080002:SSL routines::system lib"; exit 2 (the configuration
# cannot work).
echo "not a certificate" >"$T/junk.pem"
mkdir -p "$T/a-dir.pem"
cert_error() { # NAME ERE CERT KEY
	cli --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$3" --key "$4"
	expect_eq "$1: exit code" "$CLI_RC" 2
	expect_match "$1: says which file and why" "$(cat "$T/err")" "$2"
	check "$1: no OpenSSL error codes" sh -c '! grep -q "error:[0-9A-F]\{8\}" "$1"' sh "$T/err"
}
cert_error "missing key" "key $T/no-such\.key: No such file or directory" "$FIX/ec.pem" "$T/no-such.key"
cert_error "missing cert" "cert $T/no-such\.pem: No such file or directory" "$T/no-such.pem" "$FIX/ec.key"
cert_error "cert that is a folder" "cert $T/a-dir\.pem: not a regular file" "$T/a-dir.pem" "$FIX/ec.key"
cert_error "cert that is not PEM" "cert $T/junk\.pem: no PEM certificate in it" "$T/junk.pem" "$FIX/ec.key"
cert_error "key that is not PEM" "key $T/junk\.pem: no PEM private key in it" "$FIX/ec.pem" "$T/junk.pem"
cert_error "key of another certificate" "key $FIX/rsa\.key does not match cert $FIX/ec\.pem" \
	"$FIX/ec.pem" "$FIX/rsa.key"

# A config file alone (same keys as the flags) starts a working server.
PORT=$(freeport)
cat >"$T/good.conf" <<EOF
# ktlsd test configuration
root $FIX/root
listen 127.0.0.1:$PORT
cert $FIX/ec.pem
key $FIX/ec.key
cert $FIX/rsa.pem
key $FIX/rsa.key
workers 2
dotfiles on
EOF
if launch --config "$T/good.conf"; then
	pass "server starts from a config file"
	fetch cfg_index /
	expect_eq "config-file server serves /" "$STATUS" 200
	check "config-file server serves index.html" grep -q KTLSD-INDEX-PAGE "$T/cfg_index.b"
	fetch cfg_dot /.secret
	expect_eq "config key 'dotfiles on' takes effect" "$STATUS" 200
	stop_ktlsd
else
	fail "server starts from a config file" "exited at start: $(head -c 300 "$KTLSD_LOG")"
fi

# Flags given on the command line override the file.
if launch --config "$T/good.conf" --dotfiles off; then
	fetch cfg_override /.secret
	expect_eq "flag overrides config key (dotfiles off)" "$STATUS" 404
	stop_ktlsd
else
	fail "flag overrides config key" "exited at start: $(head -c 300 "$KTLSD_LOG")"
fi

printf 'root %s\nno-such-key 1\n' "$FIX/root" >"$T/badkey.conf"
expect_usage_error "config: unknown key" "no-such-key" --config "$T/badkey.conf" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
printf 'root %s\nworkers many\n' "$FIX/root" >"$T/badval.conf"
expect_usage_error "config: bad value" "workers" --config "$T/badval.conf" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
expect_usage_error "config file that does not exist" "config|no-such\.conf" --config "$T/no-such.conf" \
	"${good[@]}"

# --check: what this machine offers, without --root, exit 0. The kernel
# line must agree with /proc (this is the host: kTLS may or may not exist).
"$KTLSD" --check --sendfile off >"$T/check.out" 2>&1
expect_eq "--check exits 0 without --root" "$?" 0
if grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null; then
	check "--check: kernel TLS yes (the tls ULP is loaded)" grep -q '^kernel TLS: yes' "$T/check.out"
else
	check "--check: kernel TLS line present" grep -qE '^kernel TLS: (yes|no)' "$T/check.out"
fi
check "--check: TLS 1.2 and 1.3 offload lines for the three ciphers" \
	sh -c 'grep -c "AES-128-GCM=.* AES-256-GCM=.* CHACHA20-POLY1305=" "$1" | grep -qx 2' sh "$T/check.out"
check "--check: OpenSSL and its kTLS support" grep -q '^OpenSSL: .*kTLS support compiled in: yes' "$T/check.out"
check "--check: io_uring opcodes" grep -qE '^io_uring: read=yes .*splice=' "$T/check.out"
check "--check: the path under the given flags (--sendfile off: copy)" \
	grep -q '^  plain HTTP: body=copy' "$T/check.out"
"$KTLSD" --check --ktls off >"$T/check2.out" 2>&1
check "--check --ktls off: HTTPS through user-space TLS" \
	grep -q '^  HTTPS: ktls=off body=copy' "$T/check2.out"
