#!/usr/bin/python3
"""HTTP/2 client for the integration tests (t_h2.sh, t_h2_adversarial.sh).

Run with /usr/bin/python3 (Debian's: it has hpack). Frames are built and
parsed here, not by the h2 package, so that the adversarial subcommands can
send what a well-behaved client library refuses to (bad prefaces, floods,
unknown frame types) and so that big downloads stay fast in Python.

Every subcommand opens one TLS connection to 127.0.0.1:PORT with SNI
"localhost", ALPN h2 only and no certificate check, and prints one result
per line (words the shell compares). A TLS or ALPN failure prints
"TLSFAIL reason" and exits 3. Subcommands:

  get [--method M] [--window N] [--pause-after BYTES --resume-file FILE]
      [--timeout S (30)] PORT PATH...
      Requests every PATH (method M, default GET) at once on the one
      connection (streams 1, 3, ...)
      and reads all the responses. The client offers a window of N bytes per
      stream and on the connection (default 2^31-1) and tops both up when
      half is used. With --pause-after it stops topping up (and prints
      "PAUSED") once BYTES body bytes have arrived, until FILE exists.
      Prints per stream, in request order:
        STREAM sid path status=S bytes=N sha256=H end=SECS frames=N maxframe=N
      then "ORDER sid,sid,..." (completion order), "FAIR F" (the smallest
      share of its Content-Length any other stream had received when the
      first stream ended; 1.00 for one stream), "GOAWAY code last" if one
      came, and "DONE" if every stream ended, else "INCOMPLETE reason"
      (exit 1). A stream reset prints "RESET sid code".

  zero-window PORT PATH
      Offers SETTINGS_INITIAL_WINDOW_SIZE=0, requests PATH, reads for 1 s:
      "HEADERS status" and "DATA_WHILE_CLOSED n" (payload bytes received with
      a zero window). Then opens the stream and connection windows by 2^30
      and reads to the end: "COMPLETE bytes sha256" or "INCOMPLETE reason".

  preface PORT
      Sends a garbage preface, then "GOAWAY code last" if one came and
      "CLOSED secs" or "OPEN" (after 5 s).
  rst-flood PORT N PATH [SECS]     N streams for PATH, each reset at once
  cont-flood PORT N PATH [SECS]    GET PATH in HEADERS without END_HEADERS
                                   and N CONTINUATION frames (N=0: none)
  settings-flood PORT N [SECS]     N SETTINGS frames, not reading the ACKs
  ping-flood PORT N [SECS]         N PINGs, not reading the ACKs
      Everything is sent first, then the server's frames are read for SECS
      (default 5): "RESETS n" (rst-flood), "STATUS 1 s" / "RESET 1 code"
      (cont-flood), then "GOAWAY code last_stream_id" if the server sent
      one, then "CLOSED secs" (when it closed) or "OPEN".

  big-header PORT BYTES PATH [split]
      GET PATH with one header x-big of BYTES bytes (or, with "split",
      BYTES/1000 headers of 1000 bytes), in HEADERS plus CONTINUATION frames
      of 16 KiB. Prints "RESET 1 code" or "STATUS 1 s", "GOAWAY code last"
      if one came, then, if the connection is still open, requests PATH on
      it again: "NEXT status" or "NEXT none"; then "CLOSED secs"/"OPEN".

  unknown-frame PORT PATH [BYTES]
      Sends frames of unknown types (0x20 on stream 0, 0xfa on stream 1 before
      it is opened, 0x21 on it once open) around GET PATH: "STATUS s bytes=N"
      or "INCOMPLETE reason" (exit 1). With BYTES, that much of unknown
      frames (16 KiB each) goes first, in one write.

  max-streams [--early] PORT N PATH
      Offers a zero window (answered streams stay open), waits for the
      server's SETTINGS and its ACK of ours, then opens N streams for PATH at
      once (with --early: sends them right after the preface, before the
      server's SETTINGS can be acknowledged). Prints "MAX_CONCURRENT m" (the
      server's setting), then per stream "ANSWERED sid status", "REFUSED sid
      code" (RST_STREAM) or "UNANSWERED sid", and "GOAWAY code last" if one
      came.

  idle PORT SECS
      Sends the preface and SETTINGS, then nothing: "STARTED" once the
      server's SETTINGS came, "GOAWAY code last" if one came,
      then "CLOSED secs" or "OPEN" after SECS.

  authority PORT PATH AUTHORITY [HOST]
      GET PATH on stream 1 with :authority AUTHORITY ("-": none) and, when
      given, a host field HOST: "STATUS 1 s" or "RESET 1 code" (none if
      neither came within 5 s), then "GOAWAY code last" if one came.
"""

