#include "retrieval/vector_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "retrieval/int8_rows.h"
#include "tests/support/temp_dir.h"

namespace ragd::retrieval {
namespace {

constexpr int kDim = 16;

std::vector<float> RandomUnitVectors(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n * kDim);
  for (size_t i = 0; i < n; ++i) {
    float norm = 0;
    for (int j = 0; j < kDim; ++j) {
      v[i * kDim + j] = normal(rng);
      norm += v[i * kDim + j] * v[i * kDim + j];
    }
    for (int j = 0; j < kDim; ++j) v[i * kDim + j] /= std::sqrt(norm);
  }
  return v;
}

std::vector<int64_t> Ids(size_t n, int64_t first) {
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = first + static_cast<int64_t>(i) * 3;  // sparse, like chunk ids
  return ids;
}

std::span<const float> Row(const std::vector<float>& v, size_t i) { return {v.data() + i * kDim, kDim}; }

class VectorIndexTest : public ::testing::TestWithParam<std::string> {
 protected:
  VectorIndexOptions Options() const {
    VectorIndexOptions o;
    o.kind = GetParam();
    return o;
  }
};

TEST_P(VectorIndexTest, FindsEachVectorItself) {
  auto index = VectorIndex::Create(kDim, Options());
  ASSERT_TRUE(index.ok());
  auto data = RandomUnitVectors(500, 1);
  auto ids = Ids(500, 10);
  ASSERT_TRUE((*index)->Add(ids, data).ok());
  EXPECT_EQ((*index)->size(), 500);
  for (size_t i = 0; i < 500; i += 37) {
    auto hits = (*index)->Search(Row(data, i), 5);
    ASSERT_TRUE(hits.ok());
    ASSERT_EQ(hits->size(), 5u);
    EXPECT_EQ((*hits)[0].id, ids[i]);
    EXPECT_NEAR((*hits)[0].score, 1.0, 1e-5);
    EXPECT_GE((*hits)[0].score, (*hits)[1].score);
  }
}

TEST_P(VectorIndexTest, SaveAndLoadGiveTheSameResults) {
  ragd::testing::TempDir dir;
  const std::string path = dir.path() + "/v.faiss";
  auto index = VectorIndex::Create(kDim, Options());
  auto data = RandomUnitVectors(300, 2);
  ASSERT_TRUE((*index)->Add(Ids(300, 1), data).ok());
  ASSERT_TRUE((*index)->Save(path).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto loaded = VectorIndex::Load(path, Options());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->Summary(), (*index)->Summary());
  auto queries = RandomUnitVectors(10, 3);
  for (size_t q = 0; q < 10; ++q) {
    auto a = (*index)->Search(Row(queries, q), 10);
    auto b = (*loaded)->Search(Row(queries, q), 10);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].id, (*b)[i].id);
  }
}

TEST_P(VectorIndexTest, RemoveDropsOnlyThoseIds) {
  auto index = VectorIndex::Create(kDim, Options());
  auto data = RandomUnitVectors(100, 4);
  auto ids = Ids(100, 5);
  ASSERT_TRUE((*index)->Add(ids, data).ok());
  std::vector<int64_t> gone = {ids[7], ids[8], 999999};  // an absent id is ignored
  ASSERT_TRUE((*index)->Remove(gone).ok());
  EXPECT_EQ((*index)->size(), 98);
  auto hits = (*index)->Search(Row(data, 7), 3);
  ASSERT_TRUE(hits.ok());
  for (const auto& h : *hits) {
    EXPECT_NE(h.id, ids[7]);
    EXPECT_NE(h.id, ids[8]);
  }
  auto self = (*index)->Search(Row(data, 9), 1);
  ASSERT_TRUE(self.ok());
  EXPECT_EQ((*self)[0].id, ids[9]);
  // A removed id may be added again.
  EXPECT_TRUE((*index)->Add(std::vector<int64_t>{ids[7]}, Row(data, 7)).ok());
}

