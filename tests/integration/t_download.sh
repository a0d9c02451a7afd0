# shellcheck shell=bash
# Whole-file downloads of a 32 MiB random file: every byte must arrive.

start_ktlsd || return 0
want=$(cat "$FIX/big.sha256")
big_size=$(size "$FIX/root/big.bin")

fetch big /big.bin
expect_eq "curl 32 MiB: status" "$STATUS" 200
expect_eq "curl 32 MiB: curl exit code" "$RC" 0
expect_eq "curl 32 MiB: Content-Length" "$(hdr "$T/big.h" Content-Length)" "$big_size"
expect_eq "curl 32 MiB: sha256" "$(sha "$T/big.b")" "$want"
rm -f "$T/big.b"

timeout 60 wget -q -4 --ca-certificate="$FIX/ca.pem" -O "$T/wget.b" "$BASE/big.bin"
expect_eq "wget 32 MiB: exit code" "$?" 0
expect_eq "wget 32 MiB: sha256" "$(sha "$T/wget.b")" "$want"
rm -f "$T/wget.b"

pids=()
for i in 1 2 3 4; do
	kcurl --max-time 60 -o "$T/par.$i" "$BASE/big.bin" 2>"$T/par.$i.err" &
	pids+=($!)
done
for i in 1 2 3 4; do
	wait "${pids[$((i - 1))]}"
	expect_eq "parallel download $i: curl exit code" "$?" 0
	expect_eq "parallel download $i: sha256" "$(sha "$T/par.$i")" "$want"
	rm -f "$T/par.$i"
done

# HTTP/1.0: the whole body, then the connection ends.
fetch http10 /big.bin -0
expect_eq "HTTP/1.0 request: status" "$STATUS" 200
expect_eq "HTTP/1.0 request: curl exit code" "$RC" 0
expect_match "HTTP/1.0 request: answered as HTTP/1.x" "$(head -n1 "$T/http10.h")" '^HTTP/1\.[01] 200'
expect_eq "HTTP/1.0 request: sha256" "$(sha "$T/http10.b")" "$want"
rm -f "$T/http10.b"

# A file read twice in one keep-alive connection (curl reuses it).
rm -f "$T/twice.1" "$T/twice.2"
n=$(kcurl -o "$T/twice.1" -o "$T/twice.2" -w '%{num_connects}\n' "$BASE/text.txt" "$BASE/big.bin" | tr '\n' ' ')
expect_eq "two downloads on one connection: connections opened" "$n" "1 0 "
check "two downloads on one connection: first body" cmp -s "$T/twice.1" "$FIX/root/text.txt"
expect_eq "two downloads on one connection: second sha256" "$(sha "$T/twice.2")" "$want"
rm -f "$T/twice.2"

stop_ktlsd

# The buffered send path (no sendfile) delivers the same bytes.
start_ktlsd --sendfile off || return 0
fetch nosf /big.bin
expect_eq "--sendfile off: status" "$STATUS" 200
expect_eq "--sendfile off: sha256" "$(sha "$T/nosf.b")" "$want"
rm -f "$T/nosf.b"
stop_ktlsd

start_ktlsd --ktls off || return 0
fetch noktls /big.bin
expect_eq "--ktls off: status" "$STATUS" 200
expect_eq "--ktls off: sha256" "$(sha "$T/noktls.b")" "$want"
rm -f "$T/noktls.b"
stop_ktlsd

# --sendfile: which path a body takes, as the access log says. auto (the
# default) copies on plain HTTP, where copying measured faster than the
# ring's splices, and splices only kTLS bodies of 64 KiB and more (this
# host may lack kTLS: then HTTPS copies under every setting); on splices
# wherever the socket allows; off never. Bytes are the same on every path.
sendfile_path() { # NAME SENDFILE HTTPS-BODY PLAIN-BODY
	local alog=$T/sf-$2.access plain_port
	plain_port=$(freeport)
	start_ktlsd --sendfile "$2" --listen-plain "127.0.0.1:$plain_port" --access-log "$alog" ||
		return 0
	fetch "sf-$2" /big.bin
	expect_eq "$1: HTTPS sha256" "$(sha "$T/sf-$2.b")" "$want"
	timeout 60 curl -s -o "$T/sf-$2-plain.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "$1: plain HTTP sha256" "$(sha "$T/sf-$2-plain.b")" "$want"
	rm -f "$T/sf-$2.b" "$T/sf-$2-plain.b"
	stop_ktlsd
	expect_match "$1: HTTPS body path in the access log" \
		"$(grep '"GET /big.bin HTTP/1.1" 200' "$alog" | grep 'TLSv1')" "$3"
	expect_match "$1: plain HTTP body path in the access log" \
		"$(grep '"GET /big.bin HTTP/1.1" 200' "$alog" | grep -v 'TLSv1')" "$4"
}
if grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null; then
	sendfile_path "--sendfile auto" auto 'ktls=tx body=splice( |$)' 'body=copy( |$)'
	sendfile_path "--sendfile on" on 'ktls=tx body=splice( |$)' 'body=splice( |$)'
else
	sendfile_path "--sendfile auto" auto 'ktls=off body=copy( |$)' 'body=copy( |$)'
	sendfile_path "--sendfile on" on 'ktls=off body=copy( |$)' 'body=splice( |$)'
fi
sendfile_path "--sendfile off" off 'body=copy( |$)' 'body=copy( |$)'

# --sendfile on moves cached file bytes by sendfile on the worker and the
# others by the ring's splices, which wait for the disk off the worker.
# Dropped from the page cache (written back first: fadvise DONTNEED drops
# only clean pages), the file first takes the splices; its second download,
# cached, takes sendfile. The file is a copy of this test's own: other test
# files download the fixtures' big.bin at the same time, which would bring
# it back into the page cache between the eviction and the download.
plain_port=$(freeport)
mkdir -p "$T/own"
cp "$FIX/root/big.bin" "$T/own/big.bin"
if start_on_free_port --root "$T/own" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --sendfile on \
	--workers 1 --listen-plain "127.0.0.1:$plain_port"; then
	evict "$T/own/big.bin"
	timeout 60 curl -s -o "$T/evicted.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "--sendfile on, file not cached: sha256" "$(sha "$T/evicted.b")" "$want"
	timeout 60 curl -s -o "$T/cached.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "--sendfile on, file cached: sha256" "$(sha "$T/cached.b")" "$want"
	rm -f "$T/evicted.b" "$T/cached.b"
	stop_ktlsd
	stats=$(grep -m1 'worker 0 stats:' "$KTLSD_LOG")
	sfc=$(sed -n 's/.* sendfile_calls=\([0-9]*\).*/\1/p' <<<"$stats")
	sp=$(sed -n 's/.* splice_ops=\([0-9]*\).*/\1/p' <<<"$stats")
	if [ "${sfc:-0}" -gt 0 ] && [ "${sp:-0}" -gt 0 ]; then
		pass "--sendfile on: uncached bytes by ring splices ($sp), cached ones by sendfile ($sfc)"
	else
		fail "--sendfile on: uncached bytes by ring splices, cached ones by sendfile" "$stats"
	fi
fi
