/*
** bench_scratch.c: bench_insert's scratch files (see benchInt.h): created
** exclusively under fresh names, registered while they live, and removed at
** exit and on a terminating signal, whose handling this file owns; and
** fsync_us, measured on one of them.
*/
#include "benchInt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* -------------------------------------------------------------------- */
/* Scratch files still live: removed at exit and on a terminating signal */
/*
** Every scratch file is in a registry from its creation until it is
** removed.  Two things read the registry outside the run that owns a file:
**
**   - an atexit hook, installed once: a host that calls exit() mid-run (the
**     sqlite3 shell does on the third Ctrl-C, from its SIGINT handler)
**     leaves no file behind;
**   - a handler of SIGTERM, SIGINT and SIGHUP, installed while at least one
**     file is live and replaced by what was there when the last one goes.
**
** The handler does only async-signal-safe work.  Where the signal had a
** handler of the host, it calls that handler (with the siginfo it got, if
** the host asked for one) and nothing else: the host decides, as if acorn
** were not there.  Where the signal was ignored, nothing is installed.
** Where it had the default action (terminate), the first signal is
** deferred: the handler records it, every run stops at its next row (the
** busy handler gives up too), cleans up as a failed run does, and the last
** run to remove its files puts the default back and raises the signal
** again, so the process dies of it (exit status 128+signal, what timeout(1),
** systemd and docker stop expect).  The files are removed before the
** connections close, so closing does not checkpoint them first.  If a
** second such signal comes before that (a run that cannot get going), the
** handler removes every registered file itself, puts the default back and
** raises it at once.
**
** Worker threads start with the three signals blocked, so the host's
** handlers run on the host's threads only, as they would without acorn.
**
** So that a signal handler can read it, the registry is a fixed array of
** slots taken and released with atomic operations, no lock and no malloc:
** a slot is FREE, BUSY (its owner writes it) or LIVE; iGen changes whenever
** the slot's path does, so a reader that copies a path while it changes
** (a seqlock) sees the change and skips the slot, whose file its owner has
** removed already.  The path of a scratch file is bounded by SQLite's own
** path limit (benchParseDir checks it), which fits in a slot.
*/
#define BENCH_LIVE_MAX   64       /* scratch files live at once, per process */

#define BENCH_LIVE_FREE  0
#define BENCH_LIVE_BUSY  1
#define BENCH_LIVE_LIVE  2

typedef struct bench_live bench_live;
struct bench_live {
  int eState;                  /* BENCH_LIVE_FREE, _BUSY or _LIVE (atomic) */
  unsigned int iGen;           /* bumped when zPath changes (atomic) */
  int bSideFiles;              /* also -wal, -shm, -journal */
  char zPath[BENCH_PATH_MAX];
};
static bench_live benchLive[BENCH_LIVE_MAX];

/* The signals handled, what was there before, and whether ours is in. */
#define BENCH_NSIG 3
static const int benchSigNo[BENCH_NSIG] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction benchSigOld[BENCH_NSIG];
static int benchSigMine[BENCH_NSIG];
/* A deferred signal (its number, atomic): every run stops (benchInt.h). */
int acorn_bench_sig_pending = 0;

static pthread_mutex_t benchLiveMutex = PTHREAD_MUTEX_INITIALIZER;
static int benchLiveCount = 0;         /* slots taken (under the mutex) */
static int benchLiveHook = 0;          /* the atexit hook is installed */

/* Unlink zPath and, if bSideFiles, its -wal, -shm and -journal: the
** database first, so that a writer still running cannot open a new
** journal beside it (SQLite refuses to write a database that has moved).
** Async-signal-safe: unlink() and byte copies into a stack buffer. */
void acorn_bench_unlink_all(const char *zPath, int bSideFiles){
  static const char *const azSuffix[] = { "-wal", "-shm", "-journal" };
  char zBuf[BENCH_PATH_MAX+16];
  size_t n = 0, m;
  int k;
  unlink(zPath);
  if( !bSideFiles ) return;
  while( zPath[n] && n<BENCH_PATH_MAX ) n++;
  if( n>=BENCH_PATH_MAX ) return;
  for(k=0; k<3; k++){
    memcpy(zBuf, zPath, n);
    for(m=0; azSuffix[k][m]; m++) zBuf[n+m] = azSuffix[k][m];
    zBuf[n+m] = 0;
    unlink(zBuf);
  }
}

