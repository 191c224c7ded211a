/*
** pieces.c: a torrent's pieces stored block by block, the way a BitTorrent
** client's storage does it, in a cache table, in squirrel's design on plain
** SQLite, and in plain files.
**
**   build/pieces EXTENSION DIR ROUNDS       the rates of writes and reads
**   build/pieces --offsets EXTENSION DIR N  the cost of one block at the
**                                           start and at the end of a piece
**
** THE WORKLOAD
**
** 8 keys, each a piece of 2 MiB reserved once (zeros) and then written in
** 16 KiB blocks, each at its offset, in one of two orders: in order (piece
** after piece, block after block) or shuffled (the 1024 blocks of the 8
** pieces in a random order, as blocks arrive from many peers); then every
** piece is read back block by block, in order, and each block compared
** with what was written: a wrong byte ends the program with exit 1.  Each
** round writes new contents (random bytes from a generator whose state
** depends on the round and the order), so a block that was not written
** reads as the old contents and fails.
**
** THE SIDES (each in a file or directory of its own in DIR, made afresh)
**
**   acorn     EXTENSION loaded; CREATE VIRTUAL TABLE pieces USING
**             cache(capacity='1GiB'); a piece reserved by INSERT INTO
**             pieces(key, value) VALUES (?, zeroblob(2097152)); a block
**             written by SELECT cache_write('pieces', ?1, ?2, ?3) (key,
**             offset, data; autocommit: one statement, one transaction, a
**             block) and read by SELECT cache_read('pieces', ?1, ?2, ?3)
**             (key, offset, length), both prepared once.
**   squirrel  the design of squirrel (a Go cache on SQLite) by hand:
**             keys(key_id INTEGER PRIMARY KEY, key TEXT UNIQUE, length,
**             create_time, last_used, access_count) and the value in
**             blobs(blob_id INTEGER PRIMARY KEY, blob BLOB NOT NULL).
**             squirrel maps a key to its chunks through a third table,
**             "values"(value_id, offset, blob_id); with one chunk per value
**             (a 2 MiB blob a piece) that is one blob row per key, modelled
**             here as blob_id = key_id.  A block written as: BEGIN
**             IMMEDIATE; SELECT key_id FROM keys WHERE key = ?;
**             sqlite3_blob_open(write), sqlite3_blob_write at the offset,
**             sqlite3_blob_close; UPDATE keys SET last_used = ?,
**             access_count = access_count + 1 WHERE key_id = ?; COMMIT.  A
**             block read the same in a BEGIN (deferred) with
**             sqlite3_blob_read (squirrel counts reads as uses too).
**   files     one file per key, kept open; reserved by ftruncate to 2 MiB;
**             pwrite and pread of each block, no fsync (the ceiling: one
**             system call a block, into and out of the kernel's page
**             cache).
**
** Both SQLite sides: page_size=4096 and auto_vacuum=INCREMENTAL set before
** the first table (checked after: PRAGMA auto_vacuum reads 2), then
** journal_mode=WAL and synchronous=NORMAL, one connection, SQLite's default
** page cache (2000 KiB), SQLite's automatic checkpoints (acorn's hook in
** their place on the acorn side, which does the same below its 64 MiB
** bound).  The keys are 'piece-00' .. 'piece-07'.
**
** PIECES_SIDES (a comma-separated list, such as "squirrel" or
** "acorn,files") runs only those sides (not with --offsets), to watch one
** with strace or callgrind.  A block is written and read by the functions
** acornWrite, acornRead, squirrelWrite, squirrelRead, filesWrite and
** filesRead, never inlined (the compiler may name them
** squirrelWrite.constprop.0: valgrind --tool=callgrind
** --toggle-collect='squirrelWrite*' counts one side's writes).
**
** THE RUN
**
** ROUNDS rounds; in each, for each order (in order, then shuffled), every
** side writes its 8 pieces and reads them back, the sides taking turns and
** the side going first rotating from round to round, so background
** writeback and noise fall on all of them alike.  A side's rate for a
** phase is the median over the rounds of 16 MiB (16,777,216 bytes) over
** the phase's time, in MB/s (10^6 bytes a second); reads are the median of
** the reads after both orders (both read the same layout: a write
** overwrites in place).  Per block, for each phase: pages SQLite wrote
** (SQLITE_DBSTATUS_CACHE_WRITE, pages its cache wrote to the -wal file),
** and the read- and write-type system calls and the bytes they moved
** (/proc/self/io: syscr, syscw, rchar, wchar), which include the
** checkpoints' copies into the database file, and the CPU time in user
** space and in the kernel (getrusage: what the process spent, at the
** kernel's tick granularity, summed over the rounds).  At the end acorn's
** integrity_check command and PRAGMA integrity_check run on the SQLite
** sides.
**
** Printed: a markdown table, each row followed by a line "result: SIDE
** WRITE_IN_ORDER WRITE_SHUFFLED READ" (MB/s) for bench/pieces.sh.
**
** --offsets: the cost of one block at offset 0 and at 2 MiB - 16 KiB of a
** 2 MiB value, on four files: acorn and squirrel, each with
** auto_vacuum=INCREMENTAL and with auto_vacuum=NONE (otherwise as above, 8
** keys reserved).  Without pointer-map pages, reaching an offset in a
** value walks its chain of overflow pages from the start: at the end of a
** 2 MiB value, 511 pages, read from the file whenever they are not in the
** page cache (8 pieces are 4096 pages, twice the default cache); with
** them, SQLite finds each next page in the pointer map without reading
** the page.  For each file and offset, N writes (the keys in turn, the same
** block each time) then N reads of that block, checked, timed in 5
** batches, the files taking turns; printed as the median µs per block.
*/
#define BENCH_NAME "pieces"
#include "bench_util.h"
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NKEY    8
#define PIECE   (2*1024*1024)
#define BLOCK   (16*1024)
#define NBLOCK  (PIECE/BLOCK)
#define NSIDE   3