TEST_P(VectorIndexTest, SearchAmongIsExactOverTheSubset) {
  auto index = VectorIndex::Create(kDim, Options());
  auto data = RandomUnitVectors(200, 5);
  auto ids = Ids(200, 0);
  ASSERT_TRUE((*index)->Add(ids, data).ok());
  std::vector<int64_t> subset = {ids[3], ids[50], ids[120], 424242};
  auto hits = (*index)->SearchAmong(Row(data, 50), subset, 2);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].id, ids[50]);
  EXPECT_NE((*hits)[1].id, 424242);
}

INSTANTIATE_TEST_SUITE_P(Kinds, VectorIndexTest, ::testing::Values("flat", "hnsw"));

// The flat index scans an int8 copy and rescores what its error bound cannot
// rule out: results must equal a brute-force ranking, also among clusters of
// near-duplicates (scores closer than the int8 error), after removals, after
// adding again and after a reload.
TEST(FlatIndexTest, SearchIsExactAgainstBruteForce) {
  constexpr int kDimWide = 384;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> data;
  auto push_unit = [&](std::vector<float> v) {
    float norm = 0;
    for (float f : v) norm += f * f;
    for (float& f : v) data.push_back(f / std::sqrt(norm));
  };
  std::vector<float> base(kDimWide);
  for (int cluster = 0; cluster < 40; ++cluster) {
    for (float& f : base) f = normal(rng);
    for (int member = 0; member < 50; ++member) {
      std::vector<float> v = base;
      for (float& f : v) f += 1e-3f * normal(rng);  // near-duplicates: scores differ by ~1e-6
      push_unit(v);
    }
  }
  const size_t n = data.size() / kDimWide;
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = 10 + 2 * static_cast<int64_t>(i);
  auto index = VectorIndex::Create(kDimWide, {});
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE((*index)->Add(ids, data).ok());
  std::vector<bool> present(n, true);

  auto check = [&](const VectorIndex& idx, const std::string& when) {
    for (int q = 0; q < 20; ++q) {
      std::vector<float> query(data.begin() + static_cast<ptrdiff_t>((q * 97 % n) * kDimWide),
                               data.begin() + static_cast<ptrdiff_t>((q * 97 % n + 1) * kDimWide));
      for (float& f : query) f += 0.05f * normal(rng);
      std::vector<std::pair<double, int64_t>> want;
      for (size_t i = 0; i < n; ++i) {
        if (!present[i]) continue;
        double dot = 0;
        for (int j = 0; j < kDimWide; ++j) dot += static_cast<double>(data[i * kDimWide + j]) * query[j];
        want.emplace_back(dot, ids[i]);
      }
      std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      auto hits = idx.Search(query, 30);
      ASSERT_TRUE(hits.ok());
      ASSERT_EQ(hits->size(), 30u) << when;
      for (size_t r = 0; r < hits->size(); ++r) {
        // Same id, or a different one whose exact score ties within float rounding.
        EXPECT_NEAR((*hits)[r].score, want[r].first, 1e-5) << when << " query " << q << " rank " << r;
        if ((*hits)[r].id != want[r].second) {
          auto it = std::find_if(want.begin(), want.end(),
                                 [&](const auto& w) { return w.second == (*hits)[r].id; });
          ASSERT_NE(it, want.end()) << when;
          EXPECT_NEAR(it->first, want[r].first, 1e-5) << when << " query " << q << " rank " << r;
        }
      }
    }
  };
  check(**index, "fresh");
  std::vector<int64_t> gone;
  for (size_t i = 0; i < n; i += 3) {
    gone.push_back(ids[i]);
    present[i] = false;
  }
  ASSERT_TRUE((*index)->Remove(gone).ok());
  check(**index, "after removal");
  ASSERT_TRUE((*index)
                  ->Add(std::vector<int64_t>{ids[0]},
                        std::span<const float>(data.data(), static_cast<size_t>(kDimWide)))
                  .ok());
  present[0] = true;
  check(**index, "after adding again");
  ragd::testing::TempDir dir;
  ASSERT_TRUE((*index)->Save(dir.path() + "/flat.faiss").ok());
  auto loaded = VectorIndex::Load(dir.path() + "/flat.faiss", {});
  ASSERT_TRUE(loaded.ok());
  check(**loaded, "after reload");
}

