#!/usr/bin/env python3
"""Writes docs/commands.md, the command reference, from the argument parser's own description of
every command (`scanout --experimental-dump-help`, the definitions --help, the completion scripts
and the man pages come from). It builds nothing: it runs a binary that is already built.

    tools/gen-docs.py                                  # .build/debug/scanout -> docs/commands.md
    tools/gen-docs.py --binary PATH --out DIR          # another binary; DIR/commands.md
    tools/gen-docs.py --man out/man                    # also the man pages, one per command, through
                                                       # the argument parser's generate-manual (built
                                                       # beside the binary: tools/man.sh builds it)
    tools/gen-docs.py --module-graph                   # print the module graph block of
                                                       # docs/ARCHITECTURE.md from Package.swift

A test (DocsTests) runs this into a scratch directory and fails when docs/commands.md differs.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dump(binary, path=()):
    """The dump of one command (the root's holds every subcommand too)."""
    try:
        out = subprocess.run([binary, *path, "--experimental-dump-help"], check=True,
                             capture_output=True, text=True, timeout=60).stdout
    except FileNotFoundError:
        sys.exit(f"gen-docs: {binary} not found; build it first (swift build --product scanout) or pass --binary")
    except subprocess.CalledProcessError as e:
        sys.exit(f"gen-docs: {binary} {' '.join(path)} --experimental-dump-help failed ({e.returncode}): {e.stderr.strip()}")
    return json.loads(out)["command"]


def is_help(arg):
    return arg["kind"] == "flag" and any(n["name"] == "help" for n in arg.get("names", []))


def spelled(name):
    return {"short": "-", "long": "--", "longWithSingleDash": "-"}[name["kind"]] + name["name"]


def argument_title(arg):
    """`-o, --out <out>`, `--mute`, `<input>`."""
    if arg["kind"] == "positional":
        title = f"<{arg['valueName']}>"
    else:
        title = ", ".join(spelled(n) for n in arg["names"])
        if arg["kind"] == "option":
            title += f" <{arg['valueName']}>"
    if arg.get("isRepeating"):
        title += " ..."
    return title


def usage(path, args):
    """The collapsed synopsis --help prints for a long command: options, then the positionals."""
    parts = list(path)
    if any(a["kind"] != "positional" for a in args):
        parts.append("[<options>]")
    for a in args:
        if a["kind"] != "positional":
            continue
        word = f"<{a['valueName']}>" + (" ..." if a.get("isRepeating") else "")
        parts.append(f"[{word}]" if a.get("isOptional") else word)
    return " ".join(parts)


def one_line(text):
    return " ".join(text.split())


def argument_lines(arg):
    lines = [f"- `{argument_title(arg)}`"]
    help_text = one_line(arg.get("abstract", ""))
    discussion = arg.get("discussion")
    if isinstance(discussion, str) and discussion.strip():
        help_text = (help_text + " " + one_line(discussion)).strip()
    facts = []
    if arg.get("allValues"):
        facts.append("one of " + ", ".join(f"`{v}`" for v in arg["allValues"]))
    if "defaultValue" in arg and arg["defaultValue"] != "":
        facts.append(f"default: `{arg['defaultValue']}`")
    elif arg["kind"] != "flag" and not arg.get("isOptional"):
        facts.append("required")
    if arg["kind"] == "option" and arg.get("isRepeating"):
        facts.append("may be repeated")
    if help_text:
        lines.append(f"  {help_text}")
    if facts:
        lines.append(f"  ({'; '.join(facts)})")
    return lines


def anchor(path):
    return "-".join(path)


def visible(commands):
    return [c for c in commands if c.get("shouldDisplay", True)]


def section(command, path, depth, out):
    args = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True) and not is_help(a)]
    out.append(f"{'#' * depth} {' '.join(path)}")
    out.append("")
    if command.get("abstract"):
        out.append(one_line(command["abstract"]))
        out.append("")
    discussion = command.get("discussion")
    if isinstance(discussion, str) and discussion.strip():
        out.extend(p.rstrip() for p in discussion.strip().split("\n"))
        out.append("")
    out.append("```")
    out.append(usage(path, args))
    out.append("```")
    out.append("")
    subs = visible(command.get("subcommands", []))
    if subs:
        out.append("Subcommands: " + ", ".join(f"[`{s['commandName']}`](#{anchor(path + [s['commandName']])})"
                                                for s in subs) + ".")
        out.append("")
    for arg in args:
        out.extend(argument_lines(arg))
    if args:
        out.append("")
    for s in subs:
        section(s, path + [s["commandName"]], min(depth + 1, 3), out)


