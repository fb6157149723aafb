#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders a scenario's quota-sim chart in headless Chromium and checks, in the
# browser's own layout, that it shows what the report says: one preemption
# mark per preemption (each with its victim, preemptor and reason), one
# stacked area and one lane per tenant, the capacity line, the y-axis unit,
# and time ticks and labels that neither overlap nor leave the picture.
# Writes OUT/chart.png (a screenshot). Exit 77 (skipped) without Chromium.
#   chart_browser_test.sh QUOTA_SIM SCENARIO OUT
set -euo pipefail
sim="$1" scenario="$2" out="$3"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "skipped: no headless Chromium (Debian: apt-get install chromium)"
  exit 77
fi
mkdir -p "$out"
"$sim" run "$scenario" --quiet --report "$out/chart.report.json" --svg "$out/chart.svg"
want_preemptions="$(grep -m1 -o '"preemptions": [0-9][0-9]*' "$out/chart.report.json" | grep -o '[0-9]*$')"
want_tenants="$(grep -c '"pending": \[' "$out/chart.report.json")"
# the chart inline in a page whose script measures it after layout and writes the verdict
{
  echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
  cat "$out/chart.svg"
  cat <<JS
<pre id="verdict">pending</pre>
<script>
const problems = [];
const svg = document.querySelector('svg');
const box = svg.getBoundingClientRect();
const inside = (el) => { const b = el.getBoundingClientRect();
  return (b.width > 0 || b.height > 0) && b.left >= box.left - 0.5 && b.right <= box.right + 0.5 &&
         b.top >= box.top - 0.5 && b.bottom <= box.bottom + 0.5; };
const marks = svg.querySelectorAll('path.preemption');
if (marks.length !== $want_preemptions) problems.push('preemption marks: ' + marks.length + ', report: $want_preemptions');
const seen = new Set();
marks.forEach((m) => {
  const t = m.querySelector('title');
  if (!t || !/preempted for .+ \(.+\), which was refused: .+/.test(t.textContent)) problems.push('mark without victim/preemptor/reason');
  if (!inside(m)) problems.push('a preemption mark out of view');
  const b = m.getBoundingClientRect(); const key = Math.round(b.left) + ',' + Math.round(b.top);
  if (seen.has(key)) problems.push('two preemption marks on one spot'); seen.add(key);
});
const stacks = svg.querySelectorAll('path.stack');
if (stacks.length !== $want_tenants) problems.push('stacked areas: ' + stacks.length + ', tenants: $want_tenants');
stacks.forEach((s) => { if (!inside(s)) problems.push('stacked area ' + s.dataset.tenant + ' empty or out of view'); });
const lanes = svg.querySelectorAll('g.lane');
if (lanes.length !== $want_tenants) problems.push('lanes: ' + lanes.length);
lanes.forEach((l) => { if (!l.querySelector('path.usage') || !l.querySelector('path.pending'))
  problems.push('lane ' + l.dataset.tenant + ' without usage or pending demand'); });
if (svg.querySelectorAll('line.reference').length === 0) problems.push('no reference lines');
if (!svg.querySelector('path.capacity') || !inside(svg.querySelector('path.capacity'))) problems.push('no capacity line in view');
const unit = svg.querySelector('text.y-unit');
if (!unit || !/\(GPUs\)/.test(unit.textContent) || !inside(unit)) problems.push('no y-axis unit in view');
// every text in view; time ticks readable (no decimals) and apart
svg.querySelectorAll('text').forEach((t) => { if (!inside(t)) problems.push('text out of view: ' + t.textContent); });
const ticks = [...svg.querySelectorAll('text.time-tick')];
ticks.forEach((t) => { if (!/^(0|(\d+d)?(\d+h)?(\d+m)?(\d+s)?)$/.test(t.textContent)) problems.push('time tick ' + t.textContent); });
for (let i = 1; i < ticks.length; ++i) {
  const a = ticks[i - 1].getBoundingClientRect(), b = ticks[i].getBoundingClientRect();
  if (Math.abs(a.top - b.top) < 1 && a.right > b.left) problems.push('time ticks overlap: ' + ticks[i].textContent);
}
document.getElementById('verdict').textContent = problems.length ? 'CHART-PROBLEMS ' + JSON.stringify(problems)
  : 'CHART-OK marks=' + marks.length + ' stacks=' + stacks.length + ' lanes=' + lanes.length + ' ticks=' + ticks.length;
</script></body></html>
JS
} > "$out/chart.html"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$out/profile")
verdict="$(timeout 90 "$browser" "${flags[@]}" --virtual-time-budget=5000 --dump-dom "file://$out/chart.html" 2>/dev/null |
  grep -o '<pre id="verdict">[^<]*' | sed 's/.*>//' || true)"
echo "$verdict"
case "$verdict" in
  CHART-OK*) ;;
  *) echo "the chart failed its checks in Chromium"; exit 1 ;;
esac
# a screenshot of the chart alone, at its own size
size="$(grep -m1 -o 'width="[0-9.]*" height="[0-9.]*"' "$out/chart.svg" | grep -o '[0-9]*\.' | tr -d . | paste -sd, -)"
timeout 90 "$browser" "${flags[@]}" --window-size="$size" --screenshot="$out/chart.png" "file://$out/chart.svg" \
  >/dev/null 2>&1
test -s "$out/chart.png"
echo "screenshot: $out/chart.png"
