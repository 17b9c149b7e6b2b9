/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest library: memory and string helpers, a small printf that
 * writes whole lines to the console with H_PUT_TERM_CHAR (vterm 0, the
 * first spapr-vty) under a lock, console input with H_GET_TERM_CHAR,
 * and the ways out (fail, power-off through RTAS).
 */
#include "guest.h"

typedef __builtin_va_list va_list;
#define va_start(v, l) __builtin_va_start(v, l)
#define va_end(v)      __builtin_va_end(v)
#define va_arg(v, l)   __builtin_va_arg(v, l)

void *memset(void *s, int c, size_t n)
{
    uint8_t *p = s;

    while (n--) {
        *p++ = c;
    }
    return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;

    while (n--) {
        *dp++ = *sp++;
    }
    return d;
}

size_t strlen(const char *s)
{
    size_t n = 0;

    while (s[n]) {
        n++;
    }
    return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b || !*a) {
            return (uint8_t)*a - (uint8_t)*b;
        }
    }
    return 0;
}

int strcmp(const char *a, const char *b)
{
    return strncmp(a, b, (size_t)-1);
}

unsigned long parse_num(const char **p)
{
    unsigned long v = 0;
    const char *s = *p;
    int base = 10;

    if (s[0] == '0' && s[1] == 'x') {
        base = 16;
        s += 2;
    }
    for (;; s++) {
        int d;

        if (*s >= '0' && *s <= '9') {
            d = *s - '0';
        } else if (base == 16 && *s >= 'a' && *s <= 'f') {
            d = *s - 'a' + 10;
        } else {
            break;
        }
        v = v * base + d;
    }
    *p = s;
    return v;
}

/* Console: one lock for whole lines, taken with interrupts off. */
static volatile int console_lock;

static unsigned long lock_console(void)
{
    unsigned long msr = mfmsr();

    irq_disable();
    while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE)) {
        cpu_relax();
    }
    return msr;
}

static void unlock_console(unsigned long msr)
{
    __atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
    if (msr & MSR_EE) {
        irq_enable();
    }
}

static void put_chars(const char *s, size_t n)
{
    while (n) {
        size_t len = n > 16 ? 16 : n;
        unsigned long w[2] = { 0, 0 };
        size_t i;

        for (i = 0; i < len; i++) {
            w[i / 8] |= (unsigned long)(uint8_t)s[i] << (56 - 8 * (i % 8));
        }
        while (hcall(H_PUT_TERM_CHAR, 0, len, w[0], w[1], 0, 0, NULL) ==
               -2 /* H_BUSY */) {
            cpu_relax();
        }
        s += len;
        n -= len;
    }
}

void puts_raw(const char *s)
{
    unsigned long msr = lock_console();

    put_chars(s, strlen(s));
    unlock_console(msr);
}

int console_getc(void)
{
    static uint8_t buf[16];
    static int head, tail;
    unsigned long r[4];

    if (head == tail) {
        if (hcall(H_GET_TERM_CHAR, 0, 0, 0, 0, 0, 0, r) != H_SUCCESS ||
            r[0] == 0) {
            return -1;
        }
        for (head = 0, tail = 0; tail < (int)r[0] && tail < 16; tail++) {
            buf[tail] = r[1 + tail / 8] >> (56 - 8 * (tail % 8));
        }
    }
    return buf[head++];
}

struct out {
    char *p;
    char *end;
};

static void out_c(struct out *o, char c)
{
    if (o->p < o->end) {
        *o->p++ = c;
    }
}

static void out_num(struct out *o, unsigned long v, int base, int width,
                    char pad)
{
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (width-- > n) {
        out_c(o, pad);
    }
    while (n) {
        out_c(o, tmp[--n]);
    }
}

static void vformat(struct out *o, const char *fmt, va_list ap)
{
    for (; *fmt; fmt++) {
        int width = 0, lng = 0;
        char pad = ' ';

        if (*fmt != '%') {
            out_c(o, *fmt);
            continue;
        }
        fmt++;
        if (*fmt == '0') {
            pad = '0';
        }
        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + *fmt++ - '0';
        }
        while (*fmt == 'l') {
            lng = 1;
            fmt++;
        }
        switch (*fmt) {
        case 'd': {
            long v = lng ? va_arg(ap, long) : va_arg(ap, int);

            if (v < 0) {
                out_c(o, '-');
                v = -v;
            }
            out_num(o, v, 10, width, pad);
            break;
        }
        case 'u':
            out_num(o, lng ? va_arg(ap, unsigned long)
                           : va_arg(ap, unsigned int), 10, width, pad);
            break;
        case 'x':
            out_num(o, lng ? va_arg(ap, unsigned long)
                           : va_arg(ap, unsigned int), 16, width, pad);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);

            while (*s) {
                out_c(o, *s++);
            }
            break;
        }
        case 'c':
            out_c(o, va_arg(ap, int));
            break;
        default:
            out_c(o, *fmt);
        }
    }
}

void printf(const char *fmt, ...)
{
    char buf[512];
    struct out o = { buf, buf + sizeof(buf) };
    unsigned long msr;
    va_list ap;

    va_start(ap, fmt);
    vformat(&o, fmt, ap);
    va_end(ap);
    msr = lock_console();
    put_chars(buf, o.p - buf);
    unlock_console(msr);
}

void power_off(void)
{
    uint32_t st;

    irq_disable();
    rtas_call("power-off", 2, 1, &st, -1, -1);
    for (;;) {
        hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
    }
}

void fail(const char *fmt, ...)
{
    char buf[256];
    struct out o = { buf, buf + sizeof(buf) - 1 };
    va_list ap;

    va_start(ap, fmt);
    vformat(&o, fmt, ap);
    va_end(ap);
    *o.p = 0;
    printf("XICS-GUEST RESULT FAIL cpu=%d %s\n", this_cpu->idx, buf);
    power_off();
}

void check(bool cond, const char *fmt, ...)
{
    static volatile int reported;
    char buf[256];
    struct out o = { buf, buf + sizeof(buf) - 1 };
    va_list ap;

    if (cond) {
        return;
    }
    this_cpu->errors++;
    if (atomic_inc(&reported) > 20) {
        return;
    }
    va_start(ap, fmt);
    vformat(&o, fmt, ap);
    va_end(ap);
    *o.p = 0;
    printf("XICS-GUEST ERROR cpu=%d %s\n", this_cpu->idx, buf);
}
