#!/usr/bin/env python3
"""benchmarks/compare: dictlog side by side with its baselines, one command (issue 5).

For each configuration it starts the server itself on 127.0.0.1 port 0 (dictlogd with
the configuration's pool options, or compare_server), loads the same loghub records
with `dictlog-bench load`, waits for dictionaries and re-compression where the
configuration has them, makes the stored form final (dictlogd: `dictlog flush`, its
memtables written to SST files, or a restart for a dictlogd without that call;
compare_server: SIGUSR1, flush and full compaction), measures stored bytes, checks
that a sample of records reads back exactly what was loaded, and keeps the server
running. Then it runs the same read load
(`dictlog-bench read`: Get, then MultiGet(64), uniform ids, --duration each) on every
configuration in turn, for --rounds rounds (medians: the machine's noise hits every
configuration alike), then with --paired the read targets' two configurations in
alternating short slices (ratios of reads seconds apart), and stops the servers. Then
it writes a
markdown table (stdout and compare.md), compare.csv, compare.json (rows, the issue's
targets with pass/fail, dictlog vs RocksDB factors, the machine) and PNG charts.
Progress lines go to stderr. Only 127.0.0.1 receives traffic.
"""
import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report  # noqa: E402

CONFIGS = [
    {"name": "record+dict", "server": "dictlogd", "storage": "record", "dictionary": True},
    {"name": "block2k+dict", "server": "dictlogd", "storage": "block", "block_bytes": 2048,
     "dictionary": True},
    {"name": "block4k+dict", "server": "dictlogd", "storage": "block", "block_bytes": 4096,
     "dictionary": True},
    {"name": "block16k+dict", "server": "dictlogd", "storage": "block", "block_bytes": 16384,
     "dictionary": True},
    # The records family's table blocks stored uncompressed (ADR 0011's alternative to
    # LZ4): what LZ4 costs record-mode reads, and what it saves on disk; not one of the
    # scale mode's defaults.
    {"name": "record+dict_plain", "server": "dictlogd", "storage": "record",
     "dictionary": True, "dictlogd_flags": ["--table_compression=none"]},
    {"name": "record", "server": "dictlogd", "storage": "record", "dictionary": False},
    {"name": "block4k", "server": "dictlogd", "storage": "block", "block_bytes": 4096,
     "dictionary": False},
    {"name": "block16k", "server": "dictlogd", "storage": "block", "block_bytes": 16384,
     "dictionary": False},
    {"name": "block64k", "server": "dictlogd", "storage": "block", "block_bytes": 65536,
     "dictionary": False},
    {"name": "rocksdb_dict", "server": "compare_server", "storage": "rocksdb",
     "block_bytes": 4096, "dictionary": True},
    {"name": "rocksdb_dict16k", "server": "compare_server", "storage": "rocksdb",
     "block_bytes": 16384, "dictionary": True},
    # RocksDB with uncompressed blocks: what a lookup costs with nothing to decompress
    # (compare_report.lookup_bounds and PAIRED_BOUNDS).
    {"name": "rocksdb_plain", "server": "compare_server", "storage": "rocksdb",
     "block_bytes": 4096, "dictionary": False, "uncompressed": True},
    {"name": "null", "server": "compare_server", "storage": "none", "dictionary": False},
]
CONFIG_NAMES = [c["name"] for c in CONFIGS]
# Issue 19's configurations: each block size beside RocksDB's own at the same size.
# rocksdb_plain: what bounds the read targets, in the same run.
SCALE_CONFIGS = ["record+dict", "block2k+dict", "block4k+dict", "block16k+dict",
                 "rocksdb_dict", "rocksdb_dict16k", "rocksdb_plain", "null"]
