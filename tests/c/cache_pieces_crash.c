/*
** cache_pieces_crash.c: pieces written in place with cache_write survive
** their writer being killed at any moment: every acknowledged block is
** there, a block being written is either all old or all new, a
** transaction's blocks are all old or all new together, and nothing else
** changed.
**
**   build/cache_pieces_crash EXT DB LOG JOURNAL TRIALS SEED MAXMS
**
** DB holds a cache table t (JOURNAL wal or delete, auto_vacuum incremental)
** with NPIECE pieces of NBLOCK blocks of BLOCK bytes, reserved as zeroblobs.
** Then TRIALS times: a writer process (forked) opens DB and rewrites random
** blocks until it is killed with SIGKILL after 0..MAXMS ms; a checker then
** opens DB and compares every block with the log.
**
** THE WRITER writes groups: one cache_write in autocommit, or BEGIN, 2 to 4
** cache_writes, then COMMIT (or ROLLBACK, one group in five).  Block (p, b)
** at version v holds bytes derived from (p, b, v); version 0 is the zeros
** it was reserved with.  Versions only grow.  The log (one write(2) per
** record, so a kill leaves whole records or a torn last one):
**   T n k  + k lines "p b v"   intent, written before the group runs
**   E n c                      the group returned: committed (c 1) or rolled
**                              back (c 0)
** THE CHECKER replays the log: a group with E 1 sets its blocks' versions;
** E 0 changes nothing; a last group without E is either wholly committed
** or not at all (every one of its blocks at its new version, or every one
** at the version before), and the checker logs which ("E n 1" or "E n 0")
** before the next writer starts.  Then every block must hold exactly the
** bytes of its version, PRAGMA integrity_check and the table's
** integrity_check must pass, and entries and bytes must be as reserved.
** Prints "ok N kills (JOURNAL; seed S)" and exits 0, or what differs and
** exits 1.
*/
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "splitmix.h"

/* The next number of the sequence in *pState. */
static unsigned long long nextRand(unsigned long long *pState){
  *pState = splitmix(*pState);
  return *pState;
}

#define NPIECE 4
#define NBLOCK 16
#define BLOCK  4096

static const char *gExt, *gDb, *gLog, *gJournal;
static unsigned long long gSeed;

static void fail(const char *zFmt, const char *zArg){
  printf("FAIL (%s; seed %llu): ", gJournal, gSeed);
  printf(zFmt, zArg);
  printf("\n");
  exit(1);
}

static sqlite3 *openDb(void){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open(gDb, &db) ) fail("open: %s", sqlite3_errmsg(db));
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, gExt, 0, &zErr) ) fail("load: %s", zErr);
  sqlite3_busy_timeout(db, 10000);
  return db;
}

static void exec(sqlite3 *db, const char *zSql){
  if( sqlite3_exec(db, zSql, 0, 0, 0) ) fail("%s", sqlite3_errmsg(db));
}

/* The bytes of block (p, b) at version v. */
static void blockBytes(int p, int b, long long v, unsigned char *a){
  unsigned long long s = ((unsigned long long)v<<16) ^ (unsigned long long)(p*NBLOCK + b);
  int i;
  if( v==0 ){
    memset(a, 0, BLOCK);
    return;
  }
  for(i=0; i<BLOCK; i+=8){
    unsigned long long x = nextRand(&s);
    memcpy(a+i, &x, 8);
  }
}

static void logWrite(int fd, const char *z){
  size_t n = strlen(z);
  if( write(fd, z, n)!=(ssize_t)n ) fail("log write: %s", strerror(errno));
}

/* ------------------------------------------------------------ the writer */

