#include "server/service/metrics_interceptor.h"

#include <array>
#include <cstdint>
#include <string>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "proto/dictlog.pb.h"

namespace dictlog::service {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr absl::string_view kAppend = "/dictlog.v1.LogStore/Append";
constexpr absl::string_view kAppendBatch = "/dictlog.v1.LogStore/AppendBatch";
constexpr absl::string_view kGet = "/dictlog.v1.LogStore/Get";
constexpr absl::string_view kMultiGet = "/dictlog.v1.LogStore/MultiGet";
constexpr absl::string_view kScan = "/dictlog.v1.LogStore/Scan";
constexpr absl::string_view kGetFrame = "/dictlog.v1.LogStore/GetFrame";
constexpr absl::string_view kMultiGetFrames = "/dictlog.v1.LogStore/MultiGetFrames";

// The payload size a standard zstd frame declares (0 if it declares none).
uint64_t ContentSize(const std::string& frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  return size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : size;
}

// The same for a frame without its magic number (PackedFrames).
uint64_t MagiclessContentSize(absl::string_view frame) {
  ZSTD_frameHeader header;
  if (ZSTD_getFrameHeader_advanced(&header, frame.data(), frame.size(),
                                   ZSTD_f_zstd1_magicless) != 0 ||
      header.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN) {
    return 0;
  }
  return header.frameContentSize;
}

// Ids answered with an error of their own, by canonical code.
struct ErrorCounts {
  std::array<uint64_t, 17> by_code{};  // OK (0) .. UNAUTHENTICATED (16).
  void Add(const v1::RecordError& error) {
    if (error.code() > 0 && error.code() < static_cast<int>(by_code.size())) {
      ++by_code[static_cast<size_t>(error.code())];
    } else {
      ++by_code[2];  // UNKNOWN: not a canonical code.
    }
  }
};

struct Counts {
  uint64_t records = 0;
  uint64_t bytes = 0;
  void Add(const v1::Record& record) {
    ++records;
    bytes += record.payload().size();
  }
  // A frame counts the payload it decodes to.
  void Add(const v1::RecordFrame& frame) {
    ++records;
    bytes += frame.content_case() == v1::RecordFrame::kFrame ? ContentSize(frame.frame())
                                                             : frame.payload().size();
  }
  void Add(const v1::PackedFrames& packed) {
    size_t offset = 0;
    for (int r = 0; r < packed.sizes_size() && r < packed.source_indexes_size(); ++r) {
      const absl::string_view bytes =
          absl::string_view(packed.data()).substr(offset, packed.sizes(r));
      offset += bytes.size();
      const uint32_t source = packed.source_indexes(r);
      const bool payload = source < static_cast<uint32_t>(packed.sources_size()) &&
                           packed.sources(static_cast<int>(source)).payload();
      ++records;
      this->bytes += payload ? bytes.size() : MagiclessContentSize(bytes);
    }
  }
};

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(metrics::RpcMetrics* metrics, const char* method)
      : metrics_(metrics), method_(method), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      CountRequest(methods->GetRecvMessage());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      CountResponse(methods->GetSendMessage());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      metrics_->RecordCall(method_, metrics::GrpcCodeName(status.error_code()),
                           absl::ToDoubleSeconds(absl::Now() - start_));
      if (status.ok() && appended_.records > 0) {
        metrics_->AddAppended(appended_.records, appended_.bytes);
      }
    }
    methods->Proceed();
  }

 private:
  // The request of an append: what it would write.
  void CountRequest(const void* message) {
    if (message == nullptr) return;
    if (method_ == kAppend) {
      const auto* request = static_cast<const v1::AppendRequest*>(message);
      appended_ = {1, request->payload().size()};
    } else if (method_ == kAppendBatch) {
      const auto* request = static_cast<const v1::AppendBatchRequest*>(message);
      appended_ = {};
      for (const v1::RecordToAppend& record : request->records()) {
        ++appended_.records;
        appended_.bytes += record.payload().size();
      }
    }
  }

  // A response of a read: the records it returns.
  void CountResponse(const void* message) {
    if (message == nullptr) return;
    Counts read;
    ErrorCounts errors;
    if (method_ == kGet) {
      read.Add(static_cast<const v1::GetResponse*>(message)->record());
    } else if (method_ == kMultiGet) {
      for (const v1::MultiGetResult& result :
           static_cast<const v1::MultiGetResponse*>(message)->results()) {
        if (result.has_record()) read.Add(result.record());
        if (result.has_error()) errors.Add(result.error());
      }
    } else if (method_ == kScan) {
      const auto* response = static_cast<const v1::ScanResponse*>(message);
      for (const v1::Record& record : response->records()) read.Add(record);
      for (const v1::RecordFrame& frame : response->frames()) read.Add(frame);
    } else if (method_ == kGetFrame) {
      read.records = 1;
      read.bytes = ContentSize(static_cast<const v1::GetFrameResponse*>(message)->frame());
    } else if (method_ == kMultiGetFrames) {
      const auto* response = static_cast<const v1::MultiGetFramesResponse*>(message);
      for (const v1::MultiGetFramesResult& result : response->results()) {
        if (result.has_record()) read.Add(result.record());
        if (result.has_error()) errors.Add(result.error());
      }
      read.Add(response->packed());
      for (const v1::PackedError& error : response->packed().errors()) {
        errors.Add(error.error());
      }
    }
    if (read.records > 0) metrics_->AddRead(read.records, read.bytes);
    for (size_t code = 1; code < errors.by_code.size(); ++code) {
      if (errors.by_code[code] > 0) {
        metrics_->AddReadErrors(method_, static_cast<int>(code), errors.by_code[code]);
      }
    }
  }

  metrics::RpcMetrics* const metrics_;
  const absl::string_view method_;
  const absl::Time start_;
  Counts appended_;
};

}  // namespace

grpc::experimental::Interceptor* MetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new MetricsInterceptor(metrics_, info->method());
}

}  // namespace dictlog::service
