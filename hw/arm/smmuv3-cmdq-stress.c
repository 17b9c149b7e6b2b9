/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The "smmuv3-cmdq-stress" qtest verb of -M virt,iommu=smmuv3: a
 * multi-threaded stress test of the SMMUv3 command queue served without
 * the BQL (smmuv3-cmdq.c), run inside QEMU so that its threads call the
 * real code paths the way vCPU threads and device threads do.
 *
 *   smmuv3-cmdq-stress MAPPERS ROUNDS SEED
 *   -> OK commands=N syncs=N translations=N mapped=N faults=N polls=N
 *   -> FAIL <what went wrong>
 *
 * The verb sets up the SMMU as a driver would, in guest RAM at
 * STRESS_BASE: a linear stream table, a command queue of 256 entries,
 * and two streams translating through stage 1 with 4 KiB-granule
 * tables of NPAGES pages at IOVA_BASE: stream 0 (the PCI host bridge),
 * ASID 1, whose pages the producers change, and the next PCI function
 * (the qtest adds one), ASID 2, whose pages stay mapped (more of them
 * than the IOTLB holds).  Then it lets go of the BQL and starts:
 *
 * - MAPPERS threads, the producers.  Each owns a block of the pages and,
 *   ROUNDS times, remaps or unmaps a few of them (a new generation per
 *   page, its output address naming the generation), queues the
 *   invalidations of one randomly chosen kind (TLBI_NH_VA with and
 *   without TG, a range TLBI_NH_VA, TLBI_NH_VAA, CFGI_STE then a range,
 *   rarely TLBI_NH_ASID; every 256th round TLBI_NH_ALL) and a CMD_SYNC,
 *   publishes
 *   CMDQ_PROD, and polls CMDQ_CONS until the CMD_SYNC is consumed: then
 *   that generation is complete.  Slots are reserved under one lock and
 *   PROD is written under another, as Linux's driver orders them, so
 *   PROD writes race each other's slot writes and every CONS poll.
 * - two translator threads, the devices: they translate random pages
 *   of both streams through their IOMMU regions and check that the
 *   answer of stream 0 is never older than the page's last complete
 *   generation, and stream 1's never changes.  A stale IOTLB entry
 *   surviving its invalidation, or one answering for the wrong ASID,
 *   fails here.  Stream 1's pages evict IOTLB entries meanwhile.
 * - a poller thread: CMDQ_CONS never goes backwards and never reports
 *   an error.
 *
 * At the end CMDQ_CONS must equal CMDQ_PROD and every command queued
 * must have run.  The verb's own thread plays the main loop meanwhile:
 * it runs the main context's bottom halves (where a drain goes on past
 * one kick's budget) and otherwise leaves the BQL to the thread that
 * drains a CFGI_STE.  Run by tests/qtest/smmuv3-cmdq-test
 * (smmuv3-cmdq/stress), and under ThreadSanitizer by `make check-tsan`.
 *
 *   smmuv3-walk-mmio
 *   -> OK thread=fault bql=0x<output address>
 *
 * The same set-up, with stream 0's last-level table placed over the
 * SMMU's own registers, so that page WALK_PAGE's descriptor is the
 * EVENTQ_BASE register (a 64-bit register that holds what is written):
 * a translation on a thread without the BQL must fail (walks read MMIO
 * only under the BQL, smmu-table-read.c), and the same translation with
 * the BQL must read the register, as stock QEMU does.
 * Registered from smmuv3_cmdq_init() under qtest.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/cutils.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qemu/thread.h"
#include "block/aio.h"
#include "chardev/char-fe.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "hw/sysbus.h"
#include "hw/arm/smmuv3.h"
#include "system/qtest.h"
#include "smmuv3-internal.h"
#include "smmuv3-cmdq.h"