def render(root):
    name = root["commandName"]
    out = [
        "# Command reference",
        "",
        "<!-- Generated by tools/gen-docs.py from `scanout --experimental-dump-help`; do not edit by hand. -->",
        "",
        "Every command, its options, their help and defaults, as the argument parser defines them (the same",
        f"definitions as `{name} help COMMAND`, the completion scripts and the man pages). Every command also",
        "takes `-h`, `--help`. A guide to the commands is in [README.md](../README.md) and",
        "[CLI.md](CLI.md); regenerate this file with `tools/gen-docs.py` after changing an option.",
        "",
    ]
    for s in visible(root.get("subcommands", [])):
        out.append(f"- [`{name} {s['commandName']}`](#{anchor([name, s['commandName']])}): {one_line(s.get('abstract', ''))}")
    out.append("")
    section(root, [name], 2, out)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def check_subcommand_dumps(binary, command, path):
    """Each subcommand's own dump is the node the root's dump holds for it."""
    for s in visible(command.get("subcommands", [])):
        sub_path = path + [s["commandName"]]
        own = dump(binary, sub_path[1:])
        if own.get("arguments") != s.get("arguments") or own.get("abstract") != s.get("abstract"):
            sys.exit(f"gen-docs: `{' '.join(sub_path)} --experimental-dump-help` disagrees with the root's dump")
        check_subcommand_dumps(binary, s, sub_path)


# The order the module graph is written in: the stages bottom-up, then the rest, then the C modules.
GRAPH_ORDER = ["ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutKMS", "ScanoutRender",
               "ScanoutDisplay", "ScanoutPlayer", "ScanoutPolicy", "ScanoutPipeline", "ScanoutOffline",
               "ScanoutService", "ScanoutBench", "ScanoutLoopback", "ScanoutTesting", "scanout", "ScanoutTestSupport",
               "CFFmpeg", "CScanoutShims", "CVAAPI", "CALSA", "CEGL", "CASS", "CDRM"]


def module_graph():
    """The block under "### The module graph" in docs/ARCHITECTURE.md, from `swift package
    dump-package`: every Scanout module (and `scanout`) that is not a test target, with its Scanout
    and C dependencies. ModuleGraphTests checks the same."""
    import tempfile
    env = {k: v for k, v in os.environ.items() if k != "SCANOUT_BENCHMARKS"}
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(["swift", "package", "--package-path", ROOT, "--scratch-path", scratch, "dump-package"],
                             check=True, capture_output=True, text=True, env=env).stdout

    def is_c(name):
        return len(name) > 1 and name[0] == "C" and name[1].isupper()

    def in_graph(name):
        return name.startswith("Scanout") or name == "scanout" or is_c(name)

    def rank(name):
        return (GRAPH_ORDER.index(name) if name in GRAPH_ORDER else len(GRAPH_ORDER), name)

    graph = {}
    for t in json.loads(out)["targets"]:
        if t["type"] in ("test", "system") or is_c(t["name"]) or not in_graph(t["name"]):
            continue
        deps = {d[k][0] for d in t["dependencies"] for k in ("byName", "target") if k in d and in_graph(d[k][0])}
        graph[t["name"]] = deps
    return "\n".join(f"{name}: {', '.join(sorted(graph[name], key=rank))}".rstrip() for name in sorted(graph, key=rank))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/scanout"),
                   help="the built scanout (default: .build/debug/scanout)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs"), help="where commands.md goes (default: docs)")
    p.add_argument("--check-subcommands", action="store_true",
                   help="also dump each subcommand on its own and check it agrees with the root's dump")
    p.add_argument("--man", metavar="DIR", help="also write the man pages into DIR with generate-manual")
    p.add_argument("--generate-manual", metavar="PATH",
                   help="the argument parser's generate-manual (default: beside the binary)")
    p.add_argument("--module-graph", action="store_true",
                   help="print the module graph block of docs/ARCHITECTURE.md from Package.swift, and nothing else")
    a = p.parse_args()
    if a.module_graph:
        print(module_graph())
        return

    root = dump(a.binary)
    if a.check_subcommands:
        check_subcommand_dumps(a.binary, root, [root["commandName"]])
    os.makedirs(a.out, exist_ok=True)
    target = os.path.join(a.out, "commands.md")
    with open(target, "w", encoding="utf-8") as f:
        f.write(render(root))
    print(target)

    if a.man:
        tool = a.generate_manual or os.path.join(os.path.dirname(os.path.abspath(a.binary)), "generate-manual")
        if not os.access(tool, os.X_OK):
            sys.exit(f"gen-docs: {tool} not found; build it (swift build --product generate-manual, "
                     "or tools/man.sh, which builds both and writes the pages)")
        os.makedirs(a.man, exist_ok=True)
        subprocess.run([tool, a.binary, "--multi-page", "--output-directory", a.man], check=True)
        print(a.man)


if __name__ == "__main__":
    main()
