#!/usr/bin/env bats
# The random source of ext/random.c: a per-thread ChaCha20 keystream.

load test_helper

@test "the generator is ChaCha20: RFC 8439's vectors in every lane, and the specified stream from a known key" {
  run wrap "$BUILD/chacha_kat"
  assert_success
  assert_output "ok chacha20 meets RFC 8439 2.3.2, 2.4.2 and A.1 #1 #2 #4 #5 in all 8 lanes; acorn_random gives the specified stream over 5 refills"
}
