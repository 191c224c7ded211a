/*
** uuid_clock.c: uuid7 and uuid8 against an injected clock.
**
** Built from the sources in ext/ with -DSQLITE_CORE -DACORN_TESTING, so the test can
** hold the clock still, step it back and jump it forward, and check what
** ext/ids/uuid.c promises:
**   - a held clock: uuid7 counts in rand_a and carries into the timestamp
**     on overflow; uuid8 adds one to its 60 time bits; both strictly increase
**   - a clock stepped back: the last timestamp is kept, order holds
**   - a new millisecond: uuid7's counter restarts below 0x800 (top bit clear)
** Prints "ok ..." and exits 0, or what failed and exits 1.
*/
#include "acorn.h"
#include <stdio.h>
#include <string.h>

static int64_t iFakeNs;
static int64_t fakeClock(void){ return iFakeNs; }

static uint64_t ms48(const unsigned char *a){
  uint64_t v = 0;
  int i;
  for(i=0; i<6; i++) v = (v<<8) | a[i];
  return v;
}
static unsigned randA(const unsigned char *a){ return (unsigned)((a[6]&0x0f)<<8 | a[7]); }

#define CHECK(cond, ...) do{ if(!(cond)){ printf(__VA_ARGS__); printf("\n"); return 1; } }while(0)

static int run(int iVersion){
  void (*xMake)(unsigned char*) = iVersion==7 ? acorn_uuid7 : acorn_uuid8;
  unsigned char aPrev[16], a[16];
  const int64_t T = 1700000000000LL*1000000 + 250000;   /* .25 ms past a ms */
  int i, bCarried = 0;

  iFakeNs = T;
  xMake(aPrev);
  CHECK(ms48(aPrev)==1700000000000ULL, "v%d: first id has ms %llu", iVersion,
        (unsigned long long)ms48(aPrev));
  if( iVersion==7 ){
    CHECK(randA(aPrev)<0x800, "v7: counter starts at %#x, top bit set", randA(aPrev));
  }else{
    CHECK(randA(aPrev)==1024, "v8: fraction of .25 ms is %u, not 1024", randA(aPrev));
  }
  /* Clock held: 10000 ids must strictly increase and carry past the ms. */
  for(i=0; i<10000; i++){
    xMake(a);
    CHECK(memcmp(aPrev, a, 16)<0, "v%d: held clock, id %d not greater", iVersion, i);
    CHECK((a[6]>>4)==iVersion && (a[8]&0xc0)==0x80, "v%d: bad version/variant", iVersion);
    if( ms48(a)>1700000000000ULL ) bCarried = 1;
    memcpy(aPrev, a, 16);
  }
  CHECK(bCarried, "v%d: 10000 ids in one ms never carried into the timestamp", iVersion);
  /* Clock steps back one second: order holds, timestamp not lowered. */
  iFakeNs = T - 1000000000LL;
  for(i=0; i<100; i++){
    xMake(a);
    CHECK(memcmp(aPrev, a, 16)<0, "v%d: clock stepped back, id %d not greater", iVersion, i);
    CHECK(ms48(a)>=1700000000000ULL, "v%d: timestamp went back", iVersion);
    memcpy(aPrev, a, 16);
  }
  /* Clock jumps ahead: the new ms is used at once. */
  iFakeNs = T + 5000000000LL;
  xMake(a);
  CHECK(memcmp(aPrev, a, 16)<0, "v%d: jump ahead not greater", iVersion);
  CHECK(ms48(a)==1700000005000ULL, "v%d: jump ahead gave ms %llu", iVersion,
        (unsigned long long)ms48(a));
  if( iVersion==7 ){
    CHECK(randA(a)<0x800, "v7: counter after a new ms is %#x", randA(a));
  }else{
    CHECK(randA(a)==1024, "v8: fraction after jump is %u", randA(a));
  }
  return 0;
}

int main(void){
  acorn_test_clock = fakeClock;
  if( run(7) || run(8) ) return 1;
  printf("ok uuid7 and uuid8 hold order with a held, stepped-back and jumping clock\n");
  return 0;
}
