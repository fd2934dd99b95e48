"""Lints the dashboard's web files: HTML with html5lib (parsed as a browser does; any parse error fails), CSS with
tinycss2 (every rule and declaration must parse), JavaScript with esprima (the script must parse). Run by
deploy/lint-web.sh in the venv deploy/install-weblint.sh makes.

Usage: lint-web.py [FILE ...]   (default: every file of Sources/BeaconMeshDashboard/Web)
Prints one line per problem, "file:line:column: what", and exits 1 if there is any; else one line, exit 0.
`{{name}}` placeholders of the HTML templates are text or attribute values, so they parse as they are.
"""
import os
import sys

import esprima
import html5lib
import tinycss2

WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "BeaconMeshDashboard", "Web")


def lint_html(text):
    parser = html5lib.HTMLParser(strict=False)
    if text.lstrip().lower().startswith("<!doctype"):
        parser.parse(text)
    else:
        parser.parseFragment(text, container="div")
    problems = []
    for (line, column), code, data in parser.errors:
        problems.append((line, column, code + (" " + repr(data) if data else "")))
    return problems


def lint_css(text):
    problems = []

    def errors(nodes):
        for node in nodes:
            if node.type == "error":
                problems.append((node.source_line, node.source_column, node.message))
            elif node.type == "qualified-rule":
                errors(tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True))
            elif node.type == "at-rule" and node.content is not None:
                if node.lower_at_keyword in ("media", "supports", "layer", "container"):
                    errors(tinycss2.parse_rule_list(node.content, skip_comments=True, skip_whitespace=True))
                else:
                    errors(tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True))
            elif node.type == "declaration" and not node.value:
                problems.append((node.source_line, node.source_column, "empty value for " + node.name))

    errors(tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True))
    return problems


def lint_js(text):
    try:
        esprima.parseScript(text)
    except esprima.Error as error:
        return [(getattr(error, "lineNumber", 0), getattr(error, "column", 0), getattr(error, "description", str(error)))]
    return []


LINTERS = {".html": lint_html, ".css": lint_css, ".js": lint_js}


def main(paths):
    if not paths:
        paths = sorted(os.path.join(WEB, name) for name in os.listdir(WEB))
    failed = False
    for path in paths:
        linter = LINTERS.get(os.path.splitext(path)[1])
        if linter is None:
            print(f"{path}: no linter for this kind of file")
            failed = True
            continue
        with open(path, encoding="utf-8") as file:
            text = file.read()
        for line, column, what in linter(text):
            print(f"{path}:{line}:{column}: {what}")
            failed = True
    if failed:
        return 1
    print(f"lint-web: {len(paths)} files OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
