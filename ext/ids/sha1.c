/*
** sha1.c: SHA-1 (FIPS 180-4), for name-based version 5 UUIDs (uuid.c).
**
**   acorn_sha1 s;
**   acorn_sha1_init(&s);
**   acorn_sha1_update(&s, pData, nData);     any number of times
**   acorn_sha1_final(&s, aDigest);           20 bytes
**
** SHA-1 is broken for collision resistance; RFC 9562 5.5 keeps it for
** version 5 only because the version fixes the algorithm, and acorn uses it
** for nothing else.  No SQL function is registered here.
**
** HOW IT WORKS
**
** The message is taken in 64-byte blocks: bytes are gathered in aBuf until
** a block is full, then sha1Block runs the 80 rounds on it.  The final call
** appends 0x80, zeros up to 56 bytes into a block, and the message length
** in bits as a big-endian 64-bit number, as FIPS 180-4 5.1.1 pads.
** tests/c/sha1_kat.c checks it against FIPS 180's known answers.
*/
#include "acorn.h"

#include <string.h>

#define SHA1_ROL(x, n) (((x)<<(n)) | ((x)>>(32-(n))))

static void sha1Block(uint32_t aH[5], const unsigned char *p){
  uint32_t w[80];
  uint32_t a, b, c, d, e, f, k, t;
  int i;
  for(i=0; i<16; i++){
    w[i] = (uint32_t)p[4*i]<<24 | (uint32_t)p[4*i+1]<<16
         | (uint32_t)p[4*i+2]<<8 | (uint32_t)p[4*i+3];
  }
  for(i=16; i<80; i++){
    w[i] = SHA1_ROL(w[i-3] ^ w[i-8] ^ w[i-14] ^ w[i-16], 1);
  }
  a = aH[0]; b = aH[1]; c = aH[2]; d = aH[3]; e = aH[4];
  for(i=0; i<80; i++){
    if( i<20 ){
      f = (b & c) | (~b & d);          k = 0x5a827999;
    }else if( i<40 ){
      f = b ^ c ^ d;                   k = 0x6ed9eba1;
    }else if( i<60 ){
      f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc;
    }else{
      f = b ^ c ^ d;                   k = 0xca62c1d6;
    }
    t = SHA1_ROL(a, 5) + f + e + k + w[i];
    e = d; d = c; c = SHA1_ROL(b, 30); b = a; a = t;
  }
  aH[0] += a; aH[1] += b; aH[2] += c; aH[3] += d; aH[4] += e;
}

void acorn_sha1_init(acorn_sha1 *p){
  p->aH[0] = 0x67452301;
  p->aH[1] = 0xefcdab89;
  p->aH[2] = 0x98badcfe;
  p->aH[3] = 0x10325476;
  p->aH[4] = 0xc3d2e1f0;
  p->nByte = 0;
}

void acorn_sha1_update(acorn_sha1 *p, const void *pData, size_t n){
  const unsigned char *z = (const unsigned char*)pData;
  unsigned nUsed = (unsigned)(p->nByte & 63);
  p->nByte += n;
  if( nUsed ){
    size_t nTake = 64-nUsed < n ? 64-nUsed : n;
    memcpy(p->aBuf+nUsed, z, nTake);
    z += nTake;
    n -= nTake;
    if( nUsed+nTake<64 ) return;
    sha1Block(p->aH, p->aBuf);
  }
  while( n>=64 ){
    sha1Block(p->aH, z);
    z += 64;
    n -= 64;
  }
  if( n ) memcpy(p->aBuf, z, n);
}

void acorn_sha1_final(acorn_sha1 *p, unsigned char aDigest[20]){
  uint64_t nBit = p->nByte*8;
  unsigned char aLen[8];
  static const unsigned char aPad[64] = { 0x80 };
  unsigned nUsed = (unsigned)(p->nByte & 63);
  int i;
  for(i=0; i<8; i++) aLen[i] = (unsigned char)(nBit>>(56-8*i));
  acorn_sha1_update(p, aPad, nUsed<56 ? 56-nUsed : 120-nUsed);
  acorn_sha1_update(p, aLen, 8);
  for(i=0; i<20; i++) aDigest[i] = (unsigned char)(p->aH[i/4]>>(24-8*(i%4)));
}
