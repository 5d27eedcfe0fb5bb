#!/usr/bin/env node
// Calls the Tailgate sidecar from Node.js with @grpc/grpc-js and
// @grpc/proto-loader, loading proto/tailgate/v1/tailgate.proto at run time
// (no code generation), and prints one line per call:
//
//   read call=NAME status=200 body="fast:/x" x_replica=fast attempts=1
//        hedged=false hedge_won=false replica=http://... latency_ms=1.2
//   error call=NAME code=NOT_FOUND message="..."
//   cancel call=stall code=CANCELLED cancelled_before=0 cancelled_after=1
//   stats requests=... hedges=... hedge_wins=... cancelled=... replicas=[...]
//   health port=listen service="" status=SERVING
//   reflection version=v1alpha services=... files=...
//   item call=read_many index=N status=200 body="..." attempts=1 ...
//   item call=read_many index=N code=NOT_FOUND message="..."
//   batch call=read_many code=OK items=N
//
// (each a single line; strings that may hold spaces are JSON-quoted).
//
//   npm ci    # once, here: package.json and package-lock.json
//   node tailgate_example.js \
//       --target=127.0.0.1:8080 --admin=127.0.0.1:9090 [--calls=read,stats]
//
// The npm packages are found the usual way: the node_modules `npm ci` puts
// beside this file, or NODE_PATH (tools/bootstrap installs the same
// versions, pinned by tools/npm/package-lock.json, into
// /opt/tailgate/npm/node_modules for the tests).
// --target and --admin take grpc-js targets: host:port, or unix:/abs/path
// for a sidecar started with --listen=unix:/abs/path. --proto_root is the
// directory holding proto/ (default: the repository root above this file).
// --reflection lists the reflection versions to try, in order (v1,v1alpha).
// The exit code is 0 when every call ran, 1 when one failed unexpectedly
// (an `unexpected` line says which), 2 for bad arguments.

'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
// protobufjs is proto-loader's own dependency (no extra install), resolved
// from proto-loader's location: it parses the inline health schema below,
// and its descriptor extension decodes the FileDescriptorProtos that
// reflection returns.
function fromProtoLoader(name) {
  const loaderDir = path.dirname(require.resolve('@grpc/proto-loader'));
  return require(require.resolve(name, {paths: [loaderDir]}));
}
const protobuf = fromProtoLoader('protobufjs');
const descriptor = fromProtoLoader('protobufjs/ext/descriptor');

// proto-loader options. They decide what the JavaScript objects look like:
//   keepCase: true   field names as in the .proto (hedge_won, in_flight);
//                    without it proto-loader camel-cases them (hedgeWon).
//                    It is a parse option: a descriptor from reflection
//                    always gives the .proto's names.
//   longs: String    64-bit integers (the uint64 counters of GetStats,
//                    Duration.seconds) as decimal strings: exact for every
//                    value, printable, and BigInt(s) compares them. Number
//                    would round above 2^53; the default is a Long object.
//   enums: String    enum values as names ('METHOD_HEAD', 'SERVING') instead
//                    of numbers. For a number with several names (the
//                    CircuitState aliases) protobufjs gives the first one
//                    declared, the older CIRCUIT_CLOSED: see
//                    circuitStateName. Requests accept names or numbers.
//   defaults: true   proto3 leaves zero values off the wire; with this they
//                    read back as 0, false, '' and an empty Buffer (a HEAD's
//                    body, hedged=false) instead of being undefined.
//   oneofs: true     a oneof gets a virtual field naming the member that is
//                    set (the reflection responses' message_response).
//   includeDirs      where imports are looked up; the repository root, so
//                    the file loads as proto/tailgate/v1/tailgate.proto.
//                    google/protobuf/duration.proto needs no include dir:
//                    protobufjs bundles the well-known types and uses its
//                    own copy before any include dir (so neither
//                    /usr/include nor protoc's include/ is needed).
// bytes fields (body) are Buffers, the default.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

