#include "server/block/block_reader.h"

#include <atomic>
#include <map>
#include <thread>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/block_format.h"
#include "codec/test_dictionary.h"

namespace dictlog::block {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kPool = 7;
constexpr uint32_t kDictId = 40000;

// A store holding pool kPool's records 1..6: 1-3 in a block at seq 1 (with a
// dictionary), 4 single, 5-6 in a block at seq 5 (no dictionary).
class BlockReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::Store::Open({FreshTestDir(), false});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    lines_ = codec::SyntheticLogLines(6, 1);
    const std::string dict = codec::TrainDictionaryForTest(
        codec::SyntheticLogLines(400, 2), 4096, kDictId);
    auto decoder = codec::DecoderDictionary::Create(dict);
    ASSERT_TRUE(decoder.ok()) << decoder.status();
    dictionaries_.Add(*decoder);
    auto encoder = codec::EncoderDictionary::Create(dict, 3);
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    encoder_ = *encoder;

    ASSERT_TRUE(store_->WriteRecords(Singles(kPool, 1, 6)).ok());
    Seal(1, {1, 2, 3}, encoder_.get());
    Seal(5, {5, 6}, nullptr);
  }

  void Seal(uint64_t first, const std::vector<uint64_t>& seqs,
            const codec::EncoderDictionary* dict) {
    store::BlockSeal seal;
    seal.pool_id = kPool;
    seal.first_seq = first;
    std::vector<absl::string_view> payloads;
    for (size_t i = 0; i < seqs.size(); ++i) {
      payloads.push_back(lines_[seqs[i] - 1]);
      store::BlockSeal::Entry entry;
      entry.seq = seqs[i];
      ASSERT_TRUE(codec::EncodeBlockEntry(i == 1 ? 2 : 0, seqs[i] - first,
                                          static_cast<uint32_t>(i), &entry.value)
                      .ok());
      seal.entries.push_back(entry);
    }
    codec::EncodeOptions options;
    options.dictionary = dict;
    ASSERT_TRUE(
        codec::EncodeRecord(codec::EncodeBlockContent(payloads), options, &seal.value).ok());
    seal.dictionary_id = dict ? dict->id() : 0;
    ASSERT_TRUE(store_->SealBlock(seal).ok());
  }

  // The line stored at `seq` (lines_ over and over).
  const std::string& Line(uint64_t seq) const { return lines_[(seq - 1) % lines_.size()]; }

  // Single records seqs first..last of pool `pool_id`, without a dictionary.
  std::vector<store::RecordWrite> Singles(uint32_t pool_id, uint64_t first, uint64_t last) {
    std::vector<store::RecordWrite> writes;
    for (uint64_t seq = first; seq <= last; ++seq) {
      store::RecordWrite write{pool_id, seq, Line(seq).size(), "", 0};
      EXPECT_TRUE(codec::EncodeRecord(Line(seq), {}, &write.value).ok());
      writes.push_back(write);
    }
    return writes;
  }

  // The seal of seqs first..last of pool `pool_id` into an indexed block (no dictionary).
  store::BlockSeal IndexedSeal(uint32_t pool_id, uint64_t first, uint64_t last) {
    store::BlockSeal seal;
    seal.pool_id = pool_id;
    seal.first_seq = first;
    seal.last_seq = last;
    seal.indexed = true;
    std::vector<codec::IndexedEntry> entries;
    for (uint64_t seq = first; seq <= last; ++seq) {
      entries.push_back({seq, 0, Line(seq)});
      store::BlockSeal::Entry entry;
      entry.seq = seq;
      seal.entries.push_back(entry);
    }
    EXPECT_TRUE(
        codec::EncodeRecord(codec::EncodeIndexedBlockContent(entries), {}, &seal.value).ok());
    return seal;
  }

  std::vector<absl::StatusOr<codec::DecodedRecord>> Read(std::vector<uint64_t> seqs) {
    std::vector<store::RecordRef> refs;
    for (uint64_t seq : seqs) refs.push_back({kPool, seq});
    std::vector<absl::StatusOr<std::string>> stored = store_->MultiGetRecords(refs);
    values_.clear();
    for (auto& value : stored) values_.push_back(value.ok() ? *value : "");
    std::vector<absl::string_view> views(values_.begin(), values_.end());
    return DecodeStored(*store_, dictionaries_, refs, views);
  }

  std::unique_ptr<store::Store> store_;
  codec::MapDictionaryLookup dictionaries_;
  std::shared_ptr<const codec::EncoderDictionary> encoder_;
  std::vector<std::string> lines_;
  std::vector<std::string> values_;
};

