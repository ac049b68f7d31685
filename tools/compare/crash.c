/* qmetric-compare: QMETRIC_BACKTRACE's report of a crash, and the phase
 * of the run it names.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* QMETRIC_BACKTRACE=1: a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
 * prints, on stderr, the signal, the faulting address, the thread's name
 * (GStreamer names its streaming threads after their pad, "qmetric0:src";
 * the engine's workers inherit the name of the thread that made them), the
 * phase of the run and glibc's backtrace (module+offset per frame: resolve
 * with addr2line -f -e MODULE OFFSET), then dies of the same signal (exit
 * status 128 + N, as without the report).  A diagnostic for crashes seen once on other
 * machines; off by default. */
static const char *volatile phase = "starting";

void qmc_set_phase(const char *p)
{
    phase = p;
}

static void put_str(const char *s)
{
    if (write(STDERR_FILENO, s, strlen(s)) < 0) {
        /* nothing to do about it */
    }
}

/* async-signal-safe: no stdio */
static void put_num(unsigned long long v, unsigned base)
{
    char b[24], *p = b + sizeof(b);
    *--p = '\0';
    do {
        *--p = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (base == 16)
        put_str("0x");
    put_str(p);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    void *frames[64];
    char name[17] = "";
    int n;
    (void)uc;
    prctl(PR_GET_NAME, name, 0, 0, 0);
    put_str("\nqmetric-compare: fatal signal ");
    put_num((unsigned)sig, 10);
    put_str(sig == SIGSEGV ? " (SIGSEGV)" : sig == SIGBUS ? " (SIGBUS)" : sig == SIGABRT ?
            " (SIGABRT)" : sig == SIGFPE ? " (SIGFPE)" : sig == SIGILL ? " (SIGILL)" : "");
    if (si->si_code <= 0) {
        /* kill(), raise(), abort(): no faulting address */
        put_str(", sent by process ");
        put_num((unsigned long long)si->si_pid, 10);
    } else {
        put_str(", address ");
        put_num((unsigned long long)(uintptr_t)si->si_addr, 16);
    }
    put_str(", thread ");
    put_num((unsigned long long)syscall(SYS_gettid), 10);
    put_str(" \"");
    put_str(name);
    put_str("\", phase: ");
    put_str(phase);
    put_str("\n");
    n = backtrace(frames, G_N_ELEMENTS(frames));
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    /* the default action, once this handler returns (SA_RESETHAND) */
    signal(sig, SIG_DFL);
    raise(sig);
}

void qmc_install_crash_handler(void)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    static char alt[64 * 1024];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
    struct sigaction sa;
    void *warm[1];
    const char *env = g_getenv("QMETRIC_BACKTRACE");

    if (!env || !*env || !strcmp(env, "0"))
        return;
    /* the first backtrace() loads libgcc_s: not in the handler */
    backtrace(warm, 1);
    sigaltstack(&ss, NULL); /* this thread's overflow still gets a report */
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (guint i = 0; i < G_N_ELEMENTS(sigs); i++)
        sigaction(sigs[i], &sa, NULL);
}