# Scale mode (issue 19): 100 copies of loghub (2,000,000 records, 252 MB raw), block
# cache 1/8 of the raw bytes, uniform and Zipf(0.99) reads, ingest end to end, peak RSS.
SCALE_RECORDS = 2000000
MODES = {
    "quick": {"copies": 1, "duration": "2s", "concurrency": 16, "wait_seconds": 120,
              "rounds": 1, "paired": 0, "configs": ",".join(CONFIG_NAMES), "dists": "uniform",
              "block_cache_mb": 32},
    "full": {"copies": 10, "duration": "10s", "concurrency": 32, "wait_seconds": 900,
             "rounds": 3, "paired": 0, "configs": ",".join(CONFIG_NAMES), "dists": "uniform",
             "block_cache_mb": 32},
    # block_cache_mb 0: raw bytes / 8, rounded down to MiB (at least 1).
    "scale": {"copies": 100, "duration": "10s", "concurrency": 32, "wait_seconds": 1800,
              "rounds": 1, "paired": 4, "configs": ",".join(SCALE_CONFIGS),
              "dists": "uniform,zipf:0.99",
              "block_cache_mb": 0},
}
# dictlogd's --dictionary_cache_bytes default: part of the RSS target's budget.
DICTIONARY_CACHE_BYTES = 256 << 20
VERIFY_SAMPLE = 200


class CompareError(Exception):
    pass


def progress(message):
    print("[compare %s] %s" % (time.strftime("%H:%M:%S"), message), file=sys.stderr,
          flush=True)