/* Guest RAM the verb takes over (virt's RAM starts at 0x40000000) */
#define STRESS_BASE     0x48000000ULL
#define STRTAB_ADDR     (STRESS_BASE + 0x0000)  /* 32 STEs, 2 KiB */
#define CD_ADDR         (STRESS_BASE + 0x1000)
#define QUEUE_ADDR      (STRESS_BASE + 0x2000)  /* 256 commands, 4 KiB */
#define PT_L1_ADDR      (STRESS_BASE + 0x10000)
#define PT_L2_ADDR      (STRESS_BASE + 0x11000)
#define PT_L3_ADDR      (STRESS_BASE + 0x12000)
#define CD2_ADDR        (STRESS_BASE + 0x1040)  /* the static stream's */
#define PT2_L1_ADDR     (STRESS_BASE + 0x13000)
#define PT2_L2_ADDR     (STRESS_BASE + 0x14000)
#define PT2_L3_ADDR     (STRESS_BASE + 0x15000)
#define STRESS_SIZE     0x16000

#define STRTAB_LOG2SIZE 5
#define QUEUE_LOG2SIZE  8
#define QUEUE_SIZE      (1U << QUEUE_LOG2SIZE)
#define QUEUE_IDX_MASK  ((QUEUE_SIZE << 1) - 1)     /* index and wrap */
#define STRESS_ASID     1
#define STATIC_ASID     2

/* 39-bit input (T0SZ 25): levels 1-3; the pages sit in one L3 table */
#define IOVA_BASE       0x200000ULL                 /* L1[0], L2[1] */
#define NPAGES          512     /* one L3 table; the IOTLB holds 256 */
#define PAGE_SHIFT_4K   12
/* Output addresses: page p's generation g maps to OUT_BASE + (p, g % GENS) */
#define OUT_BASE        0x100000000ULL
#define GENS            256
/* The static stream's page p maps to STATIC_OUT + p */
#define STATIC_OUT      0x80000000000ULL

#define MAPPERS_MAX     8
#define TRANSLATORS     2
#define MAX_BATCH       8
#define STALL_US        (30 * G_USEC_PER_SEC)

/* PTE bits: valid, table/page; a page's AF, AP[1] and nG (as Linux's) */
#define PTE_TABLE       0x3ULL
#define PTE_PAGE        (0x3ULL | (1ULL << 6) | (1ULL << 10) | (1ULL << 11))

typedef struct StressState StressState;

typedef struct StressThread {
    StressState *st;
    QemuThread thread;
    GRand *rand;
    unsigned first, count;      /* a mapper's pages */
    uint64_t translations, mapped, faults, polls;
} StressThread;

struct StressState {
    SMMUv3State *s;
    IOMMUMemoryRegion *iommu;   /* stream 0: changing pages */
    IOMMUMemoryRegion *iommu2;  /* the static stream */
    hwaddr mmio;                /* the SMMU's registers */
    Cmd *queue;                 /* the command queue, in guest RAM */
    uint64_t *l3;               /* the pages' PTEs, in guest RAM */
    unsigned mappers, rounds;

    QemuMutex reserve_lock;     /* slots, as the driver's queue lock */
    uint32_t reserved;          /* slots handed out (free-running) */
    uint32_t published;         /* slots written, for PROD */
    QemuMutex prod_lock;        /* one PROD writer at a time */

    uint32_t cur_gen[NPAGES];   /* generation written to the PTE */
    uint32_t done_gen[NPAGES];  /* generation whose CMD_SYNC completed */

    uint64_t commands, syncs;
    int running_mappers;
    bool stop;
    QemuMutex fail_lock;
    char *failure;
};

