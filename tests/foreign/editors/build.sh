#!/usr/bin/env bash
# Builds the editors test page (editors.html) from the real libraries, pinned in package-lock.json:
#   tests/foreign/editors/build.sh [OUT]     (OUT defaults to var/foreign/editors under the repo root)
# npm ci in OUT, esbuild bundles entry.js (CodeMirror 6, ProseMirror, TipTap) into editors.bundle.js/.css,
# and the libraries loaded by their own scripts are copied beside the page: CodeMirror 5's js and css,
# Quill's UMD build and css, Monaco's min/vs tree for its AMD loader. bench/foreign_editors.py serves OUT.
# A stamp of the inputs makes a second run with nothing changed a quick no-op. Prints one line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-$repo/var/foreign/editors}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

inputs=(package.json package-lock.json entry.js editors.html build.sh)
stamp="$(cd "$here" && cat "${inputs[@]}" | cksum | cut -d' ' -f1)-$(node --version 2>/dev/null || echo none)"
if [[ -f "$out/.built" && "$(cat "$out/.built")" == "$stamp" && -f "$out/editors.html" ]]; then
  echo "editors page up to date: $out/editors.html"
  exit 0
fi

command -v npm >/dev/null || { echo "build.sh: npm is missing (apt-get install nodejs npm)" >&2; exit 1; }
rm -f "$out/.built"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
fail() { cat "$log" >&2; echo "build.sh: $1 failed" >&2; exit 1; }

cp "$here/package.json" "$here/package-lock.json" "$here/entry.js" "$out/"
# --ignore-scripts: esbuild's postinstall only checks its binary, which comes in @esbuild/<platform>.
(cd "$out" && npm ci --include=dev --ignore-scripts --no-audit --no-fund --loglevel=error) >"$log" 2>&1 || fail "npm ci"

(cd "$out" && node_modules/.bin/esbuild entry.js --bundle --format=iife --target=es2020 --minify \
  --legal-comments=none --log-level=warning --outfile=editors.bundle.js) >"$log" 2>&1 || fail "esbuild"

nm="$out/node_modules"
rm -rf "$out/codemirror5" "$out/quill" "$out/monaco"
mkdir -p "$out/codemirror5/lib" "$out/codemirror5/mode/sql" "$out/quill" "$out/monaco"
cp "$nm/codemirror5/lib/codemirror.js" "$nm/codemirror5/lib/codemirror.css" "$out/codemirror5/lib/"
cp "$nm/codemirror5/mode/sql/sql.js" "$out/codemirror5/mode/sql/"
cp "$nm/quill/dist/quill.js" "$nm/quill/dist/quill.snow.css" "$out/quill/"
cp -R "$nm/monaco-editor/min/vs" "$out/monaco/vs"
cp "$here/editors.html" "$out/"

echo "$stamp" >"$out/.built"
echo "editors page built: $out/editors.html"
