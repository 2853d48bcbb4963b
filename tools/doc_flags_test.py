#!/usr/bin/env python3
"""doc_flags_test: every `--flag` the docs name exists in a dictlog binary's --help.

Reads the docs listed in DOCS and the four binaries (dictlogd, dictlog, dict_trainer,
dictlog-bench) given as data; runs each with --help and collects absl's
`--name (text); default: value;` lines. Then:
  * every --flag in a doc, unless it belongs to another tool (below), must be a flag of
    some dictlog binary;
  * docs/configuration.md's flag table must list every dictlogd flag with --help's
    default; README.md's "CLI flags:" paragraph must agree with dictlog's defaults;
  * every flag of dictlog, dict_trainer and dictlog-bench is named in some doc.

Whose flag is it (doc_flags below): a command word is a word whose last path component
(after `/` or `:`) is one of DICTLOG_BINARIES (check it), one of OTHER_TOOLS or a name
ending in _test/_bench/_fuzzer (skip: another program's flags). In code lines (a ```
fence or 4-space indent) any command word counts (not as a flag's value: `docker run
--name dictlogd`) and carries through the block's following lines; in prose only the
first word of an inline code span counts, for that span. Other flags in prose are
dictlog's, except in a "Flags:"/"Other flags:" paragraph (the program of the code block
before it) and the flags OTHER_PROGRAM_FLAGS lists for that doc. The prose pattern
"`--flag` (N)" must also match the flag's --help default.
Failures name the doc, the line number and the flag. Only reads its data files.
"""
import os
import re
import subprocess
import sys
import unittest

DOCS = [
    "README.md", "deploy/README.md", "benchmarks/README.md", "dict_trainer/README.md",
    "client/python/README.md",
]
DOC_DIRS = ["docs", "docs/adr"]
DICTLOG_BINARIES = {
    "dictlogd": "server/daemon/dictlogd",
    "dictlog": "client/cli/dictlog",
    "dict_trainer": "dict_trainer/dict_trainer",
    "dictlog-bench": "benchmarks/dictlog-bench",
}
# Programs whose flags the docs show next to ours.
OTHER_TOOLS = {
    "bazel", "grpcurl", "ghz", "zstd", "pip", "pip3", "curl", "promtool", "kubectl",
    "docker", "podman", "systemctl", "useradd", "openssl", "python3", "python", "make",
    "git", "apt-get", "sudo", "install", "venv", "perf", "valgrind", "gdb", "tar", "ls",
    "cp", "rsync", "find", "grep", "journalctl", "helm", "jq", "cluster.sh", "kafka_check",
}
# Flags every absl binary has that --help does not list as `--name (...)`.
BUILTIN = {"help", "helpfull", "version", "flagfile", "fromenv", "tryfromenv", "undefok"}

FLAG_RE = re.compile(r"(?<![\w,=-])--([a-z][a-z0-9_]*[a-z0-9](?:-[a-z0-9_]+)*)(?![\w*-])")
# "`--flag` (default)" in prose: a number, maybe with thousands commas and a unit.
PROSE_DEFAULT_RE = re.compile(r"`--([a-z0-9_]+)`\s*\(([\d.,]+(?: MiB| KiB|s)?)[;)]")
# Words that stand for any flag ("`--flag=`").
PLACEHOLDERS = {"flag", "name"}
HELP_ENTRY_RE = re.compile(r"^ {4}--([a-z][a-z0-9_]*) \(", re.M)
HELP_DEFAULT_RE = re.compile(r";\s+default: (.*?);\s*$", re.S)
WORD_RE = re.compile(r"[^\s`|()\[\];]+")
# Prose that names flags of dictlog's test programs (not among the four binaries)
# without naming the program on the same paragraph: doc -> program -> flags.
OTHER_PROGRAM_FLAGS = {
    "docs/reliability.md": {
        "crash_test": {"work_dir", "writers", "min_kill_ms", "max_kill_ms",
                       "lifecycle_every", "lifecycle_kill_ms", "max_seconds", "dictlogd",
                       "loghub_dir", "cycles", "seed"},
        "power_loss_test": {"min_off_ms", "max_off_ms", "allow_loss"},
        "corruption_test": {"trials", "targets", "max_flips", "records_per_pool"},
    },
    "docs/adr/0007-frame-checksums.md": {"corruption_test": {"max_flips", "targets"}},
    "docs/adr/0043-dictionary-id-lease.md": {"corruption_test": {"targets", "trials"}},
    "docs/adr/0046-wals-listed-in-the-manifest.md": {"corruption_test": {"targets", "trials"}},
    "docs/adr/0042-atomic-flush.md": {
        "corruption_test": {"targets", "trials"},
        "benchmarks/compare": {"configs", "dictlogd_before"},
    },
    "docs/adr/0001-offline-bazel-with-debian-libraries.md": {
        "ld (-Wl,...)": {"push-state", "no-as-needed", "as-needed"},
    },
    "docs/adr/0011-records-table-compression.md": {
        "benchmarks/compare": {"mode", "configs", "rounds"},
    },
    "benchmarks/README.md": {"dict_bench": {"csv", "dict_modes", "dict_bytes"},
                             "frames_bench": {"copies", "duration", "csv", "batch",
                                              "threads", "modes", "dictionary_wait"},
                             "train_cost": {"copies", "sweep", "dict_bytes", "csv"}},
    "client/python/README.md": {"pip": {"isolated"}, "bazel test": {"test_env"}},
}
OTHER_PROGRAM_FLAGS["docs/reliability.md"]["bazel"] = {"dynamic_mode"}


