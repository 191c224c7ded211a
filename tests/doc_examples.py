#!/usr/bin/env python3
"""Run the SQL examples of the documentation and compare their output.

The convention for examples is written at the top of tests/docs.bats.  This
program has two steps, so that tests/docs.bats can run sqlite3 itself (plain,
under sanitizers or under valgrind, like every other suite):

    doc_examples.py extract OUTDIR EXT FILE...
        Writes one sqlite3 script per ```sql block of the FILEs to
        OUTDIR/NNN.sql (it loads EXT first) and what the block expects to
        OUTDIR/NNN.json; a ```python block gets only OUTDIR/NNN.json, with
        its statements (the convention is at the top of tests/docs.bats).
        Prints "N blocks, M statements checked".
    doc_examples.py runpy OUTDIR/NNN.json
        Runs a ```python block's statements one by one in one namespace, as
        the Python REPL does (an expression's value is printed with repr()
        unless it is None), and prints the output in the form compare reads.
        An exception is printed as its last traceback line, a warning as
        "Category: message"; the next statement runs on.
    doc_examples.py compare OUTDIR
        Reads OUTDIR/NNN.out and OUTDIR/NNN.err (sqlite3's stdout and stderr
        for NNN.sql) and prints every difference as FILE:LINE.  Exit status 1
        if there is any.
    doc_examples.py extract-js OUTDIR FILE...
        Writes one Node script per ```js block of the FILEs to OUTDIR/NNN.cjs
        (CommonJS), or OUTDIR/NNN.mjs when a line of the block starts with
        `import ` (an ES module, where top-level await works), and what its
        `// -> ` and `// ~> ` lines expect to OUTDIR/NNN.json; a block whose
        first line starts with `// not run` (say why) gets OUTDIR/NNN.checkonly
        too, and is only parsed (node --check).  Prints "N blocks, M output
        lines checked".
    doc_examples.py compare-js OUTDIR
        Reads OUTDIR/NNN.out, NNN.err and NNN.rc (node's stdout, stderr and
        exit status for the script NNN) and prints every difference as
        FILE:LINE.  Exit status 1 if there is any.
    doc_examples.py links FILE...
        Checks that every relative link [text](path#anchor) of the FILEs
        names an existing file and, for a markdown file, a heading in it
        (anchors made as GitHub makes them).  Exit status 1 if one does not.
    doc_examples.py extract-ruby OUTDIR FILE...
        Writes one Ruby script per ```ruby block of the FILEs to OUTDIR/NNN.rb
        and what its `# -> ` and `# ~> ` lines expect to OUTDIR/NNN.json; a
        block whose first line starts with `# not run` (say why) gets
        OUTDIR/NNN.checkonly too, and is only parsed (ruby -c).  Prints "N
        blocks, M output lines checked".
    doc_examples.py compare-ruby OUTDIR
        Reads OUTDIR/NNN.out, NNN.err and NNN.rc (ruby's stdout, stderr and
        exit status for the script NNN) and prints every difference as
        FILE:LINE.  Exit status 1 if there is any.
    doc_examples.py extract-c OUTDIR FILE...,  compare-c OUTDIR
    doc_examples.py extract-go OUTDIR FILE..., compare-go OUTDIR
        The same for ```c blocks (OUTDIR/NNN.c, each a whole program, run by
        tests/docs.bats) and ```go blocks (OUTDIR/NNN.go, each a package
        main, run by tests/bindings/run), with `// -> ` and `// ~> ` lines
        and `// not run` as in JavaScript.
"""
import ast
import json
import os
import re
import sqlite3
import sys
import traceback
import warnings

MARK = "@@acorn-doc-example@@"
NOT_RUN = "-- not run"
ERROR_RE = re.compile(r"^(?:Runtime error|Parse error|Error:?) near line (\d+): (.*)$")


