# shellcheck shell=bash
# A file the server could not write is never taken for cached. The kernel
# says whether a file's pages are in the page cache only to a process that
# could write it (cachestat(2) answers EPERM, mincore(2) calls every page
# resident: server/core/file_resident.c); a mirror's files belong to
# whoever syncs them, not to the user ktlsd serves as. Before, such a file
# evicted from the cache went by a sendfile on the worker, which read it
# from the disk there and stalled every other connection of the worker.
# Now it goes by the ring's splices, which wait for the disk off the
# worker.
#
# The server runs as nobody (as under --user or systemd); the file is
# root's, 0644, evicted; plain HTTP with --sendfile on, the path that
# sends cached bytes by sendfile.

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "a file not ours" "needs root and setpriv, to run as nobody"
	return 0
fi

pub=$(nobody_site notours) || {
	fail "a file not ours: a folder to serve" "nobody_site failed"
	return 0
}
chown root:root "$pub/root/big.bin"
want=$(cat "$FIX/big.sha256")

plain_port=$(freeport)
if start_as_nobody "$pub" --sendfile on --workers 1 --listen-plain "127.0.0.1:$plain_port"; then
	evict "$pub/root/big.bin"
	timeout 120 curl -s -o "$T/notours.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "a file not ours: the evicted file arrives whole" "$(sha "$T/notours.b")" "$want"
	# Cached now (curl's download read it in), but still not known to be.
	timeout 120 curl -s -o "$T/notours.b" "http://127.0.0.1:$plain_port/big.bin"
	expect_eq "a file not ours: again, from the page cache" "$(sha "$T/notours.b")" "$want"
	rm -f "$T/notours.b"
	stop_ktlsd
	stats=$(grep -m1 'worker 0 stats:' "$KTLSD_LOG")
	sf=$(sed -n 's/.* sendfile_calls=\([0-9]*\).*/\1/p' <<<"$stats")
	sp=$(sed -n 's/.* splice_ops=\([0-9]*\).*/\1/p' <<<"$stats")
	expect_eq "a file not ours: no sendfile on the worker (sendfile_calls)" "${sf:-missing}" 0
	if [ "${sp:-0}" -gt 0 ]; then
		pass "a file not ours: the bodies went by the ring's splices ($sp)"
	else
		fail "a file not ours: the bodies went by the ring's splices" "$stats"
	fi
fi
rm -rf "$pub"
