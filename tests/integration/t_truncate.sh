# shellcheck shell=bash
# A file truncated while it is being sent: the client must see an error, never
# a "complete" download with wrong bytes, and the server must live on.

cp "$FIX/root/big.bin" "$FIX/root/trunc.bin"
start_ktlsd --send-timeout 30 || return 0

# try_truncate NAME CURL-ARGS...: start a rate-limited download of trunc.bin,
# truncate the file to 1 MiB once some of it has arrived, and check the
# outcome.
try_truncate() {
	local name=$1 curl_pid rc got
	shift
	cp "$FIX/root/big.bin" "$FIX/root/trunc.bin"
	[ -n "${EVICT:-}" ] && evict "$FIX/root/trunc.bin"
	rm -f "$T/trunc.b"
	kcurl --max-time 60 --limit-rate 4M -o "$T/trunc.b" "$@" "$BASE/trunc.bin" 2>"$T/trunc.err" &
	curl_pid=$!
	if ! wait_until 10 file_at_least "$T/trunc.b" $((512 << 10)); then
		fail "$name: download under way" "less than 512 KiB after 10 s"
	fi
	truncate -s "${TRUNC_TO:-1M}" "$FIX/root/trunc.bin"
	wait "$curl_pid"
	rc=$?
	got=$(size "$T/trunc.b" 2>/dev/null || echo 0)
	if [ "$rc" -ne 0 ] && [ "$got" -lt $((32 << 20)) ]; then
		pass "$name: curl reports an error and has fewer bytes"
	else
		fail "$name: curl reports an error and has fewer bytes" "curl exit code $rc, $got bytes"
	fi
	check "$name: the received bytes are the original's prefix" cmp -s -n "$got" "$T/trunc.b" "$FIX/root/big.bin"
	rm -f "$T/trunc.b"
}

try_truncate "truncated during download"
try_truncate "truncated during download over HTTP/1.0" -0

# The server is alive and serves the file's new, short self.
fetch after /trunc.bin
expect_eq "after truncation: status" "$STATUS" 200
expect_eq "after truncation: Content-Length" "$(hdr "$T/after.h" Content-Length)" $((1 << 20))
check "after truncation: body is the first 1 MiB" cmp -s -n $((1 << 20)) "$T/after.b" "$FIX/root/big.bin"
fetch other /a.txt
expect_eq "after truncation: other files still served" "$STATUS" 200
stop_ktlsd

# ktlsd's sealer (no kTLS here, or --ktls off) seals a download whose file
# came from the disk from the file's mapped pages once they are cached: a
# page past the new end is a SIGBUS there, which must end this response
# alone. So the file is evicted before each download (a disk, not tmpfs:
# fincore says whether that worked), and paced by the server, so that a
# mapped chunk waits in the send buffer, half sealed, when the file goes.
cp "$FIX/root/big.bin" "$FIX/root/trunc.bin"
evict "$FIX/root/trunc.bin"
resident=$(fincore -nb -o RES "$FIX/root/trunc.bin" 2>/dev/null | tr -d " ")
if [ "${resident:-x}" != 0 ]; then
	skip "sealed from mapped pages: a truncated file" \
		"$FIX cannot be evicted from the page cache (fincore: ${resident:-no answer}), so no download here meets the disk"
elif start_ktlsd --send-timeout 30 --ktls off --limit-rate 2m --log-level debug; then
	EVICT=1 TRUNC_TO=0 try_truncate "sealed from mapped pages: truncated to nothing during download"
	fetch after3 /a.txt
	expect_eq "sealed from mapped pages: server alive after truncation" "$STATUS" 200
	check "sealed from mapped pages: the seal stopped at the page past the end" \
		grep -q 'file shrank under a seal from its pages' "$KTLSD_LOG"
	# HTTP/2's batches are sealed from the mapping too: their DATA payloads
	# are holes between frame headers (sock_batch_map). The shrink is met by
	# a seal under way, at the page past the end ("h2 stream N: file shrank
	# during the response", from h2_spliced), or, when the last batch was
	# sealed whole before it, by the next batch's residency question and
	# read ("file shrank or failed"): either ends the stream.
	EVICT=1 TRUNC_TO=0 try_truncate "HTTP/2 sealed from mapped pages: truncated to nothing during download" --http2
	fetch after4 /a.txt
	expect_eq "HTTP/2 sealed from mapped pages: server alive after truncation" "$STATUS" 200
	check "HTTP/2 sealed from mapped pages: the stream ended at the shrink" \
		grep -qE 'h2 stream [0-9]+[^:]*: file shrank' "$KTLSD_LOG"
	stop_ktlsd
	check "sealed from mapped pages: the body was sealed from the mapping" \
		grep -qE 'h1_mapped_bytes=[1-9]' "$KTLSD_LOG"
	check "HTTP/2 sealed from mapped pages: the batches were sealed from the mapping" \
		grep -qE 'h2_mapped_bytes=[1-9]' "$KTLSD_LOG"
fi

# The same with the buffered (non-sendfile) send path.
start_ktlsd --send-timeout 30 --sendfile off || return 0
try_truncate "--sendfile off: truncated during download"
fetch after2 /a.txt
expect_eq "--sendfile off: server alive after truncation" "$STATUS" 200
stop_ktlsd
rm -f "$FIX/root/trunc.bin"