enum { S_ACORN, S_SQUIRREL, S_FILES };
static const char *const azSide[NSIDE] = { "acorn", "squirrel", "files" };
static const char *const azLabel[NSIDE] = {
  "acorn: cache_write / cache_read",
  "squirrel's design by hand: blob open, write or read, close",
  "files: pwrite / pread",
};

static const char *zExt;

__attribute__((format(printf, 1, 2), noreturn))
static void fail(const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "pieces: ");
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  exit(1);
}

/* ------------------------------------------------------------ the counters
** What this process has done so far: the bytes it moved through read- and
** write-type system calls and the number of those calls (/proc/self/io),
** and its CPU time in user space and in the kernel (getrusage). */
typedef struct proc_count proc_count;
struct proc_count {
  long long nRchar, nWchar, nSyscr, nSyscw;
  long long nUserUs, nSysUs;
};

static void proc_read(proc_count *p){
  char zLine[200];
  FILE *f;
  struct rusage ru;
  memset(p, 0, sizeof(*p));
  if( getrusage(RUSAGE_SELF, &ru)==0 ){
    p->nUserUs = (long long)ru.ru_utime.tv_sec*1000000 + ru.ru_utime.tv_usec;
    p->nSysUs = (long long)ru.ru_stime.tv_sec*1000000 + ru.ru_stime.tv_usec;
  }
  f = fopen("/proc/self/io", "r");
  if( f==0 ) return;                    /* no counts: they show as 0 */
  while( fgets(zLine, sizeof(zLine), f) ){
    long long v;
    if( sscanf(zLine, "rchar: %lld", &v)==1 ) p->nRchar = v;
    else if( sscanf(zLine, "wchar: %lld", &v)==1 ) p->nWchar = v;
    else if( sscanf(zLine, "syscr: %lld", &v)==1 ) p->nSyscr = v;
    else if( sscanf(zLine, "syscw: %lld", &v)==1 ) p->nSyscw = v;
  }
  fclose(f);
}

/* ------------------------------------------------------------ the sides */
typedef struct side side;
struct side {
  int iSide;
  char zPath[4096];            /* the database, or the files' directory */
  sqlite3 *db;
  sqlite3_stmt *pWrite, *pRead;                  /* acorn */
  sqlite3_stmt *pFind, *pTouch;                  /* squirrel */
  sqlite3_stmt *pBegin, *pBeginImm, *pCommit;    /* squirrel */
  int aFd[NKEY];                                 /* files */
};

static void key_name(char *z, int k){
  snprintf(z, 16, "piece-%02d", k);
}

