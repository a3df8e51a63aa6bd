#include "measure_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessel/support/error.h"

namespace tessel::tuner {

MeasureLock::MeasureLock(const std::string& path) {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw UserError("cannot open the measure lock " + path + ": " + std::strerror(errno));
}

MeasureLock::~MeasureLock() {
  if (fd_ >= 0) ::close(fd_);
}

void MeasureLock::lock() {
  while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

void MeasureLock::unlock() {
  if (fd_ >= 0) ::flock(fd_, LOCK_UN);
}

}  // namespace tessel::tuner
