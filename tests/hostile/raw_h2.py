"""A raw HTTP/2 gRPC caller for hostile-client tests: it sends what a
well-behaved gRPC library never would (header values with newlines, length
prefixes that lie, compressed bombs, endless CONTINUATION frames, windows
that never open) and reports what came back."""

import socket
import struct

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

READ_METHOD = "/tailgate.v1.HedgedRead/Read"


def grpc_frame(message, compressed=False, declared_length=None):
    """The 5-byte gRPC length prefix and `message`. `declared_length`
    overrides the length the prefix announces."""
    length = len(message) if declared_length is None else declared_length
    return struct.pack(">BI", 1 if compressed else 0, length) + message


def read_request(path):
    """A serialized ReadRequest{path}: field 1, length-delimited; `path` is
    bytes, so it may be anything, valid UTF-8 or not."""
    assert len(path) < 128
    return b"\x0a" + bytes([len(path)]) + path


READ_MANY_METHOD = "/tailgate.v1.HedgedRead/ReadMany"


def _varint(value):
    out = b""
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def read_many_request(paths, max_in_flight=0):
    """A serialized ReadManyRequest{reads: ReadRequest{path} each,
    max_in_flight}."""
    out = b""
    for path in paths:
        read = read_request(path)
        out += b"\x0a" + _varint(len(read)) + read
    if max_in_flight:
        out += b"\x10" + _varint(max_in_flight)
    return out


