#!/usr/bin/env bash
# Opens a report's index.html in headless Chromium: it must render without
# console errors, every <img> must load and every inlined plot must be there;
# a screenshot is kept beside it (analysis/screenshot.png).
# Usage: ci/check_html.sh OUT_DIR
set -euo pipefail
# Absolute: a file:// URL and Chromium's --screenshot do not take a
# path relative to the working directory.
out="$(realpath "$1")"
html="$out/analysis/index.html"
shot="$out/analysis/screenshot.png"
command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
profile="$(mktemp -d)"
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
       --disable-component-update --disable-sync --no-first-run
       --user-data-dir="$profile" --enable-logging=stderr --v=0)
# The page itself marks whether every image decoded (naturalWidth > 0).
probe="$(mktemp --suffix=.html)"
sed 's#</body>#<script>window.addEventListener("load",()=>{const bad=[...document.images].filter(i=>!i.complete||i.naturalWidth===0);document.body.setAttribute("data-images",document.images.length);document.body.setAttribute("data-broken",bad.length);document.body.setAttribute("data-svgs",document.querySelectorAll(".plot svg").length);});</script></body>#' "$html" > "$probe"
dom="$(chromium "${flags[@]}" --virtual-time-budget=5000 --dump-dom "file://$probe" 2>"$profile/console.log")"
chromium "${flags[@]}" --screenshot="$shot" --window-size=1400,4000 "file://$html" 2>>"$profile/console.log" >/dev/null
rm -f "$probe"
broken="$(grep -o 'data-broken="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo missing)"
svgs="$(grep -o 'data-svgs="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo 0)"
errors="$(grep -E 'CONSOLE\(|Uncaught|ERROR:CONSOLE' "$profile/console.log" | grep -vi 'dbus\|gpu\|sandbox' || true)"
echo "index.html: $svgs inlined plots, broken images: $broken; screenshot $shot"
[ -z "$errors" ] || { echo "console errors:"; echo "$errors"; exit 1; }
[ "$broken" = 0 ] || { echo "images that did not load: $broken"; exit 1; }
[ "$svgs" -gt 0 ] || { echo "no plot inlined"; exit 1; }
[ -s "$shot" ] || { echo "no screenshot"; exit 1; }
