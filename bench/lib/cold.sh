# shellcheck shell=bash
# The cold-file cell (issue 22): COLD concurrent downloads of distinct files
# of COLD_MIB MiB each that are not in the page cache, read from a real disk
# (a folder under /var/tmp, never tmpfs), while a probe fetches a cached
# 1 KiB file on one keep-alive TLS connection every 5 ms. A server whose
# event loop waits for the disk shows it in the probe's latency; one that
# reads in the background does not. Also measured, in each repetition: the
# disk's own limit, the same files read cold by dd, in parallel and in turn.
#
# Pages are dropped per file (bench/tools/evict.py: fdatasync, then
# POSIX_FADV_DONTNEED) right before each measurement rather than with
# /proc/sys/vm/drop_caches, which would empty the page cache of everything
# else on a shared machine too; fincore (util-linux) checks that they went.
#
# Globals: COLD, COLD_MIB (bench/run); COLD_DIR (the files' folder, set by
# cold_setup and removed by bench/run's cleanup); COLD_WHY (why the cell
# cannot run here); PROBE_PRIO (how the probe is started: a real-time
# priority where we may, so that its wake-ups are not queued behind the
# downloads on the client core and its latency is the server's); and the
# cells' globals (lib/cells.sh).

COLD_BASE=/var/tmp
PROBE_MS=5

# cold_label: "8x256MiB", for the cell names.
# shellcheck disable=SC2153 # COLD_MIB is set by bench/run
cold_label() { echo "${COLD}x${COLD_MIB}MiB"; }

# cold_files: the paths of the cold files, one a line.
cold_files() {
	local i
	for ((i = 0; i < COLD; i++)); do echo "$COLD_DIR/root/cold$i.bin"; done
}

