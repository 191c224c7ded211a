"""sqlite_acorn.Cache: acorn's cache table as a Python object.

The object holds no data of its own: every method is one short statement
(or one BEGIN IMMEDIATE transaction of a few) on the cache table, so several
threads and processes share one cache through the database file.

HOW IT WORKS
- One sqlite3 connection per thread (threading.local), opened at the
  thread's first call, with acorn loaded, journal_mode and synchronous set.
  A Cache inherited through fork() opens new connections in the child and
  never touches the parent's.  close() closes every thread's connection.
- Values, by the convention every face of acorn follows (docs/cache.md,
  "Values across languages"): str as TEXT and bytes as a BLOB, exactly; an
  int of 64 bits as an INTEGER, a float as a REAL; the others as a TEXT that
  starts with the byte 0xFF, which no UTF-8 text holds, and a letter: 'i'
  and the digits of a larger int, 'f' and 'nan', 'j' and the JSON of True,
  False, None and lists and dicts that JSON holds exactly for every
  language, 'p' and a pickle (with pickle=True, for memoize's results and
  for Django; otherwise TypeError).  The connections read TEXT with
  errors='surrogateescape', so such a value reads as a str that starts with
  '\\udcff' (which no str stored by Python can: it cannot be encoded), and
  is decoded back; 'm' (Ruby's Marshal) and 'k' (Keyv's) raise
  ForeignValueError.
- Keys are str (TEXT), bytes (BLOB) or int in the int64 range (INTEGER).
- memoize() stores a lock entry next to the value's key, taken with add():
  one caller computes while the others poll for the value.  The lock has a
  lifetime (lock_expire), so a holder that dies on another machine holds it
  no longer than that; a holder that dies on this machine (same boot, same
  pid namespace) is seen dead at once, by its pid and start time.
"""

import collections
import contextlib
import functools
import io
import json
import math
import os
import pickle
import re
import sqlite3
import threading
import time
import weakref

__all__ = ["Cache", "CacheStats", "ForeignValueError"]

CacheStats = collections.namedtuple(
    "CacheStats", "capacity entries bytes hits misses evictions expired")

# Options of the table, in the order acorn lists them; those with a command
# can be changed on an existing table.
_TABLE_OPTIONS = ("capacity", "recency_buffer", "policy", "autoflush", "default_ttl",
                  "max_entries", "feed")
_COMMAND_OPTIONS = ("capacity", "default_ttl", "max_entries", "feed")
_FIXED_OPTIONS = ("policy", "recency_buffer", "autoflush")
_FIXED_DEFAULTS = {"policy": "lru", "recency_buffer": "100000", "autoflush": "on"}
# what may go between the quotes of an option of CREATE VIRTUAL TABLE; the
# table checks the rest
_OPTION_VALUE = re.compile(r"^[A-Za-z0-9_.+ -]+$")
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_JOURNAL_MODES = ("wal", "delete", "truncate", "persist", "memory")
_SYNCHRONOUS = ("off", "normal", "full", "extra")

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_MAX_TTL = 1e12          # acorn's longest ttl, in seconds
_TYPED = "\udcff"        # how the byte 0xFF reads with surrogateescape
_PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL
_MISS = object()
# memoize()'s lock entry after a result too large to keep: for lock_expire
# seconds every caller computes at once
_UNSTORABLE = b"\x00unstorable"

# memoize() waits with this between looks at the value (a module global so
# that a test can see a caller start waiting).
_pause = time.sleep

# Replaced in a child after fork(): connections stamped with the old one
# belong to the parent.
_epoch = [object()]
_inherited = []          # the parent's connections, kept and never used


def _after_fork():
    _epoch[0] = object()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class _Connection(sqlite3.Connection):
    """A connection that a WeakSet can hold (sqlite3.Connection cannot)."""
    token = None
    epoch = None
    depth = 0            # how many transact() blocks are open on it


def _text(b, _decode=functools.partial(str, encoding="utf-8", errors="surrogateescape")):
    return _decode(b)


class ForeignValueError(ValueError):
    """A stored value that Python cannot read: another language's own
    serialization (Ruby's Marshal, a Keyv string) or a mark this version
    does not know.  key, mark (the letter after 0xFF), language and format
    (None for a mark this version does not know) say which."""

    def __init__(self, message, key, mark, language=None, format=None):
        super().__init__(message)
        self.key, self.mark, self.language, self.format = key, mark, language, format


ForeignValueError.__module__ = "sqlite_acorn"

# The marks of other languages' serializations: (the language, its format).
_FOREIGN = {"m": ("Ruby", "Marshal"), "k": ("Node", "Keyv")}
_JSON_INT = (1 << 53) - 1
_json_dumps = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"),
                                allow_nan=False)


def _not_json(v, depth=0):
    """Why v is not JSON that every language reads back as it is (None if
    it is): only str, bool, None, finite floats, ints within 2**53-1, and
    lists and str-keyed dicts of them."""
    t = type(v)
    if t is str or t is bool or v is None:
        return None
    if t is int:
        return None if -_JSON_INT <= v <= _JSON_INT else f"the int {v}, beyond 2**53-1"
    if t is float:
        return None if math.isfinite(v) else f"the float {v!r}"
    if depth > 200:
        return "lists and dicts nested more than 200 deep"
    if t is list:
        for x in v:
            why = _not_json(x, depth + 1)
            if why is not None:
                return why
        return None
    if t is dict:
        for k, x in v.items():
            if type(k) is not str:
                return f"a key that is {_a(type(k).__name__)} ({k!r})"
            why = _not_json(x, depth + 1)
            if why is not None:
                return why
        return None
    return _a(t.__name__)


