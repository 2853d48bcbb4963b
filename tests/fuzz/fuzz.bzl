"""dictlog_fuzz_target: one libFuzzer target and its regression test."""

def dictlog_fuzz_target(name, srcs, deps = []):
    """Defines, for fuzz target `name` (srcs define LLVMFuzzerTestOneInput):

    <name>_lib          the entry point as a library (alwayslink)
    <name>_replay_test  cc_test (any toolchain): replays corpus/<name>/ and crashes/<name>/
    <name>              the libFuzzer binary; tagged manual, it links only with
                        --config=fuzz (clang), which provides main (tests/fuzz/README.md)
    """
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        deps = deps,
        alwayslink = True,
    )
    native.cc_test(
        name = name + "_replay_test",
        size = "small",
        deps = [":" + name + "_lib", ":replay_main"],
        data = native.glob(["corpus/" + name + "/**", "crashes/" + name + "/**"]) +
               [":data"],
        args = ["tests/fuzz/corpus/" + name, "tests/fuzz/crashes/" + name],
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"],
        tags = ["manual"],
    )
