// An example Tailgate client in Java: hedged reads through the sidecar's
// HedgedRead service and its counters from the Admin service, on stubs
// generated from proto/tailgate/v1/tailgate.proto (java_package
// "tailgate.v1"; client/README.md shows the protoc command).
//
//   java -cp CLASSPATH tailgate.example.TailgateExample \
//       --target=127.0.0.1:8080 --admin=127.0.0.1:9090
//
// It makes a fixed series of calls, each printing one line to stdout:
//   read call=NAME status=N body="..." attempts=N hedged=B hedge_won=B
//       replica=URL latency_ms=N        a call that returned OK
//   error call=NAME code=CODE message="..." elapsed_ms=N
//                                       a call that failed with a gRPC code
//   stats requests=N ... replicas=URL=STATE,...
//                                       Admin.GetStats
//   item call=many index=N status=N body="..." attempts=N ...
//   item call=many index=N code=CODE message="..."
//                                       one read of a ReadMany, as it arrives
//   batch call=many code=CODE items=N elapsed_ms=N
//                                       the ReadMany call's own status
// The paths it reads are those of the loopback test replicas
// (client/testing/sidecar_harness.py): any path echoes "NAME:PATH",
// /status/503 answers 503, /stall outlasts the deadlines set here. The exit
// code is 0 when every call ran (whatever it returned), 1 on a failure of
// the example itself, 2 on a usage error.

package tailgate.example;

import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import tailgate.v1.AdminGrpc;
import tailgate.v1.CircuitState;
import tailgate.v1.GetStatsRequest;
import tailgate.v1.GetStatsResponse;
import tailgate.v1.Header;
import tailgate.v1.HedgeOptions;
import tailgate.v1.HedgedReadGrpc;
import tailgate.v1.Method;
import tailgate.v1.ReadManyItem;
import tailgate.v1.ReadManyRequest;
import tailgate.v1.ReadRequest;
import tailgate.v1.ReadResponse;
import tailgate.v1.ReplicaStats;

/** Calls a Tailgate sidecar and prints one line per call. */
public final class TailgateExample {
  // gRPC's default receive limit (4 MiB) is below the sidecar's default
  // --max_response_bytes plus headers; this covers its 64 MiB hard cap.
  private static final int MAX_RECEIVE_MESSAGE_BYTES = 80 << 20;
  // Every call gets a deadline; it bounds the whole read, hedge included.
  private static final long DEADLINE_MS = 5000;
  // The deadline of the call that reads /stall.
  private static final long SHORT_DEADLINE_MS = 200;
  // Per-read hedge delay of the hedged reads (HedgeOptions.delay).
  private static final long HEDGE_DELAY_MS = 20;
  // Reads of the hedged call at most: the sidecar rotates the primary over
  // its replicas, so with two replicas one of any two reads starts on each.
  private static final int HEDGED_READS = 4;
  // How long to wait for the sidecar's in-flight count to reach a value.
  private static final long SETTLE_MS = 10000;

  private final HedgedReadGrpc.HedgedReadBlockingStub reads;
  private final HedgedReadGrpc.HedgedReadFutureStub futureReads;
  private final AdminGrpc.AdminBlockingStub admin;

  private TailgateExample(ManagedChannel readChannel, ManagedChannel adminChannel) {
    reads = HedgedReadGrpc.newBlockingStub(readChannel);
    futureReads = HedgedReadGrpc.newFutureStub(readChannel);
    admin = AdminGrpc.newBlockingStub(adminChannel);
  }

  public static void main(String[] args) throws InterruptedException {
    String target = null;
    String adminTarget = null;
    for (String arg : args) {
      if (arg.startsWith("--target=")) {
        target = arg.substring("--target=".length());
      } else if (arg.startsWith("--admin=")) {
        adminTarget = arg.substring("--admin=".length());
      } else {
        usage("unknown argument: " + arg);
      }
    }
    if (target == null || target.isEmpty() || adminTarget == null || adminTarget.isEmpty()) {
      usage("--target and --admin are required");
    }

    ManagedChannel readChannel = plaintextChannel(target);
    ManagedChannel adminChannel = plaintextChannel(adminTarget);
    int exitCode = 0;
    try {
      new TailgateExample(readChannel, adminChannel).run();
    } catch (StatusRuntimeException | IllegalStateException e) {
      System.err.println("TailgateExample: " + e);
      exitCode = 1;
    } finally {
      shutDown(readChannel);
      shutDown(adminChannel);
    }
    System.exit(exitCode);
  }

  private static void usage(String problem) {
    System.err.println(
        "TailgateExample: " + problem + " (usage: --target=HOST:PORT --admin=HOST:PORT)");
    System.exit(2);
  }