TEST(VectorIndexErrorsTest, RejectsBadInput) {
  VectorIndexOptions o;
  EXPECT_FALSE(VectorIndex::Create(0, o).ok());
  o.kind = "ivf";
  EXPECT_EQ(VectorIndex::Create(8, o).status().code(), StatusCode::kInvalidArgument);
  auto index = VectorIndex::Create(kDim, {});
  std::vector<int64_t> ids = {1, 2};
  EXPECT_FALSE((*index)->Add(ids, RandomUnitVectors(1, 1)).ok());  // too few floats
  ASSERT_TRUE((*index)->Add(ids, RandomUnitVectors(2, 1)).ok());
  EXPECT_EQ((*index)->Add(std::vector<int64_t>{2}, RandomUnitVectors(1, 2)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE((*index)->Search(std::vector<float>(3), 1).ok());
  auto empty = VectorIndex::Create(kDim, {});
  auto hits = (*empty)->Search(RandomUnitVectors(1, 3), 5);
  ASSERT_TRUE(hits.ok());
  EXPECT_TRUE(hits->empty());
}

TEST(VectorIndexErrorsTest, LoadReportsMissingCorruptAndOtherKind) {
  ragd::testing::TempDir dir;
  EXPECT_EQ(VectorIndex::Load(dir.path() + "/none", {}).status().code(), StatusCode::kNotFound);
  std::ofstream(dir.path() + "/junk") << "not an index";
  EXPECT_EQ(VectorIndex::Load(dir.path() + "/junk", {}).status().code(), StatusCode::kCorrupt);
  auto flat = VectorIndex::Create(kDim, {});
  ASSERT_TRUE((*flat)->Save(dir.path() + "/flat").ok());
  VectorIndexOptions hnsw;
  hnsw.kind = "hnsw";
  EXPECT_EQ(VectorIndex::Load(dir.path() + "/flat", hnsw).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ragd::retrieval

namespace ragd::retrieval {
namespace {

// The int8 scan's error bound holds for every row, with both kernels, for
// dims that do and do not fill whole 64-byte blocks.
TEST(Int8RowsTest, BoundHoldsForEveryRow) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal;
  for (int dim : {8, 100, 384}) {
    for (bool vnni : {true, false}) {
      const size_t n = 500;
      std::vector<float> rows(n * static_cast<size_t>(dim));
      for (float& f : rows) f = normal(rng);
      rows[3 * static_cast<size_t>(dim)] = 40.f;  // one outlier coordinate coarsens that row's codes
      Int8Rows int8(dim, vnni);
      int8.Append(rows.data(), n);
      ASSERT_EQ(int8.size(), n);
      for (int q = 0; q < 5; ++q) {
        std::vector<float> query(static_cast<size_t>(dim));
        for (float& f : query) f = normal(rng);
        std::vector<float> approx(n), bound(n);
        int8.Scores(query.data(), approx.data(), bound.data());
        for (size_t i = 0; i < n; ++i) {
          double exact = 0;
          for (int j = 0; j < dim; ++j) exact += static_cast<double>(rows[i * dim + j]) * query[j];
          EXPECT_LE(std::abs(exact - approx[i]), bound[i])
              << "dim " << dim << " vnni " << vnni << " row " << i;
          if (i != 3) {  // |q| |v| is about dim here; a bound near that would prune nothing
            EXPECT_LT(bound[i], 0.05 * dim) << "dim " << dim;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ragd::retrieval