/* Unlink the files of every live slot.  Async-signal-safe: used by the
** atexit hook and by the signal handler. */
static void benchLiveUnlinkAll(void){
  char zPath[BENCH_PATH_MAX];
  int i;
  for(i=0; i<BENCH_LIVE_MAX; i++){
    bench_live *p = &benchLive[i];
    unsigned int g = __atomic_load_n(&p->iGen, __ATOMIC_ACQUIRE);
    int bSide;
    if( __atomic_load_n(&p->eState, __ATOMIC_ACQUIRE)!=BENCH_LIVE_LIVE ){
      continue;
    }
    memcpy(zPath, p->zPath, sizeof(zPath));
    bSide = p->bSideFiles;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if( __atomic_load_n(&p->iGen, __ATOMIC_RELAXED)!=g ) continue;
    zPath[sizeof(zPath)-1] = 0;
    acorn_bench_unlink_all(zPath, bSide);
  }
}

static void benchLiveAtExit(void){
  benchLiveUnlinkAll();
}

static void benchSigHandler(int sig, siginfo_t *pInfo, void *pCtx){
  int e = errno, k;
  for(k=0; k<BENCH_NSIG && benchSigNo[k]!=sig; k++){}
  if( k<BENCH_NSIG ){
    struct sigaction *pOld = &benchSigOld[k];
    if( pOld->sa_handler!=SIG_DFL && pOld->sa_handler!=SIG_IGN ){
      /* the host's handler: call it, and only it */
      int bOnce = (pOld->sa_flags & SA_RESETHAND)!=0;
      if( pOld->sa_flags & SA_SIGINFO ){
        void (*xAction)(int, siginfo_t*, void*) = pOld->sa_sigaction;
        if( bOnce ){ pOld->sa_handler = SIG_DFL; pOld->sa_flags = 0; }
        xAction(sig, pInfo, pCtx);
      }else{
        void (*xHandler)(int) = pOld->sa_handler;
        if( bOnce ){ pOld->sa_handler = SIG_DFL; pOld->sa_flags = 0; }
        xHandler(sig);
      }
    }else if( __atomic_exchange_n(&acorn_bench_sig_pending, sig, __ATOMIC_SEQ_CST)
              !=0 ){
      /* the second: remove the files now and die of the signal (it is
      ** blocked in this handler, so it arrives when the handler returns) */
      benchLiveUnlinkAll();
      sigaction(sig, pOld, 0);
      raise(sig);
    }
    /* else the first: every run stops, and the last one re-raises it */
  }
  errno = e;
}

/* Install the handler for each signal not ignored.  Under benchLiveMutex. */
static void benchSignalsInstall(void){
  int k;
  for(k=0; k<BENCH_NSIG; k++){
    struct sigaction old, sa;
    benchSigMine[k] = 0;
    if( sigaction(benchSigNo[k], 0, &old)!=0 || old.sa_handler==SIG_IGN ){
      continue;
    }
    benchSigOld[k] = old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = benchSigHandler;
    sa.sa_mask = old.sa_mask;       /* what the host's handler expects */
    /* SA_ONSTACK: a Go host runs signal handlers on its alternate stacks */
    sa.sa_flags = SA_SIGINFO|SA_ONSTACK;
    if( old.sa_handler==SIG_DFL ){
      sa.sa_flags |= SA_RESTART;
    }else{
      sa.sa_flags |= old.sa_flags & (SA_RESTART|SA_NODEFER);
    }
    if( sigaction(benchSigNo[k], &sa, 0)==0 ) benchSigMine[k] = 1;
  }
}

/* Put back what was there, unless the host has replaced ours since.
** Under benchLiveMutex. */
static void benchSignalsRestore(void){
  int k;
  for(k=0; k<BENCH_NSIG; k++){
    struct sigaction cur;
    if( !benchSigMine[k] ) continue;
    benchSigMine[k] = 0;
    if( sigaction(benchSigNo[k], 0, &cur)==0
     && (cur.sa_flags & SA_SIGINFO)!=0 && cur.sa_sigaction==benchSigHandler ){
      sigaction(benchSigNo[k], &benchSigOld[k], 0);
    }
  }
}

