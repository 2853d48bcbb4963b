import re,subprocess,sys,collections
def cats(path):
    out=subprocess.run(['perf','report','-i',path,'--no-children','-g','none','--sort','dso,symbol','--stdio'],capture_output=True,text=True).stdout
    c=collections.Counter()
    for line in out.splitlines():
        m=re.match(r'\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)',line)
        if not m: continue
        pct=float(m.group(1)); dso=m.group(2); sym=m.group(4).strip()
        if 'librocksdb' in dso:
            if 'SkipList' in sym or 'MemTable' in sym: k='RocksDB memtable lookups (skip list)'
            elif 'DBIter' in sym or 'MergingIterator' in sym or 'Seek' in sym and 'Index' not in sym and 'BinarySeek' not in sym: k='RocksDB iterators (append-time seeks)'
            elif 'perf_context' in sym or 'tls_get_addr' in sym: k='RocksDB thread-locals (perf context)'
            else: k='RocksDB table lookups (index, filter, block cache, data block)'
        elif 'kernel' in dso: k='kernel'
        elif 'tcmalloc' in dso: k='tcmalloc'
        elif dso in ('libc.so.6','ld-linux-x86-64.so.2') or 'libstdc++' in dso:
            k='libc, ld.so (memcmp, memcpy, __tls_get_addr)'
        elif 'grpc' in dso or 'libgpr' in dso or 'libaddress_sorting' in dso or 'libupb' in dso: k='gRPC'
        elif 'protobuf' in dso or 'absl' in dso: k='protobuf, abseil'
        elif dso=='dictlogd':
            if sym.startswith(('ZSTD','HUF','FSE','HIST','COVER','FASTCOVER','ZDICT')): k='zstd'
            else: k="dictlogd's own code (with generated protobuf)"
        else: k='other: '+dso
        c[k]+=pct
    return c
a=cats(sys.argv[1]); b=cats(sys.argv[2])
for k in sorted(set(a)|set(b), key=lambda k:-(a[k]+b[k])):
    print(f"| {k} | {a[k]:.1f}% | {b[k]:.1f}% |")
