"""dictlog_cc_proto: C++ code for one .proto file with Debian's protoc (offline)."""

def dictlog_cc_proto(name, src, deps = [], imports = [], grpc = False, testonly = False, visibility = None):
    """Generates <src>.pb.{h,cc} (and .grpc.pb.{h,cc} if grpc) and a cc_library `name`.

    Imports are resolved from the workspace root, so `import "proto/dictlog.proto";`
    works from any package. `imports` are the imported .proto files (labels) and
    `deps` their cc libraries.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    plugin = ""
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        plugin = ("--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " +
                  "--grpc_out=$(GENDIR) ")
    native.genrule(
        name = name + "_gen",
        srcs = [src] + imports,
        testonly = testonly,
        outs = outs,
        cmd = ("/usr/bin/protoc --proto_path=. --cpp_out=$(GENDIR) " + plugin +
               "$(location " + src + ")"),
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["//bazel/system:protobuf"] + (["//bazel/system:grpc"] if grpc else []),
        testonly = testonly,
        visibility = visibility,
    )