def parse_block(lines):
    """Split the lines of one ```sql block into items.

    Returns (not_run, items); an item is ("dot", lineno, text) or
    ("stmt", first_lineno, last_lineno, sql, expected) where expected is a
    list of (lineno, kind, text), kind "exact" or "shape".
    """
    items = []
    not_run = bool(lines) and lines[0][1].startswith(NOT_RUN)
    i = 0
    n = len(lines)
    while i < n:
        lineno, text = lines[i]
        stripped = text.strip()
        if not stripped or stripped.startswith("--"):
            i += 1                      # commentary or a blank line
            continue
        if stripped.startswith("."):
            items.append(("dot", lineno, stripped))
            i += 1
            continue
        first = lineno
        sql = []
        while i < n:
            sql.append(lines[i][1])
            i += 1
            if sqlite3.complete_statement("\n".join(sql)):
                break
        else:
            raise SyntaxError(f"line {first}: statement without a closing ';'")
        last = lines[i - 1][0]
        expected = []
        while i < n:
            lno, t = lines[i]
            if t == "--" or t.startswith("-- "):
                expected.append((lno, "exact", t[3:]))
            elif t == "--~" or t.startswith("--~ "):
                expected.append((lno, "shape", t[4:]))
            else:
                break
            i += 1
        items.append(("stmt", first, last, "\n".join(sql), expected))
    return not_run, items


