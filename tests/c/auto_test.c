/*
** auto_test.c: a program linked against libsqlite3 that knows nothing of
** acorn, for tests/auto.bats to run with dist/acorn-auto.so preloaded.
**
**   build/auto_test config        sqlite3_config(SQLITE_CONFIG_MULTITHREAD)
**                                 before the first open, as go-dqlite does,
**                                 then one connection
**   build/auto_test open|open16|open_v2
**                                 the first connection through that function
**   build/auto_test threads T K   T threads, released together, each opening
**                                 K connections (through the three functions
**                                 in turn)
**
** Every connection runs SELECT uuid_version(uuid7()) and must get 7.  The
** program defines sqlite3_auto_extension itself (exported with -rdynamic),
** so the preload library's call reaches this definition first: it counts
** the calls and passes them on to libsqlite3.  On success it prints
**   <mode>: N connections with acorn, R registrations
** and exits 0; otherwise it prints what failed and exits 1.
*/
#define _GNU_SOURCE
#include <sqlite3.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nRegister = 0;     /* calls of sqlite3_auto_extension */

int sqlite3_auto_extension(void (*xInit)(void)){
  int (*xReal)(void(*)(void));
  __atomic_add_fetch(&nRegister, 1, __ATOMIC_SEQ_CST);
  xReal = (int(*)(void(*)(void)))dlsym(RTLD_NEXT, "sqlite3_auto_extension");
  if( xReal==0 ) return SQLITE_ERROR;
  return xReal(xInit);
}

/* Open ":memory:" through function iHow (0 open, 1 open16, 2 open_v2),
** check that acorn is there, close.  0 on success, else prints why. */
static int openAndCheck(int iHow){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  int rc, ok = 0;
  if( iHow==0 ){
    rc = sqlite3_open(":memory:", &db);
  }else if( iHow==1 ){
    static const unsigned short aName[] = {':','m','e','m','o','r','y',':',0};
    rc = sqlite3_open16(aName, &db);
  }else{
    rc = sqlite3_open_v2(":memory:", &db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  }
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "open failed: %s\n", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return 1;
  }
  rc = sqlite3_prepare_v2(db, "SELECT uuid_version(uuid7())", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_int(pStmt, 0)==7 ){
    ok = 1;
  }else{
    fprintf(stderr, "no acorn on this connection: %s\n", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  return ok ? 0 : 1;
}

typedef struct thread_arg {
  pthread_barrier_t *pGate;
  int nConn;
  int iFirst;
  int nFail;
} thread_arg;

static void *threadMain(void *pArg){
  thread_arg *p = (thread_arg*)pArg;
  int i;
  pthread_barrier_wait(p->pGate);
  for(i=0; i<p->nConn; i++) p->nFail += openAndCheck((p->iFirst + i) % 3);
  return 0;
}

static int runThreads(int nThread, int nConn){
  pthread_barrier_t gate;
  pthread_t aTid[64];
  thread_arg aArg[64];
  int i, nFail = 0;
  if( nThread<1 || nThread>64 || nConn<1 ){
    fprintf(stderr, "threads: T in 1..64 and K >= 1\n");
    return 1;
  }
  pthread_barrier_init(&gate, 0, (unsigned)nThread);
  for(i=0; i<nThread; i++){
    aArg[i].pGate = &gate;
    aArg[i].nConn = nConn;
    aArg[i].iFirst = i;
    aArg[i].nFail = 0;
    if( pthread_create(&aTid[i], 0, threadMain, &aArg[i]) ){
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  for(i=0; i<nThread; i++){
    pthread_join(aTid[i], 0);
    nFail += aArg[i].nFail;
  }
  pthread_barrier_destroy(&gate);
  if( nFail ) return 1;
  printf("threads: %d connections with acorn, %d registrations\n",
         nThread*nConn, nRegister);
  return 0;
}

int main(int argc, char **argv){
  const char *zMode = argc>1 ? argv[1] : "";
  if( strcmp(zMode, "config")==0 ){
    int rc = sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    if( rc!=SQLITE_OK ){
      fprintf(stderr, "sqlite3_config failed: %s\n", sqlite3_errstr(rc));
      return 1;
    }
    if( openAndCheck(2) ) return 1;
  }else if( strcmp(zMode, "open")==0 ){
    if( openAndCheck(0) ) return 1;
  }else if( strcmp(zMode, "open16")==0 ){
    if( openAndCheck(1) ) return 1;
  }else if( strcmp(zMode, "open_v2")==0 ){
    if( openAndCheck(2) ) return 1;
  }else if( strcmp(zMode, "threads")==0 && argc==4 ){
    return runThreads(atoi(argv[2]), atoi(argv[3]));
  }else{
    fprintf(stderr, "usage: auto_test config|open|open16|open_v2|threads T K\n");
    return 2;
  }
  printf("%s: 1 connections with acorn, %d registrations\n", zMode, nRegister);
  return 0;
}
