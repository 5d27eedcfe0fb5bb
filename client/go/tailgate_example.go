// Command tailgate_example calls a running Tailgate sidecar from Go, one call
// of each kind the API offers, and prints one line per call:
//
//	read call=NAME status=N body="..." attempts=N hedged=B hedge_won=B replica=URL latency_ms=F
//	error call=NAME code=CODE elapsed_ms=F message="..."
//	cancel code=CODE elapsed_ms=F admitted=B cancelled_before=N cancelled_after=N
//	stats requests=N hedges=N hedge_wins=N cancelled=N hedges_skipped=N timeouts=N replicas=URL=STATE,...
//	health listener=read|admin service="..." status=STATUS
//	reflection api=v1|v1alpha services=NAME,...
//	item call=many index=N status=N body="..." attempts=N hedged=B hedge_won=B replica=URL latency_ms=F
//	item call=many index=N code=CODE message="..."
//	batch call=many code=CODE items=N elapsed_ms=F
//
// CODE is the canonical gRPC name (NOT_FOUND, CANCELLED, ...). Strings are
// quoted Go-style. The calls expect the sidecar's replicas to serve the paths
// of client/testing/sidecar_harness.py (/stall, /status/NNN, /big) and its
// --max_response_bytes to be below the size of /big. The command exits 0
// once every call was made, whatever the calls returned; 2 on bad flags or
// when a target cannot be dialled.
//
// Stubs: generated from proto/tailgate/v1/tailgate.proto by protoc-gen-go
// and protoc-gen-go-grpc into the import path named by its go_package.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	tailgatev1 "tailgate/gen/go/tailgate/v1"
)

// maxReceiveBytes is above the sidecar's hard cap on --max_response_bytes
// (64 MiB) plus headers; gRPC's default of 4 MiB is not.
const maxReceiveBytes = 80 << 20

var (
	target     = flag.String("target", "127.0.0.1:8080", "the sidecar's --listen address: HOST:PORT or unix:/PATH")
	admin      = flag.String("admin", "127.0.0.1:9090", "the sidecar's --admin address")
	unixTarget = flag.String("unix_target", "", "if set, one more read through this sidecar address (unix:/PATH)")
	deadline   = flag.Duration("deadline", 5*time.Second, "deadline of each call")
	hedgeReads = flag.Int("hedge_reads", 4, "reads of /hedge-me; rotation makes a slow replica the primary of some")
	hedgeDelay = flag.Duration("hedge_delay", 0, "per-read hedge delay for the /hedge-me reads; 0 keeps the sidecar's")
)

func main() {
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "tailgate_example: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	reads := dial(*target)
	defer reads.Close()
	admins := dial(*admin)
	defer admins.Close()
	e := example{
		read:  tailgatev1.NewHedgedReadClient(reads),
		admin: tailgatev1.NewAdminClient(admins),
	}

	e.call("plain", &tailgatev1.ReadRequest{Path: "/hello"})
	for i := 0; i < *hedgeReads; i++ {
		request := &tailgatev1.ReadRequest{Path: "/hedge-me"}
		if *hedgeDelay > 0 {
			request.Hedge = &tailgatev1.HedgeOptions{Delay: durationpb.New(*hedgeDelay)}
		}
		e.call("hedged", request)
	}
	e.call("head", &tailgatev1.ReadRequest{Path: "/head", Method: tailgatev1.Method_METHOD_HEAD})
	e.call("http-404", &tailgatev1.ReadRequest{Path: "/missing"})
	e.call("http-503", &tailgatev1.ReadRequest{Path: "/status/503"})
	e.call("invalid-argument", &tailgatev1.ReadRequest{
		Path:    "/x",
		Headers: []*tailgatev1.Header{{Name: "Host", Value: "elsewhere"}},
	})
	e.call("not-found", &tailgatev1.ReadRequest{Path: "/x", Upstream: "nowhere"})
	e.call("resource-exhausted", &tailgatev1.ReadRequest{Path: "/big"})
	// Before the deadline call, so that no other read is ending on the
	// sidecar while the cancellation is counted.
	e.cancel()
	e.callWithin("deadline-exceeded", &tailgatev1.ReadRequest{Path: "/stall"}, 200*time.Millisecond)
	e.stats()
	health(reads, "read", "")
	health(admins, "admin", "tailgate.v1.Admin")
	reflection(reads)
	e.readMany()
	if *unixTarget != "" {
		unix := dial(*unixTarget)
		defer unix.Close()
		e.read = tailgatev1.NewHedgedReadClient(unix)
		e.call("unix", &tailgatev1.ReadRequest{Path: "/over-unix"})
	}
}

