# shellcheck shell=bash
# TLS 1.3 KeyUpdate (RFC 8446 4.6.3) in user-space TLS: a client's KeyUpdate
# with update_requested gets the server's own before any more data, and
# serving goes on under the new keys, in the middle of an HTTP/1.1
# keep-alive exchange, of an HTTP/1.1 response and of an HTTP/2 download,
# with ktlsd's sealer (--tls-records ktlsd, which holds the keys) and with
# OpenSSL's (--tls-records openssl). And the keys' usage limit
# (--tls-rekey-records, RFC 8446 5.5): a TLS 1.3 key ktlsd seals with is
# replaced behind a KeyUpdate of its own; where no key can be replaced
# (TLS 1.2, or OpenSSL sealing) the connection ends after its response.
# The client is tests/integration/tls_client (Python's ssl cannot send a
# KeyUpdate), built with the unit tests.

TLS_CLIENT=${TLS_CLIENT:-$(dirname "$KTLSD")/tests/integration/tls_client}
if [ ! -x "$TLS_CLIENT" ]; then
	fail "tls_client is built" "$TLS_CLIENT is missing: make -C BUILD tests/integration/tls_client"
	return 0
fi

R=$T/root
mkdir -p "$R"
head -c 1000 /dev/zero | tr '\0' a >"$R/a.txt"
head -c 2000 /dev/zero | tr '\0' b >"$R/b.txt"
head -c 3000 /dev/zero | tr '\0' c >"$R/c.txt"
head -c $((4 << 20)) /dev/urandom >"$R/mid.bin"

start_here() {
	start_on_free_port --root "$R" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 "$@"
}

# tc NAME CLIENT-ARGS...: tls_client on $PORT; its output in $T/NAME.out
# (and TC_OUT on one line), bodies in $T/NAME/.
tc() {
	local name=$1
	shift
	rm -rf "${T:?}/$name"
	mkdir -p "$T/$name"
	timeout 100 "$TLS_CLIENT" --dir "$T/$name" "$@" >"$T/$name.out" 2>&1
	TC_OUT=$(tr '\n' ' ' <"$T/$name.out" | sed 's/ $//')
}

# same NAME BODY FILE: the body saved as $T/NAME/BODY is FILE's bytes.
same() {
	cmp -s "$T/$1/$2" "$R/$3"
}

for records in ktlsd openssl; do
	m="--tls-records $records"
	start_here --tls-records "$records" --tls-protocols TLSv1.3 || continue

	# Between requests of a keep-alive connection: update_requested twice,
	# update_not_requested once; each suite (AES-256-GCM hashes with
	# SHA-384, the others with SHA-256).
	for suite in TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256; do
		tc "ka-$records-$suite" --ciphers "$suite" "$PORT" get=/a.txt KU get=/b.txt ku \
			get=/c.txt KU get=/a.txt get=/b.txt
		expect_eq "$m, $suite: KeyUpdates between requests: each request answered, two KeyUpdates back" \
			"$TC_OUT" "RESP 200 1000 KEYUPDATE requested RESP 200 2000 KEYUPDATE not_requested RESP 200 3000 KEYUPDATE requested RESP 200 1000 RESP 200 2000 KEYUPDATES 2"
		n="ka-$records-$suite"
		check "$m, $suite: the bodies after the KeyUpdates are the files' bytes" \
			sh -c "cmp -s '$T/$n/1.body' '$R/b.txt' && cmp -s '$T/$n/2.body' '$R/c.txt' && cmp -s '$T/$n/3.body' '$R/a.txt' && cmp -s '$T/$n/4.body' '$R/b.txt'"
	done

	# In the middle of a 4 MiB response, with the next request pipelined
	# behind the KeyUpdate.
	tc "mid-$records" "$PORT" send=/mid.bin resp=262144 KU send=/a.txt resp resp get=/b.txt
	expect_eq "$m: KeyUpdate mid-response: the response ends, the next ones follow" \
		"$TC_OUT" "KEYUPDATE requested RESP 200 4194304 RESP 200 1000 RESP 200 2000 KEYUPDATES 1"
	check "$m: KeyUpdate mid-response: the 4 MiB body is intact" same "mid-$records" 0.body mid.bin
	check "$m: KeyUpdate mid-response: the body after it is intact" same "mid-$records" 2.body b.txt

	# In the middle of an HTTP/2 download (the client's window keeps the
	# server at most 64 KiB ahead: the download is really in progress),
	# then new streams.
	tc "h2-$records" --alpn h2 "$PORT" h2 h2get=/mid.bin h2wait=1048576 KU h2get=/a.txt \
		h2done ku h2get=/b.txt h2done
	expect_eq "$m: KeyUpdate mid HTTP/2 download: every stream completes, no GOAWAY" \
		"$TC_OUT" "KEYUPDATE requested STREAM 1 200 4194304 complete STREAM 3 200 1000 complete KEYUPDATE not_requested STREAM 1 200 4194304 complete STREAM 3 200 1000 complete STREAM 5 200 2000 complete KEYUPDATES 1"
	check "$m: KeyUpdate mid HTTP/2 download: the download is intact" same "h2-$records" s1.body mid.bin
	check "$m: KeyUpdate mid HTTP/2 download: the later streams are intact" \
		sh -c "cmp -s '$T/h2-$records/s3.body' '$R/a.txt' && cmp -s '$T/h2-$records/s5.body' '$R/b.txt'"
	stop_ktlsd
