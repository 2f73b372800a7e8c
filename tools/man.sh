#!/usr/bin/env bash
# Writes Scanout's man pages, one per command and subcommand (scanout.1, scanout.play.1, ...), into
# DIR (default out/man), from the same definitions as --help and the completion scripts: the
# argument parser's own manual generator reads `scanout --experimental-dump-help`.
#
#   tools/man.sh [DIR]        then: man -l out/man/scanout.play.1
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-out/man}
swift build --product scanout >/dev/null
swift build --product generate-manual >/dev/null
bin=$(swift build --show-bin-path)
mkdir -p "$dir"
"$bin/generate-manual" "$bin/scanout" --multi-page --output-directory "$dir"
ls "$dir"
