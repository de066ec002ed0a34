"""The dated measurements the status page shows (``book/_data/
measurements.json``): ``python -m lnbook.measurement_log add WHAT VALUE
[--note NOTE] [--commit REV]`` appends one, with today's date and the
commit measured (default: the one checked out)."""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys

from lnbook import ROOT

LOG = ROOT / "book" / "_data" / "measurements.json"


def add(what: str, value: str, note: str = "", commit: str = "HEAD") -> dict:
    """Append one measurement of ``commit`` to the log and return it."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", commit],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.strip()
    entry = {
        "date": datetime.date.today().isoformat(),
        "commit": commit,
        "what": what,
        "value": value,
        "note": note,
    }
    entries = json.loads(LOG.read_text()) if LOG.exists() else []
    LOG.write_text(
        "[\n"
        + ",\n".join(" " + json.dumps(e, ensure_ascii=False) for e in [
            *entries, entry])
        + "\n]\n"
    )  # fmt: skip
    return entry


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="action", required=True)
    a = sub.add_parser("add", help="append a measurement")
    a.add_argument("what", help="what was measured, how")
    a.add_argument("value", help="the result, with its unit")
    a.add_argument("--note", default="")
    a.add_argument(
        "--commit", default="HEAD", help="the commit measured (default HEAD)"
    )
    args = p.parse_args(argv)
    print(json.dumps(add(args.what, args.value, args.note, args.commit)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
