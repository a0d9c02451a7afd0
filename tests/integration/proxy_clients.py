#!/usr/bin/python3
"""Clients that speak the PROXY protocol (v1 text, v2 binary) to ktlsd, as a
load balancer in front of it would, for t_proxy.sh.

  proxy_clients.py get [--tls CAFILE] [--alpn P] TARGET HEADER [PATH]
      Connect to TARGET ("tcp:PORT" on 127.0.0.1, or "unix:/path"), send
      the header HEADER names and, in the same write, the first bytes of
      what follows it: the TLS ClientHello (--tls: made through a memory
      BIO, so that header and hello leave as one segment and ktlsd must
      keep what follows the header) or the HTTP request. Then finish the
      handshake, GET PATH (default /a.txt) with "Connection: close" and
      print "RESP status bodylen" (and "ALPN proto" with --tls).

  proxy_clients.py refused [--tls CAFILE] TARGET HEADER
      The same beginning, then wait up to 30 s for the server to close:
      print "CLOSED n" with the number of bytes that came first (a refusal
      owes nothing: 0), or "OPEN".

HEADER: none (nothing), partial (the first 11 bytes of a v1 line, then
silence), v1:IPV4, v1-6:IPV6, v1-unknown, v1-bad (a v1 line with a field
missing), v2:IPV4, v2-6:IPV6, v2-local, v2-unix, v2-tlv:IPV4 (v2 with TLVs:
ALPN, authority, an AWS-style VPC endpoint id, NOOP padding), v2-badver (v2
signature with version 3). The source port claimed is 40000.
"""

import socket
import ssl
import struct
import sys
import time

SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def v2(cmd, fam, body):
    return SIG + bytes([0x20 | cmd, fam]) + struct.pack("!H", len(body)) + body


def header(spec, dport):
    kind, _, addr = spec.partition(":")
    if kind == "none":
        return b""
    if kind == "partial":
        return b"PROXY TCP4 "
    if kind == "v1":
        return f"PROXY TCP4 {addr} 127.0.0.1 40000 {dport}\r\n".encode()
    if kind == "v1-6":
        return f"PROXY TCP6 {addr} ::1 40000 {dport}\r\n".encode()
    if kind == "v1-unknown":
        return b"PROXY UNKNOWN\r\n"
    if kind == "v1-bad":
        return b"PROXY TCP4 192.0.2.1 127.0.0.1 40000\r\n"
    if kind in ("v2", "v2-tlv"):
        body = socket.inet_pton(socket.AF_INET, addr) + socket.inet_pton(socket.AF_INET, "127.0.0.1")
        body += struct.pack("!HH", 40000, dport)
        if kind == "v2-tlv":
            for t, v in ((0x01, b"h2"), (0x02, b"www.example.com"), (0xEA, b"\x01vpce-0123456789abcdef"), (0x04, b"\x00" * 5)):
                body += struct.pack("!BH", t, len(v)) + v
        return v2(1, 0x11, body)
    if kind == "v2-6":
        body = socket.inet_pton(socket.AF_INET6, addr) + socket.inet_pton(socket.AF_INET6, "::1")
        return v2(1, 0x21, body + struct.pack("!HH", 40000, dport))
    if kind == "v2-local":
        return v2(0, 0x00, b"")
    if kind == "v2-unix":
        return v2(1, 0x31, b"/run/haproxy/client.sock".ljust(108, b"\0") + b"/run/ktlsd.sock".ljust(108, b"\0"))
    if kind == "v2-badver":
        return SIG + bytes([0x31, 0x11]) + struct.pack("!H", 12) + b"\x7f\0\0\1" * 2 + b"\0\1\0\2"
    raise SystemExit(f"unknown header {spec}")


def connect(target):
    if target.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(target[5:])
        return s, 443
    port = int(target.split(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s, port


class Tls:
    """TLS over a memory BIO: we decide when its bytes hit the socket."""

    def __init__(self, sock, cafile, alpn):
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.set_alpn_protocols([alpn])
        self.sock = sock
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname="localhost")
        try:
            self.obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        self.hello = self.out.read()

    def flush(self):
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def feed(self):
        data = self.sock.recv(65536)
        if not data:
            self.inc.write_eof()
            return False
        self.inc.write(data)
        return True

    def handshake(self):
        while True:
            try:
                self.obj.do_handshake()
                self.flush()
                return
            except ssl.SSLWantReadError:
                self.flush()
                if not self.feed():
                    raise ConnectionError("closed during the handshake")

    def send(self, data):
        self.obj.write(data)
        self.flush()

    def read_all(self):
        got = b""
        while True:
            try:
                chunk = self.obj.read(65536)
                if not chunk:
                    return got
                got += chunk
            except ssl.SSLWantReadError:
                if not self.feed():
                    continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return got


def read_plain(sock):
    got = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk


def main():
    args = sys.argv[1:]
    mode = args.pop(0)
    cafile, alpn = None, "http/1.1"
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--tls":
            cafile = args.pop(0)
        elif opt == "--alpn":
            alpn = args.pop(0)
    target, spec = args[0], args[1]
    path = args[2] if len(args) > 2 else "/a.txt"
    sock, dport = connect(target)
    request = f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
    tls = Tls(sock, cafile, alpn) if cafile else None
    first = header(spec, dport) + (tls.hello if tls else request)
    if spec == "partial":
        first = header(spec, dport)
    sock.sendall(first)

    if mode == "refused":
        start, got = time.monotonic(), 0
        while time.monotonic() - start < 30:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                print(f"CLOSED {got}")
                return 0
            got += len(chunk)
        print("OPEN")
        return 1

    if tls:
        tls.handshake()
        tls.send(request)
        resp = tls.read_all()
    else:
        resp = read_plain(sock)
    head, _, body = resp.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "none"
    print(f"RESP {status} {len(body)}")
    if tls:
        print(f"ALPN {tls.obj.selected_alpn_protocol()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
