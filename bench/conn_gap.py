#!/usr/bin/env python3
"""conn_gap.py: the gap between two requests on one keep-alive connection.

    python3 bench/conn_gap.py --bind 127.0.0.1 --port 8095 --pages 400 --log OUT

serves an HTTP/1.1 keep-alive site on loopback: / links to /p1 .. /pN, each
page ~17 KB with no links; robots.txt is 404. For every request it records
(connection, time the request head was read, time the response was handed
to the socket) with time.perf_counter_ns(). On SIGTERM it writes one line
per pair of consecutive requests of one connection to OUT: the gap in
microseconds from the response of the first to the request head of the
next, and prints "requests N, gaps N, median X us, p90 Y us".

The gap counts the crawler's time between the end of one transfer and the
start of the next on that connection, plus the loopback and this server's
own wake-up (an asyncio loop: some tens of microseconds), so it is an upper
bound of the crawler's part.
"""
import argparse
import asyncio
import signal
import statistics
import time

FILLER = ("<p>" + "lorem ipsum dolor sit amet " * 30 + "</p>\n") * 20


def page(path, n):
    if path == "/":
        body = "".join('<a href="/p%d">p%d</a>\n' % (i, i) for i in range(1, n + 1))
    elif path.startswith("/p") and path[2:].isdigit() and 1 <= int(path[2:]) <= n:
        body = FILLER
    else:
        return None
    return "<!doctype html><title>%s</title>\n%s" % (path, body)


async def serve(args, log):
    conn_ids = [0]

    async def handle(reader, writer):
        conn_ids[0] += 1
        cid = conn_ids[0]
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                t_in = time.perf_counter_ns()
                path = head.split(b" ", 2)[1].decode()
                html = page(path, args.pages)
                if html is None:
                    st, data = "404 Not Found", b"not found\n"
                else:
                    st, data = "200 OK", html.encode()
                writer.write(("HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                              "\r\n" % (st, len(data))).encode() + data)
                log.append((cid, t_in, time.perf_counter_ns(), path))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    srv = await asyncio.start_server(handle, args.bind, args.port, backlog=128)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with srv:
        await stop.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8095)
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    log = []
    asyncio.run(serve(args, log))
    gaps = []
    last = {}
    for cid, t_in, t_out, _ in log:
        if cid in last:
            gaps.append((t_in - last[cid]) / 1000.0)
        last[cid] = t_out
    with open(args.log, "w") as f:
        f.write("".join("%.1f\n" % g for g in gaps))
    if gaps:
        q = statistics.quantiles(gaps, n=10) if len(gaps) > 1 else [gaps[0]] * 9
        print("requests %d, connections %d, gaps %d, median %.1f us, p90 %.1f us"
              % (len(log), len(last), len(gaps), statistics.median(gaps), q[8]))
    else:
        print("requests %d, no gaps" % len(log))


if __name__ == "__main__":
    main()