class Connection:
    """One client connection to host:port. Header validation is off on
    purpose: the point is to send what a library would refuse to."""

    def __init__(self, address, window=65535, timeout=10.0,
                 connection_window=None, receive_buffer=None):
        """`window`: each stream's flow-control window; `connection_window`:
        the connection's, if not the initial 65535; `receive_buffer`: the
        socket's SO_RCVBUF, set before connecting (so that a client that
        does not read soon stops taking bytes)."""
        host, port = address.rsplit(":", 1)
        if receive_buffer is None:
            self.sock = socket.create_connection((host, int(port)),
                                                 timeout=timeout)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                 receive_buffer)
            self.sock.settimeout(timeout)
            self.sock.connect((host, int(port)))
        config = h2.config.H2Configuration(
            client_side=True, header_encoding=None,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
            validate_inbound_headers=False)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.local_settings = h2.settings.Settings(
            client=True, initial_values={
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
        self.h2.initiate_connection()
        if connection_window is not None:
            self.h2.increment_flow_control_window(connection_window - 65535)
        self.flush()
        self.responses = {}  # stream id -> dict(headers, data, trailers, reset)

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def start_call(self, extra_headers=(), method=READ_METHOD,
                   authority="sidecar"):
        stream = self.h2.get_next_available_stream_id()
        headers = [(b":method", b"POST"), (b":scheme", b"http"),
                   (b":path", method.encode()),
                   (b":authority", authority.encode()),
                   (b"content-type", b"application/grpc"),
                   (b"te", b"trailers")]
        headers += [(k.encode() if isinstance(k, str) else k,
                     v.encode() if isinstance(v, str) else v)
                    for k, v in extra_headers]
        self.h2.send_headers(stream, headers)
        self.responses[stream] = {"headers": None, "data": b"",
                                  "trailers": None, "reset": None}
        self.flush()
        return stream

    def send(self, stream, data, end=False):
        """Sends `data` as DATA frames, waiting for window as needed."""
        view = memoryview(data)
        while view:
            window = min(self.h2.local_flow_control_window(stream),
                         self.h2.max_outbound_frame_size)
            if window <= 0:
                if not self.pump(stream):
                    return False
                continue
            chunk, view = view[:window], view[window:]
            self.h2.send_data(stream, bytes(chunk))
            self.flush()
        if end:
            self.h2.end_stream(stream)
            self.flush()
        return True

    def reset(self, stream, error_code=8):
        """Sends RST_STREAM (CANCEL unless told) for `stream`."""
        self.h2.reset_stream(stream, error_code)
        self.flush()

    def pump(self, stream=None):
        """Reads once from the socket and handles events. False when the
        connection or `stream` has ended."""
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, socket.timeout, OSError):
            return False
        if not data:
            return False
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            return False
        for event in events:
            response = self.responses.get(getattr(event, "stream_id", None))
            if isinstance(event, h2.events.ResponseReceived):
                response["headers"] = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived):
                response["data"] += event.data
                self.h2.acknowledge_received_data(
                    event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                response["trailers"] = dict(event.headers)
            elif isinstance(event, h2.events.StreamReset):
                response["reset"] = event.error_code
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.flush()
                return False
        self.flush()
        return stream is None or not self.ended(stream)

    def finish(self, stream):
        """Waits for `stream`'s end: (grpc-status or None, message, reset)."""
        while not self.ended(stream) and self.pump(stream):
            pass
        response = self.responses[stream]
        trailers = response["trailers"] or response["headers"] or {}
        status = trailers.get(b"grpc-status")
        return (int(status) if status is not None else None,
                trailers.get(b"grpc-message", b"").decode("latin-1"),
                response["reset"])

    def ended(self, stream):
        done = self.responses[stream]
        return (done["trailers"] is not None or done["reset"] is not None or
                bool(done["headers"] and b"grpc-status" in done["headers"]))

    def close(self):
        try:
            self.h2.close_connection()
            self.flush()
        except OSError:
            pass
        self.sock.close()


def _hpack_integer(value, prefix_bits, first_byte_flags=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte_flags | value])
    out = [first_byte_flags | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _frame(frame_type, flags, stream, payload):
    return (struct.pack(">I", len(payload))[1:] + bytes([frame_type, flags]) +
            struct.pack(">I", stream) + payload)


# Frames by hand, for attackers that must go faster than python-h2 or send
# what it would not: the bytes are built once and sent many times.

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, GOAWAY, WINDOW_UPDATE = (
    0x0, 0x1, 0x2, 0x3, 0x4, 0x7, 0x8)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
MAX_WINDOW = 2**31 - 1
frame = _frame


def client_preface(settings=(), connection_window=None):
    """What a client sends first: the preface, its SETTINGS (`settings`:
    (identifier, value) pairs), a WINDOW_UPDATE opening the connection's
    window to `connection_window` if given, and the ACK of the server's
    SETTINGS (which the server sends as soon as it accepts)."""
    out = PREFACE + frame(SETTINGS, 0, 0, b"".join(
        struct.pack(">HI", key, value) for key, value in settings))
    if connection_window is not None:
        out += frame(WINDOW_UPDATE, 0, 0,
                     struct.pack(">I", connection_window - 65535))
    return out + frame(SETTINGS, ACK, 0, b"")


def literal_header_block(headers):
    """An HPACK block of (name, value) byte pairs, each a literal without
    indexing: it leaves the decoder's dynamic table alone, so the same
    bytes open a stream on any connection, any number of times."""
    out = b""
    for name, value in headers:
        out += (b"\x00" + _hpack_integer(len(name), 7) + name +
                _hpack_integer(len(value), 7) + value)
    return out


def call_headers(method=READ_METHOD):
    """The request headers of a gRPC call, as bytes pairs."""
    return [(b":method", b"POST"), (b":scheme", b"http"),
            (b":path", method.encode()), (b":authority", b"sidecar"),
            (b"content-type", b"application/grpc"), (b"te", b"trailers")]


MAX_FRAME = 16384  # SETTINGS_MAX_FRAME_SIZE's initial value


def call_frames(stream, message, method=READ_METHOD, end=True):
    """HEADERS for a call on `stream`, then its one message in DATA frames
    of at most MAX_FRAME bytes (the last ending the request if `end`)."""
    data = grpc_frame(message)
    chunks = [data[i:i + MAX_FRAME] for i in range(0, len(data), MAX_FRAME)]
    out = frame(HEADERS, END_HEADERS, stream,
                literal_header_block(call_headers(method)))
    for number, chunk in enumerate(chunks):
        last = number == len(chunks) - 1
        out += frame(DATA, END_STREAM if end and last else 0, stream, chunk)
    return out


class Frame:
    """A frame's header, and its payload unless it is DATA (counted, not
    kept)."""

    __slots__ = ("type", "flags", "stream", "length", "payload")

    def __init__(self, frame_type, flags, stream, length, payload):
        self.type, self.flags, self.stream = frame_type, flags, stream
        self.length, self.payload = length, payload


class FrameScanner:
    """Splits what a server sends into frames, without HPACK or flow
    control: enough to see a stream end, a reset or a GOAWAY in answers of
    any size at the speed of the socket."""

    def __init__(self):
        self.buffer = bytearray()
        self.skip = 0  # bytes of a DATA payload still to come

    def feed(self, data):
        frames = []
        view = memoryview(data)
        if self.skip:
            taken = min(self.skip, len(view))
            self.skip -= taken
            view = view[taken:]
        self.buffer += view
        offset = 0
        while len(self.buffer) - offset >= 9:
            header = self.buffer[offset:offset + 9]
            length = int.from_bytes(header[:3], "big")
            frame_type, flags = header[3], header[4]
            stream = int.from_bytes(header[5:9], "big") & 0x7FFFFFFF
            if frame_type == DATA:
                frames.append(Frame(frame_type, flags, stream, length, None))
                available = len(self.buffer) - offset - 9
                if available < length:
                    self.skip = length - available
                    offset = len(self.buffer)
                    break
                offset += 9 + length
                continue
            if len(self.buffer) - offset < 9 + length:
                break
            frames.append(Frame(frame_type, flags, stream, length,
                                bytes(self.buffer[offset + 9:
                                                  offset + 9 + length])))
            offset += 9 + length
        del self.buffer[:offset]
        return frames


def continuation_flood(connection, total_bytes, chunk=16384):
    """Opens a stream with a HEADERS frame that never ends: one literal
    header whose value announces `total_bytes`, sent in CONTINUATION frames
    (none with END_HEADERS). Returns the bytes sent before the sidecar
    closed the connection (all of them if it never did)."""
    import hpack
    stream = connection.h2.get_next_available_stream_id()
    block = hpack.Encoder().encode([
        (b":method", b"POST"), (b":scheme", b"http"),
        (b":path", READ_METHOD.encode()), (b":authority", b"sidecar"),
        (b"content-type", b"application/grpc")])
    block += b"\x00" + _hpack_integer(7, 7) + b"x-flood"
    block += _hpack_integer(total_bytes, 7)
    sent = 0
    try:
        connection.sock.sendall(_frame(0x1, 0x0, stream, block))
        filler = b"a" * chunk
        while sent < total_bytes:
            connection.sock.sendall(_frame(0x9, 0x0, stream, filler))
            sent += chunk
    except OSError:
        pass
    return sent