TEST_F(BlockReaderTest, DecodesSinglesAndEntriesInRequestOrder) {
  const std::vector<uint64_t> order = {6, 2, 4, 1, 5, 3, 2};
  std::vector<absl::StatusOr<codec::DecodedRecord>> records = Read(order);
  ASSERT_EQ(records.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(records[i].ok()) << order[i] << ": " << records[i].status();
    EXPECT_EQ(records[i]->payload, lines_[order[i] - 1]) << order[i];
    // Entry 1 of each block was written with category index 2.
    const bool second_entry = order[i] == 2 || order[i] == 6;
    EXPECT_EQ(records[i]->category_index, second_entry ? 2u : 0u) << order[i];
  }
}

// Counts the frames decoded with each dictionary: DecodeBatch asks FindMany for one
// id per frame it decodes.
class CountingLookup : public codec::DictionaryLookup {
 public:
  explicit CountingLookup(const codec::DictionaryLookup& inner) : inner_(inner) {}
  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
    ++frames_[id];
    return inner_.Find(id);
  }
  void FindMany(absl::Span<const uint32_t> ids,
                absl::FunctionRef<void(Dictionaries)> use) const override {
    for (uint32_t id : ids) ++frames_[id];
    inner_.FindMany(ids, use);
  }
  int frames(uint32_t id) const { return frames_[id]; }

 private:
  const codec::DictionaryLookup& inner_;
  mutable std::map<uint32_t, int> frames_;
};

TEST_F(BlockReaderTest, EachBlockIsDecompressedOncePerCall) {
  const std::vector<uint64_t> order = {1, 2, 3, 3, 2, 1, 4};  // Block 1..3 and a single.
  std::vector<store::RecordRef> refs;
  for (uint64_t seq : order) refs.push_back({kPool, seq});
  std::vector<absl::StatusOr<std::string>> stored = store_->MultiGetRecords(refs);
  std::vector<std::string> values;
  for (auto& value : stored) values.push_back(value.ok() ? *value : "");
  std::vector<absl::string_view> views(values.begin(), values.end());
  CountingLookup counting(dictionaries_);
  std::vector<absl::StatusOr<codec::DecodedRecord>> records =
      DecodeStored(*store_, counting, refs, views);
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(records[i].ok()) << order[i] << ": " << records[i].status();
    EXPECT_EQ(records[i]->payload, lines_[order[i] - 1]) << order[i];
  }
  EXPECT_EQ(counting.frames(kDictId), 1);  // The only frame with the dictionary.
}

TEST_F(BlockReaderTest, EntryValuesReallyPointIntoBlocks) {
  auto value = store_->GetRecord({kPool, 3});
  ASSERT_TRUE(value.ok());
  auto view = codec::ParseRecord(*value);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->encoding, codec::Encoding::kBlockEntry);
  auto block = store_->MultiGetBlocks({store::RecordRef{kPool, 1}});
  ASSERT_TRUE(block[0].ok());
  EXPECT_EQ(codec::ParseRecord(*block[0])->dictionary_id, kDictId);
}

