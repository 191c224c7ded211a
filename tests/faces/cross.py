"""Values across languages, Python's side: `write FILE` stores one value of
each kind under 'py/<kind>' with sqlite_acorn.Cache; `read FILE` reads every
key of the table and prints `key<TAB>canonical`, the form cross.js and
cross.rb print too (tests/faces.bats compares them)."""
import json
import math
import sqlite3
import sys

import sqlite_acorn

VALUES = {
    "str": "h\u00e9llo \u2603",
    "str_empty": "",
    "bytes": b"\x00\xff\x01",
    "bytes_empty": b"",
    "int": 42,
    "int_unsafe": -9007199254740993,
    "int_big": 2 ** 70,
    "float": 1.5,
    "float_whole": 2.0,
    "inf": float("inf"),
    "nan": float("nan"),
    "true": True,
    "null": None,
    "list": [1, "a", None, True, 2.5],
    "dict": {"a": 1, "b": [True, None], "\u00e9": "x"},
    "own": (1, 2),          # pickled: only Python reads it
}


def canon(v):
    if isinstance(v, bool):
        return "bool:" + ("true" if v else "false")
    if v is None:
        return "null"
    if isinstance(v, str):
        return "str:" + v.encode().hex()
    if isinstance(v, bytes):
        return "bytes:" + v.hex()
    if isinstance(v, int):
        return "num:%d" % v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "num:inf" if v > 0 else "num:-inf"
        return "num:%d" % v if v.is_integer() else "num:" + repr(v)
    if isinstance(v, (list, dict)):
        return "json:" + json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "own:" + repr(v)


def main(op, path):
    cache = sqlite_acorn.Cache(path, pickle=True)
    if op == "write":
        for kind, v in VALUES.items():
            cache.set("py/" + kind, v)
        return
    keys = sorted(k for k in cache)
    for k in keys:
        try:
            v = cache.get(k, KeyError)
            out = "MISS" if v is KeyError else canon(v)
        except ValueError as e:
            m = str(e)
            out = "error:" + ("pickle" if "pickle" in m else "marshal" if "Marshal" in m
                              else "keyv" if "Keyv" in m else "other")
        print(f"{k}\t{out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
