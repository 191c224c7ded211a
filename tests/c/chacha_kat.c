/*
** chacha_kat.c: known answers for acorn's random source (ext/random.c).
**
** Built from ext/random.c with -DSQLITE_CORE -DACORN_TESTING, which adds
** two hooks: acorn_test_chacha_blocks8() runs the generator's block function
** (8 blocks at once) on a given key, counter and nonce, and
** acorn_test_random_key() sets the calling thread's generator to a given
** key.  The program checks, in order:
**
**   1. its own plain ChaCha20 block function (refBlock, written from
**      RFC 8439 section 2.3) against the RFC's block vectors: 2.3.2 and
**      A.1 #1, #2, #4, #5;
**   2. acorn's block function against the same vectors, lane by lane: lane
**      b of a call with counter c is block c+b;
**   3. the RFC 8439 2.4.2 encryption vector, with acorn's keystream;
**   4. acorn_random() after acorn_test_random_key(K) against the stream the
**      header of ext/random.c describes, built here from refBlock: each
**      refill is blocks 0..15 of key K, nonce 0, stored word-interleaved
**      in 8-block groups; its first 32 bytes become the next K and the
**      remaining 992 bytes are handed out in order.
**
** Prints "ok ..." and exits 0, or what failed and exits 1.
*/
#include "acorn.h"
#include <stdio.h>
#include <string.h>

#define CHECK(cond, ...) do{ if(!(cond)){ printf(__VA_ARGS__); printf("\n"); return 1; } }while(0)

static uint32_t load32(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1]<<8 | (uint32_t)p[2]<<16 | (uint32_t)p[3]<<24;
}
static uint32_t rotl(uint32_t v, int n){ return (v<<n) | (v>>(32-n)); }

static void quarter(uint32_t *x, int a, int b, int c, int d){
  x[a] += x[b]; x[d] = rotl(x[d]^x[a], 16);
  x[c] += x[d]; x[b] = rotl(x[b]^x[c], 12);
  x[a] += x[b]; x[d] = rotl(x[d]^x[a], 8);
  x[c] += x[d]; x[b] = rotl(x[b]^x[c], 7);
}

/* The ChaCha20 block function of RFC 8439 2.3, one block, serialized. */
static void refBlock(const unsigned char *aKey, uint32_t iCtr,
                     const unsigned char *aNonce, unsigned char *aOut){
  uint32_t s[16], x[16];
  int i;
  s[0] = 0x61707865; s[1] = 0x3320646e; s[2] = 0x79622d32; s[3] = 0x6b206574;
  for(i=0; i<8; i++) s[4+i] = load32(aKey + 4*i);
  s[12] = iCtr;
  for(i=0; i<3; i++) s[13+i] = load32(aNonce + 4*i);
  memcpy(x, s, sizeof(x));
  for(i=0; i<10; i++){
    quarter(x, 0, 4,  8, 12); quarter(x, 1, 5,  9, 13);
    quarter(x, 2, 6, 10, 14); quarter(x, 3, 7, 11, 15);
    quarter(x, 0, 5, 10, 15); quarter(x, 1, 6, 11, 12);
    quarter(x, 2, 7,  8, 13); quarter(x, 3, 4,  9, 14);
  }
  for(i=0; i<16; i++){
    uint32_t v = x[i] + s[i];
    aOut[4*i] = (unsigned char)v;         aOut[4*i+1] = (unsigned char)(v>>8);
    aOut[4*i+2] = (unsigned char)(v>>16); aOut[4*i+3] = (unsigned char)(v>>24);
  }
}

static int unhex(const char *z, unsigned char *a, size_t n){
  size_t i;
  if( strlen(z)!=2*n ) return 1;
  for(i=0; i<n; i++){
    unsigned v;
    if( sscanf(z+2*i, "%2x", &v)!=1 ) return 1;
    a[i] = (unsigned char)v;
  }
  return 0;
}

/* Block b (0..7) of acorn's word-interleaved 8-block output. */
static void lane(const unsigned char *aOut8, int b, unsigned char *aBlock){
  int i;
  for(i=0; i<16; i++) memcpy(aBlock + 4*i, aOut8 + 32*i + 4*b, 4);
}

