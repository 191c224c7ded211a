/*
** random.c: the random source and the clock that acorn's ids use.
**
**   void acorn_random(void *pOut, size_t n);   n bytes of keystream
**   int64_t acorn_now_ns(void);                 unix time in nanoseconds
**
** HOW IT WORKS
**
** Each thread owns a ChaCha20 generator (RFC 8439 block function, eight
** blocks at a time in 8-lane vectors) in thread-local storage, so the hot
** path takes no lock and shares no cache line with other threads.  A
** generator is seeded with a 256-bit key from getrandom(2) (falling back to
** /dev/urandom, then to sqlite3_randomness) the first time its thread asks
** for bytes.
**
** A refill computes ACORN_RNG_BLOCKS (16) blocks of keystream into the
** thread's 1 KiB buffer, in groups of 8 stored word-interleaved (word i of
** block 8g+b at byte 512g + 32i + 4b), takes the first 32 bytes as the next
** key (little-endian words, as RFC 8439 reads a key) and wipes them ("fast
** key erasure"): bytes already handed out cannot be recomputed from the
** state that stays in memory.  The other 992 bytes are handed out in
** order.  The block counter therefore restarts at 0 on every refill and the
** nonce is always zero; the key never repeats.  tests/c/chacha_kat.c checks
** the block function against RFC 8439's vectors and this stream against
** its own plain ChaCha20.
**
** fork(): a pthread_atfork child handler, registered once per load, marks
** the calling thread's generator unseeded (the child has only that thread),
** so parent and child never share a stream.  glibc removes the handler when
** the shared object is unloaded.
*/
#include "acorn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
# include <sys/random.h>
#endif

#define ACORN_RNG_BLOCKS 16
#define ACORN_RNG_BUF    (64*ACORN_RNG_BLOCKS)

typedef struct acorn_rng acorn_rng;
struct acorn_rng {
  uint32_t aKey[8];                  /* current ChaCha20 key */
  unsigned char aBuf[ACORN_RNG_BUF]; /* keystream; the tail nAvail bytes unused */
  unsigned nAvail;                   /* unused bytes at the end of aBuf */
  int bSeeded;                       /* 0 until seeded, again 0 after fork */
};

static __thread acorn_rng tRng;
static pthread_once_t gAtforkOnce = PTHREAD_ONCE_INIT;

/* Eight ChaCha blocks at once, one per lane of 8 x 32-bit vectors (GCC
** vector extensions: AVX2 or two SSE2 halves on x86-64, NEON on arm64,
** plain code elsewhere). */
typedef uint32_t acorn_v8 __attribute__((vector_size(32)));

#define ROTV(v,n) (((v)<<(n)) | ((v)>>(32-(n))))
#define QROUND(a,b,c,d) \
  a += b; d ^= a; d = ROTV(d,16); \
  c += d; b ^= c; b = ROTV(b,12); \
  a += b; d ^= a; d = ROTV(d, 8); \
  c += d; b ^= c; b = ROTV(b, 7)

/* Blocks iCtr..iCtr+7 of the ChaCha keystream for aKey and aNonce (the
** generator's is all zero) into pOut[0..511], word-interleaved (see the
** end).  Built twice, for AVX2 and for the baseline ISA, and picked at load
** time (an ifunc). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2","default")))
#endif
static void chachaBlocks8(const uint32_t aKey[8], uint32_t iCtr,
                          const uint32_t aNonce[3], unsigned char *pOut){
  static const uint32_t aSigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
  acorn_v8 s[16], x[16];
  int i, j;
  for(i=0; i<4; i++) s[i] = (acorn_v8){ 0 } + aSigma[i];
  for(i=0; i<8; i++) s[4+i] = (acorn_v8){ 0 } + aKey[i];
  s[12] = (acorn_v8){ 0, 1, 2, 3, 4, 5, 6, 7 } + iCtr;
  for(i=0; i<3; i++) s[13+i] = (acorn_v8){ 0 } + aNonce[i];
  memcpy(x, s, sizeof(x));
  for(i=0; i<10; i++){           /* 10 double rounds: ChaCha20 */
    QROUND(x[0], x[4], x[ 8], x[12]);
    QROUND(x[1], x[5], x[ 9], x[13]);
    QROUND(x[2], x[6], x[10], x[14]);
    QROUND(x[3], x[7], x[11], x[15]);
    QROUND(x[0], x[5], x[10], x[15]);
    QROUND(x[1], x[6], x[11], x[12]);
    QROUND(x[2], x[7], x[ 8], x[13]);
    QROUND(x[3], x[4], x[ 9], x[14]);
  }
  /* Word i of the 8 blocks is one vector: stored as is, the output is the
  ** 8 blocks' keystream word-interleaved (a fixed permutation of it), which
  ** spares 128 lane extractions per call. */
  for(i=0; i<16; i++){
    x[i] += s[i];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
    for(j=0; j<8; j++) x[i][j] = __builtin_bswap32(x[i][j]);
#endif
    memcpy(pOut + 32*i, &x[i], 32);
  }
  (void)j;
}