// dial connects lazily: the first call waits for the connection, within
// its deadline. grpc-go 1.33 dials "unix:/path" as a Unix socket. Newer
// grpc-go spells WithInsecure as
// WithTransportCredentials(insecure.NewCredentials()).
func dial(address string) *grpc.ClientConn {
	conn, err := grpc.Dial(address, grpc.WithInsecure(),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReceiveBytes)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "tailgate_example: dial %s: %v\n", address, err)
		os.Exit(2)
	}
	return conn
}

type example struct {
	read  tailgatev1.HedgedReadClient
	admin tailgatev1.AdminClient
}

// call makes one read within --deadline and prints its line.
func (e *example) call(name string, request *tailgatev1.ReadRequest) {
	e.callWithin(name, request, *deadline)
}

func (e *example) callWithin(name string, request *tailgatev1.ReadRequest, within time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	response, err := e.read.Read(ctx, request)
	if err != nil {
		printError(name, err, time.Since(start))
		return
	}
	trace := response.GetTrace()
	fmt.Printf("read call=%s status=%d body=%s attempts=%d hedged=%t hedge_won=%t replica=%s latency_ms=%.1f\n",
		name, response.GetStatus(), strconv.Quote(string(response.GetBody())),
		trace.GetAttempts(), trace.GetHedged(), trace.GetHedgeWon(), trace.GetReplica(),
		milliseconds(trace.GetLatency().AsDuration()))
}

