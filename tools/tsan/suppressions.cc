// ThreadSanitizer's default options and suppressions for `--config=tsan` binaries,
// built in (TSan asks the program through these two hooks) so that `bazel test
// --config=tsan` needs no file path in the test environment. TSAN_OPTIONS still adds
// to or overrides the options.
//
// Suppressions are only for code TSan cannot see into: Debian's RocksDB, gRPC,
// protobuf and abseil are not instrumented, so their own synchronization is invisible
// and accesses they make look unordered. Never suppress a frame of dictlog's code.

extern "C" const char* __tsan_default_options() {
  // ignore_noninstrumented_modules: memcpy and friends called from an uninstrumented
  // library (RocksDB's write group copying a follower's batch, gRPC's call objects,
  // libstdc++'s out-of-line string code) are not checked; dictlog's own accesses are.
  return "halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:"
         "ignore_noninstrumented_modules=1";
}

extern "C" const char* __tsan_default_suppressions() {
  return
      // abseil's lock-order graph (mutex deadlock detection, on in Debian's build):
      // its memmove calls, under abseil's own uninstrumented spin lock.
      "called_from_lib:libabsl_graphcycles_internal.so\n"
      // Memory that RocksDB and gRPC hand between their own threads (memtable arenas,
      // call buffers, gRPC's epoll descriptor) with atomics TSan cannot see: reports
      // with a frame inside them.
      "race:librocksdb.so\n"
      "race:libgrpc.so\n"
      "race:libgpr.so\n"
      "race:libgrpc++.so\n";
}
