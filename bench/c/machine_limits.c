/* machine_limits.c: what no runtime can beat on this machine, for the benchmarks to be
 * judged against. No OpenSHMEM, no MPI: plain processes and memory.
 *
 *   machine_limits [--quick] [--max-size BYTES]
 *
 * Prints JSON lines (the shape of the other benchmarks, "runtime":"machine"):
 * - "pingpong_raw": round trip of a cache line between two processes that spin on a
 *   shared mapping (fork), median of batches; half of it is the one-way latency that
 *   bounds any synchronization between two images or PEs;
 * - "memcpy": one memcpy of each size from 8 B to --max-size between two buffers that
 *   lie at the same offset modulo 4 KiB (the fast case), median of batches.
 * Tables go to stderr.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define BATCHES 41

/* Two lines apart, so the ping and the pong do not share a line. */
struct lines {
    _Alignas(64) volatile uint64_t ping;
    _Alignas(64) volatile uint64_t pong;
};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static double pingpong(int iters)
{
    struct lines *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        perror("machine_limits: mmap");
        exit(1);
    }
    uint64_t total = (uint64_t)iters * BATCHES + 1000;
    pid_t pid = fork();
    if (pid < 0) {
        perror("machine_limits: fork");
        exit(1);
    }
    if (pid == 0) {
        for (uint64_t i = 1; i <= total; i++) {
            while (l->ping != i)
                cpu_relax();
            l->pong = i;
        }
        _exit(0);
    }
    double t[BATCHES];
    uint64_t i = 1;
    for (; i <= 1000; i++) { /* warm up */
        l->ping = i;
        while (l->pong != i)
            cpu_relax();
    }
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (int k = 0; k < iters; k++, i++) {
            l->ping = i;
            while (l->pong != i)
                cpu_relax();
        }
        t[b] = (now_ns() - t0) / iters;
    }
    waitpid(pid, NULL, 0);
    munmap(l, 4096);
    return median(t, BATCHES);
}

static double copy_time(char *dst, const char *src, size_t n, int quick)
{
    double t[BATCHES];
    long iters = (long)((quick ? 2e6 : 2e7) / (double)(n + 64));
    if (iters < 2)
        iters = 2;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (long k = 0; k < iters; k++) {
            memcpy(dst, src, n);
            __asm__ volatile("" ::"r"(dst) : "memory");
        }
        t[b] = (now_ns() - t0) / iters;
    }
    return median(t, BATCHES);
}

int main(int argc, char **argv)
{
    int quick = 0;
    size_t max = 4 << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--max-size") && i + 1 < argc)
            max = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: machine_limits [--quick] [--max-size BYTES]\n");
            return 2;
        }
    }
    double rt = pingpong(quick ? 2000 : 20000);
    fprintf(stderr, "# machine limits: cache-line round trip %.3f us (one way %.3f us)\n",
            rt / 1e3, rt / 2e3);
    printf("{\"bench\":\"pingpong_raw\",\"size\":64,\"pes\":2,\"metric\":\"time\",\"value\":%.6f,"
           "\"unit\":\"us\",\"runtime\":\"machine\"}\n",
           rt / 1e3);
    /* 16 bytes past a page on both sides: where glibc puts large malloc blocks. */
    char *a = mmap(NULL, max + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *b = mmap(NULL, max + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        perror("machine_limits: mmap");
        return 1;
    }
    memset(a, 1, max + 8192);
    memset(b, 2, max + 8192);
    fprintf(stderr, "#   bytes    memcpy us\n");
    /* caf_rma's sizes: 8 B times powers of 8, and the largest. */
    for (size_t n = 8; n <= max; n = (n * 8 > max && n < max) ? max : n * 8) {
        double c = copy_time(b + 16, a + 16, n, quick);
        fprintf(stderr, "%9zu %12.3f\n", n, c / 1e3);
        printf("{\"bench\":\"memcpy\",\"size\":%zu,\"pes\":1,\"metric\":\"time\",\"value\":%.6f,"
               "\"unit\":\"us\",\"runtime\":\"machine\"}\n",
               n, c / 1e3);
    }
    return 0;
}
