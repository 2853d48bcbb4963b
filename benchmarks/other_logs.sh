#!/usr/bin/env bash
# other_logs.sh OUT_DIR: a second corpus for out_of_sample.py and zstd_reference.py, of
# log categories that are not in loghub, gathered from what a Debian machine that has
# installed dictlog's packages and run its tests holds (nothing is downloaded; the
# files differ from machine to machine, so figures are comparable within one machine's
# corpus only). One OUT_DIR/<name>.log per source found, at most 4,000 non-empty lines,
# each cut at 2,000 bytes (dictlog's record range); sources not found are skipped:
#   dpkg          /var/log/dpkg.log (package actions: short, versioned lines)
#   aptterm       /var/log/apt/term.log (maintainer scripts' output)
#   apthistory    /var/log/apt/history.log (few, long records: a small pool)
#   alternatives  /var/log/alternatives.log (a small pool)
#   bazeljava     the largest Bazel server log (java.log.*) under ~/.cache/bazel
#   kafka         the largest Kafka broker server.log under ~/.cache/bazel (cluster tests)
#   rocksdblog    the largest RocksDB LOG under /tmp (a dictlogd store's)
# Prints where each came from.
set -euo pipefail
out=${1:?usage: other_logs.sh OUT_DIR}
mkdir -p "$out"
largest() { find "$@" -type f -size +50k -printf '%s %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-; }
take() {  # take NAME FILE
  local name=$1 file=$2
  if [[ -z "$file" || ! -r "$file" ]]; then echo "$name: not found, skipped"; return; fi
  grep -av '^[[:space:]]*$' "$file" | cut -c1-2000 | head -n 4000 >"$out/$name.log" || true
  echo "$name: $(wc -l <"$out/$name.log") lines from $file"
}
take dpkg /var/log/dpkg.log
take aptterm /var/log/apt/term.log
take apthistory /var/log/apt/history.log
take alternatives /var/log/alternatives.log
take bazeljava "$(largest "$HOME/.cache/bazel" -maxdepth 3 -name 'java.log.*')"
take kafka "$(largest "$HOME/.cache/bazel" -name server.log)"
take rocksdblog "$(largest /tmp -name LOG)"
