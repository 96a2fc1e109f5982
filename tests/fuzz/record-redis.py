#!/usr/bin/env python3
"""record-redis.py: make realistic seeds for fuzz-redis-reply from a real
redis-server.

    python3 tests/fuzz/record-redis.py BUILD_DIR

starts a private redis-server on a unix socket (in a temporary folder),
and a recording proxy in front of it, then runs the fuzz-redis-reply
binary of BUILD_DIR once per operation set with DCRAWL_FUZZ_REDIS set to
the proxy's socket (the harness then connects for real). Everything the
server sends is the seed: corpus/redis-reply/rec-<ops> (option byte with
bit 7 set: the handshake comes from the stream) and rec-ops-<ops> (the
replies after the handshake, for the harness's own). All processes are
stopped at the end.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def pump(src, dst, log):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            if log is not None:
                log.append(b)
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def proxy(listen, upstream, log, stop):
    while not stop.is_set():
        try:
            c, _ = listen.accept()
        except socket.timeout:
            continue
        u = socket.socket(socket.AF_UNIX)
        u.connect(upstream)
        threading.Thread(target=pump, args=(c, u, None), daemon=True).start()
        threading.Thread(target=pump, args=(u, c, log), daemon=True).start()


def main():
    build = sys.argv[1]
    binary = os.path.join(build, "tests", "fuzz", "fuzz-redis-reply")
    tmp = tempfile.mkdtemp(prefix="dcrawl-rec-")
    rsock, psock = os.path.join(tmp, "redis.sock"), os.path.join(tmp, "proxy.sock")
    srv = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", rsock,
                            "--save", "", "--appendonly", "no", "--dir", tmp],
                           stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(rsock):
                break
            time.sleep(0.05)
        out = os.path.join(HERE, "corpus", "redis-reply")
        os.makedirs(out, exist_ok=True)
        for ops in (0x01, 0x03, 0x07, 0x0f, 0x1f, 0x3f, 0x7f, 0x23, 0x43):
            subprocess.run(["redis-cli", "-s", rsock, "FLUSHALL"],
                           stdout=subprocess.DEVNULL, check=True)
            log, stop = [], threading.Event()
            ls = socket.socket(socket.AF_UNIX)
            ls.bind(psock)
            ls.listen(8)
            ls.settimeout(0.1)
            t = threading.Thread(target=proxy, args=(ls, rsock, log, stop), daemon=True)
            t.start()
            seed = os.path.join(tmp, "seed")
            with open(seed, "wb") as f:
                f.write(bytes([0x80 | ops]))
            env = dict(os.environ, DCRAWL_FUZZ_REDIS=psock)
            subprocess.run([binary, seed], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
            time.sleep(0.2)
            stop.set()
            t.join()
            ls.close()
            os.unlink(psock)
            rec = b"".join(log)
            with open(os.path.join(out, "rec-%02x" % ops), "wb") as f:
                f.write(bytes([0x80 | ops]) + rec)
            # the same after the harness's own handshake (option bit 7 clear)
            k = rec.find(b"set-max-intset-entries\r\n")
            k = rec.find(b"\r\n", rec.find(b"$", k + 24) + 1) if k >= 0 else -1
            if k >= 0:
                k = rec.find(b"\r\n", k + 2) + 2
                with open(os.path.join(out, "rec-ops-%02x" % ops), "wb") as f:
                    f.write(bytes([ops]) + rec[k:])
    finally:
        srv.terminate()
        srv.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