// gRPC's default limit (4 MiB) is below the sidecar's default
// --max_response_bytes plus headers; this covers its 64 MiB hard cap.
const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': 80 << 20
};
const CALL_DEADLINE_MS = 5000;

// grpc.health.v1 (the gRPC health checking protocol). Neither the
// repository nor a Debian package ships health.proto for Node (Debian has it
// only among the Go gRPC sources; the npm package grpc-health-check is not
// one of the pinned packages), so its messages are written out here, with
// the protocol's field numbers.
const HEALTH_PROTO = `
syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse {
  enum ServingStatus {
    UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3;
  }
  ServingStatus status = 1;
}
service Health {
  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
}
`;

// Loads an inline schema the way loadSync loads a file.
function loadInline(source) {
  const root = protobuf.parse(source, {keepCase: true}).root;
  return protoLoader.fromJSON(root.toJSON(), LOADER_OPTIONS);
}

const ALL_CALLS = [
  'read', 'hedged', 'head', 'latin1', 'missing', 'all_503', 'invalid_argument',
  'not_found', 'too_large', 'deadline', 'cancel', 'health', 'reflection',
  'stats', 'read_many'
];

// The reads of the read_many call: two plain reads, an HTTP 404 (an answer)
// and an unknown upstream (that read's own NOT_FOUND).
const READ_MANY_READS = [
  {path: '/many/0'},
  {path: '/missing'},
  {path: '/many/2', upstream: 'nowhere'},
  {path: '/many/3'},
];