TEST_F(BlockReaderTest, UnknownDictionaryOfABlockIsDataLoss) {
  codec::MapDictionaryLookup none;
  store::RecordRef ref{kPool, 2};
  auto value = store_->GetRecord(ref);
  ASSERT_TRUE(value.ok());
  absl::StatusOr<codec::DecodedRecord> record = DecodeOne(*store_, none, ref, *value);
  EXPECT_EQ(record.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(record.status().message().find(std::to_string(kDictId)), std::string::npos)
      << record.status();
}

TEST_F(BlockReaderTest, MissingBlockOrEntryOrBadBackIsDataLoss) {
  std::string entry;
  ASSERT_TRUE(codec::EncodeBlockEntry(0, 2, 0, &entry).ok());  // Block at seq 2: none.
  EXPECT_EQ(DecodeOne(*store_, dictionaries_, {kPool, 4}, entry).status().code(),
            StatusCode::kDataLoss);
  entry.clear();
  ASSERT_TRUE(codec::EncodeBlockEntry(0, 3, 9, &entry).ok());  // Block at 1 has 3.
  EXPECT_EQ(DecodeOne(*store_, dictionaries_, {kPool, 4}, entry).status().code(),
            StatusCode::kDataLoss);
  entry.clear();
  ASSERT_TRUE(codec::EncodeBlockEntry(0, 9, 0, &entry).ok());  // Before seq 1.
  EXPECT_EQ(DecodeOne(*store_, dictionaries_, {kPool, 4}, entry).status().code(),
            StatusCode::kDataLoss);
}

TEST_F(BlockReaderTest, CorruptBlockIsDataLossNeverGarbage) {
  auto block = store_->MultiGetBlocks({store::RecordRef{kPool, 5}});
  ASSERT_TRUE(block[0].ok());
  std::string corrupt = *block[0];
  corrupt.resize(corrupt.size() - 3);
  store::BlockSeal reseal;
  reseal.pool_id = kPool;
  reseal.first_seq = 5;
  reseal.value = corrupt;
  ASSERT_TRUE(store_->SealBlock(reseal).ok());  // No entries: only the block changes.
  std::vector<absl::StatusOr<codec::DecodedRecord>> records = Read({5, 6, 4});
  EXPECT_EQ(records[0].status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(records[1].status().code(), StatusCode::kDataLoss);
  ASSERT_TRUE(records[2].ok());  // A single record is unaffected.
  EXPECT_EQ(records[2]->payload, lines_[3]);
}

// Decompression bombs through the block path: a block whose frame declares no content
// size or more than codec::kMaxRecordBytes fails its entries with DATA_LOSS.
TEST_F(BlockReaderTest, BlockFrameWithUnknownOrOversizedSizeIsDataLoss) {
  std::string oversized = "\x01\xE0";  // Single segment, 8-byte content size.
  const uint64_t declared = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i) oversized += static_cast<char>((declared >> (8 * i)) & 0xff);
  oversized += std::string("\x01\x00\x00", 3);
  // Descriptor 0x00: no content size field, not single segment, then a window byte.
  const std::string unknown = std::string("\x01\x00\x50\x01\x00\x00", 6);
  for (const std::string& bomb : {oversized, unknown}) {
    store::BlockSeal reseal;
    reseal.pool_id = kPool;
    reseal.first_seq = 5;
    reseal.value = bomb;
    ASSERT_TRUE(store_->SealBlock(reseal).ok());
    std::vector<absl::StatusOr<codec::DecodedRecord>> records = Read({5, 6, 1});
    EXPECT_EQ(records[0].status().code(), StatusCode::kDataLoss) << records[0].status();
    EXPECT_NE(records[0].status().message().find("content size"), std::string::npos)
        << records[0].status();
    EXPECT_EQ(records[1].status().code(), StatusCode::kDataLoss);
    ASSERT_TRUE(records[2].ok());  // Another block is unaffected.
  }
}

// Records of indexed blocks read through a DecodedBlockCache: a block is kept on its
// second read (admission), then answers from memory, whole and for every seq of its
// range; the store is no longer needed for it (shown by deleting the pool's data,
// which callers would have refused to read).
TEST_F(BlockReaderTest, IndexedBlocksReadAgainComeFromTheCache) {
  constexpr uint32_t kIndexedPool = 10;
  ASSERT_TRUE(store_->WriteRecords(Singles(kIndexedPool, 1, 6)).ok());
  ASSERT_TRUE(store_->SealBlock(IndexedSeal(kIndexedPool, 1, 3)).ok());
  ASSERT_TRUE(store_->SealBlock(IndexedSeal(kIndexedPool, 4, 6)).ok());
  DecodedBlockCache cache(1 << 20);
  auto read = [&](std::vector<uint64_t> seqs) {
    std::vector<store::RecordRef> refs;
    for (uint64_t seq : seqs) refs.push_back({kIndexedPool, seq});
    const std::vector<absl::string_view> values(seqs.size(), "");
    const std::vector<uint64_t> from(seqs.size(), 1);  // All sealed: indexed from seq 1.
    return DecodeStored(*store_, dictionaries_, refs, values, nullptr, from, &cache);
  };
  for (int round = 0; round < 2; ++round) {  // Offered twice: admitted.
    std::vector<absl::StatusOr<codec::DecodedRecord>> records = read({2, 5});
    ASSERT_TRUE(records[0].ok() && records[1].ok()) << round;
    EXPECT_EQ(records[0]->payload, Line(2));
    EXPECT_EQ(records[1]->payload, Line(5));
  }
  EXPECT_EQ(cache.blocks(), 2u);
  ASSERT_TRUE(store_->DeletePoolData(kIndexedPool).ok());
  std::vector<absl::StatusOr<codec::DecodedRecord>> cached = read({1, 3, 4, 6, 7});
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(cached[i].ok()) << i << ": " << cached[i].status();
  }
  EXPECT_EQ(cached[0]->payload, Line(1));
  EXPECT_EQ(cached[1]->payload, Line(3));
  EXPECT_EQ(cached[2]->payload, Line(4));
  EXPECT_EQ(cached[3]->payload, Line(6));
  EXPECT_EQ(cached[4].status().code(), StatusCode::kNotFound);  // Past every block.
  // Without the cache the store has nothing left.
  std::vector<store::RecordRef> refs = {{kIndexedPool, 1}};
  const std::vector<absl::string_view> values = {""};
  const std::vector<uint64_t> from = {1};
  EXPECT_EQ(DecodeStored(*store_, dictionaries_, refs, values, nullptr, from)[0].status().code(),
            StatusCode::kNotFound);
}

