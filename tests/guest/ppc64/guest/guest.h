/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest: a freestanding little-endian ppc64 guest for the pseries
 * machine (-M pseries,ic-mode=xics,x-vof=on -kernel xics-guest.elf).  It
 * runs in the PAPR guest model (hypercalls with "sc 1", RTAS through the
 * KVMPPC_H_RTAS hypercall, the device tree through the VOF client
 * interface) and exercises the emulated XICS under MTTCG: IPIs, device
 * interrupts (LSIs of edu / e1000 PCI devices), priorities, masking,
 * CPPR rejects and resends.  This header holds what the files share.
 */
#ifndef XICS_GUEST_H
#define XICS_GUEST_H

typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long int64_t;
typedef unsigned long size_t;
typedef long ssize_t;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)

#define MAX_CPUS        8
#define MAX_DEVS        8
#define STACK_SIZE      (32 * 1024)

/* Hypercall numbers (PAPR, and QEMU's private KVMPPC_ range). */
#define H_SUCCESS       0
#define H_CEDE          0xe0
#define H_EOI           0x64
#define H_CPPR          0x68
#define H_IPI           0x6c
#define H_IPOLL         0x70
#define H_XIRR          0x74
#define H_GET_TERM_CHAR 0x54
#define H_PUT_TERM_CHAR 0x58
#define H_SET_MODE      0x31c
#define KVMPPC_H_RTAS   0xf000
#define KVMPPC_H_VOF_CLIENT 0xf005

#define XICS_IPI        2       /* XISR of an IPI */
#define MSR_EE          0x8000UL
#define MSR_RI          0x2UL

/* start.S */
long hcall(long op, long a1, long a2, long a3, long a4, long a5, long a6,
           unsigned long *rets);
extern char _secondary_start[];
extern char exc_common[];

/* Per-CPU state; r13 points at the running CPU's. */
struct cpu {
    unsigned long stack_top;    /* first: _secondary_start loads it */
    int idx;                    /* logical index, boot CPU is 0 */
    uint32_t reg;               /* "reg" of its node: id for start-cpu */
    uint32_t server;            /* XICS interrupt server number */
    volatile int online;
    uint32_t rtas_buf[16];      /* RTAS argument buffer of this CPU */
    uint32_t ipi_prio;          /* priority H_IPI uses towards this CPU */
    volatile int wake_gen;      /* last barrier that woke this CPU */
    volatile int finished;      /* done for good, counts are final */
    uint64_t wait_deadline;     /* timebase limit of the current wait */

    /* What the guest counted; compared with QEMU's counters. */
    uint64_t xirr_calls;        /* H_XIRR calls */
    uint64_t accepted;          /* ... that returned a source */
    uint64_t spurious;          /* ... that returned none */
    uint64_t eois;              /* H_EOI calls */
    uint64_t ipis;              /* IPIs accepted */
    uint64_t ipi_msgs;          /* mailbox messages consumed */
    uint64_t ipis_empty;        /* IPIs with no new message */
    uint64_t ipis_sent;         /* H_IPI calls towards other CPUs */
    uint64_t dev_irqs;          /* device interrupts accepted */
    uint64_t decs;              /* decrementer interrupts */
    uint64_t forced_rejects;    /* rejects the guest provoked on purpose */
    uint64_t forced_resends;    /* resends the guest provoked on purpose */
    uint64_t stalls;            /* messages not consumed within 200 ms */
    uint64_t errors;

    /* Order log of the priority tests: XISR and priority, in order. */
    volatile int log_on;
    int log_n;
    uint32_t log_xisr[16];
    uint32_t log_prio[16];
};

register struct cpu *this_cpu asm("r13");

extern struct cpu cpus[MAX_CPUS];
extern int ncpus;
extern uint64_t tb_freq;
extern volatile uint32_t ipi_mbox[MAX_CPUS][MAX_CPUS];
extern volatile uint32_t ipi_ack[MAX_CPUS][MAX_CPUS];

/* lib.c */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
size_t strlen(const char *s);
void printf(const char *fmt, ...);
void puts_raw(const char *s);
int console_getc(void);         /* -1 when nothing arrived */
void fail(const char *fmt, ...);
void power_off(void) __attribute__((noreturn));
unsigned long parse_num(const char **p);

static inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }

static inline uint64_t mftb(void)
{
    uint64_t t;
    asm volatile("mfspr %0, 268" : "=r"(t));
    return t;
}

static inline void sync(void) { asm volatile("sync" ::: "memory"); }
static inline void cpu_relax(void) { asm volatile("or 1,1,1; or 2,2,2" ::: "memory"); }

static inline void irq_enable(void)
{
    asm volatile("mtmsrd %0, 1" :: "r"(MSR_EE | MSR_RI) : "memory");
}

static inline void irq_disable(void)
{
    asm volatile("mtmsrd %0, 1" :: "r"(MSR_RI) : "memory");
}

