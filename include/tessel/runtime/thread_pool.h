// The C++ face of tessel's persistent thread pool (the C entry points generated code calls are in
// c_runtime.h). One process-wide pool; fork-join with static chunking: a parallel loop over [begin, end)
// is split into at most num_threads() contiguous chunks, chunk 0 runs on the caller. Workers spin briefly
// after a loop, then sleep on a condition variable. Nested parallel loops run serially.
#pragma once
#include <cstdint>
#include <functional>

namespace tessel::runtime {

/** Sets the thread count (caller included); n <= 0 restores the default (TESSEL_NUM_THREADS, else the
 *  hardware concurrency). Waits for a running loop to finish before resizing; ignored when called
 *  from inside a parallel task. */
void set_num_threads(int n);

/** Thread count parallel loops use now. */
int num_threads();

/** CPUs this process may run on: its affinity mask's count on Linux (taskset, a container's cpuset),
 *  else hardware concurrency; at least 1. */
int usable_cpus();

/** Default thread count: TESSEL_NUM_THREADS when set to a positive integer, else usable_cpus(). */
int default_num_threads();

/** Runs f(chunk_begin, chunk_end) over contiguous chunks of [begin, end) on the pool and waits.
 *  The first exception thrown by f is rethrown here after all chunks finished. */
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t, int64_t)>& f);

/** True on a pool worker, or on the caller while it runs its own chunk. */
bool in_parallel_region();

}  // namespace tessel::runtime