static void stress_fail(StressState *st, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

static void stress_fail(StressState *st, const char *fmt, ...)
{
    va_list ap;

    qemu_mutex_lock(&st->fail_lock);
    if (!st->failure) {
        va_start(ap, fmt);
        st->failure = g_strdup_vprintf(fmt, ap);
        va_end(ap);
    }
    qemu_mutex_unlock(&st->fail_lock);
    qatomic_set(&st->stop, true);
}

static uint32_t stress_readl(StressState *st, hwaddr reg)
{
    uint32_t v = 0;

    address_space_read(&address_space_memory, st->mmio + reg,
                       MEMTXATTRS_UNSPECIFIED, &v, 4);
    return le32_to_cpu(v);
}

static void stress_writel(StressState *st, hwaddr reg, uint32_t v)
{
    v = cpu_to_le32(v);
    address_space_write(&address_space_memory, st->mmio + reg,
                        MEMTXATTRS_UNSPECIFIED, &v, 4);
}

static void stress_writeq(StressState *st, hwaddr reg, uint64_t v)
{
    v = cpu_to_le64(v);
    address_space_write(&address_space_memory, st->mmio + reg,
                        MEMTXATTRS_UNSPECIFIED, &v, 8);
}

/*
 * Slots consumed, free-running: CMDQ_CONS, lifted against the slots
 * published (CONS <= PROD <= published, and published never runs more
 * than a queue ahead of CONS).
 */
static uint32_t stress_consumed(StressState *st)
{
    uint32_t upto = qatomic_load_acquire(&st->published), before, cons;

    /* A snapshot: published did not move while CONS was read */
    do {
        before = upto;
        cons = stress_readl(st, A_CMDQ_CONS);
        upto = qatomic_load_acquire(&st->published);
    } while (upto != before);

    if (FIELD_EX32(cons, CMDQ_CONS, ERR)) {
        stress_fail(st, "CMDQ_CONS reports error %u",
                    FIELD_EX32(cons, CMDQ_CONS, ERR));
    }
    return upto - ((upto - cons) & QUEUE_IDX_MASK);
}

/*
 * Queue @n commands and publish them; returns the free-running index
 * after the last.  Spins (polling CONS) while the queue is full.
 */
static uint32_t stress_submit(StressState *st, const Cmd *cmds, unsigned n)
{
    int64_t since = g_get_monotonic_time();
    uint32_t at, end, i, j;

    qemu_mutex_lock(&st->reserve_lock);
    at = st->reserved;
    while (at + n - stress_consumed(st) > QUEUE_SIZE) {
        if (qatomic_read(&st->stop)) {
            qemu_mutex_unlock(&st->reserve_lock);
            return at;
        }
        if (g_get_monotonic_time() - since > STALL_US) {
            qemu_mutex_unlock(&st->reserve_lock);
            stress_fail(st, "queue full for 30 s: CONS 0x%x PROD 0x%x",
                        stress_readl(st, A_CMDQ_CONS),
                        stress_readl(st, A_CMDQ_PROD));
            return at;
        }
    }
    for (i = 0; i < n; i++) {
        Cmd *slot = &st->queue[(at + i) & (QUEUE_SIZE - 1)];

        for (j = 0; j < ARRAY_SIZE(slot->word); j++) {
            slot->word[j] = cpu_to_le32(cmds[i].word[j]);
        }
    }
    end = at + n;
    st->reserved = end;
    qatomic_store_release(&st->published, end);
    qemu_mutex_unlock(&st->reserve_lock);

    /* PROD only grows: the last writer writes the latest value */
    qemu_mutex_lock(&st->prod_lock);
    stress_writel(st, A_CMDQ_PROD,
                  qatomic_load_acquire(&st->published) & QUEUE_IDX_MASK);
    qemu_mutex_unlock(&st->prod_lock);
    return end;
}

/* Poll CMDQ_CONS until it passes free-running index @end - 1 */
static void stress_wait(StressState *st, uint32_t end, uint64_t *polls)
{
    int64_t since = g_get_monotonic_time();

    while (!qatomic_read(&st->stop)) {
        (*polls)++;
        if ((int32_t)(stress_consumed(st) - end) >= 0) {
            return;
        }
        if (g_get_monotonic_time() - since > STALL_US) {
            stress_fail(st, "CMD_SYNC at 0x%x not consumed in 30 s: "
                        "CONS 0x%x PROD 0x%x", (end - 1) & QUEUE_IDX_MASK,
                        stress_readl(st, A_CMDQ_CONS),
                        stress_readl(st, A_CMDQ_PROD));
            return;
        }
    }
}

static uint64_t stress_iova(unsigned page)
{
    return IOVA_BASE + ((uint64_t)page << PAGE_SHIFT_4K);
}

static uint64_t stress_out(unsigned page, uint32_t gen)
{
    return OUT_BASE +
           (((uint64_t)page * GENS + gen % GENS) << PAGE_SHIFT_4K);
}

/*
 * Write a PTE as the guest would.  Walks read PTEs with plain loads (a
 * race by design: tests/tsan-fork.supp names this function).
 */
static void __attribute__((noinline)) stress_set_pte(uint64_t *pte,
                                                     uint64_t val)
{
    qatomic_set(pte, cpu_to_le64(val));
}

/* Generation 0 and every fourth unmap a page, the others map it */
static bool stress_gen_mapped(uint32_t gen)
{
    return gen % 4 != 0;
}

static Cmd stress_cmd(SMMUCommandType type)
{
    Cmd c = { .word = { type } };

    return c;
}

/* TLBI_NH_VA (ASID) or NH_VAA of @pages from @page; @tg 0: one address */
static Cmd stress_tlbi_va(SMMUCommandType type, unsigned page,
                          unsigned pages, bool tg)
{
    uint64_t iova = stress_iova(page);
    Cmd c = stress_cmd(type);

    if (tg) {
        /* (NUM + 1) << SCALE pages of TG's granule (1: 4 KiB) */
        c.word[0] |= (pages - 1) << 12;
        c.word[2] |= 1 << 10;
    }
    if (type == SMMU_CMD_TLBI_NH_VA) {
        c.word[1] = STRESS_ASID << 16;
    }
    c.word[2] |= 1 | (uint32_t)iova;                /* leaf, address */
    c.word[3] = iova >> 32;
    return c;
}

static void *stress_mapper(void *opaque)
{
    StressThread *t = opaque;
    StressState *st = t->st;
    unsigned round, i;

    rcu_register_thread();
    for (round = 0; round < st->rounds && !qatomic_read(&st->stop);
         round++) {
        unsigned k = 1 + g_rand_int_range(t->rand, 0, MIN(4, t->count));
        unsigned first = t->first +
                         g_rand_int_range(t->rand, 0, t->count - k + 1);
        Cmd cmds[MAX_BATCH];
        unsigned n = 0, kind;
        uint32_t end;

        for (i = first; i < first + k; i++) {
            uint32_t gen = st->cur_gen[i] + 1;

            qatomic_set(&st->cur_gen[i], gen);
            smp_wmb();          /* cur_gen, then the PTE (the check's order) */
            stress_set_pte(&st->l3[i], stress_gen_mapped(gen) ?
                           stress_out(i, gen) | PTE_PAGE : 0);
        }
        kind = g_rand_int_range(t->rand, 0, 32);
        if (round % 256 == 255) {       /* both streams, now and then */
            cmds[n++] = stress_cmd(SMMU_CMD_TLBI_NH_ALL);
        } else if (kind < 8) {          /* one address per page, no TG */
            for (i = first; i < first + k; i++) {
                cmds[n++] = stress_tlbi_va(SMMU_CMD_TLBI_NH_VA, i, 1, false);
            }
        } else if (kind < 16) {         /* a range per page: merged */
            for (i = first; i < first + k; i++) {
                cmds[n++] = stress_tlbi_va(SMMU_CMD_TLBI_NH_VA, i, 1, true);
            }
        } else if (kind < 22) {         /* one range for all */
            cmds[n++] = stress_tlbi_va(SMMU_CMD_TLBI_NH_VA, first, k, true);
        } else if (kind < 28) {         /* any ASID */
            for (i = first; i < first + k; i++) {
                cmds[n++] = stress_tlbi_va(SMMU_CMD_TLBI_NH_VAA, i, 1,
                                           false);
            }
        } else if (kind < 30) {         /* needs the BQL, then a range */
            cmds[n] = stress_cmd(SMMU_CMD_CFGI_STE);
            cmds[n++].word[1] = 0;                  /* SID */
            cmds[n++] = stress_tlbi_va(SMMU_CMD_TLBI_NH_VA, first, k, true);
        } else {
            cmds[n] = stress_cmd(SMMU_CMD_TLBI_NH_ASID);
            cmds[n++].word[1] = STRESS_ASID << 16;
        }
        /* CS: none or SEV; an IRQ would need the GIC's line */
        cmds[n] = stress_cmd(SMMU_CMD_SYNC);
        cmds[n++].word[0] |= (round & 2 ? CMD_SYNC_SIG_SEV :
                              CMD_SYNC_SIG_NONE) << 12;
        end = stress_submit(st, cmds, n);
        stress_wait(st, end, &t->polls);
        if (qatomic_read(&st->stop)) {
            break;
        }
        qatomic_add(&st->commands, n);
        qatomic_inc(&st->syncs);
        for (i = first; i < first + k; i++) {
            qatomic_store_release(&st->done_gen[i], st->cur_gen[i]);
        }
    }
    qatomic_dec(&st->running_mappers);
    rcu_unregister_thread();
    return NULL;
}

static void *stress_translator(void *opaque)
{
    StressThread *t = opaque;
    StressState *st = t->st;
    IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_GET_CLASS(st->iommu);

    rcu_register_thread();
    while (qatomic_read(&st->running_mappers) && !qatomic_read(&st->stop)) {
        unsigned page = g_rand_int_range(t->rand, 0, NPAGES);
        uint64_t iova = stress_iova(page);
        uint32_t done = qatomic_load_acquire(&st->done_gen[page]);
        IOMMUTLBEntry e;
        uint32_t now;

        if (g_rand_boolean(t->rand)) {
            uint64_t out;

            e = imrc->translate(st->iommu2, iova, IOMMU_RO, 0);
            out = (e.translated_addr & ~e.addr_mask) | (iova & e.addr_mask);
            t->translations++;
            if (e.perm == IOMMU_NONE || out != STATIC_OUT + iova) {
                stress_fail(st, "the static stream's page %u translated "
                            "to 0x%" PRIx64 " (perm %d)", page, out, e.perm);
            }
            continue;
        }
        e = imrc->translate(st->iommu, iova, IOMMU_RO, 0);

        smp_mb();               /* the walk's PTE read, then cur_gen */
        now = qatomic_load_acquire(&st->cur_gen[page]);
        t->translations++;
        if (e.perm == IOMMU_NONE) {
            t->faults++;
            /* Right only if some generation since @done unmaps it */
            if (now == done && stress_gen_mapped(done)) {
                stress_fail(st, "page %u faulted, mapped by generation "
                            "%u, complete", page, done);
            }
        } else {
            uint64_t out = (e.translated_addr & ~e.addr_mask) |
                           (iova & e.addr_mask);
            uint64_t slot = (out - OUT_BASE) >> PAGE_SHIFT_4K;
            uint32_t gen = slot % GENS;

            t->mapped++;
            /* An odd generation of this page, from @done to @now */
            if (out < OUT_BASE || slot / GENS != page ||
                !stress_gen_mapped(gen) ||
                (gen - done) % GENS > now - done) {
                stress_fail(st, "page %u translated to 0x%" PRIx64
                            " (generation %u mod %u), but generations "
                            "%u-%u are due: a stale IOTLB entry",
                            page, out, gen, GENS, done, now);
            }
        }
    }
    rcu_unregister_thread();
    return NULL;
}

static void *stress_poller(void *opaque)
{
    StressThread *t = opaque;
    StressState *st = t->st;
    uint32_t last;

    rcu_register_thread();
    last = stress_consumed(st);
    while (qatomic_read(&st->running_mappers) && !qatomic_read(&st->stop)) {
        uint32_t now = stress_consumed(st);

        t->polls++;
        if ((int32_t)(now - last) < 0) {
            stress_fail(st, "CMDQ_CONS went back from slot %u to %u",
                        last, now);
        }
        last = now;
    }
    rcu_unregister_thread();
    return NULL;
}

static void *stress_ram(hwaddr addr, hwaddr len)
{
    MemoryRegion *mr;
    hwaddr xlat, l = len;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(&address_space_memory, addr, &xlat, &l,
                                 true, MEMTXATTRS_UNSPECIFIED);
    if (!memory_region_is_ram(mr) || l < len) {
        return NULL;
    }
    return (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
}

/* Stream @sid through @cd (ASID @asid) and the tables from @l1 */
static void stress_stream(uint8_t *ram, uint32_t sid, hwaddr cd,
                          uint16_t asid, hwaddr l1, hwaddr l2, hwaddr l3)
{
    uint32_t *ste = (uint32_t *)(ram + (STRTAB_ADDR - STRESS_BASE)) +
                    sid * (sizeof(STE) / 4);
    uint32_t *cdw = (uint32_t *)(ram + (cd - STRESS_BASE));
    uint64_t *l1e = (uint64_t *)(ram + (l1 - STRESS_BASE));
    uint64_t *l2e = (uint64_t *)(ram + (l2 - STRESS_BASE));

    /* STE: valid, Config 0b101 (stage 1, stage 2 bypass), S1ContextPtr */
    ste[0] = cpu_to_le32(1 | 5 << 1 | (uint32_t)cd);
    ste[1] = cpu_to_le32(cd >> 32);
    /* CD: T0SZ 25, TG0 4 KiB, EPD1, V; IPS 44 bits, AA64, A, ASID */
    cdw[0] = cpu_to_le32(25 | 1U << 30 | 1U << 31);
    cdw[1] = cpu_to_le32(4 | 1 << 9 | 1 << 14 | (uint32_t)asid << 16);
    cdw[2] = cpu_to_le32((uint32_t)l1);
    cdw[3] = cpu_to_le32(l1 >> 32);
    l1e[0] = cpu_to_le64(l2 | PTE_TABLE);           /* IOVA_BASE: L1[0], */
    l2e[1] = cpu_to_le64(l3 | PTE_TABLE);           /* L2[1] */
}

/* The SMMU set up as a driver would; NULL or why not */
static const char *stress_setup(StressState *st)
{
    uint8_t *ram = stress_ram(STRESS_BASE, STRESS_SIZE);
    SMMUDevice *sdev = smmu_find_sdev(ARM_SMMU(st->s), 0), *sdev2 = NULL;
    uint64_t *l3;
    uint32_t sid2;
    unsigned i;

    if (!ram) {
        return "needs guest RAM at 0x48000000-0x48016000 (-m 512M)";
    }
    for (sid2 = 1; sid2 < 1 << STRTAB_LOG2SIZE && !sdev2; sid2++) {
        sdev2 = smmu_find_sdev(ARM_SMMU(st->s), sid2);
    }
    if (!sdev || !sdev2) {
        return "needs PCI functions 00:00.0 and another on bus 0";
    }
    sid2--;
    st->iommu = &sdev->iommu;
    st->iommu2 = &sdev2->iommu;
    st->mmio = SYS_BUS_DEVICE(st->s)->mmio[0].addr;

    stress_writel(st, A_CR0, 0);
    memset(ram, 0, STRESS_SIZE);
    st->queue = (Cmd *)(ram + (QUEUE_ADDR - STRESS_BASE));
    st->l3 = (uint64_t *)(ram + (PT_L3_ADDR - STRESS_BASE));
    stress_stream(ram, 0, CD_ADDR, STRESS_ASID, PT_L1_ADDR, PT_L2_ADDR,
                  PT_L3_ADDR);
    stress_stream(ram, sid2, CD2_ADDR, STATIC_ASID, PT2_L1_ADDR, PT2_L2_ADDR,
                  PT2_L3_ADDR);
    l3 = (uint64_t *)(ram + (PT2_L3_ADDR - STRESS_BASE));
    for (i = 0; i < NPAGES; i++) {
        l3[i] = cpu_to_le64((STATIC_OUT + stress_iova(i)) | PTE_PAGE);
    }

    stress_writeq(st, A_STRTAB_BASE, STRTAB_ADDR);
    stress_writel(st, A_STRTAB_BASE_CFG, STRTAB_LOG2SIZE);
    stress_writeq(st, A_CMDQ_BASE, QUEUE_ADDR | QUEUE_LOG2SIZE);
    stress_writel(st, A_CMDQ_PROD, 0);
    stress_writel(st, A_CMDQ_CONS, 0);
    stress_writel(st, A_CR0, R_CR0_SMMU_ENABLE_MASK | R_CR0_CMDQEN_MASK);
    if (stress_readl(st, A_CR0ACK) !=
        (R_CR0_SMMU_ENABLE_MASK | R_CR0_CMDQEN_MASK)) {
        return "CR0ACK does not follow CR0";
    }
    return NULL;
}

/*
 * Before the threads: forget what an earlier run left cached (CFGI_ALL,
 * TLBI_NSNH_ALL), then fill the IOTLB from the static stream, more
 * pages than it holds, so that entries are evicted from the start.
 */
static const char *stress_prepare(StressState *st)
{
    IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_GET_CLASS(st->iommu2);
    Cmd cmds[3] = { stress_cmd(SMMU_CMD_CFGI_STE_RANGE),
                    stress_cmd(SMMU_CMD_TLBI_NSNH_ALL),
                    stress_cmd(SMMU_CMD_SYNC) };
    uint64_t polls = 0;
    unsigned i;

    cmds[0].word[2] = 31;                           /* CFGI_ALL */
    stress_wait(st, stress_submit(st, cmds, 3), &polls);
    if (st->failure) {
        return st->failure;
    }
    st->commands += 3;
    for (i = 0; i < NPAGES; i++) {
        IOMMUTLBEntry e = imrc->translate(st->iommu2, stress_iova(i),
                                          IOMMU_RO, 0);

        if (e.perm == IOMMU_NONE) {
            return "the static stream does not translate";
        }
    }
    return NULL;
}

static StressState *stress_state_new(SMMUv3State *s)
{
    StressState *st = g_new0(StressState, 1);

    st->s = s;
    qemu_mutex_init(&st->reserve_lock);
    qemu_mutex_init(&st->prod_lock);
    qemu_mutex_init(&st->fail_lock);
    return st;
}

static void stress_state_free(StressState *st)
{
    qemu_mutex_destroy(&st->reserve_lock);
    qemu_mutex_destroy(&st->prod_lock);
    qemu_mutex_destroy(&st->fail_lock);
    g_free(st->failure);
    g_free(st);
}

static char *stress_run(SMMUv3State *s, unsigned mappers, unsigned rounds,
                        uint32_t seed)
{
    StressState *st = stress_state_new(s);
    StressThread t[MAPPERS_MAX + TRANSLATORS + 1] = {};
    unsigned nthreads = mappers + TRANSLATORS + 1, i;
    uint64_t translations = 0, mapped = 0, faults = 0, polls = 0;
    const char *err;
    char *rsp;
    uint32_t prod, cons;

    st->mappers = mappers;
    st->rounds = rounds;
    st->running_mappers = mappers;
    err = stress_setup(st);
    if (!err) {
        /* As the producers do: their PROD lock before the BQL */
        bql_unlock();
        err = stress_prepare(st);
        bql_lock();
    }
    if (err) {
        rsp = g_strdup_printf("FAIL %s (seed %u)", err, seed);
        goto out;
    }

    for (i = 0; i < nthreads; i++) {
        t[i].st = st;
        t[i].rand = g_rand_new_with_seed(seed + i);
        t[i].first = i * (NPAGES / mappers);
        t[i].count = NPAGES / mappers;
        qemu_thread_create(&t[i].thread, "smmuv3-stress",
                           i < mappers ? stress_mapper :
                           i < mappers + TRANSLATORS ? stress_translator :
                           stress_poller, &t[i], QEMU_THREAD_JOINABLE);
    }
    /* Be the main loop: bottom halves, and the BQL free in between */
    while (qatomic_read(&st->running_mappers)) {
        aio_poll(qemu_get_aio_context(), false);
        bql_unlock();
        g_usleep(1000);
        bql_lock();
    }
    for (i = 0; i < nthreads; i++) {
        qemu_thread_join(&t[i].thread);
        g_rand_free(t[i].rand);
        translations += t[i].translations;
        mapped += t[i].mapped;
        faults += t[i].faults;
        polls += t[i].polls;
    }
    aio_poll(qemu_get_aio_context(), false);

    prod = stress_readl(st, A_CMDQ_PROD);
    cons = stress_readl(st, A_CMDQ_CONS);
    if (st->failure) {
        rsp = g_strdup_printf("FAIL %s (seed %u)", st->failure, seed);
    } else if (prod != cons) {
        rsp = g_strdup_printf("FAIL CMDQ_PROD 0x%x, CMDQ_CONS 0x%x at the "
                              "end", prod, cons);
    } else if (stress_readl(st, A_GERROR) ^ stress_readl(st, A_GERRORN)) {
        rsp = g_strdup_printf("FAIL GERROR 0x%x", stress_readl(st, A_GERROR));
    } else if (st->reserved != (uint32_t)st->commands) {
        rsp = g_strdup_printf("FAIL %u commands queued, %" PRIu64
                              " completed", st->reserved, st->commands);
    } else {
        rsp = g_strdup_printf("OK commands=%" PRIu64 " syncs=%" PRIu64
                              " translations=%" PRIu64 " mapped=%" PRIu64
                              " faults=%" PRIu64 " polls=%" PRIu64
                              " seed=%u", st->commands, st->syncs,
                              translations, mapped, faults, polls, seed);
    }
out:
    stress_state_free(st);
    return rsp;
}

/* Page of stream 0 whose descriptor is the register at A_EVENTQ_BASE */
#define WALK_PAGE       (A_EVENTQ_BASE / 8)
#define WALK_OUT        0x40000000ULL

static void *walk_translator(void *opaque)
{
    StressState *st = opaque;
    IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_GET_CLASS(st->iommu);
    IOMMUTLBEntry *e = g_new(IOMMUTLBEntry, 1);

    rcu_register_thread();
    *e = imrc->translate(st->iommu, stress_iova(WALK_PAGE), IOMMU_RO, 0);
    rcu_unregister_thread();
    return e;
}

static char *walk_mmio_run(SMMUv3State *s)
{
    StressState *st = stress_state_new(s);
    IOMMUMemoryRegionClass *imrc;
    g_autofree IOMMUTLBEntry *e = NULL;
    IOMMUTLBEntry b;
    QemuThread thread;
    const char *err;
    char *rsp;
    uint8_t *ram;

    err = stress_setup(st);
    if (!err) {
        /* Stream 0's L2[1]: an L3 table at the SMMU's registers */
        ram = stress_ram(STRESS_BASE, STRESS_SIZE);
        ((uint64_t *)(ram + (PT_L2_ADDR - STRESS_BASE)))[1] =
            cpu_to_le64(st->mmio | PTE_TABLE);
        stress_writeq(st, A_EVENTQ_BASE, WALK_OUT | PTE_PAGE);
        bql_unlock();
        err = stress_prepare(st);   /* forgets cached configurations */
        bql_lock();
    }
    if (err) {
        rsp = g_strdup_printf("FAIL %s", err);
        goto out;
    }
    /* The BQL let go meanwhile: a walk that took it would not block */
    qemu_thread_create(&thread, "smmuv3-walk", walk_translator, st,
                       QEMU_THREAD_JOINABLE);
    bql_unlock();
    e = qemu_thread_join(&thread);
    bql_lock();
    imrc = IOMMU_MEMORY_REGION_GET_CLASS(st->iommu);
    b = imrc->translate(st->iommu, stress_iova(WALK_PAGE), IOMMU_RO, 0);
    if (e->perm != IOMMU_NONE) {
        rsp = g_strdup_printf("FAIL a walk without the BQL read MMIO: "
                              "0x%" PRIx64 " (perm %d)",
                              e->translated_addr, e->perm);
    } else if (b.perm == IOMMU_NONE) {
        rsp = g_strdup("FAIL a walk with the BQL did not read MMIO");
    } else {
        rsp = g_strdup_printf("OK thread=fault bql=0x%" PRIx64,
                              b.translated_addr & ~b.addr_mask);
    }
out:
    stress_state_free(st);
    return rsp;
}

static SMMUv3State *stress_smmu;

static bool stress_command(CharBackend *chr, gchar **words)
{
    unsigned long mappers, rounds, seed;
    g_autofree char *rsp = NULL;

    if (words[0] && !strcmp(words[0], "smmuv3-walk-mmio")) {
        rsp = walk_mmio_run(stress_smmu);
        qtest_sendf(chr, "%s\n", rsp);
        return true;
    }
    if (!words[0] || strcmp(words[0], "smmuv3-cmdq-stress") != 0) {
        return false;
    }
    if (!words[1] || !words[2] || !words[3] ||
        qemu_strtoul(words[1], NULL, 0, &mappers) ||
        qemu_strtoul(words[2], NULL, 0, &rounds) ||
        qemu_strtoul(words[3], NULL, 0, &seed) ||
        mappers < 1 || mappers > MAPPERS_MAX || rounds > 1000000 ||
        seed > UINT32_MAX) {
        rsp = g_strdup("FAIL usage: smmuv3-cmdq-stress MAPPERS(1-8) "
                       "ROUNDS(0-1000000) SEED(32 bits)");
    } else {
        rsp = stress_run(stress_smmu, mappers, rounds, seed);
    }
    qtest_sendf(chr, "%s\n", rsp);
    return true;
}

void smmuv3_cmdq_stress_register(SMMUv3State *s)
{
    if (!stress_smmu) {
        stress_smmu = s;
        qtest_set_command_cb(stress_command);
    }
}