import hashlib
import os
import socket
import ssl
import struct
import sys
import time

import hpack

# The connection end and the reader are lib.py's, shared with the HTTP/1.1 tests.
from lib import Closed, recv_some

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, \
    S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE = range(1, 7)
MAX_WINDOW = 2**31 - 1


class TLSFail(Exception):
    pass


def frame(ftype, flags, sid, payload=b""):
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, ftype, flags, sid & 0x7FFFFFFF) + payload


def settings(pairs=(), ack=False):
    return frame(SETTINGS, ACK if ack else 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def window_update(sid, inc):
    return frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", inc))


def rst_stream(sid, code):
    return frame(RST_STREAM, 0, sid, struct.pack(">I", code))


def request_headers(enc, path, method="GET", extra=()):
    return enc.encode([(":method", method), (":scheme", "https"), (":authority", "localhost"),
                       (":path", path)] + list(extra))


class Conn:
    def __init__(self, port, timeout=10):
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.options |= getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
        ctx.set_alpn_protocols(["h2"])
        try:
            self.sock = ctx.wrap_socket(sock, server_hostname="localhost")
        except (ssl.SSLError, OSError) as e:
            raise TLSFail(str(e))
        if self.sock.selected_alpn_protocol() != "h2":
            raise TLSFail("ALPN chose %r, not h2" % self.sock.selected_alpn_protocol())
        self.buf = bytearray()
        self.pos = 0
        self.eof = False
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 20
        self.peer_settings = {}
        self.goaway = None

    def send(self, data):
        self.sock.sendall(data)

    def start(self, pairs=()):
        self.send(PREFACE + settings(pairs))

    def fill(self, deadline):
        chunk = recv_some(self, deadline, 1 << 18)
        if self.pos:
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += chunk

    def next_frame(self, deadline):
        """One frame (type, flags, sid, payload bytes). Answers
        SETTINGS and records GOAWAY on the way (both still returned)."""
        while len(self.buf) - self.pos < 9:
            self.fill(deadline)
        hi, lo, ftype, flags, sid = struct.unpack_from(">BHBBI", self.buf, self.pos)
        n = (hi << 16) | lo
        while len(self.buf) - self.pos < 9 + n:
            self.fill(deadline)
        payload = bytes(self.buf[self.pos + 9:self.pos + 9 + n])
        self.pos += 9 + n
        sid &= 0x7FFFFFFF
        if ftype == SETTINGS and not flags & ACK:
            for i in range(0, n - n % 6, 6):
                k, v = struct.unpack_from(">HI", payload, i)
                self.peer_settings[k] = v
            try:
                self.send(settings(ack=True))
            except OSError:
                pass
        elif ftype == GOAWAY and n >= 8:
            last, code = struct.unpack_from(">II", payload, 0)
            self.goaway = (code, last & 0x7FFFFFFF)
        return ftype, flags, sid, payload

    def wait_close(self, secs):
        """Read (and drop) until the peer closes or secs pass. Returns the
        seconds it took, or None if still open."""
        start = time.monotonic()
        deadline = start + secs
        try:
            while True:
                self.next_frame(deadline)
        except Closed:
            return time.monotonic() - start
        except socket.timeout:
            return None
        except OSError:
            return time.monotonic() - start


def data_payload(flags, payload):
    if flags & PADDED and payload:
        pad = payload[0]
        return payload[1:len(payload) - pad]
    return payload


def header_block(conn, flags, payload, deadline):
    """The decoded header list of a HEADERS frame plus its CONTINUATIONs."""
    if flags & PADDED:
        pad = payload[0]
        payload = payload[1:len(payload) - pad]
    if flags & PRIORITY_FLAG:
        payload = payload[5:]
    block = bytes(payload)
    while not flags & END_HEADERS:
        ftype, flags, _, more = conn.next_frame(deadline)
        if ftype != CONTINUATION:
            raise ValueError("frame type %d inside a header block" % ftype)
        block += more
    return dict((k if isinstance(k, str) else k.decode(), v if isinstance(v, str) else v.decode())
                for k, v in conn.dec.decode(block))


def print_end(conn, closed):
    """ "GOAWAY code last" if one came, then "CLOSED secs" (closed: seconds
    until the server closed) or "OPEN" (None)."""
    if conn.goaway:
        print("GOAWAY %d %d" % conn.goaway)
    print("CLOSED %.2f" % closed if closed is not None else "OPEN")


def report_end(conn, secs):
    """Reads for up to secs: "GOAWAY code last" if one came, then "CLOSED
    secs" or "OPEN"."""
    print_end(conn, conn.wait_close(secs))


# ---- get --------------------------------------------------------------------

class Stream:
    def __init__(self, sid, path):
        self.sid = sid
        self.path = path
        self.status = None
        self.length = None
        self.bytes = 0
        self.sha = hashlib.sha256()
        self.end = None
        self.frames = 0
        self.maxframe = 0
        self.reset = None
        self.unacked = 0


def get(argv):
    window = MAX_WINDOW
    pause_after = None
    resume_file = None
    timeout = 30.0
    method = "GET"
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--window":
            window = int(argv.pop(0))
        elif opt == "--pause-after":
            pause_after = int(argv.pop(0))
        elif opt == "--resume-file":
            resume_file = argv.pop(0)
        elif opt == "--timeout":
            timeout = float(argv.pop(0))
        elif opt == "--method":
            method = argv.pop(0)
        else:
            print("unknown option %s" % opt, file=sys.stderr)
            return 2
    port = int(argv.pop(0))
    conn = Conn(port)
    start = time.monotonic()
    deadline = start + timeout
    out = [settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, window)])]
    if window > 65535:
        out.append(window_update(0, window - 65535))
    streams = {}
    order = []
    for i, path in enumerate(argv):
        sid = 1 + 2 * i
        streams[sid] = Stream(sid, path)
        order.append(sid)
        out.append(frame(HEADERS, END_HEADERS | END_STREAM, sid, request_headers(conn.enc, path, method)))
    conn.send(PREFACE + b"".join(out))

    finished = []
    fair = None
    total = 0
    conn_unacked = 0
    paused = False
    problem = None
    try:
        while len(finished) + sum(1 for s in streams.values() if s.reset is not None) < len(streams):
            if paused and os.path.exists(resume_file):
                paused = False
                pause_after = None
                print("RESUMED %.2f" % (time.monotonic() - start), flush=True)
                # Grant what was held back: no DATA comes until then.
                upd = window_update(0, conn_unacked) if conn_unacked else b""
                conn_unacked = 0
                for o in streams.values():
                    if o.unacked and o.end is None and o.reset is None:
                        upd += window_update(o.sid, o.unacked)
                        o.unacked = 0
                if upd:
                    conn.send(upd)
            # While paused, wake up now and then to look for the file.
            wait_until = min(deadline, time.monotonic() + 0.1) if paused else deadline
            try:
                ftype, flags, sid, payload = conn.next_frame(wait_until)
            except socket.timeout:
                if time.monotonic() >= deadline:
                    raise
                continue
            s = streams.get(sid)
            if ftype == HEADERS and s:
                h = header_block(conn, flags, payload, deadline)
                s.status = h.get(":status")
                if "content-length" in h:
                    s.length = int(h["content-length"])
            elif ftype == DATA and s:
                body = data_payload(flags, payload)
                s.sha.update(body)
                s.bytes += len(body)
                s.frames += 1
                s.maxframe = max(s.maxframe, len(body))
                total += len(body)
                # Flow control counts the whole payload, padding included.
                s.unacked += len(payload)
                conn_unacked += len(payload)
                if pause_after is not None and total >= pause_after and not paused:
                    paused = True
                    print("PAUSED %.2f" % (time.monotonic() - start), flush=True)
                if not paused:
                    upd = b""
                    if conn_unacked >= window // 2:
                        upd += window_update(0, conn_unacked)
                        conn_unacked = 0
                    if s.unacked >= window // 2 and not flags & END_STREAM:
                        upd += window_update(sid, s.unacked)
                        s.unacked = 0
                    if upd:
                        conn.send(upd)
            elif ftype == RST_STREAM and s:
                s.reset = struct.unpack(">I", payload[:4])[0]
                print("RESET %d %d" % (sid, s.reset))
            elif ftype == PING and not flags & ACK:
                conn.send(frame(PING, ACK, 0, payload))
            if s and flags & END_STREAM and ftype in (DATA, HEADERS) and s.end is None:
                s.end = time.monotonic() - start
                finished.append(sid)
                if fair is None:
                    shares = [o.bytes / o.length for o in streams.values()
                              if o is not s and o.length]
                    fair = min(shares) if shares else 1.0
            if conn.goaway and conn.goaway[0] != 0:
                problem = "GOAWAY with error %d" % conn.goaway[0]
                break
    except Closed:
        problem = "connection closed"
    except socket.timeout:
        problem = "timed out after %.0f s" % timeout
    except ValueError as e:
        problem = str(e)

    for sid in order:
        s = streams[sid]
        print("STREAM %d %s status=%s bytes=%d sha256=%s end=%s frames=%d maxframe=%d" % (
            sid, s.path, s.status, s.bytes, s.sha.hexdigest(),
            "%.3f" % s.end if s.end is not None else "-", s.frames, s.maxframe))
    print("ORDER %s" % ",".join(str(x) for x in finished))
    print("FAIR %.2f" % (fair if fair is not None else 0.0))
    if conn.goaway:
        print("GOAWAY %d %d" % conn.goaway)
    if problem is None and len(finished) < len(streams):
        problem = "%d stream(s) reset" % (len(streams) - len(finished))
    if problem:
        print("INCOMPLETE %s" % problem)
        return 1
    print("DONE")
    return 0


