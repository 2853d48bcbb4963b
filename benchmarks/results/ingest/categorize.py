import re, subprocess, sys, collections
path = sys.argv[1]
out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "dso,symbol",
                      "-g", "none", "--stdio", "--percent-limit", "0"], capture_output=True,
                     text=True).stdout
cats = collections.OrderedDict([
    ("training (FASTCOVER/ZDICT)", r"FASTCOVER|ZDICT|COVER_|divsufsort|ss_|tr_"),
    ("zstd decompress", r"ZSTD_decompress|HUF_readDTable|HUF_decompress|ZSTD_buildFSETable|ZSTD_decode|ZSTD_execSequence|ZSTD_copyDDict|FSE_buildDTable|ZSTD_initFseState|ZSTD_safecopy|ZSTD_getcBlockSize|FSE_readNCount|ZSTD_DCtx|ZSTD_getFrameHeader|ZSTD_frameHeaderSize|HUF_decode"),
    ("zstd compress", r"ZSTD_compress|FSE_buildCTable|HUF_buildCTable|HUF_compress|FSE_compress|ZSTD_seqToCodes|ZSTD_encodeSequences|ZSTD_resetCCtx|ZSTD_buildSeqStore|ZSTD_entropyCompress|HUF_|FSE_normalize|FSE_optimal|ZSTD_fillDoubleHash|ZSTD_fillHashTable|ZSTD_ldm|ZSTD_CCtx|ZSTD_count|ZSTD_buildCTable|ZSTD_selectEncodingType|ZSTD_crossEntropyCost|ZSTD_NCountCost|ZSTD_fseBitCost|HIST_|ZSTD_rescaleFreqs|ZSTD_copyCDict|ZSTD_compressBegin|ZSTD_loadCEntropy|ZSTD_c|ZSTD_reset|ZSTD_initCDict|ZSTD_createCDict|ZSTD_sizeof|ZSTD_get"),
    ("zstd decompress", r"ZSTD_decompress|HUF_readDTable|HUF_decompress|FSE_readNCount|ZSTD_buildFSETable|ZSTD_d|ZSTD_getFrameHeader|ZSTD_decodeLiterals|ZSTD_execSequence|ZSTD_DCtx|ZSTD_copyDDict|ZSTD_decode|ZSTD_frameHeaderSize|HUF_"),
    ("xxhash", r"XXH"),
    ("rocksdb memtable/WAL/write", r"rocksdb::(MemTable|InlineSkipList|WriteBatch|DBImpl::Write|WriteThread|log::Writer|Arena|ConcurrentArena|MemTableInserter|WritableFileWriter|crc32c|Crc32c|DynamicBloom|MurmurHash|Hash|PosixWritableFile|ConcurrentArena)|crc32c"),
    ("rocksdb other", r"rocksdb::|librocksdb"),
    ("protobuf", r"google::protobuf|libprotobuf"),
    ("grpc", r"grpc|libgrpc|gpr_|absl::lts.*(cord|Cord)|libgpr|libaddress_sorting|libupb|upb_|tsi_|libssl|libcrypto"),
    ("malloc (tcmalloc)", r"tcmalloc|libtcmalloc|operator new|operator delete|malloc|free|cfree"),
    ("memcpy/memcmp/memmove", r"__mem|memcpy|memmove|memset|memcmp|__strlen"),
    ("kernel", r"\[kernel|\[k\]"),
    ("absl mutex/sync", r"absl::.*(Mutex|CondVar|Synch|Spin|Waiter|base_internal)|libabsl_synchronization|pthread|futex|__lll"),
    ("dictlog", r"dictlog::"),
    ("tls", r"__tls_get_addr|TLS init"),
])
totals = collections.Counter()
other = collections.Counter()
for line in out.splitlines():
    m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if not m:
        continue
    pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
    text = dso + " " + sym + (" [k]" if kind == "k" else "")
    for cat, pattern in cats.items():
        if re.search(pattern, text):
            totals[cat] += pct
            break
    else:
        totals["other"] += pct
        other[text[:100]] += pct
samples = int(re.search(r"Samples: (\d+)([KM]?)", subprocess.run(["perf", "report", "-i", path, "--stdio", "--header-only"], capture_output=True, text=True).stdout + out).group(1))
m = re.search(r"of event 'cpu-clock:ppp'\n# Event count \(approx.\): (\d+)", out)
records = int(sys.argv[2]) if len(sys.argv) > 2 else 0
cpu_s = int(m.group(1)) / 1e9 if m else 0
print("cpu seconds (event count): %.2f" % cpu_s)
for cat, pct in totals.most_common():
    per = (" %6.1f us/record" % (pct / 100 * cpu_s / records * 1e6)) if records and cpu_s else ""
    print("%6.2f%%  %s%s" % (pct, cat, per))
print("top of other:")
for text, pct in other.most_common(12):
    print("   %5.2f%%  %s" % (pct, text))
