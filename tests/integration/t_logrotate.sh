# shellcheck shell=bash
# Log rotation as logrotate does it: rename the logs, then SIGUSR1 (or
# SIGHUP). Nothing is lost or written twice, nothing is killed; and no
# signal an operator may send by habit ends the server.

want=$(cat "$FIX/big.sha256")

# --- rename + SIGUSR1 during a stream of requests -----------------------------
alog=$T/access.log elog=$T/error.log
start_ktlsd --access-log "$alog" --error-log "$elog" || return 0
n=400
# One keep-alive connection, paced by curl (at most 100 requests a second),
# so that the renames fall in the middle of the stream on any machine.
kcurl --max-time 120 --rate 100/s -o /dev/null "$BASE/a.txt?n=[1-$n]" >/dev/null 2>"$T/stream.err" &
stream_pid=$!
rotations=0
for i in 1 2 3 4; do
	kill -0 "$stream_pid" 2>/dev/null || break
	wait_until 10 grep -q "?n=" "$alog"
	mv "$alog" "$alog.$i"
	[ "$i" = 1 ] && mv "$elog" "$elog.1"
	kill -USR1 "$KTLSD_PID"
	rotations=$((rotations + 1))
	sleep 0.5
done
wait "$stream_pid"
expect_eq "stream of $n requests across $rotations renames: curl exit code" "$?" 0
check "renames fell while requests were streaming ($rotations)" test "$rotations" -ge 2
if kill -0 "$KTLSD_PID" 2>/dev/null; then
	pass "SIGUSR1: the server is still running"
else
	fail "SIGUSR1: the server is still running" "it exited; log: $(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	KTLSD_PID=
	return 0
fi
# After the last rename, lines go to the new file.
kcurl -o /dev/null "$BASE/a.txt?after=usr1"
wait_until 10 grep -q 'after=usr1' "$alog"
# SIGHUP reopens the logs too (and reloads).
mv "$alog" "$alog.hup"
kill -HUP "$KTLSD_PID"
wait_until 10 grep -q "SIGHUP: configuration and certificates reloaded" "$elog"
kcurl -o /dev/null "$BASE/a.txt?after=hup"
stop_ktlsd

missing=$("$PY" - "$n" "$alog" "$alog".* <<'PYEOF'
import re, sys
n = int(sys.argv[1])
seen = {}
for path in sys.argv[2:]:
    for line in open(path, "rb"):
        m = re.search(rb'"GET /a\.txt\?n=(\d+) ', line)
        if m:
            seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
bad = [i for i in range(1, n + 1) if seen.get(i) != 1]
print(" ".join("%d:%d" % (i, seen.get(i, 0)) for i in bad[:10]))
PYEOF
)
expect_eq "every one of the $n requests logged exactly once across the renamed files" "$missing" ""
nonempty=0
for ((i = 1; i <= rotations; i++)); do [ -s "$alog.$i" ] && nonempty=$((nonempty + 1)); done
check "each rename started a new file (files with lines: $nonempty of $rotations)" test "$nonempty" -eq "$rotations"
check "after SIGUSR1, new lines go to the new file" grep -q 'after=usr1' "$alog.hup"
check "after SIGHUP, new lines go to the new file" grep -q 'after=hup' "$alog"
expect_file_lacks "the renamed file before SIGHUP has no line after it" "$alog.hup" 'after=hup'
check "SIGUSR1: the error log is reopened too (a line in the new file)" \
	grep -q 'SIGUSR1: logs reopened' "$elog"
check "SIGUSR1: the error log's old file stays as it was renamed" test -s "$elog.1"

