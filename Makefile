# dictlog: the two commands are `make run` and `make test`; both install what they
# need on a fresh Debian 12 machine (as root) first.
SHELL := /bin/bash
BAZEL ?= bazel
LISTEN ?= 127.0.0.1:7070
DATA_DIR ?= ./data

# Debian packages the build, tests and tools need.
DEBIAN_PACKAGES := bazel-bootstrap libzstd-dev zstd zlib1g-dev libgrpc++-dev protobuf-compiler-grpc \
  libprotobuf-dev protobuf-compiler libabsl-dev librocksdb-dev libgtest-dev libgmock-dev \
  libbenchmark-dev python3-grpcio python3-protobuf python3-zstandard python3-yaml python3-venv \
  python3-matplotlib openssl libssl-dev prometheus libgoogle-perftools-dev librdkafka-dev maven \
  openjdk-17-jre-headless
# Only for `make fuzz` (libFuzzer needs clang).
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev

.PHONY: deps kafka build run test layering tsan asan charts fuzz clean help

help:
	@echo "make run    install, build, start dictlogd on $(LISTEN) with data in $(DATA_DIR)"
	@echo "make test   install, build, run every test (bazel test //...), make layering, make tsan, make asan"
	@echo "make layering  check that no BUILD dependency points up a layer (tools/layering.py)"
	@echo "make tsan   the engine, dictionary, block and service tests under ThreadSanitizer"
	@echo "make asan   every test but the cluster's and the benchmarks' under AddressSanitizer"
	@echo "make build  build optimised binaries into ./bin/"
	@echo "make deps   install the Debian packages only"
	@echo "make kafka  the Kafka broker's jars from Maven Central (deploy/local-cluster/kafka/lib)"
	@echo "make charts PNG charts from benchmarks/results/*.csv"
	@echo "make fuzz   run each libFuzzer target FUZZ_SECONDS (60) under ASan+UBSan (clang-14)"

# Installs only what is missing (dpkg-query is fast; apt-get runs only when needed).
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The Kafka broker (KRaft) and its dependencies from Maven Central, for the local cluster
# (deploy/local-cluster/cluster.sh) and its test; resolved again only when pom.xml changed.
KAFKA_POM := deploy/local-cluster/kafka/pom.xml
KAFKA_LIB := deploy/local-cluster/kafka/lib
kafka: deps
	@want=$$(sha256sum $(KAFKA_POM) | cut -d' ' -f1); \
	if [ "$$(cat $(KAFKA_LIB)/.pom.sha256 2>/dev/null)" != "$$want" ]; then \
	  echo "resolving the Kafka broker's jars (Maven Central) into $(KAFKA_LIB)"; \
	  rm -rf $(KAFKA_LIB) && mvn -q -B -f $(KAFKA_POM) dependency:copy-dependencies && \
	  echo "$$want" > $(KAFKA_LIB)/.pom.sha256; \
	fi

build: deps
	$(BAZEL) build -c opt //server/daemon:dictlogd //client/cli:dictlog \
	  //dict_trainer:dict_trainer //benchmarks:dictlog-bench
	@mkdir -p bin
	@install -m 755 bazel-bin/server/daemon/dictlogd bin/dictlogd
	@install -m 755 bazel-bin/client/cli/dictlog bin/dictlog
	@install -m 755 bazel-bin/dict_trainer/dict_trainer bin/dict_trainer
	@install -m 755 bazel-bin/benchmarks/dictlog-bench bin/dictlog-bench
	@echo "binaries in ./bin: $$(ls bin | tr '\n' ' ')"

run: build
	@echo "dictlogd on $(LISTEN), data in $(DATA_DIR). Talk to it with:"
	@echo "  bin/dictlog --server=$(LISTEN) append --category=HDFS ../shared/data/loghub/HDFS.log"
	@echo "  bin/dictlog --server=$(LISTEN) get HDFS/1"
	@echo "  bin/dictlog --server=$(LISTEN) pools"
	@echo "  grpcurl -plaintext $(LISTEN) list"
	@echo "Stop with Ctrl-C."
	bin/dictlogd --listen=$(LISTEN) --data_dir=$(DATA_DIR)

