"""Report side of benchmarks/compare: rows from the measurements, the markdown table,
the CSV, and the issue-5 targets with pass/fail. Pure functions (no I/O), so
compare_report_test.py can check them; compare.py calls them.
"""
import csv
import io

# CSV/JSON column order; the markdown table shows a subset (TABLE_COLUMNS).
COLUMNS = [
    "config", "server", "storage", "block_bytes", "dictionary", "records", "raw_bytes",
    "stored_bytes", "dictionary_bytes", "ratio", "sst_bytes", "sst_ratio", "get_ops_s", "get_p50_us", "get_p99_us",
    "get_errors", "multiget_ops_s", "multiget_records_s", "multiget_p50_us",
    "multiget_p99_us", "multiget_errors", "verified_records", "rounds", "get_ops_s_min",
    "get_ops_s_max", "multiget_records_s_min", "multiget_records_s_max",
] + [
    # Scale columns (issue 19; see SCALE_COLUMNS): empty where a run did not measure them.
    "zipf_get_ops_s", "zipf_multiget_records_s", "nocache_get_ops_s",
    "nocache_multiget_records_s", "load_s", "finalize_s", "ingest_s", "ingest_records_s",
    "peak_rss_bytes",
]

# The scale table (issue 19): reads uniform and Zipf(0.99), with the page cache and
# without it (its pages dropped during the run), ingest end to end, peak RSS.
SCALE_TABLE_COLUMNS = [
    ("config", "config"), ("sst_ratio", "SST ratio"), ("get_ops_s", "Get ops/s"),
    ("multiget_records_s", "MultiGet(64) rec/s"), ("zipf_get_ops_s", "Zipf Get ops/s"),
    ("zipf_multiget_records_s", "Zipf MultiGet rec/s"),
    ("nocache_get_ops_s", "no-page-cache Get ops/s"),
    ("nocache_multiget_records_s", "no-page-cache MultiGet rec/s"),
    ("ingest_records_s", "ingest rec/s"), ("ingest_s", "ingest s (load + final)"),
    ("peak_rss_mib", "peak RSS MiB"),
]

TABLE_COLUMNS = [
    ("config", "config"), ("stored_bytes_total", "stored bytes"), ("ratio", "ratio"),
    ("sst_bytes", "SST bytes"), ("sst_ratio", "SST ratio"),
    ("get_ops_s", "Get ops/s"), ("get_p99_us", "Get p99 us"),
    ("multiget_records_s", "MultiGet(64) records/s"), ("multiget_p99_us", "MultiGet p99 us"),
    ("multiget_factor", "MultiGet/Get records"), ("errors", "errors"),
]

# The targets (reported, not timed tests).
MULTIGET_FACTOR = 10.0
GET_VS_NULL = 0.85
RECORD_VS_BLOCK16K = 3.0
# Issue 19's targets (scale mode; ratios against the same run).
SST_BLOCK4K_VS_ROCKSDB = 1.4
SST_BLOCK16K_VS_ROCKSDB16K = 1.2
BLOCK2K_MULTIGET_VS_ROCKSDB = 1.5
RECORD_MULTIGET_VS_ROCKSDB = 2.0
INGEST_VS_ROCKSDB = 1.0
RSS_SLACK_BYTES = 256 << 20