/* Block (bBlock) the three signals in the calling thread, saving its mask
** in *pOld, or put *pOld back.  Threads started in between inherit the
** block. */
void acorn_bench_signals_block(int bBlock, sigset_t *pOld){
  if( bBlock ){
    sigset_t set;
    int k;
    sigemptyset(&set);
    for(k=0; k<BENCH_NSIG; k++) sigaddset(&set, benchSigNo[k]);
    pthread_sigmask(SIG_BLOCK, &set, pOld);
  }else{
    pthread_sigmask(SIG_SETMASK, pOld, 0);
  }
}

/* Take a slot (BUSY): the first slot taken installs the signal handlers,
** so take one before creating the file it will hold.  The slot's index, or
** -1 if every slot is taken. */
static int benchLiveReserve(void){
  int i;
  pthread_mutex_lock(&benchLiveMutex);
  for(i=0; i<BENCH_LIVE_MAX; i++){
    int eFree = BENCH_LIVE_FREE;
    if( __atomic_compare_exchange_n(&benchLive[i].eState, &eFree,
            BENCH_LIVE_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED) ) break;
  }
  if( i<BENCH_LIVE_MAX ){
    if( benchLiveCount++==0 ) benchSignalsInstall();
    if( !benchLiveHook ) benchLiveHook = atexit(benchLiveAtExit)==0;
  }
  pthread_mutex_unlock(&benchLiveMutex);
  return i<BENCH_LIVE_MAX ? i : -1;
}

/* Slot i now holds zPath (which fits: benchParseDir checks the length),
** a file just created. */
static void benchLivePublish(int i, const char *zPath, int bSideFiles){
  bench_live *p = &benchLive[i];
  size_t n = strlen(zPath);
  if( n>=BENCH_PATH_MAX ) n = BENCH_PATH_MAX-1;
  __atomic_fetch_add(&p->iGen, 1, __ATOMIC_ACQ_REL);
  memcpy(p->zPath, zPath, n);
  p->zPath[n] = 0;
  p->bSideFiles = bSideFiles;
  __atomic_fetch_add(&p->iGen, 1, __ATOMIC_ACQ_REL);
  __atomic_store_n(&p->eState, BENCH_LIVE_LIVE, __ATOMIC_RELEASE);
}

/* Free slot i.  The last slot freed puts the signal handlers back and, if
** a terminating signal was deferred, raises it again now that the files
** are gone. */
static void benchLiveRelease(int i){
  bench_live *p = &benchLive[i];
  int sig = 0;
  pthread_mutex_lock(&benchLiveMutex);
  __atomic_store_n(&p->eState, BENCH_LIVE_BUSY, __ATOMIC_RELEASE);
  __atomic_fetch_add(&p->iGen, 1, __ATOMIC_ACQ_REL);
  p->zPath[0] = 0;
  __atomic_store_n(&p->eState, BENCH_LIVE_FREE, __ATOMIC_RELEASE);
  if( --benchLiveCount==0 ){
    benchSignalsRestore();
    sig = __atomic_exchange_n(&acorn_bench_sig_pending, 0, __ATOMIC_SEQ_CST);
  }
  pthread_mutex_unlock(&benchLiveMutex);
  if( sig ){
    /* what the signal would have done: to this thread if it can take it
    ** (delivered before raise returns), else to the process */
    sigset_t cur;
    if( pthread_sigmask(SIG_BLOCK, 0, &cur)==0 && !sigismember(&cur, sig) ){
      raise(sig);
    }else{
      kill(getpid(), sig);
    }
  }
}

/* Remove zPath (and its side files if registered so), then free its slot. */
void acorn_bench_live_remove(const char *zPath){
  int i, bSide = 1;
  for(i=0; i<BENCH_LIVE_MAX; i++){
    bench_live *p = &benchLive[i];
    if( __atomic_load_n(&p->eState, __ATOMIC_ACQUIRE)==BENCH_LIVE_LIVE
     && strcmp(p->zPath, zPath)==0 ){
      bSide = p->bSideFiles;
      break;
    }
  }
  acorn_bench_unlink_all(zPath, bSide);     /* first: a signal now finds it live */
  if( i<BENCH_LIVE_MAX ) benchLiveRelease(i);
}

