#!/usr/bin/python3
"""Many downloads at once, for t_fair.sh: who got how far when the first ended.

Run with /usr/bin/python3 (Debian's: it has hpack).

  fair_clients.py [--timeout S (240)] PORT PATH H1 STREAMS

Opens H1 HTTP/1.1 connections and one HTTP/2 connection to 127.0.0.1:PORT,
all TLS (SNI "localhost", no certificate check), finishes every handshake,
then sends every request at once: GET PATH on each HTTP/1.1 connection,
and STREAMS GETs of PATH on the HTTP/2 one (which offers windows of 2^31-1
and tops them up, so flow control never holds it back). Then it reads every
connection in turn, at most QUANTUM bytes each per round, so that no
connection is read before the others: what one got and another did not is
the server's doing, not this reader's.

When the first download ends (an HTTP/1.1 body or an HTTP/2 stream), it
notes how many body bytes each had, and prints at the end:
  H1 i status=S bytes=N sha256=H          per HTTP/1.1 download
  STREAM sid status=S bytes=N sha256=H    per HTTP/2 stream
  FIRST h1 i | FIRST stream sid           the first to end
  AT_FIRST_H1 n,n,...                     each HTTP/1.1 download's bytes then
  AT_FIRST_H2 n                           the HTTP/2 connection's, all streams
  AT_FIRST_STREAMS n,n,...                each stream's
then "DONE" when every download ended, else "INCOMPLETE reason" (exit 1).
A TLS or ALPN failure prints "TLSFAIL reason" and exits 3.
"""

import hashlib
import select
import socket
import ssl
import struct
import sys
import time

import h2_client as h2
from h2_client import DATA, END_STREAM, GOAWAY, HEADERS, PING, RST_STREAM, SETTINGS

# Bytes read from one connection before the next one's turn.
QUANTUM = 64 * 1024
ACK = 0x1


class TLSFail(Exception):
    pass


def connect(port, alpn):
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.options |= getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
    ctx.set_alpn_protocols([alpn])
    try:
        s = ctx.wrap_socket(raw, server_hostname="localhost")
    except (ssl.SSLError, OSError) as e:
        raise TLSFail(str(e))
    if s.selected_alpn_protocol() != alpn:
        raise TLSFail("ALPN chose %r, not %s" % (s.selected_alpn_protocol(), alpn))
    s.setblocking(False)
    return s


def send_all(sock, data, deadline):
    view = memoryview(data)
    while view:
        try:
            n = sock.send(view)
            view = view[n:]
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            if time.monotonic() > deadline:
                raise socket.timeout()
            select.select([], [sock], [], 0.1)


def send_some(sock, data):
    """Sends what the socket takes now, never waiting; returns the rest.
    A reader that waited here to write its WINDOW_UPDATEs would stop
    reading every connection, and a server that reads no more while its
    own socket is full (a fair answer to a client that does not read)
    would then wait for it: both stuck until the server's send timeout."""
    view = memoryview(data)
    while view:
        try:
            n = sock.send(view)
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            break
        view = view[n:]
    return bytes(view)


class Download:
    """One response body: its status, length, bytes and digest."""

    def __init__(self):
        self.status = None
        self.length = None
        self.bytes = 0
        self.sha = hashlib.sha256()
        self.ended = False

    def take(self, data):
        self.bytes += len(data)
        self.sha.update(data)


