# shellcheck shell=bash
# The cells of the matrix. Each cell function measures the server started
# last (srv_start: SRV_PID, SRV_PORT, SRV_PLAIN) once, with the load
# generator pinned to $CLIENT_CPUS, and appends one row to raw.csv:
#
#   group,cell,server,rep,metric,unit,value,server_cpu_s,wall_s,per_cpu,per_cpu_unit,verified,
#   other_load,client_busy,note
#
# other_load: the share of the server's core that other processes used
# during the measurement (a shared or busy machine shows here); client_busy:
# how busy the client cores were (load generator plus anything else).
#
# server_cpu_s is the CPU time the server's processes used during the
# measurement (from /proc/PID/stat), so per_cpu (work per server CPU-second)
# stays meaningful when the client, not the server, is the bottleneck.
# "verified" says what was checked about the bytes received: size (every
# response), sha256 (large files, checked on the first repetition, which is
# also the warm-up), or FAIL.
#
# Globals: SERVER (NAME:KIND:BINARY), REP, DUR (seconds per cell), CLK_TCK,
# WORK, ROOT, SHA_<file> (expected digests), H2_OK (yes/no for this server).

# Client-side TLS settings of one cell: OPENSSL_CONF for wrk, curl, h2load.
# client_conf TLSV CIPHER: TLSV is 1.2 or 1.3, CIPHER one of aes128gcm,
# aes256gcm, chacha20. Prints the path of the config file.
client_conf() {
	local v=$1 c=$2 s12 s13 f
	case $c in
	aes128gcm) s12=ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256 s13=TLS_AES_128_GCM_SHA256 ;;
	aes256gcm) s12=ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384 s13=TLS_AES_256_GCM_SHA384 ;;
	chacha20) s12=ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305 s13=TLS_CHACHA20_POLY1305_SHA256 ;;
	esac
	f="$WORK/client-tls$v-$c.cnf"
	if [ ! -f "$f" ]; then
		fill "$HERE/conf/client-openssl.cnf.in" "$f" TLSV="TLSv$v" CIPHERS12="$s12" CIPHERS13="$s13"
		cp "$f" "$OUT/configs/"
	fi
	echo "$f"
}

