#include "server/block/block_sealer.h"

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/block/block_reader.h"
#include "codec/block_format.h"
#include "codec/test_dictionary.h"
#include "server/pool/pool_options.h"
#include "server/pool/pool_registry.h"

namespace dictlog::block {
namespace {

constexpr uint32_t kBlockBytes = 1024;

// A block-mode pool "p" (1 KiB blocks) in a real store; records are written the way
// LogEngine::Append writes them, then handed to the sealer.
class BlockSealerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = FreshTestDir();
    Reopen();
    v1::PoolOptions options;
    options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    options.set_block_bytes(kBlockBytes);
    auto pool = registry_->Create("p", options);
    ASSERT_TRUE(pool.ok()) << pool.status();
    lines_ = codec::SyntheticLogLines(200, 3);
  }

  void Reopen() {
    sealer_.reset();
    registry_.reset();
    store_.reset();
    auto store = store::Store::Open({path_, false});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto registry = pool::PoolRegistry::Load(store_.get(), pool::BuiltinPoolOptions());
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = std::move(*registry);
    sealer_ = std::make_unique<BlockSealer>(store_.get(), &dictionaries_);
  }

  std::shared_ptr<pool::Pool> Pool() { return registry_->Find("p"); }

  // Writes lines_[first-1 .. last-1] as records first..last and hands them over.
  void Append(uint64_t first, uint64_t last) {
    std::vector<store::RecordWrite> writes;
    std::vector<pool::BlockTail::Record> written;
    store::PoolCounters added;
    const uint64_t seq0 = Pool()->AllocateSeqs(last - first + 1);
    ASSERT_EQ(seq0, first);
    for (uint64_t seq = first; seq <= last; ++seq) {
      store::RecordWrite write{Pool()->id(), seq, lines_[seq - 1].size(), "", 0};
      ASSERT_TRUE(codec::EncodeRecord(lines_[seq - 1], {}, &write.value).ok());
      added += {1, write.raw_bytes, write.value.size()};
      written.push_back({seq, write.raw_bytes});
      writes.push_back(std::move(write));
    }
    ASSERT_TRUE(store_->WriteRecords(writes).ok());
    Pool()->AddCounters(added);
    ASSERT_TRUE(sealer_->AddAndSeal(*Pool(), written).ok());
  }

  // Every record 1..n decodes to its line; returns how many are sealed (in indexed
  // blocks: no value of their own).
  size_t CheckAll(uint64_t n) {
    size_t sealed = 0;
    for (uint64_t seq = 1; seq <= n; ++seq) {
      const store::RecordRef ref{Pool()->id(), seq};
      auto value = store_->GetRecord(ref);
      const uint64_t from = value.ok() ? 0 : Pool()->indexed_from_seq();
      EXPECT_TRUE(value.ok() || absl::IsNotFound(value.status())) << seq;
      if (!value.ok()) ++sealed;
      const absl::string_view stored = value.ok() ? absl::string_view(*value) : "";
      auto record = std::move(
          DecodeStored(*store_, dictionaries_, {&ref, 1}, {&stored, 1}, nullptr, {&from, 1})[0]);
      EXPECT_TRUE(record.ok()) << seq << ": " << record.status();
      if (record.ok()) {
        EXPECT_EQ(record->payload, lines_[seq - 1]) << seq;
      }
    }
    return sealed;
  }

  // The pool's indexed blocks.
  std::vector<store::IndexedBlock> Blocks() {
    auto blocks = store_->ScanIndexedBlocks(Pool()->id(), 1, 1, 100000);
    EXPECT_TRUE(blocks.ok()) << blocks.status();
    return blocks.ok() ? *std::move(blocks) : std::vector<store::IndexedBlock>();
  }

  // Stored bytes recomputed from the store: every record value and every block.
  uint64_t StoredBytes(uint64_t n) {
    uint64_t bytes = 0;
    std::vector<store::RecordRef> blocks;
    for (uint64_t seq = 1; seq <= n; ++seq) {
      auto value = store_->GetRecord({Pool()->id(), seq});
      if (value.ok()) bytes += value->size();
      blocks.push_back({Pool()->id(), seq});
    }
    for (auto& block : store_->MultiGetBlocks(blocks)) {
      if (block.ok()) bytes += block->size();
    }
    for (const store::IndexedBlock& block : Blocks()) bytes += block.value.size();
    return bytes;
  }

  std::string path_;
  codec::MapDictionaryLookup dictionaries_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<pool::PoolRegistry> registry_;
  std::unique_ptr<BlockSealer> sealer_;
  std::vector<std::string> lines_;
};

