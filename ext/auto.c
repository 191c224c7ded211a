/*
** auto.c: dist/acorn-auto.so, a preload library that adds acorn to every
** connection of a program linked against the shared libsqlite3, without
** changing the program.
**
**   LD_PRELOAD=/path/to/acorn-auto.so sqlite3 :memory: 'SELECT uuid7()'
**   LD_PRELOAD=/path/to/acorn-auto.so /usr/bin/python3 app.py
**
** acorn.so must sit in the same directory as acorn-auto.so (after symbolic
** links are followed): `make` puts both in dist/, `make install` both in
** $(PREFIX)/lib.  This file is not part of acorn.so (the Makefile builds it
** alone) and does not include acorn.h: it is a client of SQLite's public
** API, linked against libsqlite3.
**
** WHAT IT DOES
**
**   It defines sqlite3_open, sqlite3_open16 and sqlite3_open_v2.  Preloaded,
**   these come first in the process's symbol search order, so the program's
**   calls (and those of its libraries: Python's _sqlite3 module, libdqlite)
**   reach them instead of libsqlite3's.  The first call, from any thread:
**     1. dlopen()s acorn.so from this library's directory and looks up
**        sqlite3_acorn_init in it;
**     2. registers it with sqlite3_auto_extension(), so SQLite calls it on
**        every connection opened from then on, this one included;
**   then every call goes on to libsqlite3's function of the same name,
**   found with dlsym(RTLD_NEXT).
**
**   Nothing happens before the first open: no constructor touches SQLite.
**   sqlite3_auto_extension() initialises SQLite, after which sqlite3_config()
**   fails with SQLITE_MISUSE; programs that configure SQLite before they
**   open a database (go-dqlite sets single-thread mode, and panics if that
**   fails) keep working.  The one constructor only records this file's
**   absolute path, since LD_PRELOAD may name it relative to a directory the
**   program leaves before its first open.
**
**   Registration happens once per process, under a mutex.  If it cannot be
**   done (acorn.so missing or not loadable, no sqlite3_acorn_init in it),
**   an entry point that fails is registered instead, so every open fails
**   with "acorn-auto: cannot load acorn: <dlerror()'s reason>" rather than
**   giving connections without acorn.  If sqlite3_auto_extension() itself
**   fails (out of memory, or SQLite's initialisation failed), that open
**   returns its error code with *ppDb set to NULL and the next open tries
**   again.
**
** WHY IT LOADS acorn.so INSTEAD OF CONTAINING ACORN
**
**   - One copy of acorn per process: a program that also loads acorn.so
**     itself (`.load`, load_extension()) gets the same mapped library
**     (dlopen matches it by file), so uuid7() and uuid8() stay one strictly
**     increasing sequence per process and the cache's registry is one list.
**     A second, statically built copy would have its own of each.
**   - acorn calls SQLite through the API table of the library that opens
**     the connection, as when loaded with .load: the binary the suites test
**     is the binary that runs, and its guards against calling a function the
**     running SQLite lacks stay in force.
**   - acorn-auto.so stays a few functions with no copy of acorn to keep in
**     step.
**
** WHY IT LINKS libsqlite3
**
**   Python loads libsqlite3 as a dependency of a module it dlopen()s with
**   RTLD_LOCAL, outside the global symbol scope: neither this library's own
**   calls (sqlite3_auto_extension) nor dlsym(RTLD_NEXT) would find it there.
**   Linked against libsqlite3, acorn-auto.so brings it into that scope at
**   start-up (the module then shares that copy).  The cost is that every
**   preloaded process maps libsqlite3, used or not; it does nothing until
**   called.
**
** LIMITS
**
**   A program with SQLite compiled in (the amalgamation linked statically:
**   most Go drivers' default builds, better-sqlite3, many static binaries)
**   calls its own copy directly: nothing here reaches it.  Link
**   dist/libacorn.a into such a program and call
**   sqlite3_auto_extension((void(*)(void))sqlite3_acorn_init) before it
**   opens a database.  Connections opened through a function this library
**   does not define, before any open through one it does, do not get acorn.
*/
#define _GNU_SOURCE
#include <sqlite3.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_EXPORT __attribute__((visibility("default")))

typedef int (*auto_init_fn)(sqlite3*, char**, const sqlite3_api_routines*);

/* Absolute path of acorn.so, from the constructor; empty if unknown. */
static char zAutoAcorn[PATH_MAX];
/* Why acorn.so could not be loaded, for autoFailInit. */
static char zAutoError[PATH_MAX + 256];

static pthread_mutex_t autoMutex = PTHREAD_MUTEX_INITIALIZER;
static int bAutoDone = 0;        /* registration done; read with acquire */

