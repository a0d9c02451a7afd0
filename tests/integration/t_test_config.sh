# shellcheck shell=bash
# ktlsd --test-config loads a configuration as a start would (file, root,
# certificates and keys, listeners' syntax, --user, logs) without binding or
# serving, and says "configuration ok" or names the first problem in one
# line with a non-zero exit. --check does the same after its machine report
# when it is given a root.

# tc ARGS...: ktlsd ARGS, at most 10 s; stdout in $T/out, stderr in $T/err,
# exit code in TC_RC.
tc() {
	timeout 10 "$KTLSD" "$@" >"$T/out" 2>"$T/err" </dev/null
	TC_RC=$?
}

# expect_problem NAME WORD ARGS...: ktlsd ARGS exits non-zero (not by
# timeout) with one line on stderr naming WORD, and no "configuration ok".
expect_problem() {
	local name=$1 word=$2
	shift 2
	tc "$@"
	expect_in "$name: exits non-zero" "$TC_RC" 1 2
	expect_eq "$name: one line on stderr" "$(grep -c '' "$T/err")" 1
	expect_match "$name: the line names '$word'" "$(cat "$T/err")" "$word"
	check "$name: no 'configuration ok'" sh -c '! grep -q "configuration ok" "$1"' sh "$T/out"
}

PORT=$(freeport)
good=(--root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
	--cert "$FIX/rsa.pem" --key "$FIX/rsa.key")

tc --test-config "${good[@]}"
expect_eq "a good configuration: exit 0" "$TC_RC" 0
expect_match "... says configuration ok" "$(cat "$T/out")" '^ktlsd: configuration ok'
expect_eq "... and nothing on stderr" "$(cat "$T/err")" ""
check "... and binds nothing" sh -c '! ss -Hltn "sport = :$1" | grep -q .' sh "$PORT"

# The same from a config file, with logs it can open and a plain listener.
cat >"$T/good.conf" <<CONF
root $FIX/root
listen 127.0.0.1:$PORT
listen-plain 127.0.0.1:$(freeport)
cert $FIX/ec.pem
key $FIX/ec.key
access-log $T/access.log
error-log $T/error.log
CONF
tc --test-config --config "$T/good.conf"
expect_eq "a good config file: exit 0" "$TC_RC" 0
expect_match "... counts what it loaded" "$(cat "$T/out")" 'listeners: 1 HTTPS, 1 plain HTTP; certificates: 1'

# It does not bind: a port a running server holds is no problem.
if start_ktlsd; then
	tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
	expect_eq "the port of a running server: still ok (nothing is bound)" "$TC_RC" 0
	fetch running /
	expect_eq "... and the running server still serves" "$STATUS" 200
	stop_ktlsd
fi

echo "not a certificate" >"$T/bad.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
	-keyout "$T/other.key" -out "$T/other.pem" -subj /CN=other 2>/dev/null
: >"$T/a-file"

expect_problem "root missing" "--root" --test-config --root "$T/no-such-dir" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
expect_problem "root is a file" "--root" --test-config --root "$T/a-file" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
expect_problem "certificate that is not one" "bad.pem" --test-config --root "$FIX/root" \
	--listen "127.0.0.1:$PORT" --cert "$T/bad.pem" --key "$FIX/ec.key"
expect_problem "certificate missing" "no-such.pem" --test-config --root "$FIX/root" \
	--listen "127.0.0.1:$PORT" --cert "$T/no-such.pem" --key "$FIX/ec.key"
expect_problem "key of another certificate" "other.key" --test-config --root "$FIX/root" \
	--listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$T/other.key"
expect_problem "the second pair broken" "no-such.key" --test-config "${good[@]}" \
	--cert "$FIX/ec.pem" --key "$FIX/ec.key" --cert "$FIX/rsa.pem" --key "$T/no-such.key"
expect_problem "HTTPS listener without a certificate" "cert" --test-config --root "$FIX/root" \
	--listen "127.0.0.1:$PORT"
expect_problem "listener syntax" "listen" --test-config "${good[@]}" --listen 127.0.0.1:99999
printf 'no-such-key 1\n' >"$T/badkey.conf"
expect_problem "unknown key in the file" "no-such-key" --test-config --config "$T/badkey.conf" \
	"${good[@]}"
expect_problem "--user that does not exist" "no-such-user-ktlsd" --test-config "${good[@]}" \
	--user no-such-user-ktlsd
expect_problem "access log it cannot open" "access-log" --test-config "${good[@]}" \
	--access-log "$T/no-such-dir/access.log"
expect_problem "error log it cannot open" "error-log" --test-config "${good[@]}" \
	--error-log "$T/no-such-dir/error.log"
# The exit codes are a start's: the same configurations, started.
for bad in "--error-log $T/no-such-dir/error.log" "--cert $T/bad.pem --key $FIX/ec.key" \
	"--user no-such-user-ktlsd"; do
	# shellcheck disable=SC2086 # bad is two words on purpose
	tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" \
		--key "$FIX/ec.key" $bad
	want=$TC_RC
	# shellcheck disable=SC2086
	tc --root "$FIX/root" --listen "127.0.0.1:$(freeport)" --cert "$FIX/ec.pem" \
		--key "$FIX/ec.key" --workers 1 $bad
	expect_eq "exit code of --test-config is a start's ($bad)" "$want" "$TC_RC"
done
expect_problem "no --root" "root" --test-config --listen "127.0.0.1:$PORT" \
	--cert "$FIX/ec.pem" --key "$FIX/ec.key"
# A plain-only server needs no certificate.
tc --test-config --root "$FIX/root" --listen-plain "127.0.0.1:$PORT"
expect_eq "plain HTTP only, no certificate: ok" "$TC_RC" 0

# --check: the machine report, then, given a root, the same loading.
tc --check "${good[@]}"
expect_eq "--check with a good configuration: exit 0" "$TC_RC" 0
check "... prints the machine report" grep -q '^kernel TLS: ' "$T/out"
check "... and configuration ok" grep -q '^ktlsd: configuration ok' "$T/out"
tc --check --root "$T/no-such-dir" --cert "$FIX/ec.pem" --key "$FIX/ec.key"
expect_in "--check with a root that does not exist: non-zero" "$TC_RC" 1 2
check "... after the machine report" grep -q '^kernel TLS: ' "$T/out"
expect_match "... naming the root" "$(cat "$T/err")" "--root"
tc --check --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$T/bad.pem" --key "$FIX/ec.key"
expect_in "--check with a broken certificate: non-zero" "$TC_RC" 1 2
expect_match "... naming it" "$(cat "$T/err")" "bad.pem"
tc --check
expect_eq "--check without a root: the machine report alone, exit 0" "$TC_RC" 0

# --access-log stdout is the descriptor, as at a real start: no file
# named "stdout" appears in the working directory.
mkdir -p "$T/cwd"
cd "$T/cwd" || return 0
tc "${good[@]}" --test-config --access-log stdout
cd - >/dev/null || return 0
expect_eq "--test-config --access-log stdout: ok" "$TC_RC" 0
check "... and no file named stdout is made" test ! -e "$T/cwd/stdout"
