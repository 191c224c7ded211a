#!/usr/bin/env bats
# SHA-1 of ext/ids/sha1.c, which version 5 UUIDs hash names with.

load test_helper

@test "sha1 gives FIPS 180's known answers, whole and fed in pieces" {
  run wrap "$BUILD/sha1_kat"
  assert_success
  assert_output "ok sha1 meets FIPS 180's abc, empty, 448-bit, 896-bit and million-a answers, whole and in pieces"
}
