# shellcheck shell=bash
# Conditional requests (RFC 9110 13): If-None-Match, If-Modified-Since,
# If-Match, If-Unmodified-Since, and their precedence.

start_ktlsd || return 0
text=$FIX/root/text.txt

fetch base /text.txt
etag=$(hdr "$T/base.h" ETag)
lm=$(hdr "$T/base.h" Last-Modified)
expect_ne "ETag to test with" "$etag" ""
expect_ne "Last-Modified to test with" "$lm" ""
old="Thu, 01 Jan 1998 00:00:00 GMT"
future="Fri, 01 Jan 2100 00:00:00 GMT"

fetch inm /text.txt -H "If-None-Match: $etag"
expect_eq "If-None-Match current ETag: 304" "$STATUS" 304
expect_eq "If-None-Match current ETag: no body" "$(size "$T/inm.b")" 0
expect_eq "304 repeats the ETag" "$(hdr "$T/inm.h" ETag)" "$etag"
# A GET pipelined behind the 304: a stray body byte would break its status line.
raw "send=GET /text.txt HTTP/1.1\\r\\nHost: localhost\\r\\nIf-None-Match: $etag\\r\\n\\r\\nGET /a.txt HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n" resp-head resp
expect_eq "304 on the wire: not one body byte" "$(raw_summary)" "RESP 304 0 RESP 200 $(size "$FIX/root/a.txt")"

fetch inmlist /text.txt -H "If-None-Match: \"other\", $etag"
expect_eq "If-None-Match list containing the ETag: 304" "$STATUS" 304
fetch inmweak /text.txt -H "If-None-Match: W/${etag#W/}"
expect_eq "If-None-Match weak form of the ETag: 304 (weak comparison)" "$STATUS" 304
fetch inmstar /text.txt -H "If-None-Match: *"
expect_eq "If-None-Match *: 304" "$STATUS" 304
fetch inmother /text.txt -H 'If-None-Match: "something-else"'
expect_eq "If-None-Match other ETag: 200" "$STATUS" 200
check "If-None-Match other ETag: full body" cmp -s "$T/inmother.b" "$text"

fetch ims /text.txt -H "If-Modified-Since: $lm"
expect_eq "If-Modified-Since = Last-Modified: 304" "$STATUS" 304
expect_eq "If-Modified-Since = Last-Modified: no body" "$(size "$T/ims.b")" 0
fetch imsold /text.txt -H "If-Modified-Since: $old"
expect_eq "If-Modified-Since older date: 200" "$STATUS" 200
check "If-Modified-Since older date: full body" cmp -s "$T/imsold.b" "$text"
fetch imsbad /text.txt -H "If-Modified-Since: not a date"
expect_eq "If-Modified-Since garbage: 200" "$STATUS" 200
fetch imsinm /text.txt -H 'If-None-Match: "something-else"' -H "If-Modified-Since: $lm"
expect_eq "If-None-Match wins over If-Modified-Since: 200" "$STATUS" 200

fetch im /text.txt -H 'If-Match: "wrong-tag"'
expect_eq "If-Match wrong ETag: 412" "$STATUS" 412
fetch imok /text.txt -H "If-Match: $etag"
expect_eq "If-Match current ETag: 200" "$STATUS" 200
check "If-Match current ETag: full body" cmp -s "$T/imok.b" "$text"
fetch imstar /text.txt -H "If-Match: *"
expect_eq "If-Match *: 200" "$STATUS" 200

fetch ius /text.txt -H "If-Unmodified-Since: $old"
expect_eq "If-Unmodified-Since in the past: 412" "$STATUS" 412
fetch iusok /text.txt -H "If-Unmodified-Since: $future"
expect_eq "If-Unmodified-Since in the future: 200" "$STATUS" 200
fetch iusim /text.txt -H "If-Match: $etag" -H "If-Unmodified-Since: $old"
expect_eq "If-Match wins over If-Unmodified-Since: 200" "$STATUS" 200

fetch headinm /text.txt -I -H "If-None-Match: $etag"
expect_eq "HEAD with If-None-Match: 304" "$STATUS" 304

# A precondition beats a Range.
fetch imrange /text.txt -H 'If-Match: "wrong-tag"' -H "Range: bytes=0-9"
expect_eq "If-Match wrong ETag with Range: 412" "$STATUS" 412
fetch inmrange /text.txt -H "If-None-Match: $etag" -H "Range: bytes=0-9"
expect_eq "If-None-Match current ETag with Range: 304" "$STATUS" 304

stop_ktlsd
