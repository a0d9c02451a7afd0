# shellcheck shell=bash
# Range requests (RFC 9110 14): single, suffix, open, multipart, 416,
# offsets past 4 GiB, If-Range, and syntax the server must ignore.

start_ktlsd || return 0
big=$FIX/root/big.bin
big_size=$(size "$big")

# slice FILE FIRST LAST OUT: bytes FIRST..LAST (inclusive) of FILE into OUT.
slice() {
	tail -c +$(($2 + 1)) "$1" | head -c $(($3 - $2 + 1)) >"$4"
}

# expect_range NAME RANGE FIRST LAST: a single-range request on big.bin.
expect_range() {
	local name=$1
	fetch range /big.bin -H "Range: bytes=$2"
	expect_eq "$name: status 206" "$STATUS" 206
	expect_eq "$name: Content-Range" "$(hdr "$T/range.h" Content-Range)" "bytes $3-$4/$big_size"
	expect_eq "$name: Content-Length" "$(hdr "$T/range.h" Content-Length)" $(($4 - $3 + 1))
	slice "$big" "$3" "$4" "$T/range.want"
	check "$name: bytes equal the file's" cmp -s "$T/range.b" "$T/range.want"
}

expect_range "range 100-199" 100-199 100 199
expect_range "range 0-0" 0-0 0 0
expect_range "range across 1 MiB" 1000000-3000000 1000000 3000000
expect_range "suffix range -100" -100 $((big_size - 100)) $((big_size - 1))
expect_range "open range 100-" 100- 100 $((big_size - 1))
expect_range "last byte past the end is clamped" "$((big_size - 10))-$((big_size + 1000))" \
	$((big_size - 10)) $((big_size - 1))

ranges="0-9,1000-1099,$((big_size - 50))-$((big_size - 1))"
fetch multi /big.bin -H "Range: bytes=0-9,1000-1099,-50"
expect_eq "multi-range: status 206" "$STATUS" 206
ctype=$(hdr "$T/multi.h" Content-Type)
expect_match "multi-range: Content-Type multipart/byteranges" "$ctype" '^multipart/byteranges; *boundary='
expect_eq "multi-range: Content-Length is the body length" "$(hdr "$T/multi.h" Content-Length)" "$(size "$T/multi.b")"
problems=$("$PY" "$LIBPY" multipart "$T/multi.b" "$ctype" "$big" "$ranges" 2>&1)
expect_eq "multi-range: parts, Content-Range and bytes" "$problems" ""

# Large parts, each past the one before: under ktlsd's sealer each is
# sealed from the file's mapping, which must hold the whole file (mapped
# only to the first part's end, the later parts' bytes were other memory).
ranges="0-299999,600000-899999,5000000-8999999"
fetch multibig /big.bin -H "Range: bytes=$ranges"
expect_eq "multi-range, large parts: status 206" "$STATUS" 206
problems=$("$PY" "$LIBPY" multipart "$T/multibig.b" "$(hdr "$T/multibig.h" Content-Type)" "$big" \
	"$ranges" 2>&1)
expect_eq "multi-range, large parts: parts, Content-Range and bytes" "$problems" ""

fetch unsat /big.bin -H "Range: bytes=$big_size-"
expect_eq "unsatisfiable range: 416" "$STATUS" 416
expect_eq "unsatisfiable range: Content-Range bytes */SIZE" "$(hdr "$T/unsat.h" Content-Range)" "bytes */$big_size"
fetch unsat2 /big.bin -H "Range: bytes=$((big_size + 5))-$((big_size + 10))"
expect_eq "range wholly past the end: 416" "$STATUS" 416

# 5 GiB sparse file: offsets that do not fit in 32 bits.
mark=4831838208
fetch sparse /sparse.bin -H "Range: bytes=$mark-$((mark + 15))"
expect_eq "range past 4 GiB: 206" "$STATUS" 206
expect_eq "range past 4 GiB: Content-Range" "$(hdr "$T/sparse.h" Content-Range)" "bytes $mark-$((mark + 15))/5368709120"
expect_eq "range past 4 GiB: the marker bytes" "$(cat "$T/sparse.b")" "MARK-4831838208!"
fetch sparse2 /sparse.bin -H "Range: bytes=$((mark - 4))-$((mark + 19))"
expect_eq "range around the marker: bytes" "$(od -An -c "$T/sparse2.b" | tr -s ' \n' ' ')" \
	" \\0 \\0 \\0 \\0 M A R K - 4 8 3 1 8 3 8 2 0 8 ! \\0 \\0 \\0 \\0 "
