/*
** bench_hist.c: the latency histogram of bench_insert's long runs against
** the exact percentiles of the same values.
**
** Built from ext/bench/bench_run.c itself (included here, so its static helpers
** are reachable) and the other sources in ext/, with -DSQLITE_CORE.
** Checks what bench_run.c promises for runs of more than BENCH_EXACT_MAX
** rows:
**   - every value falls in a bucket whose middle is within 1/256 of it,
**     and values below 256 ns are exact; the largest uint64 has a bucket;
**   - buckets are ordered: a larger value never gets a smaller bucket;
**   - the value of any rank, read from the histogram, is within 1/256 of
**     the exact value of that rank, for several distributions of values.
** Prints "ok ..." and exits 0, or what failed and exits 1.
*/
#include "bench/bench_run.c"
#include <stdio.h>

#define CHECK(cond, ...) \
  do{ if(!(cond)){ printf(__VA_ARGS__); printf("\n"); return 1; } }while(0)

static uint64_t iState = 0x9E3779B97F4A7C15ULL;
static uint64_t nextRand(void){
  iState ^= iState<<13; iState ^= iState>>7; iState ^= iState<<17;
  return iState;
}

/* |got - want| <= want/256 (0 when want is below 256: exact) */
static int near(uint64_t got, uint64_t want){
  uint64_t d = got>want ? got-want : want-got;
  return d*256 <= want;
}

static int cmpU64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

/* n values from distribution eDist, counted and sorted; every rank in
** steps compared. */
static int checkDist(int eDist, int n){
  static uint64_t aSum[BENCH_HIST_N];
  uint64_t *a = malloc(sizeof(uint64_t)*(size_t)n);
  int i;
  CHECK(a!=0, "out of memory");
  memset(aSum, 0, sizeof(aSum));
  for(i=0; i<n; i++){
    uint64_t v;
    switch( eDist ){
      case 0:  v = 1 + nextRand()%300; break;               /* near exact */
      case 1:  v = 1000 + nextRand()%1000000; break;        /* uniform */
      case 2:  v = (uint64_t)1 << (nextRand()%40);          /* powers */
               v += nextRand()%v; break;
      default: v = nextRand()%100==0 ? 1000000000ULL + nextRand()%1000000000ULL
                                     : 20000 + nextRand()%5000;  /* tail */
    }
    a[i] = v;
    aSum[benchHistIndex(v)]++;
  }
  qsort(a, (size_t)n, sizeof(uint64_t), cmpU64);
  for(i=1; i<=n; i+= 1 + n/997){
    uint64_t got = benchHistRank(aSum, i);
    CHECK(near(got, a[i-1]), "dist %d n %d rank %d: histogram %llu, exact"
          " %llu", eDist, n, i, (unsigned long long)got,
          (unsigned long long)a[i-1]);
  }
  {
    sqlite3_int64 i50 = (n+1)/2, i99 = ((sqlite3_int64)n*99+99)/100;
    CHECK(near(benchHistRank(aSum, i50), a[i50-1])
          && near(benchHistRank(aSum, i99), a[i99-1]),
          "dist %d: p50 or p99 off", eDist);
  }
  free(a);
  return 0;
}

int main(void){
  uint64_t v;
  int i, iPrev = -1;
  /* buckets: exact below 256, within 1/256 above, ordered, all in range */
  for(v=0; v<70000; v++){
    int k = benchHistIndex(v);
    unsigned long long x = v, m = benchHistValue(k);
    CHECK(k>=iPrev, "bucket of %llu below the previous one", x);
    CHECK(k<BENCH_HIST_N, "bucket of %llu out of range", x);
    CHECK(near(m, v), "value %llu, bucket middle %llu", x, m);
    CHECK(v>=256 || m==v, "value %llu is not exact", x);
    iPrev = k;
  }
  for(i=0; i<200000; i++){
    int k;
    v = nextRand() >> (nextRand()%64);
    k = benchHistIndex(v);
    CHECK(k<BENCH_HIST_N, "bucket of %llu out of range", (unsigned long long)v);
    CHECK(near(benchHistValue(k), v), "value %llu, bucket middle %llu",
          (unsigned long long)v, (unsigned long long)benchHistValue(k));
  }
  CHECK(benchHistIndex(UINT64_MAX)==BENCH_HIST_N-1, "the largest value is not"
        " in the last bucket");
  for(i=0; i<4; i++){
    if( checkDist(i, 1000) || checkDist(i, 100003) ) return 1;
  }
  printf("ok buckets within 1/256 (exact below 256 ns), ranks within 1/256"
         " of exact for 4 distributions\n");
  return 0;
}
