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

# ---- what breaks only once clients come (issue 23, item 5) ------------------
# cert_signed NAME SAN START END: a self-signed ECDSA certificate $T/NAME.pem
# (key NAME.key) valid from START to END (YYYYMMDDHHMMSSZ), by openssl ca,
# the one tool of OpenSSL 3.0 that sets both dates.
cert_signed() {
	local d="$T/ca-$1"
	mkdir -p "$d" && : >"$d/index.txt" && echo 01 >"$d/serial"
	printf '[ca]\ndefault_ca=d\n[d]\ndatabase=%s/index.txt\nnew_certs_dir=%s\nserial=%s/serial\ndefault_md=sha256\npolicy=p\ncopy_extensions=copy\n[p]\ncommonName=supplied\n' \
		"$d" "$d" "$d" >"$d/ca.cnf"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/$1.key" \
		-out "$d/req.csr" -subj "/CN=$1" -addext "subjectAltName=$2" 2>/dev/null &&
		openssl ca -batch -config "$d/ca.cnf" -selfsign -keyfile "$T/$1.key" -in "$d/req.csr" \
			-out "$T/$1.pem" -startdate "$3" -enddate "$4" -notext >/dev/null 2>&1
}
utc() { date -u -d "$1" +%Y%m%d%H%M%SZ; }
cert_signed expired DNS:localhost 20200101000000Z 20200201000000Z
cert_signed soon DNS:localhost "$(utc yesterday)" "$(utc '5 days')"
cert_signed wild 'DNS:*.example.org,DNS:example.org' "$(utc yesterday)" "$(utc '90 days')"
check "test certificates made (openssl ca)" test -s "$T/expired.pem" -a -s "$T/soon.pem" -a -s "$T/wild.pem"

tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$T/expired.pem" --key "$T/expired.key"
expect_eq "an expired certificate: exit 1" "$TC_RC" 1
expect_match "... an error naming it and its end" "$(cat "$T/err")" \
	'\[error\] --cert .*expired\.pem: expired on 2020-02-01'
check "... no 'configuration ok'" sh -c '! grep -q "configuration ok" "$1"' sh "$T/out"
tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$T/soon.pem" --key "$T/soon.key"
expect_eq "a certificate that ends in 5 days: still ok (exit 0)" "$TC_RC" 0
expect_match "... with a warning of it" "$(cat "$T/err")" '\[warn\] --cert .*soon\.pem: expires on .*in [45] days'
check "... and configuration ok" grep -q '^ktlsd: configuration ok' "$T/out"

tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$T/wild.pem" --key "$T/wild.key" \
	--server-name dl.example.org --server-name example.org --server-name '*.example.org'
expect_eq "server names its wildcard certificate covers: ok" "$TC_RC" 0
expect_eq "... and nothing on stderr" "$(cat "$T/err")" ""
tc --test-config --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$T/wild.pem" --key "$T/wild.key" \
	--server-name dl.example.org --server-name a.b.example.org --server-name mirror.example.net
expect_eq "server names the certificate does not cover: exit 1" "$TC_RC" 1
expect_eq "... one error for each" "$(grep -c 'no certificate of the site covers it' "$T/err")" 2
expect_match "... naming them" "$(tr '\n' ' ' <"$T/err")" 'a\.b\.example\.org.*mirror\.example\.net'
# A start warns of the same and serves (a renewal may be on its way).
if start_on_free_port --root "$FIX/root" --cert "$T/expired.pem" --key "$T/expired.key" \
	--cert "$FIX/rsa.pem" --key "$FIX/rsa.key" --server-name mirror.example.net --workers 1; then
	fetch uncovered /a.txt --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256
	expect_eq "a start with an expired certificate and an uncovered name: serves" "$STATUS" 200
	check "... warned of the expired one" grep -q '\[warn\] --cert .*expired.pem: expired on' "$KTLSD_LOG"
	check "... and of the name" grep -q '\[warn\] --server-name mirror.example.net: no certificate' "$KTLSD_LOG"
	stop_ktlsd
fi

expect_problem "two ECDSA certificates in one site" "a second ECDSA certificate" --test-config \
	--root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" --key "$FIX/ec.key" \
	--cert "$T/other.pem" --key "$T/other.key"
expect_problem "the same listener twice" "the same address" --test-config "${good[@]}" \
	--listen "127.0.0.1:$PORT" --listen-plain "127.0.0.1:$PORT"
printf 'root %s\nroot %s\nlisten 127.0.0.1:%s\ncert %s\nkey %s\n' "$FIX/root" "$T" "$PORT" \
	"$FIX/ec.pem" "$FIX/ec.key" >"$T/root-twice.conf"
expect_problem "root twice in the file" "root: given twice" --test-config --config "$T/root-twice.conf"
printf 'listen 127.0.0.1:%s\ncert %s\nkey %s\n[site a]\nroot %s\nroot %s\n' "$PORT" "$FIX/ec.pem" \
	"$FIX/ec.key" "$FIX/root" "$T" >"$T/root-twice-site.conf"
expect_problem "root twice in a section" "given twice in this section" --test-config \
	--config "$T/root-twice-site.conf"
# Certificates are counted over every site, a file two share once.
printf 'root %s\nlisten 127.0.0.1:%s\ncert %s\nkey %s\ncert %s\nkey %s\n[site w]\nserver-name example.org\ncert %s\nkey %s\n[site x]\nserver-name localhost\n' \
	"$FIX/root" "$PORT" "$FIX/ec.pem" "$FIX/ec.key" "$FIX/rsa.pem" "$FIX/rsa.key" "$T/wild.pem" \
	"$T/wild.key" >"$T/sites.conf"
tc --test-config --config "$T/sites.conf"
expect_eq "three sites: ok" "$TC_RC" 0
expect_match "... counting the certificates of all (3 files)" "$(cat "$T/out")" 'certificates: 3\)'

# ---- a root the --user cannot read (issue 23, item 3) -----------------------
if [ "$(id -u)" != 0 ]; then
	skip "--test-config: a root --user cannot read" "needs root (only root becomes --user)"
elif site=$(nobody_site test-config); then
	tc --test-config --root "$site/root" --listen-plain "127.0.0.1:$PORT" --user nobody
	expect_eq "--user nobody, a root nobody reads: ok" "$TC_RC" 0
	chmod 700 "$site/root"
	tc --test-config --root "$site/root" --listen-plain "127.0.0.1:$PORT" --user nobody
	expect_eq "--user nobody, a root of mode 700 (root's): exit 1" "$TC_RC" 1
	expect_match "... saying nobody cannot read it, and what follows" "$(cat "$T/err")" \
		"--root $site/root: --user nobody cannot read it \\(Permission denied\\): every request would get 403"
	rm -rf "$site"
fi
