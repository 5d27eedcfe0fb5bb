#!/usr/bin/env node
// Runs the calls of the conformance table with @grpc/grpc-js, on bytes (the
// table serializes requests and decodes answers; see python_caller.py for
// a call's fields):
//
//   NODE_PATH=/opt/tailgate/npm/node_modules node node_caller.js \
//       TARGET CALLS.json
//
// CALLS.json is {name: call}, bytes as {"b64": "..."}; stdout is one JSON
// object {name: outcome}, outcome {code, message, answers, initial,
// trailing} with bytes as {"b64": "..."} the same way. Calls run one after
// another, on one channel (a second one for compressed calls).

'use strict';

const fs = require('fs');
const grpc = require('@grpc/grpc-js');

const identity = (buffer) => buffer;
const codeNames = Object.fromEntries(
    Object.entries(grpc.status).map(([name, value]) => [value, name]));

function bytes(value) {
  return value && value.b64 !== undefined ? Buffer.from(value.b64, 'base64')
                                          : value;
}

function encoded(value) {
  return Buffer.isBuffer(value) ? {b64: value.toString('base64')} : value;
}

function pairs(metadata) {
  const out = [];
  if (!metadata) return out;
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) out.push([key, encoded(value)]);
  }
  return out;
}

function call(client, spec) {
  return new Promise((resolve) => {
    const metadata = new grpc.Metadata();
    for (const [key, value] of spec.metadata || []) {
      metadata.add(key, bytes(value));
    }
    const deadline = new Date(Date.now() + (spec.timeout_ms || 30000));
    const outcome = {answers: [], initial: [], trailing: []};
    let running;
    const finish = (status) => {
      outcome.code = codeNames[status.code];
      outcome.message = status.details || '';
      outcome.trailing = pairs(status.metadata);
      outcome.answers = outcome.answers.map(encoded);
      resolve(outcome);
    };
    if ((spec.kind || 'unary') === 'unary') {
      running = client.makeUnaryRequest(
          spec.method, identity, identity, bytes(spec.request), metadata,
          {deadline}, (error, answer) => {
            if (answer) outcome.answers.push(answer);
          });
    } else if (spec.kind === 'bidi') {
      running = client.makeBidiStreamRequest(
          spec.method, identity, identity, metadata, {deadline});
      running.write(bytes(spec.request));
      running.end();
      running.on('data', (answer) => outcome.answers.push(answer));
      running.on('error', () => {});
    } else {
      running = client.makeServerStreamRequest(
          spec.method, identity, identity, bytes(spec.request), metadata,
          {deadline});
      running.on('data', (answer) => {
        outcome.answers.push(answer);
        if (spec.reads && outcome.answers.length >= spec.reads) {
          running.cancel();
        }
      });
      running.on('error', () => {});
    }
    running.on('metadata', (initial) => {
      outcome.initial = pairs(initial);
    });
    running.on('status', finish);
    if (spec.cancel_ms) setTimeout(() => running.cancel(), spec.cancel_ms);
  });
}

async function main() {
  const [target, file] = process.argv.slice(2);
  const specs = JSON.parse(fs.readFileSync(file, 'utf8'));
  const credentials = grpc.credentials.createInsecure();
  const plain = new grpc.Client(target, credentials);
  // grpc-js compresses by channel option: 2 is gzip.
  const gzip = new grpc.Client(
      target, credentials, {'grpc.default_compression_algorithm': 2});
  const outcomes = {};
  for (const [name, spec] of Object.entries(specs)) {
    outcomes[name] =
        await call(spec.compression === 'gzip' ? gzip : plain, spec);
  }
  plain.close();
  gzip.close();
  process.stdout.write(JSON.stringify(outcomes) + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
