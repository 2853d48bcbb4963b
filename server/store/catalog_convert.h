// Conversions between the catalog's own messages (catalog.proto, what is on disk) and
// the public API's (proto/dictlog.proto, what the engine and the service speak). The
// one place where the two meet: the pool and dictionary layers call these when they
// read or write a catalog entry. Every field is copied (catalog_convert_test fills
// every field of each API message and checks the round trip). Pure functions; safe
// from any thread.
#ifndef DICTLOG_SERVER_STORE_CATALOG_CONVERT_H_
#define DICTLOG_SERVER_STORE_CATALOG_CONVERT_H_

#include "proto/dictlog.pb.h"
#include "server/store/catalog.pb.h"

namespace dictlog::store {

storage::PoolOptions ToCatalog(const v1::PoolOptions& options);
v1::PoolOptions FromCatalog(const storage::PoolOptions& options);

storage::DictionaryEvaluation ToCatalog(const v1::DictionaryEvaluation& evaluation);
v1::DictionaryEvaluation FromCatalog(const storage::DictionaryEvaluation& evaluation);

storage::RecompressStatus ToCatalog(const v1::RecompressStatus& status);
v1::RecompressStatus FromCatalog(const storage::RecompressStatus& status);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_CATALOG_CONVERT_H_
