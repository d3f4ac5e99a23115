/*
 * test_opt.c: tool_opt.h, what every tool answers alike: --help and
 * --version (GNU style, exit 0), unknown options, missing and unwanted
 * arguments (exit 2, named, "Try 'PROG --help'"), tool_die (exit 1), and
 * the tool_arg_* messages.  Each case runs in a child process, since
 * these functions exit; the test reads its stdout, stderr and status.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "tool_opt.h"
#include "tool_parse.h"

static void help(FILE *f) {
  fprintf(f, "Usage: test-tool [OPTION]...\n" TOOL_OPT_HELP_TEXT);
}

static void version_extra(FILE *f) {
  fprintf(f, "extra line\n");
}

static const tool_info info = {"test-tool", help, version_extra};

/* The program under test: a tool with -q, -s SIZE, --json, --size SIZE,
   --paths LIST; it prints each option it got. */
static int tool_main(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 256},
                                       {"size", required_argument, NULL, 's'},
                                       {"paths", required_argument, NULL, 257},
                                       {"delay", required_argument, NULL, 258},
                                       {"die", no_argument, NULL, 259},
                                       TOOL_OPT_STD,
                                       {NULL, 0, NULL, 0}};
  int c;

  tool_init(&info);
  optind = 1;
  while ((c = tool_getopt(argc, argv, "qs:", opts)) != -1) {
    switch (c) {
    case 'q':
      printf("q\n");
      break;
    case 's':
      printf("size %llu\n",
             (unsigned long long)tool_arg_size("--size", optarg, 1, 1 << 20));
      break;
    case 256:
      printf("json\n");
      break;
    case 257:
      printf("mask %llx\n",
             (unsigned long long)tool_arg_mask("--paths", optarg, 8));
      break;
    case 258:
      printf("delay %g\n",
             tool_arg_duration("--delay", optarg, TOOL_US, 0, 1e6));
      break;
    case 259:
      tool_die("it failed: %d", 42);
    }
  }
  for (; optind < argc; ++optind) {
    printf("operand %s\n", argv[optind]);
  }
  return 0;
}

/* The same tool reporting its own usage errors with tool_getopt_r: it
   prints what the error says, and exits 3 (not tool_getopt's 2) after
   one. */
static int tool_main_r(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 256},
                                       {"size", required_argument, NULL, 's'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       TOOL_OPT_STD,
                                       {NULL, 0, NULL, 0}};
  tool_opt_error e;
  int c;

  tool_init(&info);
  optind = 1;
  while ((c = tool_getopt_r(argc, argv, "qs:", opts, &e)) != -1) {
    if (c == '?') {
      printf("kind %d word %s name %s\n", e.kind, e.word ? e.word : "(none)",
             e.name);
      return 3;
    }
    printf("opt %d\n", c);
  }
  return 0;
}

/* main_fn is the program run() runs. */
static int (*main_fn)(int, char **) = tool_main;

typedef struct result {
  int status;
  char out[4096], err[4096];
} result;

static void slurp(int fd, char *buf, size_t cap) {
  size_t n = 0;
  ssize_t r;

  while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0) {
    n += (size_t)r;
  }
  buf[n] = '\0';
}

/* run forks, runs tool_main on the NULL-terminated arguments and
   collects what it wrote and how it ended. */
static void run(result *res, ...) {
  char *argv[16];
  int argc = 0, out[2], err[2], st;
  va_list ap;
  pid_t pid;

  argv[argc++] = (char *)"test-tool";
  va_start(ap, res);
  while ((argv[argc] = va_arg(ap, char *)) != NULL) {
    ++argc;
  }
  va_end(ap);
  assert_int_equal(pipe(out), 0);
  assert_int_equal(pipe(err), 0);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    exit(main_fn(argc, argv) + (fflush(stdout) != 0));
  }
  close(out[1]);
  close(err[1]);
  /* The outputs are small: read stdout, then stderr. */
  slurp(out[0], res->out, sizeof(res->out));
  slurp(err[0], res->err, sizeof(res->err));
  close(out[0]);
  close(err[0]);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  res->status = WEXITSTATUS(st);
}

static void expect(const result *r, int status, const char *out,
                   const char *err) {
  assert_int_equal(r->status, status);
  assert_string_equal(r->out, out);
  assert_string_equal(r->err, err);
}

#define TRY "Try 'test-tool --help' for more information.\n"

static void test_opt_help_and_version(void **state) {
  result r;
  char want[64];

  (void)state;
  run(&r, "--help", NULL);
  expect(&r, 0,
         "Usage: test-tool [OPTION]...\n"
         "  --help               display this help and exit\n"
         "  --version            output version information and exit\n",
         "");
  /* --help wins over what follows it, as in GNU tools. */
  run(&r, "--help", "--bogus", NULL);
  assert_int_equal(r.status, 0);
  run(&r, "--version", NULL);
  snprintf(want, sizeof(want), "test-tool (srd) %s\nextra line\n",
           SRD_VERSION_STR);
  expect(&r, 0, want, "");
  /* The Makefile's VERSION and libsrd's agree. */
  assert_string_equal(tool_version_string(), SRD_VERSION_STR);
  /* A unique prefix is the option (getopt_long). */
  run(&r, "--vers", NULL);
  expect(&r, 0, want, "");
}

