#!/usr/bin/python3
"""HTTP/2 frames on streams that are idle, half-closed or closed, for
t_h2_states.sh: the cases of h2spec's groups 5.1, 5.1.1, 6.1 and 6.4 that
concern stream states (h2spec is not packaged for Debian 12), in raw frames
from h2_client.py, plus one h2spec lacks: frames the client sent after the
server reset the stream must be ignored (RFC 9113 5.1, "closed").

  h2_states.py CASE PORT PATH

Each case opens one connection (TLS, ALPN h2), sends its frames, then two
PINGs, the second only once the first is acknowledged: whatever the server
answers to the frames before them has reached us when the second ACK comes
(it sends what a read made it queue before it reads the next), so there is
no waiting for an answer that may never come. Prints, in order:
  "RST sid CODE" for each RST_STREAM, "GOAWAY CODE" if one came, "CLOSED"
  if the server closed without one, "NOTHING" if it said none of these;
then, if the connection is still usable, "NEXT status" for a request for
PATH on a new stream. CODE is the error's name (STREAM_CLOSED, ...).
"""

import socket
import struct
import sys
import time

from h2_client import (CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PING,
                       RST_STREAM, S_ENABLE_PUSH, Conn, TLSFail, frame, header_block,
                       request_headers, rst_stream, window_update)
from lib import Closed

CODES = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
         "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
         "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
         "HTTP_1_1_REQUIRED"]
ACK = 0x1


def code_name(code):
    return CODES[code] if code < len(CODES) else str(code)


class Probe:
    def __init__(self, port, path):
        self.conn = Conn(port, timeout=30)
        self.conn.start([(S_ENABLE_PUSH, 0)])
        self.path = path
        self.said = []          # what the server answered, as printed
        self.goaway = False
        self.closed = False
        self.deadline = time.monotonic() + 60

    def headers(self, sid, end_stream=True, method="GET", flags=END_HEADERS):
        block = request_headers(self.conn.enc, self.path, method)
        return frame(HEADERS, flags | (END_STREAM if end_stream else 0), sid, block)

    def frame_in(self):
        """The next frame, noting resets, GOAWAY and the close."""
        try:
            f = self.conn.next_frame(self.deadline)
        except (Closed, OSError):
            self.closed = True
            return None
        ftype, flags, sid, payload = f
        if ftype == RST_STREAM:
            self.said.append("RST %d %s" % (sid, code_name(struct.unpack(">I", payload[:4])[0])))
        elif ftype == GOAWAY:
            self.goaway = True
            self.said.append("GOAWAY %s" % code_name(struct.unpack(">I", payload[4:8])[0]))
        elif ftype == HEADERS:
            f = (ftype, flags, sid, header_block(self.conn, flags, payload, self.deadline))
        return f

    def send(self, data):
        try:
            self.conn.send(data)
        except OSError:
            self.closed = True

    def wait_end(self, sid):
        """Reads until stream sid ends (END_STREAM or a reset)."""
        while not self.closed and not self.goaway:
            f = self.frame_in()
            if f and f[2] == sid and (f[0] == RST_STREAM or
                                      (f[0] in (DATA, HEADERS) and f[1] & END_STREAM)):
                return

    def sync(self):
        """Two PINGs, the second after the first's ACK (see the top)."""
        for n in (1, 2):
            opaque = struct.pack(">Q", 0x6b746c7364000000 + n)
            self.send(frame(PING, 0, 0, opaque))
            while not self.closed and not self.goaway:
                f = self.frame_in()
                if f and f[0] == PING and f[1] & ACK and f[3] == opaque:
                    break

    def next_request(self, sid):
        self.send(self.headers(sid))
        while not self.closed and not self.goaway:
            f = self.frame_in()
            if f and f[2] == sid and f[0] == HEADERS:
                return f[3].get(":status")
            if f and f[2] == sid and f[0] == RST_STREAM:
                return None
        return None

    def report(self, next_sid):
        self.sync()
        if self.closed and not self.goaway:
            self.said.append("CLOSED")
        for line in self.said or ["NOTHING"]:
            print(line)
        if not self.closed and not self.goaway:
            said = len(self.said)
            status = self.next_request(next_sid)
            for line in self.said[said:]:
                print(line)
            print("NEXT %s" % status)


