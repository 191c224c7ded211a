/*
** splitmix.h: the pseudo-random numbers of cache_crash.c and cache_load.c,
** included by each from this directory (#include "splitmix.h", found
** beside the including file with no -I).
**
** splitmix(x) is SplitMix64's finalizer: any 64 bits in, well-mixed bits
** out, so a program can derive a value's length and bytes from its version
** or key alone, and check them on read.  rnd(n) is a number in [0, n) from
** the sequence in gRand, which each program seeds from its SEED argument
** (and the trial or worker), so a failing run can be repeated.
*/
#ifndef SPLITMIX_H
#define SPLITMIX_H

static unsigned long long splitmix(unsigned long long x){
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x>>30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x>>27)) * 0x94D049BB133111EBULL;
  return x ^ (x>>31);
}
static unsigned long long gRand;
static unsigned rnd(unsigned n){
  gRand = splitmix(gRand);
  return (unsigned)((gRand>>33) % n);
}

#endif /* SPLITMIX_H */