# ---- zero-window -----------------------------------------------------------

def zero_window(argv):
    port, path = int(argv[0]), argv[1]
    conn = Conn(port)
    conn.send(PREFACE + settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, 0)]) +
              frame(HEADERS, END_HEADERS | END_STREAM, 1, request_headers(conn.enc, path)))
    sha = hashlib.sha256()
    got = 0
    status = None
    ended = False
    end_wait = time.monotonic() + 1.0
    try:
        while True:
            try:
                ftype, flags, sid, payload = conn.next_frame(end_wait)
            except socket.timeout:
                break
            if ftype == HEADERS and sid == 1:
                status = header_block(conn, flags, payload, end_wait + 5)[":status"]
            elif ftype == DATA and sid == 1:
                body = data_payload(flags, payload)
                got += len(body)
                sha.update(body)
            if sid == 1 and flags & END_STREAM and ftype in (DATA, HEADERS):
                ended = True
                break
    except Closed:
        print("HEADERS %s" % status)
        print("INCOMPLETE connection closed during the zero window")
        return 1
    print("HEADERS %s" % status)
    print("DATA_WHILE_CLOSED %d" % got)
    conn.send(window_update(1, 1 << 30) + window_update(0, 1 << 30))
    deadline = time.monotonic() + 30
    try:
        while not ended:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if ftype == DATA and sid == 1:
                body = data_payload(flags, payload)
                got += len(body)
                sha.update(body)
            elif ftype == RST_STREAM and sid == 1:
                print("INCOMPLETE stream reset (%d)" % struct.unpack(">I", payload[:4])[0])
                return 1
            if sid == 1 and flags & END_STREAM and ftype in (DATA, HEADERS):
                ended = True
    except Closed:
        print("INCOMPLETE connection closed after %d bytes" % got)
        return 1
    except socket.timeout:
        print("INCOMPLETE timed out after %d bytes" % got)
        return 1
    print("COMPLETE %d %s" % (got, sha.hexdigest()))
    return 0