def run(argv, what, timeout=600, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """Runs a tool; CompareError with its stderr if it fails."""
    result = subprocess.run(argv, stdout=stdout, stderr=stderr, timeout=timeout)
    if result.returncode != 0:
        err = result.stderr.decode(errors="replace") if result.stderr else ""
        raise CompareError("%s failed (exit %d): %s" % (what, result.returncode, err[-2000:]))
    return result.stdout


class Server:
    """A server process on 127.0.0.1 port 0; `address` once started."""

    def __init__(self, name, argv, work):
        self.name, self.argv, self.work = name, argv, work
        self.port_file = os.path.join(work, "port")
        self.log_path = os.path.join(work, "server.log")
        self.process = None
        self.address = None
        self.peak_rss_bytes = 0  # the largest VmHWM of any of its processes so far

    def sample_rss(self):
        """Folds the running process's peak resident set (VmHWM) into peak_rss_bytes."""
        try:
            with open("/proc/%d/status" % self.process.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        self.peak_rss_bytes = max(self.peak_rss_bytes,
                                                  int(line.split()[1]) * 1024)
        except (OSError, ValueError):
            pass

    def start(self, timeout=60):
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            self.argv + ["--listen=127.0.0.1:0", "--port_file=" + self.port_file],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    port = f.read().strip()
                if port:
                    self.address = "127.0.0.1:" + port
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise CompareError("%s did not start; its log:\n%s" % (self.name, self.log_tail()))

    def log_tail(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def exit_report(self):
        """If the process has exited: its exit status and log tail (else empty)."""
        code = self.process.poll() if self.process is not None else None
        if code is None:
            return ""
        return "\n%s had exited (status %d); its log:\n%s" % (self.name, code, self.log_tail())

    def signal(self, sig):
        self.process.send_signal(sig)

    def stop(self, timeout=60):
        """SIGTERM; the server must drain and exit 0."""
        self.sample_rss()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise CompareError("%s did not stop within %ds" % (self.name, timeout))
        self.process = None
        if code != 0:
            raise CompareError("%s exited %d; its log:\n%s" % (self.name, code, self.log_tail()))

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


class PageCacheDropper:
    """While active, drops the OS page cache's pages of every file under a directory
    (posix_fadvise DONTNEED) every `interval` seconds, so reads come from the disk
    rather than from pages the load or earlier reads left in memory. Use as `with`; on
    exit it reads every file once, so that the next round's page-cache-kept reads find
    the files in memory as the first round's did (without it, the next round's first
    runs fetched them from the disk, the largest stores' longest)."""

    def __init__(self, directory, interval=0.1):
        self.directory, self.interval = directory, interval
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.drops = 0

    def drop_once(self):
        for parent, _, names in os.walk(self.directory):
            for name in names:
                try:
                    fd = os.open(os.path.join(parent, name), os.O_RDONLY)
                except OSError:
                    continue  # deleted by a compaction meanwhile
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)
        self.drops += 1

    def _run(self):
        while not self.stopping.wait(self.interval):
            self.drop_once()

    def __enter__(self):
        self.drop_once()
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stopping.set()
        self.thread.join()
        self.reread_bytes = read_files(self.directory)


def read_files(directory):
    """Reads every file under `directory` once (into the page cache); the bytes read."""
    total = 0
    for parent, _, names in os.walk(directory):
        for name in names:
            try:
                with open(os.path.join(parent, name), "rb") as f:
                    while True:
                        chunk = f.read(1 << 20)
                        if not chunk:
                            break
                        total += len(chunk)
            except OSError:
                continue  # deleted by a compaction meanwhile
    return total


def read_lines(path):
    """The lines of a file as dictlog-bench load reads them (std::getline)."""
    with open(path, "rb") as f:
        parts = f.read().split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


class Dataset:
    """The records `dictlog-bench load --dir --copies` appends, in its order."""

    def __init__(self, data_dir, copies):
        self.dir, self.copies = data_dir, copies
        self.base = []  # (category, line) of one copy
        for name in sorted(n for n in os.listdir(data_dir) if n.endswith(".log")):
            category = name[:-len(".log")]
            self.base.extend((category, line) for line in read_lines(os.path.join(data_dir, name)))
        if not self.base:
            raise CompareError("no *.log records in " + data_dir)

    def __len__(self):
        return len(self.base) * self.copies

    def expected(self, index):
        copy, at = divmod(index, len(self.base))
        category, line = self.base[at]
        return category, (b"c%d " % copy if copy else b"") + line

    def raw_bytes(self):
        one = sum(len(line) for _, line in self.base)
        prefixes = sum(len(b"c%d " % c) for c in range(1, self.copies)) * len(self.base)
        return one * self.copies + prefixes


def select_files(args, work):
    """--dir, or a directory of links to the --files subset of it."""
    if not args.files:
        return args.dir
    subset = os.path.join(work, "data")
    shutil.rmtree(subset, ignore_errors=True)
    os.makedirs(subset)
    for name in args.files.split(","):
        source = os.path.join(args.dir, name + ".log")
        if not os.path.exists(source):
            raise CompareError("--files: no " + source)
        os.symlink(os.path.abspath(source), os.path.join(subset, name + ".log"))
    return subset


def dictlog_json(args, server, *command):
    """`dictlog --format=json COMMAND...`: the JSON objects it prints, one a line."""
    try:
        out = run([args.dictlog, "--server=" + server.address, "--format=json"] + list(command),
                  "dictlog " + " ".join(command))
    except CompareError as e:
        raise CompareError(str(e) + server.exit_report()) from None
    return [json.loads(line) for line in out.decode("utf-8", "surrogateescape").splitlines()
            if line.strip()]


def dictlogd_argv(config, args, work):
    """dictlogd's command line for a configuration (pool options in a config file)."""
    options = ""
    if config["storage"] == "block":
        options = "storage_mode: STORAGE_MODE_BLOCK block_bytes: %d" % config["block_bytes"]
    config_path = os.path.join(work, "dictlogd.textproto")
    with open(config_path, "w") as f:
        f.write("default_pool_options { %s }\n" % options)
    return [config.get("dictlogd", args.dictlogd), "--data_dir=" + os.path.join(work, "db"),
            "--config=" + config_path,
            "--auto_train=" + ("true" if config["dictionary"] else "false"),
            "--recompress_records_per_second=10000000",
            # No load balancer to warn: the restart that makes the stored form of a
            # dictlogd without Admin.Flush final (memtables to SST files) does not
            # wait the default 1 s notice.
            "--shutdown_notice_seconds=0",
            "--block_cache_mb=%d" % args.block_cache_mb] + config.get("dictlogd_flags", [])


def wait_for_dictionaries(args, server, deadline):
    """Until every pool has an active dictionary; then re-compresses every pool."""
    while True:
        pools = [p for p in dictlog_json(args, server, "pools") if "pool" in p]
        waiting = [p["pool"] for p in pools if p["active_dictionary_id"] == 0]
        if pools and not waiting:
            break
        if time.time() > deadline:
            raise CompareError("no dictionary within the wait for pools: " + ",".join(waiting))
        time.sleep(0.5)
    for pool in pools:
        progress("  re-compressing pool %s with dictionary %d" %
                 (pool["pool"], pool["active_dictionary_id"]))
        run([args.dictlog, "--server=" + server.address, "recompress", "--pool=" + pool["pool"]],
            "recompress " + pool["pool"], timeout=max(60, deadline - time.time()))


def sst_bytes(db_dir):
    """The size of every RocksDB table file under db_dir (all column families)."""
    return sum(os.path.getsize(os.path.join(db_dir, name)) for name in os.listdir(db_dir)
               if name.endswith(".sst"))


def dictlogd_stats(args, server, work):
    pools = [p for p in dictlog_json(args, server, "pools") if "pool" in p]
    dictionaries = [d for d in dictlog_json(args, server, "dict", "list") if "id" in d]
    return {
        "records": sum(p["records"] for p in pools),
        "raw_bytes": sum(p["raw_bytes"] for p in pools),
        "stored_bytes": sum(p["stored_bytes"] for p in pools),
        # Active dictionaries: the ones the stored records use after re-compression.
        "dictionary_bytes": sum(d["size_bytes"] for d in dictionaries if d["active"]),
        "pools": len(pools),
        "dictionaries": sum(1 for d in dictionaries if d["active"]),
        # On disk after the flush: keys, index, filters, every column family.
        "sst_bytes": sst_bytes(os.path.join(work, "db")),
    }


def compare_server_stats(server, work, timeout):
    """SIGUSR1, then the JSON compare_server writes once it has flushed and compacted."""
    stats_path = os.path.join(work, "stats.json")
    server.signal(signal.SIGUSR1)
    deadline = time.time() + timeout
    while not os.path.exists(stats_path):
        if time.time() > deadline:
            raise CompareError("compare_server wrote no stats; log:\n" + server.log_tail())
        time.sleep(0.1)
    with open(stats_path) as f:
        return json.load(f)


def verify(args, server, ids, dataset, payload_check):
    """Reads VERIFY_SAMPLE ids spread over the ids file; each must come back with its
    category and the payload that was loaded (the null handler: its length)."""
    step = max(1, len(ids) // VERIFY_SAMPLE)
    picks = list(range(0, len(ids), step))[:VERIFY_SAMPLE] + [len(ids) - 1]
    for start in range(0, len(picks), 50):
        chunk = picks[start:start + 50]
        records = dictlog_json(args, server, "get", *[ids[i] for i in chunk])
        if len(records) != len(chunk):
            raise CompareError("get of %d ids printed %d records" % (len(chunk), len(records)))
        for index, record in zip(chunk, records):
            category, payload = dataset.expected(index)
            got = (record["payload"].encode("utf-8", "surrogateescape") if "payload" in record
                   else __import__("base64").b64decode(record["payload_base64"]))
            same = got == payload if payload_check else len(got) == len(payload)
            if record["id"] != ids[index] or record["category"] != category or not same:
                raise CompareError("record %s (#%d) does not read back as loaded" %
                                   (ids[index], index))
    return len(picks)


def bench_read(args, server, ids_path, op, work, tag, dist="uniform", duration=None):
    """One dictlog-bench read run (--duration unless `duration`); its JSON report. Its
    progress goes to stderr."""
    json_path = os.path.join(work, op + tag + ".json")
    run([args.bench, "read", "--server=" + server.address, "--ids=" + ids_path, "--op=" + op,
         "--batch=64", "--dist=" + dist, "--duration=" + (duration or args.duration),
         "--concurrency=%d" % args.concurrency, "--connections=%d" % args.connections,
         "--json=" + json_path], "dictlog-bench read --op=" + op, stderr=None)
    with open(json_path) as f:
        report = json.load(f)
    if report["errors"]:
        raise CompareError("%s: %d read errors: %s; first of each: %s" % (
            op, report["errors"], report["errors_by_code"], report.get("first_error", {})))
    return report


def load(args, server, data_dir, work):
    ids_path = os.path.join(work, "ids")
    run([args.bench, "load", "--server=" + server.address, "--dir=" + data_dir,
         "--copies=%d" % args.copies, "--ids_out=" + ids_path], "dictlog-bench load",
        stderr=None)
    with open(ids_path) as f:
        return ids_path, [line.strip() for line in f if line.strip()]


class Prepared:
    """A configuration's running server, loaded, final and checked."""

    def __init__(self, config, server, work, ids_path, stats, details, verified):
        self.config, self.server, self.work = config, server, work
        self.ids_path, self.stats, self.details = ids_path, stats, details
        self.verified = verified
        self.gets, self.multigets = [], []
        # Scale figures (compare_report.scale_fields): more read runs, ingest, RSS.
        self.scale = {"zipf_get": [], "zipf_multiget": [], "nocache_get": [],
                      "nocache_multiget": []}


def server_argv(config, args, work):
    if config["server"] == "dictlogd":
        return dictlogd_argv(config, args, work)
    backend = "null" if config["name"] == "null" else "rocksdb_dict"
    return [args.compare_server, "--backend=" + backend,
            "--block_bytes=%d" % config.get("block_bytes", 4096),
            "--data_dir=" + os.path.join(work, "db"),
            "--stats_out=" + os.path.join(work, "stats.json"),
            "--block_cache_mb=%d" % args.block_cache_mb] + \
        (["--uncompressed"] if config.get("uncompressed") else [])


def finalize(config, args, server, work):
    """Dictionaries and re-compression if the configuration has them; the stored form
    made final; its stats (and compare_server's own report)."""
    if config["server"] != "dictlogd":
        progress("%s: flush and full compaction" % config["name"])
        stats = compare_server_stats(server, work, args.wait_seconds)
        stats = dict(stats, sst_bytes=stats["stored_bytes"])  # rocksdb_dict: SSTs; null: 0
        return stats, {config["name"]: stats}
    if config["dictionary"]:
        progress("%s: waiting for dictionaries" % config["name"])
        wait_for_dictionaries(args, server, time.time() + args.wait_seconds)
    flush_memtables(args, server, config["name"])
    return dictlogd_stats(args, server, work), {}


def flush_memtables(args, server, name):
    """dictlogd's memtables to SST files: `dictlog flush`, or for a dictlogd without
    Admin.Flush (an older --dictlogd_before) a restart, which flushes them at close."""
    try:
        out = run([args.dictlog, "--server=" + server.address, "flush"], "dictlog flush")
        progress("%s: %s" % (name, out.decode(errors="replace").strip()))
        return
    except CompareError as e:
        if "UNIMPLEMENTED" not in str(e):
            raise CompareError(str(e) + server.exit_report()) from None
    progress("%s: no Admin.Flush: restarting dictlogd (memtables to SST files)" % name)
    server.stop()
    server.start()


def prepare(config, args, data_dir, dataset, root):
    """Starts, loads, finalizes and checks one configuration; leaves its server running
    (the caller stops or kills it)."""
    work = os.path.join(root, config["name"].replace("+", "_"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    server = Server(config["name"], server_argv(config, args, work), work)
    server.start()
    prepared = Prepared(config, server, work, None, None, {}, 0)
    progress("%s: serving on %s; loading %d records" %
             (config["name"], server.address, len(dataset)))
    started = time.monotonic()
    prepared.ids_path, ids = load(args, server, data_dir, work)
    loaded = time.monotonic()
    if len(ids) != len(dataset):
        raise CompareError("load acknowledged %d ids for %d records" % (len(ids), len(dataset)))
    stats, prepared.details = finalize(config, args, server, work)
    # Ingest end to end: from the first append until the stored form is final.
    prepared.scale.update(load_s=loaded - started, finalize_s=time.monotonic() - loaded)
    progress("%s: ingest %.1f s (load %.1f s, final form %.1f s)" %
             (config["name"], time.monotonic() - started, loaded - started,
              time.monotonic() - loaded))
    if stats["records"] != len(dataset) or stats["raw_bytes"] != dataset.raw_bytes():
        raise CompareError("server counts %d records, %d raw bytes; loaded %d, %d" %
                           (stats["records"], stats["raw_bytes"], len(dataset),
                            dataset.raw_bytes()))
    prepared.stats = stats
    prepared.verified = verify(args, server, ids, dataset, payload_check=config["name"] != "null")
    progress("%s: %d records read back as loaded" % (config["name"], prepared.verified))
    return prepared


def read_round(args, prepared, round_index):
    """One Get run and one MultiGet run against a prepared configuration."""
    name = prepared.config["name"]
    progress("%s: reads, round %d/%d" % (name, round_index + 1, args.rounds))
    tag = "-%d" % round_index
    prepared.gets.append(bench_read(args, prepared.server, prepared.ids_path, "get",
                                    prepared.work, tag))
    prepared.multigets.append(bench_read(args, prepared.server, prepared.ids_path,
                                         "multiget", prepared.work, tag))
    for dist in args.dists.split(","):
        if dist == "uniform":
            continue
        for op in ("get", "multiget"):
            prepared.scale["zipf_" + op].append(bench_read(
                args, prepared.server, prepared.ids_path, op, prepared.work,
                "-%s%s" % (dist.replace(":", ""), tag), dist))
    if args.page_cache == "drop" and prepared.config["name"] != "null":
        with PageCacheDropper(os.path.join(prepared.work, "db")) as dropper:
            for op in ("get", "multiget"):
                prepared.scale["nocache_" + op].append(bench_read(
                    args, prepared.server, prepared.ids_path, op, prepared.work,
                    "-nocache" + tag))
        progress("%s: page cache refilled (%d bytes read)" % (name, dropper.reread_bytes))


def paired_reads(args, prepared):
    """compare_report.PAIRED_READS and PAIRED_BOUNDS whose two configurations both ran:
    --paired pairs of --paired_duration slices, A then B, then B then A, and so on (a
    drift of the host within a pair hits both sides alike over the pairs); one entry
    each."""
    by = {p.config["name"]: p for p in prepared}
    out = []
    for spec in compare_report.PAIRED_READS + compare_report.PAIRED_BOUNDS:
        _, a, b, op, _ = spec
        if args.paired < 1 or a not in by or b not in by:
            continue
        values = {a: [], b: []}
        for i in range(args.paired):
            progress("paired %s: %s and %s, pair %d/%d" % (op, a, b, i + 1, args.paired))
            for name in ((a, b) if i % 2 == 0 else (b, a)):
                report = bench_read(args, by[name].server, by[name].ids_path, op,
                                    by[name].work, "-paired%d" % i,
                                    duration=args.paired_duration)
                values[name].append(compare_report.paired_value(op, report))
        out.append(compare_report.paired_entry(spec, values[a], values[b]))
    return out


def run_all(configs, args, data_dir, dataset, root):
    """Prepares every configuration (all servers stay up), then runs the reads in
    --rounds rounds, configurations interleaved, so a noisy spell of the machine hits
    them alike, then the paired reads; stops every server. The rows (median round of
    each), the details and the paired entries."""
    prepared = []
    try:
        for config in configs:
            prepared.append(prepare(config, args, data_dir, dataset, root))
        for round_index in range(args.rounds):
            for p in prepared:
                read_round(args, p, round_index)
        paired = paired_reads(args, prepared)
        for p in prepared:
            p.server.stop()  # samples its peak RSS first
    finally:
        for p in prepared:
            p.server.kill()
    rows, details = [], {}
    for p in prepared:
        if not args.keep_data:
            shutil.rmtree(os.path.join(p.work, "db"), ignore_errors=True)
        p.scale["peak_rss_bytes"] = p.server.peak_rss_bytes
        row = compare_report.make_row(p.config, p.stats, p.gets, p.multigets, p.verified,
                                      p.scale)
        progress("%s: ratio %.3f, Get %.0f ops/s, MultiGet %.0f records/s (median of %d)" %
                 (p.config["name"], row["ratio"], row["get_ops_s"], row["multiget_records_s"],
                  len(p.gets)))
        rows.append(row)
        details.update(p.details)
    return rows, details, paired


def machine_line():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return "%s, %d cores, %s %s, load average %s" % (
        model or platform.processor(), os.cpu_count() or 0, platform.system(),
        platform.release(), " ".join("%.1f" % x for x in os.getloadavg()))


def write_outputs(args, rows, details, paired, started_machine, command, conditions):
    os.makedirs(args.out, exist_ok=True)
    table = compare_report.markdown_table(rows)
    scale = compare_report.scale_table(rows)
    if scale:
        table += "\n" + scale
    bounds = compare_report.lookup_bounds(rows)
    goals = compare_report.targets(
        rows, rss_budget_bytes=(args.block_cache_mb << 20) + DICTIONARY_CACHE_BYTES)
    summary = {
        "command": command, "mode": args.mode, "copies": args.copies,
        "duration": args.duration, "concurrency": args.concurrency,
        "connections": args.connections, "block_cache_mb": args.block_cache_mb,
        "dists": args.dists, "page_cache": args.page_cache,
        "scale_conditions": conditions,
        "rounds": args.rounds, "machine_at_start": started_machine,
        "machine_at_end": machine_line(), "rows": rows, "targets": goals,
        "versus_rocksdb": compare_report.versus_rocksdb(rows),
        "lookup_bounds": bounds,
        "paired_duration": args.paired_duration,
        "paired": paired,
        # compare_server's own report per configuration (rocksdb_dict: SST properties).
        "compare_server": details,
    }
    markdown = (table + "\n" + compare_report.targets_markdown(goals) +
                compare_report.bounds_markdown(bounds) +
                compare_report.paired_markdown(paired, args.paired_duration))
    paths = {name: os.path.join(args.out, args.prefix + ext)
             for name, ext in (("md", ".md"), ("csv", ".csv"), ("json", ".json"))}
    with open(paths["md"], "w") as f:
        f.write(markdown)
    with open(paths["csv"], "w") as f:
        f.write(compare_report.to_csv(rows))
    try:
        import plot_compare
        summary["charts"] = plot_compare.plot(rows, os.path.join(args.out, args.prefix))
    except ImportError as error:
        progress("no charts (%s); run plot_compare.py with a python3 that has matplotlib"
                 % error)
        summary["charts"] = []
    with open(paths["json"], "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    sys.stdout.write(markdown)
    progress("wrote %s" % ", ".join(list(paths.values()) + summary["charts"]))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="loghub directory (*.log, one category each)")
    parser.add_argument("--files", default="", help="only these files of --dir, e.g. HDFS,Spark")
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument("--configs", help="comma-separated subset of: " + ",".join(CONFIG_NAMES)
                        + " (mode default: quick/full all of them, scale "
                        + ",".join(SCALE_CONFIGS) + ")")
    parser.add_argument("--copies", type=int, help="dictlog-bench load --copies (mode default)")
    parser.add_argument("--duration", help="each read run, e.g. 20s (mode default)")
    parser.add_argument("--concurrency", type=int, help="dictlog-bench read --concurrency")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--block_cache_mb", type=int,
                        help="RocksDB block cache of every server, MiB (the same budget for "
                             "all: dictlogd's --block_cache_mb, compare_server's); default 32, "
                             "scale: the raw bytes / 8")
    parser.add_argument("--dists", help="read distributions: uniform[,zipf:S] (default "
                                        "uniform; scale: uniform,zipf:0.99)")
    parser.add_argument("--page_cache", choices=("keep", "drop"),
                        help="drop: also run Get and MultiGet (uniform) while the OS page "
                             "cache's pages of the server's files are dropped every 0.1 s; "
                             "reported separately (default keep; scale: drop)")
    parser.add_argument("--rounds", type=int,
                        help="read rounds, configurations interleaved; medians (mode default)")
    parser.add_argument("--paired", type=int,
                        help="after the rounds, this many pairs of alternating short reads "
                             "of each read target's two configurations (A B, B A, ...; "
                             "the median of the pairs' ratios; default 0, scale: 4)")
    parser.add_argument("--paired_duration", default="3s",
                        help="each paired read's duration (default 3s)")
    parser.add_argument("--wait_seconds", type=int, help="limit of each wait (dictionaries)")
    parser.add_argument(
        "--out", default=os.path.join(os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."),
                                      "benchmarks", "results", "compare"),
        help="output directory (default: benchmarks/results/compare of the workspace)")
    parser.add_argument("--dictlogd_before", default="",
                        help="a second dictlogd (e.g. built from an earlier commit): every "
                             "dictlogd configuration also runs on it, as CONFIG@before")
    parser.add_argument("--prefix", default="compare", help="output file name prefix")
    parser.add_argument("--work_dir", default="", help="servers' data (default: under --out)")
    parser.add_argument("--keep_data", action="store_true", help="keep the servers' databases")
    for tool, where in (("dictlogd", "server/daemon/dictlogd"), ("dictlog", "client/cli/dictlog"),
                        ("bench", "benchmarks/dictlog-bench"),
                        ("compare_server", "benchmarks/compare/compare_server")):
        parser.add_argument("--" + tool, default=os.path.join("bazel-bin", where))
    args = parser.parse_args(argv)
    for key, value in MODES[args.mode].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.page_cache is None:
        args.page_cache = "drop" if args.mode == "scale" else "keep"
    unknown = [c for c in args.configs.split(",") if c not in CONFIG_NAMES]
    if (unknown or min(args.copies, args.concurrency, args.rounds) < 1 or
            args.block_cache_mb < 0 or args.paired < 0):
        parser.error("unknown --configs %s, or --copies/--concurrency/--rounds < 1, or "
                     "--block_cache_mb/--paired < 0" % unknown)
    dists = args.dists.split(",")
    if (dists[0] != "uniform" or len(dists) > 2 or
            (len(dists) == 2 and not dists[1].startswith("zipf:"))):
        parser.error("--dists must be uniform or uniform,zipf:S, not " + args.dists)
    return args


def with_before(configs, args):
    """With --dictlogd_before, each dictlogd configuration also runs on that binary, as
    CONFIG@before just before CONFIG (before/after in one run)."""
    if not args.dictlogd_before:
        return configs
    out = []
    for config in configs:
        if config["server"] == "dictlogd":
            out.append(dict(config, name=config["name"] + "@before",
                            dictlogd=args.dictlogd_before))
        out.append(config)
    return out


def scale_conditions(args, dataset):
    """Issue 19's conditions of a scale run: records and the block cache's share."""
    cache = args.block_cache_mb << 20
    return {"records": len(dataset), "records_needed": SCALE_RECORDS,
            "raw_bytes": dataset.raw_bytes(), "block_cache_bytes": cache,
            "block_cache_share": round(cache / dataset.raw_bytes(), 4),
            "met": len(dataset) >= SCALE_RECORDS and cache * 8 <= dataset.raw_bytes()}


def main(argv):
    # SIGTERM unwinds like an error, so the servers started so far are killed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = parse_args(argv)
    command = " ".join(["compare"] + argv)
    started = machine_line()
    progress("machine: " + started)
    root = args.work_dir or os.path.join(args.out, "work")
    os.makedirs(root, exist_ok=True)
    try:
        data_dir = select_files(args, root)
        dataset = Dataset(data_dir, args.copies)
        if args.block_cache_mb == 0:  # scale: an eighth of the raw data
            args.block_cache_mb = max(1, dataset.raw_bytes() // 8 >> 20)
            progress("block cache %d MiB (raw %d bytes / 8)" %
                     (args.block_cache_mb, dataset.raw_bytes()))
        wanted = args.configs.split(",")
        rows, details, paired = run_all(
            with_before([c for c in CONFIGS if c["name"] in wanted], args), args, data_dir,
            dataset, root)
    except (CompareError, subprocess.TimeoutExpired, OSError) as error:
        print("compare: %s" % error, file=sys.stderr)
        return 1
    write_outputs(args, rows, details, paired, started, command,
                  scale_conditions(args, dataset))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