def median_report(reports, key):
    """The report of the median round by `key` (the lower middle one of an even count),
    with the errors of every round summed."""
    ordered = sorted(reports, key=lambda r: r[key])
    median = dict(ordered[(len(ordered) - 1) // 2])
    median["errors"] = sum(r["errors"] for r in reports)
    return median


def _median_value(reports, key):
    """The median round's `key`, or "" if there were no such runs."""
    return round(median_report(reports, key)[key], 1) if reports else ""


def scale_fields(records, scale):
    """The scale columns of a row. `scale`: optional lists of dictlog-bench read reports
    zipf_get, zipf_multiget, nocache_get, nocache_multiget; load_s and finalize_s (the
    load, and making the stored form final: the ingest is their sum); peak_rss_bytes."""
    scale = scale or {}
    ingest = (scale["load_s"] + scale["finalize_s"]) if "load_s" in scale else None
    return {
        "zipf_get_ops_s": _median_value(scale.get("zipf_get", []), "ops_per_s"),
        "zipf_multiget_records_s": _median_value(scale.get("zipf_multiget", []),
                                                 "records_per_s"),
        "nocache_get_ops_s": _median_value(scale.get("nocache_get", []), "ops_per_s"),
        "nocache_multiget_records_s": _median_value(scale.get("nocache_multiget", []),
                                                    "records_per_s"),
        "load_s": round(scale["load_s"], 2) if ingest is not None else "",
        "finalize_s": round(scale["finalize_s"], 2) if ingest is not None else "",
        "ingest_s": round(ingest, 2) if ingest is not None else "",
        "ingest_records_s": round(records / ingest, 1) if ingest else "",
        "peak_rss_bytes": scale.get("peak_rss_bytes", ""),
    }


def make_row(config, stats, get_reports, multiget_reports, verified, scale=None):
    """One result row. `config`: dict with name, server, storage, block_bytes,
    dictionary; `stats`: records, raw_bytes, stored_bytes, dictionary_bytes;
    *_reports: dictlog-bench read JSON objects, one a round (the median one is shown,
    with the range); `scale`: see scale_fields."""
    get_report = median_report(get_reports, "ops_per_s")
    multiget_report = median_report(multiget_reports, "records_per_s")
    stored_total = stats["stored_bytes"] + stats.get("dictionary_bytes", 0)
    return dict(scale_fields(stats["records"], scale), **{
        "config": config["name"],
        "server": config["server"],
        "storage": config["storage"],
        "block_bytes": config.get("block_bytes", 0),
        "dictionary": config["dictionary"],
        "records": stats["records"],
        "raw_bytes": stats["raw_bytes"],
        "stored_bytes": stats["stored_bytes"],
        "dictionary_bytes": stats.get("dictionary_bytes", 0),
        "ratio": round(stats["raw_bytes"] / stored_total, 3) if stored_total else 0.0,
        "sst_bytes": stats.get("sst_bytes", 0),
        "sst_ratio": round(stats["raw_bytes"] / stats["sst_bytes"], 3)
        if stats.get("sst_bytes") else 0.0,
        "get_ops_s": round(get_report["ops_per_s"], 1),
        "get_p50_us": get_report["latency_us"]["p50"],
        "get_p99_us": get_report["latency_us"]["p99"],
        "get_errors": get_report["errors"],
        "multiget_ops_s": round(multiget_report["ops_per_s"], 1),
        "multiget_records_s": round(multiget_report["records_per_s"], 1),
        "multiget_p50_us": multiget_report["latency_us"]["p50"],
        "multiget_p99_us": multiget_report["latency_us"]["p99"],
        "multiget_errors": multiget_report["errors"],
        "verified_records": verified,
        "rounds": len(get_reports),
        "get_ops_s_min": round(min(r["ops_per_s"] for r in get_reports), 1),
        "get_ops_s_max": round(max(r["ops_per_s"] for r in get_reports), 1),
        "multiget_records_s_min": round(min(r["records_per_s"] for r in multiget_reports), 1),
        "multiget_records_s_max": round(max(r["records_per_s"] for r in multiget_reports), 1),
    })


def _cell(row, key):
    if key == "stored_bytes_total":
        return "-" if row["server"] == "compare_server" and row["config"] == "null" else \
            "{:,}".format(row["stored_bytes"] + row["dictionary_bytes"])
    if key in ("ratio", "sst_ratio"):
        return "-" if row[key] == 0 else "{:.3f}".format(row[key])
    if key == "sst_bytes":
        return "-" if row[key] == 0 else "{:,}".format(row[key])
    if key == "multiget_factor":
        get = row["get_ops_s"]
        return "{:.1f}x".format(row["multiget_records_s"] / get) if get else "-"
    if key == "errors":
        return str(row["get_errors"] + row["multiget_errors"])
    if key == "peak_rss_mib":
        rss = row.get("peak_rss_bytes", "")
        return "-" if rss == "" else "{:,.0f}".format(rss / (1 << 20))
    value = row.get(key, "")
    if value == "":
        return "-"
    if key == "ingest_s":
        return "{:.1f}".format(value)
    if isinstance(value, float):
        return "{:,.0f}".format(value)
    return str(value)


def markdown_table(rows, columns=None):
    """The side-by-side table (GitHub markdown); `columns` default TABLE_COLUMNS."""
    columns = columns or TABLE_COLUMNS
    header = [title for _, title in columns]
    lines = ["| " + " | ".join(header) + " |",
             "|---|" + "---:|" * (len(header) - 1)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row, key) for key, _ in columns) + " |")
    return "\n".join(lines) + "\n"


