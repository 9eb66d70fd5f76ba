#!/usr/bin/env python3
"""stream_dump.py: print the messages a JetStream stream holds on a subject filter, read-only.

The soak (tests/soak/run.sh) reads the receipts seats published to WAKE_<space> with it: no
`shoal` command prints stored receipts after the fact (`shoal send --wait` watches them live,
on a core subscription, only while it runs). It consumes nothing and creates no consumer: each
message is fetched with the JetStream API's direct get (`$JS.API.STREAM.MSG.GET.<stream>`,
`next_by_subj`), the way `shoal seat events` reads the wake stream.

    stream_dump.py --url nats://127.0.0.1:4222 --nkey SEED_FILE --stream WAKE_soak \
                   --filter 'cotal.soak.rcpt.>' [--from-seq N]

Prints one JSON object per line: {"seq","subject","time","data"} where `data` is the
message's JSON payload (or {"raw": "<text>"} when it is not JSON). Exit 0 at the end of the
stream, 1 with a sentence on stderr when the broker cannot be read.

The broker of a local Shoal mesh admits only the mesh secret's holder (docs/security.md): the
client signs the server's nonce with the nkey seed (Ed25519). Only the standard library is
used, so a plain Debian `python3` runs it; `cryptography` is used when present, else a small
Ed25519 signer in pure Python (RFC 8032 §6, one signature per connection).
"""
import argparse
import base64
import hashlib
import json
import socket
import sys

# --- Ed25519 (RFC 8032 section 6 reference code), signing only -------------------------------
_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P


