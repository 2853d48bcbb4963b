// Client: the C++ client of a dictlog server (dictlog.v1 LogStore and Admin).
//
// Thread Safety: a Client is cheap to copy (copies share one gRPC channel, and the
// shard router with its map and node channels) and may be used from many threads at
// once.
//
// Every call returns absl::Status / StatusOr with the server's canonical code, or
// DEADLINE_EXCEEDED / UNAVAILABLE from the transport. Unary calls carry a deadline of
// ClientOptions::timeout; Scan runs until the stream ends, Follow until cancelled.
//
// Retries: Append and AppendBatch carry a request id (a random one unless the caller
// gives one) and are retried with the same id after UNAVAILABLE, DEADLINE_EXCEEDED or
// CANCELLED (which a server shutting down gives calls it accepted but never started),
// up to ClientOptions::append_attempts attempts, each with its own deadline. The
// server stores such an append once and answers every attempt with the same ids
// (docs/api.md "Retries"). Other calls are not retried. MultiGet asks again for the
// ids a call answered RESOURCE_EXHAUSTED (past the server's --max_response_bytes).
//
// Routing (ClientOptions::routing, cluster mode; docs/api.md "Routing"): reads (Get,
// GetFrame, MultiGet, MultiGetFrames, Scan of a pool) go to a serving replica of the
// partition of their pool, taken round robin per call from the seed server's shard map
// (shard_router.h), with the header `dictlog-route: direct`; MultiGet and
// MultiGetFrames are split by partition, the parts sent in parallel and merged back in
// request order. A replica that refuses (FAILED_PRECONDITION with NotServedHere) or
// fails UNAVAILABLE makes the client refresh the map and try once more on another
// replica. Follow of a pool goes to a serving replica too, and when that replica fails
// mid-stream (UNAVAILABLE: killed, shutting down) or refuses, to another one, resumed
// after the last id passed on (ADR 0032). Writes, admin calls, Follow and Scan by
// category go to the seed server (which routes them: the client does not know the
// category -> pool routes).
#ifndef DICTLOG_CLIENT_CLIENT_H_
#define DICTLOG_CLIENT_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/frame_decoder.h"
#include "client/shard_router.h"
#include "proto/dictlog.grpc.pb.h"

