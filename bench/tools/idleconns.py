#!/usr/bin/python3
"""Open N keep-alive TLS connections to HOST:PORT, make one request for
/1k.bin on each (so each is a real, served client, not a half-open socket),
then touch READY_FILE and hold them open, idle, until killed.

Last line of output: "open=N handshake_s=F" (how many are open, and how long
opening them took)."""
import socket
import ssl
import sys
import time

host, port, n, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
conns = []
t0 = time.monotonic()
req = b"GET /1k.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
for i in range(n):
    try:
        s = ctx.wrap_socket(socket.create_connection((host, port), timeout=10),
                            server_hostname="localhost")
        s.sendall(req)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(65536)
        head, _, body = buf.partition(b"\r\n\r\n")
        while len(body) < 1024:
            body += s.recv(65536)
        conns.append(s)
    except OSError as e:
        print("connection %d: %s" % (i, e), flush=True)
        break
print("open=%d handshake_s=%.2f" % (len(conns), time.monotonic() - t0), flush=True)
open(ready, "w").close()
time.sleep(3600)
