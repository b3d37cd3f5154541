#!/usr/bin/env python3
"""Submit a JSON file of v2 reports, with the Python standard library only.

    TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> \\
        python3 examples/submit.py [FILE] [--batch-size N]

FILE holds an array of records or {"data": [...]} (default: reports.json beside this script).
The records go in batches of at most 300 (the service stores each batch atomically). Every
batch is dry-run first; if any record has a problem, the problems are printed with their paths
in the file (data.7.bidDepth50) and nothing is stored (exit 1). A 429 or 503 is retried after
the time its Retry-After header gives.
"""

import argparse
import email.utils
import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

MAX_BATCH = 300  # v2 records per request (v1: 1000, at /api/v1/report)
RETRIES = 5


def main() -> int:
    parser = argparse.ArgumentParser(description="Submit v2 reports in batches")
    parser.add_argument("file", nargs="?", default=str(Path(__file__).with_name("reports.json")))
    parser.add_argument("--batch-size", type=int, default=MAX_BATCH)
    args = parser.parse_args()
    url = os.environ.get("TRADING_REPORTS_URL", "http://127.0.0.1:8080").rstrip("/")
    key = os.environ.get("TRADING_REPORTS_API_KEY")
    if not key:
        print("set TRADING_REPORTS_API_KEY to your API key", file=sys.stderr)
        return 2
    if not 1 <= args.batch_size <= MAX_BATCH:
        print(f"--batch-size must be from 1 to {MAX_BATCH}", file=sys.stderr)
        return 2

    document = json.loads(Path(args.file).read_text(encoding="utf-8"))
    records = document["data"] if isinstance(document, dict) else document
    batches = [
        (offset, records[offset : offset + args.batch_size])
        for offset in range(0, len(records), args.batch_size)
    ]

    # Dry run: every batch is validated before any is stored.
    problems = []
    for offset, batch in batches:
        status, body = post(url, key, batch, dry_run=True)
        if status == 400:
            problems += [in_file(problem, offset) for problem in body["message"]]
        elif status != 201:
            return failed(status, body)
    if problems:
        for path, message in problems:
            print(f"{path}: {message}")
        print(f"{len(problems)} problem(s); nothing stored", file=sys.stderr)
        return 1

    created = updated = 0
    for _, batch in batches:
        status, body = post(url, key, batch, dry_run=False)
        if status != 201:
            return failed(status, body)
        created += body["createdCount"]
        updated += body["updatedCount"]
    print(f"created {created}, updated {updated} ({len(records)} records, {len(batches)} batches)")
    return 0


def post(url, key, batch, dry_run):
    """POSTs one batch; retries 429 and 503 as Retry-After says. Returns (status, JSON body)."""
    request = urllib.request.Request(
        f"{url}/api/v2/report",
        data=json.dumps({"data": batch}).encode("utf-8"),
        method="POST",
        headers={
            "Authorization": key,
            "Content-Type": "application/json",
            "x-dry-run": "true" if dry_run else "false",
        },
    )
    for attempt in range(RETRIES + 1):
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            body = parse(error.read())
            if error.code not in (429, 503) or attempt == RETRIES:
                return error.code, body
            delay = retry_after(error.headers.get("Retry-After"), default=2**attempt)
            print(f"HTTP {error.code}; retrying in {delay:g} s", file=sys.stderr)
            time.sleep(delay)
    raise AssertionError("unreachable")


def parse(raw):
    """An error's body: the service answers JSON; a proxy in between may not."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def retry_after(header, default):
    """Retry-After in seconds or as an HTTP date; `default` when absent or unreadable."""
    if header is None:
        return default
    if header.strip().isdigit():
        return int(header)
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


def in_file(problem, offset):
    """data.<i>.<field> of a batch -> the record's path in the whole file."""
    path = problem.get("path") or "(batch)"
    parts = path.split(".")
    if len(parts) >= 2 and parts[0] == "data" and parts[1].isdigit():
        parts[1] = str(offset + int(parts[1]))
    return ".".join(parts), problem["message"]


def failed(status, body):
    message = body.get("message") if isinstance(body, dict) else body
    print(f"HTTP {status}: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