# The measurement window around one client run.
# Also watched: how busy the server's core was with anything else (other
# people's jobs on a shared machine): user+nice+system ticks of the core
# from /proc/stat (interrupt time is left out: the kernel does the server's
# own network work there, and does not charge it to the process).
core_busy() {
	awk -v c="cpu$SERVER_CPU" '$1 == c { print $2 + $3 + $4 }' /proc/stat
}
# client_busy: all busy ticks (interrupts included) of the client cores.
client_busy() {
	local lo=${CLIENT_CPUS%-*} hi=${CLIENT_CPUS#*-}
	awk -v lo="$lo" -v hi="$hi" '$1 ~ /^cpu[0-9]+$/ { n = substr($1, 4) + 0
		if (n >= lo && n <= hi) s += $2 + $3 + $4 + $7 + $8 + $9 } END { print s + 0 }' /proc/stat
}
m_begin() {
	M_T0=$(now_s)
	M_C0=$(cpu_ticks "$SRV_PID")
	M_B0=$(core_busy)
	M_K0=$(client_busy)
}
m_end() {
	local t1 c1 b1 k1
	t1=$(now_s)
	c1=$(cpu_ticks "$SRV_PID")
	b1=$(core_busy)
	k1=$(client_busy)
	M_WALL=$(awk -v a="$M_T0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	M_CPU=$(awk -v a="$M_C0" -v b="$c1" -v hz="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / hz }')
	# Share of the server's core used by others during the window (clock
	# ticks are 10 ms: too coarse below half a second).
	M_OTHER=$(awk -v b0="$M_B0" -v b1="$b1" -v c0="$M_C0" -v c1="$c1" -v hz="$CLK_TCK" -v w="$M_WALL" \
		'BEGIN { if (w < 0.5) exit; o = ((b1 - b0) - (c1 - c0)) / hz / w; if (o < 0) o = 0; if (o > 1) o = 1; printf "%.2f", o }')
	# How busy the client cores were (the load generator and anything else):
	# near 1 means the client side was saturated.
	local ncli=$((${CLIENT_CPUS#*-} - ${CLIENT_CPUS%-*} + 1))
	M_CLIENT=$(awk -v k0="$M_K0" -v k1="$k1" -v hz="$CLK_TCK" -v w="$M_WALL" -v n="$ncli" \
		'BEGIN { if (w < 0.5) exit; o = (k1 - k0) / hz / w / n; if (o > 1) o = 1; printf "%.2f", o }')
}

row() { # group cell metric unit value per_cpu per_cpu_unit verified note
	raw_row "$1" "$2" "$(srv_name "$SERVER")" "$REP" "$3" "$4" "$5" "${M_CPU:-}" "${M_WALL:-}" \
		"$6" "$7" "$8" "${M_OTHER:-}" "${M_CLIENT:-}" "${9//,/;}"
}

na_row() { # group cell metric unit why
	M_CPU='' M_WALL='' M_OTHER='' M_CLIENT=''
	row "$1" "$2" "$3" "$4" n/a "" "" "" "$5"
}

# verify_small: fetch /1k.bin once and compare it byte for byte; also warms
# the server up after its start.
verify_small() {
	local got
	got=$(curl -sk --max-time 10 "https://127.0.0.1:$SRV_PORT/1k.bin" | sha256sum | cut -d' ' -f1)
	# shellcheck disable=SC2154 # SHA_1k is set by setup_fixtures
	[ "$got" = "$SHA_1k" ]
}

# cell_handshake CELL TLSV RESUME: new connection per request
# (Connection: close), full (RESUME=0) or resumed (1) handshakes.
cell_handshake() {
	local cell=$1 v=$2 resume=$3 out rflag="" c12 c13 ok hs res err secs ver=size note
	[ "$resume" = 1 ] && rflag=-r
	c12=ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256
	c13=TLS_AES_128_GCM_SHA256
	note_cmd "hsload -p PORT -u /1k.bin -s 1024 -c $HS_CONC -d $DUR -V $v $rflag -C $c12 -S $c13   # $cell"
	m_begin
	out=$(on_client "$HSLOAD" -p "$SRV_PORT" -u /1k.bin -s 1024 -c "$HS_CONC" -d "$DUR" -V "$v" \
		$rflag -C "$c12" -S "$c13" 2>&1)
	m_end
	hs=$(sed -n 's/.*handshakes=\([0-9]*\).*/\1/p' <<<"$out")
	res=$(sed -n 's/.*resumed=\([0-9]*\).*/\1/p' <<<"$out")
	ok=$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<"$out")
	err=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$out")
	secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$out")
	note="${out##*protocol=}; resumed $res of $hs; errors $err"
	if [ -z "$ok" ] || [ "$ok" = 0 ] || [ "${err:-1}" -gt $((ok / 100)) ]; then
		ver=FAIL
	elif [ "$resume" = 1 ] && [ "$res" -lt $((hs * 9 / 10)) ]; then
		# The bytes are right; the server declined to resume many of the
		# sessions offered (hsload offers the newest ticket it was given).
		note="$note; RESUMED ONLY $((100 * res / (hs > 0 ? hs : 1)))%"
	elif [ "$resume" = 0 ] && [ "$res" != 0 ]; then
		ver=FAIL note="$note; some were resumed"
	fi
	row handshake "$cell" rate handshakes/s "$(fdiv "$ok" "$secs" 1)" \
		"$(fdiv "$ok" "$M_CPU" 1)" handshakes/cpu-s "$ver" "$note"
}

# cell_small_h1 CELL: 1 KiB over keep-alive, HTTP/1.1, wrk.
cell_small_h1() {
	local cell=$1 out req bytes errs per ver=size conf
	conf=$(client_conf 1.3 aes128gcm)
	note_cmd "OPENSSL_CONF=$(basename "$conf") wrk -t1 -c$SMALL_CONNS -d${DUR}s -s bench/tools/wrk-summary.lua https://127.0.0.1:PORT/1k.bin   # $cell"
	m_begin
	out=$(OPENSSL_CONF=$conf on_client wrk -t1 -c"$SMALL_CONNS" -d"${DUR}s" \
		-s "$HERE/tools/wrk-summary.lua" "https://127.0.0.1:$SRV_PORT/1k.bin" 2>&1)
	m_end
	req=$(sed -n 's/^SUMMARY requests=\([0-9]*\).*/\1/p' <<<"$out")
	bytes=$(sed -n 's/^SUMMARY.* bytes=\([0-9]*\).*/\1/p' <<<"$out")
	errs=$(sed -n 's/^SUMMARY.* errors=\([0-9]*\).*/\1/p' <<<"$out")
	per=$(fdiv "$bytes" "$req" 0)
	# Each response is the 1024-byte body plus a header of some 100-600 bytes.
	if [ -z "$req" ] || [ "$req" = 0 ] || [ "${errs:-1}" != 0 ] || [ "$per" -lt 1100 ] || [ "$per" -gt 1700 ]; then
		ver=FAIL
	fi
	row small "$cell" rate requests/s "$(fdiv "$req" "$M_WALL" 1)" \
		"$(fdiv "$req" "$M_CPU" 1)" requests/cpu-s "$ver" "bytes per response $per; errors ${errs:-?}"
}

# cell_small_h2 CELL: 1 KiB over keep-alive, HTTP/2, h2load.
cell_small_h2() {
	local cell=$1 out done_ data secs ver=size conf
	if [ "$H2_OK" != yes ]; then
		na_row small "$cell" rate requests/s "server does not offer h2 in ALPN"
		return
	fi
	conf=$(client_conf 1.3 aes128gcm)
	note_cmd "OPENSSL_CONF=$(basename "$conf") h2load -t1 -c$H2_CONNS -m$H2_STREAMS -D$DUR https://127.0.0.1:PORT/1k.bin   # $cell"
	m_begin
	out=$(OPENSSL_CONF=$conf on_client h2load -t1 -c"$H2_CONNS" -m"$H2_STREAMS" -D"$DUR" \
		"https://127.0.0.1:$SRV_PORT/1k.bin" 2>&1)
	m_end
	done_=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	data=$(sed -n 's/^traffic: .* (\([0-9]*\)) data.*/\1/p' <<<"$out")
	secs=$(sed -n 's/^finished in \([0-9.]*\)s,.*/\1/p' <<<"$out")
	if ! grep -q 'Application protocol: h2' <<<"$out"; then
		na_row small "$cell" rate requests/s "h2 was not negotiated"
		return
	fi
	if [ -z "$done_" ] || [ "$done_" = 0 ] || [ "$data" != $((done_ * 1024)) ]; then
		ver=FAIL
	fi
	row small "$cell" rate requests/s "$(fdiv "$done_" "$secs" 1)" \
		"$(fdiv "$done_" "$M_CPU" 1)" requests/cpu-s "$ver" "data bytes $data for $done_ responses"
}

# cell_download GROUP CELL SCHEME PROTO CIPHER CONC FILE: CONC concurrent
# curl downloads of FILE (one connection each). SCHEME https or http.
# verify_download URL SHA_FILE OPENSSL_CONF [CURL_FLAG]: one download of
# URL, every byte checked against the SHA-256 in SHA_FILE, and the cipher it
# negotiated; sets ver (sha256+size or FAIL) and adds to note.
verify_download() {
	local url=$1 want got line
	want=$(cat "$2")
	# shellcheck disable=SC2086 # $4 is an optional flag
	got=$(OPENSSL_CONF=$3 on_client curl -sk ${4:-} --max-time 120 "$url" | sha256sum | cut -d' ' -f1)
	# shellcheck disable=SC2086
	line=$(OPENSSL_CONF=$3 curl -sk -v ${4:-} -o /dev/null --max-time 5 -r 0-0 "$url" 2>&1 |
		sed -n 's/^\* SSL connection using //p' | head -n1)
	if [ "$got" = "$want" ]; then ver=sha256+size; else ver=FAIL note="${note}sha256 mismatch; "; fi
	note="${note}negotiated ${line:-plain}; "
}

# count_downloads N SIZE: of the N downloads whose curl -w lines ("code
# bytes version") are in $WORK/dl.0 .. dl.N-1, adds the bytes to total and
# counts in bad those that were not a 200 of SIZE bytes; sets v to the
# last one's HTTP version.
count_downloads() {
	local i code got
	for ((i = 0; i < $1; i++)); do
		read -r code got v <"$WORK/dl.$i"
		total=$((total + ${got:-0}))
		if [ "$code" != 200 ] || [ "$got" != "$2" ]; then bad=$((bad + 1)); fi
	done
}

cell_download() {
	local group=$1 cell=$2 scheme=$3 proto=$4 cipher=$5 conc=$6 file=$7
	local port=$SRV_PORT pflag=--http1.1 conf=/dev/null i size v ver=size note="" total=0 bad=0
	local code v
	[ "$scheme" = http ] && port=$SRV_PLAIN
	if [ "$proto" = h2 ]; then
		if [ "$H2_OK" != yes ]; then
			na_row "$group" "$cell" throughput GB/s "server does not offer h2 in ALPN"
			return
		fi
		pflag=--http2
	fi
	[ "$scheme" = https ] && conf=$(client_conf 1.3 "$cipher")
	size=$(stat -c %s "$ROOT/$file")
	local url="$scheme://127.0.0.1:$port/$file"
	# First repetition: one verified download (SHA-256 of every byte, the
	# cipher actually negotiated); it is also the warm-up.
	[ "$REP" = 1 ] && verify_download "$url" "$WORK/sha/$file" "$conf" $pflag
	note_cmd "OPENSSL_CONF=$(basename "$conf") curl -sk $pflag -o /dev/null $scheme://127.0.0.1:PORT/$file   # x$conc  $cell"
	local pids=()
	# Into the page cache first, outside the measured window: some VMs
	# (this project's, seen losing most of a 1 GiB file's pages within a
	# minute of idle with 22 GB free) drop cached pages on their own, and the
	# server that ran first after such a gap paid its disk reads as CPU.
	on_client cat "$ROOT/$file" >/dev/null
	m_begin
	for ((i = 0; i < conc; i++)); do
		OPENSSL_CONF=$conf on_client curl -sk $pflag --max-time 300 -o /dev/null \
			-w '%{http_code} %{size_download} %{http_version}\n' "$url" >"$WORK/dl.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	m_end
	count_downloads "$conc" "$size"
	[ $bad -gt 0 ] && ver=FAIL note="$note$bad of $conc downloads short or failed; "
	row "$group" "$cell" throughput GB/s "$(fdiv "$total" "$(awk -v w="$M_WALL" 'BEGIN{print w*1e9}')" 3)" \
		"$(fdiv "$total" "$(awk -v c="$M_CPU" 'BEGIN{print c*1e9}')" 3)" GB/cpu-s "$ver" \
		"${note}http_version ${v:-?}"
}

# cell_idle_rss CELL N: memory of the server with N idle keep-alive TLS
# connections (each made one request first). Bounded: the client gets
# N / 100 + 60 seconds to open them (10,000 took 12 s here), and the cell
# is n/a where N connections need more file descriptors than the hard
# limit allows (the server raises its own limit to it; nginx and h2o are
# configured for 65,536 and 16,384).
cell_idle_rss() {
	local cell=$1 n=$2 before after out peak rss
	if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((n + 64)) ]; then
		na_row memory "$cell" pss_per_conn KiB "needs $((n + 64)) file descriptors; hard limit $(ulimit -Hn)"
		return
	fi
	before=$(mem_kib "$SRV_PID")
	note_cmd "python3 bench/tools/idleconns.py 127.0.0.1 PORT $n   # $cell"
	M_CPU='' M_WALL='' M_OTHER='' M_CLIENT=''
	# Not through on_client: $! must be python itself, to be killed below
	# (the subshell raises its descriptor limit and execs it).
	(
		ulimit -n "$(ulimit -Hn)"
		exec taskset -c "$CLIENT_CPUS" "$PY" "$HERE/tools/idleconns.py" 127.0.0.1 "$SRV_PORT" "$n" \
			"$WORK/idle.ready"
	) >"$WORK/idle.out" 2>&1 &
	local cpid=$! i
	echo "$cpid" >>"$WORK/pids"
	for ((i = 0; i < (n / 100 + 60) * 10; i++)); do
		[ -f "$WORK/idle.ready" ] && break
		kill -0 $cpid 2>/dev/null || break
		sleep 0.1
	done
	sleep 1 # the server's timer tick gives back what the last requests took
	after=$(mem_kib "$SRV_PID")
	rss=$(rss_kib "$SRV_PID")
	peak=$(peak_rss_kib "$SRV_PID")
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	rm -f "$WORK/idle.ready"
	out=$(tail -n1 "$WORK/idle.out")
	local ver=size
	grep -q "^open=$n " <<<"$out" || ver=FAIL
	row memory "$cell" peak_rss MiB "$(fdiv "$peak" 1024 1)" "" "" "$ver" "VmHWM of the server's processes; summed"
	row memory "$cell" rss_total MiB "$(fdiv "$rss" 1024 1)" "" "" "$ver" "VmRSS of the server's processes with the connections open; summed"
	row memory "$cell" pss_total MiB "$(fdiv "$after" 1024 1)" "" "" "$ver" "proportional set size; before the connections ${before} KiB; $out"
	row memory "$cell" pss_per_conn KiB "$(fdiv "$((after - before))" "$n" 1)" "" "" "$ver" "(PSS with - PSS before) / connections"
}

# strace_server TRACE: attach strace to every thread of the running server
# (io-wq workers included), writing TRACE; STRACE_PID is its pid. Waits a
# moment so the attach is done before the load starts.
strace_server() {
	local t task tids=()
	for t in $(tree_pids "$SRV_PID"); do
		for task in /proc/"$t"/task/*; do tids+=(-p "${task##*/}"); done
	done
	strace -f -qq -o "$1" "${tids[@]}" 2>/dev/null &
	STRACE_PID=$!
	sleep 0.5
}

