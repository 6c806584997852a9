#include "common/status.h"

#include <gtest/gtest.h>

namespace ragd {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Status Chain(int x, int* out) {
  auto r = Half(x);
  if (!r.ok()) return r.status();
  *out = *r;
  RAGD_RETURN_IF_ERROR(Status::Ok());
  return Status::Ok();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status().ok());
  Status s = Status::NotFound("model.gguf");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not_found: model.gguf");
}

TEST(StatusTest, ResultCarriesValueOrStatus) {
  int out = 0;
  EXPECT_TRUE(Chain(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status s = Chain(3, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd");
}

}  // namespace
}  // namespace ragd