fetch sparse3 /sparse.bin -H "Range: bytes=-16"
expect_eq "suffix range of the 5 GiB file: Content-Range" "$(hdr "$T/sparse3.h" Content-Range)" "bytes 5368709104-5368709119/5368709120"
fetch sparsehead /sparse.bin -I
expect_eq "HEAD of the 5 GiB file: status" "$STATUS" 200
expect_eq "HEAD of the 5 GiB file: Content-Length" "$(hdr "$T/sparsehead.h" Content-Length)" 5368709120

# If-Range: the current ETag keeps the range, any other validator gets 200.
text=$FIX/root/text.txt
fetch ir0 /text.txt -I
etag=$(hdr "$T/ir0.h" ETag)
lm=$(hdr "$T/ir0.h" Last-Modified)
fetch ir1 /text.txt -H "Range: bytes=0-9" -H "If-Range: $etag"
expect_eq "If-Range with the current ETag: 206" "$STATUS" 206
expect_eq "If-Range with the current ETag: bytes" "$(cat "$T/ir1.b")" "$(head -c 10 "$text")"
fetch ir2 /text.txt -H "Range: bytes=0-9" -H 'If-Range: "an-old-etag"'
expect_eq "If-Range with an old ETag: 200" "$STATUS" 200
check "If-Range with an old ETag: the whole file" cmp -s "$T/ir2.b" "$text"
fetch ir3 /text.txt -H "Range: bytes=0-9" -H "If-Range: $lm"
expect_eq "If-Range with the current Last-Modified: 206" "$STATUS" 206
fetch ir4 /text.txt -H "Range: bytes=0-9" -H "If-Range: Thu, 01 Jan 1998 00:00:00 GMT"
expect_eq "If-Range with an old date: 200" "$STATUS" 200

# Range syntax the server must ignore (answer 200 with the whole file).
for r in "bytes=abc" "chars=0-1" "bytes=5-1" "bytes=" "bytes=--5" "bytes=1-2-3" "bytes 0-9"; do
	fetch bad /text.txt -H "Range: $r"
	expect_eq "invalid Range '$r': 200" "$STATUS" 200
	check "invalid Range '$r': whole file" cmp -s "$T/bad.b" "$text"
done

# HEAD with Range: RFC 9110 defines ranges for GET only, so 200 is right and
# 206 is common (nginx); either way Content-Length must match the status.
fetch rhead /big.bin -I -H "Range: bytes=100-199"
case $STATUS in
206) expect_eq "HEAD with Range (206): Content-Length" "$(hdr "$T/rhead.h" Content-Length)" 100 ;;
*) expect_eq "HEAD with Range (200): Content-Length" "$STATUS $(hdr "$T/rhead.h" Content-Length)" "200 $big_size" ;;
esac

stop_ktlsd

# Two mirrors of one file (same bytes, size and mtime; another inode, as
# rsync -t leaves it): the same ETag, nginx's "mtime-size" in hex, so a
# download begun on one resumes on the other with If-Range. A file changed
# in the last 2 s adds its inode to its tag (see cond.h).
mkdir -p "$T/mirror1" "$T/mirror2"
head -c 100000 /dev/urandom >"$T/mirror1/f.bin"
touch -d "@$(($(date +%s) - 60))" "$T/mirror1/f.bin"
cp -p "$T/mirror1/f.bin" "$T/mirror2/f.bin"
want_tag=$(printf '"%x-%x"' "$(stat -c %Y "$T/mirror1/f.bin")" 100000)
start_ktlsd --root "$T/mirror1" || return 0
fetch m1 /f.bin -r 0-49999
stop_ktlsd
expect_eq "mirror 1: the ETag is mtime-size, as nginx's" "$(hdr "$T/m1.h" ETag)" "$want_tag"
start_ktlsd --root "$T/mirror2" || return 0
fetch m2 /f.bin -r 50000- -H "If-Range: $(hdr "$T/m1.h" ETag)"
expect_eq "mirror 2: the download resumes with mirror 1's ETag (206)" "$STATUS" 206
check "mirror 2: the two halves are the file" sh -c 'cat "$1" "$2" | cmp -s - "$3"' sh \
	"$T/m1.b" "$T/m2.b" "$T/mirror1/f.bin"
head -c 100000 /dev/urandom >"$T/mirror2/new.bin"
fetch fresh /new.bin -I
expect_match "a file changed in the last 2 s: its inode is in the tag" "$(hdr "$T/fresh.h" ETag)" \
	"^\"[0-9a-f]+-186a0-[0-9a-f]+-[0-9a-f]+\"$"
stop_ktlsd
