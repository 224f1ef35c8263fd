"""The example servers' benchmark client: sequential curl-like `GET /`
requests, each response read whole before the next request is sent.

    python3 scripts/keepalive_client.py PORT N [FRESH [PID WARM]]
    DEPTH=16 python3 scripts/keepalive_client.py PORT N

N requests on one connection, or each on a connection of its own when
FRESH is 1 (scripts/perf.sh). With DEPTH above 1 (the environment's
`DEPTH`), the requests are pipelined: DEPTH of them written at once, then
their DEPTH responses read whole, then the next DEPTH (as wrk's pipelining
script does, scripts/bench-wrk.sh); N is rounded up to a multiple of it. With a server PID, WARM requests are sent
first on the same connection, and the server's CPU time over the N that
follow (every thread's schedstat: nanoseconds on a CPU, user and kernel)
is printed per request (scripts/bench-cpu.sh); the connection stays open
while it is read, so a server with a thread per connection still has it.
"""
import glob
import os
import socket
import sys

port, n = int(sys.argv[1]), int(sys.argv[2])
fresh = len(sys.argv) > 3 and sys.argv[3] == "1"
pid, warm = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (0, 0)
depth = max(1, int(os.environ.get("DEPTH", "1") or 1))
req = ("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n" % port).encode()


def cpu_ns():
    total = 0
    for path in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            total += int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


s = connect()
buf = b""
before = 0
for i in range(-(-(warm + n) // depth) * depth):
    if i == warm and pid:
        before = cpu_ns()
    if fresh and i > 0 and i % depth == 0:
        s.close()
        s = connect()
    if i % depth == 0:
        s.sendall(req * depth)
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            head = buf[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15:].split(b"\r\n")[0]) if at >= 0 else 0
            if len(buf) >= end + 4 + length:
                assert head.startswith(b"http/1.1 200"), head
                buf = buf[end + 4 + length:]
                break
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("closed after %d responses" % i)
        buf += chunk
if pid:
    print("%.1f" % ((cpu_ns() - before) / n))
s.close()
