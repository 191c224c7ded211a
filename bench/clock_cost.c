/*
** clock_cost.c: what one wall-clock read costs, for bench/uuid.sh.
**
** uuid7() and uuid8() read CLOCK_REALTIME once per id; on a VM whose clock
** source is kvm-clock that read alone can cost a third of randomblob(16).
** Prints the median over 5 rounds of 2,000,000 calls, in ns per call.
*/
#define BENCH_NAME "clock_cost"
#include "bench_util.h"

int main(void){
  enum { N = 2000000, ROUNDS = 5 };
  double a[ROUNDS];
  long sink = 0;
  int r, i;
  for(r=0; r<ROUNDS; r++){
    struct timespec ts;
    long long t0 = benchClockNs();
    for(i=0; i<N; i++){
      clock_gettime(CLOCK_REALTIME, &ts);
      sink += ts.tv_nsec;
    }
    a[r] = (double)(benchClockNs()-t0)/N;
  }
  printf("%.1f\n", benchMedian(a, ROUNDS) + (sink==42 ? 1e-9 : 0));
  return 0;
}