/* The time as squirrel keeps it: unix milliseconds. */
static sqlite3_int64 now_ms(void){
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (sqlite3_int64)ts.tv_sec*1000 + ts.tv_nsec/1000000;
}

static void step_done(sqlite3 *db, sqlite3_stmt *pStmt, const char *zWhat){
  int rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_DONE ) benchCheck(rc==SQLITE_ROW ? SQLITE_ERROR : rc, db, zWhat);
  sqlite3_reset(pStmt);
}

/* The database zPath made afresh: page_size=4096, auto_vacuum=zVacuum
** (INCREMENTAL or NONE) before any table, then WAL and synchronous=NORMAL. */
static sqlite3 *db_open(const char *zPath, const char *zVacuum){
  sqlite3 *db = 0;
  char *zSql;
  benchRemoveDb(zPath);
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) benchDie(db, "open");
  zSql = sqlite3_mprintf("PRAGMA page_size=4096; PRAGMA auto_vacuum=%s;"
                         " PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                         zVacuum);
  benchExec(db, zSql);
  sqlite3_free(zSql);
  return db;
}

/* After the first table: the file has the settings asked for. */
static void db_verify(sqlite3 *db, const char *zVacuum){
  long long iWant = strcmp(zVacuum, "INCREMENTAL")==0 ? 2 : 0;
  if( benchInt64(db, "PRAGMA auto_vacuum")!=iWant ){
    fail("auto_vacuum is not %s", zVacuum);
  }
  if( benchInt64(db, "PRAGMA page_size")!=4096 ){
    fail("page_size is not 4096");
  }
  if( benchInt64(db, "PRAGMA synchronous")!=1 ){
    fail("synchronous is not NORMAL");
  }
}

static void side_open(side *p, int iSide, const char *zDir, const char *zSuffix,
                      const char *zVacuum){
  int k;
  memset(p, 0, sizeof(*p));
  p->iSide = iSide;
  for(k=0; k<NKEY; k++) p->aFd[k] = -1;
  snprintf(p->zPath, sizeof(p->zPath), "%s/%s%s%s", zDir, azSide[iSide],
           zSuffix, iSide==S_FILES ? "" : ".db");
  if( iSide==S_FILES ){
    if( mkdir(p->zPath, 0700) && errno!=EEXIST ){
      fail("mkdir %s: %s", p->zPath, strerror(errno));
    }
    return;
  }
  p->db = db_open(p->zPath, zVacuum);
  if( iSide==S_ACORN ){
    benchLoad(p->db, zExt);
    benchExec(p->db, "CREATE VIRTUAL TABLE pieces USING cache(capacity='1GiB')");
    p->pWrite = benchPrepare(p->db, "SELECT cache_write('pieces', ?1, ?2, ?3)");
    p->pRead = benchPrepare(p->db, "SELECT cache_read('pieces', ?1, ?2, ?3)");
  }else{
    benchExec(p->db,
      "CREATE TABLE keys(key_id INTEGER PRIMARY KEY, key TEXT UNIQUE,"
      " length INTEGER NOT NULL, create_time INTEGER NOT NULL,"
      " last_used INTEGER NOT NULL, access_count INTEGER NOT NULL DEFAULT 0);"
      "CREATE TABLE blobs(blob_id INTEGER PRIMARY KEY, blob BLOB NOT NULL);");
    p->pFind = benchPrepare(p->db, "SELECT key_id FROM keys WHERE key=?1");
    p->pTouch = benchPrepare(p->db, "UPDATE keys SET last_used=?2,"
                             " access_count=access_count+1 WHERE key_id=?1");
    p->pBegin = benchPrepare(p->db, "BEGIN");
    p->pBeginImm = benchPrepare(p->db, "BEGIN IMMEDIATE");
    p->pCommit = benchPrepare(p->db, "COMMIT");
  }
  db_verify(p->db, zVacuum);
}