# strace_done: detach (after the last calls are written).
strace_done() {
	sleep 0.3
	kill -INT "$STRACE_PID" 2>/dev/null
	wait "$STRACE_PID" 2>/dev/null
}

# cell_cost CELL SCHEME FILE: syscalls (ktlsd: also ring operations) per
# MiB of FILE and median bytes per send call, from one download under
# strace. Needs the server to be stopped afterwards with srv_stop wait
# (ktlsd prints its counters then); call cost_finish after that.
cell_cost() {
	local cell=$1 scheme=$2 file=$3 port=$SRV_PORT conf
	[ "$scheme" = http ] && port=$SRV_PLAIN
	COST_CELL=$cell COST_FILE=$file
	COST_TRACE="$WORK/cost.$RANDOM.strace"
	strace_server "$COST_TRACE"
	note_cmd "strace -f -p SERVER_TIDS -o trace; curl -sk --http1.1 -o /dev/null $scheme://127.0.0.1:PORT/$file   # $cell"
	conf=$(client_conf 1.3 aes128gcm)
	COST_GOT=$(OPENSSL_CONF=$conf on_client curl -sk --http1.1 --max-time 120 -o /dev/null \
		-w '%{size_download}' "$scheme://127.0.0.1:$port/$file")
	strace_done
}