class H1:
    def __init__(self, port, path):
        self.sock = connect(port, "http/1.1")
        self.req = ("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                    % path).encode()
        self.head = bytearray()
        self.dl = Download()
        self.closed = False

    def feed(self, data, on_end):
        if self.dl.length is None:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.head[:end].decode("latin-1").split("\r\n")
            self.dl.status = lines[0].split(" ")[1]
            self.dl.length = 0
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    self.dl.length = int(v)
            data = bytes(self.head[end + 4:])
            self.head = None
        self.dl.take(data)
        if not self.dl.ended and self.dl.bytes >= self.dl.length:
            self.dl.ended = True
            on_end(self)

    def done(self):
        return self.dl.ended


class H2:
    def __init__(self, port, path, streams):
        self.sock = connect(port, "h2")
        self.enc = h2.hpack.Encoder()
        self.dec = h2.hpack.Decoder()
        self.buf = bytearray()
        self.streams = {}
        self.unacked = 0
        self.closed = False
        self.problem = None
        out = [h2.PREFACE, h2.settings([(h2.S_ENABLE_PUSH, 0),
                                        (h2.S_INITIAL_WINDOW_SIZE, h2.MAX_WINDOW)]),
               h2.window_update(0, h2.MAX_WINDOW - 65535)]
        for i in range(streams):
            sid = 1 + 2 * i
            self.streams[sid] = Download()
            out.append(h2.frame(HEADERS, h2.END_HEADERS | END_STREAM, sid,
                                h2.request_headers(self.enc, path)))
        self.req = b"".join(out)
        self.replies = []
        self.out = b""  # replies the socket has not taken yet

    def feed(self, data, on_end):
        self.buf += data
        pos = 0
        while len(self.buf) - pos >= 9:
            hi, lo, ftype, flags, sid = struct.unpack_from(">BHBBI", self.buf, pos)
            n = (hi << 16) | lo
            if len(self.buf) - pos < 9 + n:
                break
            payload = bytes(self.buf[pos + 9:pos + 9 + n])
            pos += 9 + n
            sid &= 0x7FFFFFFF
            st = self.streams.get(sid)
            if ftype == DATA and st:
                st.take(h2.data_payload(flags, payload))
                self.unacked += n
                if self.unacked >= h2.MAX_WINDOW // 2:
                    self.replies.append(h2.window_update(0, self.unacked))
                    self.unacked = 0
            elif ftype == HEADERS and st:
                if not flags & h2.END_HEADERS:
                    self.problem = "a header block in CONTINUATION frames"
                    return
                if flags & h2.PADDED:
                    payload = payload[1:len(payload) - payload[0]]
                if flags & h2.PRIORITY_FLAG:
                    payload = payload[5:]
                fields = dict((k if isinstance(k, str) else k.decode(),
                               v if isinstance(v, str) else v.decode())
                              for k, v in self.dec.decode(payload))
                st.status = fields.get(":status")
                st.length = int(fields.get("content-length", "0"))
            elif ftype == SETTINGS and not flags & ACK:
                self.replies.append(h2.settings(ack=True))
            elif ftype == PING and not flags & ACK:
                self.replies.append(h2.frame(PING, ACK, 0, payload))
            elif ftype == RST_STREAM and st:
                self.problem = "stream %d reset" % sid
            elif ftype == GOAWAY:
                self.problem = "GOAWAY"
            if st and ftype in (DATA, HEADERS) and flags & END_STREAM and not st.ended:
                st.ended = True
                on_end(sid)
        del self.buf[:pos]

    def done(self):
        return all(s.ended for s in self.streams.values())


def main(argv):
    timeout = 240.0
    if argv[:1] == ["--timeout"]:
        timeout = float(argv[1])
        argv = argv[2:]
    port, path, n1, ns = int(argv[0]), argv[1], int(argv[2]), int(argv[3])
    deadline = time.monotonic() + timeout
    try:
        h1s = [H1(port, path) for _ in range(n1)]
        hc = H2(port, path, ns)
    except TLSFail as e:
        print("TLSFAIL %s" % e)
        return 3
    conns = h1s + [hc]
    first = []
    snap = {}

    def on_end(who):
        if first:
            return
        first.append("h1 %d" % h1s.index(who) if isinstance(who, H1) else "stream %d" % who)
        snap["h1"] = [c.dl.bytes for c in h1s]
        snap["streams"] = [s.bytes for s in hc.streams.values()]

    problem = None
    buf = bytearray(QUANTUM)
    try:
        for c in conns:
            send_all(c.sock, c.req, deadline)
        while not all(c.done() or c.closed for c in conns):
            got = 0
            for c in conns:
                if c.closed or c.done():
                    continue
                taken = 0
                while taken < QUANTUM:
                    try:
                        k = c.sock.recv_into(buf, QUANTUM - taken)
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                        break
                    except (ssl.SSLError, OSError):
                        k = 0
                    if k == 0:
                        c.closed = True
                        break
                    taken += k
                    c.feed(bytes(buf[:k]), on_end)
                got += taken
                if c is hc:
                    if hc.replies:
                        hc.out += b"".join(hc.replies)
                        hc.replies = []
                    if hc.out:
                        hc.out = send_some(hc.sock, hc.out)
                    if hc.problem:
                        raise ValueError(hc.problem)
            if time.monotonic() > deadline:
                raise socket.timeout()
            if got == 0:
                live = [c.sock for c in conns if not (c.closed or c.done())]
                select.select(live, [hc.sock] if hc.out else [], [], 0.5)
    except socket.timeout:
        problem = "timed out after %.0f s" % timeout
    except ValueError as e:
        problem = str(e)

    for i, c in enumerate(h1s):
        print("H1 %d status=%s bytes=%d sha256=%s" % (i, c.dl.status, c.dl.bytes,
                                                     c.dl.sha.hexdigest()))
    for sid, s in hc.streams.items():
        print("STREAM %d status=%s bytes=%d sha256=%s" % (sid, s.status, s.bytes,
                                                         s.sha.hexdigest()))
    if first:
        print("FIRST %s" % first[0])
        print("AT_FIRST_H1 %s" % ",".join(str(b) for b in snap["h1"]))
        print("AT_FIRST_H2 %d" % sum(snap["streams"]))
        print("AT_FIRST_STREAMS %s" % ",".join(str(b) for b in snap["streams"]))
    if problem is None:
        left = [c for c in conns if not c.done()]
        if left:
            problem = "%d connection(s) closed before their downloads ended" % len(left)
    if problem:
        print("INCOMPLETE %s" % problem)
        return 1
    print("DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
