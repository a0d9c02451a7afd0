# shellcheck shell=bash
# The privilege model (README, Security): the process that serves clients
# holds no capability at all, in any of its threads (effective, permitted,
# inheritable, ambient and, where CAP_SETPCAP allowed it, bounding sets
# empty), has no_new_privs and the seccomp filter, and is not dumpable;
# so whether it started as root with --user, as root without it, or as
# systemd starts it (an unprivileged user whose one capability is an
# ambient CAP_NET_BIND_SERVICE). With --user there is one more process, the
# privileged helper: root with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
# alone, one thread, no listener, which reads a reload's files and reopens
# the logs. Read from /proc/PID/task/*/status, for every thread of every
# ktlsd process.

if [ "$(id -u)" -ne 0 ]; then
	printf 'skip %s: %s\n' "$TEST" "needs root (--user, setpriv)" | tee -a "$RESULTS"
	return 0
fi

ZERO=0000000000000000
# CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
HELPER_CAPS=0000000000000006
# CAP_NET_BIND_SERVICE (10).
BIND_CAP=0000000000000400

# thread_states PID: one line per thread of PID: its name, then CapInh
# CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp.
thread_states() {
	local t
	for t in /proc/"$1"/task/*; do
		printf '%s %s\n' "$(cat "$t/comm")" "$(awk '
			/^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):/ { v[$1] = $2 }
			END { print v["CapInh:"], v["CapPrm:"], v["CapEff:"], v["CapBnd:"], v["CapAmb:"],
				v["NoNewPrivs:"], v["Seccomp:"] }' "$t/status")"
	done
}

# expect_threads NAME PID WANT MIN: every thread of PID has the state WANT
# ("CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp"), and there are
# at least MIN threads.
expect_threads() {
	local states bad n
	states=$(thread_states "$2")
	n=$(printf '%s\n' "$states" | grep -c .)
	bad=$(printf '%s\n' "$states" | awk -v want="$3" '{ s = $0; sub(/^[^ ]+ /, "", s) } s != want' | head -n 3)
	expect_eq "$1: every thread ($n): $3" "${bad:-}" ""
	check "$1: ... at least $4 threads looked at ($n)" test "$n" -ge "$4"
}

uid_of() {
	awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$1/status"
}

# ---- --user: the server and the privileged helper --------------------------
nobody=$(id -u nobody)
mkdir -p "$T/user/list"
echo listed >"$T/user/list/one.txt"
SPORT=$(freeport)
if start_ktlsd --user nobody --status-listen "127.0.0.1:$SPORT" --autoindex on \
	--error-log "$T/user/error.log" --access-log "$T/user/access.log"; then
	# Every thread there can be: the workers, the status listener (a
	# scrape), a listing thread (a listing), after a reload and a reopen.
	curl -s --max-time 10 -o /dev/null "http://127.0.0.1:$SPORT/metrics"
	fetch listing /noindex/
	kill -HUP "$KTLSD_PID"
	wait_until 20 grep -q "SIGHUP: configuration and certificates reloaded" "$T/user/error.log"
	kill -USR1 "$KTLSD_PID"
	wait_until 20 grep -q "SIGUSR1: logs reopened" "$T/user/error.log"
	fetch after /a.txt
	expect_eq "--user: serves after a reload and a reopen" "$STATUS" 200

	expect_eq "--user: the server runs as nobody" "$(uid_of "$KTLSD_PID")" \
		"$nobody $nobody $nobody $nobody"
	expect_threads "--user: the server" "$KTLSD_PID" "$ZERO $ZERO $ZERO $ZERO $ZERO 1 2" 5
	check "--user: ... it has a listing thread and a status thread" \
		sh -c 'cat /proc/"$1"/task/*/comm | grep -q ktlsd-list && cat /proc/"$1"/task/*/comm | grep -q ktlsd-status' \
		sh "$KTLSD_PID"
	# Not dumpable: the files in its /proc/PID are root's, whatever its uid.
	expect_eq "--user: the server is not dumpable (its /proc/PID/status is root's)" \
		"$(stat -c %u "/proc/$KTLSD_PID/status")" 0

	# Where the kernel leaves the speculative store bypass mitigation to
	# seccomp, the filter must not switch it on (it slows all code).
	if grep -q seccomp /sys/devices/system/cpu/vulnerabilities/spec_store_bypass 2>/dev/null; then
		expect_match "--user: the filter leaves the store bypass mitigation as it was" \
			"$(awk '/^Speculation_Store_Bypass:/ { $1 = ""; print }' "/proc/$KTLSD_PID/status")" \
			'^ *(thread vulnerable|vulnerable|not vulnerable)'
	fi

	helpers=$(pgrep -P "$KTLSD_PID" | tr '\n' ' ')
	helper=${helpers%% *}
	expect_eq "--user: one other process, the server's child" "$(printf '%s' "$helpers" | wc -w)" 1
	if [ -n "$helper" ]; then
		expect_eq "... it says what it is (cmdline)" \
			"$(tr '\0' '\n' <"/proc/$helper/cmdline" | head -n 1)" "ktlsd: privileged helper"
		expect_eq "... its name" "$(cat "/proc/$helper/comm")" "ktlsd-priv"
		expect_eq "... it is root" "$(uid_of "$helper")" "0 0 0 0"
		expect_threads "... the privileged helper" "$helper" \
			"$ZERO $HELPER_CAPS $HELPER_CAPS $HELPER_CAPS $ZERO 1 2" 1
		expect_eq "... one thread" "$(find "/proc/$helper/task" -mindepth 1 -maxdepth 1 | wc -l)" 1
		# Its socket to the server, the error log, 0, 1 and 2: no
		# listener, no client, no file the server opened.
		check "... at most five fds ($(find "/proc/$helper/fd" -mindepth 1 | wc -l))" \
			test "$(find "/proc/$helper/fd" -mindepth 1 | wc -l)" -le 5
		check "... no listening socket of the server's" \
			sh -c '! ss -Hltnp "sport = :$1" | grep -q "pid=$2,"' sh "$PORT" "$helper"
	fi
	stop_ktlsd
	if [ -n "$helper" ]; then
		check "--user: the helper is gone with the server" \
			wait_until 10 sh -c '! kill -0 "$1" 2>/dev/null' sh "$helper"
	fi
fi

# ---- root without --user: no privilege left all the same -----------------
if start_ktlsd --status-listen "127.0.0.1:$(freeport)"; then
	fetch noroot /a.txt
	expect_eq "root, no --user: serves" "$STATUS" 200
	expect_eq "root, no --user: still uid 0" "$(uid_of "$KTLSD_PID")" "0 0 0 0"
	expect_threads "root, no --user: the server" "$KTLSD_PID" \
		"$ZERO $ZERO $ZERO $ZERO $ZERO 1 2" 4
	expect_eq "root, no --user: no helper process" "$(pgrep -P "$KTLSD_PID" | wc -l)" 0
	kill -HUP "$KTLSD_PID"
	wait_until 20 grep -q "SIGHUP: configuration and certificates reloaded" "$KTLSD_LOG"
	check "root, no --user: reloads (reading as uid 0 without a capability)" \
		grep -q "SIGHUP: configuration and certificates reloaded" "$KTLSD_LOG"
	stop_ktlsd
fi

# ---- as systemd starts it: DynamicUser=, AmbientCapabilities= ---------------
# setpriv gives what the unit gives: an unprivileged uid whose only
# capability is CAP_NET_BIND_SERVICE (ambient, so that it survives execve),
# in a bounding set of that one, without CAP_SETPCAP to empty it further.
if ! command -v setpriv >/dev/null; then
	fail "setpriv installed" "not found (Debian package util-linux)"
else
	LAUNCH_WRAP=(setpriv --reuid=nobody --regid=nogroup --clear-groups
		--inh-caps=-all,+net_bind_service --ambient-caps=+net_bind_service
		--bounding-set=-all,+net_bind_service --)
	# Files that user can read: the run's folder is root's alone.
	pub=$(mktemp -d /tmp/ktlsd-privs.XXXXXX)
	chmod 755 "$pub"
	mkdir "$pub/root"
	cp "$FIX/root/a.txt" "$pub/root/"
	cp "$FIX/ec.pem" "$FIX/ec.key" "$pub/"
	chmod 644 "$pub/ec.key" "$pub/ec.pem" "$pub/root/a.txt"
	PORT=$((600 + RANDOM % 300))
	if launch --root "$pub/root" --listen "127.0.0.1:$PORT" --cert "$pub/ec.pem" \
		--key "$pub/ec.key" --workers 2; then
		code=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT/a.txt")
		expect_eq "as systemd starts it: serves on port $PORT (below 1024)" "$code" 200
		expect_threads "as systemd starts it: the server, the bounding set left as the unit's" \
			"$KTLSD_PID" "$ZERO $ZERO $ZERO $BIND_CAP $ZERO 1 2" 3
		stop_ktlsd
	else
		fail "as systemd starts it: starts" "$(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	fi
	LAUNCH_WRAP=()
	rm -rf "$pub"
fi