def _recover_x(y, sign):
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P)
    if x2 == 0:
        return 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * pow(2, (_P - 1) // 4, _P) % _P
    if (x & 1) != sign:
        x = _P - x
    return x


_GY = 4 * pow(5, _P - 2, _P) % _P
_GX = _recover_x(_GY, 0)
_G = (_GX, _GY, 1, _GX * _GY % _P)


def _add(p, q):
    a = (p[1] - p[0]) * (q[1] - q[0]) % _P
    b = (p[1] + p[0]) * (q[1] + q[0]) % _P
    c = 2 * p[3] * q[3] * _D % _P
    d = 2 * p[2] * q[2] % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(s, p):
    q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = _add(q, p)
        p = _add(p, p)
        s >>= 1
    return q


def _compress(p):
    zinv = pow(p[2], _P - 2, _P)
    x = p[0] * zinv % _P
    y = p[1] * zinv % _P
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _expand(secret):
    h = hashlib.sha512(secret).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def _hint(data):
    return int.from_bytes(hashlib.sha512(data).digest(), "little") % _L


def ed25519_public(secret):
    a, _ = _expand(secret)
    return _compress(_mul(a, _G))


def ed25519_sign(secret, msg):
    try:  # the fast path, when the cryptography package is installed
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(secret).sign(msg)
    except ImportError:
        pass
    a, prefix = _expand(secret)
    pub = _compress(_mul(a, _G))
    r = _hint(prefix + msg)
    rs = _compress(_mul(r, _G))
    s = (r + _hint(rs + pub + msg) * a) % _L
    return rs + int.to_bytes(s, 32, "little")


# --- NATS nkeys text encoding ----------------------------------------------------------------
def _crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _b32decode(text):
    return base64.b32decode(text + "=" * (-len(text) % 8))


def nkey_from_seed(seed_text):
    """(public key text, raw 32-byte seed) of a user seed `SU…`."""
    raw = _b32decode(seed_text.strip())
    body, crc = raw[:-2], int.from_bytes(raw[-2:], "little")
    if _crc16(body) != crc or len(body) != 34 or (body[0] & 0xF8) != 0x90:
        raise ValueError("not an nkey seed")
    prefix = ((body[0] & 0x07) << 5) | ((body[1] & 0xF8) >> 3)
    secret = body[2:]
    pub = bytes([prefix]) + ed25519_public(secret)
    pub += _crc16(pub).to_bytes(2, "little")
    return base64.b32encode(pub).decode().rstrip("="), secret


# --- a minimal NATS client: CONNECT with an nkey, request/reply ------------------------------
class Nats:
    def __init__(self, url, seed_file, timeout):
        hostport = url.split("://", 1)[-1].rstrip("/")
        host, _, port = hostport.rpartition(":")
        self.sock = socket.create_connection((host or "127.0.0.1", int(port or 4222)), timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        op, info = self._line().split(b" ", 1)
        if op != b"INFO":
            raise IOError("the broker did not greet with INFO")
        info = json.loads(info)
        connect = {"verbose": False, "pedantic": False, "protocol": 1, "headers": True,
                   "no_responders": True, "lang": "python-soak", "version": "1"}
        if seed_file:
            with open(seed_file) as f:
                public, secret = nkey_from_seed(f.read())
            nonce = info.get("nonce", "").encode()
            sig = ed25519_sign(secret, nonce)
            connect["nkey"] = public
            connect["sig"] = base64.urlsafe_b64encode(sig).decode().rstrip("=")
        self._send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        while True:
            line = self._line()
            if line == b"PONG":
                break
            if line.startswith(b"-ERR"):
                raise IOError("the broker refused us: " + line.decode(errors="replace"))
        self.inbox = "_INBOX.soak%d" % id(self)
        self._send(("SUB %s.* 1\r\n" % self.inbox).encode())
        self.n = 0

    def _send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise IOError("the broker closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def request(self, subject, payload):
        self.n += 1
        reply = "%s.%d" % (self.inbox, self.n)
        self._send(("PUB %s %s %d\r\n" % (subject, reply, len(payload))).encode() + payload +
                   b"\r\n")
        while True:
            line = self._line()
            if line == b"PING":
                self._send(b"PONG\r\n")
                continue
            if line.startswith(b"-ERR"):
                raise IOError(line.decode(errors="replace"))
            parts = line.split(b" ")
            if parts[0] == b"MSG":
                data = self._bytes(int(parts[-1]))
                headers = b""
            elif parts[0] == b"HMSG":
                total = int(parts[-1])
                data = self._bytes(total)
                headers, data = data[:int(parts[-2])], data[int(parts[-2]):]
            else:
                continue
            if parts[1].decode() != reply:
                continue  # a late answer to an earlier request
            if b" 503" in headers.split(b"\r\n", 1)[0]:
                raise IOError("no responders for " + subject + " (JetStream not ready?)")
            return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--nkey", default="", help="the nkey seed file (the mesh secret)")
    ap.add_argument("--stream", required=True)
    ap.add_argument("--filter", required=True, help="subject filter, e.g. cotal.main.rcpt.>")
    ap.add_argument("--from-seq", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=5.0)
    args = ap.parse_args()
    try:
        nc = Nats(args.url, args.nkey, args.timeout)
        api = "$JS.API.STREAM.MSG.GET." + args.stream
        seq = max(1, args.from_seq)
        out = sys.stdout
        while True:
            req = json.dumps({"seq": seq, "next_by_subj": args.filter}).encode()
            resp = json.loads(nc.request(api, req))
            if "error" in resp:
                if resp["error"].get("code") == 404:
                    break  # no further message on the filter
                raise IOError("%s: %s" % (api, resp["error"].get("description", resp["error"])))
            m = resp["message"]
            raw = base64.b64decode(m.get("data", "") or "")
            try:
                data = json.loads(raw)
            except ValueError:
                data = {"raw": raw.decode(errors="replace")}
            out.write(json.dumps({"seq": m["seq"], "subject": m["subject"],
                                  "time": m.get("time"), "data": data}) + "\n")
            seq = m["seq"] + 1
        out.flush()
    except (OSError, ValueError) as e:
        print("stream_dump.py: cannot read %s from %s: %s" % (args.stream, args.url, e),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
