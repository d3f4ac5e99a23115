/*
 * test_pcap.c: srd_pcap.h's errors, which are file output's (-errno, with
 * a message): a capture that cannot be created (no such folder, a folder,
 * no permission), a packet too large for one datagram, a capture that
 * cannot be written (a full device); and a clean capture's size; the
 * frames of srd_pcap_write_udp (IPv4, IPv6, snap length, checksum) and
 * srd_pcap_write_sim.  Decoding is checked by test/tools/test_pcap.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "srd_pcap.h"

static const srd_pcap_host host_a = {0xC6120001u, 1}, host_b = {0xC6120002u, 2};

/* tmp_dir makes a fresh folder under $TMPDIR (or /tmp) in |buf|. */
static void tmp_dir(char *buf, size_t len) {
  const char *t = getenv("TMPDIR");

  snprintf(buf, len, "%s/test_pcap.XXXXXX", t && *t ? t : "/tmp");
  assert_non_null(mkdtemp(buf));
}

/* open_fails asserts that srd_pcap_open refuses |path| with -|e| and the
   message "PATH: strerror(e)". */
static void open_fails(const char *path, int e) {
  srd_pcap *w = (srd_pcap *)&w; /* not NULL: open must clear it */
  char err[512] = "", want[512];

  snprintf(want, sizeof(want), "%s: %s", path, strerror(e));
  assert_int_equal(srd_pcap_open(&w, path, 0, err, sizeof(err)), -e);
  assert_null(w);
  assert_string_equal(err, want);
}

static void test_pcap_open_errors(void **state) {
  char dir[256], path[512];

  (void)state;
  tmp_dir(dir, sizeof(dir));
  snprintf(path, sizeof(path), "%s/no/such/dir/x.pcap", dir);
  open_fails(path, ENOENT);
  open_fails(dir, EISDIR);
  /* Permission: only where it is enforced (not for root). */
  if (geteuid() != 0) {
    snprintf(path, sizeof(path), "%s/ro", dir);
    assert_int_equal(mkdir(path, 0500), 0);
    snprintf(path, sizeof(path), "%s/ro/x.pcap", dir);
    open_fails(path, EACCES);
    snprintf(path, sizeof(path), "%s/ro", dir);
    assert_int_equal(rmdir(path), 0);
  }
  assert_int_equal(rmdir(dir), 0);
}

static void test_pcap_write_and_close(void **state) {
  static uint8_t big[65535];
  char dir[256], path[512], err[512] = "";
  uint8_t hdr[40], pay[100];
  srd_pcap *w = NULL;
  struct stat st;

  (void)state;
  memset(hdr, 0x11, sizeof(hdr));
  memset(pay, 0x22, sizeof(pay));
  tmp_dir(dir, sizeof(dir));
  snprintf(path, sizeof(path), "%s/x.pcap", dir);
  assert_int_equal(srd_pcap_open(&w, path, 0, err, sizeof(err)), 0);
  assert_non_null(w);
  /* One IPv4 datagram holds 65535 - 28 bytes of SRD packet, no more. */
  assert_int_equal(srd_pcap_write(w, 1, &host_a, &host_b, 0, big,
                                  65535 - 28 - sizeof(pay) + 1, pay,
                                  sizeof(pay)),
                   -EMSGSIZE);
  assert_int_equal(srd_pcap_count(w), 0);
  assert_int_equal(srd_pcap_write(w, 1, &host_a, &host_b, 3, hdr, sizeof(hdr),
                                  pay, sizeof(pay)),
                   0);
  assert_int_equal(
      srd_pcap_write(w, 2, &host_b, &host_a, 0, big, 65535 - 28, NULL, 0), 0);
  assert_int_equal(srd_pcap_count(w), 2);
  assert_int_equal(srd_pcap_close(w, err, sizeof(err)), 0);
  /* The file header, and two records of their header and frame. */
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_size, 24 + 2 * 16 + 2 * SRD_PCAP_HDR_LEN +
                                   sizeof(hdr) + sizeof(pay) + 65535 - 28);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
  assert_int_equal(srd_pcap_close(NULL, err, sizeof(err)), 0);
}

/* A device that takes nothing: the capture cannot be written, which
   srd_pcap_close reports with fflush's errno. */
