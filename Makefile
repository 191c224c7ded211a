# acorn: a loadable SQLite extension.  `make help` lists the targets.

VERSION   := $(shell cat VERSION)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PREFIX    ?= /usr/local
SQLITE3   ?= sqlite3

CC        ?= cc
CFLAGS    ?= -O2
WARN      = -Wall -Wextra
EXTRA_CFLAGS ?=
LDFLAGS   ?=
ALL_CFLAGS = $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' \
  -DACORN_BUILD_DATE='"$(DATE)"' -DACORN_CFLAGS='"$(CFLAGS) $(WARN) $(EXTRA_CFLAGS)"'
LDLIBS    = -lpthread -lm
# -z nodelete: the library stays mapped after the last connection that loaded
# it closes, so the uuid7/uuid8 sequences (process-wide words) survive an
# unload and a later load instead of starting again from zero.
SO_LDFLAGS = -shared -Wl,-z,nodelete $(LDFLAGS)

SRC       := $(wildcard ext/*.c)
HDR       := $(wildcard ext/*.h)
STATIC_OBJ:= $(patsubst ext/%.c,build/static/%.o,$(SRC))

SAN_FLAGS  = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_LIBS  = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)

.PHONY: all loadable static install uninstall clean deps deps-test demo test \
        test-long test-matrix test-asan memcheck test-bindings bench help

all: loadable
loadable: dist/acorn.so

help:
	@echo "make            build dist/acorn.so"
	@echo "make demo       build and run sql/demo.sql in the sqlite3 shell"
	@echo "make test       build (warnings are errors) and run every bats suite"
	@echo "make test-long  the long runs (tests/long/*.bats)"
	@echo "make test-matrix  every suite against SQLite 3.38.2 and 3.52.0 (built here)"
	@echo "make test-asan  the suites with an ASan+UBSan build loaded"
	@echo "make memcheck   the suites' SQL under valgrind"
	@echo "make test-bindings  load from the CLI, Python, Node and Go"
	@echo "make bench      run bench/*.sh"
	@echo "make static     dist/libacorn.a (-DSQLITE_CORE) and its link test"
	@echo "make install PREFIX=/usr/local   install lib/acorn.so"

dist/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

build/static/%.o: ext/%.c $(HDR) VERSION Makefile
	@mkdir -p build/static
	$(CC) $(ALL_CFLAGS) -DSQLITE_CORE -c -o $@ $<

dist/libacorn.a: $(STATIC_OBJ)
	@mkdir -p dist
	rm -f $@
	ar rcs $@ $(STATIC_OBJ)

build/static_test: tests/c/static_test.c dist/libacorn.a
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -o $@ $< dist/libacorn.a -lsqlite3 $(LDLIBS)

static: dist/libacorn.a build/static_test
	./build/static_test

install: dist/acorn.so
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 0755 dist/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn.so

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/acorn.so

clean:
	rm -rf dist build

# `make demo` and `make test` first install what a fresh Debian lacks.
deps:
	@tests/install-deps build
deps-test:
	@tests/install-deps test

demo: deps
	$(MAKE) --no-print-directory dist/acorn.so
	$(SQLITE3) -batch :memory: < sql/demo.sql

# The C test programs used by the bats suites (threads, fork, an injected
# clock, the random source's known answers).
build/uuid_proc: tests/c/uuid_proc.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

build/uuid_clock: tests/c/uuid_clock.c $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE -DACORN_TESTING -Iext -o $@ $< $(SRC) -lsqlite3 $(LDLIBS)

build/chacha_kat: tests/c/chacha_kat.c ext/random.c $(HDR)
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE -DACORN_TESTING -Iext -o $@ $< ext/random.c -lsqlite3 $(LDLIBS)

TEST_BINS = build/static_test build/uuid_proc build/uuid_clock build/chacha_kat

# `make test`: a warning-free build, then every suite.
test: deps-test
	$(MAKE) --no-print-directory -B dist/acorn.so $(TEST_BINS) EXTRA_CFLAGS=-Werror
	$(MAKE) --no-print-directory static
	@echo "make test: $(SQLITE3) is SQLite $$($(SQLITE3) --version | cut -d' ' -f1)"
	tests/run-bats tests/*.bats

# `make test-long`: the runs too long for `make test` (CI runs both).
test-long: deps-test
	$(MAKE) --no-print-directory dist/acorn.so $(TEST_BINS)
	@echo "make test-long: $(SQLITE3) is SQLite $$($(SQLITE3) --version | cut -d' ' -f1)"
	tests/run-bats tests/long/*.bats

dist/asan/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist/asan
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

test-asan: dist/asan/acorn.so $(TEST_BINS)
	ACORN=$(CURDIR)/dist/asan/acorn ACORN_PRELOAD="$(ASAN_LIBS)" \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  tests/run-bats tests/*.bats

# `make test-matrix`: every suite against SQLite versions other than the
# system's.  Each is built here from the autoconf tarball that a release of
# the npm package sqlite3 carries (npm pack fetches it and runs nothing),
# once: build/sqlite/<version>/ holds its sources, libsqlite3.so.0 and a
# sqlite3 shell linked to that library.  The options are those SQLite's own
# ./configure gives a user: thread-safe, extension loading on, math
# functions, FTS4, FTS5, R-Tree and Geopoly, plus what the shell adds
# (explain comments, dbstat, dbpage and stmt tables).  acorn and the C test
# programs are compiled against each version's headers into
# build/matrix/<version>/; tests/run-matrix runs the suites with them, and
# again with dist/acorn.so (the system's headers) loaded into that library.
MATRIX_SQLITE = 3.38.2 3.52.0
NPM_SQLITE3_3.38.2 = 5.0.3
NPM_SQLITE3_3.52.0 = 6.0.1
SQLITE_CFLAGS = -O2
SQLITE_OPTS = -DSQLITE_THREADSAFE=1 -D_REENTRANT=1 -DSQLITE_ENABLE_MATH_FUNCTIONS \
  -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_GEOPOLY \
  -DSQLITE_ENABLE_EXPLAIN_COMMENTS -DSQLITE_ENABLE_DBPAGE_VTAB -DSQLITE_ENABLE_STMTVTAB \
  -DSQLITE_ENABLE_DBSTAT_VTAB
# the suites of make test; MATRIX_SUITES='tests/*.bats tests/long/*.bats'
# adds the long runs (four times their time)
MATRIX_SUITES ?= tests/*.bats
# in a recipe whose stem $* is the version: its headers and its library
MATRIX_INC  = -Ibuild/sqlite/$*
MATRIX_LINK = -Lbuild/sqlite/$* -Wl,-rpath,$(CURDIR)/build/sqlite/$* -lsqlite3
MATRIX_BINS = $(foreach v,$(MATRIX_SQLITE),build/sqlite/$v/sqlite3 \
  $(addprefix build/matrix/$v/,acorn.so static_test uuid_proc uuid_clock chacha_kat))

# kept: make would delete them as intermediate files of the chain
.PRECIOUS: build/sqlite/%/sqlite3.c build/sqlite/%/libsqlite3.so.0 build/matrix/%/libacorn.a

build/sqlite/%/sqlite3.c:
	@test -n "$(NPM_SQLITE3_$*)" || { echo "no npm package known for SQLite $*"; exit 1; }
	@command -v npm >/dev/null || { echo "the SQLite matrix needs npm (tests/install-deps bindings)"; exit 1; }
	rm -rf build/sqlite/$*/npm
	mkdir -p build/sqlite/$*/npm
	cd build/sqlite/$*/npm && npm pack --silent sqlite3@$(NPM_SQLITE3_$*) >/dev/null
	tar -xzf build/sqlite/$*/npm/sqlite3-$(NPM_SQLITE3_$*).tgz -C build/sqlite/$*/npm \
	  --wildcards 'package/deps/sqlite-autoconf-*.tar.gz'
	tar -xzf build/sqlite/$*/npm/package/deps/sqlite-autoconf-*.tar.gz -C build/sqlite/$* --no-same-owner \
	  --strip-components=1 --wildcards $(addprefix '*/,$(addsuffix ',sqlite3.c sqlite3.h sqlite3ext.h shell.c))
	grep -q '^#define SQLITE_VERSION  *"$*"' build/sqlite/$*/sqlite3.h \
	  || { echo "sqlite3@$(NPM_SQLITE3_$*) does not carry SQLite $*"; exit 1; }
	rm -rf build/sqlite/$*/npm
	touch $@

