#!/usr/bin/env python3
"""layering_test: tools/layering.py's rules on small dependency graphs.

The real graph needs `bazel query`, which cannot run inside a sandboxed test; `make
test` pipes it into tools/layering.py. Here: each rule catches its edge (among them the
edges of the layout before issue 18, when server/dictionary used //dict_trainer and the
codec lived in server/codec), the allowed edges pass, and the graph parser reads
`--output=graph --nograph:factored`.
"""
import unittest

import layering

GRAPH = """digraph mygraph {
  node [shape=box];
  "//server/dictionary:auto_trainer"
  "//server/dictionary:auto_trainer" -> "//training:trainer"
  "//server/dictionary:auto_trainer" -> "//server/dictionary:auto_trainer.cc"
  "//training:trainer" -> "//codec:codec"
  "//codec:codec" -> "//bazel/system:zstd"
  "//bazel/system:zstd" -> "@zstd//:zstd"
}
"""


class LayeringTest(unittest.TestCase):
    def test_parses_edges(self):
        edges = layering.parse_edges(GRAPH)
        self.assertIn(("//server/dictionary:auto_trainer", "//training:trainer"), edges)
        self.assertEqual(len(edges), 5)

    def test_new_layout_passes(self):
        self.assertEqual(layering.violations(layering.parse_edges(GRAPH)), [])

    def test_old_layout_fails(self):
        # main before issue 18: the server used the CLI folder's library.
        old = [
            ("//server/dictionary:auto_trainer", "//dict_trainer:trainer"),
            ("//server/pool:block_tail_test", "//dict_trainer:compact"),
            ("//dict_trainer:trainer", "//server/codec:codec"),
        ]
        bad = layering.violations(old)
        self.assertEqual(len(bad), 2)
        self.assertIn("server/ must not depend on dict_trainer/", bad[0])

    def test_upward_edges_fail(self):
        for src, dst in [
            ("//codec:codec", "//training:trainer"),
            ("//training:trainer", "//server/store:store"),
            ("//server/store:store", "//server/pool:pool"),
            ("//server/pool:pool", "//server/block:block_sealer"),
            ("//server/block:block_sealer", "//server/dictionary:manager"),
            ("//server/dictionary:manager", "//server/engine:log_engine"),
            ("//server/engine:log_engine", "//server/metrics:text_writer"),
            ("//server/auth:authorizer", "//server/service:grpc_status"),
            ("//server/transport:transport", "//server/service:service"),
            ("//server/metrics:engine_metrics", "//server/service:service"),
            ("//server/service:service", "//server/daemon:server_config"),
            ("//common:home_path", "//codec:codec"),
        ]:
            with self.subTest(edge=(src, dst)):
                self.assertEqual(len(layering.violations([(src, dst)])), 1)

    def test_downward_and_side_edges_pass(self):
        ok = [
            ("//server/daemon:dictlogd", "//server/engine:log_engine"),
            ("//server/daemon:dictlogd", "//server/service:service"),
            ("//server/service:service", "//server/transport:transport"),
            ("//server/metrics:engine_metrics", "//server/engine:engine"),
            ("//server/engine:log_engine", "//server/store:store"),
            ("//server/engine:v1_requests_store_test", "//server/engine:testdata/x"),
            ("//server/pool:pool", "//proto:dictlog_cc_proto"),
            ("//benchmarks:dict_bench", "//server/engine:log_engine"),
            ("//dict_trainer:dict_trainer", "//training:trainer"),
            ("//tests/e2e:health_e2e_test", "//client:client"),
            ("//client/cli:dictlog", "//codec:codec"),
            ("//server/store:store", "//bazel/system:rocksdb"),
            # Issue 23: the partition rule, shared by the server and the clients.
            ("//server/cluster:partitioning", "//common:pool_partition"),
            ("//client:client", "//common:pool_partition"),
        ]
        self.assertEqual(layering.violations(ok), [])

    def test_libraries_never_reach_tool_folders(self):
        for src, dst in [
            ("//server/daemon:dictlogd", "//client:client"),
            ("//server/engine:log_engine_test", "//tests/e2e:server_process"),
            ("//codec:codec", "//benchmarks:bench_lib"),
            ("//proto:dictlog_proto", "//tools:anything"),
        ]:
            with self.subTest(edge=(src, dst)):
                self.assertEqual(len(layering.violations([(src, dst)])), 1)

    def test_codec_and_training_stay_off_the_server_stack(self):
        for src, dst in [
            ("//codec:codec", "//proto:dictlog_cc_proto"),
            ("//training:trainer", "//bazel/system:grpc"),
            ("//training:files", "//bazel/system:rocksdb"),
        ]:
            with self.subTest(edge=(src, dst)):
                self.assertEqual(len(layering.violations([(src, dst)])), 1)

    def test_unranked_server_package_fails(self):
        bad = layering.violations([("//server/engine:x", "//server/unranked:y")])
        self.assertEqual(len(bad), 1)
        self.assertIn("has no layer", bad[0])


if __name__ == "__main__":
    unittest.main()
