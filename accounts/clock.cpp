#include "accounts/clock.h"

#include <chrono>

namespace ragd::accounts {
namespace {

class RealClock : public Clock {
 public:
  int64_t NowMillis() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
};

}  // namespace

const Clock& SystemClock() {
  static const RealClock clock;
  return clock;
}

}  // namespace ragd::accounts
