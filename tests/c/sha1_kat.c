/*
** sha1_kat.c: known answers for acorn's SHA-1 (ext/ids/sha1.c).
**
** FIPS 180's examples: "abc", the empty string, the 448-bit message
** "abcdbcdecdefdefg...nopq", the 896-bit message "abcdefghbcdefghi...nopqrstu"
** and one million 'a'.  Each message is hashed whole, and again fed in
** pieces of every length from 1 to 130 bytes in turn, so that pieces end on,
** before and after every block boundary.
**
** Prints "ok ..." and exits 0, or what failed and exits 1.
*/
#include "acorn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hexOf(const unsigned char *a, int n, char *z){
  int i;
  for(i=0; i<n; i++) sprintf(z+2*i, "%02x", a[i]);
}

/* Hash z[0..n) whole (iPiece 0) or in pieces of 1, 2, ... iPiece bytes,
** cycling, and compare with zHex.  Return 0 if equal. */
static int check(const char *zName, const char *z, size_t n, int iPiece,
                 const char *zHex){
  acorn_sha1 s;
  unsigned char a[20];
  char zGot[41];
  size_t i = 0;
  int k = 1;
  acorn_sha1_init(&s);
  if( iPiece==0 ){
    acorn_sha1_update(&s, z, n);
  }else{
    while( i<n ){
      size_t nTake = (size_t)k < n-i ? (size_t)k : n-i;
      acorn_sha1_update(&s, z+i, nTake);
      i += nTake;
      k = k%iPiece + 1;
    }
  }
  acorn_sha1_final(&s, a);
  hexOf(a, 20, zGot);
  if( strcmp(zGot, zHex)!=0 ){
    printf("%s (pieces up to %d bytes): got %s, expected %s\n", zName, iPiece, zGot, zHex);
    return 1;
  }
  return 0;
}

int main(void){
  static const struct { const char *zName; const char *zMsg; const char *zHex; } aKat[] = {
    { "abc", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
    { "the empty string", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
    { "the 448-bit message",
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
    { "the 896-bit message",
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
      "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "a49b2446a02c645bf419f995b67091253a04a259" },
  };
  const char *zMillionHex = "34aa973cd4c4daa4f61eeb2bdbad27316534016f";
  char *zMillion = malloc(1000000);
  size_t i;
  int iPiece;
  if( zMillion==0 ) return 1;
  memset(zMillion, 'a', 1000000);
  for(iPiece=0; iPiece<=130; iPiece++){
    for(i=0; i<sizeof(aKat)/sizeof(aKat[0]); i++){
      if( check(aKat[i].zName, aKat[i].zMsg, strlen(aKat[i].zMsg), iPiece, aKat[i].zHex) ) return 1;
    }
  }
  for(iPiece=0; iPiece<=130; iPiece+=65){
    if( check("one million 'a'", zMillion, 1000000, iPiece, zMillionHex) ) return 1;
  }
  free(zMillion);
  printf("ok sha1 meets FIPS 180's abc, empty, 448-bit, 896-bit and million-a answers, whole and in pieces\n");
  return 0;
}
