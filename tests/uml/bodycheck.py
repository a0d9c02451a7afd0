#!/usr/bin/python3
"""Body checks for tests/uml/guest-tests (and the host side of tests/uml/run).

  bodycheck.py slice FILE FIRST LAST GOT
      GOT holds exactly bytes FIRST..LAST (inclusive) of FILE.
  bodycheck.py multipart FILE HEADERS BODY FIRST-LAST...
      HEADERS (curl -D) announce multipart/byteranges and BODY holds one part
      per range, in order, each with the right Content-Range and bytes.
  bodycheck.py prefix FILE GOT
      GOT is a prefix of FILE (possibly empty).
  bodycheck.py sclient FILE TRANSCRIPT
      TRANSCRIPT (openssl s_client's stdout) holds exactly one HTTP response,
      a 200 whose body is FILE, byte for byte.
  bodycheck.py slowcat BYTES_PER_SECOND
      Copy stdin to stdout at about that rate (a slow reader for a pipe).

Exit 0 when the check holds; otherwise print why on one line and exit 1.
"""
import re
import sys


def die(msg):
    print(msg)
    sys.exit(1)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def last_response_headers(path):
    """curl -D may hold several header blocks (100 Continue, ...): keep the last."""
    text = read(path).decode("latin-1")
    blocks = [b for b in re.split(r"\r?\n\r?\n", text) if b.strip()]
    if not blocks:
        die("no response headers")
    lines = blocks[-1].splitlines()
    hdrs = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return lines[0], hdrs


def cmd_slice(args):
    path, first, last, got = args[0], int(args[1]), int(args[2]), args[3]
    want = read(path)[first:last + 1]
    have = read(got)
    if have != want:
        die(f"body differs: {len(have)} bytes, want {len(want)} (bytes {first}-{last})")


def cmd_prefix(args):
    want, have = read(args[0]), read(args[1])
    if want[:len(have)] != have:
        die(f"the {len(have)} bytes received are not a prefix of the original")


def cmd_multipart(args):
    path, hdr_path, body_path = args[0], args[1], args[2]
    ranges = [tuple(int(x) for x in r.split("-")) for r in args[3:]]
    data = read(path)
    status, hdrs = last_response_headers(hdr_path)
    if " 206" not in status:
        die(f"status line {status!r}, want 206")
    ctype = hdrs.get("content-type", "")
    m = re.match(r'multipart/byteranges;\s*boundary="?([^";]+)"?', ctype, re.I)
    if not m:
        die(f"Content-Type {ctype!r} is not multipart/byteranges")
    boundary = m.group(1).encode()
    body = read(body_path)
    if "content-length" in hdrs and int(hdrs["content-length"]) != len(body):
        die(f"Content-Length {hdrs['content-length']} but {len(body)} body bytes")
    delim = b"--" + boundary
    pos = body.find(delim)
    if pos < 0:
        die("no boundary in the body")
    parts = []
    while True:
        pos += len(delim)
        if body[pos:pos + 2] == b"--":
            break  # closing delimiter
        if body[pos:pos + 2] != b"\r\n":
            die(f"bad delimiter line at byte {pos}")
        head_end = body.find(b"\r\n\r\n", pos + 2)
        if head_end < 0:
            die("part without a header end")
        phdrs = {}
        for line in body[pos + 2:head_end].decode("latin-1").split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                phdrs[k.strip().lower()] = v.strip()
        start = head_end + 4
        cr = phdrs.get("content-range", "")
        m = re.match(r"bytes (\d+)-(\d+)/(\d+)$", cr)
        if not m:
            die(f"part {len(parts)}: Content-Range {cr!r}")
        first, last, total = (int(x) for x in m.groups())
        if total != len(data):
            die(f"part {len(parts)}: total {total}, want {len(data)}")
        end = start + (last - first + 1)
        if body[end:end + 2 + len(delim)] != b"\r\n" + delim:
            die(f"part {len(parts)}: no delimiter right after its {last - first + 1} bytes")
        if body[start:end] != data[first:last + 1]:
            die(f"part {len(parts)} (bytes {first}-{last}): payload differs from the file")
        parts.append((first, last))
        pos = end + 2
    if parts != ranges:
        die(f"parts {parts}, want {ranges}")


def cmd_sclient(args):
    want, text = read(args[0]), read(args[1])
    n = text.count(b"HTTP/1.1 ")
    start = text.find(b"HTTP/1.1 200 OK\r\n")
    if start < 0:
        die("no 'HTTP/1.1 200 OK' in the transcript")
    end = text.find(b"\r\n\r\n", start)
    m = re.search(rb"\r\ncontent-length: *(\d+)", text[start:end], re.I)
    if end < 0 or not m:
        die("no header end or Content-Length")
    body = text[end + 4:end + 4 + int(m.group(1))]
    if int(m.group(1)) != len(want) or body != want:
        die(f"body ({len(body)} bytes) differs from the file ({len(want)} bytes)")
    if n != 1:
        die(f"{n} responses in the transcript, want 1")


def cmd_slowcat(args):
    import time
    rate = float(args[0])
    t0 = time.monotonic()
    total = 0
    src, dst = sys.stdin.buffer.raw, sys.stdout.buffer
    while True:
        chunk = src.read(16384)
        if not chunk:
            break
        dst.write(chunk)
        dst.flush()
        total += len(chunk)
        ahead = total / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
    dst.flush()


def main():
    if len(sys.argv) < 2:
        die(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"slice": cmd_slice, "multipart": cmd_multipart, "prefix": cmd_prefix,
     "sclient": cmd_sclient, "slowcat": cmd_slowcat}[cmd](args)


if __name__ == "__main__":
    main()
