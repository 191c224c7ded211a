"""Check a wheel file as an installer and an auditor would read it.

Usage: python wheel_check.py WHEEL VERSION
- the file name is sqlite_acorn-VERSION-py3-none-PLATFORM.whl and WHEEL's Tag agrees;
- RECORD lists every member exactly once with its sha256 (urlsafe base64,
  unpadded) and size, and itself without either;
- METADATA names sqlite-acorn at VERSION, and its description (the README)
  shows acorn_version() as 'vVERSION';
- PLATFORM is manylinux_2_N_x86_64 where 2.N is the newest GLIBC_ symbol
  version acorn.so needs, and acorn.so needs no library but libc and the
  dynamic loader (what the manylinux policy allows for a C extension).
Prints "PASS wheel-file ..." or "FAIL wheel-file: reason"; exits 0 or 1.
"""

import base64
import csv
import email.parser
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
import zipfile


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run(path, version):
    name = os.path.basename(path)
    m = re.fullmatch(r"sqlite_acorn-(?P<v>[^-]+)-py3-none-(?P<plat>[a-z0-9_]+)\.whl", name)
    check(m is not None, f"file name {name}")
    check(m["v"] == version, f"file name version {m['v']} != {version}")
    plat = m["plat"]
    info = f"sqlite_acorn-{version}.dist-info"
    with zipfile.ZipFile(path) as z:
        members = [i.filename for i in z.infolist() if not i.is_dir()]
        record = z.read(f"{info}/RECORD").decode()
        rows = list(csv.reader(io.StringIO(record)))
        listed = [r[0] for r in rows]
        check(sorted(listed) == sorted(members), f"RECORD lists {sorted(listed)}, zip has {sorted(members)}")
        check(len(set(listed)) == len(listed), "RECORD lists a file twice")
        for fn, digest, size in rows:
            if fn == f"{info}/RECORD":
                check(digest == "" and size == "", "RECORD's own row has a hash or size")
                continue
            data = z.read(fn)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            check(digest == want, f"RECORD hash of {fn}: {digest}, file hashes to {want}")
            check(size == str(len(data)), f"RECORD size of {fn}: {size}, file has {len(data)}")
        wheel = email.parser.Parser().parsestr(z.read(f"{info}/WHEEL").decode())
        check(wheel.get_all("Tag") == [f"py3-none-{plat}"], f"WHEEL Tag {wheel.get_all('Tag')}")
        check(wheel["Root-Is-Purelib"] == "false", "WHEEL Root-Is-Purelib")
        meta = email.parser.Parser().parsestr(z.read(f"{info}/METADATA").decode())
        check(meta["Name"] == "sqlite-acorn", f"METADATA Name {meta['Name']}")
        check(meta["Version"] == version, f"METADATA Version {meta['Version']}")
        body = meta.get_payload()
        check(f"'v{version}'" in body and "@VERSION@" not in body,
              f"METADATA's description does not show acorn_version() as 'v{version}'")
        check(set(members) >= {"sqlite_acorn/__init__.py", "sqlite_acorn/acorn.so"}, f"members {members}")
        with tempfile.TemporaryDirectory() as d:
            so = z.extract("sqlite_acorn/acorn.so", d)
            dyn = subprocess.run(["objdump", "-T", "-p", so], check=True,
                                 capture_output=True, text=True).stdout
    needed = sorted(re.findall(r"^\s*NEEDED\s+(\S+)", dyn, re.M))
    check(needed == ["ld-linux-x86-64.so.2", "libc.so.6"] or needed == ["libc.so.6"],
          f"acorn.so needs {needed}")
    glibc = max((tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", dyn)))
    want = f"manylinux_{glibc[0]}_{glibc[1]}_x86_64"
    check(plat == want, f"platform tag {plat}, but acorn.so needs GLIBC_{'.'.join(map(str, glibc))}: {want}")
    return f"{name}: RECORD of {len(rows)} files verified, {want} (newest symbol GLIBC_{'.'.join(map(str, glibc))})"


def main():
    if len(sys.argv) != 3:
        print("usage: wheel_check.py WHEEL VERSION", file=sys.stderr)
        return 2
    try:
        print(f"PASS wheel-file {run(sys.argv[1], sys.argv[2])}")
    except Exception as e:
        print(f"FAIL wheel-file: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
