/*
** sqlite-acorn.h: the public interface of the acorn SQLite extension.
**
** A program that loads acorn at run time (.load ./dist/acorn in the shell,
** sqlite3_load_extension(db, "./dist/acorn", 0, &zErr) in C) needs no
** header.  A program that links the static library instead (make static
** builds dist/libacorn.a with -DSQLITE_CORE; make install puts this header
** in $(PREFIX)/include) registers acorn itself, on every connection opened
** from then on:
**
**   #include <sqlite3.h>
**   #include "sqlite-acorn.h"
**
**   sqlite3_auto_extension((void(*)(void))sqlite3_acorn_init);
**
** or on one open connection:
**
**   char *zErr = 0;
**   if( sqlite3_acorn_init(db, &zErr, 0)!=SQLITE_OK ){
**     fprintf(stderr, "%s\n", zErr);
**     sqlite3_free(zErr);
**   }
**
** and links it before SQLite:
**
**   cc app.c dist/libacorn.a -lsqlite3 -lpthread -lm
**
** sqlite3_acorn_init(db, pzErrMsg, pApi) adds acorn's functions and
** modules (uuid4 ... uuid_timestamp, cache, cache_read, cache_stats,
** bench_insert, acorn_version, acorn_debug) to db and returns SQLITE_OK.
** On failure (a SQLite older than 3.38.0, or out of memory) it returns an
** error code and, if pzErrMsg is not NULL, sets *pzErrMsg to a message that
** the caller frees with sqlite3_free().  pApi is the API table SQLite passes
** to a loadable extension; a program calling it directly passes 0.
*/
#ifndef SQLITE_ACORN_H
#define SQLITE_ACORN_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

int sqlite3_acorn_init(sqlite3 *db, char **pzErrMsg,
                       const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* SQLITE_ACORN_H */