build/sqlite/%/libsqlite3.so.0: build/sqlite/%/sqlite3.c
	$(CC) $(SQLITE_CFLAGS) $(SQLITE_OPTS) -fPIC -shared -Wl,-soname,libsqlite3.so.0 \
	  -o $@ $< -lpthread -ldl -lm
	ln -sf libsqlite3.so.0 build/sqlite/$*/libsqlite3.so

build/sqlite/%/sqlite3: build/sqlite/%/libsqlite3.so.0
	$(CC) $(SQLITE_CFLAGS) $(SQLITE_OPTS) $(MATRIX_INC) -o $@ build/sqlite/$*/shell.c \
	  $(MATRIX_LINK) -lpthread -ldl -lm

build/matrix/%/acorn.so: $(SRC) $(HDR) VERSION Makefile build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MATRIX_INC) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

build/matrix/%/libacorn.a: $(SRC) $(HDR) VERSION Makefile build/sqlite/%/libsqlite3.so.0
	rm -rf $(@D)/static $@
	mkdir -p $(@D)/static
	for f in $(SRC); do \
	  $(CC) $(ALL_CFLAGS) $(MATRIX_INC) -DSQLITE_CORE -c -o $(@D)/static/$$(basename $$f .c).o $$f \
	    || exit 1; \
	done
	ar rcs $@ $(@D)/static/*.o

build/matrix/%/static_test: tests/c/static_test.c build/matrix/%/libacorn.a
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(MATRIX_INC) $(LDFLAGS) -o $@ $< \
	  build/matrix/$*/libacorn.a $(MATRIX_LINK) $(LDLIBS)