def blocks_of(path, lang="sql"):
    """Yield (first_lineno, [(lineno, text), ...]) for each ```LANG block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```" + lang + r"\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append((i + 1, lines[i][indent:].rstrip()))
            i += 1
        if i == len(lines):
            raise SyntaxError(f"{path}:{start}: ```{lang} block is not closed")
        yield start, body
        i += 1


def extract(outdir, ext, files):
    os.makedirs(outdir, exist_ok=True)
    nblock = nstmt = nrun = 0
    for path in files:
        for start, body in blocks_of(path):
            try:
                not_run, items = parse_block(body)
            except SyntaxError as e:
                sys.exit(f"{path}: {e}")
            script = [f".load {ext}"]
            stmts = []
            for it in items:
                if it[0] == "dot":
                    if not_run or it[2].startswith(".load"):
                        continue        # the extension is loaded above
                    script.append(it[2])
                    continue
                _, first, last, sql, expected = it
                if not_run:
                    if not re.match(r"(?is)^\s*(SELECT|WITH)\b", sql):
                        continue
                    if expected:
                        sys.exit(f"{path}:{expected[0][0]}: a block marked "
                                 f"'{NOT_RUN}' shows output; it cannot be checked")
                    # Compiled, not run: EXPLAIN prepares the query, so a
                    # name or a constraint that no longer exists still fails.
                    sql = "EXPLAIN " + sql.lstrip()
                script.append(f".print {MARK} {len(stmts)}")
                if not_run:
                    script.append(".output /dev/null")
                begin = len(script) + 1
                script.extend(sql.split("\n"))
                if not_run:
                    script.append(".output stdout")
                stmts.append({"file": path, "first": first, "last": last,
                              "lines": [begin, len(script)],
                              "expected": [] if not_run else expected,
                              "compiled_only": not_run})
            script.append(f".print {MARK} end")
            name = f"{nblock:03d}"
            with open(os.path.join(outdir, name + ".sql"), "w") as f:
                f.write("\n".join(script) + "\n")
            with open(os.path.join(outdir, name + ".json"), "w") as f:
                json.dump({"file": path, "start": start, "stmts": stmts}, f)
            nblock += 1
            nstmt += len(stmts)
            nrun += sum(1 for s in stmts if not s["compiled_only"])
        for start, body in blocks_of(path, "python"):
            try:
                not_run, stmts = parse_python_block(path, body)
            except SyntaxError as e:
                sys.exit(f"{path}: {e}")
            name = f"{nblock:03d}"
            with open(os.path.join(outdir, name + ".json"), "w") as f:
                json.dump({"file": path, "start": start, "lang": "python",
                           "stmts": stmts}, f)
            nblock += 1
            nstmt += len(stmts)
            nrun += 0 if not_run else len(stmts)
    print(f"{nblock} blocks, {nstmt} statements: {nrun} run and compared, "
          f"{nstmt - nrun} compiled only")


PY_OUT = re.compile(r"^#(?P<kind>[>~])(?: (?P<text>.*))?$")


def parse_python_block(path, lines):
    """A ```python block's top-level statements, each with the output
    lines right below it: "#> text" exact, "#~ text" by shape.  Returns
    (not_run, stmts).  The whole block must parse; an output line that is
    not right below a statement is an error."""
    not_run = bool(lines) and lines[0][1].startswith("# not run")
    text = "\n".join(t for _, t in lines) + "\n"
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise SyntaxError(f"line {lines[0][0] + (e.lineno or 1) - 1}: {e.msg}") from None
    out_at = {}
    for i, (lno, t) in enumerate(lines):
        m = PY_OUT.match(t)
        if m:
            out_at[i] = ("exact" if m["kind"] == ">" else "shape", m["text"] or "")
    stmts = []
    used = set()
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno
        src = "\n".join(t for _, t in lines[first - 1:last])
        expected = []
        i = last
        while i in out_at:
            kind, t = out_at[i]
            expected.append((lines[i][0], kind, t))
            used.add(i)
            i += 1
        if not_run and expected:
            raise SyntaxError(f"line {expected[0][0]}: a block marked '# not run' shows "
                              "output; it cannot be checked")
        stmts.append({"file": path, "first": lines[first - 1][0], "src": src + "\n",
                      "expected": [] if not_run else expected, "compiled_only": not_run})
    for i in sorted(set(out_at) - used):
        raise SyntaxError(f"line {lines[i][0]}: an output line that is not right below "
                          "a statement")
    return not_run, stmts


def runpy(block_json):
    """Run a ```python block (see the module's doc)."""
    with open(block_json) as f:
        block = json.load(f)

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{category.__name__}: {message}")
    warnings.showwarning = show
    # every warning each time, but the deprecations inside libraries
    # (Python's own default hides those too)
    warnings.simplefilter("always")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", category=PendingDeprecationWarning)
    warnings.filterwarnings("always", category=DeprecationWarning, module="__main__")
    ns = {"__name__": "__main__"}
    for k, st in enumerate(block["stmts"]):
        print(f"{MARK} {k}", flush=True)
        try:
            code = compile(st["src"], f"{st['file']}:{st['first']}", "single")
            if not st["compiled_only"]:
                exec(code, ns)
        except BaseException as e:
            print(traceback.format_exception_only(type(e), e)[-1].rstrip())
        sys.stdout.flush()
    print(f"{MARK} end", flush=True)
    return 0


def shape_regex(text):
    """The regular expression a --~ line stands for (see tests/docs.bats)."""
    hexd = "[0-9a-fA-F]"
    out = []
    pos = 0
    token = re.compile(
        r"(?P<dots>\.\.\.)"
        rf"|(?P<uuid>{hexd}{{8}}-{hexd}{{4}}-(?P<ver>{hexd}){hexd}{{3}}-{hexd}{{4}}-{hexd}{{12}})"
        rf"|(?P<hex>{hexd}*[0-9]{hexd}*)"
        r"|(?P<space> +)"
        r"|(?P<rule>─+)")
    for m in token.finditer(text):
        out.append(re.escape(text[pos:m.start()]))
        if m.group("dots"):
            out.append(".*")
        elif m.group("uuid"):
            out.append(f"{hexd}{{8}}-{hexd}{{4}}-{re.escape(m.group('ver'))}{hexd}{{3}}"
                       f"-[89abAB]{hexd}{{3}}-{hexd}{{12}}")
        elif m.group("hex"):
            out.append(f"{hexd}+")
        elif m.group("space"):
            out.append(" +")
        else:
            out.append("─+")
        pos = m.end()
    out.append(re.escape(text[pos:]))
    return "".join(out)


# The sqlite3 shell of SQLite 3.52 draws .mode box with rounded corners and
# a double rule under the header; the pages show the square ones of earlier
# shells.  Output is compared in the earlier shells' glyphs.
BOX_GLYPHS = str.maketrans("╭╮╰╯╞╪╡═", "┌┐└┘├┼┤─")


def matches(kind, want, got):
    got = got.translate(BOX_GLYPHS)
    if kind == "exact":
        return want == got
    return re.fullmatch(shape_regex(want), got) is not None


def compare(outdir):
    problems = []
    names = sorted(f[:-5] for f in os.listdir(outdir) if f.endswith(".json"))
    for name in names:
        with open(os.path.join(outdir, name + ".json")) as f:
            block = json.load(f)
        with open(os.path.join(outdir, name + ".out"), encoding="utf-8") as f:
            out = f.read().split("\n")
        with open(os.path.join(outdir, name + ".err"), encoding="utf-8") as f:
            err = f.read().split("\n")
        stmts = block["stmts"]
        got = [[] for _ in stmts]
        cur = None
        seen_end = False
        for line in out:
            if line.startswith(MARK + " "):
                tag = line[len(MARK) + 1:]
                if tag == "end":
                    seen_end = True
                    cur = None
                else:
                    cur = int(tag)
                continue
            if cur is not None:
                got[cur].append(line.rstrip())
        if not seen_end:
            problems.append(f"{block['file']}:{block['start']}: the block did not run "
                            f"to its end ({block.get('lang', 'sqlite3')} stopped early)")
        if block.get("lang") == "python":
            # exceptions and warnings are printed as output: stderr is empty
            for line in err:
                if line.strip():
                    problems.append(f"{block['file']}:{block['start']}: python said: {line}")
            err = []
        # Errors go to stderr with the script line of their statement.
        for line in err:
            if not line.strip() or line.startswith("  "):
                continue                # empty, or newer shells' SQL echo
            m = ERROR_RE.match(line)
            where = None
            if m:
                n = int(m.group(1))
                for k, s in enumerate(stmts):
                    if s["lines"][0] <= n <= s["lines"][1]:
                        where = k
            if where is None:
                problems.append(f"{block['file']}:{block['start']}: sqlite3 said: {line}")
            else:
                # the shells of 3.38 and 3.40 add " (CODE)" to an error
                # other than SQLITE_ERROR, that of 3.52 does not
                got[where].append("error: " + re.sub(r" \(\d+\)$", "", m.group(2)))
        for s, g in zip(stmts, got):
            if s["compiled_only"]:
                for line in g:
                    if line.startswith("error: "):
                        problems.append(f"{s['file']}:{s['first']}: does not compile: {line[7:]}")
                continue
            exp = s["expected"]
            ok = len(exp) == len(g) and all(matches(k, w, x) for (_, k, w), x in zip(exp, g))
            if not ok:
                lines = [f"{s['file']}:{s['first']}: the output differs from the page"]
                lines.append("  shown:")
                marks = ("#~", "#>") if block.get("lang") == "python" else ("--~", "--")
                lines += [f"    {marks[0] if k == 'shape' else marks[1]} {w}" for _, k, w in exp] or ["    (nothing)"]
                lines.append("  got:")
                lines += [f"    {x}" for x in g] or ["    (nothing)"]
                problems.append("\n".join(lines))
    for p in problems:
        print(p)
    return 1 if problems else 0


def anchors(path):
    """The anchors GitHub gives the headings of a markdown file."""
    seen = {}
    out = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
            if fence or not m:
                continue
            a = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(a, 0)
            seen[a] = n + 1
            out.add(a if n == 0 else f"{a}-{n}")
    return out


def links(files):
    bad = []
    for path in files:
        base = os.path.dirname(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"(?ms)^```.*?^```", "", text)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue                # http:, mailto: ...
            file, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, file)) if file else path
            if not os.path.exists(full):
                bad.append(f"{path}: link to a missing file: {target}")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                bad.append(f"{path}: link to a missing heading: {target}")
    for b in bad:
        print(b)
    return 1 if bad else 0