# ---- floods and malformed input ---------------------------------------------

def send_all_then_watch(conn, data, secs=5.0):
    """Send data (the server may close half-way: that counts as closed)."""
    try:
        conn.send(data)
    except OSError:
        pass
    report_end(conn, secs)


def preface(argv):
    conn = Conn(int(argv[0]))
    send_all_then_watch(conn, b"GARBAGE * HTTP/9.9\r\n\r\nNOT A PREFACE AT ALL\r\n\r\n" + b"\0" * 64)
    return 0


def rst_flood(argv):
    port, n, path = int(argv[0]), int(argv[1]), argv[2]
    secs = float(argv[3]) if len(argv) > 3 else 5.0
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    chunks = []
    for i in range(n):
        sid = 1 + 2 * i
        chunks.append(frame(HEADERS, END_HEADERS | END_STREAM, sid, request_headers(conn.enc, path)))
        chunks.append(rst_stream(sid, 0x8))  # CANCEL
    data = b"".join(chunks)
    # In slices, so a server that gives up half-way is noticed as closed.
    try:
        for i in range(0, len(data), 16384):
            conn.send(data[i:i + 16384])
    except OSError:
        pass
    resets = 0
    start = time.monotonic()
    deadline = start + secs
    closed = None
    try:
        while True:
            ftype, _, _, _ = conn.next_frame(deadline)
            if ftype == RST_STREAM:
                resets += 1
    except Closed:
        closed = time.monotonic() - start
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - start
    print("RESETS %d" % resets)
    print_end(conn, closed)
    return 0


