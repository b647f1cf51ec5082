#!/usr/bin/env python3
"""Floods one port of a running `kvchaos node` and counts how each request ended.

Opens N connections at once, sends one GetClusterInfo on each, then reads every answer within a
shared 20 s budget: prints how many got 200, 503 (refused because the node is full), or nothing
(unanswered, or closed without an answer). The reliability issue's finding on main: 1000
concurrent requests, 752 never answered.

    bench/node_http_flood.py PORT [N]
"""
import collections
import socket
import sys
import time

port, n = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1000
request = b"POST /api/GetClusterInfo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
sockets = []
for _ in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    sockets.append(s)
time.sleep(0.5)
for s in sockets:
    try:
        s.setblocking(True)
        s.settimeout(10)
        s.sendall(request)
    except OSError:
        pass
outcomes = collections.Counter()
start = time.time()
for s in sockets:
    s.settimeout(max(0.01, 20 - (time.time() - start)))
    try:
        data = s.recv(4096)
        outcomes[data.split(b" ")[1].decode() if data else "closed without an answer"] += 1
    except OSError:
        outcomes["unanswered"] += 1
print(f"{n} concurrent requests: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
