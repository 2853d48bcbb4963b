#include "server/store/key_space.h"

#include "common/status_macros.h"

namespace dictlog::store {

std::optional<std::string> NextOfWidth(absl::string_view key, size_t width) {
  std::string next(key);
  if (next.size() < width) {
    next.resize(width, '\0');  // key followed by zeros: longer, so greater.
    return next;
  }
  for (size_t i = next.size(); i-- > 0;) {
    if (static_cast<unsigned char>(next[i]) != 0xff) {
      next[i] = static_cast<char>(static_cast<unsigned char>(next[i]) + 1);
      return next;
    }
    next[i] = '\0';
  }
  return std::nullopt;
}

std::optional<std::string> AddPowerOfTwo(absl::string_view a, size_t bit) {
  std::string sum(a);
  if (bit >= 8 * sum.size()) return std::nullopt;
  size_t i = sum.size() - 1 - bit / 8;
  unsigned carry = 1u << (bit % 8);
  while (carry != 0) {
    const unsigned v = static_cast<unsigned char>(sum[i]) + carry;
    sum[i] = static_cast<char>(v & 0xff);
    carry = v >> 8;
    if (carry != 0 && i == 0) return std::nullopt;
    --i;
  }
  return sum;
}

std::string Midpoint(absl::string_view a, absl::string_view b) {
  const size_t n = a.size();
  std::string sum(n, '\0');
  unsigned carry = 0;
  for (size_t i = n; i-- > 0;) {
    const unsigned v = static_cast<unsigned char>(a[i]) + static_cast<unsigned char>(b[i]) + carry;
    sum[i] = static_cast<char>(v & 0xff);
    carry = v >> 8;
  }
  std::string half(n, '\0');  // (carry:sum) >> 1.
  unsigned high = carry;
  for (size_t i = 0; i < n; ++i) {
    const unsigned v = static_cast<unsigned char>(sum[i]);
    half[i] = static_cast<char>((high << 7) | (v >> 1));
    high = v & 1;
  }
  return half;
}

absl::StatusOr<std::optional<std::string>> FirstPassing(
    absl::string_view after, bool from_start, size_t width,
    absl::FunctionRef<absl::StatusOr<bool>(const std::string&)> passes, uint64_t* probes) {
  const auto probe = [&](const std::string& t) {
    ++*probes;
    return passes(t);
  };
  std::optional<std::string> low =
      from_start ? std::optional<std::string>(std::string(width, '\0')) : NextOfWidth(after, width);
  if (!low.has_value()) return std::nullopt;
  ASSIGN_OR_RETURN(const bool first, probe(*low));
  if (first) return low;
  std::string failed = *low;  // Known to fail.
  std::optional<std::string> passed;
  for (size_t bit = 0; bit < 8 * width && !passed.has_value(); ++bit) {
    std::optional<std::string> t = AddPowerOfTwo(*low, bit);
    if (!t.has_value()) break;
    ASSIGN_OR_RETURN(const bool ok, probe(*t));
    if (ok) {
      passed = std::move(t);
    } else {
      failed = *std::move(t);
    }
  }
  if (!passed.has_value()) {  // The last string of the width.
    std::string top(width, '\xff');
    if (top == failed) return std::nullopt;
    ASSIGN_OR_RETURN(const bool ok, probe(top));
    if (!ok) return std::nullopt;
    passed = std::move(top);
  }
  while (NextOfWidth(failed, width) != passed) {
    std::string mid = Midpoint(failed, *passed);
    ASSIGN_OR_RETURN(const bool ok, probe(mid));
    if (ok) {
      passed = std::move(mid);
    } else {
      failed = std::move(mid);
    }
  }
  return passed;
}

}  // namespace dictlog::store