def cont_flood(argv):
    port, n, path = int(argv[0]), int(argv[1]), argv[2]
    secs = float(argv[3]) if len(argv) > 3 else 5.0
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    out = [frame(HEADERS, END_STREAM | (END_HEADERS if n == 0 else 0), 1,
                 request_headers(conn.enc, path))]
    for i in range(n):
        block = conn.enc.encode([("x-cont-%d" % i, "v" * 20)])
        out.append(frame(CONTINUATION, END_HEADERS if i == n - 1 else 0, 1, block))
    try:
        conn.send(b"".join(out))
    except OSError:
        pass
    # The answer to stream 1, if any, then what became of the connection.
    start = time.monotonic()
    deadline = start + secs
    closed = None
    try:
        while True:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if sid == 1 and ftype == HEADERS:
                print("STATUS 1 %s" % header_block(conn, flags, payload, deadline)[":status"])
            elif sid == 1 and ftype == RST_STREAM:
                print("RESET 1 %d" % struct.unpack(">I", payload[:4])[0])
    except socket.timeout:
        pass
    except (Closed, OSError):
        closed = time.monotonic() - start
    except ValueError as e:
        print("BADFRAME %s" % e)
    print_end(conn, closed)
    return 0


def settings_flood(argv):
    port, n = int(argv[0]), int(argv[1])
    secs = float(argv[2]) if len(argv) > 2 else 5.0
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    one = settings([(S_INITIAL_WINDOW_SIZE, 65535)])
    send_all_then_watch(conn, one * n, secs)
    return 0


def ping_flood(argv):
    port, n = int(argv[0]), int(argv[1])
    secs = float(argv[2]) if len(argv) > 2 else 5.0
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    send_all_then_watch(conn, b"".join(frame(PING, 0, 0, struct.pack(">Q", i)) for i in range(n)),
                        secs)
    return 0


