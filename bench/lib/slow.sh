# shellcheck shell=bash
# The slow-clients cell (issue 22: "thousands of slow clients at the cost of
# a few"): N HTTPS (TLS 1.3, AES-128-GCM) HTTP/1.1 or HTTP/2 downloads of one cached
# file of SLOW_MIB MiB at once, each read at SLOW_RATE bytes a second, for
# SLOW_SECS seconds, by bench/tools/slowload.c: one epoll thread on the
# client core, a token bucket per connection, so a connection out of tokens
# stops reading, its receive window closes and the server's socket fills,
# as with a real slow line. What it costs the server:
#
#   - memory per download: the proportional set size of all the server's
#     processes (/proc/PID/smaps_rollup, master and workers summed) a few
#     seconds after every connection got its first body bytes, less the same
#     before the clients connected, over N; and the same again near the end
#     of the run, to show whether it stays flat;
#   - CPU-seconds per GB: the server's user+system time (all processes and
#     threads) from the clients' start to their end, N full handshakes
#     included, over the body bytes slowload received. That run also pays
#     for filling each socket's buffers at the start (the kernel grows a
#     send buffer up to net.ipv4.tcp_wmem's maximum, 4 MiB on the 2-core
#     development VM: 3.6 MB a connection was queued in ktlsd's sockets 5 s
#     into a 50-client run, when each client had read some 0.3 MB), so it
#     falls as the run grows longer; hence also
#   - steady CPU-seconds per GB: the same between the first memory reading
#     and the last, over the bytes the server wrote to its sockets meanwhile
#     (TLS records: the change in the sockets' bytes_acked plus their send
#     queues, ss -i). Not over the bytes acknowledged: nginx and h2o fill
#     each socket's buffer at the start (1.8 MB a download at 1,000)
#     and then barely write while the clients drain it, so bytes
#     acknowledged in a 30 s run mostly paid for earlier read as cheap (at
#     1,000 HTTP/1.1 downloads, nginx 0.86 CPU-s per GB acknowledged, 1.44
#     per GB written in the same window; ktlsd, which keeps some 0.4 MB a
#     socket, 0.80 and 0.80). It is taken in SLOW_WINDOWS windows of equal
#     length, each a row of its own, so that the report gives their
#     median, min and max: one reading said little, slow downloads coming
#     in waves, and the development VM's host moving a server's figure by
#     40% from one 15 s window to the next (nginx and ktlsd alike, by
#     hand); the memory is read at each window's end too (pss_per_dl);
#   - the kernel's send queue per download at the first reading (Send-Q of
#     the server's sockets, ss): memory a slow client costs that PSS does
#     not show.
#
# Globals: SLOW_RATE, SLOW_SECS (bench/run); SLOWLOAD (the tool, built by
# setup_tools); and the cells' globals (lib/cells.sh).

SLOW_MIB=256
SLOW_SETTLE=3 # seconds after "ready" before the first memory reading
SLOW_TAIL=2   # ... and before slowload's end for the last
SLOW_WINDOWS=5 # steady windows between the first memory reading and the last

# slow_label N: "1000x64KiB/s", for the cell names.
# shellcheck disable=SC2153 # SLOW_RATE is set by bench/run
slow_label() {
	if [ $((SLOW_RATE % 1024)) = 0 ]; then
		echo "${1}x$((SLOW_RATE / 1024))KiB/s"
	else
		echo "${1}x${SLOW_RATE}B/s"
	fi
}

# slow_setup: the file (random bytes, on tmpfs with the other test files, so
# it is cached for every server alike).
slow_setup() {
	local f=$ROOT/slow.bin
	random_file "$f" $((SLOW_MIB * 1048576)) slow || die "cannot make $f"
	sha256sum "$f" | cut -d' ' -f1 >"$WORK/sha/slow.bin"
	log "slow-clients file ready: $SLOW_MIB MiB; $SLOW_SECS s at $SLOW_RATE bytes/s per download"
}

# slow_sleep_until T: sleep until now_s is T, or return at once if PID
# $SLOW_PID has exited (checked every 0.1 s).
slow_sleep_until() {
	while awk -v t="$1" -v n="$(now_s)" 'BEGIN { exit !(n < t) }'; do
		kill -0 "$SLOW_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	kill -0 "$SLOW_PID" 2>/dev/null
}

