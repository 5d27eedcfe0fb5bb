// A batch of keys through a tailgate sidecar's HedgedRead service on one
// gRPC channel, two ways (batch_target.h):
//
//   ReadManyBatches  one ReadMany call carrying every key, its items read
//                    as they stream in (ReadManyRequest.max_in_flight
//                    bounds the reads running at once)
//   ReadCallBatches  one unary Read call per key, up to max_in_flight at
//                    once on the same channel (gRPC's callback API), the
//                    next started as one ends: what an application without
//                    ReadMany does
//
// With `disable_hedging`, each read carries hedge.disable: no timer hedge
// (a failed primary may still fall back).
//
// Thread safety: ReadBatch blocks the calling thread; different threads
// may run batches on one object at once (each call has its own state).
// The channel must outlive the object.

#ifndef TAILGATE_EXPERIMENT_LOAD_GRPC_BATCHES_H_
#define TAILGATE_EXPERIMENT_LOAD_GRPC_BATCHES_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "experiment/load/batch_target.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate::experiment {

struct GrpcBatchOptions {
  int max_in_flight = 100;  // REQUIRES: >= 1
  bool disable_hedging = false;
  absl::Duration deadline = absl::Seconds(10);  // of the whole batch
};

class ReadManyBatches : public BatchTarget {
 public:
  ReadManyBatches(std::shared_ptr<grpc::Channel> channel,
                  GrpcBatchOptions options)
      : stub_(v1::HedgedRead::NewStub(channel)), options_(options) {}
  BatchResult ReadBatch(const std::vector<std::string>& paths) override;

 private:
  const std::unique_ptr<v1::HedgedRead::Stub> stub_;
  const GrpcBatchOptions options_;
};

class ReadCallBatches : public BatchTarget {
 public:
  ReadCallBatches(std::shared_ptr<grpc::Channel> channel,
                  GrpcBatchOptions options)
      : stub_(v1::HedgedRead::NewStub(channel)), options_(options) {}
  BatchResult ReadBatch(const std::vector<std::string>& paths) override;

 private:
  const std::unique_ptr<v1::HedgedRead::Stub> stub_;
  const GrpcBatchOptions options_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_GRPC_BATCHES_H_
