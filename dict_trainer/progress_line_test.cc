#include "dict_trainer/progress_line.h"

#include <sstream>

#include "gtest/gtest.h"

namespace dictlog::trainer {
namespace {

TEST(ProgressLineTest, LiveRewritesOneLineAndBlanksLeftovers) {
  std::ostringstream out;
  ProgressLine progress(out, /*live=*/true);
  progress.Show("train", "train 10%");
  progress.Show("train", "train 100%");
  progress.Show("evaluate", "eval");
  progress.Finish();
  EXPECT_EQ(out.str(), "\rtrain 10%\rtrain 100%\reval      \n");
}

TEST(ProgressLineTest, NotLivePrintsTheLastTextOfEachStage) {
  std::ostringstream out;
  ProgressLine progress(out, /*live=*/false);
  progress.Show("train", "train 0%");
  progress.Show("train", "train 100%");
  EXPECT_EQ(out.str(), "");
  progress.Show("filter", "filter 50%");
  EXPECT_EQ(out.str(), "train 100%\n");
  progress.Finish();
  EXPECT_EQ(out.str(), "train 100%\nfilter 50%\n");
}

TEST(ProgressLineTest, FinishWithoutShowPrintsNothingAndShowStartsAgain) {
  std::ostringstream out;
  ProgressLine progress(out, /*live=*/true);
  progress.Finish();
  EXPECT_EQ(out.str(), "");
  progress.Show("read", "read 1 file");
  progress.Finish();
  progress.Show("train", "train");
  progress.Finish();
  EXPECT_EQ(out.str(), "\rread 1 file\n\rtrain\n");
}

}  // namespace
}  // namespace dictlog::trainer