# slow_sockets PORT: "SENDQ ACKED" summed over the established TCP sockets
# whose local port is PORT (the server's side): bytes queued to send, and
# bytes the peers acknowledged; nothing without ss (iproute2).
slow_sockets() {
	command -v ss >/dev/null || return 0
	ss -Htin state established "( sport = :$1 )" 2>/dev/null | awk '
		/^[0-9]/ { q += $2 }
		match($0, /bytes_acked:[0-9]+/) { a += substr($0, RSTART + 12, RLENGTH - 12) }
		END { printf "%.0f %.0f\n", q, a }'
}

# slow_kib_per AFTER BEFORE N: (AFTER - BEFORE) / N, one decimal; empty when
# AFTER is.
slow_kib_per() {
	[ -n "$1" ] || return 0
	fdiv "$(($1 - $2))" "$3" 1
}

# cell_slow CELL N PROTO: N slow downloads of slow.bin over PROTO (h1 or
# h2: one stream a connection) from the server started last (bench/run
# starts it fresh, with the file-descriptor limit raised).
# Rows: pss_per_dl_ready and pss_per_dl_end (KiB), pss_per_dl and
# cpu_s_per_gb_steady (one a window), cpu_s_per_gb, throughput
# (MB/s delivered, and per server CPU-second), paced_share (delivered over
# N x SLOW_RATE x seconds: 1 when every client got its rate) and ready_s
# (seconds until every connection had body bytes).
cell_slow() {
	local cell=$1 n=$2 h2=() curl_proto=--http1.1 alpn=http/1.1 conf size ver=size note="" before t0 t_ready="" ready_s="" mem_ready="" mem_end=""
	local c_ready c_end q_ready="" a_ready a_end q_end win_cpu=() win_written=() win_mem=()
	[ "$3" = h2 ] && h2=(-2) curl_proto=--http2 alpn=h2
	size=$(stat -c %s "$ROOT/slow.bin")
	if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((n + 64)) ]; then
		na_row slow "$cell" pss_per_dl_ready KiB "needs $((n + 64)) file descriptors; hard limit $(ulimit -Hn)"
		return
	fi
	conf=$(client_conf 1.3 aes128gcm)
	# Let the server settle (nginx's worker is forked after its master
	# listens) before the reading every other one is measured against.
	sleep 1
	before=$(mem_kib "$SRV_PID")
	note_cmd "OPENSSL_CONF=$(basename "$conf") slowload ${h2[*]:+${h2[*]} }-p PORT -u /slow.bin -c $n -r $SLOW_RATE -d $SLOW_SECS -w READY   # $cell; PSS of the server's processes before, $SLOW_SETTLE s after READY and $SLOW_TAIL s before the end"
	rm -f "$WORK/slow.ready"
	m_begin
	t0=$(now_s)
	# Not through on_client: $! must be slowload itself (it raises its own
	# descriptor limit to N + 64).
	(
		export OPENSSL_CONF=$conf
		exec taskset -c "$CLIENT_CPUS" "$SLOWLOAD" "${h2[@]}" -p "$SRV_PORT" -u /slow.bin -c "$n" \
			-r "$SLOW_RATE" -d "$SLOW_SECS" -w "$WORK/slow.ready"
	) >"$WORK/slow.out" 2>&1 &
	SLOW_PID=$!
	echo "$SLOW_PID" >>"$WORK/pids"
	# Every connection has body bytes: the server holds N downloads in
	# flight, each with its socket full.
	while [ ! -f "$WORK/slow.ready" ] && kill -0 "$SLOW_PID" 2>/dev/null; do
		sleep 0.1
	done
	if [ -f "$WORK/slow.ready" ]; then
		t_ready=$(now_s)
		ready_s=$(awk -v a="$t0" -v b="$t_ready" 'BEGIN { printf "%.2f", b - a }')
		if slow_sleep_until "$(awk -v t="$t_ready" -v s="$SLOW_SETTLE" 'BEGIN { printf "%.3f", t + s }')"; then
			mem_ready=$(mem_kib "$SRV_PID")
			c_ready=$(cpu_ticks "$SRV_PID")
			read -r q_ready a_ready < <(slow_sockets "$SRV_PORT")
		fi
		# The windows end near the end of the run, the last at least a
		# second after the first reading.
		local t_end w t_w mem_w c_w q_w a_w c_prev=$c_ready a_prev=$a_ready q_prev=$q_ready
		t_end=$(awk -v a="$t0" -v d="$SLOW_SECS" -v k="$SLOW_TAIL" -v r="$t_ready" -v s="$SLOW_SETTLE" \
			'BEGIN { e = a + d - k; m = r + s + 1; printf "%.3f", (e > m ? e : m) }')
		for ((w = 1; w <= SLOW_WINDOWS; w++)); do
			[ -n "$mem_ready" ] || break
			t_w=$(awk -v r="$t_ready" -v s="$SLOW_SETTLE" -v e="$t_end" -v w="$w" -v k="$SLOW_WINDOWS" \
				'BEGIN { b = r + s; printf "%.3f", b + (e - b) * w / k }')
			slow_sleep_until "$t_w" || break
			mem_w=$(mem_kib "$SRV_PID")
			c_w=$(cpu_ticks "$SRV_PID")
			read -r q_w a_w < <(slow_sockets "$SRV_PORT")
			win_cpu+=("$((c_w - c_prev))") win_written+=("$((a_w + q_w - a_prev - q_prev))") win_mem+=("$mem_w")
			c_prev=$c_w a_prev=$a_w q_prev=$q_w
			[ "$w" = "$SLOW_WINDOWS" ] && mem_end=$mem_w c_end=$c_w q_end=$q_w a_end=$a_w
		done
	fi
	wait "$SLOW_PID"
	m_end
	local out conns est bytes done_ errs secs proto cipher stalled
	out=$(tail -n1 "$WORK/slow.out")
	conns=$(sed -n 's/^conns=\([0-9]*\) .*/\1/p' <<<"$out")
	est=$(sed -n 's/.* established=\([0-9]*\).*/\1/p' <<<"$out")
	bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<<"$out")
	done_=$(sed -n 's/.* done=\([0-9]*\).*/\1/p' <<<"$out")
	errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$out")
	secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$out")
	proto=$(sed -n 's/.* protocol=\([^ ]*\).*/\1/p' <<<"$out")
	cipher=$(sed -n 's/.* cipher=\([^ ]*\).*/\1/p' <<<"$out")
	# The bytes: one download checked byte for byte afterwards (so that it
	# is not in the memory readings), and the server still serves.
	verify_download "https://127.0.0.1:$SRV_PORT/slow.bin" "$WORK/sha/slow.bin" "$conf" "$curl_proto"
	# Every client connected, got a 200 and body bytes, and none failed;
	# and none ended early where no download can end in the time.
	if [ "${conns:-}" != "$n" ] || [ "${est:-}" != "$n" ] || [ "${errs:-1}" != 0 ]; then
		ver=FAIL note="${note}established ${est:-?} of $n; errors ${errs:-?}; "
	fi
	[ -n "$t_ready" ] || ver=FAIL note="${note}not every connection got body bytes within $SLOW_SECS s; "
	if [ $((SLOW_RATE * ${SLOW_SECS%.*})) -lt "$size" ] && [ "${done_:-1}" != 0 ]; then
		ver=FAIL note="${note}the server ended ${done_:-?} downloads early; "
	fi
	[ "$proto" = TLSv1.3 ] || ver=FAIL note="${note}slowload negotiated ${proto:-?}; "
	[[ $out == *" alpn=$alpn" ]] || ver=FAIL note="${note}slowload did not speak $alpn; "
	stalled=$(sed -n 's/.* stalled=\([0-9]*\).*/\1/p' <<<"$out")
	[ "${stalled:-0}" = 0 ] || note="${note}$stalled downloads got no body byte in their last 10 s; "
	[ -n "$t_ready" ] && [ -z "$mem_end" ] && note="${note}slowload ended before the second memory reading; "
	note="${note}slowload: $out; PSS before ${before} KiB, at ready ${mem_ready:-?} KiB, near the end ${mem_end:-?} KiB"
	local per_ready per_end gb mbs share steady="" sndq=""
	if [ -n "$mem_end" ]; then
		steady=$(awk -v c0="$c_ready" -v c1="$c_end" -v a0="$((a_ready + q_ready))" -v a1="$((a_end + q_end))" -v hz="$CLK_TCK" \
			'BEGIN { if (a1 > a0) printf "%.3f", (c1 - c0) / hz / ((a1 - a0) / 1e9) }')
		note="${note}; between the readings: $(fdiv "$((c_end - c_ready))" "$CLK_TCK" 2) server CPU-s, $((a_end - a_ready)) bytes acknowledged; send queues $q_ready then $q_end bytes"
	fi
	[ -n "$q_ready" ] && sndq=$(fdiv "$q_ready" "$((n * 1024))" 1)
	per_ready=$(slow_kib_per "$mem_ready" "$before" "$n")
	per_end=$(slow_kib_per "$mem_end" "$before" "$n")
	gb=$(fdiv "${bytes:-0}" 1e9 9)
	mbs=$(fdiv "${bytes:-0}" "$(awk -v s="${secs:-0}" 'BEGIN { print s * 1e6 }')" 1)
	share=$(fdiv "${bytes:-0}" "$(awk -v n="$n" -v r="$SLOW_RATE" -v s="${secs:-0}" 'BEGIN { print n * r * s }')" 3)
	row slow "$cell" pss_per_dl_ready KiB "${per_ready:-n/a}" "" "" "$ver" \
		"(PSS $SLOW_SETTLE s after every connection had body bytes - PSS before they connected) / $n; $note"
	row slow "$cell" pss_per_dl_end KiB "${per_end:-n/a}" "" "" "$ver" \
		"(PSS $SLOW_TAIL s before slowload's end - PSS before) / $n: flat over time if near the first"
	row slow "$cell" cpu_s_per_gb cpu-s/GB "$(fdiv "$M_CPU" "$gb" 3)" "" "" "$ver" \
		"server CPU-seconds (all processes and threads) from the clients' start to their end, $n handshakes included, per 10^9 body bytes"
	# One row a window: the report's median, min and max are over them.
	local i rep=$REP
	if [ ${#win_cpu[@]} = 0 ]; then
		row slow "$cell" cpu_s_per_gb_steady cpu-s/GB n/a "" "" "$ver" "no steady window"
		row slow "$cell" pss_per_dl KiB n/a "" "" "$ver" "no steady window"
	fi
	for i in "${!win_cpu[@]}"; do
		REP=$((i + 1))
		row slow "$cell" cpu_s_per_gb_steady cpu-s/GB \
			"$(awk -v c="${win_cpu[i]}" -v a="${win_written[i]}" -v hz="$CLK_TCK" \
				'BEGIN { if (a > 0) printf "%.3f", c / hz / (a / 1e9); else print "n/a" }')" "" "" "$ver" \
			"server CPU-seconds per 10^9 bytes the server wrote to its sockets (TLS records: the change in ss bytes_acked + Send-Q), in each of ${#win_cpu[@]} windows of equal length between the first memory reading and the last; all of them: ${steady:-n/a}"
		row slow "$cell" pss_per_dl KiB "$(slow_kib_per "${win_mem[i]}" "$before" "$n")" "" "" "$ver" \
			"(PSS at the end of each steady window - PSS before) / $n"
	done
	REP=$rep
	row slow "$cell" sndq_per_dl KiB "${sndq:-n/a}" "" "" "$ver" \
		"the kernel's send queue of the server's sockets at the first memory reading (ss Send-Q) / $n: not in PSS"
	row slow "$cell" throughput MB/s "${mbs:-n/a}" \
		"$(fdiv "${bytes:-0}" "$(awk -v c="$M_CPU" 'BEGIN { print c * 1e6 }')" 1)" MB/cpu-s "$ver" \
		"body bytes over slowload's ${secs:-?} s; $n x $SLOW_RATE bytes/s is $(fdiv "$((n * SLOW_RATE))" 1e6 1) MB/s"
	row slow "$cell" paced_share x "${share:-n/a}" "" "" "$ver" \
		"delivered / ($n x $SLOW_RATE bytes/s x slowload's seconds): 1 when every client got its rate (the handshakes' ramp counts)"
	row slow "$cell" ready_s s "${ready_s:-n/a}" "" "" "$ver" \
		"from slowload's start until every connection had body bytes; $proto $cipher"
}
