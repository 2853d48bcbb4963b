#include "server/dictionary/dictionary_mode.h"

#include "gtest/gtest.h"

namespace dictlog::dictionary {
namespace {

TEST(DictionaryModeTest, AnExplicitOptionWins) {
  ModeInputs in;
  in.live_dictionaries = 10000;
  in.option = v1::DICTIONARY_MODE_FULL;
  EXPECT_EQ(ChooseDictionaryMode(in).mode, v1::DICTIONARY_MODE_FULL);
  in.live_dictionaries = 1;
  in.option = v1::DICTIONARY_MODE_COMPACT;
  EXPECT_EQ(ChooseDictionaryMode(in).mode, v1::DICTIONARY_MODE_COMPACT);
}

TEST(DictionaryModeTest, AutoKeepsFullWhileFewDictionariesAreLive) {
  ModeInputs in;
  in.live_dictionaries = 64;
  const ModeChoice choice = ChooseDictionaryMode(in);
  EXPECT_EQ(choice.mode, v1::DICTIONARY_MODE_FULL);
  EXPECT_NE(choice.reason.find("64 live dictionaries <= 64"), std::string::npos)
      << choice.reason;
  in.option = v1::DICTIONARY_MODE_UNSPECIFIED;  // Pools from before the option: auto.
  EXPECT_EQ(ChooseDictionaryMode(in).mode, v1::DICTIONARY_MODE_FULL);
}

TEST(DictionaryModeTest, AutoWithManyDictionariesDependsOnTheReadShare) {
  ModeInputs in;
  in.live_dictionaries = 1000;
  in.all_reads = 64000;
  in.pool_reads = 1000;  // Exactly 1/64 of reads: hot enough.
  EXPECT_EQ(ChooseDictionaryMode(in).mode, v1::DICTIONARY_MODE_FULL);
  in.pool_reads = 999;
  const ModeChoice cold = ChooseDictionaryMode(in);
  EXPECT_EQ(cold.mode, v1::DICTIONARY_MODE_COMPACT);
  EXPECT_NE(cold.reason.find("1000 live dictionaries > 64"), std::string::npos)
      << cold.reason;
  in.all_reads = 0;  // Nothing read yet: every pool is cold.
  in.pool_reads = 0;
  EXPECT_EQ(ChooseDictionaryMode(in).mode, v1::DICTIONARY_MODE_COMPACT);
}

}  // namespace
}  // namespace dictlog::dictionary