build/matrix/%/uuid_proc: tests/c/uuid_proc.c build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(MATRIX_INC) $(LDFLAGS) -o $@ $< $(MATRIX_LINK) $(LDLIBS)

build/matrix/%/uuid_clock: tests/c/uuid_clock.c $(SRC) $(HDR) build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(MATRIX_INC) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE \
	  -DACORN_TESTING -Iext -o $@ $< $(SRC) $(MATRIX_LINK) $(LDLIBS)

build/matrix/%/chacha_kat: tests/c/chacha_kat.c ext/random.c $(HDR) build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(MATRIX_INC) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE \
	  -DACORN_TESTING -Iext -o $@ $< ext/random.c $(MATRIX_LINK) $(LDLIBS)

test-matrix: deps-test
	$(MAKE) --no-print-directory dist/acorn.so $(TEST_BINS) $(MATRIX_BINS) EXTRA_CFLAGS=-Werror
	tests/run-matrix $(MATRIX_SQLITE) -- $(MATRIX_SUITES)

memcheck: dist/acorn.so $(TEST_BINS)
	ACORN_VALGRIND=1 ACORN_SCALE=20 tests/run-bats tests/*.bats

test-bindings: dist/acorn.so
	tests/bindings/run

bench: dist/acorn.so
	@for b in bench/*.sh; do echo "== $$b"; bash $$b || exit 1; done

# bench_insert's yardstick: one run of the same workload in plain C
# (bench/insert.sh builds and runs it).
build/ref_insert: bench/ref_insert.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the benchmark program behind bench/cache.sh.
build/cache_bench: bench/cache_bench.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)