/* The 8 pieces reserved: 2 MiB of zeros each. */
static void side_reserve(side *p){
  char z[16];
  int k;
  if( p->iSide==S_FILES ){
    for(k=0; k<NKEY; k++){
      char zFile[4200];
      snprintf(zFile, sizeof(zFile), "%s/piece-%02d", p->zPath, k);
      p->aFd[k] = open(zFile, O_RDWR|O_CREAT|O_TRUNC, 0600);
      if( p->aFd[k]<0 || ftruncate(p->aFd[k], PIECE) ){
        fail("create %s: %s", zFile, strerror(errno));
      }
    }
  }else if( p->iSide==S_ACORN ){
    sqlite3_stmt *q = benchPrepare(p->db, "INSERT INTO pieces(key, value)"
                                   " VALUES (?1, zeroblob(2097152))");
    for(k=0; k<NKEY; k++){
      key_name(z, k);
      sqlite3_bind_text(q, 1, z, -1, SQLITE_STATIC);
      step_done(p->db, q, "reserve");
    }
    sqlite3_finalize(q);
  }else{
    sqlite3_stmt *qBlob = benchPrepare(p->db,
        "INSERT INTO blobs(blob) VALUES (zeroblob(2097152))");
    sqlite3_stmt *qKey = benchPrepare(p->db,
        "INSERT INTO keys(key_id, key, length, create_time, last_used)"
        " VALUES (?1, ?2, 2097152, ?3, ?3)");
    for(k=0; k<NKEY; k++){
      step_done(p->db, p->pBeginImm, "BEGIN IMMEDIATE");
      step_done(p->db, qBlob, "reserve a blob");
      key_name(z, k);
      sqlite3_bind_int64(qKey, 1, sqlite3_last_insert_rowid(p->db));
      sqlite3_bind_text(qKey, 2, z, -1, SQLITE_STATIC);
      sqlite3_bind_int64(qKey, 3, now_ms());
      step_done(p->db, qKey, "reserve a key");
      step_done(p->db, p->pCommit, "COMMIT");
    }
    sqlite3_finalize(qBlob);
    sqlite3_finalize(qKey);
  }
}

static void side_close(side *p){
  int k;
  for(k=0; k<NKEY; k++) if( p->aFd[k]>=0 ) close(p->aFd[k]);
  if( p->db==0 ) return;
  sqlite3_finalize(p->pWrite);
  sqlite3_finalize(p->pRead);
  sqlite3_finalize(p->pFind);
  sqlite3_finalize(p->pTouch);
  sqlite3_finalize(p->pBegin);
  sqlite3_finalize(p->pBeginImm);
  sqlite3_finalize(p->pCommit);
  benchCheck(sqlite3_close(p->db), p->db, "close");
}

static void side_remove(side *p){
  if( p->iSide==S_FILES ){
    int k;
    char zFile[4200];
    for(k=0; k<NKEY; k++){
      snprintf(zFile, sizeof(zFile), "%s/piece-%02d", p->zPath, k);
      remove(zFile);
    }
    rmdir(p->zPath);
  }else{
    benchRemoveDb(p->zPath);
  }
}

/* --------------------------------------------------- one block, each side
** Each writes n bytes of a at offset iOff of piece k, or reads them into a;
** any failure ends the program. */

