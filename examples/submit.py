#!/usr/bin/env python3
"""Submit a JSON file of v2 reports, with the Python standard library only.

    TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> \\
        python3 examples/submit.py [FILE] [--batch-size N]

FILE holds an array of records or {"data": [...]} (default: reports.json beside this script).
The records go in batches of at most 300 (the service stores each batch atomically). Every
batch is dry-run first; if any record has a problem, the problems are printed with their paths
in the file (data.7.bidDepth50) and nothing is stored (exit 1).

Each batch is then stored with an Idempotency-Key made from the SHA-256 of its body, kept for
all its retries: a batch whose answer was lost is answered from its kept 201 and never stored
twice, and running the file again within 24 hours stores nothing twice either. Only a 409 (the
same key in progress), 429, 503 (after Retry-After) and a lost connection or timeout are
retried; a 400, 401, 403, 413 or 422 would only fail again. A batch answered from its kept 201
(`idempotent-replayed: true`) was stored by an earlier run: counted apart, as nothing changed.
"""

import argparse
import email.utils
import hashlib
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

MAX_BATCH = 300  # v2 records per request (v1: 1000, at /api/v1/report)
RETRIES = 3
RETRIED = (409, 429, 503)


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

    try:
        document = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    records = document["data"] if isinstance(document, dict) else document
    batches = [
        (offset, records[offset : offset + args.batch_size])
        for offset in range(0, len(records), args.batch_size)
    ]

    # Dry run: every batch is validated before any is stored.
    problems = []
    for offset, batch in batches:
        status, body, _ = post(url, key, batch, dry_run=True)
        if status == 400:
            problems += [in_file(problem, offset) for problem in body["message"]]
        elif status != 201:
            print(f"{failure(status, body)}; nothing stored", file=sys.stderr)
            return 1
    if problems:
        for path, message in problems:
            print(f"{path}: {message}")
        print(f"{len(problems)} problem(s); nothing stored", file=sys.stderr)
        return 1

    created = updated = replayed_batches = replayed_records = 0
    for number, (offset, batch) in enumerate(batches):
        status, body, replayed = post(url, key, batch, dry_run=False)
        if status != 201:
            return stopped(number, offset, status, body)
        if replayed:  # stored by an earlier run: its counts are that run's, nothing changed now
            replayed_batches += 1
            replayed_records += len(batch)
            continue
        created += body["createdCount"]
        updated += body["updatedCount"]
    summary = f"created {created}, updated {updated} ({len(records)} records, {len(batches)} batches)"
    if replayed_batches:
        summary += (f"; {replayed_batches} batch(es) ({replayed_records} records) already stored by"
                    " an earlier run (answers replayed): nothing changed")
    print(summary)
    return 0


def post(url, key, batch, dry_run):
    """POSTs one batch, retrying 409, 429, 503 and a lost answer with the same request.

    Returns (status, JSON body, replayed), or (None, the reason, False) when no answer came.
    `replayed`: the 201 is the kept answer of an earlier run's identical batch. One replayed to
    a retry after this call's own answer was lost is this call's: not replayed."""
    body = json.dumps({"data": batch}).encode("utf-8")
    headers = {"Authorization": key, "Content-Type": "application/json"}
    headers["x-dry-run"] = "true" if dry_run else "false"
    if not dry_run:  # A dry run stores nothing: retrying it needs no key.
        headers["Idempotency-Key"] = "submit-py-v2-" + hashlib.sha256(body).hexdigest()
    request = urllib.request.Request(f"{url}/api/v2/report", body, headers, method="POST")
    lost = False
    for attempt in range(RETRIES + 1):
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                replayed = response.headers.get("idempotent-replayed") == "true" and not lost
                return response.status, json.load(response), replayed
        except urllib.error.HTTPError as error:
            status, answer = error.code, parse(error.read())
            delay = retry_after(error.headers.get("Retry-After"), default=2**attempt)
            what = f"HTTP {status}"
        except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out
            reason = getattr(error, "reason", error)
            status, answer, delay = None, f"no answer ({reason})", 2**attempt
            lost = True
            what = answer if dry_run else f"{answer}: the batch may or may not be stored"
        if status not in (None, *RETRIED) or attempt == RETRIES:
            return status, answer, False
        print(f"{what}; retrying in {delay:g} s", file=sys.stderr)
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


def failure(status, body):
    """HTTP <status>: <the service's message>, or why no answer came."""
    if status is None:
        return body
    return f"HTTP {status}: {body.get('message') if isinstance(body, dict) else body}"


def stopped(number, offset, status, body):
    """Batch `number` (from 0, at record `offset`) was refused or not answered: say what is stored."""
    print(failure(status, body), file=sys.stderr)
    if number == 1:
        print(f"batch 1 (records 0-{offset - 1}) was stored", file=sys.stderr)
    elif number > 1:
        print(f"batches 1-{number} (records 0-{offset - 1}) were stored", file=sys.stderr)
    if status is None or status >= 500:
        print(f"batch {number + 1} may or may not be stored", file=sys.stderr)
    print("running this again is safe: stored batches are answered from their kept 201 "
          "(Idempotency-Key), not stored twice", file=sys.stderr)
    return 1

if __name__ == "__main__":
    sys.exit(main())