namespace dictlog::client {

// Transport security and credentials of a Client.
struct ClientSecurity {
  // TLS when true; the server certificate is verified against root_ca_pem (PEM; empty:
  // the system's roots). Default false: plaintext.
  bool tls = false;
  std::string root_ca_pem;
  // PEM client certificate chain and its key, for servers requiring mutual TLS. Both
  // or neither. Default none.
  std::string cert_chain_pem;
  std::string private_key_pem;
  // Sent as "authorization: Bearer <token>" with every call. Default empty: none.
  std::string token;
  // The name the server certificate must carry, when it differs from the host of
  // ClientOptions::server (e.g. a probe connecting to 127.0.0.1). Default empty: the
  // host.
  std::string tls_server_name;
};

struct ClientOptions {
  // host:port of the server. Default 127.0.0.1:7070.
  std::string server = "127.0.0.1:7070";
  // Deadline of each unary call. Default 30 s.
  absl::Duration timeout = absl::Seconds(30);
  // Largest message sent. Default 64 MiB (the server's default --max_request_bytes).
  int max_message_bytes = 64 << 20;
  // Largest message received. Default 128 MiB: the largest response of a server with
  // default limits is a MultiGet of 64 MiB of payloads (--max_response_bytes) plus
  // up to 10,000 ids, categories and per-id error messages (a few MiB at most).
  int max_receive_bytes = 128 << 20;
  // Default false: clients of the same server with the same options share one
  // connection (gRPC's global subchannel pool). True: this client (and its copies) gets
  // a connection of its own, e.g. to spread a load test over several.
  bool own_connection = false;
  // Attempts of an Append/AppendBatch (1: no retry). Default 3.
  int append_attempts = 3;
  // Wait before the first retry; doubled before each next one. Default 100 ms.
  absl::Duration retry_backoff = absl::Milliseconds(100);
  // Default: plaintext, no token.
  ClientSecurity security;
  // MultiGet with ReadOptions::decode_locally: decoded dictionaries kept (least
  // recently used evicted past it; shared by the client's copies). Default 64 MiB
  // (a 16 KiB dictionary takes about 40 KB decoded, a 110 KB one about 140 KB).
  size_t dictionary_cache_bytes = 64 << 20;
  // Route reads to the replicas of their partitions when `server` answers a shard map
  // with partitions > 0 (cluster mode). False: every call goes to `server`, which
  // forwards reads itself. Default true.
  bool routing = true;
  // A shard map older than this is fetched again before the next read. Default 30 s.
  absl::Duration shard_map_ttl = absl::Seconds(30);
  // At most one shard map fetch per this interval after refused or failed reads
  // (concurrent ones share a fetch). Default 1 s.
  absl::Duration shard_map_refresh_interval = absl::Seconds(1);
};

// Options of one read.
struct ReadOptions {
  // Decode in this process (MultiGet, Scan): the server sends stored frames
  // (MultiGetFrames, Scan with ScanRequest.frames: about half
  // the bytes of payloads for loghub lines, and no decoding on the server), the client fetches each
  // dictionary once (GetDictionary) and caches it. The results are the same, byte for
  // byte and error for error. Needs a token allowed to read the pools' dictionaries
  // (GetDictionary; a reader whose scope covers the pool). Default false.
  bool decode_locally = false;
  // With decode_locally (MultiGet), and MultiGetFrames: ask for the packed response
  // (MultiGetFramesRequest.packed; about half the bytes of the per-result form for
  // loghub lines). False: the per-result form. A server that predates `packed`
  // answers per result either way. Same results both ways. Default true.
  bool packed = true;
};

// A fresh random request id (32 hex digits). Thread-safe.
std::string NewRequestId();

// Ends a Client::Follow from another thread. Thread-safe; outlives the Follow.
class FollowCancel {
 public:
  FollowCancel() = default;
  FollowCancel(const FollowCancel&) = delete;
  FollowCancel& operator=(const FollowCancel&) = delete;

  void Cancel();
  bool cancelled() const;

 private:
  friend class Client;
  // The running stream's context (null between streams); Cancel cancels it.
  void Attach(grpc::ClientContext* context);

  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
};

class Client {
 public:
  explicit Client(const ClientOptions& options);

  // ClientOptions::server: the seed server every call but routed reads goes to.
  const std::string& server() const { return server_; }

  // Opens the connection now and waits until it is ready, through gRPC's reconnect
  // backoff if a first attempt fails. UNAVAILABLE (with gRPC's last connectivity state)
  // if it is not ready within `timeout`. Calls do not need it: a load generator uses it
  // so that connecting is not measured.
  absl::Status WaitForConnected(absl::Duration timeout) const;

  // grpc.health.v1 Check of `service` ("": the whole server; "dictlog.replicas": every
  // partition a cluster node holds serves): true if SERVING, false if NOT_SERVING (or
  // UNKNOWN); the call's error otherwise (NOT_FOUND: no such service). Needs no token.
  absl::StatusOr<bool> CheckHealth(absl::string_view service = "") const;

  // Appends one record; returns its id. `request_id` empty: a new random one.
  absl::StatusOr<std::string> Append(absl::string_view category,
                                     absl::string_view payload,
                                     absl::string_view request_id = {}) const;
  // Appends all records atomically; returns their ids in order.
  absl::StatusOr<std::vector<std::string>> AppendBatch(
      absl::Span<const v1::RecordToAppend> records,
      absl::string_view request_id = {}) const;

