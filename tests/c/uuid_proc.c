/*
** uuid_proc.c: the uuid tests that need threads or processes.
**
**   build/uuid_proc threads EXT N   4 threads, each on its own connection
**                                   with EXT loaded, make N uuid7_blob(),
**                                   N uuid8_blob() and N uuid4_blob() each;
**                                   checks each thread's v7 and v8 sequence
**                                   is strictly increasing and that no value
**                                   repeats across all threads.
**   build/uuid_proc fork EXT        makes ids in the parent (seeding its
**                                   generator), forks, and checks that the
**                                   next ids of parent and child differ.
**
** Prints "ok ..." and exits 0, or prints what failed and exits 1.
*/
#include <sqlite3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREAD 4
#define NKIND   3
static const char *azKind[NKIND] = { "uuid7_blob()", "uuid8_blob()", "uuid4_blob()" };

typedef struct worker worker;
struct worker {
  const char *zExt;
  int n;
  unsigned char *aId[NKIND];   /* n*16 bytes per kind */
  char zErr[256];
};

static sqlite3 *openWithAcorn(const char *zExt, char *zErr, size_t nErr){
  sqlite3 *db = 0;
  char *zMsg = 0;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK
   || sqlite3_enable_load_extension(db, 1)!=SQLITE_OK
   || sqlite3_load_extension(db, zExt, 0, &zMsg)!=SQLITE_OK
  ){
    snprintf(zErr, nErr, "cannot load %s: %s", zExt, zMsg ? zMsg : sqlite3_errmsg(db));
    sqlite3_free(zMsg);
    sqlite3_close(db);
    return 0;
  }
  return db;
}

/* Fill a with n ids from expression zExpr, one prepared step each. */
static int makeIds(sqlite3 *db, const char *zExpr, int n, unsigned char *a,
                   char *zErr, size_t nErr){
  sqlite3_stmt *pStmt = 0;
  char zSql[64];
  int i;
  snprintf(zSql, sizeof(zSql), "SELECT %s", zExpr);
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    snprintf(zErr, nErr, "prepare %s: %s", zSql, sqlite3_errmsg(db));
    return 1;
  }
  for(i=0; i<n; i++){
    if( sqlite3_step(pStmt)!=SQLITE_ROW || sqlite3_column_bytes(pStmt, 0)!=16 ){
      snprintf(zErr, nErr, "step %s: %s", zSql, sqlite3_errmsg(db));
      sqlite3_finalize(pStmt);
      return 1;
    }
    memcpy(a + 16*i, sqlite3_column_blob(pStmt, 0), 16);
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  return 0;
}

static void *workerMain(void *pArg){
  worker *p = (worker*)pArg;
  sqlite3 *db = openWithAcorn(p->zExt, p->zErr, sizeof(p->zErr));
  int i, k;
  if( db==0 ) return 0;
  /* Interleave the kinds in small rounds so the threads contend. */
  for(i=0; i<p->n && p->zErr[0]==0; i+=100){
    int m = p->n-i < 100 ? p->n-i : 100;
    for(k=0; k<NKIND; k++){
      if( makeIds(db, azKind[k], m, p->aId[k]+16*i, p->zErr, sizeof(p->zErr)) ) break;
    }
  }
  sqlite3_close(db);
  return 0;
}

static int cmp16(const void *a, const void *b){ return memcmp(a, b, 16); }

