# shellcheck shell=bash
# Getting ready: Debian packages, the ktlsd binary, the peers, certificates
# and test files, CPU pinning, versions; and the limits of this machine
# (crypto speed of one core, loopback TCP between two cores).

# Debian packages per command the harness runs.
declare -A PKG_OF=(
	[nginx]=nginx [h2o]=h2o [wrk]=wrk [h2load]=nghttp2-client [curl]=curl
	[gnuplot]=gnuplot-nox [pidstat]=sysstat [strace]=strace [iperf3]=iperf3
	[linux.uml]=user-mode-linux [modprobe]=kmod [taskset]=util-linux [cc]=gcc
	[lighttpd]=lighttpd [caddy]=caddy
)

setup_tools() {
	local want=(curl wrk h2load gnuplot taskset cc)
	[ "$MODE" != smoke ] && want+=(nginx h2o pidstat strace iperf3)
	[ "$UML" = yes ] && want+=(linux.uml modprobe strace)
	[ "$MODE" = full ] && want+=(lighttpd mod_openssl caddy)
	local missing=() c
	for c in "${want[@]}"; do
		if [ "$c" = mod_openssl ]; then
			[ -f /usr/lib/lighttpd/mod_openssl.so ] || missing+=(lighttpd-mod-openssl)
			continue
		fi
		command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing+=("${PKG_OF[$c]}")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$INSTALL" = yes ] && [ "$(id -u)" = 0 ]; then
			log "installing with apt-get: ${missing[*]}"
			DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$OUT/apt.log" 2>&1
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
				"${missing[@]}" libssl-dev >>"$OUT/apt.log" 2>&1 ||
				log "apt-get install failed (see apt.log); going on with what is there"
			# Debian starts the web servers it installs (where it can): stop
			# the ones just installed, so they take no CPU and no port.
			local p
			for p in "${missing[@]}"; do
				case $p in nginx | h2o | lighttpd | caddy)
					if command -v systemctl >/dev/null && systemctl is-active -q "$p" 2>/dev/null; then
						systemctl stop "$p"
					elif command -v service >/dev/null; then
						service "$p" stop >/dev/null 2>&1
					fi
					;;
				esac
			done
		else
			log "missing (not installing): ${missing[*]}"
		fi
	fi
	command -v curl >/dev/null || die "curl is needed"
	HSLOAD=$WORK/hsload
	cc -O2 -o "$HSLOAD" "$HERE/tools/hsload.c" -lssl -lcrypto 2>>"$OUT/run.log" ||
		die "cannot build bench/tools/hsload.c (needs gcc and libssl-dev)"
	SLOWLOAD=$WORK/slowload
	cc -O2 -o "$SLOWLOAD" "$HERE/tools/slowload.c" -lnghttp2 -lssl -lcrypto 2>>"$OUT/run.log" ||
		die "cannot build bench/tools/slowload.c (needs gcc, libssl-dev and libnghttp2-dev)"
}

# The ktlsd under test: --ktlsd / $KTLSD, else one built in bench/.build
# (kept between runs; rebuilt when a source file is newer).
setup_ktlsd() {
	if [ -n "$KTLSD_BIN" ]; then
		[ -x "$KTLSD_BIN" ] || die "$KTLSD_BIN is not an executable file"
		KTLSD_BIN=$(readlink -f "$KTLSD_BIN")
		return
	fi
	local b="$HERE/.build"
	KTLSD_BIN=$b/ktlsd
	if [ -x "$KTLSD_BIN" ] && [ -z "$(find "$TOP/server" "$TOP/proto" "$TOP/ktls" -newer "$KTLSD_BIN" -name '*.[ch]' 2>/dev/null | head -n1)" ]; then
		return
	fi
	log "building ktlsd in $b"
	mkdir -p "$b"
	if [ ! -x "$TOP/configure" ]; then
		"$TOP/scripts/build" "$b" >>"$OUT/build.log" 2>&1 || die "build failed (see build.log)"
	else
		(cd "$b" && { [ -f Makefile ] || "$TOP/configure" -q; } && make -s -j"$(nproc)" ktlsd) \
			>>"$OUT/build.log" 2>&1 || die "build failed (see build.log)"
	fi
	[ -x "$KTLSD_BIN" ] || die "no ktlsd after the build"
}

