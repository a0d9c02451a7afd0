#!/usr/bin/python3
"""Clients for t_limits_site.sh (--limit-conn, --limit-rate).

Run with /usr/bin/python3 (Debian's).

  limits_clients.py hold PORT N SECS
      Opens N TLS connections (HTTP/1.1 keep-alive, SNI "localhost", no
      certificate check) to 127.0.0.1:PORT, each from 127.0.0.1, and asks
      each for /a.txt. Prints "HELD N" once all N were answered 200 (or
      "STATUS s" for the first that was not, and exits 1), then keeps them
      open, idle, for SECS seconds or until killed.
"""

import socket
import ssl
import sys
import time


def get(conn):
    """Status of one GET /a.txt on conn; its body is read and dropped."""
    conn.sendall(b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = conn.recv(65536)
        if not d:
            return 0
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        d = conn.recv(65536)
        if not d:
            break
        body += d
    return status


def hold(port, n, secs):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    conns = []
    for _ in range(n):
        raw = socket.create_connection(("127.0.0.1", port), timeout=20)
        c = ctx.wrap_socket(raw, server_hostname="localhost")
        st = get(c)
        if st != 200:
            print("STATUS %d" % st, flush=True)
            return 1
        conns.append(c)
    print("HELD %d" % n, flush=True)
    time.sleep(secs)
    return 0


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "hold":
        return hold(int(args[1]), int(args[2]), float(args[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
