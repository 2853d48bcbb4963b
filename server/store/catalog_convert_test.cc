// Every field of each API message survives the trip through the catalog's message
// (fields are filled by reflection, so a field added to proto/dictlog.proto and not to
// catalog.proto and catalog_convert.cc fails here), and each catalog message keeps the
// API message's field numbers and types (old stores' bytes parse).
#include "server/store/catalog_convert.h"

#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Sets every field of `message` to a value other than its default, distinct per field
// (two values in a repeated one).
void FillEveryField(Message* message) {
  const auto* descriptor = message->GetDescriptor();
  const auto* reflection = message->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const int n = field->number() + 1;
    if (field->is_repeated()) {
      ASSERT_EQ(field->cpp_type(), FieldDescriptor::CPPTYPE_UINT64)
          << "unhandled repeated type of " << field->full_name();
      reflection->AddUInt64(message, field, n);
      reflection->AddUInt64(message, field, n + 100);
      continue;
    }
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: reflection->SetInt32(message, field, -n); break;
      case FieldDescriptor::CPPTYPE_INT64: reflection->SetInt64(message, field, -n); break;
      case FieldDescriptor::CPPTYPE_UINT32: reflection->SetUInt32(message, field, n); break;
      case FieldDescriptor::CPPTYPE_UINT64: reflection->SetUInt64(message, field, n); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: reflection->SetDouble(message, field, n + 0.5); break;
      case FieldDescriptor::CPPTYPE_BOOL: reflection->SetBool(message, field, true); break;
      case FieldDescriptor::CPPTYPE_STRING:
        reflection->SetString(message, field, "s" + std::to_string(n));
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* values = field->enum_type();
        reflection->SetEnum(message, field, values->value(values->value_count() - 1));
        break;
      }
      default: FAIL() << "unhandled type of " << field->full_name();
    }
  }
}

template <typename Api>
void ExpectRoundTrip() {
  Api original;
  FillEveryField(&original);
  const Api back = FromCatalog(ToCatalog(original));
  EXPECT_EQ(back.SerializeAsString(), original.SerializeAsString())
      << original.DebugString() << "\nvs\n" << back.DebugString();
  // Same numbers and wire types: the catalog message parses the API message's bytes.
  const auto catalog = ToCatalog(original);
  EXPECT_EQ(catalog.SerializeAsString(), original.SerializeAsString());
}

TEST(CatalogConvertTest, PoolOptionsRoundTrip) { ExpectRoundTrip<v1::PoolOptions>(); }

TEST(CatalogConvertTest, UnsetPoolOptionsStayUnset) {
  v1::PoolOptions partial;
  partial.set_block_bytes(2048);
  const storage::PoolOptions catalog = ToCatalog(partial);
  EXPECT_FALSE(catalog.has_compression_level());
  EXPECT_FALSE(catalog.has_storage_mode());
  EXPECT_EQ(catalog.block_bytes(), 2048u);
}

TEST(CatalogConvertTest, DictionaryEvaluationRoundTrip) {
  ExpectRoundTrip<v1::DictionaryEvaluation>();
}

TEST(CatalogConvertTest, RecompressStatusRoundTrip) { ExpectRoundTrip<v1::RecompressStatus>(); }

TEST(CatalogConvertTest, CatalogFieldsMatchTheApisByNumberAndType) {
  const std::pair<const google::protobuf::Descriptor*, const google::protobuf::Descriptor*>
      pairs[] = {
          {v1::PoolOptions::descriptor(), storage::PoolOptions::descriptor()},
          {v1::DictionaryEvaluation::descriptor(), storage::DictionaryEvaluation::descriptor()},
          {v1::RecompressStatus::descriptor(), storage::RecompressStatus::descriptor()},
      };
  for (const auto& [api, catalog] : pairs) {
    ASSERT_EQ(api->field_count(), catalog->field_count()) << api->full_name();
    for (int i = 0; i < api->field_count(); ++i) {
      const FieldDescriptor* field = api->field(i);
      const FieldDescriptor* stored = catalog->FindFieldByNumber(field->number());
      ASSERT_NE(stored, nullptr) << field->full_name();
      EXPECT_EQ(stored->name(), field->name());
      EXPECT_EQ(stored->type(), field->type()) << field->full_name();
      EXPECT_EQ(stored->has_presence(), field->has_presence()) << field->full_name();
      EXPECT_EQ(stored->is_repeated(), field->is_repeated()) << field->full_name();
    }
  }
}

}  // namespace
}  // namespace dictlog::store