static void test_pcap_close_full(void **state) {
  static uint8_t pkt[9000];
  char err[512] = "", want[512];
  srd_pcap *w = NULL;
  int i;

  (void)state;
  snprintf(want, sizeof(want), "writing the capture failed: %s",
           strerror(ENOSPC));
  if (access("/dev/full", W_OK) != 0) {
    skip();
  }
  assert_int_equal(srd_pcap_open(&w, "/dev/full", 0, err, sizeof(err)), 0);
  for (i = 0; i < 100; ++i) {
    assert_int_equal(srd_pcap_write(w, (uint64_t)i, &host_a, &host_b, 0, pkt,
                                    sizeof(pkt), NULL, 0),
                     0);
  }
  assert_int_equal(srd_pcap_close(w, err, sizeof(err)), -ENOSPC);
  assert_string_equal(err, want);
}

/* read_frame reads record |n| (from 0) of capture |path| into |buf|
   (|cap| bytes) and returns its captured length; |*len| is its length. */
static size_t read_frame(const char *path, int n, uint8_t *buf, size_t cap,
                         uint32_t *len) {
  FILE *f = fopen(path, "rb");
  uint32_t h[4];
  size_t got = 0;

  assert_non_null(f);
  assert_int_equal(fseek(f, 24, SEEK_SET), 0);
  for (int i = 0; i <= n; ++i) {
    assert_int_equal(fread(h, 4, 4, f), 4);
    assert_true(h[2] <= cap);
    got = fread(buf, 1, h[2], f);
    assert_int_equal(got, h[2]);
  }
  fclose(f);
  *len = h[3];
  return got;
}

/* csum_ok says whether the ones'-complement sum of |n| words (the
   pseudo-header's and the datagram's) is all ones, as a receiver checks. */
static int csum_ok(const uint8_t *p, size_t n, uint32_t acc) {
  for (size_t i = 0; i + 1 < n; i += 2) {
    acc += (uint32_t)p[i] << 8 | p[i + 1];
  }
  if (n & 1) {
    acc += (uint32_t)p[n - 1] << 8;
  }
  while (acc >> 16) {
    acc = (acc & 0xffff) + (acc >> 16);
  }
  return acc == 0xffff;
}

/* srd_pcap_write_udp: real addresses and ports, IPv4 and IPv6, a UDP
   checksum a receiver accepts, a snap length that cuts the SRD packet
   and never the headers; two families at once are refused. */
