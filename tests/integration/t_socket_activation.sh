# shellcheck shell=bash
# Socket activation: listening sockets passed by a service manager
# (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES) are served instead of binding
# --listen; every worker accepts from them; they keep listening while ktlsd
# restarts, so a connection made in between is served by the next one.

STUB="$(dirname "${BASH_SOURCE[0]}")/systemd_stub.py"

# activate ARGS...: systemd-socket-activate ARGS (its options, then the
# command); the process becomes ktlsd when the first connection arrives,
# which the wait for the port makes. Sets KTLSD_PID and KTLSD_LOG.
activate() {
	KTLSD_STARTS=$((${KTLSD_STARTS:-0} + 1))
	KTLSD_LOG="$T/ktlsd.$KTLSD_STARTS.log"
	BASE="https://localhost:$PORT"
	systemd-socket-activate "$@" </dev/null >>"$KTLSD_LOG" 2>&1 &
	KTLSD_PID=$!
	echo "$KTLSD_PID" >>"$T/pids"
	wait_until 10 port_open "$PORT"
	wait_until 20 grep -q "serving .* with" "$KTLSD_LOG"
}

# accepted_by_each_worker: the exit stats of every worker in $KTLSD_LOG
# count at least one accepted connection.
accepted_by_each_worker() {
	local lines
	lines=$(grep -c 'worker [0-9]* stats: accepted=' "$KTLSD_LOG")
	[ "$lines" -ge 2 ] && ! grep -q 'worker [0-9]* stats: accepted=0 ' "$KTLSD_LOG"
}

if ! command -v systemd-socket-activate >/dev/null; then
	fail "systemd-socket-activate installed" "not found (Debian package systemd; scripts/install-deps installs it)"
else
	# HTTPS on the passed socket; the --listen given is not bound.
	PORT=$(freeport)
	OTHER=$(freeport)
	activate -l "127.0.0.1:$PORT" "$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$OTHER" \
		--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 2
	fetch sa_index /
	expect_eq "systemd-socket-activate: HTTPS on the passed socket" "$STATUS" 200
	check "... the page itself" grep -q KTLSD-INDEX-PAGE "$T/sa_index.b"
	check "... the log says so" grep -q "socket activation: serving the passed sockets (https 127.0.0.1:$PORT (fd 3))" "$KTLSD_LOG"
	check "... and --listen is not bound" sh -c '! ss -Hltn "sport = :$1" | grep -q .' sh "$OTHER"
	check "... the socket is ktlsd's own, not a copy it bound" port_is_ours "$PORT" "$KTLSD_PID"
	ok=0
	for i in $(seq 1 20); do
		fetch "sa_$i" /a.txt
		[ "$STATUS" = 200 ] && ok=$((ok + 1))
	done
	expect_eq "... 20 connections one after another, all served" "$ok" 20
	fetch sa_big /big.bin
	expect_eq "... a 32 MiB download, intact" "$(sha "$T/sa_big.b")" "$(cat "$FIX/big.sha256")"
	stop_ktlsd
	check "... every worker accepted from the one passed socket" accepted_by_each_worker

	# A socket named "http" serves plain HTTP, and needs no certificate.
	PORT=$(freeport)
	activate -l "127.0.0.1:$PORT" --fdname=http "$KTLSD" --root "$FIX/root" --workers 2
	STATUS=$(curl -sS --max-time 30 -o "$T/sa_plain.b" -w '%{http_code}' "http://127.0.0.1:$PORT/" 2>"$T/sa_plain.err")
	expect_eq "--fdname=http: plain HTTP on the passed socket" "$STATUS" 200
	check "... named http in the log" grep -q "serving the passed sockets (http 127.0.0.1:$PORT" "$KTLSD_LOG"
	stop_ktlsd

	# A reload keeps the passed sockets, whatever the file's listen says.
	PORT=$(freeport)
	printf 'root %s\nlisten 127.0.0.1:%s\ncert %s\nkey %s\nworkers 2\n' "$FIX/root" "$(freeport)" \
		"$FIX/ec.pem" "$FIX/ec.key" >"$T/sa.conf"
	activate -l "127.0.0.1:$PORT" "$KTLSD" --config "$T/sa.conf"
	printf 'dotfiles on\n' >>"$T/sa.conf"
	kill -HUP "$KTLSD_PID"
	wait_until 10 grep -q "reloaded" "$KTLSD_LOG"
	check "SIGHUP under socket activation: reloaded, not refused" grep -q "configuration and certificates reloaded" "$KTLSD_LOG"
	fetch sa_reloaded /.secret
	expect_eq "... the new configuration serves on the passed socket" "$STATUS" 200
	stop_ktlsd
