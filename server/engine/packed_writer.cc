#include "server/engine/packed_writer.h"

#include <utility>

namespace dictlog::engine {

uint32_t PackedWriter::AddSource(std::string category, uint32_t dictionary_id,
                                 uint32_t dictionary_check, bool payload) {
  v1::PackedSource* source = out_->add_sources();
  source->set_category(std::move(category));
  source->set_dictionary_id(payload ? 0 : dictionary_id);
  source->set_dictionary_check(payload ? 0 : dictionary_check);
  source->set_payload(payload);
  return static_cast<uint32_t>(out_->sources_size() - 1);
}

void PackedWriter::AddResult(uint32_t source, absl::string_view bytes) {
  out_->add_sizes(static_cast<uint32_t>(bytes.size()));
  out_->add_source_indexes(source);
  out_->mutable_data()->append(bytes.data(), bytes.size());
}

void PackedWriter::AddResult(uint32_t source, absl::string_view head,
                             absl::string_view tail) {
  out_->add_sizes(static_cast<uint32_t>(head.size() + tail.size()));
  out_->add_source_indexes(source);
  out_->mutable_data()->append(head.data(), head.size()).append(tail.data(), tail.size());
}

void PackedWriter::AddError(size_t index, const absl::Status& status) {
  v1::PackedError* error = out_->add_errors();
  error->set_index(static_cast<uint32_t>(index));
  error->mutable_error()->set_code(static_cast<int>(status.code()));
  error->mutable_error()->set_message(std::string(status.message()));
}

void PackedWriter::Reserve(size_t bytes) {
  std::string& data = *out_->mutable_data();
  data.reserve(data.size() + bytes);
}

}  // namespace dictlog::engine
