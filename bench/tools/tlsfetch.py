#!/usr/bin/python3
"""Fetch one file over TLS and count the TLS records that carried it.

Usage: tlsfetch.py HOST PORT PATH h1|h2 [SHA256]

The TLS is done through memory BIOs, so every byte from the socket passes
through here first and the record headers (type, version, length) can be
read off the wire: that gives records per MiB and their sizes for any
server, whatever it uses inside (user-space OpenSSL, kTLS, ...).
HTTP/2 is a minimal client: one GET on stream 1, windows opened wide so the
server's framing, not flow control, decides the record sizes.

Prints one line of KEY=VALUE: alpn, status, body (bytes), sha_ok (1/0/-),
records (application-data records after the handshake), median_record
(ciphertext bytes), records_per_mib, full_share (of the ciphertext bytes,
the share in full 16 KiB records), seconds, cipher, version.
"""
import hashlib
import socket
import ssl
import statistics
import struct
import sys
import time

host, port, path, proto = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
want_sha = sys.argv[5] if len(sys.argv) > 5 else None

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2", "http/1.1"] if proto == "h2" else ["http/1.1"])
inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, outg, server_hostname="localhost")
sock = socket.create_connection((host, port), timeout=120)

wire = bytearray()   # raw bytes not yet split into records
records = []         # ciphertext lengths of application-data records
handshake_done = False


def flush():
    data = outg.read()
    if data:
        sock.sendall(data)


def pump():
    """Read from the socket, note record headers, feed the TLS object."""
    data = sock.recv(262144)
    if not data:
        raise EOFError
    wire.extend(data)
    while len(wire) >= 5:
        ctype, _, length = struct.unpack(">BHH", wire[:5])
        if len(wire) < 5 + length:
            break
        if handshake_done and ctype == 23:
            records.append(length)
        del wire[:5 + length]
    inc.write(data)


while True:
    try:
        tls.do_handshake()
        break
    except ssl.SSLWantReadError:
        flush()
        pump()
flush()
handshake_done = True
# Records already split off during the handshake pump belong to it; any
# partial record left in `wire` is counted when complete.


def read_some():
    while True:
        try:
            return tls.read(262144)
        except ssl.SSLWantReadError:
            flush()
            pump()


def write(b):
    tls.write(b)
    flush()


alpn = tls.selected_alpn_protocol() or "-"
t0 = time.monotonic()
body = 0
h = hashlib.sha256()
status = "-"

if proto == "h1" or alpn != "h2":
    if proto == "h2":
        print("alpn=%s status=- body=0 sha_ok=- records=0 median_record=0 records_per_mib=0 "
              "seconds=0 cipher=%s version=%s" % (alpn, tls.cipher()[0], tls.version()))
        sys.exit(3)
    write(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += read_some()
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = head.split(b" ")[1].decode()
    clen = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            clen = int(v)
    h.update(rest)
    body = len(rest)
    while clen is None or body < clen:
        try:
            chunk = read_some()
        except (EOFError, ssl.SSLZeroReturnError):
            break
        if not chunk:
            break
        h.update(chunk)
        body += len(chunk)
else:
    def frame(ftype, flags, stream, payload):
        return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
            struct.pack(">I", stream) + payload

    big = 2**31 - 1
    settings = struct.pack(">HI", 4, big) + struct.pack(">HI", 2, 0)  # window, no push
    hpack = b"\x82\x87" + b"\x44" + bytes([len(path)]) + path.encode() + \
        b"\x41" + bytes([9]) + b"localhost"
    write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, settings) +
          frame(8, 0, 0, struct.pack(">I", big - 65535)) + frame(1, 0x5, 1, hpack))
    buf = bytearray()
    done = False
    while not done:
        buf.extend(read_some())
        while len(buf) >= 9 and not done:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            ftype, flags = buf[3], buf[4]
            stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            payload = bytes(buf[9:9 + length])
            del buf[:9 + length]
            if ftype == 4 and not flags & 1:
                write(frame(4, 1, 0, b""))
            elif ftype == 1 and stream == 1:
                if flags & 0x8:  # padded
                    payload = payload[1:len(payload) - payload[0]]
                if flags & 0x20:  # priority
                    payload = payload[5:]
                # :status 200 is static-table index 8 (0x88).
                status = "200" if payload[:1] == b"\x88" else "other"
                if flags & 1:
                    done = True
            elif ftype == 0 and stream == 1:
                if flags & 0x8:
                    payload = payload[1:len(payload) - payload[0]]
                h.update(payload)
                body += len(payload)
                if flags & 1:
                    done = True
            elif ftype in (3, 7):  # RST_STREAM, GOAWAY
                status = "reset"
                done = True
secs = time.monotonic() - t0
mib = body / 1048576 if body else 1
sha_ok = "-" if not want_sha else ("1" if h.hexdigest() == want_sha else "0")
# Full records: 16 KiB of plaintext, so at least 16384 bytes of ciphertext.
full_share = sum(r for r in records if r >= 16384) / sum(records) if records else 0
print("alpn=%s status=%s body=%d sha_ok=%s records=%d median_record=%d records_per_mib=%.1f "
      "full_share=%.4f seconds=%.3f cipher=%s version=%s" % (
          alpn, status, body, sha_ok, len(records),
          statistics.median(records) if records else 0, len(records) / mib, full_share, secs,
          tls.cipher()[0], tls.version()))
sock.close()