  absl::StatusOr<v1::Record> Get(absl::string_view id) const;
  // One result per id, in order: a record or that id's own error. The server answers
  // at most --max_response_bytes of payloads per call and the rest of the ids
  // RESOURCE_EXHAUSTED each: MultiGet asks again for exactly those, in order, each
  // call with its own deadline, until all are answered (a call that answers none of
  // them ends it, leaving them RESOURCE_EXHAUSTED). A failed call fails it all.
  // With options.decode_locally, through MultiGetFrames: frames decoded here with
  // dictionaries fetched once by id (a dictionary gc deleted meanwhile: the record is
  // read again, and if its frame still names it, its result is DATA_LOSS as the
  // server's would be).
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> MultiGet(
      absl::Span<const std::string> ids, const ReadOptions& options = {}) const;
  // The stored frames (or server-decoded payloads) of ids, one result per id in
  // order; asks again for RESOURCE_EXHAUSTED ids as MultiGet does. Uses
  // options.packed; a packed response that does not add up fails the call DATA_LOSS.
  absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> MultiGetFrames(
      absl::Span<const std::string> ids, const ReadOptions& options = {}) const;
  // The cache of decoded dictionaries (decode_locally).
  DdictCacheStats DictionaryCacheStats() const { return ddicts_->stats(); }
  // Calls `visit` for each record in order; stops and returns its error if it fails.
  // With options.decode_locally, the server streams frames (ScanRequest.frames) and
  // each chunk is decoded here as MultiGet does; a record that does not decode ends
  // the scan with the error the server's Scan would return.
  absl::Status Scan(const v1::ScanRequest& request,
                    const std::function<absl::Status(const v1::Record&)>& visit,
                    const ReadOptions& options = {}) const;

  // Calls `visit` for each record of a Follow stream (docs/api.md "Follow"), in id
  // order, as the server sends them, until `cancel` is cancelled (then OK), `visit`
  // fails (its error) or the server ends the stream (its error: UNAVAILABLE at
  // shutdown). A stream that fell behind (ABORTED) is resumed at once after the last
  // id passed to `visit`, so nothing is missed or repeated; so is a routed follow of a
  // pool whose replica failed, on another replica (again after each failure that came
  // after records; at most two replicas in a row without a record). `cancel` may be
  // null.
  absl::Status Follow(const v1::FollowRequest& request,
                      const std::function<absl::Status(const v1::Record&)>& visit,
                      FollowCancel* cancel = nullptr) const;

  // The stored record as a standard zstd frame, with its dictionary id.
  absl::StatusOr<v1::GetFrameResponse> GetFrame(absl::string_view id) const;

  absl::StatusOr<std::vector<v1::PoolInfo>> ListPools() const;
  // Pools and the server's dictionary cache statistics.
  absl::StatusOr<v1::ListPoolsResponse> ListPoolsWithStats() const;
  absl::StatusOr<v1::PoolInfo> GetPool(absl::string_view name) const;
  absl::StatusOr<v1::PoolInfo> CreatePool(absl::string_view name,
                                          const v1::PoolOptions& options) const;
  absl::StatusOr<v1::PoolInfo> UpdatePool(absl::string_view name,
                                          const v1::PoolOptions& options) const;
  absl::StatusOr<v1::DeletePoolResponse> DeletePool(absl::string_view name) const;

  // Dictionary lifecycle and re-compression: the Admin RPCs of the same names.
  absl::StatusOr<v1::TrainDictionaryResponse> TrainDictionary(
      const v1::TrainDictionaryRequest& request) const;
  absl::StatusOr<v1::ListDictionariesResponse> ListDictionaries(
      const v1::ListDictionariesRequest& request) const;
  absl::StatusOr<v1::DictionaryInfo> ActivateDictionary(
      const v1::ActivateDictionaryRequest& request) const;
  absl::StatusOr<v1::GetDictionaryResponse> GetDictionary(
      const v1::GetDictionaryRequest& request) const;
  absl::StatusOr<v1::DictionaryInfo> ImportDictionary(
      const v1::ImportDictionaryRequest& request) const;
  absl::StatusOr<v1::GcDictionariesResponse> GcDictionaries(
      const v1::GcDictionariesRequest& request) const;
  absl::StatusOr<v1::VerifyResponse> Verify(const v1::VerifyRequest& request) const;
  absl::StatusOr<v1::RecompressStatus> Recompress(const v1::RecompressRequest& request) const;
  absl::StatusOr<v1::RecompressStatus> GetRecompressStatus(
      const v1::RecompressRequest& request) const;
  // A consistent copy of the whole store in request.dir on the server's machine.
  absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& request) const;
  // Every memtable of the server's store to table files (e.g. before measuring its
  // size on disk).
  absl::StatusOr<v1::FlushResponse> Flush(const v1::FlushRequest& request) const;

