# shellcheck shell=bash
# A bad record after the handshake (a tag that does not authenticate, a
# zero-length record, content type 0, a length past the largest ciphertext)
# gets OpenSSL's fatal alert, and the connection closes at once (RFC 8446
# 6.2, RFC 5246 7.2.2: both sides MUST close immediately), in both
# --tls-records modes, TLS 1.2 and 1.3, HTTP/1.1 and HTTP/2. The timeouts
# that could also close it are set far beyond what the client waits, so a
# close it sees is the server's answer to the record, whatever the load.

WAIT=30 # the client's wait for the close; the server's timeouts are 300 s

cases() {
	local port=$1 v k
	for v in 1.2 1.3; do
		for k in badtag empty type0 overflow; do
			printf '%s ' "$port:$v:$k:after:http/1.1"
		done
		printf '%s ' "$port:$v:badtag:before:http/1.1" "$port:$v:badtag:before:h2" \
			"$port:$v:overflow:before:h2"
	done
}

for records in ktlsd openssl; do
	start_ktlsd --tls-records "$records" --idle-timeout 300 --header-timeout 300 \
		--handshake-timeout 300 || continue
	# shellcheck disable=SC2046 # one word per case
	py_client $((WAIT + 40)) "$(dirname "${BASH_SOURCE[0]}")/tls_bad_records.py" "$WAIT" $(cases "$PORT")
	while read -r spec result; do
		name="--tls-records $records, ${spec#*:}: the alert, then the close"
		expect_match "$name" "$result" '^ALERT [A-Z0-9_]+ CLOSED '
	done <"$PY_OUT"
	expect_eq "--tls-records $records: every case reported" "$(wc -l <"$PY_OUT")" 14
	fetch after /a.txt
	expect_eq "--tls-records $records: the server goes on serving" "$STATUS" 200
	stop_ktlsd
done
