# shellcheck shell=bash
# systemd's readiness protocol, spoken without libsystemd: READY=1 once the
# workers serve, RELOADING=1 with MONOTONIC_USEC= and READY=1 again around a
# SIGHUP (what Type=notify-reload waits for), STOPPING=1 at SIGTERM, each
# with a STATUS=, all from the main process (NotifyAccess=main). A stub
# listens where $NOTIFY_SOCKET points, as systemd would.

STUB="$(dirname "${BASH_SOURCE[0]}")/systemd_stub.py"

# listen_notify ADDRESS: start the stub on ADDRESS (path or @abstract); its
# lines go to $NOTES. Waits until it listens.
listen_notify() {
	NOTES="$T/notes.$RANDOM"
	"$PY" "$STUB" notify "$1" "$NOTES" 100 &
	STUB_PID=$!
	wait_until 10 grep -q LISTENING "$NOTES"
}

stop_notify() {
	kill -TERM "$STUB_PID" 2>/dev/null
	wait "$STUB_PID" 2>/dev/null
}

# notes_after N PATTERN: the first line after line N of $NOTES matching the
# extended regex PATTERN, with its line number ("12:pid=..."); empty if none.
notes_after() {
	awk -v n="$1" -v re="$2" 'NR > n && $0 ~ re { print NR ":" $0; exit }' "$NOTES"
}

# has_note N PATTERN: notes_after finds a line.
has_note() {
	[ -n "$(notes_after "$1" "$2")" ]
}

# A path socket, the whole life of a server.
listen_notify "$T/notify.sock"
export NOTIFY_SOCKET="$T/notify.sock"
cat >"$T/notify.conf" <<CONF
root $FIX/root
cert $FIX/ec.pem
key $FIX/ec.key
workers 2
CONF
if start_ktlsd --config "$T/notify.conf"; then
	wait_until 20 has_note 0 '\|READY=1'
	ready=$(notes_after 0 '\|READY=1')
	expect_match "READY=1 once the server accepts" "$ready" 'READY=1'
	expect_match "... from the main process" "$ready" "^[0-9]+:pid=$KTLSD_PID "
	expect_match "... with a STATUS= saying what it serves" "$ready" "STATUS=serving $FIX/root with 2 workers"
	fetch ready /
	expect_eq "the server serves after READY=1" "$STATUS" 200
	n=${ready%%:*}

	kill -HUP "$KTLSD_PID"
	wait_until 20 has_note "$n" '\|READY=1'
	reloading=$(notes_after "$n" 'RELOADING=1')
	expect_match "SIGHUP: RELOADING=1 first" "$reloading" "^$((n + 1)):pid=$KTLSD_PID .*\|RELOADING=1"
	expect_match "... with MONOTONIC_USEC=" "$reloading" '\|MONOTONIC_USEC=[0-9]+(\||$)'
	# MONOTONIC_USEC is this host's CLOCK_MONOTONIC when the message was
	# made: not after the stub received it, and not long before.
	sent=$(printf '%s' "$reloading" | sed -n 's/.*MONOTONIC_USEC=\([0-9]*\).*/\1/p')
	got=$(printf '%s' "$reloading" | sed -n 's/.* now=\([0-9]*\)|.*/\1/p')
	check "... which is CLOCK_MONOTONIC in microseconds" \
		test "${sent:-0}" -le "${got:-0}" -a "$((${got:-0} - ${sent:-0}))" -lt 60000000
	n=${reloading%%:*}
	ready=$(notes_after "$n" '\|READY=1')
	expect_match "... then READY=1 again" "$ready" "pid=$KTLSD_PID .*READY=1.*STATUS=.*reloaded"
	n=${ready%%:*}

	# A reload that is refused ends with READY=1 too (the old
	# configuration serves on), and says so in STATUS=.
	printf 'root %s\nno-such-key 1\n' "$FIX/root" >"$T/notify.conf"
	kill -HUP "$KTLSD_PID"
	wait_until 20 has_note "$n" '\|READY=1'
	check "a refused reload: RELOADING=1" has_note "$n" 'RELOADING=1\|MONOTONIC_USEC='
	expect_match "... then READY=1, STATUS= saying it was refused" \
		"$(notes_after "$n" '\|READY=1')" 'READY=1\|STATUS=.*refused'
	n=$(wc -l <"$NOTES")
	fetch refused /
	expect_eq "... and the server still serves" "$STATUS" 200

	kill -TERM "$KTLSD_PID"
	wait_until 20 has_note "$n" 'STOPPING=1'
	expect_match "SIGTERM: STOPPING=1" "$(notes_after "$n" 'STOPPING=1')" "pid=$KTLSD_PID .*\|STOPPING=1"
	stop_ktlsd
fi
stop_notify

# An abstract socket ("@name", no file), as systemd's own manager uses.
abstract="@ktlsd-test-$$-$RANDOM"
listen_notify "$abstract"
export NOTIFY_SOCKET="$abstract"
if start_ktlsd; then
	wait_until 20 has_note 0 '\|READY=1'
	check "an abstract NOTIFY_SOCKET: READY=1" has_note 0 "pid=$KTLSD_PID .*\|READY=1"
	# After the line of that READY=1 (the stub's LISTENING comes first):
	# the READY=1 that ends the reload, not the one before it.
	ready=$(notes_after 0 '\|READY=1')
	n=${ready%%:*}
	kill -HUP "$KTLSD_PID"
	wait_until 20 has_note "${n:-0}" '\|READY=1'
	check "... RELOADING=1 on SIGHUP" has_note "${n:-0}" 'RELOADING=1\|MONOTONIC_USEC=[0-9]+'
	n=$(wc -l <"$NOTES")
	kill -TERM "$KTLSD_PID"
	wait_until 20 has_note "$n" 'STOPPING=1'
	check "... STOPPING=1 on SIGTERM" has_note "$n" 'STOPPING=1'
	stop_ktlsd
fi
stop_notify

# Nobody listening there: the server starts and serves all the same.
export NOTIFY_SOCKET="$T/nobody-listens.sock"
if start_ktlsd; then
	fetch nobody /
	expect_eq "NOTIFY_SOCKET with no listener: the server serves" "$STATUS" 200
	kill -HUP "$KTLSD_PID"
	wait_until 10 grep -q "reloaded" "$KTLSD_LOG"
	check "... and reloads" grep -q "reloaded" "$KTLSD_LOG"
	stop_ktlsd
fi
unset NOTIFY_SOCKET