# --- under --user, logrotate's "create" in a folder of root's ----------------
# logrotate renames the logs and makes new empty ones owned as the old ones
# were (root, 0644), then signals: the privileged helper reopens them, the
# server (nobody) could not.
if [ "$(id -u)" -eq 0 ]; then
	rl=$T/rootlogs
	mkdir -p "$rl"
	chmod 755 "$rl"
	start_ktlsd --user nobody --access-log "$rl/access.log" --error-log "$rl/error.log" || return 0
	for i in 1 2; do
		kcurl -o /dev/null "$BASE/a.txt?create=$i"
		wait_until 10 grep -q "create=$i" "$rl/access.log"
		mv "$rl/access.log" "$rl/access.log.$i"
		mv "$rl/error.log" "$rl/error.log.$i"
		install -m 644 -o root -g root /dev/null "$rl/access.log"
		install -m 644 -o root -g root /dev/null "$rl/error.log"
		kill -USR1 "$KTLSD_PID"
		wait_until 10 grep -q 'SIGUSR1: logs reopened' "$rl/error.log"
		check "--user, logrotate create #$i: the error log is reopened (a line in the new file)" \
			grep -q 'SIGUSR1: logs reopened' "$rl/error.log"
	done
	kcurl -o /dev/null "$BASE/a.txt?create=after"
	wait_until 10 grep -q 'create=after' "$rl/access.log"
	check "--user, logrotate create: new lines go to the new access log" \
		grep -q 'create=after' "$rl/access.log"
	check "... each rotated file kept its own lines" \
		sh -c 'grep -q "create=1" "$1/access.log.1" && grep -q "create=2" "$1/access.log.2"' sh "$rl"
	check "... and none went to a deleted file" \
		sh -c '! ls -l /proc/"$1"/fd | grep -q "(deleted)"' sh "$KTLSD_PID"
	stop_ktlsd
else
	printf 'skip %s: %s\n' "$TEST" "logrotate under --user needs root" | tee -a "$RESULTS"
fi

# --- an access log that cannot be reopened stays where it was ----------------
mkdir -p "$T/logdir"
start_ktlsd --access-log "$T/logdir/access.log" || return 0
kcurl -o /dev/null "$BASE/a.txt?before=gone"
mv "$T/logdir" "$T/logdir.old"
: >"$T/logdir" # a file where the folder was: the reopen fails
kill -USR1 "$KTLSD_PID"
wait_until 10 grep -q 'reopening the access log' "$KTLSD_LOG"
kcurl -o /dev/null "$BASE/a.txt?after=failed-reopen"
check "failed reopen: one error line" grep -q 'SIGUSR1: reopening the access log: .*stays on the old file' "$KTLSD_LOG"
stop_ktlsd
check "failed reopen: lines still go to the old file" grep -q 'after=failed-reopen' "$T/logdir.old/access.log"

# --- habits: signals meant for other servers, or for nothing ------------------
start_ktlsd --send-timeout 30 || return 0
rm -f "$T/habit.b"
kcurl --max-time 60 --limit-rate 4M -o "$T/habit.b" "$BASE/big.bin" 2>"$T/habit.err" &
curl_pid=$!
wait_until 10 file_at_least "$T/habit.b" $((1 << 20))
for sig in USR2 WINCH ALRM PIPE IO PWR VTALRM PROF; do
	kill -"$sig" "$KTLSD_PID"
	sleep 0.1
done
wait "$curl_pid"
expect_eq "download across SIGUSR2, SIGWINCH, SIGALRM, SIGPIPE...: curl exit code" "$?" 0
expect_eq "download across the habit signals: sha256" "$(sha "$T/habit.b")" "$want"
rm -f "$T/habit.b"
if kill -0 "$KTLSD_PID" 2>/dev/null; then
	pass "habit signals: the server is still running"
else
	wait "$KTLSD_PID"
	fail "habit signals: the server is still running" "it exited with $?"
	KTLSD_PID=
	return 0
fi
for sig in USR2 WINCH ALRM 'IO|POLL' PWR VTALRM PROF; do
	if wait_until 5 grep -Eq "SIG($sig) ignored" "$KTLSD_LOG"; then
		pass "SIG$sig: logged as ignored"
	else
		fail "SIG$sig: logged as ignored" "no such line in the error log"
	fi
done
stop_ktlsd