# The baseline ktlsd (--ktlsd-baseline / $KTLSD_BASELINE), if any: a second
# server of kind ktlsd, labelled ktlsd-base, so that everything done for
# ktlsd (its flags, its cells, its exit counters) is done for it too.
setup_ktlsd_baseline() {
	[ -n "$KTLSD_BASE_BIN" ] || return 0
	[ -x "$KTLSD_BASE_BIN" ] || die "--ktlsd-baseline: $KTLSD_BASE_BIN is not an executable file"
	KTLSD_BASE_BIN=$(readlink -f "$KTLSD_BASE_BIN")
	if [ "$KTLSD_BASE_BIN" = "$KTLSD_BIN" ] || cmp -s "$KTLSD_BASE_BIN" "$KTLSD_BIN"; then
		log "note: ktlsd and ktlsd-base are the same binary (an A/A run: their spread is the noise)"
	fi
	SERVERS+=("ktlsd-base:ktlsd:$KTLSD_BASE_BIN")
}

# SERVERS+=(...) for the peers that exist on this machine.
setup_peers() {
	local p bin
	add_peer() { # name kind binary
		if [ -x "$3" ]; then
			SERVERS+=("$1:$2:$3")
		else
			log "peer $1 not measured: $3 is not installed"
		fi
	}
	add_peer nginx nginx "$(command -v nginx || echo /usr/sbin/nginx)"
	[ "$MODE" != smoke ] && add_peer h2o h2o "$(command -v h2o || echo /usr/bin/h2o)"
	if [ "$MODE" = full ]; then
		add_peer lighttpd lighttpd "$(command -v lighttpd || echo /usr/sbin/lighttpd)"
		add_peer caddy caddy "$(command -v caddy || echo /usr/bin/caddy)"
	fi
	for p in "${PEERS_EXTRA[@]}"; do
		bin=$(readlink -f "${p#*=}")
		add_peer "${p%%=*}" nginx "$bin"
	done
}