done

# ---- key usage limits: --tls-rekey-records ----

# TLS 1.3 with ktlsd's sealer: a KeyUpdate of its own every 64 records, the
# connection goes on. 4 MiB is 256 full records.
start_here --tls-rekey-records 64 --tls-protocols TLSv1.3 || return 0
tc rk13 "$PORT" get=/mid.bin get=/a.txt get=/mid.bin
keyups=$(sed -n 's/^KEYUPDATES //p' "$T/rk13.out")
expect_eq "--tls-rekey-records 64, TLS 1.3, ktlsd seals: every response" \
	"$(grep -c '^RESP 200' "$T/rk13.out")" 3
# 8 MiB is 512 full records and more: 8 KeyUpdates, give or take the
# records that are not full.
expect_in "--tls-rekey-records 64, TLS 1.3, ktlsd seals: a KeyUpdate every 64 records" \
	"$keyups" 7 8 9
check "--tls-rekey-records 64, TLS 1.3, ktlsd seals: bodies across the new keys intact" \
	sh -c "cmp -s '$T/rk13/0.body' '$R/mid.bin' && cmp -s '$T/rk13/1.body' '$R/a.txt' && cmp -s '$T/rk13/2.body' '$R/mid.bin'"
tc rk13h2 --alpn h2 "$PORT" h2 h2get=/mid.bin h2get=/a.txt h2done
expect_eq "--tls-rekey-records 64, TLS 1.3, ktlsd seals, HTTP/2: the streams complete" \
	"$(grep '^STREAM' "$T/rk13h2.out" | tr '\n' ' ')" "STREAM 1 200 4194304 complete STREAM 3 200 1000 complete "
# 4 MiB and its frame headers in batches the client's window keeps small:
# 257 records and more, not all full.
expect_in "--tls-rekey-records 64, TLS 1.3, ktlsd seals, HTTP/2: a KeyUpdate every 64 records" \
	"$(sed -n 's/^KEYUPDATES //p' "$T/rk13h2.out")" 4 5 6 7 8
check "--tls-rekey-records 64, TLS 1.3, ktlsd seals, HTTP/2: the download is intact" same rk13h2 s1.body mid.bin
stop_ktlsd

# Where the key cannot be replaced: the response that reaches the limit
# completes, then close_notify; a small one before it does not.
for how in "ktlsd 1.2" "openssl 1.2" "openssl 1.3"; do
	records=${how% *} v=${how#* }
	m="--tls-rekey-records 64, TLS $v, $records seals"
	start_here --tls-rekey-records 64 --tls-records "$records" --tls-protocols "TLSv$v" || continue
	flag=
	[ "$v" = 1.2 ] && flag=--tls1.2
	tc "rk-$records-$v" $flag "$PORT" get=/a.txt get=/mid.bin send=/b.txt close=30
	expect_eq "$m: the response at the limit completes, then the connection closes" \
		"$TC_OUT" "RESP 200 1000 RESP 200 4194304 CLOSED close_notify KEYUPDATES 0"
	check "$m: the body is intact" same "rk-$records-$v" 1.body mid.bin
	tc "rk2-$records-$v" $flag --alpn h2 "$PORT" h2 h2get=/mid.bin h2get=/a.txt h2done close=30
	expect_eq "$m, HTTP/2: GOAWAY, the open streams complete, then the close" \
		"$TC_OUT" "STREAM 1 200 4194304 complete STREAM 3 200 1000 complete GOAWAY 3 0 CLOSED close_notify KEYUPDATES 0"
	check "$m, HTTP/2: the download is intact" same "rk2-$records-$v" s1.body mid.bin
	stop_ktlsd
done

# The default keeps the connection: 4 MiB twice over TLS 1.2 and more.
start_here --tls-protocols TLSv1.2 || return 0
tc rkdef --tls1.2 "$PORT" get=/mid.bin get=/mid.bin get=/a.txt close=2
expect_eq "default limits: a TLS 1.2 connection goes on" "$TC_OUT" \
	"RESP 200 4194304 RESP 200 4194304 RESP 200 1000 OPEN KEYUPDATES 0"
stop_ktlsd
