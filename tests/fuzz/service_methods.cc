#include "tests/fuzz/service_methods.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/fuzz/fuzz_check.h"

namespace dictlog::fuzz {
namespace {

// A handler's error must carry a specific code: bad input is the caller's problem,
// never UNKNOWN or INTERNAL.
void CheckStatus(const grpc::Status& status, absl::string_view method) {
  FUZZ_REQUIRE(status.error_code() != grpc::StatusCode::UNKNOWN &&
                   status.error_code() != grpc::StatusCode::INTERNAL,
               absl::StrCat(method, ": ", status.error_code(), " ", status.error_message()));
}

template <typename Request>
bool Parse(absl::string_view bytes, Request* request) {
  return request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// What was acknowledged reads back: same payload and category.
void CheckStored(EngineFixture& f, const std::string& id, const std::string& category,
                 const std::string& payload) {
  grpc::ServerContext context;
  v1::GetRequest get;
  get.set_id(id);
  v1::GetResponse response;
  const grpc::Status status = f.log_store().Get(&context, &get, &response);
  FUZZ_REQUIRE(status.ok(), absl::StrCat("acknowledged ", id, " unreadable: ",
                                         status.error_message()));
  FUZZ_REQUIRE(response.record().payload() == payload, absl::StrCat(id, " payload"));
  FUZZ_REQUIRE(response.record().category() == category, absl::StrCat(id, " category"));
}

bool Append(EngineFixture& f, absl::string_view bytes) {
  v1::AppendRequest request;
  if (!Parse(bytes, &request)) return false;
  grpc::ServerContext context;
  v1::AppendResponse response;
  const grpc::Status status = f.log_store().Append(&context, &request, &response);
  CheckStatus(status, "Append");
  if (status.ok()) CheckStored(f, response.id(), request.category(), request.payload());
  return true;
}

bool AppendBatch(EngineFixture& f, absl::string_view bytes) {
  v1::AppendBatchRequest request;
  if (!Parse(bytes, &request)) return false;
  grpc::ServerContext context;
  v1::AppendBatchResponse response;
  const grpc::Status status = f.log_store().AppendBatch(&context, &request, &response);
  CheckStatus(status, "AppendBatch");
  if (!status.ok()) return true;
  FUZZ_REQUIRE(response.ids_size() == request.records_size(), "one id per record");
  for (int i = 0; i < request.records_size(); ++i) {
    CheckStored(f, response.ids(i), request.records(i).category(),
                request.records(i).payload());
  }
  return true;
}

bool Scan(EngineFixture& f, absl::string_view bytes) {
  v1::ScanRequest request;
  if (!Parse(bytes, &request)) return false;
  engine::ScanSpec spec;  // As LogStoreService::Scan builds it.
  spec.category = request.category();
  spec.pool = request.pool();
  spec.from_id = request.from_id();
  spec.limit = request.limit();
  const absl::Status status =
      f.engine().Scan(spec, [](std::vector<v1::Record>) { return absl::OkStatus(); });
  FUZZ_REQUIRE(status.code() != absl::StatusCode::kUnknown &&
                   status.code() != absl::StatusCode::kInternal,
               status.ToString());
  return true;
}

// A method whose handler has the plain unary signature.
template <typename Service, typename Request, typename Response,
          grpc::Status (Service::*Method)(grpc::ServerContext*, const Request*, Response*),
          Service& (EngineFixture::*Which)()>
bool Unary(EngineFixture& f, absl::string_view bytes) {
  Request request;
  if (!Parse(bytes, &request)) return false;
  grpc::ServerContext context;
  Response response;
  CheckStatus(((f.*Which)().*Method)(&context, &request, &response),
              Request::descriptor()->name());
  return true;
}

using service::AdminService;
using service::LogStoreService;
template <typename Request, typename Response,
          grpc::Status (LogStoreService::*Method)(grpc::ServerContext*, const Request*,
                                                  Response*)>
constexpr auto kStore = &Unary<LogStoreService, Request, Response, Method,
                               &EngineFixture::log_store>;
template <typename Request, typename Response,
          grpc::Status (AdminService::*Method)(grpc::ServerContext*, const Request*,
                                               Response*)>
constexpr auto kAdmin = &Unary<AdminService, Request, Response, Method,
                               &EngineFixture::admin>;

}  // namespace

const ServiceMethod kServiceMethods[] = {
    {"Append", &Append},
    {"AppendBatch", &AppendBatch},
    {"Get", kStore<v1::GetRequest, v1::GetResponse, &LogStoreService::Get>},
    {"MultiGet", kStore<v1::MultiGetRequest, v1::MultiGetResponse, &LogStoreService::MultiGet>},
    {"Scan", &Scan},
    {"GetFrame", kStore<v1::GetRequest, v1::GetFrameResponse, &LogStoreService::GetFrame>},
    {"ListPools",
     kAdmin<v1::ListPoolsRequest, v1::ListPoolsResponse, &AdminService::ListPools>},
    {"GetPool", kAdmin<v1::GetPoolRequest, v1::PoolInfo, &AdminService::GetPool>},
    {"CreatePool", kAdmin<v1::CreatePoolRequest, v1::PoolInfo, &AdminService::CreatePool>},
    {"UpdatePool", kAdmin<v1::UpdatePoolRequest, v1::PoolInfo, &AdminService::UpdatePool>},
    {"TrainDictionary", kAdmin<v1::TrainDictionaryRequest, v1::TrainDictionaryResponse,
                               &AdminService::TrainDictionary>},
    {"ListDictionaries", kAdmin<v1::ListDictionariesRequest, v1::ListDictionariesResponse,
                                &AdminService::ListDictionaries>},
    {"ActivateDictionary", kAdmin<v1::ActivateDictionaryRequest, v1::DictionaryInfo,
                                  &AdminService::ActivateDictionary>},
    {"GetDictionary", kAdmin<v1::GetDictionaryRequest, v1::GetDictionaryResponse,
                             &AdminService::GetDictionary>},
    {"ImportDictionary", kAdmin<v1::ImportDictionaryRequest, v1::DictionaryInfo,
                                &AdminService::ImportDictionary>},
    {"GcDictionaries", kAdmin<v1::GcDictionariesRequest, v1::GcDictionariesResponse,
                              &AdminService::GcDictionaries>},
    {"Verify", kAdmin<v1::VerifyRequest, v1::VerifyResponse, &AdminService::Verify>},
    {"Recompress",
     kAdmin<v1::RecompressRequest, v1::RecompressStatus, &AdminService::Recompress>},
    {"GetRecompressStatus", kAdmin<v1::RecompressRequest, v1::RecompressStatus,
                                   &AdminService::GetRecompressStatus>},
    {"Flush", kAdmin<v1::FlushRequest, v1::FlushResponse, &AdminService::Flush>},
};
const size_t kServiceMethodCount = sizeof(kServiceMethods) / sizeof(kServiceMethods[0]);

uint8_t ServiceMethodIndex(absl::string_view name) {
  for (size_t i = 0; i < kServiceMethodCount; ++i) {
    if (name == kServiceMethods[i].name) return static_cast<uint8_t>(i);
  }
  FUZZ_REQUIRE(false, name);
  return 0;
}

}  // namespace dictlog::fuzz
