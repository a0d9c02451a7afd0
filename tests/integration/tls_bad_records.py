#!/usr/bin/python3
"""Bad TLS records after a real handshake: the server must send its fatal
alert and close the connection at once (RFC 8446 6.2, RFC 5246 7.2.2), not
wait for a timeout.

  tls_bad_records.py [--first PATH] WAIT CASE...

CASE is PORT:VERSION:KIND:WHEN:ALPN, each part one of
  VERSION  1.2, 1.3
  KIND     badtag    application data whose tag does not authenticate
           empty     a record of length 0
           type0     a record of content type 0
           overflow  a record header whose length is past the largest
                     ciphertext (RFC 8446 5.2, RFC 5246 6.2.3)
  WHEN     after     after one GET PATH (default /a.txt) was answered in full
           before    before any request
  ALPN     http/1.1, h2 (no HTTP/2 preface is sent: the record comes first)

Every case has its own connection, all at once (one thread each). The
handshake is Python's ssl over memory BIOs, so that the socket stays ours:
the bad record goes out as raw bytes, and what comes back is both read raw
(to see the close) and decrypted (to name the alert). Prints one line per
case, in the order given:
  CASE ALERT reason CLOSED secs   the alert, then the close (secs after the bad record)
  CASE ALERT reason OPEN          the alert, and the connection still open after WAIT s
  CASE NOALERT what CLOSED secs|OPEN
  CASE SETUP why                  the handshake or the first request failed
"""

import re
import socket
import ssl
import sys
import threading
import time

RECORDS = {
    "badtag": b"\x17\x03\x03\x00\x20" + bytes(32),
    "empty": b"\x17\x03\x03\x00\x00",
    "type0": b"\x00\x03\x03\x00\x20" + bytes(32),
    # 18433: one past TLS 1.2's largest ciphertext, and TLS 1.3's too.
    "overflow": b"\x17\x03\x03\x48\x01" + bytes(16),
}


FIRST = "/a.txt"


class Setup(Exception):
    pass


class Case:
    def __init__(self, spec, wait):
        self.spec = spec
        self.wait = wait
        port, self.version, self.kind, self.when, self.alpn = spec.split(":")
        self.port = int(port)
        if self.kind not in RECORDS or self.when not in ("after", "before"):
            raise ValueError("bad case %r" % spec)
        self.result = "SETUP not run"

    def flush(self):
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def feed(self, deadline):
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        data = self.sock.recv(65536)
        if not data:
            raise Setup("the server closed")
        self.inc.write(data)

    def handshake(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        v = ssl.TLSVersion.TLSv1_2 if self.version == "1.2" else ssl.TLSVersion.TLSv1_3
        ctx.minimum_version = ctx.maximum_version = v
        ctx.set_alpn_protocols([self.alpn])
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.inc, self.out, server_hostname="localhost")
        deadline = time.monotonic() + 20
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.feed(deadline)
        self.flush()
        if self.tls.selected_alpn_protocol() != self.alpn:
            raise Setup("ALPN chose %r" % self.tls.selected_alpn_protocol())

    def first_request(self):
        self.tls.write(b"GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % FIRST.encode())
        self.flush()
        got = bytearray()
        deadline = time.monotonic() + 20
        while True:
            head, _, body = bytes(got).partition(b"\r\n\r\n")
            m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            if m and len(body) >= int(m.group(1)):
                break
            try:
                got += self.tls.read(65536)
            except ssl.SSLWantReadError:
                self.feed(deadline)
        if not got.startswith(b"HTTP/1.1 200"):
            raise Setup("first response: %r" % bytes(got[:40]))

    def alert_in(self, data):
        """The reason OpenSSL gives for what the server sent, decrypted."""
        self.inc.write(data)
        try:
            while True:
                self.tls.read(65536)
        except ssl.SSLWantReadError:
            return None
        except ssl.SSLZeroReturnError:
            return "close_notify"
        except ssl.SSLError as e:
            return e.reason or str(e)

    def run(self):
        try:
            self.handshake()
            if self.when == "after":
                self.first_request()
        except (Setup, OSError, ssl.SSLError) as e:
            self.result = "SETUP %s" % e
            return
        self.sock.sendall(RECORDS[self.kind])
        t0 = time.monotonic()
        deadline = t0 + self.wait
        got = bytearray()
        closed = None
        while closed is None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                data = b""
            if not data:
                closed = time.monotonic() - t0
            got += data
        reason = self.alert_in(bytes(got))
        end = "CLOSED %.2f" % closed if closed is not None else "OPEN"
        if reason and reason != "close_notify":
            self.result = "ALERT %s %s" % (reason, end)
        else:
            self.result = "NOALERT %s %s" % (reason or "nothing", end)
        self.sock.close()


def main():
    global FIRST
    args = sys.argv[1:]
    if args[:1] == ["--first"] and len(args) > 1:
        FIRST = args[1]
        args = args[2:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    wait = float(args[0])
    cases = [Case(spec, wait) for spec in args[1:]]
    threads = [threading.Thread(target=c.run) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in cases:
        print("%s %s" % (c.spec, c.result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