def dummy_block(p):
    return p.conn.enc.encode([("x-dummy", "d")])


# Each case: (frames to send, or a function that drives the probe), and the
# stream id a follow-up request may use.
def case_frames(p, case):
    enc_block = dummy_block
    if case == "idle-data":
        p.send(frame(DATA, END_STREAM, 1, b"test"))
    elif case == "idle-rst":
        p.send(rst_stream(1, 8))
    elif case == "idle-window-update":
        p.send(window_update(1, 100))
    elif case == "idle-continuation":
        p.send(frame(CONTINUATION, END_HEADERS, 1, enc_block(p)))
    elif case == "half-closed-data":
        p.send(p.headers(1) + frame(DATA, END_STREAM, 1, b"test"))
    elif case == "half-closed-headers":
        p.send(p.headers(1) + p.headers(1))
    elif case == "half-closed-continuation":
        p.send(p.headers(1) + frame(CONTINUATION, END_HEADERS, 1, enc_block(p)))
    elif case == "closed-data-after-rst":
        p.send(p.headers(1, end_stream=False) + rst_stream(1, 8) +
               frame(DATA, END_STREAM, 1, b"test"))
    elif case == "closed-headers-after-rst":
        p.send(p.headers(1, end_stream=False) + rst_stream(1, 8) + p.headers(1))
    elif case == "closed-continuation-after-rst":
        p.send(p.headers(1, end_stream=False) + rst_stream(1, 8) +
               frame(CONTINUATION, END_HEADERS, 1, enc_block(p)))
    elif case in ("closed-data", "closed-headers", "closed-continuation"):
        p.send(p.headers(1))
        p.wait_end(1)
        if case == "closed-data":
            p.send(frame(DATA, END_STREAM, 1, b"test"))
        elif case == "closed-headers":
            p.send(p.headers(1))
        else:
            p.send(frame(CONTINUATION, END_HEADERS, 1, enc_block(p)))
    elif case == "even-id":
        p.send(p.headers(2))
    elif case == "lower-id":
        p.send(p.headers(5) + p.headers(3))
        return 7
    elif case == "lower-id-after-close":
        p.send(p.headers(5))
        p.wait_end(5)
        p.send(p.headers(3))
        return 7
    elif case == "reused-half-closed":
        p.send(p.headers(5) + p.headers(5))
        return 7
    elif case == "post-data":
        p.send(p.headers(1, method="POST") + frame(DATA, END_STREAM, 1, b"test"))
    elif case == "rst-zero":
        p.send(rst_stream(0, 8))
    elif case == "rst-length":
        p.send(p.headers(1) + frame(RST_STREAM, 0, 1, b"\x00\x00\x00"))
    elif case == "ours-ignored":
        # Stream 1 stays open on our side; its window overflows, so the
        # server resets it (FLOW_CONTROL_ERROR). DATA we "had sent" before
        # that reset reached us goes after it: it must be ignored.
        p.send(p.headers(1, end_stream=False) + window_update(1, 2**31 - 1))
        p.wait_end(1)
        p.send(frame(DATA, 0, 1, b"in flight") + frame(DATA, END_STREAM, 1, b"more"))
    elif case == "ours-ignored-headers":
        p.send(p.headers(1, end_stream=False) + window_update(1, 2**31 - 1))
        p.wait_end(1)
        p.send(p.headers(1))  # trailers in flight
    elif case == "skipped-data":
        # Stream 3 was skipped (5 opened first): closed, never opened.
        p.send(p.headers(5))
        p.wait_end(5)
        p.send(frame(DATA, END_STREAM, 3, b"test"))
        return 7
    else:
        raise ValueError("unknown case %s" % case)
    return 3


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    case, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    try:
        p = Probe(port, path)
        next_sid = case_frames(p, case)
        p.report(next_sid)
    except TLSFail as e:
        print("TLSFAIL %s" % e)
        return 3
    except socket.timeout:
        print("TIMEOUT")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
