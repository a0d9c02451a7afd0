# shellcheck shell=bash
# A server held to its user's pipe quota still splices. The kernel gives a
# user fs.pipe-user-pages-soft pages of pipe buffers; past them, a process
# without CAP_SYS_RESOURCE gets two-page pipes and cannot grow them (pipe(7)).
# ktlsd holds no capability once started, whatever user it runs as, so a
# busy machine (other servers of the same user, any other pipes) puts it
# there. Its splices then have to go through a small pipe, slowly, rather
# than fail the response: before, a worker with no pipe yet closed the
# connection after the head ("no pipe for splice").
#
# The server runs as nobody, as systemd would start it (no --user: then its
# pipes are made as it goes, not up front), while another process of
# nobody's holds that user's whole quota. The file is evicted first, so
# --sendfile on takes the ring's splices.

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "pipe quota" "needs root and setpriv, to run as nobody"
	return 0
fi
soft=$(cat /proc/sys/fs/pipe-user-pages-soft 2>/dev/null || echo 0)
if [ "${soft:-0}" -eq 0 ]; then
	skip "pipe quota" "fs.pipe-user-pages-soft is 0 here: no quota to meet"
	return 0
fi

pub=$(nobody_site pipeq) || {
	fail "pipe quota: a folder to serve" "nobody_site failed"
	return 0
}
# nobody's own file, so that the splices come from the eviction, the case
# this test is about: the kernel tells a process whether pages are cached
# only for a file it could write, and any other file takes the splices
# anyway (t_cold_not_ours).
chown nobody "$pub/root/big.bin"
want=$(cat "$FIX/big.sha256")

# The holder: nobody's pipes, grown to 1 MiB until the kernel says no; it
# prints how many it holds and keeps them until its stdin closes.
mkfifo "$pub/hold.in"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$PY" -c '
import fcntl, os, sys
F_SETPIPE_SZ = 1031
held = []
while len(held) < 100000:
    r, w = os.pipe()
    held.append((r, w))
    try:
        fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    except OSError:
        break
print(len(held), flush=True)
sys.stdin.read()' <"$pub/hold.in" >"$pub/hold.out" 2>&1 &
holder=$!
exec {hold_fd}>"$pub/hold.in"
wait_until 30 test -s "$pub/hold.out"
check "pipe quota: nobody's quota is taken ($(head -c 100 "$pub/hold.out") pipes)" \
	grep -qE '^[0-9]+$' "$pub/hold.out"

plain_port=$(freeport)
if start_as_nobody "$pub" --sendfile on --workers 1 --listen-plain "127.0.0.1:$plain_port"; then
	evict "$pub/root/big.bin"
	# A small pipe moves 32 MiB in ~4,000 splices: give it time on a busy machine.
	timeout 300 curl -s -o "$T/pq.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "pipe quota: the evicted file arrives whole through a small pipe" \
		"$(sha "$T/pq.b")" "$want"
	rm -f "$T/pq.b"
	stop_ktlsd
	stats=$(grep -m1 'worker 0 stats:' "$KTLSD_LOG")
	sp=$(sed -n 's/.* splice_ops=\([0-9]*\).*/\1/p' <<<"$stats")
	if [ "${sp:-0}" -gt 0 ]; then
		pass "pipe quota: the body went by splices ($sp)"
	else
		skip "pipe quota: splices" "the file stayed in the page cache (sendfile, no pipe): $stats"
	fi
	expect_file_lacks "pipe quota: no 'no pipe for splice'" "$KTLSD_LOG" "no pipe for splice"
fi
exec {hold_fd}>&-
wait "$holder" 2>/dev/null
rm -rf "$pub"