# Certificates (ECDSA P-256, RSA-2048) and random test files on tmpfs.
setup_fixtures() {
	local san=subjectAltName=DNS:localhost,IP:127.0.0.1 f name size
	mkdir -p "$WORK/certs" "$WORK/sha" "$ROOT" "$WORK/run"
	(
		cd "$WORK/certs" || exit 1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ec.key \
			-out ec.pem -days 30 -subj /CN=localhost -addext "$san" 2>/dev/null &&
			openssl req -x509 -newkey rsa:2048 -nodes -keyout rsa.key -out rsa.pem -days 30 \
				-subj /CN=localhost -addext "$san" 2>/dev/null
	) || die "cannot make certificates"
	for f in $FILES; do
		name=${f%%:*} size=${f#*:}
		random_file "$ROOT/$name" "$size" || die "cannot make $name"
		sha256sum "$ROOT/$name" | cut -d' ' -f1 >"$WORK/sha/$name"
	done
	# shellcheck disable=SC2034 # used by lib/cells.sh
	SHA_1k=$(cat "$WORK/sha/1k.bin")
	log "fixtures ready: $FILES"
}

# The server gets one core, the load generator the others, and so does
# this script with everything it starts that is not pinned otherwise (its
# awk, grep and sleep, the subshells that start clients): a woken server
# worker otherwise waited behind them for its core, 6.5 ms once at the
# start of a cold cell (perf sched_switch; issue 22). Servers, UML and
# openssl speed are started on SERVER_CPU by taskset, which sets the mask
# anew.
setup_cpus() {
	local n
	n=$(nproc)
	if [ "$n" -lt 2 ]; then
		SERVER_CPU=0 CLIENT_CPUS=0
		log "warning: one CPU only; server and client share it"
	else
		SERVER_CPU=0 CLIENT_CPUS=1-$((n - 1))
		taskset -pc "$CLIENT_CPUS" $$ >/dev/null ||
			log "warning: cannot pin this script to CPUs $CLIENT_CPUS"
	fi
}

write_versions() {
	local s v
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "mode: $MODE, repetitions: $REPS, seconds per cell: $DUR"
		echo "kernel: $(uname -srm)"
		echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(getconf _NPROCESSORS_ONLN) online"
		echo "pinning: server on CPU $SERVER_CPU, load generator on CPUs $CLIENT_CPUS"
		echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
		echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'aes|vaes|vpclmulqdq|avx2|avx512f|amx_tile|sha_ni' | xargs)"
		echo "kernel TLS on this host: $(grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null && echo yes || echo no)"
		# bbr paces inside TCP (an hrtimer per paced packet, even on
		# loopback): on one Intel host ktlsd's large downloads took 12-19%
		# less CPU per GB under cubic, h2o's the same (issue 22).
		echo "tcp: congestion control $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo '?')${TCP_CC:+ (--tcp-cc)}, default qdisc $(cat /proc/sys/net/core/default_qdisc 2>/dev/null || echo '?'), loopback $(ip -d link show lo 2>/dev/null | grep -o " mtu [0-9]*\| gso_max_size [0-9]*" | xargs)"
		echo "openssl: $(openssl version)"
		echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
		for s in "${SERVERS[@]}"; do
			echo "$(srv_name "$s"): $(srv_version "$s") ($(srv_bin "$s"))"
		done
		for s in "${SERVERS[@]}"; do
			[ "$(srv_kind "$s")" = ktlsd ] &&
				echo "$(srv_name "$s") binary sha256: $(sha256sum "$(srv_bin "$s")" | cut -d' ' -f1)"
		done
		echo "ktlsd source: $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$TOP" status --porcelain -- server proto ktls configure.ac Makefile.am 2>/dev/null | grep -q . && echo ' (with local changes)')"
		echo "wrk: $(wrk -v 2>&1 | head -n1)"
		echo "h2load: $(h2load --version 2>&1 | head -n1)"
		echo "curl: $(curl -V | head -n1)"
		echo "hsload, slowload: bench/tools/hsload.c, bench/tools/slowload.c, $(cc --version | head -n1)"
	} >"$OUT/versions.txt"
	"$KTLSD_BIN" --check --root "$ROOT" >"$OUT/ktlsd-check.txt" 2>&1
}

# openssl speed per cipher on the server's core; loopback TCP between the
# server's core and a client core (iperf3).
machine_limits() {
	local c out v secs=1
	[ "$MODE" = full ] && secs=3
	log "machine limits: openssl speed, loopback TCP"
	for c in aes-128-gcm aes-256-gcm chacha20-poly1305; do
		out=$(on_server openssl speed -seconds "$secs" -bytes 16384 -evp "$c" 2>/dev/null | tail -n1)
		note_cmd "taskset -c $SERVER_CPU openssl speed -seconds $secs -bytes 16384 -evp $c"
		# Last column: thousands of bytes per second at 16384-byte blocks.
		v=$(awk '{v = $NF; sub(/k$/, "", v); printf "%.3f", v * 1000 / 1e9}' <<<"$out")
		raw_row limits "openssl speed $c 16KiB" machine 1 throughput GB/s "$v" "" "" "" "" - "" "" "one core"
	done
	if command -v iperf3 >/dev/null; then
		local port
		port=$(freeport)
		iperf3 -s -1 -B 127.0.0.1 -p "$port" -A "$SERVER_CPU" >/dev/null 2>&1 &
		local ip=$!
		# Not wait_port: a probe connection would be iperf3's one client.
		local i
		for ((i = 0; i < 50; i++)); do
			ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
			sleep 0.1
		done
		note_cmd "iperf3 -s -A $SERVER_CPU; iperf3 -c 127.0.0.1 -A ${CLIENT_CPUS%%-*} -t $DUR -J"
		out=$(iperf3 -c 127.0.0.1 -p "$port" -A "${CLIENT_CPUS%%-*}" -t "$DUR" -J 2>/dev/null |
			"$PY" -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e9))' 2>/dev/null)
		wait $ip 2>/dev/null
		raw_row limits "loopback TCP, one stream" machine 1 throughput GB/s "${out:-n/a}" "" "" "" "" - "" "" "iperf3 between the server and client cores"
	fi
}