static void writer(long long iGroup0, long long iVer0, unsigned long long seed){
  sqlite3 *db = openDb();
  sqlite3_stmt *pWrite = 0;
  int fd = open(gLog, O_WRONLY|O_APPEND);
  unsigned char a[BLOCK];
  long long n = iGroup0, v = iVer0;
  if( fd<0 ) fail("log open: %s", strerror(errno));
  gRand = seed;
  exec(db, (seed & 1) ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL");
  if( sqlite3_prepare_v2(db, "SELECT cache_write('t', ?1, ?2, ?3)", -1, &pWrite, 0) ){
    fail("prepare: %s", sqlite3_errmsg(db));
  }
  for(;;){
    int k = rnd(3)==0 ? 2 + (int)rnd(3) : 1;
    int bTxn = k>1, bRollback = bTxn && rnd(5)==0, i;
    int ap[4], ab[4];
    long long av[4];
    char z[200];
    snprintf(z, sizeof(z), "T %lld %d\n", ++n, k);
    {
      char zAll[400];
      zAll[0] = 0;
      strcat(zAll, z);
      for(i=0; i<k; i++){
        ap[i] = (int)rnd(NPIECE);
        ab[i] = (int)rnd(NBLOCK);
        av[i] = ++v;
        snprintf(z, sizeof(z), "%d %d %lld\n", ap[i], ab[i], av[i]);
        strcat(zAll, z);
      }
      logWrite(fd, zAll);
    }
    if( bTxn ) exec(db, "BEGIN");
    for(i=0; i<k; i++){
      blockBytes(ap[i], ab[i], av[i], a);
      sqlite3_bind_int(pWrite, 1, ap[i]);
      sqlite3_bind_int64(pWrite, 2, (long long)ab[i]*BLOCK);
      sqlite3_bind_blob(pWrite, 3, a, BLOCK, SQLITE_STATIC);
      if( sqlite3_step(pWrite)!=SQLITE_ROW || sqlite3_column_int(pWrite, 0)!=BLOCK ){
        fail("cache_write: %s", sqlite3_errmsg(db));
      }
      sqlite3_reset(pWrite);
    }
    if( bTxn ) exec(db, bRollback ? "ROLLBACK" : "COMMIT");
    snprintf(z, sizeof(z), "E %lld %d\n", n, !bRollback);
    logWrite(fd, z);
  }
}

/* ------------------------------------------------------------ the checker */

static long long aVer[NPIECE][NBLOCK];   /* committed versions */

/* Does block (p, b) hold version v? */
static int blockIs(sqlite3 *db, int p, int b, long long v){
  static sqlite3_stmt *pRead = 0;
  static sqlite3 *dbPrev = 0;
  unsigned char want[BLOCK];
  int ok;
  if( pRead && dbPrev!=db ){ sqlite3_finalize(pRead); pRead = 0; }
  if( pRead==0 ){
    dbPrev = db;
    if( sqlite3_prepare_v2(db, "SELECT cache_read('t', ?1, ?2, ?3)", -1, &pRead, 0) ){
      fail("prepare: %s", sqlite3_errmsg(db));
    }
  }
  blockBytes(p, b, v, want);
  sqlite3_bind_int(pRead, 1, p);
  sqlite3_bind_int64(pRead, 2, (long long)b*BLOCK);
  sqlite3_bind_int(pRead, 3, BLOCK);
  if( sqlite3_step(pRead)!=SQLITE_ROW ) fail("cache_read: %s", sqlite3_errmsg(db));
  ok = sqlite3_column_bytes(pRead, 0)==BLOCK
    && memcmp(sqlite3_column_blob(pRead, 0), want, BLOCK)==0;
  sqlite3_reset(pRead);
  return ok;
}

/* Replay the log; decide an unfinished last group from the database and
** log the verdict.  *piGroup, *piVer: the last group and version logged. */
static void check(sqlite3 *db, long long *piGroup, long long *piVer){
  FILE *f = fopen(gLog, "r");
  char line[200];
  long long n = 0, nOpen = 0, iVer = 0;
  int k = 0, nGot = 0, ap[4], ab[4], p, b, c;
  long long av[4], v, e;
  if( f==0 ) fail("log read: %s", strerror(errno));
  memset(aVer, 0, sizeof(aVer));
  while( fgets(line, sizeof(line), f) ){
    if( line[strlen(line)-1]!='\n' ) break;               /* torn */
    if( sscanf(line, "T %lld %d", &n, &k)==2 ){
      nOpen = n; nGot = 0;
    }else if( sscanf(line, "E %lld %d", &e, &c)==2 ){
      if( e!=nOpen || nGot!=k ) fail("log: E out of place: %s", line);
      if( c ) for(p=0; p<k; p++) aVer[ap[p]][ab[p]] = av[p];
      nOpen = 0;
    }else if( sscanf(line, "%d %d %lld", &p, &b, &v)==3 && nOpen && nGot<k ){
      ap[nGot] = p; ab[nGot] = b; av[nGot] = v; nGot++;
      if( v>iVer ) iVer = v;
    }else{
      fail("log: bad line: %s", line);
    }
  }
  fclose(f);
  if( nOpen && nGot==k ){
    /* unfinished: all new (later writes of one block in the group win) or
    ** all old */
    long long aNew[NPIECE][NBLOCK];
    int bNew = 1, bOld = 1, fd;
    char z[100];
    memcpy(aNew, aVer, sizeof(aVer));
    for(p=0; p<k; p++) aNew[ap[p]][ab[p]] = av[p];
    for(p=0; p<k; p++){
      if( !blockIs(db, ap[p], ab[p], aNew[ap[p]][ab[p]]) ) bNew = 0;
      if( !blockIs(db, ap[p], ab[p], aVer[ap[p]][ab[p]]) ) bOld = 0;
    }
    if( !bNew && !bOld ){
      snprintf(z, sizeof(z), "%lld", nOpen);
      fail("group %s is neither all written nor all unwritten", z);
    }
    if( bNew ) memcpy(aVer, aNew, sizeof(aVer));
    fd = open(gLog, O_WRONLY|O_APPEND);
    snprintf(z, sizeof(z), "E %lld %d\n", nOpen, bNew);
    logWrite(fd, z);
    close(fd);
  }else if( nOpen ){
    /* one write(2) of a regular file is not cut short by SIGKILL */
    fail("log: a torn intent record%s", "");
  }
  for(p=0; p<NPIECE; p++){
    for(b=0; b<NBLOCK; b++){
      if( !blockIs(db, p, b, aVer[p][b]) ){
        char z[100];
        snprintf(z, sizeof(z), "piece %d block %d: not version %lld", p, b, aVer[p][b]);
        fail("%s", z);
      }
    }
  }
  {
    sqlite3_stmt *pStmt = 0;
    const char *zOk;
    exec(db, "INSERT INTO t(t) VALUES ('integrity_check')");
    sqlite3_prepare_v2(db, "SELECT (SELECT group_concat(integrity_check) FROM"
        " pragma_integrity_check), entries, bytes FROM cache_stats('t')", -1,
        &pStmt, 0);
    if( pStmt==0 || sqlite3_step(pStmt)!=SQLITE_ROW ) fail("stats: %s", sqlite3_errmsg(db));
    zOk = (const char*)sqlite3_column_text(pStmt, 0);
    if( zOk==0 || strcmp(zOk, "ok")!=0 ) fail("integrity_check: %s", zOk ? zOk : "NULL");
    if( sqlite3_column_int(pStmt, 1)!=NPIECE
     || sqlite3_column_int64(pStmt, 2)!=(long long)NPIECE*(8 + NBLOCK*BLOCK) ){
      fail("entries or bytes changed: %s", (const char*)sqlite3_column_text(pStmt, 2));
    }
    sqlite3_finalize(pStmt);
  }
  *piGroup = n;
  *piVer = iVer;
}

int main(int argc, char **argv){
  int nTrial, maxMs, t, p;
  unsigned long long seed;
  sqlite3 *db;
  char z[300];
  long long iGroup = 0, iVer = 0;
  if( argc!=8 ){
    fprintf(stderr, "usage: %s EXT DB LOG JOURNAL TRIALS SEED MAXMS\n", argv[0]);
    return 2;
  }
  gExt = argv[1]; gDb = argv[2]; gLog = argv[3]; gJournal = argv[4];
  nTrial = atoi(argv[5]); gSeed = seed = strtoull(argv[6], 0, 10);
  maxMs = atoi(argv[7]);
  snprintf(z, sizeof(z), "%s-wal", gDb); unlink(z);
  snprintf(z, sizeof(z), "%s-journal", gDb); unlink(z);
  unlink(gDb);
  close(open(gLog, O_WRONLY|O_CREAT|O_TRUNC, 0644));
  db = openDb();
  snprintf(z, sizeof(z), "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=%s;"
           " CREATE VIRTUAL TABLE t USING cache(capacity='16MiB')", gJournal);
  exec(db, z);
  for(p=0; p<NPIECE; p++){
    snprintf(z, sizeof(z), "INSERT INTO t(key, value) VALUES (%d, zeroblob(%d))",
             p, NBLOCK*BLOCK);
    exec(db, z);
  }
  sqlite3_close(db);
  for(t=0; t<nTrial; t++){
    unsigned long long s = nextRand(&seed);
    pid_t pid = fork();
    int st;
    if( pid==0 ){
      writer(iGroup, iVer, s);
      _exit(0);
    }
    {
      struct timespec ts;
      long long ms = maxMs>0 ? (long long)(nextRand(&seed) % (unsigned)maxMs) : 0;
      ts.tv_sec = ms/1000;
      ts.tv_nsec = (ms%1000)*1000000;
      nanosleep(&ts, 0);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    if( !WIFSIGNALED(st) ) fail("the writer ended on its own%s", "");
    db = openDb();
    check(db, &iGroup, &iVer);
    sqlite3_close(db);
  }
  printf("ok %d kills (%s; seed %llu), %lld groups, %lld blocks written\n",
         nTrial, gJournal, gSeed, iGroup, iVer);
  return 0;
}
