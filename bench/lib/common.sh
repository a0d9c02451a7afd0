# shellcheck shell=bash
# Helpers shared by bench/run and its cells: logging, ports, CPU pinning,
# and the server-side measurements taken from /proc (CPU time, memory).
#
# Globals used here (set by bench/run): OUT (the results folder), WORK (the
# scratch folder on tmpfs), SERVER_CPU / CLIENT_CPUS (taskset lists).

log() {
	printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/run.log" >&2
}

die() {
	log "error: $*"
	exit 1
}

# note_cmd CMD...: remember a command in commands.log (for the report's
# "how to reproduce" section) and run nothing.
note_cmd() {
	printf '%s\n' "$*" >>"$OUT/commands.log"
}

# random_file PATH BYTES [SEED]: BYTES random bytes (nothing can compress
# them and every byte is checked), the same for the same seed (default: the
# file's name); fails unless the file has them all.
random_file() {
	openssl enc -aes-128-ctr -nosalt -pass "pass:${3:-${1##*/}}" -in /dev/zero 2>/dev/null |
		head -c "$2" >"$1"
	[ "$(stat -c %s "$1")" = "$2" ]
}

# freeport: print a TCP port on 127.0.0.1 that nothing listens on.
# Below the ephemeral range: the handshake cells leave tens of thousands of
# client ports in use or in TIME_WAIT up there.
freeport() {
	local p i lo
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ "${lo:-0}" -gt 12000 ] || lo=32768
	for ((i = 0; i < 50; i++)); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# wait_port PORT SECS [PID]: wait until 127.0.0.1:PORT accepts; give up
# early if PID exits.
wait_port() {
	local i n=$(($2 * 20))
	for ((i = 0; i < n; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
		sleep 0.05
	done
	return 1
}

# on_server CMD...: run CMD pinned to the server's core.
on_server() {
	taskset -c "$SERVER_CPU" "$@"
}

# on_client CMD...: run CMD pinned to the client's cores.
on_client() {
	taskset -c "$CLIENT_CPUS" "$@"
}

# tree_pids PID: PID and all its descendants (nginx master and workers).
tree_pids() {
	local pid=$1 kids k
	echo "$pid"
	kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null)
	for k in $kids; do
		tree_pids "$k"
	done
}

# cpu_ticks PID: user+system clock ticks used so far by PID's tree,
# all threads included (io_uring's io-wq workers are threads of the
# process, so ktlsd's offloaded splices are counted too).
cpu_ticks() {
	local p sum=0 t
	for p in $(tree_pids "$1"); do
		# Fields 14 and 15 after the ")" that ends the command name.
		t=$(sed 's/.*) //' /proc/"$p"/stat 2>/dev/null | awk '{print $12 + $13}')
		sum=$((sum + ${t:-0}))
	done
	echo "$sum"
}

# tree_sum_kib PID FILE KEY: KEY's value (KiB) in /proc/P/FILE, summed over
# PID's tree.
tree_sum_kib() {
	local p sum=0 v
	for p in $(tree_pids "$1"); do
		v=$(awk -v k="$3:" '$1 == k {print $2}' /proc/"$p"/"$2" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# mem_kib PID: proportional set size (KiB) of PID's tree: shared pages
# (nginx's master and worker share most of theirs) are counted once.
mem_kib() { tree_sum_kib "$1" smaps_rollup Pss; }

# rss_kib PID: resident set size (VmRSS, KiB) of PID's tree, summed (shared
# pages count once per process, as in peak_rss_kib).
rss_kib() { tree_sum_kib "$1" status VmRSS; }

# peak_rss_kib PID: peak resident set size (VmHWM, KiB) of PID's tree,
# summed: pages shared between nginx's master and worker count twice here,
# once in mem_kib.
peak_rss_kib() { tree_sum_kib "$1" status VmHWM; }

# now_s: seconds since the epoch, with nanoseconds.
now_s() {
	date +%s.%N
}

# fdiv A B [DIGITS]: A / B as a decimal, or empty when B is 0 or empty.
fdiv() {
	awk -v a="$1" -v b="$2" -v d="${3:-6}" 'BEGIN { if (b == "" || b + 0 == 0 || a == "") exit; printf "%.*f\n", d, a / b }'
}

# raw_row FIELDS...: append one measurement to raw.csv (see bench/README.md
# for the columns). Empty fields are allowed.
raw_row() {
	local IFS=, f out=()
	for f in "$@"; do out+=("${f//,/;}"); done
	echo "${out[*]}" >>"$OUT/raw.csv"
}
