# shellcheck shell=bash
# What ktlsd opens for itself, as root, in folders others may write to: its
# logs and its pid file are never opened through a symbolic link at their
# name nor written when they have another hard link (as root that is
# CVE-2016-1247: access.log -> /etc/ld.so.preload), at start or when a
# signal reopens them; a FIFO (or a device) where a configuration file,
# certificate, key, ticket key or the MIME types should be is refused at
# once, at start, by --test-config and on reload, instead of hanging the
# process for good; a link to a regular file is followed (certbot's live/
# folder); a Unix socket gets its mode from the umask at bind, with no
# chmod by path after it.

if [ "$(id -u)" -ne 0 ]; then
	printf 'skip %s: %s\n' "$TEST" "needs root (--user, a folder given to nobody)" | tee -a "$RESULTS"
	return 0
fi

victim=$T/victim
printf 'VICTIM-BYTES\n' >"$victim"
chmod 600 "$victim"
victim_sum=$(sha "$victim")
# victim_intact: the file the links point to has its bytes and its mode.
victim_intact() {
	[ "$(sha "$victim")" = "$victim_sum" ] && [ "$(stat -c '%a %U' "$victim")" = "600 root" ]
}

# The README's layout of old: the log folder given to the user ktlsd runs
# as, who may put anything there.
logs=$T/logs
mkdir -p "$logs"
chown nobody "$logs"

# exits_at_once NAME WANT WORD ARGS...: ktlsd ARGS exits with WANT, not by
# the timeout, with one line on stderr matching WORD.
exits_at_once() {
	local name=$1 want=$2 word=$3 rc
	shift 3
	# -k: a start stuck in open(2) never takes its SIGTERM (sigwait is not reached).
	timeout -k 5 10 "$KTLSD" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	expect_eq "$name: exits $want at once" "$rc" "$want"
	expect_eq "$name: one line on stderr" "$(grep -c '' "$T/err")" 1
	expect_match "$name: ... saying why" "$(cat "$T/err")" "$word"
}

# start_fails NAME WANT WORD ARGS...: a start with the fixtures' root and
# certificate, plus ARGS, fails as exits_at_once says.
start_fails() {
	local name=$1 want=$2 word=$3
	shift 3
	exits_at_once "$name" "$want" "$word" --root "$FIX/root" --listen "127.0.0.1:$(freeport)" \
		--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 --log-level warn "$@"
}

# ---- links where a log or the pid file goes, at start ---------------------
ln -s "$victim" "$logs/access.log"
start_fails "--access-log, a symbolic link to a file of root's" 1 \
	"--access-log $logs/access\\.log: a symbolic link; not following it" \
	--user nobody --access-log "$logs/access.log"
check "... the file it points to is untouched" victim_intact
rm -f "$logs/access.log"

ln -s "$victim" "$logs/error.log"
start_fails "--error-log, a symbolic link" 2 "--error-log $logs/error\\.log: a symbolic link" \
	--user nobody --error-log "$logs/error.log"
check "... the file it points to is untouched" victim_intact
rm -f "$logs/error.log"

ln -s "$T/made-by-root" "$logs/access.log"
start_fails "--access-log, a link to nothing yet" 1 "a symbolic link; not following it" \
	--user nobody --access-log "$logs/access.log"
check "... nothing is made where it points" test ! -e "$T/made-by-root"
rm -f "$logs/access.log"

ln "$victim" "$logs/access.log"
start_fails "--access-log, a hard link to a file of root's" 1 \
	"--access-log $logs/access\\.log: a file with other hard links; not writing to it" \
	--user nobody --access-log "$logs/access.log"
rm -f "$logs/access.log"
check "... the file is untouched" victim_intact

mkfifo "$logs/access.log"
start_fails "--access-log, a FIFO" 1 "--access-log $logs/access\\.log: not a regular file" \
	--user nobody --access-log "$logs/access.log"
rm -f "$logs/access.log"

ln -s "$victim" "$logs/access.log"
exits_at_once "--test-config: the same link refused" 1 "a symbolic link; not following it" \
	--test-config --root "$FIX/root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" \
	--access-log "$logs/access.log"
rm -f "$logs/access.log"
check "... the file it points to is untouched" victim_intact

ln -s "$victim" "$logs/ktlsd.pid"
if start_ktlsd --user nobody --pid-file "$logs/ktlsd.pid"; then
	wait_until 10 grep -q "pid-file $logs/ktlsd.pid" "$KTLSD_LOG"
	check "--pid-file, a symbolic link: refused, said in one line" \
		grep -q "pid-file $logs/ktlsd.pid: a symbolic link; not following it" "$KTLSD_LOG"
	check "... the file it points to is untouched" victim_intact
	stop_ktlsd
	check "... and the link is left as it was at exit" test -L "$logs/ktlsd.pid"
