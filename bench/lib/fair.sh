# shellcheck shell=bash
# The fair-shares cell (issue 22): FAIR concurrent HTTPS downloads (TLS 1.3,
# AES-128-GCM, curl, one connection and one process each) of one cached file
# of FAIR_MIB MiB, no rate limit, over HTTP/1.1 and then over HTTP/2; each
# download's own throughput (curl's speed_download: its bytes over its own
# time) gives the min, median and max and their max/min ratio. Issue 22 asks
# for a ratio of at most 2.
#
# And one HTTP/2 connection carrying FAIR_STREAMS streams (h2load -c1 -m)
# beside FAIR_SINGLES single-stream HTTP/2 clients (curl): the singles'
# throughput, against what the many-stream connection received while they
# ran (the client side's bytes_received of its socket, read with ss the
# moment the last single ends), in all and per stream. A server that shares
# by connection gives that connection about one single's rate; one that
# shares by stream gives it up to FAIR_STREAMS times that; one that lets it
# starve the others shows in the singles' minimum.
#
# Each client has its own process on the client core, so the scheduler gives
# every client the same share of that core, as if each had a machine of its
# own: where the client core is the limit (the bound column), a server's
# preference shows less than where the server's core is.
#
# Globals: FAIR, FAIR_MIB (bench/run); FAIR_STREAMS, FAIR_SINGLES (set by
# fair_setup); and the cells' globals (lib/cells.sh).

# fair_label: "100x64MiB", for the cell names.
# shellcheck disable=SC2153 # FAIR_MIB is set by bench/run
fair_label() { echo "${FAIR}x${FAIR_MIB}MiB"; }

# fair_many_label: "1x50 streams + 20x1 64MiB".
fair_many_label() { echo "1x$FAIR_STREAMS streams + ${FAIR_SINGLES}x1 ${FAIR_MIB}MiB"; }

# fair_setup: the file (random bytes, on tmpfs with the other test files)
# and the sub-case's sizes: 100 downloads give 50 streams and 20 singles.
fair_setup() {
	local f=$ROOT/fair.bin
	random_file "$f" $((FAIR_MIB * 1048576)) fair || die "cannot make $f"
	sha256sum "$f" | cut -d' ' -f1 >"$WORK/sha/fair.bin"
	FAIR_STREAMS=$((FAIR / 2)) FAIR_SINGLES=$((FAIR / 5))
	[ "$FAIR_STREAMS" -ge 2 ] || FAIR_STREAMS=2
	[ "$FAIR_SINGLES" -ge 2 ] || FAIR_SINGLES=2
	log "fair-shares file ready: $FAIR_MIB MiB; $FAIR downloads at once, then 1 x $FAIR_STREAMS streams + $FAIR_SINGLES x 1"
}

# fair_stats FILE: "min median max" of the numbers in FILE, one a line.
fair_stats() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) exit
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f %.3f\n", v[1], m, v[NR] }'
}

# fair_curls N PFLAG URL CONF: N curl downloads of URL at once, in the
# background, on the client core; FAIR_PIDS. $WORK/dl.I gets "code bytes
# version" on its first line (count_downloads) and bytes per second on its
# second.
fair_curls() {
	local i
	FAIR_PIDS=()
	for ((i = 0; i < $1; i++)); do
		OPENSSL_CONF=$4 on_client curl -sk "$2" --max-time 300 -o /dev/null \
			-w '%{http_code} %{size_download} %{http_version}\n%{speed_download}\n' "$3" \
			>"$WORK/dl.$i" 2>&1 &
		FAIR_PIDS+=($!)
	done
}

# fair_speeds N: the N downloads' MB/s, one a line, into $WORK/fair.speeds.
fair_speeds() {
	local i
	for ((i = 0; i < $1; i++)); do
		sed -n 2p "$WORK/dl.$i" | awk '$1 > 0 { printf "%.3f\n", $1 / 1e6 }'
	done >"$WORK/fair.speeds"
}

# fair_issue_note RATIO: whether RATIO meets issue 22's bar (ktlsd builds).
fair_issue_note() {
	[ "$(srv_kind "$SERVER")" = ktlsd ] || return 0
	if [ -n "$1" ] && awk -v r="$1" 'BEGIN { exit !(r <= 2) }'; then
		echo "; issue 22 (within 2x): met"
	else
		echo "; issue 22 (within 2x): NOT MET"
	fi
}

