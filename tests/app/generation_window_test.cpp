// The last hour's generations behind the admin status panel.
#include "app/ops/generation_window.h"

#include <gtest/gtest.h>

namespace ragd::app {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using Clock = GenerationWindow::Clock;

TEST(GenerationWindow, EmptyHasNoPercentilesOrSpeed) {
  GenerationWindow w;
  const GenerationSummary s = w.Summarize();
  EXPECT_EQ(s.generations, 0);
  EXPECT_FALSE(s.ttft_p50_s.has_value());
  EXPECT_FALSE(s.ttft_p95_s.has_value());
  EXPECT_FALSE(s.decode_tokens_per_s.has_value());
}

TEST(GenerationWindow, NearestRankPercentilesAndDecodeSpeed) {
  GenerationWindow w;
  const Clock::time_point t0 = Clock::now();
  // TTFTs 0.1 .. 2.0 s in steps of 0.1; each makes 11 tokens in ttft + 1 s.
  for (int i = 1; i <= 20; ++i) w.Add({100, 11, i / 10.0, i / 10.0 + 1.0}, t0 + seconds(i));
  const GenerationSummary s = w.Summarize(t0 + seconds(30));
  EXPECT_EQ(s.generations, 20);
  EXPECT_EQ(s.prompt_tokens, 2000);
  EXPECT_EQ(s.completion_tokens, 220);
  ASSERT_TRUE(s.ttft_p50_s && s.ttft_p95_s);
  EXPECT_DOUBLE_EQ(*s.ttft_p50_s, 1.0);  // rank ceil(0.5 * 20) = 10
  EXPECT_DOUBLE_EQ(*s.ttft_p95_s, 1.9);  // rank ceil(0.95 * 20) = 19
  ASSERT_TRUE(s.decode_tokens_per_s);
  EXPECT_NEAR(*s.decode_tokens_per_s, 10.0, 1e-9);  // 10 tokens after the first, in 1 s
}

TEST(GenerationWindow, FailedGenerationsCountButHaveNoFirstToken) {
  GenerationWindow w;
  const Clock::time_point t0 = Clock::now();
  w.Add({50, 0, -1, 0.2}, t0);
  w.Add({50, 1, 0.5, 0.5}, t0);  // one token: no decode time to speak of
  const GenerationSummary s = w.Summarize(t0);
  EXPECT_EQ(s.generations, 2);
  ASSERT_TRUE(s.ttft_p50_s);
  EXPECT_DOUBLE_EQ(*s.ttft_p50_s, 0.5);
  EXPECT_FALSE(s.decode_tokens_per_s.has_value());
}

TEST(GenerationWindow, ForgetsWhatIsOlderThanItsSpan) {
  GenerationWindow w(minutes(60));
  const Clock::time_point t0 = Clock::now();
  w.Add({10, 5, 9.0, 10.0}, t0);
  w.Add({10, 5, 1.0, 2.0}, t0 + minutes(30));
  EXPECT_EQ(w.Summarize(t0 + minutes(30)).generations, 2);
  const GenerationSummary later = w.Summarize(t0 + minutes(75));
  EXPECT_EQ(later.generations, 1);
  EXPECT_DOUBLE_EQ(*later.ttft_p95_s, 1.0);
  // A new sample moves the window: the first is gone, the second stays.
  w.Add({10, 5, 3.0, 4.0}, t0 + minutes(80));
  EXPECT_EQ(w.Summarize(t0 + minutes(80)).generations, 2);
  EXPECT_EQ(w.Summarize(t0 + minutes(141)).generations, 0);
}

}  // namespace
}  // namespace ragd::app
