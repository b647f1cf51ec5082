#!/usr/bin/env bash
# Renders a report page in headless Chromium (Debian package chromium) to a PNG, as a reader's
# browser would show it: the check that report.html renders, and how docs/quickstart-report.png
# is made:
#   reports/screenshot.sh out/quickstart/report/report.html docs/quickstart-report.png
#   reports/screenshot.sh REPORT.html OUT.png 1200 6000      # WIDTH HEIGHT (default 1200 900)
# Exit 0 with OUT.png written, 1 when Chromium rendered nothing, 77 when Chromium is not installed.
set -euo pipefail
html=${1:?usage: reports/screenshot.sh REPORT.html OUT.png [WIDTH HEIGHT]}
png=${2:?usage: reports/screenshot.sh REPORT.html OUT.png [WIDTH HEIGHT]}
width=${3:-1200}
height=${4:-900}
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$browser" ]] || { echo "screenshot: chromium is not installed (Debian package chromium)"; exit 77; }
[[ -f "$html" ]] || { echo "screenshot: $html: no such file"; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs_html="$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
abs_png="$(cd "$(dirname "$png")" && pwd)/$(basename "$png")"
rm -f "$abs_png"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
  --user-data-dir="$profile" --hide-scrollbars --window-size="$width,$height" \
  --screenshot="$abs_png" "file://$abs_html" >"$profile/chromium.log" 2>&1 || true
if [[ ! -s "$abs_png" ]] || [[ "$(head -c 8 "$abs_png" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
  cat "$profile/chromium.log"
  echo "screenshot: chromium wrote no PNG for $html"
  exit 1
fi
echo "screenshot: $png ($width x $height) from $html"
