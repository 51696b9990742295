"""Generate the bundled memory-bench dataset: a synthetic engineering assistant over months.

Each case is one team: invented services, clusters, datastores, people, incidents, freezes,
deadlines and the user's working preferences, told across 3 to 12 timestamped sessions padded
with standups, code review chatter and unrelated incidents. Facts are written with many
phrasings so that no sentence template repeats enough for a keyword backend to exploit, and
every asked fact has same-topic distractors (another service's version, an older value,
another person's preference). Everything here is invented; no real people or private facts.

The output is deterministic for a given --seed. The test set and the dev set draw from
disjoint name pools (services, clusters, people), so they share no story facts.

Version 2 (data/cases-v2.jsonl, data/dev-v2.jsonl) is the hard set: long histories of mostly
unrelated work, and in every case one question of each of nine kinds that make memory hard
(paraphrase, coreference, split facts, aggregation, time, update chains, near-duplicates, near
misses, selective forgetting); see data/README.md. Version 3 (data/cases-v3.jsonl,
data/dev-v3.jsonl) is made by data/cases_v3.py: its evidence is a random pick among many turns
that look like it. Version 4 (data/cases-v4.jsonl, data/dev-v4.jsonl) is made by
data/cases_v4.py: version 3's cases with long statements and short mentions, as in real chat.
Version 5 (data/cases-v5.jsonl, data/dev-v5.jsonl) is made by data/cases_v5.py: version 4's
cases, every question's evidence within the default budget, coreference asked by what was done
to the service. Version 6 (data/cases-v6.jsonl, data/dev-v6.jsonl, the default) is made by
data/cases_v6.py: version 5's cases with the words questions are asked in said as often in turns
that answer nothing. Versions 1 to 5 stay as they were, byte for byte.

Usage:
  python data/make_cases.py                       # writes every version's test and dev files
  python data/make_cases.py --version 1 --test-cases 46 --dev-cases 12 --seed 20260302
  python data/make_cases.py --check               # regenerate in memory, diff against the files
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cli import EXIT_BAD_INPUT, EXIT_OK  # noqa: E402
from fileio import check_generated, dumps, write_atomic  # noqa: E402
import cases_v3  # noqa: E402
import cases_v4  # noqa: E402
import cases_v5  # noqa: E402
import cases_v6  # noqa: E402
from cases_v1 import make_split  # noqa: E402
from cases_v2 import V2_DEV_CASES, V2_FILES, V2_TEST_CASES, make_split_v2  # noqa: E402

DEFAULT_SEED = 20260302


def render(cases: list[dict]) -> str:
    """The JSONL text of a split, one case per line."""
    return "".join(dumps(c) + "\n" for c in cases)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--version", choices=("1", "2", "3", "4", "5", "6", "all"), default="all",
                    help="which version's files to write or check (default: all six)")
    ap.add_argument("--test-cases", type=int, default=46, help="version 1 test cases")
    ap.add_argument("--dev-cases", type=int, default=12, help="version 1 dev cases")
    ap.add_argument("--v2-test-cases", type=int, default=V2_TEST_CASES)
    ap.add_argument("--v2-dev-cases", type=int, default=V2_DEV_CASES)
    ap.add_argument("--v3-test-cases", type=int, default=cases_v3.TEST_CASES)
    ap.add_argument("--v3-dev-cases", type=int, default=cases_v3.DEV_CASES)
    ap.add_argument("--v4-test-cases", type=int, default=cases_v4.TEST_CASES)
    ap.add_argument("--v4-dev-cases", type=int, default=cases_v4.DEV_CASES)
    ap.add_argument("--v5-test-cases", type=int, default=cases_v5.TEST_CASES)
    ap.add_argument("--v5-dev-cases", type=int, default=cases_v5.DEV_CASES)
    ap.add_argument("--v6-test-cases", type=int, default=cases_v6.TEST_CASES)
    ap.add_argument("--v6-dev-cases", type=int, default=cases_v6.DEV_CASES)
    ap.add_argument("--out-dir", default=HERE)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 2 if the files on disk differ")
    a = ap.parse_args(argv)
    if min(a.test_cases, a.dev_cases, a.v2_test_cases, a.v2_dev_cases, a.v3_test_cases, a.v3_dev_cases, a.v4_test_cases,
           a.v4_dev_cases, a.v5_test_cases, a.v5_dev_cases, a.v6_test_cases, a.v6_dev_cases) < 1:
        print("error: every --*-cases count must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    outputs = {}
    if a.version in ("1", "all"):
        outputs["cases.jsonl"] = render(make_split(a.test_cases, a.seed, dev=False))
        outputs["dev.jsonl"] = render(make_split(a.dev_cases, a.seed + 1, dev=True))
    if a.version in ("2", "all"):
        outputs[V2_FILES["test"]] = render(make_split_v2(a.v2_test_cases, a.seed + 2, dev=False))
        outputs[V2_FILES["dev"]] = render(make_split_v2(a.v2_dev_cases, a.seed + 3, dev=True))
    if a.version in ("3", "all"):
        outputs[cases_v3.FILES["test"]] = render(cases_v3.make_split_v3(a.v3_test_cases, a.seed + 4, dev=False))
        outputs[cases_v3.FILES["dev"]] = render(cases_v3.make_split_v3(a.v3_dev_cases, a.seed + 5, dev=True))
    if a.version in ("4", "all"):
        outputs[cases_v4.FILES["test"]] = render(cases_v4.make_split_v4(a.v4_test_cases, a.seed + 6, dev=False))
        outputs[cases_v4.FILES["dev"]] = render(cases_v4.make_split_v4(a.v4_dev_cases, a.seed + 7, dev=True))
    if a.version in ("5", "all"):
        outputs[cases_v5.FILES["test"]] = render(cases_v5.make_split_v5(a.v5_test_cases, a.seed + 8, dev=False))
        outputs[cases_v5.FILES["dev"]] = render(cases_v5.make_split_v5(a.v5_dev_cases, a.seed + 9, dev=True))
    if a.version in ("6", "all"):
        outputs[cases_v6.FILES["test"]] = render(cases_v6.make_split_v6(a.v6_test_cases, a.seed + 10, dev=False))
        outputs[cases_v6.FILES["dev"]] = render(cases_v6.make_split_v6(a.v6_dev_cases, a.seed + 11, dev=True))
    for name, text in outputs.items():
        path = os.path.join(a.out_dir, name)
        if a.check:
            code = check_generated(path, text, "python data/make_cases.py")
            if code != EXIT_OK:
                return code
        else:
            write_atomic(path, text)
            print(f"wrote {path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