def _a(name):
    return ("an " if name[:1] in "aeiouAEIOU" else "a ") + name


def _encode(value, where, pickle_ok):
    """(value to bind, marked): marked values are bound as a BLOB and CAST to
    TEXT.  The convention of docs/cache.md, "Values across languages"."""
    t = type(value)
    if t is bytes or t is str:
        return value, False
    if t is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            return value, False
        return b"\xffi" + str(value).encode("ascii"), True
    if t is float:
        if value != value:
            return b"\xfffnan", True
        return value, False
    if t is bytearray or t is memoryview:
        return bytes(value), False
    why = None
    if t is dict or t is list or t is bool or value is None:
        try:
            why = _not_json(value)
            if why is None:
                return b"\xffj" + _json_dumps(value).encode("utf-8"), True
        except RecursionError:
            why = "lists and dicts nested too deep"
        except UnicodeEncodeError:
            why = "a str that is not Unicode text (a lone surrogate)"
    if pickle_ok:
        return b"\xffp" + pickle.dumps(value, protocol=_PICKLE_PROTOCOL), True
    if why is None:
        why = (f"{_a(t.__name__)} is not among the values every language reads (str, bytes,"
               " int, float, bool, None, and lists and str-keyed dicts of them)")
    else:
        why = f"this {t.__name__} holds {why}, which JSON does not keep for every language"
    raise TypeError(f"sqlite_acorn.Cache.{where}: {why}; pass Cache(..., pickle=True) to"
                    " store it pickled, for Python alone")


def _decode(value, key, where):
    """A value as stored (TEXT read with surrogateescape) as Python's."""
    if type(value) is not str or value[:1] != _TYPED:
        return value
    kind, payload = value[1:2], value[2:]
    if kind == "p":
        return pickle.loads(payload.encode("utf-8", "surrogateescape"))
    if kind in ("i", "f", "j"):
        try:
            return int(payload) if kind == "i" else float(payload) if kind == "f" else \
                json.loads(payload)
        except ValueError as e:
            raise ValueError(f"sqlite_acorn.Cache.{where}: the value of {key!r} is marked"
                             f" {kind!r} but cannot be read as such: {e}") from None
    if kind in _FOREIGN:
        language, fmt = _FOREIGN[kind]
        raise ForeignValueError(f"sqlite_acorn.Cache.{where}: the value of {key!r} was"
                                f" written by {language} ({fmt}); Python cannot read it",
                                key, kind, language, fmt)
    shown = "nothing" if not kind else repr(kind.encode("utf-8", "surrogateescape"))[1:]
    raise ForeignValueError(f"sqlite_acorn.Cache.{where}: the value of {key!r} starts with"
                            f" the byte 0xFF and then {shown}, a mark this version of"
                            " sqlite_acorn does not know (a newer acorn wrote it?); Python"
                            " cannot read it", key, kind)


def _with(value, expires, tag, want_expire, want_tag):
    """value, or the tuple diskcache gives with expire_time and tag."""
    if want_expire:
        when = None if expires is None else expires / 1000
        return (value, when, tag) if want_tag else (value, when)
    return (value, tag) if want_tag else value


def _lost():
    return sqlite3.OperationalError(
        "sqlite_acorn.Cache.transact: SQLite rolled the whole transaction back after an error"
        " inside it (a full disk, say): none of the block's writes were kept")


def _check_key(key, where):
    t = type(key)
    if t is str or t is bytes:
        return key
    if t is int:
        if _INT64_MIN <= key <= _INT64_MAX:
            return key
        raise ValueError(f"sqlite_acorn.Cache.{where}: an int key must be in"
                         f" -2**63..2**63-1, got {key}")
    raise TypeError(f"sqlite_acorn.Cache.{where}: key must be str, bytes or int,"
                    f" got {t.__name__}")


def _check_expire(expire, where, name="expire"):
    if expire is None:
        return None
    if type(expire) not in (int, float) or not 0 <= expire <= _MAX_TTL:
        raise ValueError(f"sqlite_acorn.Cache.{where}: {name} must be None or a number of"
                         f" seconds from 0 to {int(_MAX_TTL)}, got {expire!r}")
    return expire


def _check_tag(tag, where):
    if tag is None or type(tag) is str:
        return tag
    raise TypeError(f"sqlite_acorn.Cache.{where}: tag must be a str or None,"
                    f" got {type(tag).__name__}")


def _check_offset(n, where, name):
    if type(n) is int and 0 <= n <= _INT64_MAX:
        return n
    raise ValueError(f"sqlite_acorn.Cache.{where}: {name} must be an int >= 0, got {n!r}")


def _too_big(e):
    return isinstance(e, sqlite3.OperationalError) and str(e).startswith("cache: entry of ")


def _option_value(name, value):
    if name == "autoflush" and type(value) is bool:
        return "on" if value else "off"
    if type(value) is int and value >= 0:
        return str(value)
    if type(value) is str and _OPTION_VALUE.match(value):
        return value
    raise ValueError(f"sqlite_acorn.Cache: bad {name} {value!r}; expected a whole number"
                     " or a value such as '64MiB', '64 MiB', '15m', 'lru' (letters, digits,"
                     " spaces, '_', '.', '+' and '-')")