fi
rm -f "$logs/ktlsd.pid"
ln "$victim" "$logs/ktlsd.pid"
if start_ktlsd --user nobody --pid-file "$logs/ktlsd.pid"; then
	wait_until 10 grep -q "pid-file $logs/ktlsd.pid" "$KTLSD_LOG"
	check "--pid-file, a hard link: refused, not emptied" \
		grep -q "pid-file $logs/ktlsd.pid: a file with other hard links" "$KTLSD_LOG"
	stop_ktlsd
fi
rm -f "$logs/ktlsd.pid"
check "... the file is untouched" victim_intact

# ---- links planted between a rename and the signal that reopens ------------
# The pid file in a folder of root's, which the server (nobody) cannot
# write to: the privileged helper removes it at exit.
if start_ktlsd --user nobody --access-log "$logs/access.log" --error-log "$logs/error.log" \
	--pid-file "$T/ktlsd.pid"; then
	wait_until 10 test -s "$T/ktlsd.pid"
	expect_eq "--pid-file: written" "$(cat "$T/ktlsd.pid")" "$KTLSD_PID"
	fetch before /a.txt?planted=before
	wait_until 10 grep -q 'planted=before' "$logs/access.log"
	mv "$logs/access.log" "$logs/access.log.1"
	ln -s "$victim" "$logs/access.log"
	kill -USR1 "$KTLSD_PID"
	wait_until 10 grep -q 'reopening the access log' "$logs/error.log"
	check "SIGUSR1, access.log now a link: one line saying so" \
		grep -q 'SIGUSR1: reopening the access log: a symbolic link; not following it; it stays on the old file' \
		"$logs/error.log"
	fetch after /a.txt?planted=after
	wait_until 10 grep -q 'planted=after' "$logs/access.log.1"
	check "... lines go on to the old file" grep -q 'planted=after' "$logs/access.log.1"
	check "... the file the link points to is untouched" victim_intact
	rm -f "$logs/access.log"
	mv "$logs/error.log" "$logs/error.log.1"
	ln "$victim" "$logs/error.log"
	kill -HUP "$KTLSD_PID"
	wait_until 10 grep -q 'SIGHUP: configuration and certificates reloaded' "$logs/error.log.1"
	check "SIGHUP, error.log now a hard link: one line saying so" \
		grep -q 'SIGHUP: reopening the error log: a file with other hard links; not writing to it; it stays on the old file' \
		"$logs/error.log.1"
	rm -f "$logs/error.log"
	check "... the file is untouched" victim_intact
	stop_ktlsd
	check "--pid-file in a folder of root's: removed at exit under --user" test ! -e "$T/ktlsd.pid"
fi

# ---- FIFOs where configuration is read -----------------------------------
mkfifo "$T/fifo"
base=(--root "$FIX/root" --listen "127.0.0.1:$(freeport)" --workers 1 --log-level warn)
for what in cert key tls-ticket-key-file config; do
	case $what in
	cert) args=(--cert "$T/fifo" --key "$FIX/ec.key") ;;
	key) args=(--cert "$FIX/ec.pem" --key "$T/fifo") ;;
	tls-ticket-key-file) args=(--cert "$FIX/ec.pem" --key "$FIX/ec.key" --tls-ticket-key-file "$T/fifo") ;;
	config) args=(--cert "$FIX/ec.pem" --key "$FIX/ec.key" --config "$T/fifo") ;;
	esac
	exits_at_once "--test-config, $what a FIFO" 2 "$T/fifo: (cannot open: )?not a regular file" \
		--test-config "${base[@]}" "${args[@]}"
	exits_at_once "start, $what a FIFO" 2 "$T/fifo: (cannot open: )?not a regular file" \
		"${base[@]}" "${args[@]}"
done
exits_at_once "--test-config, --mime-types a FIFO: the built-in types, said once" 0 \
	"--mime-types $T/fifo: not a regular file; the built-in types serve" \
	--test-config "${base[@]}" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --mime-types "$T/fifo"