/* Words w[0..n-1] from the little-endian bytes p[0..4n-1], as RFC 8439
** reads a key. */
static void rngLoadWords(uint32_t *w, const unsigned char *p, int n){
  int i;
  for(i=0; i<n; i++){
    w[i] = (uint32_t)p[4*i] | (uint32_t)p[4*i+1]<<8
         | (uint32_t)p[4*i+2]<<16 | (uint32_t)p[4*i+3]<<24;
  }
}

static void rngAfterFork(void){
  tRng.bSeeded = 0;
  tRng.nAvail = 0;
}

static void rngRegisterAtfork(void){
  pthread_atfork(0, 0, rngAfterFork);
}

/* Fill p[0..n-1] from the operating system. */
static void rngSeedBytes(unsigned char *p, size_t n){
  size_t got = 0;
#if defined(__linux__)
  while( got<n ){
    ssize_t r = getrandom(p+got, n-got, 0);
    if( r<0 ){
      if( errno==EINTR ) continue;
      break;
    }
    got += (size_t)r;
  }
#endif
  if( got<n ){
    int fd = open("/dev/urandom", O_RDONLY|O_CLOEXEC);
    if( fd>=0 ){
      while( got<n ){
        ssize_t r = read(fd, p+got, n-got);
        if( r<0 && errno==EINTR ) continue;
        if( r<=0 ) break;
        got += (size_t)r;
      }
      close(fd);
    }
  }
  if( got<n ){
    /* Last resort: SQLite's own CSPRNG, itself seeded by the OS layer. */
    sqlite3_randomness((int)(n-got), p+got);
  }
}

static void rngRefill(acorn_rng *p){
  static const uint32_t aZeroNonce[3] = { 0, 0, 0 };
  int i;
  if( !p->bSeeded ){
    pthread_once(&gAtforkOnce, rngRegisterAtfork);
    rngSeedBytes((unsigned char*)p->aKey, sizeof(p->aKey));
    p->bSeeded = 1;
  }
  for(i=0; i<ACORN_RNG_BLOCKS; i+=8){
    chachaBlocks8(p->aKey, (uint32_t)i, aZeroNonce, p->aBuf + 64*i);
  }
  rngLoadWords(p->aKey, p->aBuf, 8);
  memset(p->aBuf, 0, sizeof(p->aKey));
  p->nAvail = ACORN_RNG_BUF - sizeof(p->aKey);
}

void acorn_random(void *pOut, size_t n){
  acorn_rng *p = &tRng;
  unsigned char *z = (unsigned char*)pOut;
  /* nAvail is 0 until seeded and again after fork(), so one test covers
  ** the fast path; copied bytes are wiped from the buffer. */
  while( n>p->nAvail ){
    size_t k = p->nAvail;
    unsigned char *zSrc = p->aBuf + ACORN_RNG_BUF - k;
    memcpy(z, zSrc, k);
    memset(zSrc, 0, k);
    z += k;
    n -= k;
    rngRefill(p);
  }
  {
    unsigned char *zSrc = p->aBuf + ACORN_RNG_BUF - p->nAvail;
    memcpy(z, zSrc, n);
    memset(zSrc, 0, n);
    p->nAvail -= (unsigned)n;
  }
}

#ifdef ACORN_TESTING
int64_t (*acorn_test_clock)(void) = 0;   /* tests/c/uuid_clock.c sets it */

/* tests/c/chacha_kat.c: the block function on RFC 8439's key, counter and
** nonce bytes; and the calling thread's generator set to a known key. */
void acorn_test_chacha_blocks8(const unsigned char aKey[32], uint32_t iCtr,
                               const unsigned char aNonce[12],
                               unsigned char aOut[512]){
  uint32_t k[8], n[3];
  rngLoadWords(k, aKey, 8);
  rngLoadWords(n, aNonce, 3);
  chachaBlocks8(k, iCtr, n, aOut);
}

void acorn_test_random_key(const unsigned char aKey[32]){
  rngLoadWords(tRng.aKey, aKey, 8);
  tRng.bSeeded = 1;
  tRng.nAvail = 0;
}
#endif

int64_t acorn_now_ns(void){
  struct timespec ts;
#ifdef ACORN_TESTING
  if( acorn_test_clock ) return acorn_test_clock();
#endif
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec*1000000000 + ts.tv_nsec;
}
