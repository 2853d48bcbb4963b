#!/usr/bin/env python3
"""Prints 'N passed, N failed' for the test cases of the given Bazel test targets.

Reads each target's bazel-testlogs/<package>/<name>/test.xml (JUnit XML, written by
Bazel for gtest and sh tests alike). Usage: test_summary.py //pkg:target ...
"""
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


# Characters XML 1.0 does not allow. A test that prints arbitrary bytes (invalid UTF-8,
# control bytes) would make its test.xml unparsable and lose the whole summary.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def counts(xml_path: Path):
    text = xml_path.read_bytes().decode("utf-8", errors="replace")
    root = ET.fromstring(_NOT_XML.sub("?", text))
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = failed = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return tests, failed


def main(targets):
    passed = failed = 0
    for target in targets:
        package, name = target.lstrip("/").split(":")
        xml_path = Path("bazel-testlogs") / package / name / "test.xml"
        if not xml_path.exists():
            print(f"{target}: no test.xml (not run)", file=sys.stderr)
            failed += 1
            continue
        tests, bad = counts(xml_path)
        passed += tests - bad
        failed += bad
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