def scale_table(rows):
    """The scale table (SCALE_TABLE_COLUMNS), or "" if no row has ingest figures."""
    if all(row.get("ingest_s", "") == "" for row in rows):
        return ""
    return markdown_table(rows, SCALE_TABLE_COLUMNS)


def to_csv(rows):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: row[key] for key in COLUMNS})
    return out.getvalue()


def _target(name, needed, numerator, denominator, what):
    """A target entry; measured/pass are None when a side was not run."""
    if numerator is None or denominator in (None, 0):
        return {"target": name, "what": what, "needed": needed, "measured": None,
                "pass": None}
    measured = round(numerator / denominator, 3)
    return {"target": name, "what": what, "needed": needed, "measured": measured,
            "pass": measured >= needed}


def targets(rows, rss_budget_bytes=None):
    """Issue 5's targets, measured on the dictlog record+dict configuration, issue 19's
    (scale_targets), plus the MultiGet target on every configuration (informative)."""
    by = {row["config"]: row for row in rows}

    def get(config, key):
        return by[config][key] if config in by else None

    result = [
        _target("multiget_records_vs_get", MULTIGET_FACTOR,
                get("record+dict", "multiget_records_s"), get("record+dict", "get_ops_s"),
                "record+dict: MultiGet(64) records/s / unary Get records/s"),
        _target("get_vs_null", GET_VS_NULL, get("record+dict", "get_ops_s"),
                get("null", "get_ops_s"),
                "record+dict Get ops/s / null handler Get ops/s"),
        _target("record_vs_block16k_get", RECORD_VS_BLOCK16K,
                get("record+dict", "get_ops_s"), get("block16k", "get_ops_s"),
                "record+dict Get records/s / no-dictionary 16 KiB blocks' Get records/s"),
        _target("record_vs_block16k_multiget", RECORD_VS_BLOCK16K,
                get("record+dict", "multiget_records_s"),
                get("block16k", "multiget_records_s"),
                "record+dict MultiGet records/s / no-dictionary 16 KiB blocks'"),
    ]
    result.extend(scale_targets(rows, rss_budget_bytes))
    for row in rows:
        result.append(_target("multiget_records_vs_get:" + row["config"], MULTIGET_FACTOR,
                              row["multiget_records_s"], row["get_ops_s"],
                              row["config"] + ": MultiGet(64) records/s / Get records/s"))
    return result