static void test_opt_usage_errors(void **state) {
  result r;

  (void)state;
  run(&r, "--bogus", NULL);
  expect(&r, 2, "", "test-tool: unrecognized option '--bogus'\n" TRY);
  run(&r, "-x", NULL);
  expect(&r, 2, "", "test-tool: invalid option -- 'x'\n" TRY);
  run(&r, "-qx", NULL);
  expect(&r, 2, "q\n", "test-tool: invalid option -- 'x'\n" TRY);
  run(&r, "--size", NULL);
  expect(&r, 2, "", "test-tool: option '--size' requires an argument\n" TRY);
  run(&r, "--json", "--paths", NULL);
  expect(&r, 2, "json\n",
         "test-tool: option '--paths' requires an argument\n" TRY);
  run(&r, "-s", NULL);
  expect(&r, 2, "", "test-tool: option requires an argument -- 's'\n" TRY);
  run(&r, "--json=1", NULL);
  expect(&r, 2, "",
         "test-tool: option '--json' doesn't allow an argument\n" TRY);
  run(&r, "--help=x", NULL);
  expect(&r, 2, "",
         "test-tool: option '--help' doesn't allow an argument\n" TRY);
}

/* tool_getopt_r classifies what tool_getopt words: the kind, the word
   typed and the option's name, and leaves the message to the program;
   --help and --version are still answered. */
static void test_opt_errors_returned(void **state) {
  result r;

  (void)state;
  main_fn = tool_main_r;
  run(&r, "--bogus=3", NULL);
  expect(&r, 3, "kind 1 word --bogus=3 name --bogus\n", "");
  run(&r, "-x", NULL);
  expect(&r, 3, "kind 1 word (none) name -x\n", "");
  run(&r, "-qx", NULL);
  expect(&r, 3, "opt 113\nkind 1 word (none) name -x\n", "");
  run(&r, "--size", NULL);
  expect(&r, 3, "kind 2 word --size name --size\n", "");
  run(&r, "-s", NULL);
  expect(&r, 3, "kind 2 word (none) name -s\n", "");
  run(&r, "--json=1", NULL);
  expect(&r, 3, "kind 3 word --json=1 name --json\n", "");
  run(&r, "--quiet=yes", NULL);
  expect(&r, 3, "kind 3 word --quiet=yes name --quiet\n", "");
  run(&r, "--s=1", "--json", NULL); /* a unique prefix of --size */
  expect(&r, 0, "opt 115\nopt 256\n", "");
  run(&r, "--help", NULL);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "Usage: test-tool"));
  main_fn = tool_main;
}

static void test_opt_operands_and_values(void **state) {
  result r;

  (void)state;
  run(&r, "a", "-q", "--size=64K", "-s", "2", "b", NULL);
  expect(&r, 0, "q\nsize 65536\nsize 2\noperand a\noperand b\n", "");
  run(&r, "--", "--json", NULL);
  expect(&r, 0, "operand --json\n", "");
  run(&r, "--paths", "0,7", "--delay", "1ms", NULL);
  expect(&r, 0, "mask 81\ndelay 1000\n", "");
}

static void test_opt_bad_values(void **state) {
  result r;

  (void)state;
  run(&r, "--size", "12X", NULL);
  expect(&r, 2, "",
         "test-tool: bad value for --size: '12X' (expected a whole "
         "number in 1..1048576, with an optional K, M or G suffix)\n" TRY);
  run(&r, "--size", "2M", NULL);
  expect(&r, 2, "",
         "test-tool: bad value for --size: '2M' (expected a whole "
         "number in 1..1048576, with an optional K, M or G suffix)\n" TRY);
  run(&r, "--paths", "8", NULL);
  expect(&r, 2, "",
         "test-tool: bad value for --paths: '8' (expected indices 0..7, "
         "comma separated)\n" TRY);
  run(&r, "--delay", "2s", NULL);
  expect(&r, 2, "",
         "test-tool: bad value for --delay: '2s' (expected a duration in "
         "[0, 1e+06] us; suffixes ns, us, ms, s allowed)\n" TRY);
}

static void test_opt_die(void **state) {
  result r;

  (void)state;
  run(&r, "-q", "--die", NULL);
  expect(&r, 1, "q\n", "test-tool: it failed: 42\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opt_help_and_version),
      cmocka_unit_test(test_opt_usage_errors),
      cmocka_unit_test(test_opt_errors_returned),
      cmocka_unit_test(test_opt_operands_and_values),
      cmocka_unit_test(test_opt_bad_values),
      cmocka_unit_test(test_opt_die),
  };
  return cmocka_run_group_tests_name("opt", tests, NULL, NULL);
}