# Pages' scripts run whole by their interpreter (tests/docs.bats runs them):
# the lines of output each shows, exactly or by shape, and the first-line
# mark of a block that is only parsed.
SCRIPTS = {
    "js": {"exact": "// -> ", "shape": "// ~> ", "not_run": "// not run"},
    "ruby": {"exact": "# -> ", "shape": "# ~> ", "not_run": "# not run"},
    "c": {"exact": "// -> ", "shape": "// ~> ", "not_run": "// not run"},
    "go": {"exact": "// -> ", "shape": "// ~> ", "not_run": "// not run"},
}


def script_ext(lang, body):
    """The file name's ending: a JavaScript block with a line starting
    `import ` is an ES module (top-level await works), any other CommonJS."""
    if lang in ("ruby", "c", "go"):
        return {"ruby": ".rb", "c": ".c", "go": ".go"}[lang]
    return ".mjs" if any(re.match(r"^import\s", text) for _, text in body) else ".cjs"


def extract_script(lang, outdir, files):
    """A script per ```LANG block; its expected output from its comments.

    A line `// -> text` (ruby: `# -> text`) is a line the block prints,
    exactly; `// ~> text` one compared by shape (as --~ in SQL blocks).
    They are the block's whole stdout, in order; a block without them must
    print nothing, and must exit 0 with nothing on stderr.  A block whose
    first line starts with the not-run mark is only parsed (the runner sees
    NAME.checkonly) and must show no output."""
    mark = SCRIPTS[lang]
    os.makedirs(outdir, exist_ok=True)
    nblock = nline = 0
    for path in files:
        for start, body in blocks_of(path, lang):
            expected = []
            for lineno, text in body:
                t = text.strip()
                for kind in ("exact", "shape"):
                    if t.startswith(mark[kind]) or t == mark[kind].rstrip():
                        expected.append((lineno, kind, t[len(mark[kind]):]))
                        break
            name = f"{nblock:03d}"
            not_run = bool(body) and body[0][1].startswith(mark["not_run"])
            if not_run and expected:
                sys.exit(f"{path}:{expected[0][0]}: a block marked '{mark['not_run']}' shows "
                         f"output; it cannot be checked")
            if not_run:
                open(os.path.join(outdir, name + ".checkonly"), "w").close()
            with open(os.path.join(outdir, name + script_ext(lang, body)), "w") as f:
                f.write("\n".join(text for _, text in body) + "\n")
            with open(os.path.join(outdir, name + ".json"), "w") as f:
                json.dump({"file": path, "start": start, "expected": expected}, f)
            nblock += 1
            nline += len(expected)
    print(f"{nblock} blocks, {nline} output lines checked")


