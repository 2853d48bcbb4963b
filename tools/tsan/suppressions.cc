// ThreadSanitizer's default options and suppressions for `--config=tsan` binaries,
// built in (TSan asks the program through these two hooks) so that `bazel test
// --config=tsan` needs no file path in the test environment. TSAN_OPTIONS still adds
// to or overrides the options.
//
// Suppressions are only for code TSan cannot see into: Debian's RocksDB, gRPC,
// protobuf and abseil are not instrumented, so their own synchronization is invisible
// and accesses they make look unordered. Never suppress a frame of dictlog's code.

extern "C" const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0";
}

extern "C" const char* __tsan_default_suppressions() {
  return "";
}
