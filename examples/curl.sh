#!/usr/bin/env bash
# Submit a file of v2 reports with curl: a dry run first (nothing stored), then for real, then
# read them back. One request holds at most 300 v2 records: split bigger files (submit.py and
# submit.ts do).
#
#   TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> bash examples/curl.sh [FILE]
#
# curl's --retry retries 429 and 503 (and other transient failures), waiting as Retry-After says.
set -euo pipefail

url="${TRADING_REPORTS_URL:-http://127.0.0.1:8080}"
key="${TRADING_REPORTS_API_KEY:?set TRADING_REPORTS_API_KEY to your API key}"
file="${1:-$(dirname "$0")/reports.json}"
answer="$(mktemp)"
trap 'rm -f "$answer"' EXIT

# submit DRY_RUN: POSTs the file; prints the answer; fails unless it is a 201.
submit() {
  local status
  status=$(curl -sS --retry 5 -o "$answer" -w '%{http_code}' -X POST "$url/api/v2/report" \
    -H "Authorization: $key" -H 'Content-Type: application/json' -H "x-dry-run: $1" \
    --data-binary "@$file")
  cat "$answer"
  echo
  if [ "$status" != 201 ]; then
    # A 400 lists every problem of the batch, each with its path (data.3.bidDepth50).
    echo "HTTP $status: nothing stored" >&2
    return 1
  fi
}

echo "dry run:"
submit true
echo "submit:"
submit false

echo "the first two reports of chainlink on binance, as JSON:"
curl -sS --retry 5 --fail-with-body -H "Authorization: $key" \
  "$url/api/v1/reports?baseCoinId=chainlink&exchangeId=binance&pageSize=2"
echo
echo "every report of chainlink, as CSV:"
curl -sS --retry 5 --fail-with-body -H "Authorization: $key" -H 'Accept: text/csv' \
  "$url/api/v1/reports?baseCoinId=chainlink"