def compare_script(lang, outdir):
    """Compare each block's .out, .err and .rc (written by the runner) with
    what the page shows; print each difference."""
    mark = SCRIPTS[lang]
    problems = []
    names = sorted(f[:-5] for f in os.listdir(outdir) if f.endswith(".json"))
    for name in names:
        with open(os.path.join(outdir, name + ".json")) as f:
            block = json.load(f)
        where = f"{block['file']}:{block['start']}"

        def read(ext):
            p = os.path.join(outdir, name + ext)
            if not os.path.exists(p):
                return ""
            with open(p, encoding="utf-8") as f:
                return f.read()
        out = read(".out").split("\n")
        if out and out[-1] == "":
            out.pop()
        err = read(".err").strip()
        rc = read(".rc").strip()
        if rc != "0" or err:
            problems.append(f"{where}: the block failed (exit {rc or '?'}):\n"
                            + "\n".join("    " + l for l in (err or "(no stderr)").split("\n")[:15]))
            continue
        exp = block["expected"]
        for k in range(max(len(exp), len(out))):
            e = exp[k] if k < len(exp) else None
            g = out[k] if k < len(out) else None
            if e is not None and g is not None and matches(e[1], e[2], g):
                continue
            line = e[0] if e else block["start"]
            lines = [f"{block['file']}:{line}: the output differs from the page"]
            lines.append("  shown:")
            lines += [f"    {mark[kind].rstrip()} {w}" for _, kind, w in exp] or ["    (nothing)"]
            lines.append("  got:")
            lines += [f"    {x}" for x in out] or ["    (nothing)"]
            problems.append("\n".join(lines))
            break
    for p in problems:
        print(p)
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "extract":
        extract(argv[2], argv[3], argv[4:])
        return 0
    if len(argv) == 3 and argv[1] == "compare":
        return compare(argv[2])
    m = re.match(r"^(extract|compare)-(js|ruby|c|go)$", argv[1]) if len(argv) >= 3 else None
    if m and m[1] == "extract":
        extract_script(m[2], argv[2], argv[3:])
        return 0
    if m and len(argv) == 3:
        return compare_script(m[2], argv[2])
    if len(argv) == 3 and argv[1] == "runpy":
        return runpy(argv[2])
    if len(argv) >= 3 and argv[1] == "links":
        return links(argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
