/*
** auto_static.c: acorn on every connection without the preload library, for
** programs that build SQLite in or cannot use LD_PRELOAD: link
** dist/libacorn.a (make static) and register its entry point with
** sqlite3_auto_extension() before the first open.  docs/cluster.md shows
** this program.
**
**   build/auto_static   -> "auto_static: 3 connections with acorn", exit 0
*/
#include <sqlite3.h>
#include <stdio.h>

int sqlite3_acorn_init(sqlite3*, char**, const sqlite3_api_routines*);

int main(void){
  int i, n = 0;
  int rc = sqlite3_auto_extension((void(*)(void))sqlite3_acorn_init);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "auto_static: sqlite3_auto_extension: %s\n", sqlite3_errstr(rc));
    return 1;
  }
  for(i=0; i<3; i++){
    sqlite3 *db = 0;
    sqlite3_stmt *pStmt = 0;
    if( sqlite3_open(":memory:", &db)==SQLITE_OK
     && sqlite3_prepare_v2(db, "SELECT uuid_version(uuid7())", -1, &pStmt, 0)==SQLITE_OK
     && sqlite3_step(pStmt)==SQLITE_ROW
     && sqlite3_column_int(pStmt, 0)==7 ){
      n++;
    }else{
      fprintf(stderr, "auto_static: %s\n", db ? sqlite3_errmsg(db) : "out of memory");
    }
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
  }
  printf("auto_static: %d connections with acorn\n", n);
  return n==3 ? 0 : 1;
}