def split_block(sid, block, end_stream=True, size=16384):
    """HEADERS plus CONTINUATIONs carrying block."""
    parts = [block[i:i + size] for i in range(0, len(block), size)] or [b""]
    out = []
    for i, p in enumerate(parts):
        flags = END_HEADERS if i == len(parts) - 1 else 0
        if i == 0:
            out.append(frame(HEADERS, flags | (END_STREAM if end_stream else 0), sid, p))
        else:
            out.append(frame(CONTINUATION, flags, sid, p))
    return b"".join(out)


def read_answers(conn, sids, secs):
    """Reads until every stream in sids has ended or been reset, or secs
    pass. Returns {sid: ("status", s) or ("reset", code)}."""
    got = {}
    deadline = time.monotonic() + secs
    while len(got) < len(sids):
        ftype, flags, sid, payload = conn.next_frame(deadline)
        if sid not in sids:
            continue
        if ftype == HEADERS:
            h = header_block(conn, flags, payload, deadline)
            got[sid] = ("status", h.get(":status"))
        elif ftype == RST_STREAM:
            got[sid] = ("reset", struct.unpack(">I", payload[:4])[0])
        if ftype == GOAWAY:
            break
    return got


def print_answer(conn):
    """Reads the answer to stream 1 (for 5 s at most): "STATUS 1 s" or
    "RESET 1 code", then "GOAWAY code last" if one came."""
    try:
        got = read_answers(conn, {1}, 5)
    except (Closed, socket.timeout):
        got = {}
    for sid, (kind, v) in got.items():
        print("%s %d %s" % ("RESET" if kind == "reset" else "STATUS", sid, v))
    if conn.goaway:
        print("GOAWAY %d %d" % conn.goaway)