# cell_cost_small CELL N: N requests for the 1 KiB file over HTTPS keep-alive
# from 100 HTTP/1.1 connections at once (h2load --h1), under strace: syscalls
# per request in the steady state (a warm-up first, so open-file caches
# are filled). Reported at once; the server is stopped by the caller.
cell_cost_small() {
	local cell=$1 n=$2 trace out done_ ver=size conf
	conf=$(client_conf 1.3 aes128gcm)
	OPENSSL_CONF=$conf on_client h2load --h1 -t1 -c10 -n1000 \
		"https://127.0.0.1:$SRV_PORT/1k.bin" >/dev/null 2>&1
	trace="$WORK/cost-small.$RANDOM.strace"
	strace_server "$trace"
	note_cmd "strace -f -p SERVER_TIDS -o trace; h2load --h1 -t1 -c100 -n$n https://127.0.0.1:PORT/1k.bin   # $cell"
	M_CPU='' M_WALL='' M_OTHER='' M_CLIENT=''
	out=$(OPENSSL_CONF=$conf on_client timeout -k 5 120 h2load --h1 -t1 -c100 -n"$n" \
		"https://127.0.0.1:$SRV_PORT/1k.bin" 2>&1)
	strace_done
	done_=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	[ "${done_:-0}" = "$n" ] || ver=FAIL
	"$PY" "$HERE/tools/strace_cost.py" "$trace" "req:$n" "$(srv_kind "$SERVER")" |
		while IFS='|' read -r metric unit value note; do
			row cost "$cell" "$metric" "$unit" "$value" "" "" "$ver" "$note"
		done
	rm -f "$trace"
}

