"""Hostile local clients against the real sidecar: each attack is made with
raw HTTP/2 frames (raw_h2), and each test checks the sidecar's status
answer, its peak memory (VmHWM) against the bound the flags set, and that a
normal read succeeds right after.

The attacks in DoorAttacks are made on every door that serves
HedgedRead.Read: --listen as served by default, by the loop front
(HostileClientTest), --listen served by the gRPC library alone
(--listen_front=grpc, GrpcFrontAttacksTest) and the read door
(--read_listen, ReadDoorAttacksTest). What only one door has is tested in
its own class: gRPC's memory quota here, the loop's own HTTP/2 limits and
its health and reflection calls in read_door_hostile_test.py.

Each test starts its own sidecar, so that its peak memory is that test's.
Memory bounds are checked against the plain build only: under
AddressSanitizer (`--config=asan`) the behaviour is checked, not RSS.
"""

import os
import re
import resource
import socket
import sys
import unittest
import zlib

import h2.exceptions

from proto.tailgate.v1 import tailgate_pb2
from tests.hostile import raw_h2
from tests.hostile.hostile_support import (
    BASELINE, CANCEL, CANCELLED, FORMULA_SLACK, MIB, OK, RESOURCE_EXHAUSTED,
    SANITIZED, UNIMPLEMENTED, HostileTestCase, current_rss, metric, peak_rss,
    wait_for)


