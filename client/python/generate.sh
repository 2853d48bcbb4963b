#!/usr/bin/env bash
# Generates the Python protobuf and gRPC modules of dictlog.v1 from proto/dictlog.proto
# into the dictlog_client package (dictlog_pb2.py, dictlog_pb2_grpc.py), with Debian's
# protoc and grpc_python_plugin (packages protobuf-compiler, protobuf-compiler-grpc).
#
#   client/python/generate.sh [PROTO [OUT_DIR]]
#
# Defaults: the checkout's proto/dictlog.proto and client/python/dictlog_client. The
# Bazel genrule //client/python:dictlog_py_stubs runs this script with explicit paths.
# PROTOC and GRPC_PYTHON_PLUGIN override the tools.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto="${1:-$here/../../proto/dictlog.proto}"
out="${2:-$here/dictlog_client}"
protoc="${PROTOC:-protoc}"
plugin="${GRPC_PYTHON_PLUGIN:-$(command -v grpc_python_plugin || true)}"
[[ -n "$plugin" ]] || { echo "generate.sh: grpc_python_plugin not found (apt-get install protobuf-compiler-grpc)" >&2; exit 1; }

mkdir -p "$out"
"$protoc" --proto_path="$(dirname "$proto")" --python_out="$out" \
  --plugin=protoc-gen-grpc_python="$plugin" --grpc_python_out="$out" "$proto"
# grpc_python_plugin imports the messages as a top-level module; inside a package they
# are a sibling module.
sed -i 's/^import dictlog_pb2 as /from . import dictlog_pb2 as /' "$out/dictlog_pb2_grpc.py"
grep -q '^from \. import dictlog_pb2 as ' "$out/dictlog_pb2_grpc.py" ||
  { echo "generate.sh: unexpected import line in dictlog_pb2_grpc.py" >&2; exit 1; }