def big_header(argv):
    port, size, path = int(argv[0]), int(argv[1]), argv[2]
    split = len(argv) > 3 and argv[3] == "split"
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    if split:
        extra = [("x-big-%d" % i, "b" * 1000) for i in range(max(1, size // 1000))]
    else:
        extra = [("x-big", "b" * size)]
    # Not indexed: a refused block must not desynchronise our encoder.
    block = conn.enc.encode([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"),
                             (":path", path)] + extra, huffman=False)
    try:
        conn.send(split_block(1, block))
    except OSError:
        pass
    print_answer(conn)
    if not conn.eof and not conn.goaway:
        try:
            conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, request_headers(conn.enc, path)))
            nxt = read_answers(conn, {3}, 5).get(3)
            print("NEXT %s" % (nxt[1] if nxt and nxt[0] == "status" else "none"))
        except (Closed, socket.timeout, OSError):
            print("NEXT none")
    else:
        print("NEXT none")
    t = conn.wait_close(0.5)
    print("CLOSED %.2f" % t if t is not None else "OPEN")
    return 0


def unknown_frame(argv):
    port, path = int(argv[0]), argv[1]
    bulk = int(argv[2]) if len(argv) > 2 else 0
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    # bulk bytes of unknown frames (16 KiB payloads) in one go: the server
    # must read (and drop) them all to reach the request behind them.
    filler = frame(0x20, 0, 0, b"\x55" * 16384)
    conn.send(filler * ((bulk + len(filler) - 1) // len(filler)) +
              frame(0x20, 0xFF, 0, b"unknown frame type on stream 0") +
              frame(0xFA, 0x00, 1, b"unknown frame type on an idle stream") +
              frame(HEADERS, END_HEADERS | END_STREAM, 1, request_headers(conn.enc, path)) +
              frame(0x21, 0x00, 1, b"and one on an open stream"))
    deadline = time.monotonic() + 5
    status = None
    got = 0
    try:
        while True:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if sid == 1 and ftype == HEADERS:
                status = header_block(conn, flags, payload, deadline)[":status"]
            elif sid == 1 and ftype == DATA:
                got += len(data_payload(flags, payload))
            elif sid == 1 and ftype == RST_STREAM:
                print("INCOMPLETE stream reset")
                return 1
            if sid == 1 and flags & END_STREAM and ftype in (DATA, HEADERS):
                break
    except Closed:
        print("INCOMPLETE connection closed%s" % (" (GOAWAY %d)" % conn.goaway[0] if conn.goaway else ""))
        return 1
    except socket.timeout:
        print("INCOMPLETE timed out")
        return 1
    print("STATUS %s bytes=%d" % (status, got))
    return 0


def max_streams(argv):
    early = argv and argv[0] == "--early"
    if early:
        argv = argv[1:]
    port, n, path = int(argv[0]), int(argv[1]), argv[2]
    conn = Conn(port)
    sids = [1 + 2 * i for i in range(n)]
    requests = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, sid, request_headers(conn.enc, path))
                        for sid in sids)
    # Zero window: the answered streams stay open (no DATA can be sent).
    conn.start([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, 0)])
    if early:
        # Before the server's SETTINGS can have been acknowledged.
        conn.send(requests)
    deadline = time.monotonic() + 5
    # The server's SETTINGS, and its ACK of ours: both sides then apply
    # the limits (next_frame acknowledges the server's).
    seen_settings = seen_ack = False
    got = {}
    while not (seen_settings and seen_ack):
        ftype, flags, sid, payload = conn.next_frame(deadline)
        if ftype == SETTINGS:
            if flags & ACK:
                seen_ack = True
            else:
                seen_settings = True
        elif ftype == HEADERS and sid in sids:
            got[sid] = "ANSWERED %d %s" % (sid, header_block(conn, flags, payload, deadline)[":status"])
        elif ftype == RST_STREAM and sid in sids:
            got[sid] = "REFUSED %d %d" % (sid, struct.unpack(">I", payload[:4])[0])
    print("MAX_CONCURRENT %s" % conn.peer_settings.get(S_MAX_CONCURRENT_STREAMS, "none"))
    if not early:
        conn.send(requests)
    deadline = time.monotonic() + 3
    try:
        while len(got) < n:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if ftype == HEADERS and sid in sids:
                got[sid] = "ANSWERED %d %s" % (sid, header_block(conn, flags, payload, deadline)[":status"])
            elif ftype == RST_STREAM and sid in sids:
                got[sid] = "REFUSED %d %d" % (sid, struct.unpack(">I", payload[:4])[0])
    except (Closed, socket.timeout, OSError):
        pass
    for sid in sids:
        print(got.get(sid, "UNANSWERED %d" % sid))
    if conn.goaway:
        print("GOAWAY %d %d" % conn.goaway)
    return 0


def idle(argv):
    port, secs = int(argv[0]), float(argv[1])
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    # The server's SETTINGS: its side of the connection is HTTP/2's now.
    deadline = time.monotonic() + secs
    while True:
        ftype, flags, _, _ = conn.next_frame(deadline)
        if ftype == SETTINGS and not flags & ACK:
            break
    print("STARTED", flush=True)
    report_end(conn, secs)
    return 0


def authority(argv):
    port, path, auth = int(argv[0]), argv[1], argv[2]
    fields = [(":method", "GET"), (":scheme", "https")]
    if auth != "-":
        fields.append((":authority", auth))
    fields.append((":path", path))
    if len(argv) > 3:
        fields.append(("host", argv[3]))
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, conn.enc.encode(fields)))
    print_answer(conn)
    return 0


def main():
    cmds = {"get": get, "zero-window": zero_window, "preface": preface, "rst-flood": rst_flood,
            "cont-flood": cont_flood, "settings-flood": settings_flood, "ping-flood": ping_flood,
            "big-header": big_header, "unknown-frame": unknown_frame, "max-streams": max_streams,
            "idle": idle, "authority": authority}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return cmds[sys.argv[1]](sys.argv[2:])
    except TLSFail as e:
        print("TLSFAIL %s" % e)
        return 3


if __name__ == "__main__":
    sys.exit(main())