# On reload, with and without the privileged helper: one error line, the
# running configuration serves on, SIGTERM still stops it.
mkdir -p "$T/reload"
for as in root nobody; do
	cp "$FIX/ec.pem" "$T/reload/cur.pem"
	cp "$FIX/ec.key" "$T/reload/cur.key"
	printf 'root %s\ncert %s\nkey %s\nworkers 2\n' "$FIX/root" "$T/reload/cur.pem" \
		"$T/reload/cur.key" >"$T/reload/ktlsd.conf"
	user=--user=nobody
	[ "$as" = root ] && user=--log-level=info
	start_on_free_port --config "$T/reload/ktlsd.conf" "$user" || continue
	rm "$T/reload/cur.pem"
	mkfifo "$T/reload/cur.pem"
	kill -HUP "$KTLSD_PID"
	wait_until 20 grep -q 'keeping the running' "$KTLSD_LOG"
	check "reload as $as, the certificate a FIFO: one error line" \
		grep -q "SIGHUP: cert $T/reload/cur.pem: not a regular file; keeping the running configuration" \
		"$KTLSD_LOG"
	fetch fifo_cert /a.txt
	expect_eq "... the running configuration serves on" "$STATUS" 200
	rm "$T/reload/cur.pem"
	cp "$FIX/ec.pem" "$T/reload/cur.pem"
	mv "$T/reload/ktlsd.conf" "$T/reload/ktlsd.conf.real"
	mkfifo "$T/reload/ktlsd.conf"
	n=$(grep -c 'keeping the running' "$KTLSD_LOG")
	kill -HUP "$KTLSD_PID"
	wait_until 20 sh -c 'test "$(grep -c "keeping the running" "$1")" -gt "$2"' sh "$KTLSD_LOG" "$n"
	check "reload as $as, the config file a FIFO: one error line" \
		grep -q "SIGHUP: ktlsd: $T/reload/ktlsd.conf: cannot open: not a regular file; keeping" \
		"$KTLSD_LOG"
	stop_ktlsd
	rm -f "$T/reload/ktlsd.conf"
	mv "$T/reload/ktlsd.conf.real" "$T/reload/ktlsd.conf"
done

# ---- certbot's layout: live/ holds links to the files in archive/ ------------
mkdir -p "$T/le/archive" "$T/le/live"
for n in 1 2; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-keyout "$T/le/archive/privkey$n.pem" -out "$T/le/archive/cert$n.pem" \
		-subj "/CN=certbot-$n" -addext "subjectAltName=DNS:localhost" 2>/dev/null
done
chmod 700 "$T/le/archive"
ln -s ../archive/cert1.pem "$T/le/live/cert.pem"
ln -s ../archive/privkey1.pem "$T/le/live/privkey.pem"
subject() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
		2>/dev/null | sed -n 's/^subject=.*CN *= *//p'
}
if start_on_free_port --root "$FIX/root" --cert "$T/le/live/cert.pem" \
	--key "$T/le/live/privkey.pem" --workers 1 --user nobody; then
	expect_eq "certificate and key through symbolic links: served" "$(subject)" certbot-1
	ln -sfn ../archive/cert2.pem "$T/le/live/cert.pem"
	ln -sfn ../archive/privkey2.pem "$T/le/live/privkey.pem"
	kill -HUP "$KTLSD_PID"
	wait_until 20 grep -q "SIGHUP: configuration and certificates reloaded" "$KTLSD_LOG"
	expect_eq "... a renewal (the links moved) reloads, root-only archive/ and --user" \
		"$(subject)" certbot-2
	stop_ktlsd
fi

# ---- a Unix socket's mode, without chmod ----------------------------------
if ! command -v strace >/dev/null; then
	fail "strace installed" "not found (scripts/install-deps installs it)"
else
	PORT=$(freeport)
	# umask 077: the socket is 0666 all the same, and the umask is back
	# for what is made after it (the access log: 0600).
	(umask 077 && exec strace -f -qq -e trace=chmod,fchmod,fchmodat -o "$T/chmod.trace" -- \
		"$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$PORT" --listen-plain "unix:$T/plain.sock" \
		--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 --access-log "$T/umask.log" \
		</dev/null >"$T/strace-run.log" 2>&1) &
	tracer=$!
	if wait_until 20 test -S "$T/plain.sock" && wait_until 20 port_open "$PORT"; then
		expect_eq "unix: socket file mode 0666 under umask 077" "$(stat -c %a "$T/plain.sock")" 666
		expect_eq "... the umask is back after the bind (access log 0600)" \
			"$(stat -c %a "$T/umask.log")" 600
		expect_eq "... set by no chmod of a path" "$(grep -E 'chmod' "$T/chmod.trace" | head -n 2)" ""
		code=$(curl -s --max-time 10 --unix-socket "$T/plain.sock" -o /dev/null -w '%{http_code}' \
			http://localhost/a.txt)
		expect_eq "... and it serves" "$code" 200
	else
		fail "unix: the traced server starts" "$(tail -n 3 "$T/strace-run.log" | tr '\n' ' ')"
	fi
	traced=$(pgrep -P "$tracer" | head -n 1)
	[ -n "$traced" ] && kill -TERM "$traced"
	wait_exit "$tracer" 20 || kill -KILL "$tracer"
fi