  /** A plaintext HTTP/2 channel; it connects lazily, on the first call. */
  private static ManagedChannel plaintextChannel(String target) {
    return NettyChannelBuilder.forTarget(target)
        .usePlaintext()
        .maxInboundMessageSize(MAX_RECEIVE_MESSAGE_BYTES)
        .build();
  }

  /** Lets calls in progress finish for a while, then cancels them. */
  private static void shutDown(ManagedChannel channel) throws InterruptedException {
    channel.shutdown();
    if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
      channel.shutdownNow();
      channel.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private void run() throws InterruptedException {
    // A plain GET, with a request header.
    read("plain", get("/hello").addHeaders(header("Accept", "text/plain")).build());

    // A hedged read: a read whose primary is slow is hedged to the other
    // replica after HEDGE_DELAY_MS, and the hedge answers. Reads until one
    // comes back hedge_won (the rotation makes that the first or second).
    ReadRequest hedged =
        get("/hedge-me")
            .setHedge(HedgeOptions.newBuilder().setDelay(millis(HEDGE_DELAY_MS)))
            .build();
    for (int i = 0; i < HEDGED_READS; i++) {
      ReadResponse response = read("hedged", hedged);
      if (response != null && response.getTrace().getHedgeWon()) {
        break;
      }
    }

    // HEAD: the status and headers, no body.
    read("head", get("/head").setMethod(Method.METHOD_HEAD).build());

    // An HTTP error is an answer: OK with status=503, and no hedge "wins".
    read("status-503", get("/status/503").build());

    // gRPC errors: an unknown replica set, and a deadline that passes.
    read("missing-upstream", get("/x").setUpstream("nowhere").build());
    read("deadline", get("/stall").build(), SHORT_DEADLINE_MS);

    // Cancellation: a read of /stall started in a cancellable Context and
    // cancelled once the sidecar has admitted it.
    awaitInFlight(0);
    cancelledRead("cancel", get("/stall").build());

    // The counters, once every read above has ended on the sidecar too.
    awaitInFlight(0);
    printStats(admin.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
        .getStats(GetStatsRequest.getDefaultInstance()));

    // A batch as one ReadMany call: two plain reads, an HTTP 404 (an
    // answer) and an unknown upstream (that read's own NOT_FOUND, not the
    // call's), at most two running at once.
    readMany(
        "many",
        ReadManyRequest.newBuilder()
            .addReads(get("/many/0"))
            .addReads(get("/missing"))
            .addReads(get("/many/2").setUpstream("nowhere"))
            .addReads(get("/many/3"))
            .setMaxInFlight(2)
            .build());
  }

  /**
   * One ReadMany call: prints each item as the stream delivers it (in
   * completion order), then the call's status. The deadline bounds the
   * whole batch; cancelling the call's Context (as cancelledRead does)
   * would cancel the reads still running.
   */
  private void readMany(String call, ReadManyRequest request) {
    long start = System.nanoTime();
    int items = 0;
    Status status = Status.OK;
    try {
      Iterator<ReadManyItem> stream =
          reads.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).readMany(request);
      while (stream.hasNext()) {
        printItem(call, stream.next());
        items++;
      }
    } catch (StatusRuntimeException e) {
      status = e.getStatus();
    }
    System.out.printf(
        "batch call=%s code=%s items=%d elapsed_ms=%d%n",
        call, status.getCode(), items,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  private static void printItem(String call, ReadManyItem item) {
    if (item.getCode() != 0) {
      System.out.printf(
          "item call=%s index=%d code=%s message=%s%n",
          call,
          item.getIndex(),
          Status.fromCodeValue(item.getCode()).getCode(),
          quote(ByteString.copyFromUtf8(item.getMessage())));
      return;
    }
    ReadResponse response = item.getResponse();
    Duration latency = response.getTrace().getLatency();
    System.out.printf(
        "item call=%s index=%d status=%d body=%s attempts=%d hedged=%b hedge_won=%b"
            + " replica=%s latency_ms=%d%n",
        call,
        item.getIndex(),
        response.getStatus(),
        quote(response.getBody()),
        response.getTrace().getAttempts(),
        response.getTrace().getHedged(),
        response.getTrace().getHedgeWon(),
        response.getTrace().getReplica(),
        latency.getSeconds() * 1000 + latency.getNanos() / 1_000_000);
  }

  private static ReadRequest.Builder get(String path) {
    return ReadRequest.newBuilder().setPath(path).setMethod(Method.METHOD_GET);
  }

  private static Header header(String name, String value) {
    return Header.newBuilder().setName(name).setValue(value).build();
  }

  private static Duration millis(long ms) {
    return Duration.newBuilder()
        .setSeconds(ms / 1000)
        .setNanos((int) (ms % 1000) * 1_000_000)
        .build();
  }

  private ReadResponse read(String call, ReadRequest request) {
    return read(call, request, DEADLINE_MS);
  }

  /** One Read with a deadline; prints its line, returns null on an error. */
  private ReadResponse read(String call, ReadRequest request, long deadlineMs) {
    long start = System.nanoTime();
    try {
      ReadResponse response =
          reads.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).read(request);
      printResponse(call, response);
      return response;
    } catch (StatusRuntimeException e) {
      printError(call, e.getStatus(), start);
      return null;
    }
  }

  /**
   * Starts a Read inside a cancellable Context, waits until the sidecar
   * counts it in flight, then cancels the Context: the call fails with
   * CANCELLED and the sidecar cancels the read's attempts.
   */
  private void cancelledRead(String call, ReadRequest request) throws InterruptedException {
    long start = System.nanoTime();
    Context.CancellableContext context = Context.current().withCancellation();
    Future<ReadResponse> future;
    try {
      future = context.call(
          () -> futureReads.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).read(request));
    } catch (Exception e) {
      throw new IllegalStateException("starting the read", e);
    }
    try {
      awaitInFlight(1);
    } finally {
      context.cancel(null);
    }
    try {
      printResponse(call, future.get());
    } catch (ExecutionException e) {
      printError(call, Status.fromThrowable(e.getCause()), start);
    }
  }