/*
** Record where acorn.so is: the directory of this library's real path.
** Runs at load time in every preloaded process, so it does no more than
** that, and nothing with SQLite.
*/
__attribute__((constructor)) static void autoFindAcorn(void){
  Dl_info info;
  char *zSelf;
  char *zSlash;
  if( dladdr((void*)autoFindAcorn, &info)==0 || info.dli_fname==0 ) return;
  zSelf = realpath(info.dli_fname, 0);
  if( zSelf==0 ) return;
  zSlash = strrchr(zSelf, '/');
  if( zSlash && (size_t)(zSlash - zSelf) + sizeof("/acorn.so") <= sizeof(zAutoAcorn) ){
    memcpy(zAutoAcorn, zSelf, (size_t)(zSlash - zSelf));
    memcpy(zAutoAcorn + (zSlash - zSelf), "/acorn.so", sizeof("/acorn.so"));
  }
  free(zSelf);
}

/* The entry point registered when acorn.so cannot be loaded. */
static int autoFailInit(
  sqlite3 *db,
  char **pzErrMsg,
  const sqlite3_api_routines *pApi
){
  (void)db; (void)pApi;
  *pzErrMsg = sqlite3_mprintf("%s", zAutoError);
  return SQLITE_ERROR;
}

/*
** Load acorn.so and return its entry point, or autoFailInit with
** zAutoError set to the reason.
*/
static auto_init_fn autoLoadAcorn(void){
  void *pLib;
  auto_init_fn xInit;
  const char *zWhy;
  if( zAutoAcorn[0]==0 ){
    snprintf(zAutoError, sizeof(zAutoError),
        "acorn-auto: cannot find the directory of acorn-auto.so");
    return autoFailInit;
  }
  pLib = dlopen(zAutoAcorn, RTLD_NOW|RTLD_LOCAL);
  if( pLib==0 ){
    zWhy = dlerror();
    snprintf(zAutoError, sizeof(zAutoError),
        "acorn-auto: cannot load acorn: %s", zWhy ? zWhy : zAutoAcorn);
    return autoFailInit;
  }
  xInit = (auto_init_fn)dlsym(pLib, "sqlite3_acorn_init");
  if( xInit==0 ){
    snprintf(zAutoError, sizeof(zAutoError),
        "acorn-auto: no sqlite3_acorn_init in %s", zAutoAcorn);
    dlclose(pLib);
    return autoFailInit;
  }
  return xInit;
}

/*
** Register acorn as an automatic extension, once per process.  Returns
** SQLITE_OK, or sqlite3_auto_extension()'s error (then the next call tries
** again).
*/
static int autoRegister(void){
  static auto_init_fn xInit = 0;
  int rc = SQLITE_OK;
  if( __atomic_load_n(&bAutoDone, __ATOMIC_ACQUIRE) ) return SQLITE_OK;
  pthread_mutex_lock(&autoMutex);
  if( !bAutoDone ){
    if( xInit==0 ) xInit = autoLoadAcorn();
    rc = sqlite3_auto_extension((void(*)(void))xInit);
    if( rc==SQLITE_OK ) __atomic_store_n(&bAutoDone, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&autoMutex);
  return rc;
}

/*
** The next definition of zName after this library's: libsqlite3's.  The
** lookup is cached in *pp (a data race between threads that store the same
** value is avoided with atomics).
*/
static void *autoReal(void **pp, const char *zName){
  void *p = __atomic_load_n(pp, __ATOMIC_ACQUIRE);
  if( p==0 ){
    p = dlsym(RTLD_NEXT, zName);
    __atomic_store_n(pp, p, __ATOMIC_RELEASE);
  }
  return p;
}

/*
** Shared by the three opens: register, then find the real function.  On
** failure sets *ppDb to NULL and returns the error code for the open to
** return.
*/
static int autoBeforeOpen(void **pp, const char *zName, void **pxReal, sqlite3 **ppDb){
  int rc = autoRegister();
  if( rc==SQLITE_OK ){
    *pxReal = autoReal(pp, zName);
    if( *pxReal==0 ) rc = SQLITE_ERROR;  /* libsqlite3 absent: cannot be */
  }
  if( rc!=SQLITE_OK && ppDb ) *ppDb = 0;
  return rc;
}

AUTO_EXPORT int sqlite3_open(const char *zFilename, sqlite3 **ppDb){
  static void *pReal = 0;
  void *xReal = 0;
  int rc = autoBeforeOpen(&pReal, "sqlite3_open", &xReal, ppDb);
  if( rc!=SQLITE_OK ) return rc;
  return ((int(*)(const char*, sqlite3**))xReal)(zFilename, ppDb);
}

AUTO_EXPORT int sqlite3_open16(const void *zFilename, sqlite3 **ppDb){
  static void *pReal = 0;
  void *xReal = 0;
  int rc = autoBeforeOpen(&pReal, "sqlite3_open16", &xReal, ppDb);
  if( rc!=SQLITE_OK ) return rc;
  return ((int(*)(const void*, sqlite3**))xReal)(zFilename, ppDb);
}

AUTO_EXPORT int sqlite3_open_v2(
  const char *zFilename,
  sqlite3 **ppDb,
  int flags,
  const char *zVfs
){
  static void *pReal = 0;
  void *xReal = 0;
  int rc = autoBeforeOpen(&pReal, "sqlite3_open_v2", &xReal, ppDb);
  if( rc!=SQLITE_OK ) return rc;
  return ((int(*)(const char*, sqlite3**, int, const char*))xReal)(
      zFilename, ppDb, flags, zVfs);
}
