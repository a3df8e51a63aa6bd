// Private to the worker: marks the request and phase that a fatal signal would be reported for.
#pragma once
#include <cstdint>

namespace tessel::tuner {

/** While alive, a crash is reported as a fatal response to request_id; phase 1 = running the
 *  reference (reported as worker_lost), 2 = running the candidate. */
class FatalPhase {
 public:
  FatalPhase(int64_t request_id, int phase);
  ~FatalPhase();
  FatalPhase(const FatalPhase&) = delete;
  FatalPhase& operator=(const FatalPhase&) = delete;
};

}  // namespace tessel::tuner