def scale_targets(rows, rss_budget_bytes=None):
    """Issue 19's targets; `rss_budget_bytes`: block cache + dictionary cache budget
    (the RSS target allows RSS_SLACK_BYTES more; None: not checked)."""
    by = {row["config"]: row for row in rows}

    def get(config, key):
        value = by[config][key] if config in by else None
        return None if value == "" else value

    result = [
        _target("sst_block4k_dict_vs_rocksdb_dict", SST_BLOCK4K_VS_ROCKSDB,
                get("block4k+dict", "sst_ratio"), get("rocksdb_dict", "sst_ratio"),
                "SST ratio: block4k+dict / rocksdb_dict (4 KiB blocks)"),
        _target("sst_block16k_dict_vs_rocksdb_dict16k", SST_BLOCK16K_VS_ROCKSDB16K,
                get("block16k+dict", "sst_ratio"), get("rocksdb_dict16k", "sst_ratio"),
                "SST ratio: block16k+dict / rocksdb_dict16k (16 KiB blocks)"),
        _target("multiget_block2k_dict_vs_rocksdb_dict", BLOCK2K_MULTIGET_VS_ROCKSDB,
                get("block2k+dict", "multiget_records_s"),
                get("rocksdb_dict", "multiget_records_s"),
                "MultiGet(64) records/s: block2k+dict / rocksdb_dict"),
        _target("multiget_record_dict_vs_rocksdb_dict", RECORD_MULTIGET_VS_ROCKSDB,
                get("record+dict", "multiget_records_s"),
                get("rocksdb_dict", "multiget_records_s"),
                "MultiGet(64) records/s: record+dict / rocksdb_dict"),
        _target("ingest_record_dict_vs_rocksdb_dict", INGEST_VS_ROCKSDB,
                get("record+dict", "ingest_records_s"), get("rocksdb_dict", "ingest_records_s"),
                "ingest records/s end to end: record+dict / rocksdb_dict"),
        _target("ingest_block4k_dict_vs_rocksdb_dict", INGEST_VS_ROCKSDB,
                get("block4k+dict", "ingest_records_s"), get("rocksdb_dict", "ingest_records_s"),
                "ingest records/s end to end: block4k+dict / rocksdb_dict"),
    ]
    for name in ("record+dict", "block4k+dict"):  # compare.py --dictlogd_before
        if name + "@before" in by:
            result.append(_target(
                "ingest_%s_before_vs_rocksdb_dict" % name, INGEST_VS_ROCKSDB,
                get(name + "@before", "ingest_records_s"),
                get("rocksdb_dict", "ingest_records_s"),
                "ingest records/s end to end: %s@before / rocksdb_dict" % name))
    for row in rows:
        if row["server"] != "dictlogd":
            continue
        rss = get(row["config"], "peak_rss_bytes")
        budget = None if rss_budget_bytes is None else rss_budget_bytes + RSS_SLACK_BYTES
        result.append(_target("peak_rss:" + row["config"], 1.0, budget, rss,
                              row["config"] + ": (block cache + dictionary cache budget + "
                              "256 MiB) / peak server RSS"))
    return result


def versus_rocksdb(rows):
    """dictlog configurations against RocksDB's own dictionaries: ratio (values and
    dictionaries; and SST files on disk), Get ops/s and MultiGet records/s as factors
    (> 1: dictlog better). Empty without rocksdb_dict."""
    by = {row["config"]: row for row in rows}
    rocks = by.get("rocksdb_dict")
    if rocks is None:
        return []
    out = []
    for row in rows:
        if row["server"] != "dictlogd":
            continue
        out.append({
            "config": row["config"],
            "ratio_factor": round(row["ratio"] / rocks["ratio"], 3) if rocks["ratio"] else None,
            "sst_ratio_factor": round(row["sst_ratio"] / rocks["sst_ratio"], 3)
            if rocks["sst_ratio"] else None,
            "get_factor": round(row["get_ops_s"] / rocks["get_ops_s"], 3)
            if rocks["get_ops_s"] else None,
            "multiget_factor": round(row["multiget_records_s"] / rocks["multiget_records_s"], 3)
            if rocks["multiget_records_s"] else None,
        })
    return out


def lookup_bounds(rows):
    """What a RocksDB lookup costs with nothing to decompress, from the rocksdb_plain
    configuration (uncompressed blocks, same keys, cache and front end), beside the
    read targets: each Get and MultiGet rate of record+dict, record+dict_plain,
    block2k+dict, rocksdb_dict and null as a fraction of rocksdb_plain's (null's factor says how far below the
    null handler any configuration on RocksDB stays). Empty without rocksdb_plain."""
    by = {row["config"]: row for row in rows}
    plain = by.get("rocksdb_plain")
    if plain is None:
        return []
    out = []
    for key, what in (("get_ops_s", "Get ops/s"), ("multiget_records_s", "MultiGet(64) rec/s")):
        for config in ("record+dict", "record+dict_plain", "block2k+dict", "rocksdb_dict",
                       "null"):
            if config not in by or not by[config][key] or not plain[key]:
                continue
            out.append({"bound": "%s:%s_vs_rocksdb_plain" % (key, config),
                        "what": "%s: %s / rocksdb_plain" % (what, config),
                        "factor": round(by[config][key] / plain[key], 3)})
    return out


