// Prompt-lookup drafting: n-gram counts guess the most frequent follower of
// the longest matching context, the shared phrasing of earlier answers drafts
// only what at least two answers used, acceptance is learnt per source, and
// the draft plan and the step-cost fit weigh rows against what they yield.
#include "inference/prompt_lookup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ragd::inference {
namespace {

using Tokens = std::vector<TokenId>;

// The counts the scheduler keeps for a sequence: every token after the first,
// following what came before it.
NgramCounts CountsOf(const Tokens& h, int max_n = 4) {
  NgramCounts counts(max_n);
  for (size_t i = 1; i < h.size(); ++i) counts.Count(std::span<const TokenId>(h).first(i), h[i]);
  return counts;
}

std::vector<int> Lengths(const std::vector<DraftSource>& sources) {
  std::vector<int> n;
  for (const DraftSource& s : sources) n.push_back(s.n);
  return n;
}

TEST(NgramCounts, GuessesTheMostFrequentFollowerOfTheLongestContext) {
  // "5" was followed by 2 twice and by 1 once (the latest): frequency wins.
  const Tokens h = {5, 2, 5, 2, 5, 1, 5};
  const NgramCounts counts = CountsOf(h);
  const auto g = counts.Predict(h, 1);
  EXPECT_EQ(g.token, 2);
  EXPECT_EQ(g.n, 1);
  EXPECT_EQ(counts.Predict(h, 2).token, -1);     // "1 5" never had a follower
  EXPECT_EQ(counts.Predict(h, 1, 3).token, -1);  // nor did anything three times
  // A tie goes to the latest; a longer context beats a more frequent short one.
  const Tokens t = {1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 6, 2, 3};
  const auto tie = CountsOf(t).Predict(t, 1);
  EXPECT_EQ(tie.token, 7);  // "2 3" was followed by 4, then by 7
  EXPECT_EQ(tie.n, 2);
}

TEST(NgramCounts, CountingDownForgetsAndPresenceCountsOncePerSource) {
  const Tokens h = {7, 8, 7, 8, 7};
  NgramCounts counts = CountsOf(h);
  EXPECT_EQ(counts.Predict(h, 1, 2).token, 8);  // "7" -> 8 twice in one sequence
  NgramCounts presence(4);
  presence.CountPresence(counts, +1);
  EXPECT_EQ(presence.Predict(h, 1, 2).token, -1);  // but once as a presence
  EXPECT_EQ(presence.Predict(h, 1, 1).token, 8);
  presence.CountPresence(counts, -1);
  EXPECT_EQ(presence.contexts(), 0u);
  counts.Count(std::span<const TokenId>(h).first(1), 8, -1);
  counts.Count(std::span<const TokenId>(h).first(3), 8, -1);
  EXPECT_EQ(counts.Predict(h, 1).token, -1);  // both counts of "7" -> 8 taken back
}

TEST(ProposeDraft, GoesOnFromItsOwnGuessesWithinTheLimit) {
  const Tokens h = {1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 6, 2, 3};
  const PromptLookupOptions o{.max_draft = 3, .ngram_max = 3, .ngram_min = 1};
  const NgramCounts counts = CountsOf(h, o.ngram_max);
  Tokens draft;
  std::vector<DraftSource> sources;
  ProposeDraft(h, counts, nullptr, o, 8, &draft, &sources);
  EXPECT_EQ(draft, (Tokens{7, 8, 6}));                       // "2 3" -> 7, then "2 3 7" -> 8, ...
  EXPECT_EQ(Lengths(sources), (std::vector<int>{2, 3, 3}));  // each token's context
  for (const DraftSource& s : sources) EXPECT_FALSE(s.shared);
  ProposeDraft(h, counts, nullptr, o, 1, &draft, &sources);
  EXPECT_EQ(draft, (Tokens{7}));
  ProposeDraft(h, counts, nullptr, o, 0, &draft, &sources);
  EXPECT_TRUE(draft.empty());
  EXPECT_TRUE(sources.empty());
  const Tokens fresh = {1, 2, 3, 4};
  ProposeDraft(fresh, CountsOf(fresh), nullptr, o, 8, &draft, &sources);
  EXPECT_TRUE(draft.empty());
}

TEST(SharedPhrasing, DraftsOnlyWhatTwoAnswersUsedAndForgetsTheOldest) {
  SharedPhrasing shared(2, 4);
  const PromptLookupOptions o{.max_draft = 8, .ngram_max = 4, .ngram_min = 1, .shared_min_answers = 2};
  const Tokens question = {40, 10, 11};  // a prompt that ends as the earlier ones did
  const NgramCounts own = CountsOf(question);
  Tokens draft;
  std::vector<DraftSource> sources;

  shared.Add(Tokens{30, 10, 11}, Tokens{20, 21, 22});
  ProposeDraft(question, own, &shared, o, 8, &draft, &sources);
  EXPECT_TRUE(draft.empty());  // one answer's words are its own

  shared.Add(Tokens{31, 10, 11}, Tokens{20, 21, 99});
  ProposeDraft(question, own, &shared, o, 8, &draft, &sources);
  EXPECT_EQ(draft, (Tokens{20, 21}));  // both opened so; then they part
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_TRUE(sources[0].shared && sources[1].shared);
  EXPECT_EQ(Lengths(sources), (std::vector<int>{2, 3}));

  // The sequence's own match wins unless the shared one is longer.
  const Tokens repeats = {10, 11, 50, 40, 10, 11};
  ProposeDraft(repeats, CountsOf(repeats), &shared, o, 1, &draft, &sources);
  EXPECT_EQ(draft, (Tokens{50}));
  EXPECT_FALSE(sources[0].shared);

  // The same prompt again is not a second answer: nothing is learnt by heart.
  shared.Add(Tokens{40, 10, 11}, Tokens{20, 21, 7});
  shared.Add(Tokens{40, 10, 11}, Tokens{20, 21, 7});
  EXPECT_EQ(shared.answers(), 2u);
  ProposeDraft(question, own, &shared, o, 8, &draft, &sources);
  EXPECT_EQ(draft, (Tokens{20, 21}));  // then 99 and 7, once each

  shared.Add(Tokens{1}, Tokens{2, 3});  // capacity 2: the oldest answer goes
  EXPECT_EQ(shared.answers(), 2u);
  ProposeDraft(question, own, &shared, o, 8, &draft, &sources);
  EXPECT_TRUE(draft.empty());
}

TEST(DraftAcceptance, LearnsEachSourceOnItsOwn) {
  DraftAcceptance a;
  constexpr int kLong = DraftAcceptance::kLongMatch;
  const DraftSource own_long{false, kLong}, own1{false, 1}, shared1{true, 1}, shared2{true, 2};
  EXPECT_DOUBLE_EQ(a.chance(own_long), 0.5);  // the prior
  const std::vector<DraftSource> long_run(3, own_long);
  for (int i = 0; i < 20; ++i) a.Record(long_run, 3);
  EXPECT_GT(a.chance(own_long), 0.9);
  EXPECT_GT(a.chance({false, kLong + 2}), 0.9);         // long contexts share a class
  EXPECT_DOUBLE_EQ(a.chance({false, kLong - 1}), 0.5);  // a shorter one does not
  for (int i = 0; i < 30; ++i) a.Record(std::vector<DraftSource>{shared1}, 0);
  EXPECT_LT(a.chance(shared1), 0.1);
  EXPECT_DOUBLE_EQ(a.chance(own1), 0.5);
  // Tokens after the first rejected one were never judged.
  a.Record(std::vector<DraftSource>{own1, shared2}, 0);
  EXPECT_DOUBLE_EQ(a.chance(shared2), 0.5);
  EXPECT_LT(a.chance(own1), 0.5);
}

TEST(DraftAcceptance, TellsAContextsOnlyOrRepeatedFollowerFromOnePickedAmongSeveral) {
  DraftAcceptance a;
  const DraftSource among{false, 2, false, false}, only{false, 2, true, false}, twice{false, 2, false, true};
  for (int i = 0; i < 30; ++i) {
    a.Record(std::vector<DraftSource>{among}, 0);
    a.Record(std::vector<DraftSource>{only}, 1);
  }
  EXPECT_LT(a.chance(among), 0.1);
  EXPECT_GT(a.chance(only), 0.9);
  EXPECT_DOUBLE_EQ(a.chance(twice), 0.5);
  EXPECT_DOUBLE_EQ(a.chance({false, 2, true, true}), 0.5);
}

TEST(ProposeDraft, SaysWhetherEachGuessWasItsContextsOnlyOrRepeatedFollower) {
  // Contexts of two tokens: "1 2" was followed by 3, then by 4 (drafted: the
  // latest of two), "2 4" by 5 once, "4 5" by 6 twice.
  const Tokens h = {1, 2, 3, 4, 5, 6, 1, 2, 4, 5, 6, 1, 2};
  PromptLookupOptions o;
  o.ngram_min = o.ngram_max = 2;
  std::vector<TokenId> draft;
  std::vector<DraftSource> sources;
  ProposeDraft(h, CountsOf(h, 2), nullptr, o, 3, &draft, &sources);
  ASSERT_EQ(draft, (Tokens{4, 5, 6}));
  EXPECT_FALSE(sources[0].unique);
  EXPECT_FALSE(sources[0].repeated);
  EXPECT_TRUE(sources[1].unique);
  EXPECT_FALSE(sources[1].repeated);
  EXPECT_TRUE(sources[2].unique);
  EXPECT_TRUE(sources[2].repeated);
}

// Each draft token holding with chance p given the ones before it.
DraftOffer Geometric(double p, int n) {
  DraftOffer offer;
  for (int k = 1; k <= n; ++k) offer.chance.push_back(std::pow(p, k));
  return offer;
}

TEST(PlanDrafts, TakesLongDraftsAloneAndFewInAFullBatch) {
  // One sequence, cheap rows: a likely draft is taken far, an unlikely one not at all.
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{Geometric(0.9, 8)}, 1, 0.1, 256), std::vector<int>{8});
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{Geometric(0.1, 8)}, 1, 0.3, 256), std::vector<int>{0});
  // p = 0.6, c = 0.3: the k-th token is worth it while 0.6^k (1 + 0.3 rows) > 0.3 tokens.
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{Geometric(0.6, 8)}, 1, 0.3, 256), std::vector<int>{2});
  // A sure first token and an unlikely second: only the first.
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{{{0.9, 0.2}}}, 1, 0.3, 256), std::vector<int>{1});
  // Eight sequences: the same p = 0.6 no longer pays; 0.95 still does, most likely first.
  std::vector<DraftOffer> batch(8, Geometric(0.6, 8));
  EXPECT_EQ(PlanDrafts(batch, 8, 0.3, 256), std::vector<int>(8, 0));
  batch[3] = Geometric(0.95, 8);
  const auto take = PlanDrafts(batch, 8, 0.3, 256);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(take[i] > 0, i == 3) << "sequence " << i;
  // The row limit holds, and what is not on offer is never taken.
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{Geometric(0.9, 8)}, 1, 0.1, 4), std::vector<int>{3});
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{Geometric(0.9, 2)}, 1, 0.1, 256), std::vector<int>{2});
  EXPECT_EQ(PlanDrafts(std::vector<DraftOffer>{DraftOffer{}}, 1, 0.1, 256), std::vector<int>{0});
}

TEST(StepCostModel, FitsFixedAndPerRowCost) {
  StepCostModel m(0.3);
  EXPECT_DOUBLE_EQ(m.RowCost(), 0.3);  // nothing seen: the prior
  for (int i = 0; i < 40; ++i) m.Record(1, 20.0);
  EXPECT_NEAR(m.RowCost(), 0.3, 0.01);  // one size only: still the prior
  // Steps of 18 + 2 ms per row: per row / fixed = 2 / 18 ~ 0.11.
  for (int i = 0; i < 200; ++i) m.Record(1 + i % 9, 18.0 + 2.0 * (1 + i % 9));
  EXPECT_NEAR(m.RowCost(), 2.0 / 18.0, 0.01);
}

}  // namespace
}  // namespace ragd::inference
