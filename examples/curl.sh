#!/usr/bin/env bash
# Submit a file of v2 reports with curl: a dry run first (nothing stored), then for real, then
# read them back. One request holds at most 300 v2 records: split bigger files (submit.py and
# submit.ts do).
#
#   TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> bash examples/curl.sh [FILE]
#
# The real submission carries an Idempotency-Key made from the file's SHA-256, so a retry (or
# running the script again within 24 hours) is answered from the kept 201 and never stores the
# batch twice. Only a 409 (the same key in progress), 429, 503, a lost connection or a 60 s
# timeout are retried, with the same key, after Retry-After; a 400, 401, 403, 413 or 422 would
# only fail again.
set -euo pipefail

url="${TRADING_REPORTS_URL:-http://127.0.0.1:8080}"
key="${TRADING_REPORTS_API_KEY:?set TRADING_REPORTS_API_KEY to your API key}"
file="${1:-$(dirname "$0")/reports.json}"
sha256=$({ sha256sum || shasum -a 256; } <"$file" | cut -c1-64)
answer="$(mktemp)"
head="$(mktemp)"
trap 'rm -f "$answer" "$head"' EXIT

# submit DRY_RUN [IDEMPOTENCY_KEY]: POSTs the file; prints the answer; fails unless it is a 201.
submit() {
  local status what delay
  for attempt in 1 2 3 4; do
    : >"$head"
    # ${2:+…} adds the Idempotency-Key header only when a key is given.
    status=$(curl -sS --max-time 60 -o "$answer" -D "$head" -w '%{http_code}' \
      -X POST "$url/api/v2/report" -H "Authorization: $key" -H 'Content-Type: application/json' \
      -H "x-dry-run: $1" ${2:+-H "Idempotency-Key: $2"} --data-binary "@$file") || status=000
    what="HTTP $status"
    [ "$status" = 000 ] && what="no answer"
    [ "$status $1" = "000 false" ] && what="no answer (the file may or may not be stored)"
    case "$status" in 000 | 409 | 429 | 503) ;; *) break ;; esac
    [ "$attempt" = 4 ] && break
    delay=$(tr -d '\r' <"$head" | sed -n 's/^[Rr]etry-[Aa]fter: *\([0-9]*\)$/\1/p')
    echo "$what; retrying in ${delay:=$attempt} s${2:+ with the same Idempotency-Key}" >&2
    sleep "$delay"
  done
  cat "$answer"
  echo
  [ "$status" = 201 ] && return
  # A 400 lists every problem of the batch, each with its path (data.3.bidDepth50).
  local again="running this again is safe (the same Idempotency-Key)"
  case "$1 $status" in
    "false 000") echo "$what; $again" >&2 ;;
    "false 5"*) echo "$what: the file may or may not be stored; $again" >&2 ;;
    *) echo "$what: nothing stored" >&2 ;;
  esac
  return 1
}

echo "dry run:"
submit true
echo "submit:"
submit false "curl-v2-store-$sha256"

echo "the first two reports of chainlink on binance, as JSON:"
curl -sS --fail-with-body -H "Authorization: $key" \
  "$url/api/v1/reports?baseCoinId=chainlink&exchangeId=binance&pageSize=2"
echo
echo "every report of chainlink, as CSV:"
curl -sS --fail-with-body -H "Authorization: $key" -H 'Accept: text/csv' \
  "$url/api/v1/reports?baseCoinId=chainlink"
