/*
** bench_template.c: bench_insert's template (see benchInt.h), checked when
** given and copied read-only into each scratch database.
*/
#include "benchInt.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* -------------------------------------------------------------------- */
/* The template: copied, never written                                   */
/*
** A template is opened read-only and copied with the backup API into each
** fresh scratch database.  How it is opened depends on what lies beside it:
**
**   - a -wal or a -journal: the database is in use (or was left so), and
**     SQLite's own locks and recovery decide what a reader sees.  It is
**     opened as any read-only reader opens it: the database and its -wal
**     are never written (a WAL reader does use the -shm, as every reader
**     does);
**   - neither: every change is in the database file.  A read-only reader
**     of a WAL-mode database would create an empty -wal and -shm beside it
**     and leave them there, so it is opened with immutable=1 (no locks, no
**     side files) and checked afterwards: if its size, mtime, ctime or
**     inode changed, or a -wal or -journal appeared, while it was copied,
**     the copy is done again (three tries, then an error).
*/

/* Does zPath followed by zSuffix exist (as anything)? */
static int benchExists(const char *zPath, const char *zSuffix){
  struct stat st;
  char *z = sqlite3_mprintf("%s%s", zPath, zSuffix);
  int b = z && lstat(z, &st)==0;
  sqlite3_free(z);
  return b;
}

/* Open the template zReal read-only as described above: *pbQuiet is set
** when it was opened immutable (and must be checked after use). */
static int benchTemplateOpen(const char *zReal, sqlite3 **pDb, int *pbQuiet){
  int rc;
  *pDb = 0;
  *pbQuiet = !benchExists(zReal, "-wal") && !benchExists(zReal, "-journal");
  if( *pbQuiet ){
    /* file:<the path, percent-encoded>?immutable=1 */
    static const char zHex[] = "0123456789ABCDEF";
    size_t n = strlen(zReal), k, j = 0;
    char *zUri = sqlite3_malloc64(3*n + 32);
    if( zUri==0 ) return SQLITE_NOMEM;
    memcpy(zUri, "file:", 5);
    j = 5;
    for(k=0; k<n; k++){
      unsigned char ch = (unsigned char)zReal[k];
      if( (ch>='a' && ch<='z') || (ch>='A' && ch<='Z') || (ch>='0' && ch<='9')
       || ch=='/' || ch=='.' || ch=='-' || ch=='_' || ch=='~' ){
        zUri[j++] = (char)ch;
      }else{
        zUri[j++] = '%';
        zUri[j++] = zHex[ch>>4];
        zUri[j++] = zHex[ch&15];
      }
    }
    memcpy(zUri+j, "?immutable=1", 13);
    rc = sqlite3_open_v2(zUri, pDb, SQLITE_OPEN_READONLY|SQLITE_OPEN_URI, 0);
    sqlite3_free(zUri);
  }else{
    /* an absolute path: never read as a URI */
    rc = sqlite3_open_v2(zReal, pDb, SQLITE_OPEN_READONLY, 0);
  }
  return rc;
}

/* Did the file change between the two stats? */
static int benchStatChanged(const struct stat *a, const struct stat *b){
  return a->st_ino!=b->st_ino || a->st_dev!=b->st_dev
      || a->st_size!=b->st_size
      || a->st_mtim.tv_sec!=b->st_mtim.tv_sec
      || a->st_mtim.tv_nsec!=b->st_mtim.tv_nsec
      || a->st_ctim.tv_sec!=b->st_ctim.tv_sec
      || a->st_ctim.tv_nsec!=b->st_ctim.tv_nsec;
}

int acorn_bench_template_check(const char *zReal, char **pzWhy){
  sqlite3 *db = 0;
  int bQuiet, rc;
  rc = benchTemplateOpen(zReal, &db, &bQuiet);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(db, "SELECT 1 FROM sqlite_schema LIMIT 1", 0, 0, 0);
  }
  if( rc!=SQLITE_OK ){
    *pzWhy = sqlite3_mprintf("%s", db ? sqlite3_errmsg(db)
                                      : sqlite3_errstr(rc));
  }
  sqlite3_close_v2(db);
  return rc;
}