__attribute__((noinline))
static void acornWrite(side *p, int k, int iOff, const unsigned char *a, int n){
  char z[16];
  key_name(z, k);
  sqlite3_bind_text(p->pWrite, 1, z, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(p->pWrite, 2, iOff);
  sqlite3_bind_blob(p->pWrite, 3, a, n, SQLITE_STATIC);
  if( sqlite3_step(p->pWrite)!=SQLITE_ROW ) benchDie(p->db, "cache_write");
  if( sqlite3_column_int(p->pWrite, 0)!=n ){
    fail("cache_write of %s wrote %d bytes, not %d", z,
         sqlite3_column_int(p->pWrite, 0), n);
  }
  step_done(p->db, p->pWrite, "cache_write");
}

__attribute__((noinline))
static void acornRead(side *p, int k, int iOff, unsigned char *a, int n){
  char z[16];
  key_name(z, k);
  sqlite3_bind_text(p->pRead, 1, z, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(p->pRead, 2, iOff);
  sqlite3_bind_int(p->pRead, 3, n);
  if( sqlite3_step(p->pRead)!=SQLITE_ROW ) benchDie(p->db, "cache_read");
  if( sqlite3_column_bytes(p->pRead, 0)!=n ){
    fail("cache_read of %s gave %d bytes, not %d", z,
         sqlite3_column_bytes(p->pRead, 0), n);
  }
  memcpy(a, sqlite3_column_blob(p->pRead, 0), n);
  step_done(p->db, p->pRead, "cache_read");
}

/* squirrel's access: the key's blob found, opened, read or written at the
** offset, closed, and the key's last use written, in one transaction. */
static void squirrelAccess(side *p, int k, int iOff, unsigned char *a, int n,
                           int bWrite){
  char z[16];
  sqlite3_int64 id;
  sqlite3_blob *pBlob = 0;
  int rc;
  key_name(z, k);
  step_done(p->db, bWrite ? p->pBeginImm : p->pBegin, "BEGIN");
  sqlite3_bind_text(p->pFind, 1, z, -1, SQLITE_TRANSIENT);
  if( sqlite3_step(p->pFind)!=SQLITE_ROW ) benchDie(p->db, "find the key");
  id = sqlite3_column_int64(p->pFind, 0);
  sqlite3_reset(p->pFind);
  if( sqlite3_blob_open(p->db, "main", "blobs", "blob", id, bWrite, &pBlob) ){
    benchDie(p->db, "sqlite3_blob_open");
  }
  rc = bWrite ? sqlite3_blob_write(pBlob, a, n, iOff)
              : sqlite3_blob_read(pBlob, a, n, iOff);
  if( rc ) benchDie(p->db, bWrite ? "sqlite3_blob_write" : "sqlite3_blob_read");
  if( sqlite3_blob_close(pBlob) ) benchDie(p->db, "sqlite3_blob_close");
  sqlite3_bind_int64(p->pTouch, 1, id);
  sqlite3_bind_int64(p->pTouch, 2, now_ms());
  step_done(p->db, p->pTouch, "update last_used");
  step_done(p->db, p->pCommit, "COMMIT");
}

__attribute__((noinline))
static void squirrelWrite(side *p, int k, int iOff, const unsigned char *a, int n){
  squirrelAccess(p, k, iOff, (unsigned char*)a, n, 1);
}

__attribute__((noinline))
static void squirrelRead(side *p, int k, int iOff, unsigned char *a, int n){
  squirrelAccess(p, k, iOff, a, n, 0);
}

__attribute__((noinline))
static void filesWrite(side *p, int k, int iOff, const unsigned char *a, int n){
  if( pwrite(p->aFd[k], a, n, iOff)!=n ) fail("pwrite: %s", strerror(errno));
}

__attribute__((noinline))
static void filesRead(side *p, int k, int iOff, unsigned char *a, int n){
  if( pread(p->aFd[k], a, n, iOff)!=n ) fail("pread: %s", strerror(errno));
}

static void block_write(side *p, int k, int iOff, const unsigned char *a, int n){
  switch( p->iSide ){
    case S_ACORN:    acornWrite(p, k, iOff, a, n); break;
    case S_SQUIRREL: squirrelWrite(p, k, iOff, a, n); break;
    default:         filesWrite(p, k, iOff, a, n); break;
  }
}

static void block_read(side *p, int k, int iOff, unsigned char *a, int n){
  switch( p->iSide ){
    case S_ACORN:    acornRead(p, k, iOff, a, n); break;
    case S_SQUIRREL: squirrelRead(p, k, iOff, a, n); break;
    default:         filesRead(p, k, iOff, a, n); break;
  }
}

/* ------------------------------------------------------------ the phases */

/* What one phase of one side measured. */
typedef struct phase phase;
struct phase {
  double t;                    /* seconds */
  long long nPages;            /* pages SQLite wrote */
  proc_count c;                /* the counters' increase */
};

static void phase_start(side *p, proc_count *pC){
  if( p->db ) benchPagesWritten(p->db);
  proc_read(pC);
}

static void phase_end(side *p, const proc_count *pC0, double t0, phase *pOut){
  proc_count c;
  pOut->t = benchSeconds()-t0;
  pOut->nPages = p->db ? benchPagesWritten(p->db) : 0;
  proc_read(&c);
  pOut->c.nRchar = c.nRchar - pC0->nRchar;
  pOut->c.nWchar = c.nWchar - pC0->nWchar;
  pOut->c.nSyscr = c.nSyscr - pC0->nSyscr;
  pOut->c.nSyscw = c.nSyscw - pC0->nSyscw;
  pOut->c.nUserUs = c.nUserUs - pC0->nUserUs;
  pOut->c.nSysUs = c.nSysUs - pC0->nSysUs;
}

/* The 8 pieces' blocks written in the order aOrder (key*NBLOCK + block). */
static void write_pieces(side *p, unsigned char **aData, const int *aOrder,
                         phase *pOut){
  proc_count c0;
  double t0;
  int i;
  phase_start(p, &c0);
  t0 = benchSeconds();
  for(i=0; i<NKEY*NBLOCK; i++){
    int k = aOrder[i]/NBLOCK, iOff = (aOrder[i]%NBLOCK)*BLOCK;
    block_write(p, k, iOff, aData[k]+iOff, BLOCK);
  }
  phase_end(p, &c0, t0, pOut);
}

/* The 8 pieces read back block by block, each block checked. */
static void read_pieces(side *p, unsigned char **aData, unsigned char *aBuf,
                        phase *pOut){
  proc_count c0;
  double t0;
  int k, b;
  phase_start(p, &c0);
  t0 = benchSeconds();
  for(k=0; k<NKEY; k++){
    for(b=0; b<NBLOCK; b++){
      block_read(p, k, b*BLOCK, aBuf, BLOCK);
      if( memcmp(aBuf, aData[k]+b*BLOCK, BLOCK)!=0 ){
        fail("%s: piece-%02d, the block at offset %d: the bytes read are"
             " not the bytes written", azSide[p->iSide], k, b*BLOCK);
      }
    }
  }
  phase_end(p, &c0, t0, pOut);
}

/* New contents for every piece, from a generator started at x. */
static void fill(unsigned char **aData, unsigned long long x){
  int k, i;
  if( x==0 ) x = 1;
  for(k=0; k<NKEY; k++){
    for(i=0; i<PIECE; i+=8){
      unsigned long long v = benchRandom(&x);
      memcpy(aData[k]+i, &v, 8);
    }
  }
}

static int bSideWanted(const char *zList, int iSide){
  const char *z;
  size_t n = strlen(azSide[iSide]);
  if( zList==0 || zList[0]==0 ) return 1;
  for(z=zList; z; z=strchr(z, ',') ? strchr(z, ',')+1 : 0){
    if( strncmp(z, azSide[iSide], n)==0 && (z[n]==0 || z[n]==',') ) return 1;
  }
  return 0;
}

static double mbps(double t){
  return t>0 ? (double)NKEY*PIECE/1e6/t : 0;
}

#define MAXROUND 100

static int run_rates(const char *zDir, int nRound){
  side aSide[NSIDE];
  int abOn[NSIDE], aiOn[NSIDE], nOn = 0;
  unsigned char *aData[NKEY], *aBuf;
  int aInOrder[NKEY*NBLOCK], aShuffled[NKEY*NBLOCK];
  static phase aW[NSIDE][2][MAXROUND], aR[NSIDE][2][MAXROUND];
  int r, o, j, k, i;
  unsigned long long x = 0x9E3779B97F4A7C15ULL;
  const char *zSides = getenv("PIECES_SIDES");

  for(k=0; k<NKEY; k++){
    aData[k] = malloc(PIECE);
    if( aData[k]==0 ) fail("out of memory");
  }
  aBuf = malloc(BLOCK);
  if( aBuf==0 ) fail("out of memory");
  for(i=0; i<NKEY*NBLOCK; i++) aInOrder[i] = i;
  for(j=0; j<NSIDE; j++){
    abOn[j] = bSideWanted(zSides, j);
    if( abOn[j] ){
      aiOn[nOn++] = j;
      side_open(&aSide[j], j, zDir, "", "INCREMENTAL");
      side_reserve(&aSide[j]);
      if( aSide[j].db ) benchExec(aSide[j].db, "PRAGMA wal_checkpoint(TRUNCATE)");
    }
  }
  if( nOn==0 ) fail("PIECES_SIDES=%s names no side (acorn, squirrel, files)",
                    zSides);

  for(r=0; r<nRound; r++){
    for(o=0; o<2; o++){
      const int *aOrder = aInOrder;
      if( o==1 ){
        for(i=0; i<NKEY*NBLOCK; i++) aShuffled[i] = i;
        for(i=NKEY*NBLOCK-1; i>0; i--){
          int jj = (int)(benchRandom(&x) % (unsigned long long)(i+1));
          int t = aShuffled[i]; aShuffled[i] = aShuffled[jj]; aShuffled[jj] = t;
        }
        aOrder = aShuffled;
      }
      fill(aData, 0x853C49E6748FEA9BULL ^ (unsigned long long)(r*2+o+1)*0xBF58476D1CE4E5B9ULL);
      for(j=0; j<nOn; j++){
        int s = aiOn[(r+j)%nOn];
        write_pieces(&aSide[s], aData, aOrder, &aW[s][o][r]);
        read_pieces(&aSide[s], aData, aBuf, &aR[s][o][r]);
      }
    }
  }

  for(j=0; j<NSIDE; j++){
    if( !abOn[j] || aSide[j].db==0 ) continue;
    if( j==S_ACORN ){
      benchExec(aSide[j].db, "INSERT INTO pieces(pieces) VALUES('integrity_check')");
    }
    {
      sqlite3_stmt *q = benchPrepare(aSide[j].db, "PRAGMA integrity_check");
      if( sqlite3_step(q)!=SQLITE_ROW
       || strcmp((const char*)sqlite3_column_text(q, 0), "ok")!=0 ){
        fail("%s: PRAGMA integrity_check failed", azSide[j]);
      }
      sqlite3_finalize(q);
    }
  }

  printf("8 pieces of 2 MiB in 16 KiB blocks, %d rounds; SQLite %s, WAL,"
         " synchronous=NORMAL, auto_vacuum=INCREMENTAL, page_size=4096;"
         " files without fsync\n\n", nRound, sqlite3_libversion());
  printf("| side | write in order MB/s | write shuffled MB/s | read MB/s |"
         " pages/block written, read | syscalls/block written, read |"
         " KiB moved/block written, read | CPU µs/block written (user,"
         " kernel) | CPU µs/block read (user, kernel) |\n");
  printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for(j=0; j<NSIDE; j++){
    double aT[2*MAXROUND], w0, w1, rd;
    long long nPw = 0, nPr = 0, nSw = 0, nSr = 0, nBw = 0, nBr = 0;
    long long nUw = 0, nUr = 0, nKw = 0, nKr = 0;
    double nBlk = (double)NKEY*NBLOCK*2*nRound;
    if( !abOn[j] ) continue;
    for(r=0; r<nRound; r++) aT[r] = mbps(aW[j][0][r].t);
    w0 = benchMedian(aT, nRound);
    for(r=0; r<nRound; r++) aT[r] = mbps(aW[j][1][r].t);
    w1 = benchMedian(aT, nRound);
    for(r=0; r<nRound; r++){
      aT[2*r] = mbps(aR[j][0][r].t);
      aT[2*r+1] = mbps(aR[j][1][r].t);
    }
    rd = benchMedian(aT, 2*nRound);
    for(r=0; r<nRound; r++){
      for(o=0; o<2; o++){
        phase *w = &aW[j][o][r], *rr = &aR[j][o][r];
        nPw += w->nPages;  nPr += rr->nPages;
        nSw += w->c.nSyscr + w->c.nSyscw;
        nSr += rr->c.nSyscr + rr->c.nSyscw;
        nBw += w->c.nRchar + w->c.nWchar;
        nBr += rr->c.nRchar + rr->c.nWchar;
        nUw += w->c.nUserUs;  nKw += w->c.nSysUs;
        nUr += rr->c.nUserUs;  nKr += rr->c.nSysUs;
      }
    }
    printf("| %s | %.1f | %.1f | %.1f | %.2f, %.2f | %.2f, %.2f | %.1f, %.1f"
           " | %.1f, %.1f | %.1f, %.1f |\n",
           azLabel[j], w0, w1, rd, nPw/nBlk, nPr/nBlk, nSw/nBlk, nSr/nBlk,
           nBw/nBlk/1024, nBr/nBlk/1024, nUw/nBlk, nKw/nBlk, nUr/nBlk, nKr/nBlk);
    printf("result: %s %.1f %.1f %.1f\n", azSide[j], w0, w1, rd);
  }
  for(j=0; j<NSIDE; j++){
    if( !abOn[j] ) continue;
    side_close(&aSide[j]);
    side_remove(&aSide[j]);
  }
  for(k=0; k<NKEY; k++) free(aData[k]);
  free(aBuf);
  return 0;
}

/* ------------------------------------------------------------ --offsets */

#define NBATCH 5

static int run_offsets(const char *zDir, int nRep){
  static const char *const azVac[2] = { "INCREMENTAL", "NONE" };
  side aSide[4];                /* acorn, squirrel; x incremental, none */
  double aUs[4][2][2][NBATCH]; /* side, offset, write/read, batch */
  unsigned char *aBlk, *aBuf;
  int f, b, o, i;
  const int aOff[2] = { 0, PIECE-BLOCK };
  aBlk = malloc(BLOCK);
  aBuf = malloc(BLOCK);
  if( !aBlk || !aBuf ) fail("out of memory");
  for(i=0; i<BLOCK; i++) aBlk[i] = (unsigned char)(i*7+3);
  for(f=0; f<4; f++){
    side_open(&aSide[f], f%2 ? S_SQUIRREL : S_ACORN, zDir,
              f<2 ? "-incremental" : "-none", azVac[f/2]);
    side_reserve(&aSide[f]);
    benchExec(aSide[f].db, "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  for(b=0; b<NBATCH; b++){
    for(i=0; i<4; i++){
      side *p = &aSide[(b+i)%4];
      int fi = (b+i)%4;
      for(o=0; o<2; o++){
        double t0 = benchSeconds();
        int n;
        for(n=0; n<nRep; n++) block_write(p, n%NKEY, aOff[o], aBlk, BLOCK);
        aUs[fi][o][0][b] = (benchSeconds()-t0)*1e6/nRep;
        t0 = benchSeconds();
        for(n=0; n<nRep; n++){
          block_read(p, n%NKEY, aOff[o], aBuf, BLOCK);
          if( memcmp(aBuf, aBlk, BLOCK)!=0 ){
            fail("%s: a block read is not the block written",
                 azSide[p->iSide]);
          }
        }
        aUs[fi][o][1][b] = (benchSeconds()-t0)*1e6/nRep;
      }
    }
  }
  printf("One 16 KiB block of a 2 MiB value, at offset 0 and at 2 MiB - 16 KiB:"
         " µs per block (median of %d batches of %d; 8 keys in turn);"
         " SQLite %s, WAL, synchronous=NORMAL, page_size=4096\n\n",
         NBATCH, nRep, sqlite3_libversion());
  printf("| auto_vacuum | side | write at 0 | write at end | read at 0 |"
         " read at end |\n");
  printf("|---|---|--:|--:|--:|--:|\n");
  for(f=0; f<4; f++){
    double w0 = benchMedian(aUs[f][0][0], NBATCH);
    double w1 = benchMedian(aUs[f][1][0], NBATCH);
    double r0 = benchMedian(aUs[f][0][1], NBATCH);
    double r1 = benchMedian(aUs[f][1][1], NBATCH);
    printf("| %s | %s | %.1f | %.1f | %.1f | %.1f |\n", azVac[f/2],
           f%2 ? "squirrel: blob open, write or read, close" : "acorn: cache_write, cache_read",
           w0, w1, r0, r1);
  }
  for(f=0; f<4; f++){
    side_close(&aSide[f]);
    side_remove(&aSide[f]);
  }
  free(aBlk);
  free(aBuf);
  return 0;
}

int main(int argc, char **argv){
  int bOffsets = argc>1 && strcmp(argv[1], "--offsets")==0;
  int n;
  if( argc!=4+bOffsets ){
    fprintf(stderr, "usage: %s EXTENSION DIR ROUNDS\n"
                    "       %s --offsets EXTENSION DIR N\n", argv[0], argv[0]);
    return 2;
  }
  zExt = argv[1+bOffsets];
  n = atoi(argv[3+bOffsets]);
  if( bOffsets ){
    if( n<NKEY || n>1000000 ) fail("N must be 8..10^6, not %d", n);
    return run_offsets(argv[2+bOffsets], n);
  }
  if( n<1 || n>MAXROUND ) fail("ROUNDS must be 1..%d, not %d", MAXROUND, n);
  return run_rates(argv[2], n);
}
