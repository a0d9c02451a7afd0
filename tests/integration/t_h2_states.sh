# shellcheck shell=bash
# HTTP/2 frames on idle, half-closed and closed streams (RFC 9113 5.1,
# 5.1.1, 6.1, 6.4): h2spec's cases for those states, as raw frames from
# h2_states.py (h2spec is not packaged for Debian 12), each on its own
# connection. A stream error may be sent as a connection error (GOAWAY with
# the same code): nghttp2 does that for some, and h2spec takes both. Frames
# the client sent before our RST_STREAM reached it must be ignored.

STATES_PY="$(dirname "${BASH_SOURCE[0]}")/h2_states.py"

start_ktlsd --shutdown-grace 3 || return 0

# case NAME WANT...: h2_states.py NAME, its output on one line one of WANT.
case_is() {
	local name=$1 what=$2
	shift 2
	py_client 90 "$STATES_PY" "$name" "$PORT" /a.txt
	expect_in "$name: $what" "$OUT" "$@"
}

# ---- idle (5.1, 6.4) ----
case_is idle-data "DATA on an idle stream: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is idle-rst "RST_STREAM on an idle stream: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is idle-window-update "WINDOW_UPDATE on an idle stream: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is idle-continuation "CONTINUATION on an idle stream: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is rst-zero "RST_STREAM on stream 0: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is rst-length "RST_STREAM of 3 bytes: FRAME_SIZE_ERROR" \
	"GOAWAY FRAME_SIZE_ERROR" "RST 1 FRAME_SIZE_ERROR NEXT 200"

# ---- half-closed (remote): the request ended, its response may not have (5.1, 6.1) ----
case_is half-closed-data "DATA after END_STREAM: STREAM_CLOSED" \
	"GOAWAY STREAM_CLOSED" "RST 1 STREAM_CLOSED NEXT 200"
case_is half-closed-headers "HEADERS after END_STREAM: STREAM_CLOSED" \
	"GOAWAY STREAM_CLOSED" "RST 1 STREAM_CLOSED NEXT 200"
case_is half-closed-continuation "CONTINUATION after END_STREAM: STREAM_CLOSED or PROTOCOL_ERROR" \
	"GOAWAY STREAM_CLOSED" "GOAWAY PROTOCOL_ERROR"
case_is post-data "a POST that ended, then DATA: STREAM_CLOSED" \
	"GOAWAY STREAM_CLOSED" "RST 1 STREAM_CLOSED NEXT 200"

# ---- closed after the client's RST_STREAM: a stream error (5.1) ----
case_is closed-data-after-rst "DATA after the client's RST_STREAM: stream error STREAM_CLOSED" \
	"RST 1 STREAM_CLOSED NEXT 200" "GOAWAY STREAM_CLOSED"
case_is closed-headers-after-rst "HEADERS after the client's RST_STREAM: stream error STREAM_CLOSED" \
	"RST 1 STREAM_CLOSED NEXT 200" "GOAWAY STREAM_CLOSED"
case_is closed-continuation-after-rst "CONTINUATION after the client's RST_STREAM: an error" \
	"GOAWAY PROTOCOL_ERROR" "GOAWAY STREAM_CLOSED" "RST 1 STREAM_CLOSED NEXT 200"

# ---- closed after both sides' END_STREAM: a connection error (5.1) ----
case_is closed-data "DATA on a stream both sides ended: connection error STREAM_CLOSED" \
	"GOAWAY STREAM_CLOSED"
case_is closed-headers "HEADERS on a stream both sides ended: connection error STREAM_CLOSED" \
	"GOAWAY STREAM_CLOSED"
case_is closed-continuation "CONTINUATION on a stream both sides ended: an error" \
	"GOAWAY STREAM_CLOSED" "GOAWAY PROTOCOL_ERROR"

# ---- stream identifiers (5.1.1) ----
case_is even-id "HEADERS on an even stream: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is lower-id "HEADERS 5 then HEADERS 3: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is lower-id-after-close "HEADERS 3 after stream 5 ended: connection error PROTOCOL_ERROR" \
	"GOAWAY PROTOCOL_ERROR"
case_is reused-half-closed "HEADERS 5 twice: STREAM_CLOSED" \
	"RST 5 STREAM_CLOSED NEXT 200" "GOAWAY STREAM_CLOSED"
case_is skipped-data "DATA on stream 3, skipped by 5: stream error STREAM_CLOSED (6.1)" \
	"RST 3 STREAM_CLOSED NEXT 200"

# ---- closed by our RST_STREAM: what the client sent meanwhile is ignored (5.1) ----
case_is ours-ignored "DATA after the server reset the stream: ignored" \
	"RST 1 FLOW_CONTROL_ERROR NEXT 200"
case_is ours-ignored-headers "HEADERS after the server reset the stream: ignored" \
	"RST 1 FLOW_CONTROL_ERROR NEXT 200"

# The server answers a normal request after all of that.
v=$(kcurl --http2 --max-time 10 -o "$T/after.b" -w '%{http_version} %{http_code}' "$BASE/a.txt" 2>&1)
expect_eq "then a normal HTTP/2 request succeeds" "$v" "2 200"
stop_ktlsd
