#include "server/service/read_scope.h"

#include "absl/strings/str_cat.h"

namespace dictlog::service {

namespace {

template <typename Result>
absl::StatusOr<Result> Visible(const auth::Grant& grant, absl::string_view id,
                               absl::StatusOr<Result> record) {
  if (grant.categories.empty()) return record;
  const bool hidden = record.ok() ? !grant.AllowsCategory(record->category())
                                  : absl::IsNotFound(record.status());
  if (hidden) return absl::NotFoundError(absl::StrCat("no record ", id));
  return record;
}

}  // namespace

absl::StatusOr<v1::Record> VisibleRecord(const auth::Grant& grant, absl::string_view id,
                                         absl::StatusOr<v1::Record> record) {
  return Visible(grant, id, std::move(record));
}

absl::StatusOr<v1::RecordFrame> VisibleFrame(const auth::Grant& grant, absl::string_view id,
                                             absl::StatusOr<v1::RecordFrame> record) {
  return Visible(grant, id, std::move(record));
}

absl::Status VisibleScanStatus(const auth::Grant& grant, absl::Status status) {
  if (!grant.categories.empty() && absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

absl::Status RequireWholePool(const auth::Grant& grant,
                              const absl::StatusOr<std::vector<std::string>>& pool_categories) {
  if (grant.categories.empty()) return absl::OkStatus();
  if (absl::IsInvalidArgument(pool_categories.status())) return pool_categories.status();
  bool allowed = pool_categories.ok();
  for (const std::string& category : pool_categories.value_or(std::vector<std::string>{})) {
    allowed = allowed && grant.AllowsCategory(category);
  }
  if (allowed) return absl::OkStatus();
  return absl::PermissionDeniedError(
      "GetFrame and GetDictionary with a token limited to categories need one allowed "
      "every category of the pool (frame sizes and dictionaries would reveal the "
      "others' contents; docs/security.md)");
}

}  // namespace dictlog::service
