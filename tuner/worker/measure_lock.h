// MeasureLock: an exclusive flock on a file, held while one candidate is measured, so that tuning runs
// and workers sharing a machine never time kernels at once (LocalRunnerParams::measure_lock,
// `tessel tune --measure-lock`, `tessel worker --measure-lock`; docs/measurement.md).
#pragma once
#include <string>

namespace tessel::tuner {

/** Each holder opens the file itself: flock excludes between open file descriptions, so holders in other
 *  processes or in one process exclude each other alike. An empty path is no lock (lock() does nothing).
 *  BasicLockable (std::lock_guard). */
class MeasureLock {
 public:
  /** Opens (creates) path; throws UserError when it cannot. */
  explicit MeasureLock(const std::string& path);
  ~MeasureLock();
  MeasureLock(const MeasureLock&) = delete;
  MeasureLock& operator=(const MeasureLock&) = delete;
  void lock();
  void unlock();

 private:
  int fd_ = -1;
};

}  // namespace tessel::tuner