/* Create a fresh scratch file name in zDir exclusively: *pzPath, and, if
** pFd is not NULL, the open descriptor in *pFd.  It is registered as live
** until acorn_bench_live_remove(). */
int acorn_bench_create_scratch(const char *zDir, const char *zPrefix,
                               const char *zSuffix, int bSideFiles,
                               char **pzPath, int *pFd, char **pzErr){
  int iTry;
  for(iTry=0; iTry<100; iTry++){
    unsigned char a[8];
    char zHex[17];
    char *zPath;
    int fd, k, iSlot;
    struct stat st;
    acorn_random(a, sizeof(a));
    for(k=0; k<8; k++) sqlite3_snprintf(3, zHex+2*k, "%02x", a[k]);
    zPath = sqlite3_mprintf("%s/%s%s%s", zDir, zPrefix, zHex, zSuffix);
    if( zPath==0 ) return SQLITE_NOMEM;
    if( bSideFiles ){
      static const char *const azSide[] = { "-wal", "-shm", "-journal" };
      int bTaken = 0;
      for(k=0; k<3 && !bTaken; k++){
        char *zSide = sqlite3_mprintf("%s%s", zPath, azSide[k]);
        if( zSide==0 ){ sqlite3_free(zPath); return SQLITE_NOMEM; }
        if( lstat(zSide, &st)==0 || errno!=ENOENT ) bTaken = 1;
        sqlite3_free(zSide);
      }
      if( bTaken ){ sqlite3_free(zPath); continue; }
    }
    iSlot = benchLiveReserve();
    if( iSlot<0 ){
      *pzErr = sqlite3_mprintf("more than %d scratch files at once in this"
                               " process", BENCH_LIVE_MAX);
      sqlite3_free(zPath);
      return SQLITE_ERROR;
    }
    fd = open(zPath, O_CREAT|O_EXCL|O_RDWR|O_CLOEXEC|O_NOFOLLOW, 0600);
    if( fd<0 ){
      int e = errno;
      benchLiveRelease(iSlot);
      if( e==EEXIST ){ sqlite3_free(zPath); continue; }
      *pzErr = sqlite3_mprintf("cannot create a scratch file %s: %s",
                               zPath, strerror(e));
      sqlite3_free(zPath);
      return SQLITE_CANTOPEN;
    }
    benchLivePublish(iSlot, zPath, bSideFiles);
    if( pFd ) *pFd = fd;      /* the caller writes the file it created */
    else close(fd);
    *pzPath = zPath;
    return SQLITE_OK;
  }
  *pzErr = sqlite3_mprintf("cannot find a free scratch file name in %s", zDir);
  return SQLITE_CANTOPEN;
}

/* fsync_us: median of 5 (4 KiB pwrite + fsync) on a new file in zDir. */
int acorn_bench_fsync_us(const char *zDir, double *pUs, char **pzErr){
  char *zPath = 0;
  char aBuf[4096];
  sqlite3_int64 aT[5], t;
  int rc, fd, i, j;
  rc = acorn_bench_create_scratch(zDir, "acorn-fsync-", ".tmp", 0, &zPath, &fd,
                          pzErr);
  if( rc!=SQLITE_OK ) return rc;
  memset(aBuf, 'a', sizeof(aBuf));
  for(i=0; i<5 && rc==SQLITE_OK; i++){
    aBuf[0] = (char)('a'+i);
    t = acorn_bench_mono();
    if( pwrite(fd, aBuf, sizeof(aBuf), 0)!=(ssize_t)sizeof(aBuf)
     || fsync(fd)!=0 ){
      *pzErr = sqlite3_mprintf("cannot write and fsync %s: %s", zPath,
                               strerror(errno));
      rc = SQLITE_IOERR;
    }
    aT[i] = acorn_bench_mono() - t;
  }
  close(fd);
  acorn_bench_live_remove(zPath);
  sqlite3_free(zPath);
  if( rc!=SQLITE_OK ) return rc;
  for(i=1; i<5; i++){                       /* insertion sort of 5 */
    for(j=i; j>0 && aT[j-1]>aT[j]; j--){
      t = aT[j]; aT[j] = aT[j-1]; aT[j-1] = t;
    }
  }
  *pUs = (double)aT[2]/1000.0;
  return SQLITE_OK;
}