/* A copy of a WAL-mode database says so in its header (bytes 18 and 19 are
** 2), and the memdb VFS cannot run a WAL: storage=memory rewrites them to
** 1 (rollback), in the memdb file itself, and bumps the file change
** counter (bytes 24..27) so that the connection drops its cached page 1. */
static int benchMemdbNoWal(sqlite3 *db){
  sqlite3_file *pFile = 0;
  unsigned char a[10];
  unsigned int iCounter;
  int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &pFile);
  if( rc!=SQLITE_OK || pFile==0 || pFile->pMethods==0 ) return SQLITE_ERROR;
  rc = pFile->pMethods->xRead(pFile, a, sizeof(a), 18);
  if( rc!=SQLITE_OK || (a[0]!=2 && a[1]!=2) ) return rc;
  a[0] = a[1] = 1;
  iCounter = ((unsigned)a[6]<<24 | (unsigned)a[7]<<16
              | (unsigned)a[8]<<8 | a[9]) + 1;
  a[6] = (unsigned char)(iCounter>>24);
  a[7] = (unsigned char)(iCounter>>16);
  a[8] = (unsigned char)(iCounter>>8);
  a[9] = (unsigned char)iCounter;
  return pFile->pMethods->xWrite(pFile, a, sizeof(a), 18);
}

/* Copy the template into dbDest's main database (replacing all of it). */
int acorn_bench_template_copy(const bench_config *c, sqlite3 *dbDest,
                              char **pzErr){
  int iTry, rc = SQLITE_OK;
  for(iTry=0; iTry<3; iTry++){
    struct stat st0, st1;
    sqlite3 *dbSrc = 0;
    sqlite3_backup *pBackup;
    int bQuiet;
    if( stat(c->zTemplateReal, &st0)!=0 ){
      *pzErr = sqlite3_mprintf("cannot copy the template: %s",
                               strerror(errno));
      return SQLITE_CANTOPEN;
    }
    rc = benchTemplateOpen(c->zTemplateReal, &dbSrc, &bQuiet);
    if( rc==SQLITE_OK ){
      sqlite3_busy_timeout(dbSrc, c->iBusyTimeout);
      pBackup = sqlite3_backup_init(dbDest, "main", dbSrc, "main");
      if( pBackup==0 ){
        rc = sqlite3_errcode(dbDest);
        *pzErr = sqlite3_mprintf("cannot copy the template: %s",
                                 sqlite3_errmsg(dbDest));
      }else{
        rc = sqlite3_backup_step(pBackup, -1);
        if( rc==SQLITE_DONE ) rc = SQLITE_OK;
        sqlite3_backup_finish(pBackup);
        if( rc!=SQLITE_OK ){
          *pzErr = sqlite3_mprintf("cannot copy the template: %s",
              sqlite3_errcode(dbSrc)!=SQLITE_OK ? sqlite3_errmsg(dbSrc)
                                                : sqlite3_errstr(rc));
        }
      }
    }else{
      *pzErr = sqlite3_mprintf("cannot open the template: %s",
                 dbSrc ? sqlite3_errmsg(dbSrc) : sqlite3_errstr(rc));
    }
    sqlite3_close_v2(dbSrc);
    if( rc==SQLITE_OK && c->eStorage==BENCH_STORAGE_MEMORY ){
      rc = benchMemdbNoWal(dbDest);
      if( rc!=SQLITE_OK ){
        *pzErr = sqlite3_mprintf("cannot copy the template: %s",
                                 sqlite3_errstr(rc));
      }
    }
    if( rc!=SQLITE_OK || !bQuiet ) return rc;
    /* opened without locks: it must not have changed meanwhile */
    if( stat(c->zTemplateReal, &st1)==0 && !benchStatChanged(&st0, &st1)
     && !benchExists(c->zTemplateReal, "-wal")
     && !benchExists(c->zTemplateReal, "-journal") ){
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf("the template changed each time it was copied"
                           " (%d tries): copy it while its writers rest",
                           iTry);
  return SQLITE_BUSY;
}
