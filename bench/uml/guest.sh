#!/bin/bash
# The kTLS matrix, run inside the user-mode-Linux guest by bench/uml/init:
# ktlsd and nginx in the same boot, kTLS on/off x sendfile on/off x
# HTTP/1.1 and HTTP/2, one download of a MIB-MiB random file each.
#
# Timings in UML mean nothing for a real machine (a syscall costs ~80 us,
# the kernel's AES is plain C); counts carry over. So each combination
# records, per MiB: syscalls (strace; ktlsd also its ring operations), TLS
# records and their median size (counted off the wire by tlsfetch.py),
# bytes copied through user space; whether the kernel did the encryption
# (/proc/net/tls_stat TlsTxSw); and throughput, labelled a curiosity.
#
# Environment (from the kernel command line): BENCHDIR (host folder with
# ktlsd, tools/, conf/, certs/; results/rows.csv is written there), MIB,
# NGINX (binary), SERVERS (comma-separated: ktlsd,ktlsd-base,nginx; a space
# would end the kernel argument). ktlsd-base is a second ktlsd build
# (bench/run --ktlsd-baseline), in BENCHDIR/ktlsd-base.
set -u
B=$BENCHDIR
R=$B/results
W=/run/bench
PY=/usr/bin/python3
MIB=${MIB:-8}
mkdir -p "$W/root" "$W/nginx/tmp"
: >"$R/rows.csv"

openssl enc -aes-128-ctr -nosalt -pass pass:uml -in /dev/zero 2>/dev/null | head -c $((MIB << 20)) >"$W/root/f.bin"
SHA=$(sha256sum "$W/root/f.bin" | cut -d' ' -f1)
echo "file: $MIB MiB, sha256 $SHA"
PORT=8443

row() { # cell server metric unit value verified note
	printf 'ktls,%s,%s,1,%s,%s,%s,,,,,%s,,,%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7//,/;}" >>"$R/rows.csv"
}

tree_pids() {
	local k
	echo "$1"
	# shellcheck disable=SC2013 # children holds PIDs separated by spaces
	for k in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree_pids "$k"; done
}

wait_port() {
	local i
	for ((i = 0; i < 200; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

tx_sw() {
	awk '$1 == "TlsTxSw" {print $2}' /proc/net/tls_stat 2>/dev/null || echo 0
}

start_server() { # server ktls sendfile
	LOGF=$W/$1.log
	: >"$LOGF"
	case $1 in
	ktlsd | ktlsd-base)
		"$B/$1" --root "$W/root" --listen "127.0.0.1:$PORT" --cert "$B/certs/ec.pem" \
			--key "$B/certs/ec.key" --workers 1 --ktls "$2" --sendfile "$3" \
			--tls-session-cache 20000 --access-log off --error-log "$LOGF" </dev/null >/dev/null 2>&1 &
		SPID=$!
		;;
	nginx)
		local kt=
		[ "$2" = on ] && kt="ssl_conf_command Options KTLS;"
		sed -e "s|@RUN@|$W/nginx|g; s|@SENDFILE@|$3|; s|@CERT@|$B/certs/ec.pem|; s|@KEY@|$B/certs/ec.key|" \
			-e "s|@PROTOCOLS@|TLSv1.2 TLSv1.3|; s|@CIPHERS12@|$TLS12|; s|@CIPHERS13@|$TLS13|" \
			-e "s|@KTLS@|$kt|; s|@AIO@||; s|@PORT@|$PORT|; s|@PLAINPORT@|8080|; s|@H2@|http2|; s|@ROOT@|$W/root|" \
			"$B/conf/nginx.conf.in" >"$W/nginx/nginx.conf"
		"$NGINX" -p "$W/nginx" -c "$W/nginx/nginx.conf" -e "$LOGF" </dev/null >/dev/null 2>&1 &
		SPID=$!
		;;
	esac
	wait_port "$PORT"
}

stop_server() {
	local i
	kill -TERM "$SPID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
}

TLS12=ECDHE-ECDSA-AES128-GCM-SHA256
TLS13=TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
for srv in ${SERVERS//,/ }; do
	# Does it offer h2 at all? Ask once, not in each of the four h2 cells.
	h2=no
	if start_server "$srv" off on; then
		OPENSSL_CONF=$B/client.cnf "$PY" "$B/tools/tlsfetch.py" 127.0.0.1 "$PORT" /f.bin h2 2>&1 |
			grep -q '^alpn=h2 ' && h2=yes
	fi
	stop_server
	for ktls in on off; do
		for sf in on off; do
			for proto in h1 h2; do
				cell="$proto kTLS $ktls sendfile $sf"
				echo "== $srv $cell"
				if [ "$proto" = h2 ] && [ "$h2" = no ]; then
					row "$cell" "$srv" records_per_mib records/MiB n/a "" "server does not offer h2 in ALPN"
					continue
				fi
				if ! start_server "$srv" "$ktls" "$sf"; then
					row "$cell" "$srv" syscalls_per_mib calls/MiB n/a FAIL "did not start: $(tail -n2 "$LOGF" | tr '\n' ' ')"
					stop_server
					continue
				fi
				tids=()
				for p in $(tree_pids "$SPID"); do
					for t in /proc/"$p"/task/*; do tids+=(-p "${t##*/}"); done
				done
				before=$(tx_sw)
				strace -f -qq -o "$W/trace" "${tids[@]}" 2>/dev/null &
				st=$!
				sleep 0.8
				out=$(OPENSSL_CONF=$B/client.cnf "$PY" "$B/tools/tlsfetch.py" 127.0.0.1 "$PORT" /f.bin "$proto" "$SHA" 2>&1 | tail -n1)
				sleep 0.5
				kill -INT $st 2>/dev/null
				wait $st 2>/dev/null
				after=$(tx_sw)
				stop_server
				echo "$out"
				get() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" <<<"$out"; }
				if [ "$proto" = h2 ] && [ "$(get alpn)" != h2 ]; then
					row "$cell" "$srv" records_per_mib records/MiB n/a "" "server does not offer h2 in ALPN"
					continue
				fi
				ver=sha256+size
				[ "$(get sha_ok)" = 1 ] || ver=FAIL
				body=$(get body)
				mib=$(awk -v b="${body:-0}" 'BEGIN { printf "%.3f", (b > 0 ? b : 1) / 1048576 }')
				ktx=no
				[ "$((after - before))" -gt 0 ] && ktx=yes
				note="$(get version) $(get cipher); kernel TLS TX: $ktx"
				row "$cell" "$srv" records_per_mib records/MiB "$(get records_per_mib)" "$ver" "$note"
				row "$cell" "$srv" median_record_bytes bytes "$(get median_record)" "$ver" "ciphertext bytes per record"
				stats=$(grep -h 'worker 0 stats:' "$LOGF" | tail -n1)
				kind=$srv
				[ "$srv" = ktlsd-base ] && kind=ktlsd
				"$PY" "$B/tools/strace_cost.py" "$W/trace" "$mib" "$kind" "$stats" |
					while IFS='|' read -r metric unit value n; do
						row "$cell" "$srv" "$metric" "$unit" "$value" "$ver" "$n"
					done
				secs=$(get seconds)
				row "$cell" "$srv" throughput_curiosity MB/s \
					"$(awk -v b="${body:-0}" -v s="${secs:-0}" 'BEGIN { if (s > 0) printf "%.1f", b / s / 1e6 }')" \
					"$ver" "inside UML with strace attached: not a speed"
				rm -f "$W/trace"
			done
		done
	done
done
echo "all combinations done"
