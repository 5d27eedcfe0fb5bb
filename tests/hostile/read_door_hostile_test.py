"""Hostile clients against the read door, which speaks HTTP/2 itself
(nghttp2): the limits server/read_door/read_door.h promises, each checked
with raw frames (raw_h2) against the real sidecar, on --read_listen; and
the calls it serves besides Read on --listen (the loop front): health
Check and Watch, server reflection. The attacks every door shares are in
hostile_clients_test.py.
"""

import re
import socket
import time
import unittest

import h2.events

from proto.tailgate.v1 import tailgate_pb2
from tests.hostile import raw_h2
from tests.hostile.hostile_support import (
    BASELINE, CANCEL, INVALID_ARGUMENT, MIB, OK, REFUSED_STREAM,
    RESOURCE_EXHAUSTED,
    HostileTestCase, metric, stats, wait_for)

# The read door's handshake timeout (ReadDoorOptions; no flag sets it).
HANDSHAKE_TIMEOUT = 10.0


def read_until_closed(sock):
    """What `sock` receives until the peer closes it (EOF or reset); raises
    socket.timeout if it stays open past the socket's timeout."""
    received = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not data:
            return received
        received += data


def call(connection, path):
    """One Read on `connection`: (grpc-status, message, reset)."""
    stream = connection.start_call()
    connection.send(stream, raw_h2.grpc_frame(raw_h2.read_request(path)),
                    end=True)
    return connection.finish(stream)


