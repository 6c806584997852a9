#include "common/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ragd {
namespace {

// The VmFlags line of the mapping of /proc/self/smaps that holds p ("" if none).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 && line.find(':') > line.find(' ')) {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(HugePagesTest, LargeArraysAreAlignedMappingsAdvisedForHugePages) {
  const size_t n = 5 * kHugePageBytes / 2;  // 5 MiB: not a whole number of huge pages
  std::vector<uint8_t, HugePageAllocator<uint8_t>> big(n, 7);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(big.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(big.front(), 7);
  EXPECT_EQ(big.back(), 7);
  for (const uint8_t* p : {big.data(), big.data() + n - 1}) {
    const std::string flags = VmFlagsOf(p);
    ASSERT_FALSE(flags.empty());
    std::istringstream words(flags);
    bool advised = false;
    for (std::string w; words >> w;) advised = advised || w == "hg";
    EXPECT_TRUE(advised) << flags;
  }
  // The mapping ends where the array's last huge page does.
  const uint8_t* past = big.data() + 3 * kHugePageBytes;
  EXPECT_TRUE(VmFlagsOf(past).find(" hg") == std::string::npos);
}

TEST(HugePagesTest, SmallArraysComeFromTheHeapWithTheirAlignment) {
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  std::vector<Line, HugePageAllocator<Line>> small(3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  EXPECT_TRUE(VmFlagsOf(small.data()).find(" hg") == std::string::npos);
  small.resize(kHugePageBytes / sizeof(Line) + 1);  // moves into a mapping of its own
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kHugePageBytes, 0u);
}

}  // namespace
}  // namespace ragd