# cell_fair CELL PROTO: FAIR downloads of fair.bin at once (PROTO h1 or h2)
# from the server started last. Rows: throughput (all bytes over the wall
# time, MB/s, and per server CPU-second), the downloads' dl_min_mbs,
# dl_median_mbs and dl_max_mbs (MB/s) and spread (max / min).
cell_fair() {
	local cell=$1 proto=$2 pflag=--http1.1 conf size ver=size note="" total=0 bad=0 v
	if [ "$proto" = h2 ]; then
		if [ "$H2_OK" != yes ]; then
			na_row fair "$cell" throughput MB/s "server does not offer h2 in ALPN"
			return
		fi
		pflag=--http2
	fi
	conf=$(client_conf 1.3 aes128gcm)
	size=$(stat -c %s "$ROOT/fair.bin")
	local url="https://127.0.0.1:$SRV_PORT/fair.bin"
	[ "$REP" = 1 ] && verify_download "$url" "$WORK/sha/fair.bin" "$conf" $pflag
	note_cmd "OPENSSL_CONF=$(basename "$conf") curl -sk $pflag -o /dev/null -w '%{speed_download}' https://127.0.0.1:PORT/fair.bin   # x$FAIR at once; $cell"
	on_client cat "$ROOT/fair.bin" >/dev/null # cached, as in cell_download
	m_begin
	fair_curls "$FAIR" "$pflag" "$url" "$conf"
	wait "${FAIR_PIDS[@]}"
	m_end
	count_downloads "$FAIR" "$size"
	[ $bad -gt 0 ] && ver=FAIL note="$note$bad of $FAIR downloads short or failed; "
	fair_speeds "$FAIR"
	local lo med hi ratio
	read -r lo med hi < <(fair_stats "$WORK/fair.speeds")
	ratio=$(fdiv "$hi" "$lo" 2)
	note="${note}$(wc -l <"$WORK/fair.speeds") downloads of $size bytes at once; http_version ${v:-?}"
	row fair "$cell" throughput MB/s "$(fdiv "$total" "$(awk -v w="$M_WALL" 'BEGIN { print w * 1e6 }')" 1)" \
		"$(fdiv "$total" "$(awk -v c="$M_CPU" 'BEGIN { print c * 1e6 }')" 1)" MB/cpu-s "$ver" \
		"$note; all bytes over the wall time"
	row fair "$cell" dl_min_mbs MB/s "$lo" "" "" "$ver" "the slowest download's own rate (curl speed_download)"
	row fair "$cell" dl_median_mbs MB/s "$med" "" "" "$ver" "the median download's own rate"
	row fair "$cell" dl_max_mbs MB/s "$hi" "" "" "$ver" "the fastest download's own rate"
	row fair "$cell" spread max/min "$ratio" "" "" "$ver" \
		"fastest / slowest download$(fair_issue_note "$ratio")"
}

