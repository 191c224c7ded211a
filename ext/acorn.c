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
**   acorn_version()   TEXT  'v' || the VERSION file, e.g. 'v0.3.0'
**   acorn_debug()     TEXT  one "key: value" line each for version, commit,
**                           build date, compiler, compile flags, SQLite
**                           version of the headers and of the running
**                           library.
**
** acorn needs SQLite 3.38.0 or later at run time (sqlite3_vtab_in); loading
** into an older library fails with an error that says so.  Both functions
** take no arguments, are SQLITE_INNOCUOUS and deterministic.
**
** Loading acorn again on a connection that has it (from SQL or .load, in
** any order) returns success and changes nothing.  Registering everything
** again would fail inside SELECT load_extension(...): SQLite refuses to
** replace a function while a statement runs on the connection ("unable to
** delete/modify user-function due to active statements"); outside a
** statement it would replace the modules under the tables that use them.
** So acorn keeps a list of the connections it is registered on.
** acorn_version() is registered last, with the connection's list node as
** its user data; SQLite destroys that registration when the connection
** closes (or when someone replaces the function), and the destructor takes
** the connection off the list, so a later load there registers again.
*/
#define ACORN_API_OWNER
#include "acorn.h"
#include "sqlite-acorn.h"   /* the public declaration of sqlite3_acorn_init */
SQLITE_EXTENSION_INIT1

#include <pthread.h>
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

void acorn_vtab_error_take(sqlite3_vtab *pVtab, char *zErr){
  if( zErr==0 ) return;
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zErr;
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

/* acorn_version() is registered by acornMarkLoaded, last. */
static int acorn_meta_register(sqlite3 *db){
  return sqlite3_create_function(db, "acorn_debug", 0,
             SQLITE_UTF8|SQLITE_INNOCUOUS|SQLITE_DETERMINISTIC, 0,
             acornDebugFunc, 0, 0);
}

/* The connections acorn is registered on (see the header comment). */
typedef struct acorn_conn acorn_conn;
struct acorn_conn {
  sqlite3 *db;
  acorn_conn *pNext;
};
static acorn_conn *gConnList = 0;
static pthread_mutex_t gConnMutex = PTHREAD_MUTEX_INITIALIZER;

static int acornIsLoaded(sqlite3 *db){
  acorn_conn *p;
  pthread_mutex_lock(&gConnMutex);
  for(p=gConnList; p && p->db!=db; p=p->pNext){}
  pthread_mutex_unlock(&gConnMutex);
  return p!=0;
}

/* The destructor of acorn_version's registration: off the list (if it got
** on it), then freed. */
static void acornConnDestroy(void *pArg){
  acorn_conn *pConn = (acorn_conn*)pArg;
  acorn_conn **pp;
  pthread_mutex_lock(&gConnMutex);
  for(pp=&gConnList; *pp; pp=&(*pp)->pNext){
    if( *pp==pConn ){
      *pp = pConn->pNext;
      break;
    }
  }
  pthread_mutex_unlock(&gConnMutex);
  sqlite3_free(pConn);
}

/* Register acorn_version() with a new list node for db, and put the node
** on the list.  If the registration fails, SQLite has already called
** acornConnDestroy on the node. */
static int acornMarkLoaded(sqlite3 *db){
  acorn_conn *pConn = sqlite3_malloc(sizeof(*pConn));
  int rc;
  if( pConn==0 ) return SQLITE_NOMEM;
  pConn->db = db;
  pConn->pNext = 0;
  rc = sqlite3_create_function_v2(db, "acorn_version", 0,
           SQLITE_UTF8|SQLITE_INNOCUOUS|SQLITE_DETERMINISTIC, pConn,
           acornVersionFunc, 0, 0, acornConnDestroy);
  if( rc==SQLITE_OK ){
    pthread_mutex_lock(&gConnMutex);
    pConn->pNext = gConnList;
    gConnList = pConn;
    pthread_mutex_unlock(&gConnMutex);
  }
  return rc;
}

/* What a failed registration says: the connection's message, or the result
** code's own where SQLite left none (out of memory in sqlite3_create_*()
** sets no message before 3.40: "not an error"). */
static const char *acornRegisterError(sqlite3 *db, int rc){
  if( sqlite3_errcode(db)!=rc ) return sqlite3_errstr(rc);
  return sqlite3_errmsg(db);
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

__attribute__((visibility("default")))
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
  if( acornIsLoaded(db) ) return SQLITE_OK;
  for(i=0; i<sizeof(aFeature)/sizeof(aFeature[0]) && rc==SQLITE_OK; i++){
    rc = aFeature[i].xRegister(db);
    if( rc!=SQLITE_OK && pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("acorn: cannot register %s: %s",
                                  aFeature[i].zName, acornRegisterError(db, rc));
    }
  }
  if( rc==SQLITE_OK ){
    rc = acornMarkLoaded(db);
    if( rc!=SQLITE_OK && pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("acorn: cannot register acorn_version: %s",
                                  acornRegisterError(db, rc));
    }
  }
  return rc;
}