def _schema_options(sql):
    """The name = value options of a CREATE VIRTUAL TABLE ... USING cache(...)."""
    m = re.search(r"(?is)\busing\s+cache\s*(?:\((.*)\))?\s*$", sql or "")
    if m is None:
        return None
    out = {}
    for arg in (m.group(1) or "").split(","):
        name, eq, value = arg.partition("=")
        if eq:
            value = value.strip()
            if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
                value = value[1:-1]
            out[name.strip().lower()] = value
    return out


def _host_id():
    """This boot and pid namespace, or b'' where they cannot be told."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            boot = f.read().strip()
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return b""
    return boot + b"/" + str(ns).encode()


def _start_time(pid):
    """The start time of process pid (clock ticks after boot), or None if it
    is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


class Cache:
    """A cache table of acorn in the SQLite file at path, as an object.

    Cache(path, table='cache', capacity=None, policy=None, *, timeout=60.0,
          journal_mode='wal', synchronous='normal', wal_limit=None, pickle=False,
          **options)

    Creates the table if absent (capacity None: acorn's default, 1GiB;
    policy None: 'lru'), opens the existing one otherwise.  options are the table's other options:
    recency_buffer, autoflush, default_ttl, max_entries, feed.  On an existing
    table, capacity, default_ttl, max_entries and feed given here are applied
    with their commands; policy, recency_buffer and autoflush are fixed when
    the table is created and must agree.  timeout is how long a write waits
    for another connection's (seconds).  journal_mode None leaves the file's
    as it is (a read-only file needs that, unless it is WAL already);
    wal_limit is each connection's cache_wal_limit (None: acorn's, 64MiB).
    A read-only file is opened for gets: an existing table, and no option
    that needs a write.  pickle=True stores a value that not every language
    reads (a tuple, a set, any object) pickled, for Python alone; without it
    such a value is a TypeError.  Pickles are read either way.
    """

    def __init__(self, path, table="cache", capacity=None, policy=None, *,
                 timeout=60.0, journal_mode="wal", synchronous="normal", wal_limit=None,
                 pickle=False, **options):
        from . import loadable_path
        self.path = os.fspath(path)
        if self.path in ("", ":memory:") or self.path.startswith("file::memory:"):
            raise ValueError("sqlite_acorn.Cache: path must name a file: each thread opens its"
                             f" own connection to it, and {self.path!r} would give each its"
                             " own empty database")
        if type(table) is not str or not _TABLE_NAME.match(table):
            raise ValueError("sqlite_acorn.Cache: table must be a name of letters, digits and"
                             f" '_' that does not start with a digit, got {table!r}")
        for name in options:
            if name not in _TABLE_OPTIONS:
                raise TypeError(f"sqlite_acorn.Cache: unknown option {name!r}; accepted options"
                                " are timeout, journal_mode, synchronous, wal_limit, pickle, "
                                + ", ".join(_TABLE_OPTIONS))
        if journal_mode is not None and journal_mode not in _JOURNAL_MODES:
            raise ValueError(f"sqlite_acorn.Cache: bad journal_mode {journal_mode!r}; expected"
                             " None (the file's) or one of " + ", ".join(_JOURNAL_MODES))
        if synchronous not in _SYNCHRONOUS:
            raise ValueError(f"sqlite_acorn.Cache: bad synchronous {synchronous!r}; expected"
                             " one of " + ", ".join(_SYNCHRONOUS))
        if type(timeout) not in (int, float) or timeout < 0:
            raise ValueError(f"sqlite_acorn.Cache: timeout must be seconds >= 0, got {timeout!r}")
        if type(pickle) is not bool:
            raise TypeError(f"sqlite_acorn.Cache: pickle must be True or False, got {pickle!r}")
        self._pickle = pickle
        self.table = table
        self._lib = loadable_path()
        self._timeout = float(timeout)
        self._journal = None if journal_mode is None else f"PRAGMA journal_mode={journal_mode}"
        self._synchronous = f"PRAGMA synchronous={synchronous}"
        self._wal_limit = (None if wal_limit is None else
                           f"SELECT cache_wal_limit('{_option_value('wal_limit', wal_limit)}')")
        self._local = threading.local()
        self._conns = weakref.WeakSet()
        self._lock = threading.Lock()
        self._token = object()
        self._host = _host_id()

        self._q = q = '"' + table.replace('"', '""') + '"'
        lit = "'" + table.replace("'", "''") + "'"
        self._sql_get = f"SELECT cache_get({lit}, ?)"
        self._sql_has = f"SELECT 1 FROM {q} WHERE key = ?"
        self._sql_value = f"SELECT value FROM {q} WHERE key = ?"
        self._sql_entry = f"SELECT value, expires, tag FROM {q} WHERE key = ?"
        self._sql_keys = f"SELECT key FROM {q}"
        self._sql_set = f"INSERT INTO {q}(key, value, ttl, tag) VALUES (?, ?, ?, ?)"
        self._sql_set_typed = (f"INSERT INTO {q}(key, value, ttl, tag)"
                               " VALUES (?, CAST(? AS TEXT), ?, ?)")
        self._sql_update = f"UPDATE {q} SET value = ? WHERE key = ?"
        self._sql_update_typed = f"UPDATE {q} SET value = CAST(? AS TEXT) WHERE key = ?"
        self._sql_delete = f"DELETE FROM {q} WHERE key = ?"
        self._sql_touch = f"UPDATE {q} SET ttl = ? WHERE key = ?"
        self._sql_forever = f"UPDATE {q} SET expires = NULL WHERE key = ?"
        self._sql_evict = f"DELETE FROM {q} WHERE tag = ?"
        self._sql_clear = f"DELETE FROM {q}"
        self._sql_len = f"SELECT count(*) FROM {q}"
        self._sql_command = f"INSERT INTO {q}({q}, value) VALUES (?, ?)"
        self._sql_stats = "SELECT * FROM cache_stats(?)"
        self._sql_reserve = f"INSERT INTO {q}(key, value, ttl, tag) VALUES (?, zeroblob(?), ?, ?)"
        self._sql_write_at = f"SELECT cache_write({lit}, ?, ?, ?)"
        self._sql_read_at = f"SELECT cache_read({lit}, ?, ?, ?)"

        given = dict(options)
        if capacity is not None:
            given["capacity"] = capacity
        if policy is not None:
            given["policy"] = policy
        self._open_table(q, {n: _option_value(n, v) for n, v in given.items()})

    # ------------------------------------------------------------ connections
    def _connect(self):
        try:
            c = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None,
                                check_same_thread=False, factory=_Connection)
        except sqlite3.OperationalError as e:
            where = os.path.dirname(os.path.abspath(self.path))
            why = (f": the directory {where} does not exist" if not os.path.isdir(where) else
                   ": it is a directory" if os.path.isdir(self.path) else "")
            raise sqlite3.OperationalError(f"sqlite_acorn.Cache: cannot open {self.path}"
                                           f" ({e}){why}") from None
        try:
            c.enable_load_extension(True)
            c.load_extension(self._lib)
            c.enable_load_extension(False)
            c.text_factory = _text
            if self._journal is not None:
                try:
                    c.execute(self._journal).fetchall()
                except sqlite3.OperationalError as e:
                    if "readonly" not in str(e):
                        raise
                    raise sqlite3.OperationalError(
                        f"sqlite_acorn.Cache: {self.path} is read-only ({e}), and setting"
                        f" {self._journal[7:]} needs a write; pass journal_mode=None to"
                        " leave the file's journal mode and read it") from None
            try:
                c.execute(self._synchronous).fetchall()
            except sqlite3.OperationalError as e:
                # the first statement that reads the file
                raise sqlite3.OperationalError(f"sqlite_acorn.Cache: {self.path}: {e}") from None
            if self._wal_limit is not None:
                try:
                    c.execute(self._wal_limit).fetchall()
                except sqlite3.OperationalError as e:
                    raise ValueError(f"sqlite_acorn.Cache: {e}") from None
            if c.execute("PRAGMA encoding").fetchone()[0] != "UTF-8":
                raise ValueError(f"sqlite_acorn.Cache: {self.path} is a UTF-16 database;"
                                 " Cache needs UTF-8 (the encoding a new file gets)")
        except BaseException:
            c.close()
            raise
        c.token, c.epoch = self._token, _epoch[0]
        with self._lock:
            self._conns.add(c)
        return c

    def _db(self):
        """This thread's connection, opened at its first use."""
        c = getattr(self._local, "c", None)
        if c is None or c.token is not self._token or c.epoch is not _epoch[0]:
            if c is not None and c.epoch is not _epoch[0]:
                _inherited.append(c)     # the parent's: never closed here
            c = self._local.c = self._connect()
        return c

    def _begin(self):
        """Start one method's writes: BEGIN IMMEDIATE, or inside transact() a
        savepoint, so that a method that fails takes back its own writes
        only.  End with _commit(c) or _rollback(c) (_writes() does)."""
        c = self._db()
        if c.depth:
            if not c.in_transaction:
                raise _lost()
            c.execute("SAVEPOINT acorn")
        else:
            c.execute("BEGIN IMMEDIATE")
        return c

    @contextlib.contextmanager
    def _writes(self):
        """One method's writes on this thread's connection (_begin):
        committed at the end of the with block, taken back if it raises."""
        c = self._begin()
        try:
            yield c
            self._commit(c)
        except BaseException:
            self._rollback(c)
            raise

    @staticmethod
    def _commit(c):
        c.execute("RELEASE acorn" if c.depth else "COMMIT")

    @staticmethod
    def _rollback(c):
        # (an error that SQLite answers by rolling the whole transaction
        # back, such as a full disk, leaves nothing to take back here)
        if not c.in_transaction:
            return
        if c.depth:
            c.execute("ROLLBACK TO acorn")
            c.execute("RELEASE acorn")
        else:
            c.execute("ROLLBACK")

    @contextlib.contextmanager
    def transact(self):
        """Hold one write transaction (BEGIN IMMEDIATE) on this thread's
        connection around the block: its methods' writes are committed
        together at its end, or none of them if it raises.  Other
        connections' writes wait for it; their gets see none of it until it
        ends.  Nested, it is a savepoint of the outer one."""
        c = self._db()
        c.execute("SAVEPOINT acorn" if c.depth else "BEGIN IMMEDIATE")
        c.depth += 1
        try:
            yield
        except BaseException:
            c.depth -= 1
            self._rollback(c)
            raise
        c.depth -= 1
        if not c.in_transaction:
            raise _lost()
        try:
            self._commit(c)
        except BaseException:
            self._rollback(c)
            raise

    def close(self):
        """Close every thread's connection (a later call opens new ones).

        Call it when no other thread is using the cache."""
        with self._lock:
            conns = list(self._conns)
            self._conns = weakref.WeakSet()
            self._token = object()
        for c in conns:
            if c.epoch is _epoch[0]:
                c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ the table
    def _schema_row(self, c):
        return c.execute("SELECT sql FROM main.sqlite_schema WHERE type = 'table'"
                         " AND lower(name) = lower(?)", (self.table,)).fetchone()

    def _open_table(self, q, given):
        c = self._db()
        # An existing table that needs no command opens without a write: no
        # lock, and a read-only file can be read.
        row = self._schema_row(c)
        if row is not None and not any(n in given for n in _COMMAND_OPTIONS):
            self._check_table(row, given)
            return

        def refused(e):
            """The error for e, a write that failed."""
            if "readonly" not in str(e):
                return ValueError(f"sqlite_acorn.Cache: {e}")
            what = ("creating the table " + repr(self.table) if row is None else
                    ", ".join(f"{n}={given[n]!r}" for n in _COMMAND_OPTIONS if n in given))
            return ValueError(f"sqlite_acorn.Cache: {self.path} is read-only ({e}): gets work,"
                              f" but {what} needs a writable file")
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if "readonly" not in str(e):
                raise
            raise refused(e) from None
        try:
            row = self._schema_row(c)
            if row is None:
                args = ", ".join(f"{n} = '{v}'" for n, v in given.items())
                try:
                    c.execute(f"CREATE VIRTUAL TABLE main.{q} USING cache({args})")
                except sqlite3.OperationalError as e:
                    raise refused(e) from None
            else:
                self._check_table(row, given)
                for n in _COMMAND_OPTIONS:
                    if n in given:
                        try:
                            c.execute(self._sql_command, (n, given[n]))
                        except sqlite3.OperationalError as e:
                            raise refused(e) from None
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def _check_table(self, row, given):
        """row (its CREATE statement) is a cache table with the fixed options given."""
        stored = _schema_options(row[0])
        if stored is None:
            raise ValueError(f"sqlite_acorn.Cache: {self.path} has a table"
                             f" {self.table!r} that is not a cache table")
        for n in _FIXED_OPTIONS:
            was = stored.get(n, _FIXED_DEFAULTS[n])
            if n in given and given[n].lower() != was.lower():
                raise ValueError(
                    f"sqlite_acorn.Cache: the table {self.table!r} was created with"
                    f" {n} {was!r}, not {given[n]!r}; {n} is fixed when a table is"
                    " created")

    # ------------------------------------------------------------ reads
    def get(self, key, default=None, read=False, expire_time=False, tag=False):
        """The value of key, or default if it is missing or expired (a use).

        read=True: an io.BytesIO of a bytes value.  expire_time=True and
        tag=True: (value, expire_time), (value, tag) or (value, expire_time,
        tag) as diskcache gives them, expire_time in unix seconds or None
        (default in place of the value, None for the others, on a miss)."""
        if read or expire_time or tag:
            return self._get_entry(key, default, read, expire_time, tag)
        if type(key) is not str and type(key) is not bytes:
            _check_key(key, "get")
        # _db() inlined: this is the path every get takes
        c = getattr(self._local, "c", None)
        if c is None or c.token is not self._token or c.epoch is not _epoch[0]:
            c = self._db()
        v = c.execute(self._sql_get, (key,)).fetchone()[0]
        if v is None:
            return default
        if type(v) is str and v[:1] == _TYPED:
            return _decode(v, key, "get")
        return v

    def _get_entry(self, key, default, read, expire_time, tag):
        _check_key(key, "get")
        row = self._db().execute(self._sql_entry, (key,)).fetchone()
        if row is None:
            return _with(default, None, None, expire_time, tag)
        value = _decode(row[0], key, "get")
        if read:
            if type(value) is not bytes:
                raise TypeError(f"sqlite_acorn.Cache.get: read=True reads a bytes value, and"
                                f" the value of {key!r} is {_a(type(value).__name__)}")
            value = io.BytesIO(value)
        return _with(value, row[1], row[2], expire_time, tag)

    def __getitem__(self, key):
        v = self.get(key, _MISS)
        if v is _MISS:
            raise KeyError(key)
        return v

    def __contains__(self, key):
        """Whether key has a live entry (not a use)."""
        _check_key(key, "__contains__")
        return self._db().execute(self._sql_has, (key,)).fetchone() is not None

    def __len__(self):
        """The live entries (a count of the keys: not a use)."""
        return self._db().execute(self._sql_len).fetchone()[0]

    def _keys(self, order=""):
        return [k for k, in self._db().execute(self._sql_keys + order)]

    def __iter__(self):
        """The keys of the live entries when the loop starts, in the order
        they were set (reads keys only: not a use)."""
        return iter(self._keys())

    def __reversed__(self):
        """The keys as iter() gives them, the last set first."""
        return reversed(self._keys())

    def iterkeys(self, reverse=False):
        """The keys of the live entries in SQLite's order (ints, then str,
        then bytes), as diskcache's iterkeys; reverse=True from the last."""
        return iter(self._keys(" ORDER BY key DESC" if reverse else " ORDER BY key"))

    def volume(self):
        """Bytes the file takes on disk: its pages and its -wal file."""
        c = self._db()
        n = c.execute("PRAGMA page_count").fetchone()[0] * \
            c.execute("PRAGMA page_size").fetchone()[0]
        try:
            n += os.path.getsize(self.path + "-wal")
        except OSError:
            pass
        return n

    def check(self, fix=False):
        """Check the table's invariants (its integrity_check command) and
        the file's (PRAGMA quick_check); returns the list of what is wrong,
        as strings, empty when all is well."""
        if fix:
            raise ValueError(
                "sqlite_acorn.Cache.check: fix=True is not taken: acorn keeps its counts in"
                " the transaction of each write, so there is nothing to recount, and SQLite"
                " cannot repair a damaged file; remove it (it is a cache) or restore a copy")
        found = []
        with self._writes() as c:
            try:
                c.execute(self._sql_command, ("integrity_check", None))
            except sqlite3.DatabaseError as e:
                found.append(str(e))
            for m, in c.execute("PRAGMA quick_check"):
                if m != "ok" and m not in found:
                    found.append(m)
        return found

    def stats(self):
        """CacheStats(capacity, entries, bytes, hits, misses, evictions, expired).

        entries and bytes include expired entries not yet reclaimed; hits
        and misses include this thread's uses not yet written, and are None
        under policy fifo."""
        return CacheStats(*self._db().execute(self._sql_stats, (self.table,)).fetchone())

    # ------------------------------------------------------------ writes
    def _insert(self, c, key, encoded, expire, tag, where="set"):
        """INSERT the value that _encode() gave, as set does."""
        v, typed = encoded
        try:
            c.execute(self._sql_set_typed if typed else self._sql_set, (key, v, expire, tag))
        except sqlite3.OperationalError as e:
            if _too_big(e):
                raise ValueError(f"sqlite_acorn.Cache.{where}: {e}") from None
            raise

    def set(self, key, value, expire=None, tag=None):
        """Store value under key; expire in seconds (None: the table's
        default_ttl, none unless set), tag a str or None.  Returns True.

        Raises ValueError when key and value do not fit in the capacity."""
        key = _check_key(key, "set")
        expire = _check_expire(expire, "set")
        tag = _check_tag(tag, "set")
        self._store(key, _encode(value, "set", self._pickle), expire, tag, "set")
        return True

    def _store(self, key, encoded, expire, tag, where):
        with self._writes() as c:
            self._insert(c, key, encoded, expire, tag, where)

    def __setitem__(self, key, value):
        self.set(key, value)

    def add(self, key, value, expire=None, tag=None):
        """Store value under key only if key has no live entry; returns whether it did."""
        key = _check_key(key, "add")
        expire = _check_expire(expire, "add")
        tag = _check_tag(tag, "add")
        encoded = _encode(value, "add", self._pickle)
        with self._writes() as c:
            added = c.execute(self._sql_has, (key,)).fetchone() is None
            if added:
                self._insert(c, key, encoded, expire, tag, "add")
        return added

    def _write(self, sql, args):
        with self._writes() as c:
            n = c.execute(sql, args).rowcount
        return n

    def delete(self, key):
        """Remove key; returns whether it had a live entry."""
        return self._write(self._sql_delete, (_check_key(key, "delete"),)) > 0

    def __delitem__(self, key):
        if not self.delete(key):
            raise KeyError(key)

    def pop(self, key, default=None, expire_time=False, tag=False):
        """Remove key and return its value, or default if it had no live
        entry, in one write transaction (a use); with expire_time and tag,
        the tuples get() gives."""
        key = _check_key(key, "pop")
        with self._writes() as c:
            row = c.execute(self._sql_entry, (key,)).fetchone()
            if row is not None:
                value = _decode(row[0], key, "pop")
                c.execute(self._sql_delete, (key,))
        if row is None:
            return _with(default, None, None, expire_time, tag)
        return _with(value, row[1], row[2], expire_time, tag)

    def expire(self):
        """Remove the expired entries now (the table's purge command; every
        write also does); returns how many."""
        with self._writes() as c:
            before = c.execute(self._sql_stats, (self.table,)).fetchone()[6]
            c.execute(self._sql_command, ("purge", None))
            n = c.execute(self._sql_stats, (self.table,)).fetchone()[6] - before
        return n

    def touch(self, key, expire=None):
        """Give key's entry a new lifetime: expire seconds from now, or None
        for never.  Returns whether key had a live entry."""
        key = _check_key(key, "touch")
        expire = _check_expire(expire, "touch")
        if expire is None:
            return self._write(self._sql_forever, (key,)) > 0
        return self._write(self._sql_touch, (expire, key)) > 0

    def incr(self, key, delta=1, default=0):
        """Add delta to the int stored under key, atomically, and return the
        sum.  A missing key starts from default (None: KeyError)."""
        return self._add(key, delta, default, "incr", 1)

    def _add(self, key, delta, default, where, sign):
        """incr and decr (sign -1), their arguments checked in their own names."""
        key = _check_key(key, where)
        if type(delta) is not int:
            raise TypeError(f"sqlite_acorn.Cache.{where}: delta must be an int, got {type(delta).__name__}")
        if default is not None and type(default) is not int:
            raise TypeError(f"sqlite_acorn.Cache.{where}: default must be an int or None,"
                            f" got {type(default).__name__}")
        delta *= sign

        def add(old):
            if type(old) is not int:
                raise TypeError(f"sqlite_acorn.Cache.{where}: the value of {key!r} is a"
                                f" {type(old).__name__}, not an int")
            return old + delta
        return self._apply(key, add, default, where)

    def _apply(self, key, func, default=None, where="set"):
        """In one write transaction: new = func(value of key), stored in its
        entry (keeping its lifetime, tag and hits); a missing key raises
        KeyError if default is None, else stores func(default)."""
        with self._writes() as c:
            row = c.execute(self._sql_value, (key,)).fetchone()
            if row is None:
                if default is None:
                    raise KeyError(key)
                value = func(default)
                self._insert(c, key, _encode(value, where, self._pickle), None, None, where)
            else:
                value = func(_decode(row[0], key, where))
                v, typed = _encode(value, where, self._pickle)
                try:
                    c.execute(self._sql_update_typed if typed else self._sql_update, (v, key))
                except sqlite3.OperationalError as e:
                    if _too_big(e):
                        raise ValueError(f"sqlite_acorn.Cache.{where}: {e}") from None
                    raise
        return value

    def decr(self, key, delta=1, default=0):
        """incr(key, -delta, default)."""
        return self._add(key, delta, default, "decr", -1)

    def evict(self, tag):
        """Remove every entry with this tag; returns how many."""
        if type(tag) is not str:
            raise TypeError(f"sqlite_acorn.Cache.evict: tag must be a str, got {type(tag).__name__}")
        return self._write(self._sql_evict, (tag,))

    def clear(self):
        """Remove every entry; returns how many were live."""
        return self._write(self._sql_clear, ())

    # ------------------------------------------------------------ pieces
    def reserve(self, key, size, expire=None, tag=None):
        """Store size zero bytes under key, to be written in pieces by
        write_at(): the whole size counts against the capacity now.
        Returns True; raises ValueError when it cannot fit."""
        key = _check_key(key, "reserve")
        if type(size) is not int or not 0 <= size <= 2147483647:
            raise ValueError("sqlite_acorn.Cache.reserve: size must be an int from 0 to"
                             f" 2147483647 (SQLite's largest value), got {size!r}")
        expire = _check_expire(expire, "reserve")
        tag = _check_tag(tag, "reserve")
        c = self._begin()
        try:
            c.execute(self._sql_reserve, (key, size, expire, tag))
            self._commit(c)
        except BaseException as e:
            self._rollback(c)
            if _too_big(e):
                raise ValueError(f"sqlite_acorn.Cache.reserve: {e}") from None
            raise
        return True

    def write_at(self, key, offset, data):
        """Write the bytes of data into key's value at offset, in place (a
        use).  Returns the number written.  KeyError if key has no live
        entry; ValueError if the bytes would pass the end of the value (a
        value keeps the size it was set or reserved with) or the value is a
        str."""
        key = _check_key(key, "write_at")
        offset = _check_offset(offset, "write_at", "offset")
        if type(data) is not bytes:
            if not isinstance(data, (bytearray, memoryview)):
                raise TypeError("sqlite_acorn.Cache.write_at: data must be bytes, bytearray or"
                                f" memoryview, got {type(data).__name__}")
            data = bytes(data)
        try:
            return self._db().execute(self._sql_write_at, (key, offset, data)).fetchone()[0]
        except sqlite3.OperationalError as e:
            m = str(e)
            if m.startswith("cache_write: no live entry"):
                raise KeyError(key) from None
            if m.startswith(("cache_write: cannot write", "cache_write: the value is TEXT")):
                raise ValueError(f"sqlite_acorn.Cache.write_at: {m[13:]}") from None
            raise

    def read_at(self, key, offset, length):
        """Up to length bytes of key's value from offset (fewer at its end,
        b'' past it), or None if key has no live entry (a use, or a miss).
        Only the pages holding those bytes are read."""
        key = _check_key(key, "read_at")
        offset = _check_offset(offset, "read_at", "offset")
        length = _check_offset(length, "read_at", "length")
        v = self._db().execute(self._sql_read_at, (key, offset, length)).fetchone()[0]
        if type(v) is str:
            # a str value: its UTF-8 bytes, as they are stored
            v = v.encode("utf-8", "surrogateescape")
        return v

    # ------------------------------------------------------------ many keys
    def _get_many(self, keys):
        """{key: value} of the keys with a live entry (each a use), by
        SELECT key, value ... WHERE key IN (...) of up to 500 keys."""
        c = self._db()
        out = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            sql = (f"SELECT key, value FROM {self._q} WHERE key IN"
                   f" ({', '.join('?' * len(part))})")
            for k, v in c.execute(sql, part):
                out[k] = _decode(v, k, "get_many")
        return out

    def _set_many(self, items, expire):
        """Store (key, name, value) items in one transaction; returns the
        names of those larger than the capacity, which are deleted instead."""
        failed = []
        with self._writes() as c:
            for key, name, value in items:
                try:
                    self._insert(c, key, _encode(value, "set_many", self._pickle), expire,
                                 None, "set_many")
                except ValueError:
                    c.execute(self._sql_delete, (key,))
                    failed.append(name)
        return failed

    def _delete_many(self, keys):
        """Delete the keys in one transaction; returns how many were live."""
        n = 0
        with self._writes() as c:
            for key in keys:
                n += c.execute(self._sql_delete, (key,)).rowcount
        return n

    # ------------------------------------------------------------ memoize
    def memoize(self, name=None, typed=False, expire=None, tag=None, lock_expire=60.0,
                ignore=()):
        """A decorator that caches a function's results under its arguments.

        One caller computes a missing result while the other threads and
        processes wait for it: the computer holds a lock entry (taken with
        add) for at most lock_expire seconds, or until its process dies on
        this machine.  name (default: the function's module and qualified
        name) and the arguments, pickled, make the key; typed=True keeps
        1 and 1.0 apart; ignore names the arguments left out of the key:
        positions (ints) and keyword names (strs).  The wrapper's
        __cache_key__(*args, **kwargs) gives the key of a call."""
        if callable(name):
            raise TypeError("sqlite_acorn.Cache.memoize: name cannot be callable; write"
                            " @cache.memoize() with parentheses")
        if name is not None and type(name) is not str:
            raise TypeError("sqlite_acorn.Cache.memoize: name must be a str or None,"
                            f" got {type(name).__name__}")
        _check_expire(expire, "memoize")
        _check_expire(lock_expire, "memoize", "lock_expire")
        _check_tag(tag, "memoize")
        if isinstance(ignore, (str, bytes)) or not hasattr(ignore, "__iter__"):
            raise TypeError("sqlite_acorn.Cache.memoize: ignore must be a set or tuple of"
                            " argument positions and keyword names, got"
                            f" {type(ignore).__name__}")
        ignore = frozenset(ignore)
        for i in ignore:
            if type(i) is not int and type(i) is not str:
                raise TypeError("sqlite_acorn.Cache.memoize: ignore holds argument positions"
                                f" (int) and keyword names (str), not {i!r}")

        def decorator(func):
            base = (name if name is not None else f"{func.__module__}.{func.__qualname__}",)

            def key_of(*args, **kwargs):
                if ignore:
                    args = tuple(a for i, a in enumerate(args) if i not in ignore)
                    kwargs = {n: v for n, v in kwargs.items() if n not in ignore}
                k = base + args
                if kwargs:
                    k += ("\x00kwargs",)
                    for item in sorted(kwargs.items()):
                        k += item
                if typed:
                    k += tuple(type(a) for a in args)
                    if kwargs:
                        k += tuple(type(v) for _, v in sorted(kwargs.items()))
                return b"\x00memo\x00" + pickle.dumps(k, protocol=4)

            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                key = key_of(*args, **kwargs)
                v = self.get(key, _MISS)
                if v is not _MISS:
                    return v
                return self._compute(key, func, args, kwargs, expire, tag, lock_expire)

            wrapper.__cache_key__ = key_of
            return wrapper
        return decorator

    def _holder_dead(self, token):
        """Whether the lock token names a process of this machine that is gone."""
        try:
            host, pid, start, _ = token.split(b" ", 3)
            pid, start = int(pid), int(start)
        except ValueError:
            return False
        if not self._host or host != self._host:
            return False
        return _start_time(pid) != start

    def _release(self, lock, token):
        """Delete the lock entry if it still holds token."""
        with self._writes() as c:
            row = c.execute(self._sql_value, (lock,)).fetchone()
            if row is not None and row[0] == token:
                c.execute(self._sql_delete, (lock,))

    def _compute(self, key, func, args, kwargs, expire, tag, lock_expire):
        lock = b"\x00lock" + key
        pid = os.getpid()
        token = b"%s %d %d %d-%s" % (self._host or b"-", pid, _start_time(pid) or 0,
                                     threading.get_ident(), os.urandom(8).hex().encode())
        wait = 0.001
        while True:
            if self.add(lock, token, expire=lock_expire):
                try:
                    # a computer may have stored it between the miss and the lock
                    v = self.get(key, _MISS)
                    if v is _MISS:
                        v = func(*args, **kwargs)
                        try:
                            # pickled if it must be: only Python reads
                            # memoize's keys anyway
                            self._store(key, _encode(v, "memoize", True), expire, tag,
                                        "memoize")
                        except ValueError:
                            # larger than the capacity: not kept, and the
                            # lock says so, so that callers compute at once
                            # instead of waiting for a value that never comes
                            try:
                                self.set(lock, _UNSTORABLE, expire=lock_expire)
                            except ValueError:
                                pass
                    return v
                finally:
                    self._release(lock, token)
            holder = self.get(lock)
            if holder == _UNSTORABLE or self._db().depth:
                # inside transact() this thread holds the write lock that
                # the computer needs to store its result: waiting for it
                # would wait for ever
                return func(*args, **kwargs)
            if type(holder) is bytes and self._holder_dead(holder):
                self._release(lock, holder)
                continue
            _pause(wait)
            wait = min(wait * 2, 0.05)
            v = self.get(key, _MISS)
            if v is not _MISS:
                return v

    def __repr__(self):
        return f"sqlite_acorn.Cache({self.path!r}, table={self.table!r})"
