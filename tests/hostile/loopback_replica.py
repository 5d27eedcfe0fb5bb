"""A fast loopback HTTP/1.1 replica for the attack suite, run in a process
of its own (`start`) so that it shares no interpreter lock with the victim
or the attackers: a slow replica would be blamed on the sidecar.

Paths (GET and HEAD, keep-alive):
  /bytes/N       200 with N bytes (N at most 64 MiB)
  anything else  200, body "ok:PATH"
"""

import asyncio
import multiprocessing
import re

_BYTES_PATH = re.compile(rb"^/bytes/([0-9]{1,8})$")
_MAX_BODY = 64 << 20


def _answer(path, bodies):
    """The whole HTTP answer to GET `path`, built once per size."""
    match = _BYTES_PATH.match(path)
    if match and int(match.group(1)) <= _MAX_BODY:
        size = int(match.group(1))
        if size not in bodies:
            bodies[size] = b"b" * size
        body = bodies[size]
    else:
        body = b"ok:" + path
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))
    return head, body


async def _serve_connection(reader, writer, bodies):
    try:
        while True:
            request = await reader.readuntil(b"\r\n\r\n")
            method, path = request.split(b" ", 2)[:2]
            head, body = _answer(path, bodies)
            writer.write(head)
            if method != b"HEAD":
                writer.write(body)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
            ConnectionError, ValueError):
        pass
    finally:
        writer.close()


def _main(ready):
    bodies = {}

    async def serve():
        server = await asyncio.start_server(
            lambda r, w: _serve_connection(r, w, bodies), "127.0.0.1", 0,
            backlog=1024)
        ready.put(server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()  # until the process is terminated

    asyncio.run(serve())


class LoopbackReplica:
    """One replica process; `url` is its address. `close()` ends it."""

    def __init__(self):
        context = multiprocessing.get_context("spawn")
        ready = context.Queue()
        self.process = context.Process(target=_main, args=(ready,),
                                       daemon=True)
        self.process.start()
        self.url = "http://127.0.0.1:%d" % ready.get(timeout=30)

    def close(self):
        self.process.terminate()
        self.process.join(timeout=10)