  /** Polls Admin.GetStats until `in_flight` is `want`. */
  private void awaitInFlight(long want) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
    long inFlight;
    while ((inFlight = stats().getInFlight()) != want) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "sidecar in_flight is " + inFlight + ", not " + want + ", after " + SETTLE_MS + "ms");
      }
      Thread.sleep(5);
    }
  }

  private GetStatsResponse stats() {
    return admin.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
        .getStats(GetStatsRequest.getDefaultInstance());
  }

  private static void printResponse(String call, ReadResponse response) {
    Duration latency = response.getTrace().getLatency();
    System.out.printf(
        "read call=%s status=%d body=%s attempts=%d hedged=%b hedge_won=%b replica=%s"
            + " latency_ms=%d%n",
        call,
        response.getStatus(),
        quote(response.getBody()),
        response.getTrace().getAttempts(),
        response.getTrace().getHedged(),
        response.getTrace().getHedgeWon(),
        response.getTrace().getReplica(),
        latency.getSeconds() * 1000 + latency.getNanos() / 1_000_000);
  }

  private static void printError(String call, Status status, long startNanos) {
    System.out.printf(
        "error call=%s code=%s message=%s elapsed_ms=%d%n",
        call,
        status.getCode(),
        quote(ByteString.copyFromUtf8(String.valueOf(status.getDescription()))),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
  }

  private static void printStats(GetStatsResponse stats) {
    List<String> replicas = new ArrayList<>();
    for (ReplicaStats replica : stats.getReplicasList()) {
      replicas.add(replica.getUrl() + "=" + circuitName(replica.getCircuitValue()));
    }
    System.out.printf(
        "stats requests=%d hedges=%d hedge_wins=%d timeouts=%d cancelled=%d hedges_skipped=%d"
            + " in_flight=%d replicas=%s%n",
        stats.getRequests(),
        stats.getHedges(),
        stats.getHedgeWins(),
        stats.getTimeouts(),
        stats.getCancelled(),
        stats.getHedgesSkipped(),
        stats.getInFlight(),
        String.join(",", replicas));
  }

  /**
   * The circuit state by number. CircuitState has aliases (the older
   * short names come first, so getCircuit() returns CIRCUIT_CLOSED and the
   * like); the CIRCUIT_STATE_*_VALUE constants are the current names.
   */
  private static String circuitName(int value) {
    switch (value) {
      case CircuitState.CIRCUIT_STATE_CLOSED_VALUE:
        return "closed";
      case CircuitState.CIRCUIT_STATE_OPEN_VALUE:
        return "open";
      case CircuitState.CIRCUIT_STATE_HALF_OPEN_VALUE:
        return "half-open";
      default:
        return "unspecified(" + value + ")";
    }
  }

  /** `bytes` as a double-quoted ASCII string: \", \\ and \xNN escapes. */
  private static String quote(ByteString bytes) {
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < bytes.size(); i++) {
      int b = bytes.byteAt(i) & 0xff;
      if (b == '"' || b == '\\') {
        out.append('\\').append((char) b);
      } else if (b >= 0x20 && b < 0x7f) {
        out.append((char) b);
      } else {
        out.append(String.format("\\x%02x", b));
      }
    }
    return out.append('"').toString();
  }
}
