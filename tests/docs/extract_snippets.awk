# SPDX-License-Identifier: Apache-2.0
# Writes each ```cpp block of the Markdown files given to OUT/<file>_<n>.cpp
# (awk -v out=OUT -f extract_snippets.awk FILE.md...). A block whose fence
# says more (```cpp fragment) shows a shape only and is left out.
FNR == 1 {
  n = 0
  stem = FILENAME
  sub(/.*\//, "", stem)
  sub(/\.md$/, "", stem)
  gsub(/[^A-Za-z0-9_]/, "_", stem)
}
/^```/ {
  if (fence) {
    if ($0 == "```") {
      if (f != "") close(f)
      fence = 0
      f = ""
    }
    next
  }
  fence = 1
  if ($0 == "```cpp") {
    n++
    f = out "/" stem "_" n ".cpp"
    print "// extracted from " FILENAME " (block " n ")" > f
  }
  next
}
fence && f != "" { print > f }