  // The server's shard map as it answers it (LogStore.GetShardMap; partitions 0 from a
  // single node), unvalidated; UNIMPLEMENTED from a server that predates it.
  absl::StatusOr<v1::ShardMap> GetShardMap() const;
  // Shard map fetches the routing made (0 without routing). For tests and tools.
  int64_t ShardMapFetches() const { return router_ == nullptr ? 0 : router_->fetches(); }
  // What routing did (ShardRouter::Stats), shared by this client's copies; zero
  // without routing.
  ShardRouter::Stats RoutingStats() const {
    return router_ == nullptr ? ShardRouter::Stats() : router_->stats();
  }

 private:
  // One attempt of a routed read on the given stub and context.
  using RawCall = std::function<grpc::Status(v1::LogStore::Stub*, grpc::ClientContext*)>;
  void SetDeadline(grpc::ClientContext* context) const;
  // Adds the bearer token, if any, to the call's metadata.
  void AddToken(grpc::ClientContext* context) const;
  // Runs invoke(context, &response) with the call deadline; converts the status.
  template <typename Response, typename Invoke>
  absl::StatusOr<Response> Unary(Invoke invoke) const;
  // Unary, retried after UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED (appends with a
  // request id).
  template <typename Response, typename Invoke>
  absl::StatusOr<Response> Retried(Invoke invoke) const;
  // A read of `partition` (-1: the seed server) through the router
  // (routed_reads.cc): `call` on a serving replica with `dictlog-route: direct`, once
  // more on another after NotServedHere or UNAVAILABLE if `retryable()` (null: always).
  // `deadline`: the call carries ClientOptions::timeout.
  absl::Status RoutedCall(int64_t partition, bool deadline, const RawCall& call,
                          const std::function<bool()>& retryable = nullptr) const;
  // Routed(partition, invoke): RoutedCall of invoke(stub, context, &response).
  template <typename Response, typename Invoke>
  absl::StatusOr<Response> Routed(int64_t partition, Invoke invoke) const;
  // The routing table (an unsharded one without routing) and the partition of a pool
  // in it (-1: the seed).
  absl::StatusOr<std::shared_ptr<const ShardTable>> RoutingTable() const;
  // One MultiGet call to `partition`: one result per id, in order.
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> MultiGetOnce(
      absl::Span<const std::string> ids, int64_t partition) const;
  // One MultiGetFrames call (`packed`: MultiGetFramesRequest.packed).
  absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> MultiGetFramesOnce(
      absl::Span<const std::string> ids, bool packed, int64_t partition) const;
  // MultiGet with decode_locally (local_decode.cc).
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> MultiGetDecodingLocally(
      absl::Span<const std::string> ids, bool packed) const;
  // The records of MultiGetFrames or Scan results, decoded here; the records whose
  // dictionary gc deleted since are read again (MultiGetFrames), once.
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> DecodeLocally(
      std::vector<absl::StatusOr<v1::RecordFrame>> frames) const;
  // Runs a Scan stream, passing each response to `chunk`; stops at its first error.
  absl::Status ScanStream(const v1::ScanRequest& request,
                          const std::function<absl::Status(v1::ScanResponse*)>& chunk) const;
  // The DDict of every dictionary `frames` name, fetched if not cached. An id gc
  // deleted maps to nullptr; any other failure fails the call.
  absl::StatusOr<absl::flat_hash_map<uint32_t, std::shared_ptr<const Ddict>>> DdictsOf(
      absl::Span<const absl::StatusOr<v1::RecordFrame>> frames) const;

  std::string server_;
  absl::Duration timeout_;
  int append_attempts_;
  absl::Duration retry_backoff_;
  std::string authorization_;  // "Bearer <token>", or empty.
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<v1::LogStore::Stub> store_;
  std::shared_ptr<v1::Admin::Stub> admin_;
  std::shared_ptr<DdictCache> ddicts_;
  // Null without ClientOptions::routing.
  std::shared_ptr<ShardRouter> router_;
};

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_CLIENT_H_