static const struct {
  const char *zName, *zKey, *zNonce;
  uint32_t iCtr;
  const char *zBlock;
} aVec[] = {
  { "2.3.2",
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "000000090000004a00000000", 1,
    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e" },
  { "A.1 #1",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000", 0,
    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586" },
  { "A.1 #2",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000", 1,
    "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
    "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f" },
  { "A.1 #4",
    "00ff000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000", 2,
    "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
    "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096" },
  { "A.1 #5",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000002", 0,
    "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
    "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d" },
};

/* RFC 8439 2.4.2: the plaintext, encrypted from block counter 1. */
static const char zSunscreen[] =
  "Ladies and Gentlemen of the class of '99: If I could offer you only one"
  " tip for the future, sunscreen would be it.";
static const char zSunscreenCipher[] =
  "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
  "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
  "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
  "5af90bbf74a35be6b40b8eedf2785e42874d";

/* One refill of the generator as ext/random.c specifies it, from refBlock:
** blocks 0..15 for aKey, nonce 0, interleaved per 8-block group; aKey is
** replaced by the first 32 bytes, aOut gets the other 992. */
static void refRefill(unsigned char *aKey, unsigned char *aOut){
  static const unsigned char aZero[12] = { 0 };
  unsigned char aBuf[1024], aBlock[64];
  int g, b, i;
  for(g=0; g<2; g++){
    for(b=0; b<8; b++){
      refBlock(aKey, (uint32_t)(8*g+b), aZero, aBlock);
      for(i=0; i<16; i++) memcpy(aBuf + 512*g + 32*i + 4*b, aBlock + 4*i, 4);
    }
  }
  memcpy(aKey, aBuf, 32);
  memcpy(aOut, aBuf + 32, 992);
}

int main(void){
  unsigned char aKey[32], aNonce[12], aWant[64], aGot[64], aOut8[512];
  size_t i;
  int b;

  /* 1 and 2: block vectors, the reference and each of acorn's lanes */
  for(i=0; i<sizeof(aVec)/sizeof(aVec[0]); i++){
    CHECK(unhex(aVec[i].zKey, aKey, 32)==0 && unhex(aVec[i].zNonce, aNonce, 12)==0
          && unhex(aVec[i].zBlock, aWant, 64)==0, "%s: bad hex", aVec[i].zName);
    refBlock(aKey, aVec[i].iCtr, aNonce, aGot);
    CHECK(memcmp(aGot, aWant, 64)==0, "reference block function fails RFC 8439 %s",
          aVec[i].zName);
    acorn_test_chacha_blocks8(aKey, aVec[i].iCtr, aNonce, aOut8);
    lane(aOut8, 0, aGot);
    CHECK(memcmp(aGot, aWant, 64)==0, "acorn's block function fails RFC 8439 %s",
          aVec[i].zName);
    for(b=1; b<8; b++){
      refBlock(aKey, aVec[i].iCtr + (uint32_t)b, aNonce, aWant);
      lane(aOut8, b, aGot);
      CHECK(memcmp(aGot, aWant, 64)==0, "acorn's lane %d differs from block %u (%s key)",
            b, aVec[i].iCtr + (unsigned)b, aVec[i].zName);
    }
  }

  /* 3: the encryption vector, XOR with acorn's blocks 1 and 2 */
  {
    unsigned char aCipher[114], aBlocks[128];
    size_t n = strlen(zSunscreen);
    CHECK(n==sizeof(aCipher) && unhex(zSunscreenCipher, aCipher, n)==0, "2.4.2: bad vector");
    unhex(aVec[0].zKey, aKey, 32);
    unhex("000000000000004a00000000", aNonce, 12);
    acorn_test_chacha_blocks8(aKey, 1, aNonce, aOut8);
    lane(aOut8, 0, aBlocks);
    lane(aOut8, 1, aBlocks+64);
    for(i=0; i<n; i++){
      CHECK((aBlocks[i] ^ (unsigned char)zSunscreen[i])==aCipher[i],
            "RFC 8439 2.4.2: byte %u of the ciphertext differs", (unsigned)i);
    }
  }

  /* 4: the generator's stream, read in uneven pieces across 5 refills */
  {
    static const size_t aPiece[] = { 1, 31, 960, 993, 7, 64, 1000, 2, 991, 911 };
    unsigned char aRefKey[32], aRef[5*992], aRnd[5*992];
    size_t nTotal = 0, k;
    for(i=0; i<32; i++) aRefKey[i] = (unsigned char)(0xa0 + i);
    acorn_test_random_key(aRefKey);
    for(k=0; k<5; k++) refRefill(aRefKey, aRef + 992*k);
    for(k=0; k<sizeof(aPiece)/sizeof(aPiece[0]); k++){
      acorn_random(aRnd + nTotal, aPiece[k]);
      nTotal += aPiece[k];
    }
    CHECK(nTotal==sizeof(aRnd), "pieces add up to %u", (unsigned)nTotal);
    for(i=0; i<nTotal; i++){
      CHECK(aRnd[i]==aRef[i], "acorn_random byte %u (refill %u) differs from the"
            " specified stream", (unsigned)i, (unsigned)(i/992));
    }
  }
  printf("ok chacha20 meets RFC 8439 2.3.2, 2.4.2 and A.1 #1 #2 #4 #5 in all 8 lanes;"
         " acorn_random gives the specified stream over 5 refills\n");
  return 0;
}