TEST_F(BlockSealerTest, RecordsStaySingleUntilABlocksWorth) {
  Append(1, 3);  // 3 lines of at most 200 bytes: under 1 KiB.
  EXPECT_EQ(CheckAll(3), 0u);
  EXPECT_EQ(Pool()->tail().records(), 3u);
}

TEST_F(BlockSealerTest, SealsBlocksOfAtMostBlockBytesAndEverythingReadsBack) {
  for (uint64_t first = 1; first <= 200; first += 10) Append(first, first + 9);
  const size_t sealed = CheckAll(200);
  EXPECT_GT(sealed, 150u);
  EXPECT_EQ(sealed + Pool()->tail().records(), 200u);
  EXPECT_LT(Pool()->tail().bytes(), kBlockBytes);
  // Each block holds at most kBlockBytes of payload; their seq ranges follow each other.
  size_t blocks = 0;
  uint64_t previous_last = 0;
  for (const store::IndexedBlock& block : Blocks()) {
    ++blocks;
    EXPECT_GT(block.first_seq, previous_last);
    previous_last = block.last_seq;
    auto content = DecodeIndexedBlock(dictionaries_, block);
    ASSERT_TRUE(content.ok()) << content.status();
    size_t bytes = 0;
    for (const codec::IndexedEntry& e : content->entries) bytes += e.payload.size();
    EXPECT_LE(bytes, kBlockBytes);
    EXPECT_GE(content->entries.size(), 2u);
  }
  EXPECT_GT(blocks, 10u);
}

TEST_F(BlockSealerTest, CountersMatchTheStoreAfterSealingAndRestart) {
  for (uint64_t first = 1; first <= 100; first += 20) Append(first, first + 19);
  const store::PoolCounters live = Pool()->counters();
  EXPECT_EQ(live.records, 100u);
  EXPECT_EQ(live.stored_bytes, StoredBytes(100));
  Reopen();
  EXPECT_EQ(Pool()->counters().stored_bytes, StoredBytes(100));
  EXPECT_EQ(Pool()->counters().records, 100u);
}

TEST_F(BlockSealerTest, RecoveredTailIsSealedByLaterAppends) {
  Append(1, 4);
  ASSERT_EQ(Pool()->tail().records(), 4u);
  Reopen();  // The tail lived in memory only.
  EXPECT_EQ(Pool()->tail().records(), 0u);
  ASSERT_TRUE(sealer_->RecoverTail(*Pool()).ok());
  EXPECT_EQ(Pool()->tail().records(), 4u);
  Append(5, 40);
  CheckAll(40);
  // Record 1 was written before the restart and is packed now.
  EXPECT_EQ(store_->GetRecord({Pool()->id(), 1}).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_FALSE(Blocks().empty());
  EXPECT_EQ(Blocks().front().first_seq, 1u);
}

TEST_F(BlockSealerTest, RecoveryLeavesACorruptTailRecordOut) {
  Append(1, 3);
  // Record 2 overwritten by a value that does not parse: a short frame's flags byte
  // and nothing after it.
  store::RecordWrite corrupt{Pool()->id(), 2, 5, std::string("\x03", 1), 0};
  ASSERT_TRUE(store_->WriteRecords({&corrupt, 1}).ok());
  Reopen();
  absl::Status status = sealer_->RecoverTail(*Pool());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Pool()->tail().records(), 2u);  // Records 1 and 3.
}

TEST_F(BlockSealerTest, BlocksUseTheActiveDictionaryAndCountItsRecords) {
  const uint32_t id = 40001;
  const std::string dict = codec::TrainDictionaryForTest(codec::SyntheticLogLines(500, 4),
                                                         4096, id);
  auto decoder = codec::DecoderDictionary::Create(dict);
  ASSERT_TRUE(decoder.ok());
  dictionaries_.Add(*decoder);
  ASSERT_TRUE(registry_->SetActiveDictionaryId("p", id).ok());
  Pool()->SetActiveDictionary(*decoder);
  Append(1, 30);
  CheckAll(30);
  const std::vector<store::IndexedBlock> blocks = Blocks();
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(codec::ParseRecord(blocks[0].value)->dictionary_id, id);
  auto refs = store_->DictionaryReferences(id);
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(refs->records, 30 - Pool()->tail().records());
}

TEST_F(BlockSealerTest, LargeRecordsStaySingle) {
  lines_[0] = std::string(kBlockBytes, 'L');
  Append(1, 1);
  EXPECT_EQ(Pool()->tail().records(), 0u);
  EXPECT_EQ(CheckAll(1), 0u);
}

}  // namespace
}  // namespace dictlog::block
