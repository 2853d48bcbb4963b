// ReadScope: what a read answers a token limited to categories, so that it never
// learns a name it may not read (issue 16): a record of a forbidden category and an
// absent record or pool both read as NOT_FOUND "no record <id>" (the id is the
// caller's own input), a category scan of an allowed category without a pool reads
// as empty, and GetFrame (exact frame sizes: a compression side channel) needs a token
// allowed every category of the record's pool, refused otherwise with one generic
// PERMISSION_DENIED that names nothing. Tokens without category limits get the
// engine's answers unchanged.
//
// Thread safety: free functions over their arguments.
#ifndef DICTLOG_SERVER_SERVICE_READ_SCOPE_H_
#define DICTLOG_SERVER_SERVICE_READ_SCOPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/dictlog.pb.h"
#include "server/auth/token_file.h"

namespace dictlog::service {

// The answer to reading record `id` (Get, one MultiGet result): `record` unless
// `grant` is limited and the record is forbidden, absent, or its pool is.
absl::StatusOr<v1::Record> VisibleRecord(const auth::Grant& grant, absl::string_view id,
                                         absl::StatusOr<v1::Record> record);
// The same for one MultiGetFrames result.
absl::StatusOr<v1::RecordFrame> VisibleFrame(const auth::Grant& grant, absl::string_view id,
                                             absl::StatusOr<v1::RecordFrame> record);

// The status of a category scan: NOT_FOUND (no pool for the category) is an empty
// scan to a limited grant.
absl::Status VisibleScanStatus(const auth::Grant& grant, absl::Status status);

// OK if `grant` may see exact frame sizes of a pool holding `pool_categories`
// (LogEngine::PoolCategoriesOf, whose NOT_FOUND counts as not allowed); else the
// generic PERMISSION_DENIED. INVALID_ARGUMENT (a malformed id) is passed on. Also
// decides whether MultiGetFrames may send a pool's frames (else it sends payloads) and
// whether GetDictionary may send a pool's dictionary (trained on all its categories).
absl::Status RequireWholePool(const auth::Grant& grant,
                              const absl::StatusOr<std::vector<std::string>>& pool_categories);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_READ_SCOPE_H_