static void test_pcap_write_udp(void **state) {
  char dir[256], path[512], err[512] = "";
  uint8_t hdr[40], pay[200], f[512];
  struct sockaddr_in a4 = {0}, b4 = {0};
  struct sockaddr_in6 a6 = {0}, b6 = {0};
  srd_pcap *w = NULL;
  uint32_t len, acc = 0;
  size_t got, i;

  (void)state;
  for (i = 0; i < sizeof(hdr); ++i) {
    hdr[i] = (uint8_t)(i * 7 + 1);
  }
  memset(pay, 0x5a, sizeof(pay));
  a4.sin_family = b4.sin_family = AF_INET;
  a4.sin_addr.s_addr = htonl(0xC6120001u);
  b4.sin_addr.s_addr = htonl(0xC6120002u);
  a4.sin_port = htons(18516);
  b4.sin_port = htons(40000);
  a6.sin6_family = b6.sin6_family = AF_INET6;
  a6.sin6_addr.s6_addr[15] = 1;
  b6.sin6_addr.s6_addr[15] = 2;
  a6.sin6_port = htons(18517);
  b6.sin6_port = htons(40001);
  tmp_dir(dir, sizeof(dir));
  snprintf(path, sizeof(path), "%s/u.pcap", dir);
  assert_int_equal(srd_pcap_open(&w, path, 100, err, sizeof(err)), 0);
  assert_int_equal(srd_pcap_write_udp(w, 5, (struct sockaddr *)&a4,
                                      (struct sockaddr *)&b6, hdr, sizeof(hdr),
                                      pay, sizeof(pay)),
                   -EAFNOSUPPORT);
  assert_int_equal(srd_pcap_write_udp(w, 5, (struct sockaddr *)&a4,
                                      (struct sockaddr *)&b4, hdr, sizeof(hdr),
                                      pay, sizeof(pay)),
                   0);
  assert_int_equal(srd_pcap_write_udp(w, 6, (struct sockaddr *)&a6,
                                      (struct sockaddr *)&b6, hdr, sizeof(hdr),
                                      pay, sizeof(pay)),
                   0);
  assert_int_equal(srd_pcap_write_udp(w, 7, (struct sockaddr *)&a6,
                                      (struct sockaddr *)&b6, hdr, sizeof(hdr),
                                      NULL, 0),
                   0);
  assert_int_equal(srd_pcap_count(w), 3);
  assert_int_equal(srd_pcap_close(w, err, sizeof(err)), 0);

  /* IPv4: 100 bytes kept, the ports as given. */
  got = read_frame(path, 0, f, sizeof(f), &len);
  assert_int_equal(len, 14 + 20 + 8 + sizeof(hdr) + sizeof(pay));
  assert_int_equal(got, 100);
  assert_int_equal(f[12] << 8 | f[13], 0x0800);
  assert_int_equal(f[34] << 8 | f[35], 18516);
  assert_int_equal(f[36] << 8 | f[37], 40000);
  assert_memory_equal(f + 42, hdr, sizeof(hdr));
  /* IPv6: its longer headers whole, the same 58 SRD bytes kept. */
  got = read_frame(path, 1, f, sizeof(f), &len);
  assert_int_equal(len, 14 + 40 + 8 + sizeof(hdr) + sizeof(pay));
  assert_int_equal(got, 14 + 40 + 8 + 100 - SRD_PCAP_HDR_LEN);
  assert_int_equal(f[12] << 8 | f[13], 0x86dd);
  assert_int_equal(f[14] >> 4, 6);
  assert_int_equal(f[18] << 8 | f[19], 8 + sizeof(hdr) + sizeof(pay));
  assert_int_equal(f[20], 17);
  assert_int_equal(f[37], 1);
  assert_int_equal(f[53], 2);
  assert_int_equal(f[54] << 8 | f[55], 18517);
  assert_memory_equal(f + 62, hdr, sizeof(hdr));
  /* A whole IPv6 frame: its UDP checksum verifies over the RFC 8200
     pseudo-header (addresses, length, next header). */
  got = read_frame(path, 2, f, sizeof(f), &len);
  assert_int_equal(got, len);
  for (i = 22; i < 54; i += 2) {
    acc += (uint32_t)f[i] << 8 | f[i + 1];
  }
  acc += (uint32_t)(8 + sizeof(hdr)) + 17;
  assert_true(csum_ok(f + 54, got - 54, acc));
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* srd_pcap_write_sim: what a simulation carries is captured, the rest
   is only the frame's length; a packet shorter than its headers is
   refused. */
static void test_pcap_write_sim(void **state) {
  char dir[256], path[512], err[512] = "";
  uint8_t l4[8] = {0x11, 0x22, 0x53, 0x44, 0, 0, 0, 0}, data[48], f[512];
  srd_pcap *w = NULL;
  uint32_t len;
  size_t got;

  (void)state;
  memset(data, 0x77, sizeof(data));
  tmp_dir(dir, sizeof(dir));
  snprintf(path, sizeof(path), "%s/s.pcap", dir);
  assert_int_equal(srd_pcap_open(&w, path, 0, err, sizeof(err)), 0);
  assert_int_equal(srd_pcap_write_sim(w, 9, 0x0A000001u, 0x0A000002u, 17, l4, 8,
                                      data, sizeof(data), 20 + 8 + 47),
                   -EMSGSIZE);
  assert_int_equal(srd_pcap_write_sim(w, 9, 0x0A000001u, 0x0A000002u, 17, l4, 8,
                                      data, sizeof(data), 8220),
                   0);
  assert_int_equal(srd_pcap_close(w, err, sizeof(err)), 0);
  got = read_frame(path, 0, f, sizeof(f), &len);
  assert_int_equal(len, 14 + 8220);
  assert_int_equal(got, 14 + 20 + 8 + sizeof(data));
  assert_int_equal(f[16] << 8 | f[17], 8220); /* IPv4 total length */
  assert_int_equal(f[23], 17);
  assert_int_equal(f[11], 1);
  assert_int_equal(f[5], 2);
  assert_memory_equal(f + 34, l4, sizeof(l4));
  assert_memory_equal(f + 42, data, sizeof(data));
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pcap_open_errors),
      cmocka_unit_test(test_pcap_write_and_close),
      cmocka_unit_test(test_pcap_close_full),
      cmocka_unit_test(test_pcap_write_udp),
      cmocka_unit_test(test_pcap_write_sim),
  };

  return cmocka_run_group_tests_name("pcap", tests, NULL, NULL);
}