fi

# The socket outlives ktlsd: stopped, ktlsd leaves it listening; a client
# that connects while none runs waits in the backlog and is served by the
# next one. (A stopping ktlsd shuts down the sockets it bound, but must not
# shut down a passed one: that would stop it for the manager too.)
PORT=$(freeport)
"$PY" "$STUB" activate "$PORT" "$T/act.out" "$T/act.go" -- "$KTLSD" --root "$FIX/root" \
	--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 2 >"$T/act.log" 2>&1 &
act=$!
wait_until 10 grep -q '^started' "$T/act.out"
first=$(awk '/^started/ { print $2; exit }' "$T/act.out")
echo "$first" >>"$T/pids"
BASE="https://localhost:$PORT"
fetch act1 /
expect_eq "restart: the first ktlsd serves the passed socket" "$STATUS" 200
kill -TERM "$first"
wait_until 20 grep -q "^exited $first " "$T/act.out"
expect_eq "... exits 0 on SIGTERM" "$(awk -v p="$first" '$1 == "exited" && $2 == p { print $3 }' "$T/act.out")" 0
check "... leaving the socket listening" port_open "$PORT"
kcurl -o "$T/act2.b" -w '%{http_code}' "$BASE/a.txt" >"$T/act2.status" 2>"$T/act2.err" &
waiting=$!
# The client is connected (in the backlog) before the next ktlsd starts.
wait_until 20 sh -c 'ss -Htn state established "dport = :$1" | grep -q .' sh "$PORT"
check "... a client connects while no ktlsd runs" \
	sh -c 'ss -Htn state established "dport = :$1" | grep -q .' sh "$PORT"
: >"$T/act.go"
wait "$waiting"
expect_eq "... and the next ktlsd serves it" "$(cat "$T/act2.status")" 200
second=$(awk '/^started/ { n++; if (n == 2) { print $2; exit } }' "$T/act.out")
echo "$second" >>"$T/pids"
expect_ne "... a new process" "$second" "$first"
kill -TERM "$act"
wait "$act" 2>/dev/null
check "... which stops with its manager" sh -c '! kill -0 "$1" 2>/dev/null' sh "$second"

# Variables for another process are not ours: LISTEN_PID names someone else.
PORT=$(freeport)
LISTEN_PID=1 LISTEN_FDS=1 launch --root "$FIX/root" --listen "127.0.0.1:$PORT" \
	--cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 2 3</dev/null
expect_eq "LISTEN_PID of another process: ktlsd binds --listen itself" "$?" 0
fetch other_pid /
expect_eq "... and serves" "$STATUS" 200
check "... without a word of socket activation" sh -c '! grep -q "socket activation" "$1"' sh "$KTLSD_LOG"
stop_ktlsd

# What is passed must be a listening TCP or Unix socket.
: >"$T/not-a-socket"
timeout 10 sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@" 3<"'"$T/not-a-socket"'"' "$KTLSD" \
	--root "$FIX/root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" >"$T/nots.out" 2>"$T/nots.err"
expect_eq "fd 3 a file, not a socket: exit 1" "$?" 1
expect_eq "... with one line" "$(grep -c '' "$T/nots.err")" 1
expect_match "... saying so" "$(cat "$T/nots.err")" 'LISTEN_FDS: fd 3 is not a listening TCP or Unix socket'
timeout 10 sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=a:b exec "$0" "$@"' "$KTLSD" \
	--root "$FIX/root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" >"$T/names.out" 2>"$T/names.err"
expect_eq "two names for one socket: exit 1" "$?" 1
expect_match "... saying so" "$(cat "$T/names.err")" 'LISTEN_FDNAMES names 2 sockets, LISTEN_FDS passes 1'