# The summary counts `bazel test //...`'s test cases (its test.xml files under
# bazel-testlogs), printed right after that run.
test: deps kafka
	@status=0; $(BAZEL) test //... || status=$$?; \
	python3 tools/test_summary.py $$($(BAZEL) query 'tests(//...)' 2>/dev/null) || true; \
	$(MAKE) --no-print-directory layering || { [ $$status -ne 0 ] || status=1; }; \
	echo "ThreadSanitizer (make tsan):"; \
	$(MAKE) --no-print-directory tsan || { [ $$status -ne 0 ] || status=1; }; \
	echo "AddressSanitizer (make asan):"; \
	$(MAKE) --no-print-directory asan || { [ $$status -ne 0 ] || status=1; }; \
	exit $$status

# Every BUILD dependency points down the layers (tools/layering.py says which); bazel
# query cannot run inside a sandboxed test, so it runs here.
layering:
	@$(BAZEL) query 'deps(//...)' --output=graph --nograph:factored --noimplicit_deps \
	  2>/dev/null | python3 tools/layering.py

# ThreadSanitizer (gcc; docs/reliability.md): the packages with threads of their own,
# in an output base of their own so the normal build's cache stays.
TSAN_TARGETS := //server/engine/... //server/dictionary/... //server/block/... //server/service/... \
  //server/store:store_times_test //server/store:time_range_cache_test \
  //server/metrics/... //server/transport/... //server/daemon/... //client:all \
  //server/pool:pool_test
TSAN_OUTPUT_BASE ?= $(HOME)/.cache/dictlog-tsan
tsan: deps
	@status=0; $(BAZEL) --output_base=$(TSAN_OUTPUT_BASE) test --config=tsan $(TSAN_TARGETS) \
	  || status=$$?; $(BAZEL) --output_base=$(TSAN_OUTPUT_BASE) shutdown; exit $$status

# AddressSanitizer + UndefinedBehaviorSanitizer (.bazelrc's asan config): every test
# but the cluster's (Kafka brokers) and the benchmarks', in an output base of their own
# like tsan's. The end-to-end tests start dictlogd built the same way (without tcmalloc).
ASAN_TARGETS := //codec/... //common/... //server/store/... //server/pool/... \
  //server/block/... //server/dictionary/... //server/engine/... //server/service/... \
  //server/transport/... //server/auth/... //server/metrics/... //server/daemon/... \
  //client/... //dict_trainer/... //tests/e2e/... //tests/fuzz/... //tests/reliability/...
ASAN_OUTPUT_BASE ?= $(HOME)/.cache/dictlog-asan
asan: deps
	@status=0; $(BAZEL) --output_base=$(ASAN_OUTPUT_BASE) test --config=asan $(ASAN_TARGETS) \
	  || status=$$?; $(BAZEL) --output_base=$(ASAN_OUTPUT_BASE) shutdown; exit $$status

# PNG charts from the benchmark CSVs in benchmarks/ (matplotlib from PyPI).
charts:
	@python3 -c "import matplotlib" 2>/dev/null || pip install -q matplotlib
	python3 benchmarks/plot_dict_bench.py benchmarks/results/dict_bench_quick.csv benchmarks/results/dict_bench_quick
	python3 benchmarks/plot_dict_bench.py benchmarks/results/dict_bench_modes.csv benchmarks/results/dict_bench_modes
	python3 benchmarks/plot_storage_bench.py benchmarks/results/storage_bench.csv benchmarks/results/storage_bench
	python3 benchmarks/plot_frames_check.py benchmarks/results/frames_check

# libFuzzer targets (tests/fuzz/README.md); `make test` replays their corpus with gcc.
fuzz: deps
	@missing=$$(for p in $(FUZZ_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	tests/fuzz/run_fuzzers.sh --seconds=$(or $(FUZZ_SECONDS),60)

clean:
	$(BAZEL) clean
	rm -rf bin