# cell_fair_streams CELL: one HTTP/2 connection with FAIR_STREAMS streams
# of fair.bin (h2load -c1 -m), alone: how the server shares it among its
# streams. h2load's log has a line per stream, "start (us) status elapsed
# (us)", and they all start at once. Rows: throughput (the connection's
# MB/s), stream_min_mbs and stream_max_mbs (each stream over its own time)
# and stream_spread (max / min).
cell_fair_streams() {
	local cell=$1 conf size ver=size note="" out ok data
	if [ "$H2_OK" != yes ]; then
		na_row fair "$cell" throughput MB/s "server does not offer h2 in ALPN"
		return
	fi
	conf=$(client_conf 1.3 aes128gcm)
	size=$(stat -c %s "$ROOT/fair.bin")
	note_cmd "OPENSSL_CONF=$(basename "$conf") h2load -c1 -m$FAIR_STREAMS -n$FAIR_STREAMS --log-file=LOG https://127.0.0.1:PORT/fair.bin   # $cell"
	on_client cat "$ROOT/fair.bin" >/dev/null
	rm -f "$WORK/fair.h2log"
	m_begin
	out=$(OPENSSL_CONF=$conf on_client h2load -t1 -c1 -m"$FAIR_STREAMS" -n"$FAIR_STREAMS" \
		--connection-inactivity-timeout=60 --log-file="$WORK/fair.h2log" \
		"https://127.0.0.1:$SRV_PORT/fair.bin" 2>&1)
	m_end
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	data=$(sed -n 's/^traffic: .* (\([0-9]*\)) data.*/\1/p' <<<"$out")
	if [ "${ok:-0}" != "$FAIR_STREAMS" ] || [ "${data:-0}" != $((FAIR_STREAMS * size)) ] ||
		! grep -q 'Application protocol: h2' <<<"$out"; then
		ver=FAIL note="h2load: ${ok:-?} of $FAIR_STREAMS streams, ${data:-?} data bytes of $((FAIR_STREAMS * size)); "
	fi
	local lo hi
	read -r lo hi < <(awk -v b="$size" 'NF >= 3 && $3 > 0 { r = b / $3
		if (n++ == 0 || r < lo) lo = r; if (r > hi) hi = r }
		END { if (n) printf "%.3f %.3f\n", lo, hi }' "$WORK/fair.h2log" 2>/dev/null)
	row fair "$cell" throughput MB/s "$(fdiv "${data:-0}" "$(awk -v w="$M_WALL" 'BEGIN { print w * 1e6 }')" 1)" \
		"$(fdiv "${data:-0}" "$(awk -v c="$M_CPU" 'BEGIN { print c * 1e6 }')" 1)" MB/cpu-s "$ver" \
		"${note}one connection of $FAIR_STREAMS streams of $size bytes, alone; h2load: $(grep -m1 '^time for request' <<<"$out" | tr -s ' ')"
	row fair "$cell" stream_min_mbs MB/s "$lo" "" "" "$ver" "its slowest stream, over its own time"
	row fair "$cell" stream_max_mbs MB/s "$hi" "" "" "$ver" "its fastest stream, over its own time"
	row fair "$cell" spread max/min "$(fdiv "$hi" "$lo" 2)" "" "" "$ver" "its fastest stream over its slowest"
}

# fair_conn_bytes PORT PID: bytes_received of PID's established TCP
# connection to 127.0.0.1:PORT, from the kernel (ss); empty if it has none.
fair_conn_bytes() {
	ss -Htinp state established "( dport = :$1 )" 2>/dev/null | awk -v pid="pid=$2," '
		index($0, pid) { want = 1; next }
		want { if (match($0, /bytes_received:[0-9]+/)) print substr($0, RSTART + 15, RLENGTH - 15); exit }'
}