class DoorAttacks:
    """Attacks on the door under test (sidecar.door), mixed into one
    HostileTestCase per door below; where the doors' answers differ in
    wording, each is stated."""

    def test_a_request_over_64_kib_is_resource_exhausted(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call()
        path = b"/" + b"p" * (100 * 1024)
        message = b"\x0a" + bytes([0x80 | (len(path) & 0x7F),
                                   0x80 | ((len(path) >> 7) & 0x7F),
                                   len(path) >> 14]) + path
        connection.send(stream, raw_h2.grpc_frame(message), end=True)
        status, text, _ = connection.finish(stream)
        connection.close()
        self.assertEqual(status, RESOURCE_EXHAUSTED, text)
        self.assertIn("65536", text)
        self.assert_normal_read_works(sidecar)

    def test_a_gzip_bomb_is_refused_before_it_is_inflated(self):
        sidecar = self.start()
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
        bomb = compressor.compress(b"\0" * (256 * MIB)) + compressor.flush()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call([("grpc-encoding", "gzip")])
        connection.send(stream, raw_h2.grpc_frame(bomb, compressed=True),
                        end=True)
        status, text, _ = connection.finish(stream)
        connection.close()
        self.assertEqual(status, UNIMPLEMENTED, text)
        self.assertIn("gzip", text)
        self.assert_peak_below(sidecar, BASELINE)  # 256 MiB never built
        self.report("gzip_bomb_256MiB", sidecar, "UNIMPLEMENTED")
        # The header alone is refused, even over a message that is not
        # compressed: the client learns to send identity.
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call([("grpc-encoding", "gzip")])
        connection.send(stream, raw_h2.grpc_frame(
            raw_h2.read_request(b"/plain")), end=True)
        status, text, _ = connection.finish(stream)
        connection.close()
        self.assertEqual(status, UNIMPLEMENTED, text)
        self.assertIn("gzip", text)
        self.assert_normal_read_works(sidecar)

    def test_answers_nobody_reads_are_capped_then_dropped(self):
        answer = 1000 * 1000
        cap = 4 * MIB
        calls = 24
        sidecar = self.start("--max_response_bytes=%d" % MIB,
                             "--max_buffered_bytes=%d" % cap,
                             "--send_timeout=2s", "--timeout=30s")
        # A client that opens no flow-control window: no answer can leave.
        connection = raw_h2.Connection(sidecar.door, window=0)
        streams = []
        for _ in range(calls):
            stream = connection.start_call()
            connection.send(stream, raw_h2.grpc_frame(
                raw_h2.read_request(b"/bytes/%d" % answer)), end=True)
            streams.append(stream)
        # Four answers fit under the cap, two of them for one connection on
        # the read doors (a connection's share is half of it). Every other
        # read is refused at once (no room for one more) or, if admitted
        # before, its answer dropped: RESOURCE_EXHAUSTED either way, sent as
        # headers, which need no window.
        fit = 4 if self.DOOR == "grpc" else 2
        def ended():
            if sum(connection.ended(s) for s in streams) >= calls - fit:
                return True
            connection.pump()
            return sum(connection.ended(s) for s in streams) >= calls - fit
        wait_for(ended, "all but the answers that fit to end", timeout=60)
        refused = [connection.finish(s) for s in streams if connection.ended(s)]
        held_streams = [s for s in streams if not connection.ended(s)]
        self.assertEqual(len(held_streams), fit, refused)
        for status, text, _ in refused:
            self.assertEqual(status, RESOURCE_EXHAUSTED, text)
            self.assertIn("max_buffered_bytes", text)
        held = metric(sidecar, "tailgate_buffered_response_bytes")
        self.assertLessEqual(held, cap)
        self.assertGreaterEqual(held, fit * answer)
        # After --send_timeout (plus the reaper's tick) the stalled calls are
        # cancelled and their answers dropped.
        wait_for(lambda: metric(sidecar, "tailgate_buffered_response_bytes")
                 == 0, "the held answers to be dropped")
        self.assertEqual(metric(sidecar, "tailgate_responses_dropped_total",
                                'reason="send_timeout"'), fit)
        for stream in held_streams:
            status, _, reset = connection.finish(stream)
            if self.DOOR != "grpc":
                self.assertEqual(reset, CANCEL, status)
            else:
                self.assertTrue(reset is not None or status == CANCELLED)
        connection.close()
        # Two copies of each held answer (message and serialized bytes).
        self.assert_peak_below(sidecar, BASELINE + 2 * cap + 16 * MIB)
        self.report("unread_answers_%dx1MB" % calls, sidecar,
                    "%d held then dropped, %d RESOURCE_EXHAUSTED" %
                    (fit, calls - fit))
        self.assert_normal_read_works(sidecar)

    def test_a_grpc_timeout_of_a_million_years_is_capped_not_expired(self):
        # 99 999 999 hours, the largest grpc-timeout there is: past what a
        # std::chrono time point holds once added to now.
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call([("grpc-timeout", "99999999H")])
        connection.send(stream, raw_h2.grpc_frame(raw_h2.read_request(b"/far")),
                        end=True)
        status, text, reset = connection.finish(stream)
        response = connection.responses[stream]["data"]
        connection.close()
        self.assertEqual((status, reset), (OK, None), text)
        message = tailgate_pb2.ReadResponse.FromString(response[5:])
        self.assertEqual(message.status, 200)
        self.assertEqual(message.body, b"r:/far")

    def test_a_newline_in_grpc_timeout_cannot_forge_a_log_line(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call(
            [("grpc-timeout", "1S\nts=2026-01-01T00:00:00Z level=error "
                              "event=forged")])
        connection.send(stream, raw_h2.grpc_frame(raw_h2.read_request(b"/x")),
                        end=True)
        status, _, reset = connection.finish(stream)
        connection.close()
        self.assert_normal_read_works(sidecar)
        sidecar.close()
        if self.DOOR == "grpc":
            # gRPC logs the value, escaped, and reads without the timeout.
            self.assertTrue(any("event=library_log" in line and
                                "forged" in line for line in sidecar.log),
                            sidecar.log)
        else:
            # nghttp2 resets a stream whose header value holds a newline.
            self.assertTrue(reset is not None or status not in (None, OK),
                            (status, reset))
        for line in sidecar.log:
            self.assertTrue(line.startswith("ts="), line)
            self.assertNotIn("event=forged", line.split("message=")[0])

    def test_a_path_that_is_not_utf8_does_not_flood_the_log(self):
        sidecar = self.start()
        connection = raw_h2.Connection(sidecar.door)
        for _ in range(100):
            stream = connection.start_call()
            connection.send(stream, raw_h2.grpc_frame(
                raw_h2.read_request(b"/\xff")), end=True)
            status, _, _ = connection.finish(stream)
            self.assertNotEqual(status, OK)
        connection.close()
        self.assert_normal_read_works(sidecar)
        sidecar.close()
        library = [line for line in sidecar.log if "event=library_log" in line]
        self.assertGreater(len(library), 0)
        self.assertLessEqual(len(library), 5)  # 5 per 10 s, then counted

    def test_descriptors_cannot_run_out_and_liveness_tells_the_truth(self):
        # 256 descriptors in all (soft = hard, so the sidecar cannot raise
        # it). The sidecar sets aside what replica connections need and
        # bounds each read door's connections below the rest (with
        # --read_listen, --listen and the read door share them).
        # UBSan checks an object's dynamic type the first time by writing
        # its vtable to a pipe; once this test has used up the descriptors
        # there is none for the pipe, and UBSan reports a valid object as
        # having an invalid vptr (type suppressions cannot match an
        # unknown type). The plain build runs this test.
        if "UBSAN_OPTIONS" in os.environ:
            self.skipTest("UBSan's vptr check needs a free descriptor")

        def limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        sidecar = self.start("--max_attempts=16", preexec_fn=limit)
        limits = next(line for line in sidecar.log
                      if "event=connection_limits" in line)
        door_limit = " read=" if self.DOOR == "read" else " listen="
        allowed = int(re.search(door_limit + r"(\d+)", limits).group(1))
        self.assertGreater(allowed, 16)
        self.assertLess(allowed, 256)
        self.assertEqual(self.healthz(sidecar), (200, "ok\n"))

        def connect_all(address, count):
            host, port = address.rsplit(":", 1)
            connections = []
            for _ in range(count):
                try:
                    connections.append(
                        socket.create_connection((host, int(port)), timeout=5))
                except OSError:
                    break
            return connections

        # 300 idle connections to the door: it holds at most `allowed`. The
        # gRPC front closes those over the limit at accept; the loop front
        # and the read door close the connection idle longest instead (after
        # its SETTINGS, a GOAWAY), so a new client always gets in. Either
        # way the peer sees end of stream.
        idle = connect_all(sidecar.door, 300)

        def ended(connection):
            connection.settimeout(0.1)
            try:
                while connection.recv(4096):
                    pass
                return True
            except (socket.timeout, OSError):
                return False
        closed = sum(1 for connection in idle if ended(connection))
        self.assertGreaterEqual(closed, 300 - allowed)
        event = ("event=connections_refused" if self.DOOR == "grpc"
                 else "event=idle_connections_closed")
        # The log is read on another thread: wait for the line.
        wait_for(lambda: any(event in line and
                             "listener=%s" % self.listener() in line
                             for line in sidecar.log),
                 "the closed connections to be logged")
        # 300 more to the metrics listener: its 16 are set aside in the
        # split too, so it keeps the 16 newest and closes the others, and
        # no accept() runs out of descriptors.
        scrapers = connect_all(sidecar.metrics, 300)
        self.assertEqual(len(scrapers), 300)
        metrics_limit = int(re.search(r" metrics=(\d+)", limits).group(1))
        self.assertEqual(metrics_limit, 16)
        wait_for(lambda: any("event=connections_closed_at_limit" in line and
                             "listener=metrics" in line
                             for line in sidecar.log),
                 "the metrics listener's closed connections to be logged")
        metrics_closed = sum(1 for connection in scrapers if ended(connection))
        self.assertGreaterEqual(metrics_closed, 300 - metrics_limit)
        idle += scrapers
        self.assertFalse(any("event=accept_failed" in line
                             for line in sidecar.log), "".join(sidecar.log))
        for connection in idle:
            connection.close()
        # Everything serves again, and liveness says so.
        def agree():
            status, text = self.healthz(sidecar)
            read = self.try_read(sidecar)
            agree.last = (status, text, read)
            return (status, read) == (200, 200)
        wait_for(agree, "liveness and a read to succeed again", timeout=20)
        print("attack=descriptors_256_limit_600_conns door=%s "
              "read_door_limit=%d closed_at_accept=%d healthz_after=200 "
              "read_after=200" % (self.DOOR, allowed, closed),
              file=sys.stderr)
        # No line per failed accept: the listeners rest and say so once.
        self.assertLess(len(sidecar.log), 40, "".join(sidecar.log))


class HostileClientTest(DoorAttacks, HostileTestCase):
    """--listen as served by default: the loop front."""

    DOOR = "loop"

    def test_every_memory_bound_at_once_stays_under_the_formula(self):
        # docs/OPERATIONS.md, the loop front: worst-case RSS = base
        # + 2 * max_grpc_memory_bytes + max_attempts * max_response_bytes
        # + max_buffered_bytes + 110 KiB * connections.
        quota, cap, body_limit, attempts = 16 * MIB, 4 * MIB, MIB, 8
        idle_connections, holders = 200, 8
        sidecar = self.start(
            "--max_grpc_memory_bytes=%d" % quota,
            "--max_buffered_bytes=%d" % cap,
            "--max_response_bytes=%d" % body_limit,
            "--max_attempts=%d" % attempts, "--send_timeout=5s",
            "--timeout=30s")
        base = current_rss(sidecar)
        connections = idle_connections + holders + 1
        formula = (base + 2 * quota + attempts * body_limit + cap +
                   connections * 110 * 1024)
        bound = formula + FORMULA_SLACK
        opened = [raw_h2.Connection(sidecar.door)
                  for _ in range(idle_connections)]
        # Answers nobody reads fill the buffer...
        stalled = raw_h2.Connection(sidecar.door, window=0)
        for _ in range(12):
            stream = stalled.start_call()
            stalled.send(stream, raw_h2.grpc_frame(
                raw_h2.read_request(b"/bytes/1000000")), end=True)
        # (two of them: a connection's share is half of the buffer)...
        wait_for(lambda: metric(sidecar, "tailgate_buffered_response_bytes")
                 >= 2 * 1000 * 1000, "answers to be held")
        # ...while requests that never end fill the door's request bytes,
        # each connection up to its share (an eighth).
        refused = 0
        for _ in range(holders):
            holder = raw_h2.Connection(sidecar.door)
            for _ in range(40):
                stream = holder.start_call()
                try:
                    holder.send(stream, raw_h2.grpc_frame(
                        b"", declared_length=64 * 1024 - 1)[:5])
                    holder.send(stream, b"\0" * (60 * 1024))
                except h2.exceptions.StreamClosedError:
                    pass  # refused while it was being sent
            holder.pump()
            refused += sum(1 for r in holder.responses.values()
                           if r["headers"] or r["reset"])
            opened.append(holder)
        peak = peak_rss(sidecar)
        for connection in opened + [stalled]:
            connection.close()
        print("attack=all_at_once door=loop base_mib=%.1f formula_mib=%.1f "
              "bound_mib=%.1f peak_rss_mib=%.1f refused_streams=%d" %
              (base / MIB, formula / MIB, bound / MIB, peak / MIB, refused),
              file=sys.stderr)
        self.assert_peak_below(sidecar, bound)
        self.assertGreater(refused, 0)  # the shares were reached
        self.assert_normal_read_works(sidecar)


class GrpcFrontAttacksTest(DoorAttacks, HostileTestCase):
    """--listen served by the gRPC library alone (--listen_front=grpc), and
    what only gRPC's own HTTP/2 needs bounded: its memory quota."""

    DOOR = "grpc"

    def test_a_length_prefix_of_2_gib_is_cut_off_by_the_memory_quota(self):
        sidecar = self.start("--max_grpc_memory_bytes=%d" % (16 * MIB))
        connection = raw_h2.Connection(sidecar.door)
        stream = connection.start_call()
        # Announce 2 GiB, then stream 256 MiB of it.
        connection.send(stream, raw_h2.grpc_frame(b"", declared_length=2**31 - 1))
        connection.send(stream, b"\0" * (256 * MIB))
        status, _, reset = connection.finish(stream)
        connection.close()
        # gRPC resets the stream holding the memory (ENHANCE_YOUR_CALM).
        self.assertEqual(reset, 11, (status, reset))
        self.assert_peak_below(sidecar, BASELINE + 2 * 16 * MIB)
        self.report("length_prefix_2GiB", sidecar, "RST_STREAM ENHANCE_YOUR_CALM")
        self.assert_normal_read_works(sidecar)

    def test_every_memory_bound_at_once_stays_under_the_formula(self):
        # docs/OPERATIONS.md: worst-case RSS = base + max_grpc_memory_bytes
        # + max_attempts * max_response_bytes + 2 * max_buffered_bytes.
        quota, cap, body_limit, attempts = 16 * MIB, 4 * MIB, MIB, 8
        sidecar = self.start(
            "--max_grpc_memory_bytes=%d" % quota,
            "--max_buffered_bytes=%d" % cap,
            "--max_response_bytes=%d" % body_limit,
            "--max_attempts=%d" % attempts, "--send_timeout=5s",
            "--timeout=30s")
        base = current_rss(sidecar)
        formula = base + quota + attempts * body_limit + 2 * cap
        bound = formula + FORMULA_SLACK
        # Answers nobody reads fill the buffer...
        stalled = raw_h2.Connection(sidecar.door, window=0)
        for _ in range(12):
            stream = stalled.start_call()
            stalled.send(stream, raw_h2.grpc_frame(
                raw_h2.read_request(b"/bytes/1000000")), end=True)
        wait_for(lambda: metric(sidecar, "tailgate_buffered_response_bytes")
                 >= 3 * 1000 * 1000, "answers to be held")
        # ...while another client pushes gRPC's memory to its quota.
        flood = raw_h2.Connection(sidecar.door)
        stream = flood.start_call()
        flood.send(stream, raw_h2.grpc_frame(b"", declared_length=2**31 - 1))
        flood.send(stream, b"\0" * (128 * MIB))
        flood.finish(stream)
        flood.close()
        peak = peak_rss(sidecar)
        stalled.close()
        print("attack=all_at_once base_mib=%.1f formula_mib=%.1f "
              "bound_mib=%.1f peak_rss_mib=%.1f" %
              (base / MIB, formula / MIB, bound / MIB, peak / MIB),
              file=sys.stderr)
        self.assert_peak_below(sidecar, bound)
        if not SANITIZED:
            self.assertGreater(peak, base + cap)  # the bounds were reached
        self.assert_normal_read_works(sidecar)


class ReadDoorAttacksTest(DoorAttacks, HostileTestCase):
    """The read door (--read_listen), which speaks HTTP/2 itself."""

    DOOR = "read"


if __name__ == "__main__":
    unittest.main()