// printError prints a failed call: the gRPC code by its canonical name, the
// call's duration, and the message (the sidecar's, or grpc-go's for errors
// raised on the client side such as a passed deadline).
func printError(name string, err error, elapsed time.Duration) {
	s := status.Convert(err)
	fmt.Printf("error call=%s code=%s elapsed_ms=%.1f message=%s\n", name, codeName(s.Code()),
		milliseconds(elapsed), strconv.Quote(s.Message()))
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// codeName is the canonical name of a gRPC code: DEADLINE_EXCEEDED where
// codes.Code.String says DeadlineExceeded.
func codeName(c codes.Code) string {
	if name, ok := code.Code_name[int32(c)]; ok {
		return name
	}
	return c.String()
}

// cancel starts a read of /stall, cancels it once the sidecar has admitted
// it (its `requests` counter rose), and waits for the sidecar to count the
// cancellation (`cancelled` rose). The read itself fails at once with
// CANCELLED, on the client side; the sidecar learns of it from the stream
// reset and drops the upstream attempts.
func (e *example) cancel() {
	before, err := e.getStats()
	if err != nil {
		printError("cancel", err, 0)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := e.read.Read(ctx, &tailgatev1.ReadRequest{Path: "/stall"})
		done <- err
	}()
	admitted := e.waitForStats(func(s *tailgatev1.GetStatsResponse) bool {
		return s.GetRequests() > before.GetRequests()
	})
	cancel()
	err = <-done
	elapsed := time.Since(start)
	after := before
	if admitted != nil {
		after = e.waitForStats(func(s *tailgatev1.GetStatsResponse) bool {
			return s.GetCancelled() > before.GetCancelled()
		})
		if after == nil {
			after, _ = e.getStats()
		}
	}
	fmt.Printf("cancel code=%s elapsed_ms=%.1f admitted=%t cancelled_before=%d cancelled_after=%d\n",
		codeName(status.Code(err)), milliseconds(elapsed), admitted != nil,
		before.GetCancelled(), after.GetCancelled())
}

// readMany reads a batch as one HedgedRead.ReadMany call and prints each
// item as the stream delivers it, in completion order: two plain reads, an
// HTTP 404 (an answer), and an unknown upstream (that read's own
// NOT_FOUND, not the call's). The call's deadline bounds the whole batch;
// cancelling its context cancels the reads still running on the sidecar.
func (e *example) readMany() {
	request := &tailgatev1.ReadManyRequest{
		Reads: []*tailgatev1.ReadRequest{
			{Path: "/many/0"},
			{Path: "/missing"},
			{Path: "/many/2", Upstream: "nowhere"},
			{Path: "/many/3"},
		},
		MaxInFlight: 2,
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	stream, err := e.read.ReadMany(ctx, request)
	items := 0
	for err == nil {
		var item *tailgatev1.ReadManyItem
		if item, err = stream.Recv(); err != nil {
			break
		}
		items++
		if item.GetCode() != 0 {
			fmt.Printf("item call=many index=%d code=%s message=%s\n", item.GetIndex(),
				codeName(codes.Code(item.GetCode())), strconv.Quote(item.GetMessage()))
			continue
		}
		response := item.GetResponse()
		trace := response.GetTrace()
		fmt.Printf("item call=many index=%d status=%d body=%s attempts=%d hedged=%t hedge_won=%t replica=%s latency_ms=%.1f\n",
			item.GetIndex(), response.GetStatus(), strconv.Quote(string(response.GetBody())),
			trace.GetAttempts(), trace.GetHedged(), trace.GetHedgeWon(), trace.GetReplica(),
			milliseconds(trace.GetLatency().AsDuration()))
	}
	if err == io.EOF { // the stream ended with OK
		err = nil
	}
	fmt.Printf("batch call=many code=%s items=%d elapsed_ms=%.1f\n",
		codeName(status.Code(err)), items, milliseconds(time.Since(start)))
}

// waitForStats polls GetStats until done holds, for at most --deadline;
// nil if it never did.
func (e *example) waitForStats(done func(*tailgatev1.GetStatsResponse) bool) *tailgatev1.GetStatsResponse {
	for end := time.Now().Add(*deadline); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if s, err := e.getStats(); err == nil && done(s) {
			return s
		}
	}
	return nil
}

func (e *example) getStats() (*tailgatev1.GetStatsResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	return e.admin.GetStats(ctx, &tailgatev1.GetStatsRequest{})
}

func (e *example) stats() {
	s, err := e.getStats()
	if err != nil {
		printError("stats", err, 0)
		return
	}
	var replicas []string
	for _, r := range s.GetReplicas() {
		replicas = append(replicas, r.GetUrl()+"="+circuitName(r.GetCircuit()))
	}
	fmt.Printf("stats requests=%d hedges=%d hedge_wins=%d cancelled=%d hedges_skipped=%d timeouts=%d replicas=%s\n",
		s.GetRequests(), s.GetHedges(), s.GetHedgeWins(), s.GetCancelled(),
		s.GetHedgesSkipped(), s.GetTimeouts(), strings.Join(replicas, ","))
}

// circuitName compares by number: CircuitState's String() returns the
// older short name (CIRCUIT_CLOSED), declared first for each number.
func circuitName(state tailgatev1.CircuitState) string {
	switch state {
	case tailgatev1.CircuitState_CIRCUIT_STATE_CLOSED:
		return "closed"
	case tailgatev1.CircuitState_CIRCUIT_STATE_OPEN:
		return "open"
	case tailgatev1.CircuitState_CIRCUIT_STATE_HALF_OPEN:
		return "half-open"
	}
	return "unspecified"
}

// health asks grpc.health.v1.Health/Check about one service of a listener.
func health(conn *grpc.ClientConn, listener, service string) {
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	response, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		printError("health-"+listener, err, 0)
		return
	}
	fmt.Printf("health listener=%s service=%s status=%s\n", listener, strconv.Quote(service), response.GetStatus())
}

// reflection lists the listener's services through server reflection:
// grpc.reflection.v1 first, then v1alpha. grpc-go 1.33 ships only the
// v1alpha package; the v1 messages are the same on the wire (v1 is a copy
// of v1alpha under a new name), so the v1alpha types serve for both
// methods.
func reflection(conn *grpc.ClientConn) {
	var err error
	for _, api := range []string{"v1", "v1alpha"} {
		var services []string
		services, err = listServices(conn, "/grpc.reflection."+api+".ServerReflection/ServerReflectionInfo")
		if err == nil {
			fmt.Printf("reflection api=%s services=%s\n", api, strings.Join(services, ","))
			return
		}
		if status.Code(err) != codes.Unimplemented {
			break
		}
	}
	printError("reflection", err, 0)
}

func listServices(conn *grpc.ClientConn, method string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
	if err != nil {
		return nil, err
	}
	request := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}
	// io.EOF: the server ended the stream; RecvMsg returns its status.
	if err := stream.SendMsg(request); err != nil && err != io.EOF {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	response := &rpb.ServerReflectionResponse{}
	if err := stream.RecvMsg(response); err != nil {
		return nil, err
	}
	if e := response.GetErrorResponse(); e != nil {
		return nil, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	var services []string
	for _, s := range response.GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
	}
	sort.Strings(services)
	return services, nil
}
