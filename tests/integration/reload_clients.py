#!/usr/bin/python3
"""Clients for t_reload_growth.sh, which reloads a server a thousand times.

  reload_clients.py slow PORT PATH OUT GO
      GET PATH over HTTP/1.1 and TLS on 127.0.0.1:PORT, then read the body
      slowly (64 KiB every quarter of a second) until the file GO exists,
      then at full speed; the body goes to OUT. Prints "STARTED" (flushed)
      once the first body bytes are in, then "OK bytes" at the end, or
      "ERROR why". A download that lasts as long as the test wants it to,
      whatever the machine's speed: it spans every reload made before GO.

  reload_clients.py hups PID LOG N
      Sends SIGHUP to PID N times, each time waiting (up to 60 s) until LOG
      has one more "SIGHUP: configuration and certificates reloaded" line
      than before, so that no SIGHUP merges with the one before it. Prints
      "OK n" or "ERROR why".
"""

import os
import signal
import socket
import ssl
import sys
import time

RELOADED = b"SIGHUP: configuration and certificates reloaded"


def slow(port, path, out, go):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=60),
                           server_hostname="localhost")
    sock.sendall(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                 % path.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            print("ERROR closed before the head")
            return 1
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if not head.startswith(b"HTTP/1.1 200") or length is None:
        print("ERROR head %r" % head[:80])
        return 1
    got = len(body)
    announced = False
    with open(out, "wb") as f:
        f.write(body)
        while got < length:
            fast = os.path.exists(go)
            chunk = sock.recv(65536 if not fast else 1 << 20)
            if not chunk:
                break
            f.write(chunk)
            got += len(chunk)
            if not announced:
                print("STARTED", flush=True)
                announced = True
            if not fast:
                time.sleep(0.25)
    if got != length:
        print("ERROR %d of %d bytes" % (got, length))
        return 1
    print("OK %d" % got)
    return 0


def reloads(log):
    with open(log, "rb") as f:
        return f.read().count(RELOADED)


def hups(pid, log, n):
    done = reloads(log)
    for i in range(n):
        os.kill(pid, signal.SIGHUP)
        deadline = time.monotonic() + 60
        while reloads(log) <= done:
            if time.monotonic() > deadline:
                print("ERROR reload %d of %d not logged within 60 s" % (i + 1, n))
                return 1
            time.sleep(0.002)
        done += 1
    print("OK %d" % n)
    return 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "slow" and len(args) == 4:
        return slow(int(args[0]), args[1], args[2], args[3])
    if cmd == "hups" and len(args) == 3:
        return hups(int(args[0]), args[1], int(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
