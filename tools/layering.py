#!/usr/bin/env python3
"""layering: every BUILD dependency points down the layers, never up or out to a tool.

The layers, lowest first (docs/design.md):

    common <- codec <- training <- server/store <- server/pool <- server/block
           <- server/dictionary <- server/engine <- server/{auth,metrics,transport,cluster}
           <- server/service <- server/daemon

A target may depend on its own layer or a lower one. Nothing in those layers (or proto/)
depends on client/, dict_trainer/, benchmarks/, tests/, tools/ or deploy/, and codec/ and
training/ use neither proto/ nor gRPC nor RocksDB. Other folders (client/, the CLIs,
benchmarks/, tests/) may use any layer.

Usage (`make test` runs it; `bazel query` cannot run inside a sandboxed test):

    bazel query 'deps(//...)' --output=graph --nograph:factored --noimplicit_deps \\
        | python3 tools/layering.py

Prints one line per violating edge and exits 1 if there is any. tools/layering_test.py
checks the rules on small graphs, among them the layout before issue 18.
"""
import re
import sys

# Package -> rank; a package depends only on packages of lower or equal rank.
RANKS = {
    "common": 0,
    "codec": 1,
    "training": 2,
    "server/store": 3,
    "server/pool": 4,
    "server/block": 5,
    "server/dictionary": 6,
    "server/engine": 7,
    "server/auth": 8,
    "server/metrics": 8,
    "server/transport": 8,
    "server/cluster": 8,
    "server/service": 9,
    "server/daemon": 10,
}
# Folders the libraries above never depend on: the CLIs, benchmarks, tests, tools.
TOOL_FOLDERS = ("client", "dict_trainer", "benchmarks", "tests", "tools", "deploy")
# Library folders that must not reach the tool folders.
LIBRARY_FOLDERS = ("common", "codec", "training", "server", "proto")
# What codec/ and training/ must stay free of (the formats and training are used
# without a server: fuzzers, benchmarks, the offline trainer).
NO_SERVER_STACK = ("codec", "training")
SERVER_STACK_LABELS = ("//proto", "//bazel/system:grpc", "//bazel/system:rocksdb",
                       "//bazel/system:protobuf")

EDGE_RE = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"')


def package(label):
    """'//server/engine:log_engine' -> 'server/engine'; None for external labels."""
    if not label.startswith("//"):
        return None
    return label[2:].split(":", 1)[0]


def top_folder(pkg):
    return pkg.split("/", 1)[0]


def rank(pkg):
    """The rank of pkg or of the ranked package it lies under (server/engine/testdata)."""
    while pkg:
        if pkg in RANKS:
            return RANKS[pkg]
        pkg = pkg.rpartition("/")[0]
    return None


def edge_violation(src, dst):
    """Why the edge src -> dst breaks the layering, or None."""
    src_pkg, dst_pkg = package(src), package(dst)
    if src_pkg is None or dst_pkg is None or src_pkg == dst_pkg:
        return None
    if (top_folder(src_pkg) in LIBRARY_FOLDERS
            and top_folder(dst_pkg) in TOOL_FOLDERS):
        return f"{src} -> {dst}: {top_folder(src_pkg)}/ must not depend on {top_folder(dst_pkg)}/"
    if top_folder(src_pkg) in NO_SERVER_STACK and dst.startswith(SERVER_STACK_LABELS):
        return f"{src} -> {dst}: {top_folder(src_pkg)}/ must not use proto, gRPC or RocksDB"
    src_rank, dst_rank = rank(src_pkg), rank(dst_pkg)
    if src_rank is not None and dst_rank is not None and dst_rank > src_rank:
        return f"{src} -> {dst}: {src_pkg} is below {dst_pkg} (an upward edge)"
    if src_rank is not None and top_folder(dst_pkg) == "server" and dst_rank is None:
        return f"{src} -> {dst}: {dst_pkg} has no layer (add it to tools/layering.py)"
    return None


def parse_edges(graph_text):
    """The (src, dst) edges of `bazel query --output=graph --nograph:factored`."""
    edges = []
    for line in graph_text.splitlines():
        match = EDGE_RE.match(line)
        if match:
            edges.append((match.group(1), match.group(2)))
    return edges


def violations(edges):
    found = (edge_violation(src, dst) for src, dst in edges)
    return sorted({v for v in found if v})


def main():
    text = sys.stdin.read()
    edges = parse_edges(text)
    if not edges:
        print("layering: no edges on stdin (pipe `bazel query ... --output=graph` in)",
              file=sys.stderr)
        return 2
    bad = violations(edges)
    for line in bad:
        print(line)
    print(f"layering: {len(edges)} edges, {len(bad)} violations", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
