// safetensors parsing (retrieval/safetensors.h): every malformed header is an
// error value, and an accepted tensor's shape, dtype and bytes agree.
#include "retrieval/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace ragd::retrieval {
namespace {

// A file of the u64 header length, `header` and `data`.
std::string Write(const ragd::testing::TempDir& dir, const std::string& header,
                  const std::string& data = "") {
  const std::string path = dir.File("t.safetensors");
  const uint64_t n = header.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
  return path;
}

class OverflowingShape : public ::testing::TestWithParam<std::string> {};

// Found by tests/fuzz (safetensors): shapes whose product wraps around 2^64
// (to 0, matching empty data) were accepted, and SafeTensor::n_elements()
// then overflowed int64 (undefined behaviour) for every caller.
TEST_P(OverflowingShape, IsRefused) {
  ragd::testing::TempDir dir;
  auto f = SafetensorsFile::Open(
      Write(dir, R"({"t":{"dtype":"F32","shape":)" + GetParam() + R"(,"data_offsets":[0,0]}})"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(f.status().message().find("bad shape"), std::string::npos) << f.status().message();
}

// The first is the crashing input's shape.
INSTANTIATE_TEST_SUITE_P(Shapes, OverflowingShape,
                         ::testing::Values("[4294967296,4294967296]", "[1099511627776,16777216,0]",
                                           "[65536,65536,65536,65536]"));

TEST(Safetensors, EmptyDimensionAnywhereIsAnEmptyTensor) {
  ragd::testing::TempDir dir;
  auto f = SafetensorsFile::Open(
      Write(dir, R"({"t":{"dtype":"F32","shape":[1099511627776,0,1099511627776],"data_offsets":[0,0]}})"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->Find("t")->n_elements(), 0);
}

TEST(Safetensors, ShapeDtypeAndBytesAgree) {
  ragd::testing::TempDir dir;
  auto f = SafetensorsFile::Open(
      Write(dir, R"({"t":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}})", std::string(12, '\0')));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const SafeTensor* t = f->Find("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->n_elements(), 6);
  EXPECT_EQ(t->n_bytes, 12u);
}

}  // namespace
}  // namespace ragd::retrieval