def runfile(rel):
    base = os.environ.get("TEST_SRCDIR", ".")
    ws = os.environ.get("TEST_WORKSPACE", "dictlog")
    path = os.path.join(base, ws, rel)
    return path if os.path.exists(path) else rel


def help_flags(binary):
    """{flag: default string} from `binary --help` (stdout and stderr)."""
    out = subprocess.run([binary, "--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=30).stdout.decode()
    flags = {}
    starts = list(HELP_ENTRY_RE.finditer(out))
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(out)
        entry = out[m.start():end].split("\n\n")[0]
        d = HELP_DEFAULT_RE.search(entry)
        flags[m.group(1)] = " ".join(d.group(1).split()) if d else ""
    return flags


def command_of(word):
    """'check:NAME', 'skip' or None for a word of a doc line."""
    name = re.split(r"[/:]", word)[-1]
    if name in DICTLOG_BINARIES:
        return "check:" + name
    if name in OTHER_TOOLS or re.search(r"_(test|bench|fuzzer)$", name):
        return "skip"
    return None


def scan_words(words, owner, found, lineno):
    """Adds the dictlog --flags of words to found; returns the owner after them."""
    previous_word = ""
    for word in words:
        if word == "--":
            continue
        fm = FLAG_RE.match(word)
        if fm:
            if owner != "skip" and fm.group(1) not in PLACEHOLDERS:
                found.append((lineno, fm.group(1)))
        else:
            c = command_of(word)
            if c and c.startswith("check:") and previous_word.startswith("-") \
                    and "=" not in previous_word:
                c = None  # a flag's value (`docker run --name dictlogd`), not a command
            if c:
                owner = None if c.startswith("check:") else c
        previous_word = word
    return owner


def doc_flags(text):
    """[(line number, flag)] of the --flags in text that are dictlog's.

    Code lines (in a ``` fence or indented 4 spaces): any command word switches the
    owner, which carries to the block's next lines (continuations, comments) until a
    blank line. Prose: only the first word of an inline `code span` can be a command,
    for the rest of that span; flags elsewhere in prose are dictlog's, except in a
    paragraph starting "Flags:"/"Other flags:", which names the flags of the program
    in the code block just before it.
    """
    found = []
    fenced = False
    block_owner = None  # owner carried through a code block
    prose_owner = None  # owner of a prose paragraph
    last_block_owner = None
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            if not fenced:
                last_block_owner, block_owner = block_owner, None
            continue
        if not line.strip():
            if block_owner is not None:
                last_block_owner = block_owner
            block_owner = None
            prose_owner = None
            continue
        if fenced or line.startswith("    "):
            block_owner = scan_words([m.group(0) for m in WORD_RE.finditer(line)],
                                     block_owner, found, lineno)
            if block_owner is None:
                last_block_owner = None
            continue
        if re.match(r"\s*(Other flags|Flags):", line):
            prose_owner = last_block_owner
        for k, part in enumerate(line.split("`")):
            words = [m.group(0) for m in WORD_RE.finditer(part)]
            if k % 2 == 1 and words and command_of(words[0]):
                scan_words(words, None, found, lineno)  # `zstd -d -D ...`
            else:
                scan_words(words, prose_owner, found, lineno)
    return found


def normalise(value):
    v = value.strip().strip("`").strip('"')
    v = re.split(r"\s|\(", v)[0] if v else v
    if v.lower() in ("none", "off", '""', ""):
        return ""
    try:
        return repr(float(v))
    except ValueError:
        return v.lower()


class DocFlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.help = {name: help_flags(runfile(path))
                    for name, path in DICTLOG_BINARIES.items()}
        cls.all_flags = set(BUILTIN)
        for flags in cls.help.values():
            cls.all_flags |= set(flags)
        cls.docs = list(DOCS)
        for d in DOC_DIRS:
            root = runfile(d)
            for name in sorted(os.listdir(root)):
                if name.endswith(".md"):
                    cls.docs.append(d + "/" + name)

    def read(self, doc):
        with open(runfile(doc), encoding="utf-8") as f:
            return f.read()

    def test_help_parsed(self):
        for name, flags in self.help.items():
            self.assertGreater(len(flags), 2, f"{name} --help: no flags parsed")

    def test_every_doc_flag_exists(self):
        unknown = []
        for doc in self.docs:
            others = set().union(*OTHER_PROGRAM_FLAGS.get(doc, {}).values())
            for lineno, flag in doc_flags(self.read(doc)):
                if flag not in self.all_flags and flag not in others:
                    unknown.append(f"{doc}:{lineno}: --{flag} is in no dictlog binary's"
                                   " --help")
        self.assertEqual([], unknown, "\n" + "\n".join(unknown))

    def table_defaults(self, doc):
        """{flag: default} of the `| `--flag` | default | meaning |` rows of doc."""
        rows = {}
        for line in self.read(doc).split("\n"):
            cells = [c.strip() for c in line.split("|")]
            if len(cells) < 4 or not cells[1].startswith("`--"):
                continue
            for flag in FLAG_RE.findall(cells[1]):
                rows[flag] = cells[2]
        return rows

    def test_configuration_table_matches_dictlogd(self):
        rows = self.table_defaults("docs/configuration.md")
        problems = []
        for flag, default in sorted(self.help["dictlogd"].items()):
            if flag not in rows:
                problems.append(f"docs/configuration.md: --{flag} (dictlogd) is missing")
            elif normalise(rows[flag]) != normalise(default):
                problems.append(f"docs/configuration.md: --{flag} default {rows[flag]!r}"
                                f", dictlogd --help says {default}")
        self.assertEqual([], problems, "\n" + "\n".join(problems))

    def test_readme_cli_paragraph_matches_dictlog(self):
        text = self.read("README.md")
        start = text.index("CLI flags:")
        para = text[start:text.index("\n\n", start)]
        named = {}
        for m in re.finditer(r"`--([a-z0-9_]+)[^`]*`(?:\s*\((?:default )?([^()\s]+(?: MiB)?)\))?", para):
            named[m.group(1)] = m.group(2)
        problems = []
        for flag, default in sorted(self.help["dictlog"].items()):
            doc_default = named.get(flag)
            if not doc_default:
                continue
            value = doc_default.strip()
            m = re.match(r"^([\d.]+) MiB$", value)
            if m:
                value = str(int(float(m.group(1)) * (1 << 20)))
            if normalise(value) != normalise(default):
                problems.append(f"README.md CLI flags: --{flag} ({doc_default}), "
                                f"dictlog --help says {default}")
        self.assertEqual([], problems, "\n" + "\n".join(problems))


    def test_prose_defaults(self):
        """"`--flag` (N)" in any doc: N (5, 50,000, 4 MiB, 10s) is --help's default."""
        problems = []
        for doc in self.docs:
            for lineno, line in enumerate(self.read(doc).split("\n"), 1):
                for m in PROSE_DEFAULT_RE.finditer(line):
                    flag, value = m.group(1), m.group(2)
                    defaults = [h[flag] for h in self.help.values() if flag in h]
                    if not defaults:
                        continue  # another program's flag, or unknown (test above)
                    number = value.replace(",", "")
                    unit = re.match(r"([\d.]+) (MiB|KiB)$", number)
                    if unit and not flag.endswith("_mb"):
                        scale = 1 << 20 if unit.group(2) == "MiB" else 1 << 10
                        number = str(int(float(unit.group(1)) * scale))
                    if not any(normalise(number) == normalise(d) for d in defaults):
                        problems.append(f"{doc}:{lineno}: --{flag} ({value}), --help's "
                                        f"default: {' or '.join(defaults)}")
        self.assertEqual([], problems, "\n" + "\n".join(problems))

    def test_every_binary_flag_is_documented(self):
        """dictlog's, dict_trainer's and dictlog-bench's flags are named in some doc
        (dictlogd's: in docs/configuration.md's table, above)."""
        named = set()
        for doc in self.docs:
            named |= set(FLAG_RE.findall(self.read(doc)))
        missing = [f"--{flag} ({name})" for name in ("dictlog", "dict_trainer", "dictlog-bench")
                   for flag in sorted(self.help[name]) if flag not in named]
        self.assertEqual([], missing, "flags named in no doc: " + ", ".join(missing))


if __name__ == "__main__":
    unittest.main(verbosity=2)
