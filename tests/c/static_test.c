/*
** static_test.c: proves dist/libacorn.a (built with -DSQLITE_CORE) links
** into a program that links SQLite itself, and works there, declared by the
** public header ext/sqlite-acorn.h.
**
**   cc -Iext tests/c/static_test.c dist/libacorn.a -lsqlite3 -lpthread -lm
**   build/static_test   -> prints "static: ok <uuid7> <version>" and
**                          "static: ok through sqlite3_auto_extension", exit 0
*/
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "sqlite-acorn.h"

int main(void){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  char *zErr = 0;
  int rc, ok = 0;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) return 1;
  rc = sqlite3_acorn_init(db, &zErr, 0);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "static: init failed: %s\n", zErr ? zErr : "?");
    sqlite3_free(zErr);
    sqlite3_close(db);
    return 1;
  }
  rc = sqlite3_prepare_v2(db,
      "SELECT uuid7(), uuid_version(uuid7()), acorn_version()", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zId = (const char*)sqlite3_column_text(pStmt, 0);
    if( zId && strlen(zId)==36 && sqlite3_column_int(pStmt, 1)==7 ){
      printf("static: ok %s %s\n", zId, sqlite3_column_text(pStmt, 2));
      ok = 1;
    }
  }
  if( !ok ) fprintf(stderr, "static: query failed: %s\n", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  if( !ok ) return 1;

  /* The documented way to add acorn to every connection opened later. */
  ok = 0;
  pStmt = 0;
  if( sqlite3_auto_extension((void(*)(void))sqlite3_acorn_init)!=SQLITE_OK ){
    fprintf(stderr, "static: sqlite3_auto_extension failed\n");
    return 1;
  }
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) return 1;
  rc = sqlite3_prepare_v2(db, "SELECT uuid_version(uuid8())", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_int(pStmt, 0)==8 ){
    printf("static: ok through sqlite3_auto_extension\n");
    ok = 1;
  }
  if( !ok ) fprintf(stderr, "static: auto extension: %s\n", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  sqlite3_reset_auto_extension();
  return ok ? 0 : 1;
}