function usage(message) {
  process.stderr.write(`tailgate_example: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = {
    target: '',
    admin: '',
    proto_root: path.resolve(__dirname, '..', '..'),
    calls: ALL_CALLS.join(','),
    hedge_reads: '6',
    reflection: 'v1,v1alpha',
  };
  for (const arg of argv) {
    const match = /^--(\w+)=(.*)$/.exec(arg);
    if (!match || !(match[1] in args)) usage(`unknown argument ${arg}`);
    args[match[1]] = match[2];
  }
  if (!args.target || !args.admin) usage('--target and --admin are required');
  args.calls = args.calls.split(',');
  for (const call of args.calls) {
    if (!ALL_CALLS.includes(call)) usage(`unknown call ${call}`);
  }
  args.hedge_reads = Number(args.hedge_reads);
  args.reflection = args.reflection.split(',');
  for (const version of args.reflection) {
    if (!['v1', 'v1alpha'].includes(version)) {
      usage(`unknown reflection version ${version}`);
    }
  }
  return args;
}

// --- output ------------------------------------------------------------

function durationMs(duration) {
  if (!duration) return 0;
  return Number(duration.seconds) * 1e3 + duration.nanos / 1e6;
}

function printRead(call, response, extra = '') {
  const trace = response.trace;
  // Response header names are lower case, as in HTTP/2.
  const replicaHeader = response.headers.find((h) => h.name === 'x-replica');
  console.log(
      `read call=${call} status=${response.status}` +
      ` body=${JSON.stringify(response.body.toString('utf8'))}` +
      ` body_bytes=${response.body.length}` +
      ` x_replica=${replicaHeader ? replicaHeader.value : ''}` +
      ` attempts=${trace.attempts} hedged=${trace.hedged}` +
      ` hedge_won=${trace.hedge_won} replica=${trace.replica}` +
      ` latency_ms=${durationMs(trace.latency).toFixed(1)}${extra}`);
}

function printError(call, error, extra = '') {
  // grpc.status is a TypeScript enum: grpc.status[4] is 'DEADLINE_EXCEEDED'.
  console.log(
      `error call=${call} code=${grpc.status[error.code]}` +
      ` message=${JSON.stringify(error.details)}${extra}`);
}

// One ReadManyItem: its read's answer, or that read's own error.
function printItem(call, item) {
  if (item.code !== 0) {
    console.log(
        `item call=${call} index=${item.index} code=${grpc.status[item.code]}` +
        ` message=${JSON.stringify(item.message)}`);
    return;
  }
  const response = item.response;
  const trace = response.trace;
  console.log(
      `item call=${call} index=${item.index} status=${response.status}` +
      ` body=${JSON.stringify(response.body.toString('utf8'))}` +
      ` attempts=${trace.attempts} hedged=${trace.hedged}` +
      ` hedge_won=${trace.hedge_won} replica=${trace.replica}` +
      ` latency_ms=${durationMs(trace.latency).toFixed(1)}`);
}

// --- calls -------------------------------------------------------------

// HedgedRead.ReadMany: a server stream of items in completion order, each
// printed as it arrives; resolves with the call's status. The deadline
// bounds the whole batch; call.cancel() would cancel the reads still
// running.
function readMany(client, reads, maxInFlight) {
  return new Promise((resolve) => {
    let items = 0;
    const call = client.ReadMany(
        {reads, max_in_flight: maxInFlight},
        {deadline: Date.now() + CALL_DEADLINE_MS});
    call.on('data', (item) => {
      items++;
      printItem('read_many', item);
    });
    // 'status' comes once, after the last item or with the error.
    call.on('status', (status) => resolve({code: status.code, items}));
    call.on('error', () => {});  // its status is the 'status' event's
  });
}

// One unary call as a promise of {error, response}.
function unary(client, method, request, deadlineMs = CALL_DEADLINE_MS) {
  return new Promise((resolve) => {
    client[method](
        request, {deadline: Date.now() + deadlineMs},
        (error, response) => resolve({error, response}));
  });
}

// A call expected to succeed: throws its error otherwise.
async function ok(client, method, request) {
  const {error, response} = await unary(client, method, request);
  if (error) {
    throw new Error(`${method}: ${grpc.status[error.code]}: ${error.details}`);
  }
  return response;
}

// A call expected to fail: prints its error line, throws if it succeeded.
async function failing(call, client, request, deadlineMs) {
  const start = Date.now();
  const {error} = await unary(client, 'Read', request, deadlineMs);
  if (!error) throw new Error(`${call}: succeeded`);
  printError(
      call, error, deadlineMs ? ` elapsed_ms=${Date.now() - start}` : '');
}

// Polls `condition` (an async predicate) every 10 ms for up to `limitMs`.
async function waitFor(condition, limitMs = 5000) {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

// CircuitState has two names per number (see tailgate.proto). With
// enums: String the loader gives the first declared, older one
// (CIRCUIT_CLOSED); this gives the current CIRCUIT_STATE_ name for either.
function circuitStateName(definition, name) {
  const values = definition['tailgate.v1.CircuitState'].type.value;
  const number = values.find((v) => v.name === name).number;
  return values
      .find((v) => v.number === number && v.name.startsWith('CIRCUIT_STATE_'))
      .name;
}

// A bidirectional ServerReflectionInfo stream used as request/response.
class ReflectionStream {
  constructor(client) {
    this.pending = [];
    this.call =
        client.ServerReflectionInfo({deadline: Date.now() + CALL_DEADLINE_MS});
    this.call.on('data', (response) => this.pending.shift().resolve(response));
    this.call.on('error', (error) => {
      for (const p of this.pending.splice(0)) p.reject(error);
    });
  }

  ask(request) {
    return new Promise((resolve, reject) => {
      this.pending.push({resolve, reject});
      this.call.write(request);
    });
  }

  close() {
    this.call.end();
  }
}

// Reflection clients from proto/grpc/reflection/v1/reflection.proto, the
// protocol's schema as the repository ships it. v1alpha, which servers that
// predate v1 have, uses the same messages under another service name, so
// its client is v1's with the method path changed.
function reflectionClients(protoRoot) {
  const definition = protoLoader.loadSync(
      'proto/grpc/reflection/v1/reflection.proto',
      {...LOADER_OPTIONS, includeDirs: [protoRoot]});
  const v1 = definition['grpc.reflection.v1.ServerReflection'];
  const v1alpha = {
    ServerReflectionInfo: {
      ...v1.ServerReflectionInfo,
      path: '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
    },
  };
  return {
    v1: grpc.makeGenericClientConstructor(v1, 'ServerReflection'),
    v1alpha: grpc.makeGenericClientConstructor(v1alpha, 'ServerReflection'),
  };
}

async function reflect(args) {
  const clients = reflectionClients(args.proto_root);
  for (const version of args.reflection) {
    const Client = clients[version];
    const client = new Client(args.target, grpc.credentials.createInsecure());
    const stream = new ReflectionStream(client);
    let listed;
    try {
      listed = await stream.ask({list_services: ''});
    } catch (error) {
      stream.close();
      client.close();
      if (error.code === grpc.status.UNIMPLEMENTED) continue;
      throw error;
    }
    const services = listed.list_services_response.service.map((s) => s.name);

    // The file defining the service, then the files it imports, which the
    // server may already have sent with it.
    const files = new Map();  // name -> google.protobuf.FileDescriptorProto
    let request = {file_containing_symbol: 'tailgate.v1.HedgedRead'};
    while (request) {
      const response = await stream.ask(request);
      if (response.message_response !== 'file_descriptor_response') {
        throw new Error(
            `reflection: ${JSON.stringify(response.error_response)}`);
      }
      for (const bytes of
               response.file_descriptor_response.file_descriptor_proto) {
        const file = descriptor.FileDescriptorProto.decode(bytes);
        files.set(file.name, file);
      }
      const imports = [...files.values()].flatMap((file) => file.dependency);
      const missing = imports.find((name) => !files.has(name));
      request = missing ? {file_by_filename: missing} : null;
    }
    stream.close();
    client.close();
    console.log(
        `reflection version=${version} services=${services.sort().join(',')}` +
        ` files=${[...files.keys()].join(',')}`);

    // A client built from the descriptors alone, with no .proto file.
    const definitionFromServer = protoLoader.loadFileDescriptorSetFromObject(
        {file: [...files.values()]}, LOADER_OPTIONS);
    const HedgedRead =
        grpc.loadPackageDefinition(definitionFromServer).tailgate.v1.HedgedRead;
    const reader = new HedgedRead(
        args.target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    printRead('reflected', await ok(reader, 'Read', {path: '/reflected'}));
    reader.close();
    return;
  }
  throw new Error(`reflection: none of ${args.reflection} is served`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const definition = protoLoader.loadSync(
      'proto/tailgate/v1/tailgate.proto',
      {...LOADER_OPTIONS, includeDirs: [args.proto_root]});
  const tailgate = grpc.loadPackageDefinition(definition).tailgate.v1;
  const credentials = grpc.credentials.createInsecure();
  const reads =
      new tailgate.HedgedRead(args.target, credentials, CHANNEL_OPTIONS);
  const admin = new tailgate.Admin(args.admin, credentials);
  const Health = grpc.loadPackageDefinition(loadInline(HEALTH_PROTO))
                     .grpc.health.v1.Health;

  const calls = {
    read: async () =>
        printRead('read', await ok(reads, 'Read', {path: '/plain'})),

    // Reads until one was hedged and the hedge answered: the sidecar picks
    // the primary by rotation, so with a slow replica among the set some
    // reads start on it. The per-read delay (a google.protobuf.Duration)
    // overrides the sidecar's --hedge_delay.
    hedged: async () => {
      let response;
      let count = 0;
      while (count < args.hedge_reads) {
        count++;
        response = await ok(reads, 'Read', {
          path: '/hedge-me',
          hedge: {delay: {seconds: 0, nanos: 10 * 1e6}},
        });
        if (response.trace.hedge_won) break;
      }
      printRead('hedged', response, ` reads=${count}`);
    },

    head: async () => printRead(
        'head',
        await ok(reads, 'Read', {path: '/head', method: 'METHOD_HEAD'})),
    // A header value the replica sent in ISO-8859-1 arrives as UTF-8.
    latin1: async () => {
      const response = await ok(reads, 'Read', {path: '/latin1'});
      const header = response.headers.find((h) => h.name === 'x-latin1');
      printRead(
          'latin1', response,
          ` x_latin1=${JSON.stringify(header ? header.value : null)}`);
    },
    missing: async () =>
        printRead('missing', await ok(reads, 'Read', {path: '/missing'})),
    // Every replica answers 503: still OK, the 503 forwarded, no hedge win.
    all_503: async () =>
        printRead('all_503', await ok(reads, 'Read', {path: '/status/503'})),

    invalid_argument: () => failing('invalid_argument', reads, {
      path: '/x',
      headers: [{name: 'Host', value: 'elsewhere'}],
    }),
    not_found: () =>
        failing('not_found', reads, {path: '/x', upstream: 'nowhere'}),
    too_large: () => failing('too_large', reads, {path: '/big'}),
    deadline: () => failing('deadline', reads, {path: '/stall'}, 200),

    // Cancels a read once the sidecar has admitted it (its `requests`
    // counter rose), then waits for its `cancelled` counter to rise.
    cancel: async () => {
      const stats = () => ok(admin, 'GetStats', {});
      const before = await stats();
      let call;
      const finished = new Promise((resolve) => {
        call = reads.Read(
            {path: '/stall'}, {deadline: Date.now() + CALL_DEADLINE_MS},
            resolve);
      });
      await waitFor(
          async () =>
              BigInt((await stats()).requests) > BigInt(before.requests));
      call.cancel();
      const error = await finished;
      let after = before;
      await waitFor(async () => {
        after = await stats();
        return BigInt(after.cancelled) > BigInt(before.cancelled);
      });
      const code = error ? grpc.status[error.code] : 'OK';
      console.log(
          `cancel call=stall code=${code}` +
          ` cancelled_before=${before.cancelled}` +
          ` cancelled_after=${after.cancelled}`);
    },

    health: async () => {
      for (const [port, target, service] of [
               ['listen', args.target, ''],
               ['admin', args.admin, 'tailgate.v1.Admin']]) {
        const health = new Health(target, credentials);
        const response = await ok(health, 'Check', {service});
        console.log(
            `health port=${port} service=${JSON.stringify(service)}` +
            ` status=${response.status}`);
        health.close();
      }
    },

    reflection: () => reflect(args),

    stats: async () => {
      const s = await ok(admin, 'GetStats', {});
      const replicas = s.replicas.map((r) => {
        const circuit = circuitStateName(definition, r.circuit);
        return {url: r.url, circuit, attempts: Number(r.attempts)};
      });
      const amplification = s.amplification.toFixed(3);
      console.log(
          `stats requests=${s.requests} rejected=${s.rejected}` +
          ` attempts=${s.attempts} hedges=${s.hedges}` +
          ` hedge_wins=${s.hedge_wins} timeouts=${s.timeouts}` +
          ` cancelled=${s.cancelled} hedges_skipped=${s.hedges_skipped}` +
          ` in_flight=${s.in_flight} amplification=${amplification}` +
          ` replicas=${JSON.stringify(replicas)}`);
    },

    read_many: async () => {
      const {code, items} = await readMany(reads, READ_MANY_READS, 2);
      console.log(
          `batch call=read_many code=${grpc.status[code]} items=${items}`);
      if (code !== grpc.status.OK) {
        throw new Error(`ReadMany: ${grpc.status[code]}`);
      }
    },
  };

  for (const call of args.calls) {
    try {
      await calls[call]();
    } catch (error) {
      const message = JSON.stringify(String(error.message));
      console.log(`unexpected call=${call} error=${message}`);
      process.exitCode = 1;
    }
  }
  reads.close();
  admin.close();
}

main();