static inline unsigned long mfmsr(void)
{
    unsigned long m;
    asm volatile("mfmsr %0" : "=r"(m));
    return m;
}

static inline uint32_t mmio_read32(unsigned long a)
{
    uint32_t v = *(volatile uint32_t *)a;
    asm volatile("sync" ::: "memory");
    return v;
}

static inline void mmio_write32(unsigned long a, uint32_t v)
{
    asm volatile("sync" ::: "memory");
    *(volatile uint32_t *)a = v;
    asm volatile("sync" ::: "memory");
}

#define atomic_inc(p)     __atomic_add_fetch((p), 1, __ATOMIC_SEQ_CST)
#define atomic_add(p, v)  __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define atomic_or(p, v)   __atomic_or_fetch((p), (v), __ATOMIC_SEQ_CST)
#define atomic_andnot(p, v) __atomic_and_fetch((p), ~(v), __ATOMIC_SEQ_CST)
#define READ_ONCE(x)      (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)  (*(volatile __typeof__(x) *)&(x) = (v))

/* firmware.c: VOF client interface, device tree, RTAS */
int of_finddevice(const char *path);
int of_getprop(int ph, const char *name, void *buf, int len);
int of_child(int ph);
int of_peer(int ph);
uint32_t of_getprop32(int ph, const char *name, uint32_t dflt);
void rtas_init(void);
uint32_t rtas_token(const char *name);
int rtas_call(const char *name, int nargs, int nret, uint32_t *rets, ...);

/* xics.c */
void xics_install_vectors(void);
void set_cppr(uint32_t cppr);
void send_ipi(int cpu_idx, uint32_t prio);
uint32_t ipoll_xirr(void);
int set_xive(uint32_t irq, uint32_t server, uint32_t prio);
int int_off(uint32_t irq);
int int_on(uint32_t irq);
void ipi_handler(void);
void exc_dispatch(unsigned long vec, unsigned long *frame);

/* smp.c */
void smp_init(void);
void smp_start_secondaries(void (*fn)(void));
void barrier(void);
void drain_interrupts(void);
void finish(void);
uint64_t tb_deadline(uint64_t seconds);

/* pci.c: devices whose interrupt is an LSI of the PHB */
struct dev {
    int kind;                   /* DEV_EDU or DEV_E1000 */
    uint32_t cfg_addr;          /* bus/devfn for RTAS config access */
    unsigned long mmio;         /* BAR0 address, CPU side */
    uint32_t irq;               /* global interrupt source number */
    uint32_t pin;
    bool msi;                   /* edu with its MSI (edge) instead of INTx */

    volatile uint32_t outstanding;  /* bits raised, not yet delivered */
    volatile int target;        /* CPU index the source is routed to */
    volatile uint32_t prio;     /* its priority */
    volatile int masked;        /* masked: no delivery allowed */
    volatile uint32_t fact_n;   /* factorial in flight (edu), 0 if none */
    uint64_t raised;            /* raise operations (line 0 -> 1) */
    uint64_t delivered;         /* deliveries that carried raised bits */
    uint64_t bad;               /* deliveries with nothing raised / wrong CPU */
};
#define DEV_EDU   1
#define DEV_E1000 2
extern struct dev devs[MAX_DEVS];
extern int ndevs;
void pci_init(void);
void dev_raise(struct dev *d, uint32_t bit);
void dev_start_factorial(struct dev *d, uint32_t n);
uint32_t dev_take(struct dev *d, uint32_t *fact);
struct dev *dev_by_irq(uint32_t irq);
uint32_t dev_bit(struct dev *d, uint64_t seq);

/* tests.c: phases and the load generators bench.c and soak.c share */
struct storm {
    uint32_t base[MAX_CPUS];    /* message numbers when the phase began */
    uint32_t sent[MAX_CPUS];
    uint64_t sent_at[MAX_CPUS]; /* timebase of the last send */
    uint32_t stalled[MAX_CPUS]; /* last message reported as stalled */
    unsigned long n;
};
struct load {
    unsigned long rounds, per_round;
    unsigned long round, k;
    int waiting;
};
extern int load_ndevs;
void storm_init(struct storm *s, unsigned long n);
bool storm_step(struct storm *s);
void load_route_round(struct load *l);
bool load_step(struct load *l);
void route(struct dev *d, int cpu, uint32_t prio);
void wait_start(void);
void wait_check(const char *what, uint32_t a, uint32_t b);
void print_counts(void);
void verdict(void);

extern const char *opt_mode;
extern unsigned long opt_n;
extern unsigned long opt_ms;
extern unsigned long opt_msi;
extern unsigned long opt_dec;
extern unsigned long opt_cede;
void run_tests(void);
void run_bench(void);
void run_soak(void);
void run_stopself(void);
void check(bool cond, const char *fmt, ...);

#endif