cost_finish() {
	local size mib stats
	size=$(stat -c %s "$ROOT/$COST_FILE")
	mib=$(fdiv "$size" 1048576 3)
	stats=$(grep -h 'worker 0 stats:' "$SRV_RUN"/*.log 2>/dev/null | tail -n1)
	M_CPU='' M_WALL='' M_OTHER='' M_CLIENT=''
	local ver=size
	[ "$COST_GOT" = "$size" ] || ver=FAIL
	"$PY" "$HERE/tools/strace_cost.py" "$COST_TRACE" "$mib" "$(srv_kind "$SERVER")" "$stats" | while IFS='|' read -r metric unit value note; do
		row cost "$COST_CELL" "$metric" "$unit" "$value" "" "" "$ver" "$note"
	done
	rm -f "$COST_TRACE"
}

# cell_many CELL N FILE: N concurrent plain-HTTP downloads of FILE, one
# connection each, all open at once (h2load: one client thread, epoll, cheap
# on the client core). For ktlsd builds started as --user nobody (issue 10):
# throughput, server CPU-seconds per GB, and (many_finish, after srv_stop
# wait) ring operations per MiB from the counters ktlsd prints on exit.
cell_many() {
	local cell=$1 n=$2 file=$3 size out ok s2xx data want got ver=size note="" need
	size=$(stat -c %s "$ROOT/$file")
	local url="http://127.0.0.1:$SRV_PLAIN/$file"
	MANY_CELL=$cell MANY_VER=FAIL
	# First repetition: one download checked byte for byte (it also counts
	# in the server's totals, as 1/N of the bytes).
	if [ "$REP" = 1 ]; then
		want=$(cat "$WORK/sha/$file")
		got=$(on_client curl -s --max-time 60 "$url" | sha256sum | cut -d' ' -f1)
		if [ "$got" = "$want" ]; then ver=sha256+size; else ver=FAIL note="sha256 mismatch; "; fi
	fi
	# The point of the cell: the server really runs as nobody.
	local uid want_uid
	uid=$(awk '$1 == "Uid:" { print $2 }' /proc/"$SRV_PID"/status 2>/dev/null)
	want_uid=$(id -u nobody 2>/dev/null)
	if [ -z "$uid" ] || [ "$uid" != "$want_uid" ]; then
		ver=FAIL note="${note}server uid ${uid:-?}, not nobody's ${want_uid:-?}; "
	fi
	need=$((n + 256))
	note_cmd "ulimit -n $need; h2load --h1 -t1 -c$n -n$n http://127.0.0.1:PORT/$file   # $cell (server: ktlsd ... --user nobody)"
	on_client cat "$ROOT/$file" >/dev/null # cached first, as in cell_download
	m_begin
	out=$(
		cur=$(ulimit -n)
		if [ "$cur" != unlimited ] && [ "$cur" -lt "$need" ]; then
			ulimit -n "$need" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"
		fi
		timeout -k 5 300 taskset -c "$CLIENT_CPUS" h2load --h1 -t1 -c"$n" -n"$n" "$url" 2>&1
	)
	m_end
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	s2xx=$(sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p' <<<"$out")
	data=$(sed -n 's/^traffic: .* (\([0-9]*\)) data.*/\1/p' <<<"$out")
	# Every download complete, every answer a 2xx, every body byte there.
	if [ "${ok:-0}" != "$n" ] || [ "${s2xx:-0}" != "$n" ] || [ "${data:-0}" != $((n * size)) ]; then
		ver=FAIL
		note="${note}${ok:-?} of $n succeeded; ${s2xx:-?} 2xx; ${data:-?} body bytes of $((n * size)); $(grep -i 'error\|fail' <<<"$out" | grep -v '^requests:' | head -n1 | head -c 200); "
	fi
	MANY_VER=$ver
	row many "$cell" throughput MB/s "$(fdiv "${data:-0}" "$(awk -v w="$M_WALL" 'BEGIN{print w*1e6}')" 1)" \
		"$(fdiv "${data:-0}" "$(awk -v c="$M_CPU" 'BEGIN{print c*1e6}')" 1)" MB/cpu-s "$ver" \
		"${note}server uid $uid; $ok downloads of $size bytes at once; body bytes $data"
	row many "$cell" cpu_s_per_gb cpu-s/GB "$(fdiv "$M_CPU" "$(fdiv "${data:-0}" 1e9 9)" 3)" "" "" "$ver" \
		"server CPU-seconds (all threads) per 10^9 body bytes"
}

# many_finish: after srv_stop wait, ring operations per MiB served, summed
# over the workers' exit counters: (send_ops + splice_ops + read_ops) /
# (bytes_out / MiB). Issue 10 asks for at most 4.
many_finish() {
	local sums ops mib note ver=$MANY_VER
	M_CPU='' M_WALL='' M_OTHER='' M_CLIENT=''
	# "worker N stats: ... bytes_out=B ... send_ops=S splice_ops=P read_ops=R recv_ops=V ..."
	sums=$(grep -h 'worker [0-9]* stats:' "$SRV_RUN"/*.log 2>/dev/null | awk '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[2] != "") v[kv[1]] += kv[2] } ; n++ }
		END { if (n) printf "%d %.0f %.0f %.0f %.0f %.0f\n", n, v["bytes_out"], v["send_ops"], v["splice_ops"], v["read_ops"], v["recv_ops"] }')
	if [ -z "$sums" ]; then
		row many "$MANY_CELL" ring_ops_per_mib ops/MiB n/a "" "" "$ver" "ktlsd printed no counters on exit"
		return
	fi
	local nw out send splice read recv
	read -r nw out send splice read recv <<<"$sums"
	mib=$(fdiv "$out" 1048576 6)
	ops=$(fdiv "$((send + splice + read))" "$mib" 2)
	note="$nw worker(s): send $send splice $splice read $read over $out bytes out (recv $recv not counted)"
	if [ -n "$ops" ] && awk -v o="$ops" 'BEGIN { exit !(o <= 4) }'; then
		note="$note; issue 10 (at most 4/MiB): met"
	else
		note="$note; issue 10 (at most 4/MiB): NOT MET"
	fi
	row many "$MANY_CELL" ring_ops_per_mib ops/MiB "${ops:-n/a}" "" "" "$ver" "$note"
}
