# shellcheck shell=bash
# The open-file cache (server/core/filecache.c): a file replaced by rename or
# truncated, during and between requests, is never served with the wrong
# validators: one ETag always names one body, and a changed file is seen
# within the cache's validity (1 s) plus a margin. The same holds for the
# small files whose bytes it keeps, and it keeps none of a file whose
# mtime is not settled.

root=$T/root
mkdir -p "$root"
head -c 100000 /dev/urandom >"$T/A"
head -c 70000 /dev/urandom >"$T/B"
cp "$T/A" "$root/f.bin"
start_ktlsd --root "$root" --workers 1 || return 0

# churn SECS MODE [A B]: a reader on one keep-alive connection (reconnecting
# when the server closes one) fetches /f.bin as fast as it can while, every
# 20 ms, the file is swapped between A and B by rename (MODE rename; MODE
# settled: with an mtime a minute old), or cut 1,000 bytes shorter in place
# (MODE shrink, from A). Prints "OK n" when
# every complete response was a whole version (A or B; a prefix of A when
# shrinking) with its own length, and no ETag named two bodies; else "BAD
# reason". (Rewriting a file in place while it is read tears it for any
# server. Shrinking tears it too, in one way only: a read that took the
# file's size just before a truncate to within the same page copies that
# page while or after the kernel zeroes its tail, so bytes past the new
# size, under 4 KiB from the end, read as zeros, all of them or some among
# the file's own. A plain pread loop beside a truncating thread does both,
# with no server at all (Linux 6.18, ext4: 2 to 14 reads in a million had
# zeros among the file's bytes); nginx would send those too. Such a body
# is counted as torn, not bad: any other wrong byte is bad.)
churn() {
	"$PY" - "$PORT" "$root" "${3:-$T/A}" "${4:-$T/B}" "$1" "$2" <<'PY'
import hashlib, http.client, os, ssl, sys, threading, time
port, root, a, b, secs, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]
bodies = {hashlib.sha256(open(p, "rb").read()).hexdigest(): open(p, "rb").read() for p in (a, b)}
versions = [open(a, "rb").read(), open(b, "rb").read()]
stop = time.monotonic() + secs
def writer():
    i = 0
    while time.monotonic() < stop:
        i += 1
        data = versions[i % 2]
        if mode in ("rename", "settled"):
            tmp = os.path.join(root, ".f.tmp")
            with open(tmp, "wb") as f:
                f.write(data)
            if mode == "settled":  # old enough for the cache to keep small bytes
                os.utime(tmp, (time.time() - 60, time.time() - 60))
            os.rename(tmp, os.path.join(root, "f.bin"))
        else:
            os.truncate(os.path.join(root, "f.bin"), max(0, len(versions[0]) - 1000 * i))
        time.sleep(0.02)
t = threading.Thread(target=writer)
t.start()
ctx = ssl._create_unverified_context()
etags = {}
good = bad = torn = 0
why = ""
conn = None
while time.monotonic() < stop:
    try:
        if conn is None:
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        conn.request("GET", "/f.bin")
        r = conn.getresponse()
        body = r.read()
    except (OSError, http.client.HTTPException):
        conn = None  # a response cut because the file shrank: allowed
        continue
    h = hashlib.sha256(body).hexdigest()
    etag = r.getheader("ETag")
    whole = h in bodies or (mode == "shrink" and versions[0].startswith(body))
    if not whole and mode == "shrink" and len(body) <= len(versions[0]):
        a = versions[0][:len(body)]
        k = len(os.path.commonprefix([body, a]))
        if len(body) - k < 4096 and all(x == 0 or x == y for x, y in zip(body[k:], a[k:])):
            torn += 1
            continue
    if r.status != 200 or not whole or int(r.getheader("Content-Length")) != len(body):
        bad += 1
        why = "status %s, %d bytes, not A or B whole" % (r.status, len(body))
    elif etags.setdefault(etag, h) != h:
        bad += 1
        why = "ETag %s named two bodies" % etag
    else:
        good += 1
t.join()
if torn:
    print("# %d torn by the kernel's read against truncate (zeros in the last page)" % torn, file=sys.stderr)
print("OK %d" % good if not bad and good else "BAD %d of %d: %s" % (bad, bad + good, why or "no response"))
PY
}

# settle FILE: an mtime a minute old, as a file nobody is writing has (the
# cache keeps the bytes of small files only then).
settle() {
	touch -d "@$(($(date +%s) - 60))" "$1"
}
# served_now FILE: wait until /f.bin is FILE's bytes (a change is seen within
# the cache's second; a loaded machine may take longer).
served_now() {
	wait_until 10 sh -c 'curl -sk "$1" | cmp -s - "$2"' sh "$BASE/f.bin" "$1"
}
OUT=$(churn 3 rename)
expect_match "file replaced by rename every 20 ms: each ETag names one body" "$OUT" '^OK [0-9]+$'
head -c 5000 /dev/urandom >"$T/SA"
head -c 3000 /dev/urandom >"$T/SB"
cp "$T/SA" "$root/f.new"
settle "$root/f.new"
mv "$root/f.new" "$root/f.bin"
served_now "$T/SA"
OUT=$(churn 3 settled "$T/SA" "$T/SB")
expect_match "small settled files (kept in memory) swapped by rename every 20 ms: each ETag names one body" \
	"$OUT" '^OK [0-9]+$'
