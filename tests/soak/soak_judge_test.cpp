// The soak's judge (tests/soak/judge.h): which columns count as grown.
#include <gtest/gtest.h>

#include "judge.h"

namespace cordon::soak {
namespace {

Sample sample(std::int64_t fds, std::int64_t cgroups, std::int64_t rss_kb) {
  Sample s;
  s.counts = {{"fds", fds}, {"cg:memory", cgroups}};
  s.rss_kb = rss_kb;
  return s;
}

TEST(SoakJudge, FlatSamplesHaveNoLeak) {
  EXPECT_TRUE(leaks({sample(5, 2, 1000), sample(5, 2, 1000), sample(5, 2, 1000)}).empty());
}

TEST(SoakJudge, AnyGrowthOfACountIsALeakNamingItsColumn) {
  const auto found = leaks({sample(5, 2, 1000), sample(5, 3, 1000), sample(6, 2, 1000)});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].column, "fds");
  EXPECT_EQ(found[0].first, 5);
  EXPECT_EQ(found[0].last, 6);
}

// Growth between samples that has gone by the last one is teardown still in flight,
// not a leak; a count that shrank is not one either.
TEST(SoakJudge, OnlyTheLastSampleAgainstTheFirstCounts) {
  EXPECT_TRUE(leaks({sample(5, 2, 1000), sample(9, 7, 1000), sample(4, 2, 1000)}).empty());
}

TEST(SoakJudge, RssWarmUpIsAllowedAndLaterGrowthIsNot) {
  if (!kRssJudged) GTEST_SKIP() << "RSS is not judged under a sanitizer";
  // Samples 0..4: the reference is sample 1 (a quarter of the way).
  std::vector<Sample> s = {sample(5, 2, 1000), sample(5, 2, 20000), sample(5, 2, 20500),
                           sample(5, 2, 21000), sample(5, 2, 20000 + kRssToleranceKb)};
  EXPECT_TRUE(leaks(s).empty());
  s.back().rss_kb += 1;
  const auto found = leaks(s);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].column, "rss_kb");
}

TEST(SoakJudge, TheRssReferenceIsAQuarterOfTheWayAndNeverTheFirst) {
  EXPECT_EQ(rss_reference(2), 1u);
  EXPECT_EQ(rss_reference(5), 1u);
  EXPECT_EQ(rss_reference(9), 2u);
  EXPECT_EQ(rss_reference(12), 2u);
}

TEST(SoakJudge, TheTableHasAColumnPerCount) {
  const std::string t = table({sample(5, 2, 1000)});
  EXPECT_NE(t.find("| runs | s | fds | cg:memory | rss_kb |"), std::string::npos) << t;
  EXPECT_NE(t.find("| 0 | 0 | 5 | 2 | 1000 |"), std::string::npos) << t;
}

}  // namespace
}  // namespace cordon::soak
