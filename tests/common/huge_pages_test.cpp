#include "common/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory_resource>
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

bool AdvisedForHugePages(const void* p) {
  std::istringstream words(VmFlagsOf(p));
  for (std::string w; words >> w;)
    if (w == "hg") return true;
  return false;
}

TEST(HugePagesTest, LargeArraysAreAlignedMappingsAdvisedForHugePages) {
  const size_t n = 5 * kHugePageBytes / 2;  // 5 MiB: not a whole number of huge pages
  std::pmr::vector<uint8_t> big(n, 7, HugePageResource());
  ASSERT_EQ(reinterpret_cast<uintptr_t>(big.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(big.front(), 7);
  EXPECT_EQ(big.back(), 7);
  for (const uint8_t* p : {big.data(), big.data() + n - 1})
    EXPECT_TRUE(AdvisedForHugePages(p)) << VmFlagsOf(p);
  // The mapping ends where the array's last huge page does.
  EXPECT_FALSE(AdvisedForHugePages(big.data() + 3 * kHugePageBytes));
}

TEST(HugePagesTest, SmallArraysComeFromTheHeapWithTheirAlignment) {
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  std::pmr::vector<Line> small(3, HugePageResource());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  EXPECT_FALSE(AdvisedForHugePages(small.data()));
  small.resize(kHugePageBytes / sizeof(Line) + 1);  // moves into a mapping of its own
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kHugePageBytes, 0u);
}

TEST(HugePagesTest, SmallArraysShareHugePagesThroughAnArena) {
  // How a model's layer matrices (each under 2 MiB) get huge pages.
  std::pmr::monotonic_buffer_resource arena(3 * kHugePageBytes, HugePageResource());
  std::pmr::vector<uint8_t> a(kHugePageBytes / 4, 1, &arena), b(kHugePageBytes, 2, &arena);
  EXPECT_TRUE(AdvisedForHugePages(a.data()));
  EXPECT_TRUE(AdvisedForHugePages(b.data() + b.size() - 1));
  EXPECT_EQ(a.back() + b.back(), 3);
}

}  // namespace
}  // namespace ragd