cp "$T/A" "$root/f.new"
mv "$root/f.new" "$root/f.bin"
served_now "$T/A"
OUT=$(churn 2 shrink)
expect_match "file cut shorter in place every 20 ms: each ETag names one body" "$OUT" '^OK [0-9]+$'

# Between requests: the new file within the cache's second (and a margin
# for a loaded machine), never the old one's bytes under the new validators.
cp "$T/A" "$root/f.bin"
sleep 1.2
fetch before /f.bin
cp "$T/B" "$root/f.new"
mv "$root/f.new" "$root/f.bin"
wait_until 10 sh -c 'curl -sk "$1" | cmp -s - "$2"' sh "$BASE/f.bin" "$T/B"
fetch after_rename /f.bin
expect_eq "replaced by rename: the new file is served" "$(sha "$T/after_rename.b")" "$(sha "$T/B")"
expect_ne "... under a new ETag" "$(hdr "$T/after_rename.h" etag)" "$(hdr "$T/before.h" etag)"

truncate -s 1000 "$root/f.bin"
wait_until 10 sh -c 'test "$(curl -sk "$1" | wc -c)" = 1000' sh "$BASE/f.bin"
fetch after_truncate /f.bin
expect_eq "truncated: the short file is served whole" \
	"$STATUS $(hdr "$T/after_truncate.h" content-length)" "200 1000"
check "... its bytes" cmp -s "$T/after_truncate.b" "$root/f.bin"

# A file served again comes from the cache.
for i in 1 2 3 4 5 6 7 8; do kcurl -o /dev/null "$BASE/f.bin"; done
stop_ktlsd
hits=$(grep -o 'file_cache_hits=[0-9]*' "$KTLSD_LOG" | cut -d= -f2)
if [ "${hits:-0}" -ge 7 ]; then
	pass "the same file 8 times: served from the open-file cache ($hits hits)"
else
	fail "the same file 8 times: served from the open-file cache" "hits=${hits:-none}"
fi

# ---- small files whose bytes the cache keeps ----
# mem_hits: responses whose bytes came from the cache's memory.
mem_hits() {
	grep -o 'file_cache_mem_hits=[0-9]*' "$KTLSD_LOG" | cut -d= -f2
}
head -c 4000 /dev/urandom >"$T/S1"
head -c 4000 /dev/urandom >"$T/S2"
cp "$T/S1" "$root/s.bin"
settle "$root/s.bin"
# A file whose mtime is not settled (here: ahead of the clock) is read
# every time: its bytes may still be changing within one timestamp tick.
cp "$T/S1" "$root/fresh.bin"
touch -d "@$(($(date +%s) + 600))" "$root/fresh.bin"
start_ktlsd --root "$root" --workers 1 || return 0
for i in 1 2 3 4 5; do kcurl -o /dev/null "$BASE/fresh.bin"; done
stop_ktlsd
expect_eq "a file with an unsettled mtime: its bytes are not kept" "$(mem_hits)" 0

start_ktlsd --root "$root" --workers 1 || return 0
fetch small1 /s.bin
for i in 1 2 3 4; do kcurl -o /dev/null "$BASE/s.bin"; done
KCURL_HTTP=--http2 fetch small2 /s.bin
check "a small settled file: its bytes over HTTP/1.1" cmp -s "$T/small1.b" "$T/S1"
check "... and over HTTP/2, from memory" cmp -s "$T/small2.b" "$T/S1"

# Replaced by rename with a file of the same size and the same mtime: only
# the inode tells them apart, and the kept bytes must go with the old one.
# The ETag is mtime and size, as nginx's, so that identical files on two
# mirrors share it: by that definition these two are one representation
# (a settled file's same-second, same-size replacement is the accepted
# cost, as for nginx; a recent file's tag has its inode too).
cp "$T/S2" "$root/s.new"
touch -r "$root/s.bin" "$root/s.new"
mv "$root/s.new" "$root/s.bin"
wait_until 10 sh -c 'curl -sk "$1" | cmp -s - "$2"' sh "$BASE/s.bin" "$T/S2"
fetch small3 /s.bin
check "replaced by rename (same size and mtime): the new bytes are served" \
	cmp -s "$T/small3.b" "$T/S2"
expect_eq "... under the same ETag (mtime and size, as on a mirror)" "$(hdr "$T/small3.h" etag)" "$(hdr "$T/small1.h" etag)"
kcurl -o /dev/null "$BASE/s.bin"

# Rewritten in place, then its mtime put back: ctime still moves.
old=$(stat -c %Y "$root/s.bin")
dd if="$T/S1" of="$root/s.bin" conv=notrunc status=none
touch -d "@$old" "$root/s.bin"
wait_until 10 sh -c 'curl -sk "$1" | cmp -s - "$2"' sh "$BASE/s.bin" "$T/S1"
KCURL_HTTP=--http2 fetch small4 /s.bin
check "rewritten in place, mtime restored: the new bytes are served" cmp -s "$T/small4.b" "$T/S1"
stop_ktlsd
n=$(mem_hits)
if [ "${n:-0}" -ge 4 ]; then
	pass "a small settled file served again: from memory ($n responses)"
else
	fail "a small settled file served again: from memory" "file_cache_mem_hits=${n:-none}"
fi