def largest_send_buffer():
    """The most a socket's send buffer grows to (tcp_wmem's maximum)."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as wmem:
        return int(wmem.read().split()[2])


class ReadDoorHostileClientTest(HostileTestCase):

    DOOR = "read"

    def dropped(self, sidecar):
        return metric(sidecar, "tailgate_responses_dropped_total",
                      'reason="send_timeout"')

    def test_a_client_that_never_sends_its_preface_is_closed(self):
        sidecar = self.start()
        host, port = sidecar.door.rsplit(":", 1)
        start = time.monotonic()
        silent = socket.create_connection((host, int(port)), timeout=30)
        partial = socket.create_connection((host, int(port)), timeout=30)
        partial.sendall(b"PRI * HTTP/2.0\r\n")  # half of the preface
        # A client that sends its preface and SETTINGS, then waits.
        spoke = raw_h2.Connection(sidecar.door)
        for client in (silent, partial):
            received = read_until_closed(client)
            closed_after = time.monotonic() - start
            client.close()
            # At the handshake timeout, not at once...
            self.assertGreaterEqual(closed_after, HANDSHAKE_TIMEOUT - 0.5)
            self.assertLess(closed_after, HANDSHAKE_TIMEOUT + 10)
            # ...having been sent nothing but the door's SETTINGS.
            self.assertGreater(len(received), 9)
            self.assertEqual(received[3], 0x4, received)
        # The client that spoke is served after the same wait.
        status, text, _ = call(spoke, b"/spoke")
        spoke.close()
        self.assertEqual(status, OK, text)

    def test_an_answer_behind_a_shut_window_is_reset_at_the_send_timeout(self):
        sidecar = self.start("--send_timeout=300ms", "--timeout=30s")
        # Streams start with no flow-control window: no DATA can leave.
        connection = raw_h2.Connection(sidecar.door, window=0)
        stream = connection.start_call()
        connection.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/bytes/100000")), end=True)
        asked = time.monotonic()
        status, text, reset = connection.finish(stream)
        took = time.monotonic() - asked
        # The answer began (its headers need no window), then was reset.
        self.assertEqual(reset, CANCEL, (status, text))
        response = connection.responses[stream]
        self.assertEqual(response["headers"][b":status"], b"200")
        self.assertEqual(response["data"], b"")
        self.assertGreaterEqual(took, 0.3)
        self.assertLess(took, 5.0)
        wait_for(lambda: self.dropped(sidecar) == 1, "one dropped answer")
        self.assertEqual(metric(sidecar, "tailgate_buffered_response_bytes"), 0)
        after = stats(sidecar)
        self.assertEqual((after.requests, after.in_flight, after.cancelled),
                         (1, 0, 0))
        # The connection goes on: with a window, the next answer arrives.
        stream = connection.start_call()
        connection.h2.increment_flow_control_window(200000, stream_id=stream)
        connection.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/bytes/1000")), end=True)
        status, text, reset = connection.finish(stream)
        self.assertEqual((status, reset), (OK, None), text)
        message = tailgate_pb2.ReadResponse.FromString(
            connection.responses[stream]["data"][5:])
        self.assertEqual(message.body, b"b" * 1000)
        connection.close()
        self.assertEqual(self.dropped(sidecar), 1)

    def test_a_socket_nobody_reads_is_closed_and_its_answer_released(self):
        # An answer larger than the kernel can buffer for the client, who
        # opens every window but never reads its socket: the door's output
        # stops, not even a RST_STREAM can reach the client, and the
        # answer's bytes must not stay held against --max_buffered_bytes.
        answer = largest_send_buffer() + 4 * MIB
        limit = answer + MIB
        sidecar = self.start("--send_timeout=300ms", "--timeout=30s",
                             "--max_response_bytes=%d" % limit,
                             "--max_buffered_bytes=%d" % limit)
        stalled = raw_h2.Connection(sidecar.door, window=2**31 - 1,
                                    connection_window=2**31 - 1,
                                    receive_buffer=4096)
        stream = stalled.start_call()
        stalled.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/bytes/%d" % answer)), end=True)
        wait_for(lambda: self.dropped(sidecar) == 1, "the answer to be dropped")
        wait_for(lambda: metric(sidecar, "tailgate_buffered_response_bytes")
                 == 0, "the dropped answer's bytes to be released")
        # The door closed the connection: the client finds what the kernel
        # held for it, then the end.
        received = read_until_closed(stalled.sock)
        stalled.sock.close()
        self.assertLess(len(received), answer)
        self.assertEqual(self.dropped(sidecar), 1)  # counted once
        self.assertEqual(stats(sidecar).in_flight, 0)
        self.assert_normal_read_works(sidecar)

    def test_a_stream_reset_or_a_closed_connection_cancels_the_read(self):
        sidecar = self.start("--timeout=30s")
        # /stall answers after 3 s; both reads are cancelled long before.
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call()
        connection.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/stall")), end=True)
        wait_for(lambda: stats(sidecar).in_flight == 1, "the read to start")
        connection.reset(stream)  # RST_STREAM CANCEL
        wait_for(lambda: stats(sidecar).cancelled == 1, "a cancelled read")
        self.assertEqual(stats(sidecar).in_flight, 0)
        # The connection goes on serving.
        status, text, _ = call(connection, b"/next")
        self.assertEqual(status, OK, text)
        connection.close()

        leaving = raw_h2.Connection(sidecar.door)
        stream = leaving.start_call()
        leaving.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/stall")), end=True)
        wait_for(lambda: stats(sidecar).in_flight == 1, "the read to start")
        leaving.sock.close()  # no GOAWAY, no RST_STREAM: just gone
        wait_for(lambda: stats(sidecar).cancelled == 2, "a second cancel")
        after = stats(sidecar)
        self.assertEqual((after.in_flight, after.timeouts), (0, 0))

    def test_at_the_limit_a_new_connection_takes_an_idle_ones_place(self):
        # --max_connections bounds --listen and the read door each.
        sidecar = self.start("--max_connections=2", "--timeout=30s")
        limits = next(line for line in sidecar.log
                      if "event=connection_limits" in line)
        self.assertEqual(re.search(r" read=(\d+)", limits).group(1), "2")
        first = raw_h2.Connection(sidecar.door)
        second = raw_h2.Connection(sidecar.door)
        for connection in (first, second):
            status, text, _ = call(connection, b"/in")
            self.assertEqual(status, OK, text)
        # Both idle: a third takes the place of the first (idle longest),
        # which is told GOAWAY and closed; the second is still served.
        third = raw_h2.Connection(sidecar.door)
        status, text, _ = call(third, b"/third")
        self.assertEqual(status, OK, text)
        read_until_closed(first.sock)
        status, text, _ = call(second, b"/second")
        self.assertEqual(status, OK, text)
        wait_for(lambda: any("event=idle_connections_closed" in line and
                             "listener=read" in line for line in sidecar.log),
                 "the closed connection to be logged")
        # A call open on each: a new connection is closed at accept, before
        # a byte of HTTP/2.
        for connection in (second, third):
            connection.start_call()  # headers only: the call stays open
        host, port = sidecar.door.rsplit(":", 1)
        fourth = socket.create_connection((host, int(port)), timeout=10)
        self.assertEqual(read_until_closed(fourth), b"")
        fourth.close()
        for connection in (first, second, third):
            connection.close()

    def test_streams_beyond_max_concurrent_streams_are_refused(self):
        sidecar = self.start("--max_streams_per_connection=2", "--timeout=30s")
        connection = raw_h2.Connection(sidecar.door)
        # Three streams at once, sent before the door's SETTINGS is read
        # (a client that ignores MAX_CONCURRENT_STREAMS).
        streams = []
        for _ in range(3):
            stream = connection.start_call()
            connection.send(stream, raw_h2.grpc_frame(
                raw_h2.read_request(b"/stall")), end=True)
            streams.append(stream)
        status, _, reset = connection.finish(streams[2])
        self.assertEqual((status, reset), (None, REFUSED_STREAM))
        for stream in streams[:2]:
            status, text, reset = connection.finish(stream)
            self.assertEqual((status, reset), (OK, None), text)
        connection.close()
        self.assertEqual(stats(sidecar).requests, 2)

    def test_endless_continuation_frames_are_cut_off(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        sent = raw_h2.continuation_flood(connection, 256 * MIB)
        connection.close()
        # The header is refused (nghttp2 bounds a header field, the door
        # the whole list) long before 256 MiB have been taken.
        self.assertLess(sent, 16 * MIB)
        self.assert_peak_below(sidecar, BASELINE)
        self.report("continuation_flood_256MiB", sidecar,
                    "closed after %d KiB" % (sent // 1024))
        self.assert_normal_read_works(sidecar)

    def test_a_length_prefix_of_2_gib_is_refused_without_buffering_it(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call()
        # Announce 2 GiB, send 64 MiB of it and end the request.
        connection.send(stream, raw_h2.grpc_frame(b"", declared_length=2**31 - 1))
        connection.send(stream, b"\0" * (64 * MIB), end=True)
        status, text, _ = connection.finish(stream)
        connection.close()
        self.assertEqual(status, RESOURCE_EXHAUSTED, text)
        self.assertIn("65536", text)
        self.assert_peak_below(sidecar, BASELINE)  # nothing past 64 KiB kept
        self.report("length_prefix_2GiB", sidecar, "RESOURCE_EXHAUSTED")
        self.assert_normal_read_works(sidecar)

    def test_request_bytes_over_every_stream_are_bounded(self):
        # 1 MiB for the door's requests: each stream below announces a
        # 65000-byte message and sends 60000 bytes of it, counted with 1 KiB
        # for its call. One connection holds two (its share is an eighth,
        # 128 KiB: a third is refused); over nine connections 17 fit
        # (1 037 408 bytes), and the 18th's first 16 KiB would pass the
        # door's bound.
        sidecar = self.start("--max_grpc_memory_bytes=1048576",
                             "--max_streams_per_connection=64")
        connections = [raw_h2.Connection(sidecar.door) for _ in range(10)]
        part = raw_h2.grpc_frame(b"", declared_length=65000) + b"\0" * 59995
        streams = []
        for i in range(17):
            stream = connections[i // 2].start_call()
            self.assertTrue(connections[i // 2].send(stream, part))
            streams.append((connections[i // 2], stream))
        # The door has taken every byte of them before the next stream
        # opens (on another connection, nothing else orders them).
        for connection in connections[:9]:
            settle(connection)
        # Answered as soon as it is refused (the send may stop there).
        third = connections[0].start_call()
        connections[0].send(third, part)
        status, text, _ = connections[0].finish(third)
        self.assertEqual(status, RESOURCE_EXHAUSTED, text)
        self.assertIn("for this connection", text)
        last = connections[9].start_call()
        connections[9].send(last, part)
        status, text, reset = connections[9].finish(last)
        self.assertEqual(status, RESOURCE_EXHAUSTED, (text, reset))
        self.assertIn("--max_grpc_memory_bytes", text)
        # The first 17 are still held, not refused: the first one's message,
        # completed, is answered as a message (zeros are no ReadRequest).
        self.assertFalse(any(c.ended(s) for c, s in streams))
        first, stream = streams[0]
        self.assertTrue(first.send(stream, b"\0" * 5005, end=True))
        status, text, _ = first.finish(stream)
        self.assertEqual(status, INVALID_ARGUMENT, text)
        for connection in connections:
            connection.close()
        # Closing gave the bytes back: the door serves again.
        self.assert_normal_read_works(sidecar)


def settle(connection):
    """Sends a PING and reads until its ACK: the door has handled every
    frame sent on `connection` before it."""
    connection.h2.ping(b"settled!")
    connection.flush()
    while True:
        data = connection.sock.recv(65536)
        if not data:
            raise AssertionError("the connection closed")
        events = connection.h2.receive_data(data)
        connection.flush()
        if any(isinstance(e, h2.events.PingAckReceived) for e in events):
            return


# grpc.reflection.v1: ServerReflectionRequest{file_containing_symbol (4)}.
REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def reflection_request(symbol):
    return b"\x22" + bytes([len(symbol)]) + symbol


class ServiceCallsHostileClientTest(HostileTestCase):
    """The loop front's own services besides Read (--listen): health and
    reflection calls cannot make the door hold more than its bounds."""

    DOOR = "loop"

    def assert_reflection_serves(self, sidecar):
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call(method=REFLECTION)
        connection.send(stream, raw_h2.grpc_frame(
            reflection_request(b"tailgate.v1.HedgedRead")), end=True)
        status, text, reset = connection.finish(stream)
        answer = connection.responses[stream]["data"]
        connection.close()
        self.assertEqual((status, reset), (OK, None), text)
        self.assertIn(b"tailgate/v1/tailgate.proto", answer)

    def test_a_reflection_message_of_2_gib_is_cut_off(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call(method=REFLECTION)
        # Announce 2 GiB and send 64 MiB of it: the door follows the
        # messages' framing and fails the call at the prefix, buffering
        # none of it.
        connection.send(stream, raw_h2.grpc_frame(b"", declared_length=2**31 - 1))
        connection.send(stream, b"\0" * (64 * MIB), end=True)
        status, text, reset = connection.finish(stream)
        connection.close()
        self.assertEqual(status, RESOURCE_EXHAUSTED, (text, reset))
        self.assertIn("65536", text)
        self.assert_peak_below(sidecar, BASELINE)
        self.report("reflection_length_prefix_2GiB", sidecar,
                    "RESOURCE_EXHAUSTED")
        self.assert_reflection_serves(sidecar)
        self.assert_normal_read_works(sidecar)

    def test_reflection_answers_nobody_reads_are_bounded_and_reset(self):
        sidecar = self.start("--max_streams_per_connection=256",
                             "--send_timeout=1s")
        # A client that opens no flow-control window asks for the same
        # file descriptors 200 times over: each answer is held against
        # --max_buffered_bytes until the send timeout resets its stream,
        # while other connections are served.
        connection = raw_h2.Connection(sidecar.door, window=0)
        streams = []
        for _ in range(200):
            stream = connection.start_call(method=REFLECTION)
            connection.send(stream, raw_h2.grpc_frame(
                reflection_request(b"tailgate.v1.HedgedRead")), end=True)
            streams.append(stream)
        self.assert_normal_read_works(sidecar)
        self.assert_reflection_serves(sidecar)
        self.assert_peak_below(sidecar, BASELINE)
        status, text, reset = connection.finish(streams[0])
        self.assertEqual(reset, CANCEL, (status, text))
        connection.close()
        self.report("reflection_answers_unread_200", sidecar, "reset")
        self.assert_reflection_serves(sidecar)

    def test_answers_on_one_connection_pass_the_first_window(self):
        sidecar = self.start()
        # Reflection answers well past a connection's first 64 KiB window
        # on one connection: each is served only if the window the ones
        # before it took was given back.
        connection = raw_h2.Connection(sidecar.door)
        received = 0
        for _ in range(60):
            stream = connection.start_call(method=REFLECTION)
            connection.send(stream, raw_h2.grpc_frame(
                reflection_request(b"tailgate.v1.HedgedRead")), end=True)
            status, text, reset = connection.finish(stream)
            self.assertEqual((status, reset), (OK, None), text)
            received += len(connection.responses[stream]["data"])
        connection.close()
        self.assertGreater(received, 2 * 65536)

    def test_a_client_resetting_watches_leaves_nothing_behind(self):
        sidecar = self.start("--max_streams_per_connection=8")
        connection = raw_h2.Connection(sidecar.door)
        # 500 watches opened and reset at once: with 8 streams a
        # connection, each reset must free its stream for the next to go.
        for _ in range(500):
            stream = connection.start_call(method="/grpc.health.v1.Health/Watch")
            connection.send(stream, raw_h2.grpc_frame(b""), end=True)
            connection.reset(stream)
        stream = connection.start_call(method="/grpc.health.v1.Health/Check")
        connection.send(stream, raw_h2.grpc_frame(b""), end=True)
        status, text, reset = connection.finish(stream)
        self.assertEqual((status, reset), (OK, None), text)
        self.assertEqual(connection.responses[stream]["data"][5:], b"\x08\x01")
        connection.close()
        self.assert_normal_read_works(sidecar)

    def test_open_watches_are_bounded_by_the_request_memory(self):
        # Each open call counts 1 KiB against --max_grpc_memory_bytes: 1 MiB
        # holds at most 1024 open Watches, however many streams and
        # connections a client opens (one connection at most an eighth,
        # 128); a stream opened with no room left is refused
        # (REFUSED_STREAM, or RESOURCE_EXHAUSTED for one whose message finds
        # no room). Each Watch held open answers SERVING.
        sidecar = self.start("--max_grpc_memory_bytes=1048576",
                             "--max_streams_per_connection=1000")
        connections, held = [], 0
        refused = 0
        for _ in range(10):
            connection = raw_h2.Connection(sidecar.door)
            streams = []
            for _ in range(150):
                stream = connection.start_call(
                    method="/grpc.health.v1.Health/Watch")
                connection.send(stream, raw_h2.grpc_frame(b""), end=True)
                streams.append(stream)
            # Until every stream has its first answer or its refusal.
            def settled():
                return all(connection.ended(s) or
                           connection.responses[s]["data"] for s in streams)
            while not settled() and connection.pump():
                pass
            self.assertTrue(settled())
            for s in streams:
                if connection.ended(s):
                    # Refused when it opened, or when its message came
                    # with the bound reached.
                    status, text, reset = connection.finish(s)
                    self.assertTrue(reset == REFUSED_STREAM or
                                    status == RESOURCE_EXHAUSTED,
                                    (status, text, reset))
                    refused += 1
                else:
                    self.assertEqual(connection.responses[s]["data"][5:],
                                     b"\x08\x01")
                    held += 1
            connections.append(connection)
        self.assertLessEqual(held, 1024)
        self.assertGreater(held, 900)
        self.assertEqual(held + refused, 1500)
        self.assert_peak_below(sidecar, BASELINE)
        self.report("open_watches_1500", sidecar,
                    "%d held, %d refused" % (held, refused))
        for connection in connections:
            connection.close()
        self.assert_normal_read_works(sidecar)


if __name__ == "__main__":
    unittest.main()
