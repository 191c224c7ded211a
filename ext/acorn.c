/*
** acorn.c: the entry point of the acorn SQLite extension.
**
**   .load ./dist/acorn                     -- sqlite3 shell
**   SELECT load_extension('./dist/acorn');  -- SQL
**
** sqlite3_acorn_init registers every feature of acorn on the connection, in
** the order of aFeature[] below, and stops at the first failure.  The SQL it
** adds here, besides the features' own:
**
**   acorn_version()   TEXT  'v' || the VERSION file, e.g. 'v0.2.0'
**   acorn_debug()     TEXT  one "key: value" line each for version, commit,
**                           build date, compiler, compile flags, SQLite
**                           version of the headers and of the running
**                           library.
**
** acorn needs SQLite 3.38.0 or later at run time (sqlite3_vtab_in); loading
** into an older library fails with an error that says so.  Both functions
** take no arguments, are SQLITE_INNOCUOUS and deterministic.
*/
#define ACORN_API_OWNER
#include "acorn.h"
#include "sqlite-acorn.h"   /* the public declaration of sqlite3_acorn_init */
SQLITE_EXTENSION_INIT1

#include <stdarg.h>

#ifndef ACORN_VERSION
# define ACORN_VERSION "0.0.0-unknown"
#endif
#ifndef ACORN_COMMIT
# define ACORN_COMMIT "unknown"
#endif
#ifndef ACORN_BUILD_DATE
# define ACORN_BUILD_DATE "unknown"
#endif
#ifndef ACORN_CFLAGS
# define ACORN_CFLAGS "unknown"
#endif
#if defined(__clang__)
# define ACORN_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
# define ACORN_COMPILER "gcc " __VERSION__
#else
# define ACORN_COMPILER "unknown"
#endif

#define ACORN_MIN_SQLITE 3038000

void acorn_result_error(sqlite3_context *ctx, const char *zFmt, ...){
  va_list ap;
  char *zMsg;
  va_start(ap, zFmt);
  zMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zMsg==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error(ctx, zMsg, -1);
    sqlite3_free(zMsg);
  }
}

void acorn_vtab_error(sqlite3_vtab *pVtab, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(pVtab->zErrMsg);
  va_start(ap, zFmt);
  pVtab->zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

static void acornVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, "v" ACORN_VERSION, -1, SQLITE_STATIC);
}

static void acornDebugFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  char *z;
  (void)argc; (void)argv;
  z = sqlite3_mprintf(
    "version: v%s\n"
    "commit: %s\n"
    "date: %s\n"
    "compiler: %s\n"
    "cflags: %s\n"
    "sqlite headers: %s\n"
    "sqlite library: %s",
    ACORN_VERSION, ACORN_COMMIT, ACORN_BUILD_DATE, ACORN_COMPILER,
    ACORN_CFLAGS, SQLITE_VERSION, sqlite3_libversion());
  if( z==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_text(ctx, z, -1, sqlite3_free);
  }
}

static int acorn_meta_register(sqlite3 *db){
  static const struct {
    const char *zName;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aFunc[] = {
    { "acorn_version", acornVersionFunc },
    { "acorn_debug",   acornDebugFunc   },
  };
  int rc = SQLITE_OK;
  size_t i;
  for(i=0; i<sizeof(aFunc)/sizeof(aFunc[0]) && rc==SQLITE_OK; i++){
    rc = sqlite3_create_function(db, aFunc[i].zName, 0,
             SQLITE_UTF8|SQLITE_INNOCUOUS|SQLITE_DETERMINISTIC, 0,
             aFunc[i].xFunc, 0, 0);
  }
  return rc;
}

/* The registration table: one row per feature file. */
static const struct {
  const char *zName;
  int (*xRegister)(sqlite3*);
} aFeature[] = {
  { "acorn",        acorn_meta_register },
  { "uuid",         acorn_uuid_register },
  { "bench_insert", acorn_bench_insert_register },
  { "cache",        acorn_cache_register },
};

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_acorn_init(
  sqlite3 *db,
  char **pzErrMsg,
  const sqlite3_api_routines *pApi
){
  int rc = SQLITE_OK;
  size_t i;
  SQLITE_EXTENSION_INIT2(pApi);
  if( sqlite3_libversion_number()<ACORN_MIN_SQLITE ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf(
          "acorn: needs SQLite 3.38.0 or later, this is %s",
          sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  for(i=0; i<sizeof(aFeature)/sizeof(aFeature[0]) && rc==SQLITE_OK; i++){
    rc = aFeature[i].xRegister(db);
    if( rc!=SQLITE_OK && pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("acorn: cannot register %s: %s",
                                  aFeature[i].zName, sqlite3_errstr(rc));
    }
  }
  return rc;
}