static int runThreads(const char *zExt, int n){
  worker aW[NTHREAD];
  pthread_t aTid[NTHREAD];
  unsigned char *aAll = malloc((size_t)NTHREAD*NKIND*n*16);
  int t, k, i, nAll = 0, rc = 0;
  memset(aW, 0, sizeof(aW));
  for(t=0; t<NTHREAD; t++){
    aW[t].zExt = zExt;
    aW[t].n = n;
    for(k=0; k<NKIND; k++) aW[t].aId[k] = malloc((size_t)n*16);
  }
  for(t=0; t<NTHREAD; t++) pthread_create(&aTid[t], 0, workerMain, &aW[t]);
  for(t=0; t<NTHREAD; t++) pthread_join(aTid[t], 0);
  for(t=0; t<NTHREAD && rc==0; t++){
    if( aW[t].zErr[0] ){
      printf("thread %d: %s\n", t, aW[t].zErr);
      rc = 1;
      break;
    }
    for(k=0; k<2; k++){      /* v7 and v8: strictly increasing per thread */
      for(i=1; i<n; i++){
        if( memcmp(aW[t].aId[k]+16*(i-1), aW[t].aId[k]+16*i, 16)>=0 ){
          printf("thread %d: %s not increasing at %d\n", t, azKind[k], i);
          rc = 1;
          break;
        }
      }
    }
    for(k=0; k<NKIND; k++){
      memcpy(aAll + 16*(size_t)nAll, aW[t].aId[k], (size_t)n*16);
      nAll += n;
    }
  }
  /* v7 and v8: the 8 leading bytes (ms, version, rand_a: the time word the
  ** CAS hands out) are unique across threads, not only the whole value. */
  for(k=0; k<2 && rc==0; k++){
    unsigned char *aTime = malloc((size_t)NTHREAD*n*16);
    int nTime = 0;
    for(t=0; t<NTHREAD; t++){
      for(i=0; i<n; i++){
        memset(aTime + 16*(size_t)nTime, 0, 16);
        memcpy(aTime + 16*(size_t)nTime, aW[t].aId[k] + 16*(size_t)i, 8);
        nTime++;
      }
    }
    qsort(aTime, (size_t)nTime, 16, cmp16);
    for(i=1; i<nTime; i++){
      if( memcmp(aTime+16*(size_t)(i-1), aTime+16*(size_t)i, 16)==0 ){
        printf("%s: time bits repeated across threads\n", azKind[k]);
        rc = 1;
        break;
      }
    }
    free(aTime);
  }
  if( rc==0 ){
    qsort(aAll, (size_t)nAll, 16, cmp16);
    for(i=1; i<nAll; i++){
      if( memcmp(aAll+16*(size_t)(i-1), aAll+16*(size_t)i, 16)==0 ){
        printf("value repeated across threads\n");
        rc = 1;
        break;
      }
    }
  }
  if( rc==0 ) printf("ok %d threads x %d kinds x %d ids, increasing, no repeats\n",
                     NTHREAD, NKIND, n);
  for(t=0; t<NTHREAD; t++) for(k=0; k<NKIND; k++) free(aW[t].aId[k]);
  free(aAll);
  return rc;
}

#define NFORK 8
static int runFork(const char *zExt){
  char zErr[256] = "";
  sqlite3 *db = openWithAcorn(zExt, zErr, sizeof(zErr));
  unsigned char aParent[2*NFORK*16], aChild[2*NFORK*16], aSeed[16];
  int fd[2], i, j, status = 0;
  pid_t pid;
  if( db==0 ){ printf("%s\n", zErr); return 1; }
  /* Use the generator before fork, so the state is seeded and copied. */
  if( makeIds(db, "uuid4_blob()", 1, aSeed, zErr, sizeof(zErr)) ){
    printf("%s\n", zErr); return 1;
  }
  if( pipe(fd)!=0 ){ perror("pipe"); return 1; }
  pid = fork();
  if( pid<0 ){ perror("fork"); return 1; }
  if( pid==0 ){
    int bad = makeIds(db, "uuid4_blob()", NFORK, aChild, zErr, sizeof(zErr))
           || makeIds(db, "uuid7_blob()", NFORK, aChild+16*NFORK, zErr, sizeof(zErr));
    if( !bad && write(fd[1], aChild, sizeof(aChild))!=(ssize_t)sizeof(aChild) ) bad = 1;
    sqlite3_close(db);
    _exit(bad);
  }
  close(fd[1]);
  if( makeIds(db, "uuid4_blob()", NFORK, aParent, zErr, sizeof(zErr))
   || makeIds(db, "uuid7_blob()", NFORK, aParent+16*NFORK, zErr, sizeof(zErr)) ){
    printf("%s\n", zErr); return 1;
  }
  if( read(fd[0], aChild, sizeof(aChild))!=(ssize_t)sizeof(aChild) ){
    printf("child sent no ids\n"); return 1;
  }
  waitpid(pid, &status, 0);
  close(fd[0]);
  sqlite3_close(db);
  if( !WIFEXITED(status) || WEXITSTATUS(status)!=0 ){ printf("child failed\n"); return 1; }
  for(i=0; i<2*NFORK; i++){
    for(j=0; j<2*NFORK; j++){
      /* uuid7 may share time bits; its 8 random bytes must differ */
      if( memcmp(aParent+16*i+8, aChild+16*j+8, 8)==0 ){
        printf("parent id %d and child id %d share random bits\n", i, j);
        return 1;
      }
    }
  }
  printf("ok parent and child made %d different ids each after fork\n", 2*NFORK);
  return 0;
}

int main(int argc, char **argv){
  if( argc==4 && strcmp(argv[1], "threads")==0 ) return runThreads(argv[2], atoi(argv[3]));
  if( argc==3 && strcmp(argv[1], "fork")==0 ) return runFork(argv[2]);
  fprintf(stderr, "usage: %s threads EXT N | fork EXT\n", argv[0]);
  return 2;
}
