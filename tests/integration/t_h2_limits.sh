# shellcheck shell=bash
# timeout: 600
# HTTP/2 clients that obey the protocol but not the server's limits
# (h2_hostile.py): every timeout, --keepalive-requests, resets the client
# makes us send, and streams held open to take fds and memory. Each limit
# is what --help says it is on HTTP/1.1 too.

H2H="$(dirname "${BASH_SOURCE[0]}")/h2_hostile.py"
# shellcheck disable=SC2034 # read by lib.sh's kcurl
KCURL_HTTP=--http2

root=$T/root
mkdir -p "$root"
head -c $((1 << 20)) /dev/urandom >"$root/mid.bin"
cp "$FIX/root/big.bin" "$FIX/root/a.txt" "$root/"

# hh SUBCOMMAND ARGS...: h2_hostile.py, bounded; OUT is its output on one line.
hh() {
	py_client 120 "$H2H" "$@"
}

# served NAME: the server still answers HTTP/2 and HTTP/1.1.
served() {
	local v1 v2
	v2=$(kcurl --max-time 20 -o /dev/null -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
	v1=$(KCURL_HTTP=--http1.1 kcurl --max-time 20 -o /dev/null -w '%{http_version} %{http_code}' \
		"$BASE/a.txt" 2>&1)
	expect_eq "$1: other clients are served (HTTP/2, HTTP/1.1)" "$v2 / $v1" "2 200 / 1.1 200"
}

# closed_after NAME MIN MAX: OUT says CLOSED after at least MIN and at most
# MAX seconds (MAX is generous: a loaded machine may be late, never early).
closed_after() {
	local t
	t=$(printf '%s\n' "$OUT" | sed -n 's/.*CLOSED \([0-9.]*\).*/\1/p')
	if [ -n "$t" ] && awk -v t="$t" -v a="$2" -v b="$3" 'BEGIN { exit !(t >= a && t <= b) }'; then
		pass "$1"
	else
		fail "$1" "got '$OUT', want CLOSED after $2 to $3 s"
	fi
}

# ---- timeouts measure what we send, not what the client sends ------------

start_ktlsd --root "$root" --workers 1 --send-timeout 2 --idle-timeout 2 --header-timeout 2 || return 0

# A reader that stopped, with a full socket or zero windows, keeps sending
# PINGs or the bytes of PINGs one at a time: the send timeout still ends it.
# (The client watches the server's fd count fall back: the open-file cache
# keeps big.bin's fd, so the one worker caches it before the first count.)
kcurl -sI -o /dev/null "$BASE/big.bin"
for mode in full zero; do
	for input in ping bytes; do
		hh stall "$PORT" "$KTLSD_PID" /big.bin "$mode" "$input" 40
		closed_after "--send-timeout 2, $mode socket, $input: a stalled reader is closed" 1 40
		# (None: the reset at the close took the client's unread bytes,
		# the head included.)
		got=$(printf '%s\n' "$OUT" | sed -n 's/.*GOT \([0-9]*\) of \([0-9a-zA-Z]*\).*/\1 \2/p')
		if [ -n "$got" ] && { [ "${got#* }" = None ] || [ "${got% *}" -lt "${got#* }" ]; }; then
			pass "... before the whole file was served ($got)"
		else
			fail "... before the whole file was served" "$OUT"
		fi
	done
done

# --idle-timeout runs from the last completed stream: PINGs and partial
# frames do not wind it.
hh chatter "$PORT" 30 ping
closed_after "--idle-timeout 2: PINGs every 0.5 s do not keep it open" 1 30
expect_match "... GOAWAY (NO_ERROR) first" "$OUT" '^GOAWAY 0 '
hh chatter "$PORT" 30 partial
closed_after "--idle-timeout 2: an unfinished frame, a byte at a time, does not keep it open" 1 30

# --header-timeout runs from the first byte of a header block.
stop_ktlsd
start_ktlsd --root "$root" --header-timeout 2 --idle-timeout 60 || return 0
hh dribble "$PORT" 40
closed_after "--header-timeout 2: HEADERS dribbled a byte a second is closed (idle 60)" 1.5 40
served "after the slow clients"
stop_ktlsd

# ---- --keepalive-requests counts streams ---------------------------------

start_ktlsd --root "$root" --keepalive-requests 3 || return 0
hh burst "$PORT" 50 /a.txt
expect_match "--keepalive-requests 3: 3 of 50 streams answered" "$OUT" '^ANSWERED 3 '
expect_match "... GOAWAY names the third stream (5)" "$OUT" 'GOAWAY 0 5 '
expect_match "... the others refused or left unanswered, then closed" "$OUT" \
	'REFUSED ([0-9]+) UNANSWERED ([0-9]+) .*CLOSED'
refused=$(printf '%s\n' "$OUT" | sed -n 's/.*REFUSED \([0-9]*\) UNANSWERED \([0-9]*\).*/\1+\2/p')
expect_eq "... 47 not served" "$((${refused:-0}))" 47
stop_ktlsd

# ---- resets the client makes us send count toward --h2-reset-rate ---------

start_ktlsd --root "$root" --h2-reset-rate 1 || return 0
hh made-reset "$PORT" 5000 /a.txt
expect_match "--h2-reset-rate 1: window overflows on 5000 streams end in GOAWAY" "$OUT" \
	'GOAWAY 11 [0-9]+ CLOSED'
resets=$(printf '%s\n' "$OUT" | sed -n 's/.*RESETS \([0-9]*\).*/\1/p')
if [ -n "$resets" ] && [ "$resets" -le 20 ]; then
	pass "... after at most the burst of resets ($resets)"
else
	fail "... after at most the burst of resets" "$OUT"
fi
served "after the resets"
stop_ktlsd

start_ktlsd --root "$root" || return 0
hh made-reset "$PORT" 5 /a.txt
expect_eq "--h2-reset-rate 100: 5 streams reset by the server: connection kept" "$OUT" "RESETS 5 OPEN"
stop_ktlsd

# ---- streams held at a zero window take neither fds nor much memory ------

# 40 connections x 128 streams would need 5,120 files; the server may have
# 2,048 fds. Streams open their file only when they can send, 16 at most
# per connection.
start_ktlsd --root "$root" --workers 1 || return 0
prlimit --pid "$KTLSD_PID" --nofile=2048:2048
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
rss_before=$(rss_kib "$KTLSD_PID")
rm -f "$T/hold.flag"
timeout 150 "$PY" "$H2H" hold "$PORT" 40 128 /mid.bin "$T/hold.flag" 120 >"$T/hold.out" 2>&1 &
holder=$!
wait_until 100 grep -q HELD "$T/hold.out"
expect_eq "40 connections x 128 streams at a zero window: all answered" \
	"$(cat "$T/hold.out")" "HELD 5120"
fds=$(ls "/proc/$KTLSD_PID/fd" | wc -l)
if [ "$fds" -lt 200 ]; then
	pass "... the server holds $fds fds (no file per waiting stream)"
else
	fail "... the server holds few fds" "$fds open"
fi
rss_after=$(rss_kib "$KTLSD_PID")
grew=$(((rss_after - rss_before) / 5120))
rss_max=4
grep -qa __asan_init "$KTLSD" && rss_max=16 # redzones and quarantine
if [ "$grew" -le "$rss_max" ]; then
	pass "... about $grew KiB per held stream (at most $rss_max)"
else
	fail "... at most $rss_max KiB per held stream" "$grew KiB ($rss_before -> $rss_after KiB)"
fi
served "while 5,120 streams are held"
touch "$T/hold.flag"
wait "$holder"

# A file replaced while its stream waits: never its new bytes under the old
# validators. Either the stream is reset (its file was opened again and is
# another) or it gets the old file whole (the open-file cache still held
# the inode its head described).
cp "$root/mid.bin" "$root/swap.bin"
rm -f "$T/swap.flag"
timeout 60 "$PY" "$H2H" replaced "$PORT" /swap.bin "$T/swap.flag" >"$T/swap.out" 2>&1 &
swapper=$!
wait_until 20 grep -q HEADERS "$T/swap.out"
head -c $((1 << 20)) /dev/urandom >"$root/swap.new"
mv "$root/swap.new" "$root/swap.bin"
touch "$T/swap.flag"
wait "$swapper"
expect_in "a file replaced while its stream waited: reset, or the old file whole" \
	"$(tr '\n' ' ' <"$T/swap.out" | sed 's/ $//')" "HEADERS 200 RESET 1 2" \
	"HEADERS 200 COMPLETE $((1 << 20)) $(sha "$root/mid.bin")"
stop_ktlsd

# ---- an idle HTTP/2 connection gives back its buffers --------------------

# pss_anon PID: anonymous PSS (smaps_rollup), as t_idle_memory.sh measures.
pss_anon() {
	awk '$1 == "Pss_Anon:" { a = $2 } $1 == "Pss:" { p = $2 }
		END { print (a != "" ? a : p) }' "/proc/$1/smaps_rollup" 2>/dev/null
}

# Connections the idle bounds are measured over. The heap's slack after a
# burst varies by about 1 MiB from run to run whatever the number of
# connections (malloc_stats: the same bytes in use, 3.0 or 4.1 MiB taken
# from the system, over 50 connections of 300 requests). Over 50 that read
# as 40-46 or 53-66 KiB a connection, and the 56 KiB bound failed both
# tries in a fresh-clone run; over 150 it is 7 KiB a connection: 42-46 KiB
# in 7 runs by hand.
IDLE_CONNS=150

# idle_h2 WHAT PATH REQUESTS MEASURE UNIT MAX: on a fresh server,
# IDLE_CONNS connections, each downloads PATH REQUESTS times, then idle:
# passes when MEASURE (rss_kib, pss_anon) grew by at most MAX KiB per
# connection.
idle_h2() {
	local what=$1 path=$2 requests=$3 measure=$4 unit=$5 max=$6 before after per idler
	start_ktlsd --root "$root" --workers 1 || return 0
	"$PY" "$H2H" idle-after "$PORT" 4 "$path" "$T/none" 0 "$requests" >/dev/null 2>&1 # warm up
	sleep 1
	before=$("$measure" "$KTLSD_PID")
	rm -f "$T/idle.flag"
	# IDLE_CONNS x REQUESTS downloads by a Python client: on a loaded
	# machine (the suite under ASan beside other tests) 50 x 300 took over
	# 100 s once. Wait as long as the client lives, up to its own bound.
	timeout 600 "$PY" "$H2H" idle-after "$PORT" "$IDLE_CONNS" "$path" "$T/idle.flag" 120 "$requests" \
		>"$T/idle.out" 2>&1 &
	idler=$!
	wait_until 480 sh -c "grep -q READY '$T/idle.out' || ! kill -0 $idler"
	expect_eq "$IDLE_CONNS HTTP/2 connections, each after $what" "$(cat "$T/idle.out")" "READY $IDLE_CONNS"
	# The timer ticks that find them idle, and the buffer pool's decay
	# after them: the least reading of up to 8 s, stopping once within the
	# bound.
	local i reading
	sleep 1.5
	after=$("$measure" "$KTLSD_PID")
	for ((i = 0; i < 13 && (after - before) / IDLE_CONNS > max; i++)); do
		sleep 0.5
		reading=$("$measure" "$KTLSD_PID")
		[ -n "$reading" ] && [ "$reading" -lt "$after" ] && after=$reading
	done
	IDLE_PER=$(((after - before) / IDLE_CONNS))
	IDLE_SEEN="${IDLE_SEEN:+$IDLE_SEEN, }$IDLE_PER KiB ($before -> $after KiB)"
	touch "$T/idle.flag"
	wait "$idler"
	stop_ktlsd
}

# idle_h2_bounded ARGS...: idle_h2 on a fresh server, and once more on
# another where the first kept more than MAX. What the 300-request bound
# is for, nghttp2's closed-stream records, would add some 30 KiB to every
# run.
idle_h2_bounded() {
	local max=$6 unit=$5 try
	IDLE_SEEN=
	for try in 1 2; do
		IDLE_PER=
		idle_h2 "$@"
		[ -n "$IDLE_PER" ] || return 0
		[ "$IDLE_PER" -le "$max" ] && break
	done
	if [ "$IDLE_PER" -le "$max" ]; then
		pass "... then idle: $IDLE_PER KiB $unit per connection (at most $max; seen: $IDLE_SEEN)"
	else
		fail "... then idle: at most $max KiB $unit per connection, on one of two servers" "$IDLE_SEEN"
	fi
}

if grep -qa __asan_init "$KTLSD"; then
	skip "idle HTTP/2 memory" "not measured under AddressSanitizer (quarantine)"
else
	idle_h2_bounded "a 1 MiB download" /mid.bin 1 rss_kib RSS 64
	# A connection that served many streams keeps nothing per closed one:
	# nghttp2's closed-stream records (a stream each, up to 128 here) would
	# add about 30 KiB (70 KiB measured, against 40 with proto/h2_closed.c's
	# two bits per stream).
	idle_h2_bounded "300 requests" /a.txt 300 pss_anon "anonymous PSS" 56
fi
