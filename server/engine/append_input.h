// AppendInput: one record handed to LogEngine::Append (borrowed views). A value type.
#ifndef DICTLOG_SERVER_ENGINE_APPEND_INPUT_H_
#define DICTLOG_SERVER_ENGINE_APPEND_INPUT_H_

#include "absl/strings/string_view.h"

namespace dictlog::engine {

struct AppendInput {
  absl::string_view category;
  absl::string_view payload;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_APPEND_INPUT_H_