# Issue 19's read targets measured a second way (compare's --paired): the two
# configurations read in alternating short slices (A B, then B A, ...), each pair of
# slices seconds apart, so a change in the host's speed over the minutes between the
# rounds' runs of A and of B does not enter the ratio. (target, A, B, op, needed.)
PAIRED_READS = [
    ("multiget_block2k_dict_vs_rocksdb_dict", "block2k+dict", "rocksdb_dict", "multiget",
     BLOCK2K_MULTIGET_VS_ROCKSDB),
    ("multiget_record_dict_vs_rocksdb_dict", "record+dict", "rocksdb_dict", "multiget",
     RECORD_MULTIGET_VS_ROCKSDB),
    ("get_vs_null", "record+dict", "null", "get", GET_VS_NULL),
]
# What bounds those targets, read the same way (needed None: not targets). rocksdb_plain
# is RocksDB with uncompressed blocks behind the same front end (lookup_bounds): its
# MultiGet against rocksdb_dict's is as far as any store whose reads are a RocksDB
# lookup each could go past rocksdb_dict without beating RocksDB's own lookup, and its
# Get against the null handler's is as close to the null handler as such a store comes.
PAIRED_BOUNDS = [
    ("bound_multiget_rocksdb_plain_vs_rocksdb_dict", "rocksdb_plain", "rocksdb_dict",
     "multiget", None),
    ("bound_multiget_record_dict_vs_rocksdb_plain", "record+dict", "rocksdb_plain",
     "multiget", None),
    ("bound_get_rocksdb_plain_vs_null", "rocksdb_plain", "null", "get", None),
]


def paired_value(op, report):
    """What a paired slice compares: MultiGet records/s, Get ops/s."""
    return report["records_per_s" if op == "multiget" else "ops_per_s"]


def paired_entry(spec, a_values, b_values):
    """One paired measurement of `spec` (an entry of PAIRED_READS or PAIRED_BOUNDS):
    slice i of A against slice i of B; the median ratio (lower middle of an even count),
    its range, and the needed value (None for a bound)."""
    target, a, b, op, needed = spec
    ratios = [x / y for x, y in zip(a_values, b_values) if y > 0]
    ordered = sorted(ratios)
    median = ordered[(len(ordered) - 1) // 2] if ordered else None
    return {"target": target, "a": a, "b": b, "op": op,
            "a_values": [round(v, 1) for v in a_values],
            "b_values": [round(v, 1) for v in b_values],
            "ratios": [round(r, 4) for r in ratios],
            "median": None if median is None else round(median, 4),
            "low": round(ordered[0], 4) if ordered else None,
            "high": round(ordered[-1], 4) if ordered else None,
            "needed": needed,
            "pass": None if median is None or needed is None else median >= needed}


def paired_markdown(entries, slice_duration=""):
    if not entries:
        return ""
    lines = ["| paired reads%s | pairs | median ratio | range | needed | result |" %
             (" (%s slices, alternating)" % slice_duration if slice_duration else ""),
             "|---|---:|---:|---|---:|---|"]
    for e in entries:
        what = "%s %s / %s" % ("MultiGet(64) records/s" if e["op"] == "multiget"
                               else "Get ops/s", e["a"], e["b"])
        needed = "-" if e["needed"] is None else ">= %g" % e["needed"]
        if e["median"] is None:
            lines.append("| %s | 0 | - | - | %s | - |" % (what, needed))
            continue
        result = "bound" if e["needed"] is None else ("pass" if e["pass"] else "FAIL")
        lines.append("| %s | %d | %.2f | %.2f-%.2f | %s | %s |" % (
            what, len(e["ratios"]), e["median"], e["low"], e["high"], needed, result))
    return "\n".join(lines) + "\n"


def bounds_markdown(entries):
    if not entries:
        return ""
    lines = ["| read rate against rocksdb_plain | factor |", "|---|---:|"]
    lines += ["| %s | %.3f |" % (e["what"], e["factor"]) for e in entries]
    return "\n".join(lines) + "\n"


def targets_markdown(entries):
    lines = ["| target | measured | needed | result |", "|---|---:|---:|---|"]
    for t in entries:
        measured = "not run" if t["measured"] is None else "{:.2f}".format(t["measured"])
        result = "-" if t["pass"] is None else ("pass" if t["pass"] else "FAIL")
        lines.append("| {} | {} | >= {:g} | {} |".format(t["what"], measured, t["needed"],
                                                          result))
    return "\n".join(lines) + "\n"
