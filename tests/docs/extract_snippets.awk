# SPDX-License-Identifier: Apache-2.0
# Writes each ```cpp block of the Markdown files given to OUT/<file>_<n>.cpp
# (awk -v out=OUT -f extract_snippets.awk FILE.md...): a ```cpp block is a
# whole program. A block that shows a shape only is compiled too, inside a
# harness: ```cpp fragment as statements of main(), ```cpp fragment-decl at
# namespace scope, ```cpp fragment-member as members of a class; its
# #include lines go first, then the page's context header
# (tests/docs/context/<file>.hpp, when there is one: the names the page's
# fragments use, such as `job`), then the block.
FNR == 1 {
  n = 0
  stem = FILENAME
  sub(/.*\//, "", stem)
  sub(/\.md$/, "", stem)
  gsub(/[^A-Za-z0-9_]/, "_", stem)
}
function flush_fragment(   i) {
  print "// extracted from " FILENAME " (block " n ", " mode ")" > f
  print "#include <quota/quota.hpp>" > f
  for (i = 1; i <= ninc; i++) print inc[i] > f
  if (context != "" && (getline line < (context "/" stem ".hpp")) > 0) {
    close(context "/" stem ".hpp")
    print "#include \"" stem ".hpp\"" > f
  }
  if (mode == "fragment") print "int main() {" > f
  if (mode == "fragment-member") print "struct doc_fragment_class {" > f
  if (mode == "fragment-decl") print "namespace doc_fragment {" > f
  for (i = 1; i <= nbody; i++) print body[i] > f
  if (mode == "fragment") print "}" > f
  if (mode == "fragment-member") print "};\nint main() {}" > f
  if (mode == "fragment-decl") print "}  // namespace doc_fragment\nint main() {}" > f
  close(f)
}
/^```/ {
  if (fence) {
    if ($0 == "```") {
      if (f != "" && mode != "") flush_fragment()
      else if (f != "") close(f)
      fence = 0
      f = ""
      mode = ""
    }
    next
  }
  fence = 1
  mode = ""
  if ($0 == "```cpp") {
    n++
    f = out "/" stem "_" n ".cpp"
    print "// extracted from " FILENAME " (block " n ")" > f
  } else if ($0 ~ /^```cpp fragment(-decl|-member)?$/) {
    n++
    mode = substr($0, 8)
    f = out "/" stem "_" n ".cpp"
    ninc = 0
    nbody = 0
  }
  next
}
fence && f != "" && mode != "" {
  if ($0 ~ /^#include /) inc[++ninc] = $0
  else body[++nbody] = $0
  next
}
fence && f != "" { print > f }