# cell_fair_many CELL: one HTTP/2 connection with FAIR_STREAMS streams of
# fair.bin (h2load -c1 -m) and, right after it connected, FAIR_SINGLES curl
# --http2 downloads of it. Rows: the singles' single_min_mbs,
# single_median_mbs and single_max_mbs and their spread; the many-stream
# connection's many_conn_mbs (the bytes it received from the singles' start
# to the last one's end, over that time) and many_stream_mbs (the same per
# stream); many_share (many_conn_mbs / single_median_mbs: 1 is a share per
# connection, FAIR_STREAMS one per stream).
cell_fair_many() {
	local cell=$1 conf size ver=size note="" total=0 bad=0 v i
	if [ "$H2_OK" != yes ]; then
		na_row fair "$cell" single_median_mbs MB/s "server does not offer h2 in ALPN"
		return
	fi
	if ! command -v ss >/dev/null; then
		na_row fair "$cell" single_median_mbs MB/s "needs ss (iproute2)"
		return
	fi
	conf=$(client_conf 1.3 aes128gcm)
	size=$(stat -c %s "$ROOT/fair.bin")
	local url="https://127.0.0.1:$SRV_PORT/fair.bin"
	note_cmd "OPENSSL_CONF=$(basename "$conf") h2load -c1 -m$FAIR_STREAMS -n$FAIR_STREAMS https://127.0.0.1:PORT/fair.bin & $FAIR_SINGLES x curl -sk --http2 -o /dev/null https://127.0.0.1:PORT/fair.bin; ss -tinp (bytes_received of h2load's connection when the last curl ends)   # $cell"
	on_client cat "$ROOT/fair.bin" >/dev/null
	m_begin
	local t0 t1 hpid got0
	# Not through on_client (nor timeout): $! must be h2load itself, for
	# ss to find; a server that stops answering is left after 60 s.
	OPENSSL_CONF=$conf taskset -c "$CLIENT_CPUS" h2load -t1 -c1 -m"$FAIR_STREAMS" \
		-n"$FAIR_STREAMS" --connection-inactivity-timeout=60 "$url" >"$WORK/fair.h2load" 2>&1 &
	hpid=$!
	echo "$hpid" >>"$WORK/pids"
	# The singles start once its streams are open: they compete with them,
	# not with its handshake.
	for ((i = 0; i < 100; i++)); do
		got0=$(fair_conn_bytes "$SRV_PORT" "$hpid")
		[ "${got0:-0}" -gt 0 ] && break
		kill -0 "$hpid" 2>/dev/null || break
		sleep 0.02
	done
	# Its rate is counted from here: what it had before the singles
	# started is not theirs to share.
	t0=$(now_s)
	fair_curls "$FAIR_SINGLES" --http2 "$url" "$conf"
	wait "${FAIR_PIDS[@]}"
	local got
	t1=$(now_s)
	got=$(fair_conn_bytes "$SRV_PORT" "$hpid")
	wait "$hpid"
	m_end
	count_downloads "$FAIR_SINGLES" "$size"
	[ $bad -gt 0 ] && ver=FAIL note="$note$bad of $FAIR_SINGLES single-stream downloads short or failed; "
	fair_speeds "$FAIR_SINGLES"
	local out ok data lo med hi span conn_mbs
	out=$(cat "$WORK/fair.h2load")
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	data=$(sed -n 's/^traffic: .* (\([0-9]*\)) data.*/\1/p' <<<"$out")
	if [ "${ok:-0}" != "$FAIR_STREAMS" ] || [ "${data:-0}" != $((FAIR_STREAMS * size)) ]; then
		ver=FAIL note="${note}h2load: ${ok:-?} of $FAIR_STREAMS streams, ${data:-?} data bytes of $((FAIR_STREAMS * size)); "
	fi
	grep -q 'Application protocol: h2' <<<"$out" || ver=FAIL note="${note}h2load did not negotiate h2; "
	read -r lo med hi < <(fair_stats "$WORK/fair.speeds")
	span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	if [ -n "$got" ] && [ -n "$got0" ]; then
		got=$((got - got0))
	else
		# Its connection was gone: all its streams ended before the last
		# single (or before ss saw it).
		got=$((FAIR_STREAMS * size))
		# "finished in 5.36s," or "26.74ms," or "912us,".
		span=$(sed -n 's/^finished in \([0-9.]*[mu]*s\),.*/\1/p' <<<"$out" |
			awk '/us$/ { print $1 / 1e6; next } /ms$/ { print $1 / 1e3; next } { print $1 + 0 }')
		note="${note}the many-stream connection ended before the last single: its rate is over its own time; "
	fi
	conn_mbs=$(fdiv "$got" "$(awk -v s="$span" 'BEGIN { print s * 1e6 }')" 3)
	note="${note}$FAIR_SINGLES single-stream clients beside one connection of $FAIR_STREAMS streams, $size bytes each; it received $got bytes (TLS records) from the singles' start to the last one's end, ${span} s; h2load: $(grep -m1 '^time for request' <<<"$out" | tr -s ' ')"
	row fair "$cell" single_min_mbs MB/s "$lo" "" "" "$ver" "the slowest single-stream client (curl speed_download); $note"
	row fair "$cell" single_median_mbs MB/s "$med" "" "" "$ver" "the median single-stream client"
	row fair "$cell" single_max_mbs MB/s "$hi" "" "" "$ver" "the fastest single-stream client"
	row fair "$cell" spread max/min "$(fdiv "$hi" "$lo" 2)" "" "" "$ver" \
		"fastest / slowest single-stream client"
	row fair "$cell" many_conn_mbs MB/s "$conn_mbs" "" "" "$ver" \
		"the many-stream connection while the singles ran, all its streams"
	row fair "$cell" many_stream_mbs MB/s "$(fdiv "$conn_mbs" "$FAIR_STREAMS" 3)" "" "" "$ver" \
		"the many-stream connection's rate per stream"
	row fair "$cell" many_share x "$(fdiv "$conn_mbs" "$med" 2)" "" "" "$ver" \
		"many-stream connection / median single: 1 is a share per connection, $FAIR_STREAMS a share per stream"
}
