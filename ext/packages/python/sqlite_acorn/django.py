"""sqlite_acorn.django.AcornCache: a Django cache backend on acorn's cache table.

    CACHES = {
        "default": {
            "BACKEND": "sqlite_acorn.django.AcornCache",
            "LOCATION": "/var/cache/myapp/cache.db",
            "TIMEOUT": 300,
            "OPTIONS": {"capacity": "256MiB"},
        }
    }

LOCATION is the SQLite file.  OPTIONS: table ('django_cache'), capacity,
policy, recency_buffer, autoflush, max_entries (or Django's MAX_ENTRIES),
feed, journal_mode, synchronous, and busy_timeout (seconds a write waits for
another connection's; sqlite_acorn.Cache's timeout).  The lifetime of an
entry is Django's: TIMEOUT and the timeout arguments (None for ever, 0 or
less: expired at once), so the table's default_ttl is not an option here.
Values are any picklable object, as Django's contract says: the Cache has
pickle=True, so what every language reads is stored by acorn's convention
and the rest pickled.

Every backend object with the same LOCATION and OPTIONS shares one
sqlite_acorn.Cache, which keeps one connection per thread; close(), which
Django calls at the end of each request, keeps them open.

acorn's SQL in Django's own database connections (uuid7() for a model, a
cache table of the project's database): load_acorn is a receiver of
django.db.backends.signals.connection_created that loads acorn into every
new SQLite connection and leaves the other vendors' alone.  Connect it by
listing the app config in settings.py,

    INSTALLED_APPS = [..., "sqlite_acorn.django.AcornConfig"]

or in an AppConfig.ready() of your own:

    connection_created.connect(sqlite_acorn.django.load_acorn)
"""

import threading

from django.apps import AppConfig
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.signals import connection_created

from . import load
from ._cache import _MAX_TTL, Cache

__all__ = ["AcornCache", "AcornConfig", "load_acorn"]


def load_acorn(sender, connection, **kwargs):
    """A receiver of connection_created: loads acorn into each new
    connection of Django's sqlite3 backend (connection.vendor 'sqlite');
    other vendors' connections are left as they are."""
    if connection.vendor == "sqlite":
        load(connection.connection)


class AcornConfig(AppConfig):
    """INSTALLED_APPS = [..., "sqlite_acorn.django.AcornConfig"]: acorn in
    every SQLite connection Django opens (load_acorn, connected at ready())."""
    name = "sqlite_acorn.django"
    label = "sqlite_acorn"
    verbose_name = "acorn"

    def ready(self):
        connection_created.connect(load_acorn, dispatch_uid="sqlite_acorn.django.load_acorn")

_OPTIONS = ("table", "capacity", "policy", "recency_buffer", "autoflush", "max_entries",
            "feed", "journal_mode", "synchronous", "busy_timeout", "MAX_ENTRIES")
_caches = {}
_caches_lock = threading.Lock()


def _shared_cache(location, options):
    opts = dict(options)
    if "MAX_ENTRIES" in opts:
        if "max_entries" in opts:
            raise ImproperlyConfigured("sqlite_acorn.django.AcornCache: OPTIONS gives both"
                                       " MAX_ENTRIES and max_entries; give one")
        opts["max_entries"] = opts.pop("MAX_ENTRIES")
    for name in opts:
        if name == "CULL_FREQUENCY":
            raise ImproperlyConfigured(
                "sqlite_acorn.django.AcornCache: CULL_FREQUENCY does not apply: acorn evicts"
                " the least recently used entries, exactly as many as it must")
        if name == "default_ttl":
            raise ImproperlyConfigured(
                "sqlite_acorn.django.AcornCache: default_ttl is not an option here: Django's"
                " TIMEOUT sets the default lifetime")
        if name not in _OPTIONS:
            raise ImproperlyConfigured(
                f"sqlite_acorn.django.AcornCache: unknown option {name!r}; accepted options are "
                + ", ".join(_OPTIONS))
    if not location:
        raise ImproperlyConfigured("sqlite_acorn.django.AcornCache: LOCATION must be the path"
                                   " of the SQLite file")
    ident = (location, tuple(sorted((k, repr(v)) for k, v in opts.items())))
    with _caches_lock:
        cache = _caches.get(ident)
        if cache is None:
            kw = dict(opts)
            kw.setdefault("table", "django_cache")
            if "busy_timeout" in kw:
                kw["timeout"] = kw.pop("busy_timeout")
            try:
                # Django's contract is any picklable value
                cache = Cache(location, pickle=True, **kw)
            except (TypeError, ValueError) as e:
                raise ImproperlyConfigured(f"sqlite_acorn.django.AcornCache: {e}") from None
            _caches[ident] = cache
    return cache


class AcornCache(BaseCache):
    """Django's cache API on sqlite_acorn.Cache (see the module's doc)."""

    def __init__(self, location, params):
        super().__init__(params)
        self._cache = _shared_cache(location, params.get("OPTIONS", {}))

    @property
    def cache(self):
        """The sqlite_acorn.Cache underneath (its stats(), evict(), memoize())."""
        return self._cache

    def _ttl(self, timeout):
        """Django's timeout as seconds for acorn's ttl."""
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        if timeout is None:
            return _MAX_TTL
        return min(max(timeout, 0), _MAX_TTL)

    def _key(self, key, version):
        key = self.make_key(key, version=version)
        self.validate_key(key)
        return key

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return self._cache.add(self._key(key, version), value, expire=self._ttl(timeout))
        except ValueError:
            return False                # larger than the capacity

    def get(self, key, default=None, version=None):
        return self._cache.get(self._key(key, version), default)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        k = self._key(key, version)
        try:
            self._cache.set(k, value, expire=self._ttl(timeout))
        except ValueError:
            # larger than the capacity: not stored, and the old value must
            # not be read in its place
            self._cache.delete(k)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._cache.touch(self._key(key, version), self._ttl(timeout))

    def delete(self, key, version=None):
        return self._cache.delete(self._key(key, version))

    def has_key(self, key, version=None):
        return self._key(key, version) in self._cache

    def incr(self, key, delta=1, version=None):
        try:
            return self._cache._apply(self._key(key, version), lambda v: v + delta)
        except KeyError:
            raise ValueError("Key '%s' not found" % key) from None

    def get_many(self, keys, version=None):
        made = {self._key(k, version): k for k in keys}
        return {made[k]: v for k, v in self._cache._get_many(list(made)).items()}

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        ttl = self._ttl(timeout)
        items = [(self._key(k, version), k, v) for k, v in data.items()]
        return self._cache._set_many(items, ttl)

    def delete_many(self, keys, version=None):
        self._cache._delete_many([self._key(k, version) for k in keys])

    def clear(self):
        self._cache.clear()

    def close(self, **kwargs):
        """Django calls this at the end of each request: the connections stay."""