// ScanPool reads both families from one snapshot: a block sealed after the snapshot
// (its records deleted from the records family in the same batch) neither hides the
// records from the scan nor shows them twice. Read at two moments, the blocks read
// would find no block and the records read no records.
TEST_F(BlockReaderTest, ScanPoolSeesOneMomentWhileATailIsSealed) {
  constexpr uint32_t kIndexedPool = 8;
  ASSERT_TRUE(store_->WriteRecords(Singles(kIndexedPool, 1, 4)).ok());
  const std::unique_ptr<store::ReadSnapshot> before_seal = store_->Snapshot();
  ASSERT_TRUE(store_->SealBlock(IndexedSeal(kIndexedPool, 1, 3)).ok());

  auto payloads = [&](const std::vector<store::ScannedRecord>& scanned) {
    std::map<uint64_t, std::string> out;
    for (const store::ScannedRecord& record : scanned) {
      absl::StatusOr<codec::DecodedRecord> decoded =
          codec::DecodeRecord(record.value, dictionaries_);
      EXPECT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_TRUE(out.emplace(record.seq, decoded.ok() ? decoded->payload : "").second)
          << "seq " << record.seq << " twice";
    }
    return out;
  };
  const std::map<uint64_t, std::string> want = {
      {2, lines_[1]}, {3, lines_[2]}, {4, lines_[3]}};
  absl::StatusOr<std::vector<store::ScannedRecord>> old_view =
      ScanPool(*store_, dictionaries_, kIndexedPool, 1, 2, 100, SIZE_MAX, before_seal.get());
  ASSERT_TRUE(old_view.ok()) << old_view.status();
  EXPECT_EQ(payloads(*old_view), want);
  // The same scan now: records 2-3 come from the block (a call ends with it), 4 after.
  absl::StatusOr<std::vector<store::ScannedRecord>> now =
      ScanPool(*store_, dictionaries_, kIndexedPool, 1, 2, 100);
  ASSERT_TRUE(now.ok()) << now.status();
  absl::StatusOr<std::vector<store::ScannedRecord>> rest =
      ScanPool(*store_, dictionaries_, kIndexedPool, 1, 4, 100);
  ASSERT_TRUE(rest.ok()) << rest.status();
  now->insert(now->end(), rest->begin(), rest->end());
  EXPECT_EQ(payloads(*now), want);
}

// The same through ScanPool's own snapshot, with seals racing the scans: each round
// writes a tail of 3 records, then one thread seals it into an indexed block while
// another scans from its first seq. Every scan sees all 3 records once, whichever
// side of the seal it read. Bounded: 3000 rounds.
TEST_F(BlockReaderTest, ScanPoolRacingSealsNeverMissesRecords) {
  constexpr uint32_t kIndexedPool = 9;
  constexpr int kRounds = 3000;
  int short_scans = 0;
  for (int round = 0; round < kRounds; ++round) {
    const uint64_t first = 1 + 3 * static_cast<uint64_t>(round);
    const store::BlockSeal seal = IndexedSeal(kIndexedPool, first, first + 2);
    ASSERT_TRUE(store_->WriteRecords(Singles(kIndexedPool, first, first + 2)).ok());
    std::atomic<bool> go{false};
    std::thread sealer([&] {
      while (!go.load()) {
      }
      EXPECT_TRUE(store_->SealBlock(seal).ok());
    });
    go.store(true);
    absl::StatusOr<std::vector<store::ScannedRecord>> scanned =
        ScanPool(*store_, dictionaries_, kIndexedPool, 1, first, 100);
    sealer.join();
    ASSERT_TRUE(scanned.ok()) << scanned.status();
    // Before the seal: the 3 tail records; after it: the block's 3, where a call ends.
    if (scanned->size() != 3) ++short_scans;
  }
  EXPECT_EQ(short_scans, 0) << "of " << kRounds << " scans";
}

}  // namespace
}  // namespace dictlog::block