# cold_setup: the cold files (random bytes, as the other test files) and
# the probe's 1 KiB file in a root folder of their own on disk. Returns 1,
# with COLD_WHY set, where that cannot be done.
# shellcheck disable=SC2034 # COLD_WHY is read by bench/run
cold_setup() {
	local fs need avail i f
	fs=$(df --output=fstype "$COLD_BASE" 2>/dev/null | tail -n1)
	case $fs in
	tmpfs | ramfs | '') COLD_WHY="$COLD_BASE is ${fs:-missing}, not a disk"; return 1 ;;
	esac
	need=$((COLD * COLD_MIB * 1024 + 262144))
	avail=$(df -Pk "$COLD_BASE" | awk 'NR == 2 { print $4 }')
	if [ "${avail:-0}" -lt "$need" ]; then
		COLD_WHY="needs $((need / 1024)) MiB free in $COLD_BASE; $((${avail:-0} / 1024)) MiB there"
		return 1
	fi
	if ! COLD_DIR=$(mktemp -d "$COLD_BASE/ktlsd-bench-cold.XXXXXX"); then
		COLD_WHY="cannot create a folder in $COLD_BASE"
		return 1
	fi
	# Peers serve as nobody (nginx's workers, h2o): let them read.
	if ! chmod 755 "$COLD_DIR" || ! mkdir "$COLD_DIR/root" ||
		! cp "$ROOT/1k.bin" "$COLD_DIR/root/"; then
		COLD_WHY="cannot fill $COLD_DIR"
		return 1
	fi
	local t0=$SECONDS
	for ((i = 0; i < COLD; i++)); do
		f="$COLD_DIR/root/cold$i.bin"
		random_file "$f" $((COLD_MIB * 1048576)) "cold$i" || { COLD_WHY="cannot write $f"; return 1; }
	done
	chmod 644 "$COLD_DIR"/root/*
	sha256sum "$COLD_DIR/root/cold0.bin" | cut -d' ' -f1 >"$WORK/sha/cold0.bin"
	# Written back now, not in the first measurement.
	cold_evict >/dev/null
	PROBE_PRIO=()
	if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then
		PROBE_PRIO=(chrt -f 10)
	fi
	log "cold files ready: $COLD x $COLD_MIB MiB in $COLD_DIR ($fs; $((SECONDS - t0)) s to write)"
}

# cold_evict: drop the cold files' pages; prints how many KiB of them are
# still cached afterwards (empty without fincore).
cold_evict() {
	local files
	mapfile -t files < <(cold_files)
	"$PY" "$HERE/tools/evict.py" "${files[@]}" || return 1
	command -v fincore >/dev/null || return 0
	fincore -b -n -o RES "${files[@]}" 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s / 1024 }'
}

# cold_dd_all: read every cold file with dd (buffered, 1 MiB reads, as a
# server reads through the page cache) on the client cores, all at once
# (par) or one after another (seq).
cold_dd_all() {
	local f pids=()
	while read -r f; do
		if [ "$1" = par ]; then
			on_client dd if="$f" of=/dev/null bs=1M status=none &
			pids+=($!)
		else
			on_client dd if="$f" of=/dev/null bs=1M status=none
		fi
	done < <(cold_files)
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
}

# cold_ceiling: what the disk gives with no server in the way: the cold
# files read by dd right after the eviction, all at once and then one after
# another. Both, because a server that serves its connections in turn
# reads more like the second: on the development VM (a virtual disk) 8
# reads at once gave 530-2,650 MB/s, one at a time 1,040-2,150 MB/s. The
# report takes the better of the two as the ceiling.
cold_ceiling() {
	local cell res t0 t1 wall v how label
	for how in par seq; do
		label="all at once"
		[ "$how" = seq ] && label="one after another"
		cell="cold disk $(cold_label) dd $label"
		res=$(cold_evict)
		note_cmd "python3 bench/tools/evict.py FILES; dd if=FILE of=/dev/null bs=1M, for every file, $label   # $cell"
		t0=$(now_s)
		cold_dd_all "$how"
		t1=$(now_s)
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
		v=$(fdiv "$((COLD * COLD_MIB * 1048576))" "$(awk -v w="$wall" 'BEGIN { print w * 1e6 }')" 1)
		raw_row cold "$cell" machine "$REP" throughput MB/s "$v" "" "$wall" "" "" - "" "" \
			"dd: the $COLD files of $COLD_MIB MiB read cold; $label; still cached before: ${res:-?} KiB"
		log "rep $REP/$REPS disk: $v MB/s ($COLD x $COLD_MIB MiB cold, dd $label)"
	done
}

# cold_probe_start: the probe, on the client cores, on its own keep-alive
# HTTPS connection (TLS 1.3, AES-128-GCM, as the downloads); PROBE_PID.
# Returns 1 if it did not get ready within 10 s.
cold_probe_start() {
	local conf i
	conf=$(client_conf 1.3 aes128gcm)
	rm -f "$WORK/probe.ready"
	# Not through on_client: $! must be python itself, to be signalled.
	(
		export OPENSSL_CONF=$conf
		exec taskset -c "$CLIENT_CPUS" "${PROBE_PRIO[@]}" "$PY" "$HERE/tools/probe.py" 127.0.0.1 \
			"$SRV_PORT" /1k.bin "$COLD_DIR/root/1k.bin" "$WORK/probe.ready" "$PROBE_MS"
	) >"$WORK/probe.out" 2>&1 &
	PROBE_PID=$!
	echo "$PROBE_PID" >>"$WORK/pids"
	for ((i = 0; i < 100; i++)); do
		[ -f "$WORK/probe.ready" ] && return 0
		kill -0 "$PROBE_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# cell_cold CELL SCHEME PROTO: the cold downloads (curl, one connection
# each; SCHEME https or http, PROTO h1 or h2) of the server started last,
# with the probe running. Rows: throughput (MB/s), the server's CPU-seconds
# and CPU-seconds per GB, the probe's p50, p99 and max latency (ms).
cell_cold() {
	local cell=$1 scheme=$2 proto=$3 port=$SRV_PORT pflag=--http1.1 conf=/dev/null
	local size=$((COLD_MIB * 1048576)) ver=size note="" total=0 bad=0 i v res
	[ "$scheme" = http ] && port=$SRV_PLAIN
	if [ "$proto" = h2 ]; then
		if [ "$H2_OK" != yes ]; then
			na_row cold "$cell" throughput MB/s "server does not offer h2 in ALPN"
			return
		fi
		pflag=--http2
	fi
	[ "$scheme" = https ] && conf=$(client_conf 1.3 aes128gcm)
	local base="$scheme://127.0.0.1:$port"
	# First repetition: one download checked byte for byte (the others are
	# checked by status and size); evicted again below with the rest.
	[ "$REP" = 1 ] && verify_download "$base/cold0.bin" "$WORK/sha/cold0.bin" "$conf" $pflag
	if ! cold_probe_start; then
		kill -KILL "$PROBE_PID" 2>/dev/null
		wait "$PROBE_PID" 2>/dev/null
		na_row cold "$cell" throughput MB/s "the probe did not start: $(head -c 200 "$WORK/probe.out" | tr '\n' ' ')"
		return
	fi
	res=$(cold_evict)
	if [ -n "$res" ] && [ "$res" -gt $((COLD * COLD_MIB * 1024 / 100)) ]; then
		ver=FAIL note="${note}NOT COLD: $res KiB of the files still cached; "
	fi
	note_cmd "python3 bench/tools/evict.py FILES; python3 bench/tools/probe.py 127.0.0.1 PORT /1k.bin 1k.bin READY $PROBE_MS & OPENSSL_CONF=$(basename "$conf") curl -sk $pflag -o /dev/null $scheme://127.0.0.1:PORT/coldI.bin   # I = 0..$((COLD - 1)) at once; $cell"
	local pids=()
	m_begin
	kill -USR1 "$PROBE_PID"
	for ((i = 0; i < COLD; i++)); do
		OPENSSL_CONF=$conf on_client curl -sk $pflag --max-time 300 -o /dev/null \
			-w '%{http_code} %{size_download} %{http_version}\n' "$base/cold$i.bin" >"$WORK/dl.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	kill -TERM "$PROBE_PID"
	m_end
	wait "$PROBE_PID"
	count_downloads "$COLD" "$size"
	[ $bad -gt 0 ] && ver=FAIL note="$note$bad of $COLD downloads short or failed; "
	note="${note}http_version ${v:-?}; still cached before: ${res:-?} KiB"
	local mb gb
	mb=$(awk -v w="$M_WALL" 'BEGIN { print w * 1e6 }')
	gb=$(fdiv "$total" 1e9 9)
	row cold "$cell" throughput MB/s "$(fdiv "$total" "$mb" 1)" \
		"$(fdiv "$total" "$(awk -v c="$M_CPU" 'BEGIN { print c * 1e6 }')" 1)" MB/cpu-s "$ver" "$note"
	row cold "$cell" cpu_s s "$M_CPU" "" "" "$ver" \
		"server CPU-seconds (all processes and threads, io-wq included) over the downloads"
	row cold "$cell" cpu_s_per_gb cpu-s/GB "$(fdiv "$M_CPU" "$gb" 3)" "" "" "$ver" \
		"server CPU-seconds per 10^9 body bytes"
	cold_probe_rows "$cell"
}

# cold_probe_rows CELL: the probe's line as rows (p50, p99, max in ms).
cold_probe_rows() {
	local out n errs closed pver=size k
	out=$(tail -n1 "$WORK/probe.out")
	n=$(sed -n 's/^n=\([0-9]*\) .*/\1/p' <<<"$out")
	errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$out")
	closed=$(sed -n 's/.* closed=\([0-9]*\).*/\1/p' <<<"$out")
	if [ "${n:-0}" = 0 ] || [ "${errs:-1}" != 0 ] || [ "${closed:-1}" != 0 ]; then pver=FAIL; fi
	for k in p50 p99 max; do
		row cold "$1" "probe_${k}_ms" ms "$(sed -n "s/.* ${k}_ms=\([0-9.]*\).*/\1/p" <<<"$out")" "" "" "$pver" \
			"probe: GET /1k.bin every $PROBE_MS ms on one keep-alive TLS connection${PROBE_PRIO[*]:+ (${PROBE_PRIO[*]})}; $(head -c 300 <<<"$out")"
	done
}
