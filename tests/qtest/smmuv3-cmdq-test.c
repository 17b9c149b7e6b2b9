/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtests of the emulated SMMUv3's command queue (hw/arm/smmuv3.c,
 * served without the BQL by hw/arm/smmuv3-cmdq.c) on -M virt,
 * iommu=smmuv3: commands queued in guest memory and published with
 * CMDQ_PROD are consumed in order, CMDQ_CONS (and its wrap bit) follows,
 * a 64-bit access covers PROD and CONS; an illegal command stops the
 * queue with CMDQ_CONS.ERR = CERROR_ILL and GERROR.CMDQ_ERR until
 * GERRORN acknowledges it; a queue in MMIO is read as stock reads it,
 * one where nothing answers stops with CERROR_ABT;
 * nothing is consumed while CR0.CMDQEN is clear, CMDQ_CONS is written
 * only then; page 1's alias of CMDQ_PROD/CONS works as page 0's; more
 * commands than one kick runs are drained from a bottom half;
 * consecutive range TLBIs that meet are merged; the counters of the
 * "irq" stats provider count each command type; a guest's STE with
 * AArch32 stage-2 tables is a C_BAD_STE, not an abort (smmuv3/
 * ste-s2-aarch32).  smmuv3-cmdq/stress runs
 * the multi-threaded "smmuv3-cmdq-stress" verb (producers, CONS pollers
 * and translations racing each kind of invalidation, in QEMU's own
 * threads without the BQL: hw/arm/smmuv3-cmdq-stress.c); `make
 * check-tsan` runs it under ThreadSanitizer.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "irq-stats-qtest.h"

#define SMMU            0x09050000ULL   /* virt's SMMUv3 */
#define R_CR0           0x20
#define R_CR0ACK        0x24
#define R_GERROR        0x60
#define R_GERRORN       0x64
#define R_CMDQ_BASE     0x90
#define R_CMDQ_PROD     0x98
#define R_CMDQ_CONS     0x9c
#define CR0_CMDQEN      (1U << 3)
#define GERROR_CMDQ_ERR (1U << 0)
#define CONS_ERR(cons)  (((cons) >> 24) & 0x7f)
#define CERROR_ILL      1
#define CERROR_ABT      2

#define CMD_CFGI_STE_RANGE  0x04
#define CMD_TLBI_NH_ALL     0x10
#define CMD_TLBI_NH_VA      0x12
#define CMD_TLBI_EL2_ALL    0x20
#define CMD_TLBI_NSNH_ALL   0x30
#define CMD_SYNC            0x46
#define CMD_ILLEGAL         0x7f
#define CMD_TLBI_UNDEFINED  0x14    /* among the TLBIs, but none */

#define QUEUE           0x40100000ULL   /* guest RAM */
#define LOG2SIZE        3               /* 8 entries */
#define ENTRIES         (1U << LOG2SIZE)

typedef struct Ctx {
    QTestState *qts;
    uint32_t prod;
} Ctx;

static uint64_t smmu_stat(Ctx *c, const char *name)
{
    return irq_stat(c->qts, "irq-device", NULL, name);
}

static uint32_t cons(Ctx *c)
{
    return qtest_readl(c->qts, SMMU + R_CMDQ_CONS);
}

static Ctx *start_with(const char *args, uint64_t queue)
{
    Ctx *c = g_new0(Ctx, 1);

    c->qts = qtest_init(args);
    qtest_writeq(c->qts, SMMU + R_CMDQ_BASE, queue | LOG2SIZE);
    qtest_writel(c->qts, SMMU + R_CMDQ_PROD, 0);
    qtest_writel(c->qts, SMMU + R_CMDQ_CONS, 0);
    qtest_writel(c->qts, SMMU + R_CR0, CR0_CMDQEN);
    g_assert_cmphex(qtest_readl(c->qts, SMMU + R_CR0ACK) & CR0_CMDQEN, ==,
                    CR0_CMDQEN);
    return c;
}

static Ctx *start(uint64_t queue)
{
    return start_with("-M virt,iommu=smmuv3 -m 512M", queue);
}

static void stop(Ctx *c)
{
    qtest_quit(c->qts);
    g_free(c);
}

/* Queue a command at PROD (not published). */
static void queue_cmd(Ctx *c, uint8_t opcode, uint32_t word2)
{
    uint64_t at = QUEUE + (c->prod & (ENTRIES - 1)) * 16;

    qtest_writel(c->qts, at, opcode);
    qtest_writel(c->qts, at + 4, 0);
    qtest_writel(c->qts, at + 8, word2);
    qtest_writel(c->qts, at + 12, 0);
    c->prod = (c->prod + 1) & (2 * ENTRIES - 1);    /* index and wrap */
}

static void publish(Ctx *c)
{
    qtest_writel(c->qts, SMMU + R_CMDQ_PROD, c->prod);
}

/* Commands of each kind are consumed; the counters say which ran. */
static void test_consume(void)
{
    Ctx *c = start(QUEUE);

    queue_cmd(c, CMD_TLBI_NH_ALL, 0);
    queue_cmd(c, CMD_CFGI_STE_RANGE, 31);           /* CFGI_ALL */
    queue_cmd(c, CMD_TLBI_NSNH_ALL, 0);
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c), ==, c->prod);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands"), ==, 4);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-tlbi"), ==, 2);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-cfgi"), ==, 1);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-syncs"), ==, 1);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-errors"), ==, 0);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-drains"), >=, 1);
    /* The drain took time, counted while the queue was owned */
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-drain-ns"), >, 0);
    g_assert_false(qtest_readl(c->qts, SMMU + R_GERROR) & GERROR_CMDQ_ERR);
    stop(c);
}

/* Around the ring several times: CONS keeps up, its wrap bit flips. */
static void test_wrap(void)
{
    Ctx *c = start(QUEUE);
    int round, i;

    for (round = 0; round < 5; round++) {
        for (i = 0; i < 5; i++) {
            queue_cmd(c, CMD_SYNC, 0);
        }
        publish(c);
        g_assert_cmphex(cons(c), ==, c->prod);
    }
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-syncs"), ==, 25);
    /* 25 commands in an 8-entry ring: index 1, wrap bit set */
    g_assert_cmphex(c->prod, ==, (25 % 16));
    /* A 64-bit read returns PROD in the low half, CONS in the high */
    g_assert_cmphex(qtest_readq(c->qts, SMMU + R_CMDQ_PROD), ==,
                    (uint64_t)c->prod << 32 | c->prod);
    stop(c);
}

/* Nothing runs while CMDQEN is clear; enabling it runs what is queued. */
static void test_disabled(void)
{
    Ctx *c = start(QUEUE);

    qtest_writel(c->qts, SMMU + R_CR0, 0);
    queue_cmd(c, CMD_SYNC, 0);
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c), ==, 0);
    qtest_writel(c->qts, SMMU + R_CR0, CR0_CMDQEN);
    g_assert_cmphex(cons(c), ==, 2);
    stop(c);
}

/*
 * An illegal command: CONS stops at it with ERR = CERROR_ILL, GERROR
 * toggles CMDQ_ERR; after the driver replaces it and acknowledges the
 * error in GERRORN, the queue runs again.
 */
static void test_illegal(void)
{
    Ctx *c = start(QUEUE);
    uint32_t gerror;

    queue_cmd(c, CMD_SYNC, 0);
    queue_cmd(c, CMD_ILLEGAL, 0);
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c) & 0xffffff, ==, 1);
    g_assert_cmpuint(CONS_ERR(cons(c)), ==, CERROR_ILL);
    gerror = qtest_readl(c->qts, SMMU + R_GERROR);
    g_assert_true((gerror ^ qtest_readl(c->qts, SMMU + R_GERRORN)) &
                  GERROR_CMDQ_ERR);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-errors"), ==, 1);
    /* The illegal command is not counted as run */
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands"), ==, 1);

    /* More commands published: still held by the error */
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c) & 0xffffff, ==, 1);

    /* The driver turns the bad command into a SYNC and acknowledges */
    qtest_writel(c->qts, QUEUE + 16, CMD_SYNC);
    qtest_writel(c->qts, SMMU + R_GERRORN, gerror);
    g_assert_cmphex(cons(c) & 0xffffff, ==, c->prod);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-syncs"), ==, 4);

    /* An undefined opcode among the TLBIs' is illegal, no TLBI */
    gerror = qtest_readl(c->qts, SMMU + R_GERROR);
    queue_cmd(c, CMD_TLBI_UNDEFINED, 0);
    publish(c);
    g_assert_cmpuint(CONS_ERR(cons(c)), ==, CERROR_ILL);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-errors"), ==, 2);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-tlbi"), ==, 0);
    g_assert_true((qtest_readl(c->qts, SMMU + R_GERROR) ^ gerror) &
                  GERROR_CMDQ_ERR);
    stop(c);
}

/*
 * A queue in MMIO is read through the memory API, as stock reads it:
 * virt's PL011 reads as zeros, an illegal command (not an abort).
 */
static void test_queue_in_mmio(void)
{
    Ctx *c = start(0x09000000ULL);

    c->prod = 1;
    publish(c);
    g_assert_cmphex(cons(c) & 0xffffff, ==, 0);
    g_assert_cmpuint(CONS_ERR(cons(c)), ==, CERROR_ILL);
    stop(c);
}

/* A queue at @base whose fetch aborts: CERROR_ABT, nothing run. */
static void check_queue_aborts(uint64_t base)
{
    Ctx *c = start(base);

    c->prod = 1;
    publish(c);
    g_assert_cmphex(cons(c) & 0xffffff, ==, 0);
    g_assert_cmpuint(CONS_ERR(cons(c)), ==, CERROR_ABT);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands"), ==, 0);
    g_assert_true((qtest_readl(c->qts, SMMU + R_GERROR) ^
                   qtest_readl(c->qts, SMMU + R_GERRORN)) & GERROR_CMDQ_ERR);
    stop(c);
}

/*
 * A queue in the SMMU's own registers: stock reads it inside the SMMU's
 * MMIO write, re-entrant IO that QEMU refuses.
 */
static void test_queue_in_smmu(void)
{
    check_queue_aborts(SMMU);
}

/* A queue where nothing answers (a hole of virt's map) */
static void test_queue_not_mapped(void)
{
    check_queue_aborts(0x0b000000ULL);
}

/*
 * A queue in a ROM device in ROM mode (virt's flash at 0, blank here)
 * is read, as stock reads it: its blank entry is an illegal command,
 * not an abort on the fetch.
 */
static void test_queue_in_flash(void)
{
    Ctx *c = start(0);

    c->prod = 1;
    publish(c);
    g_assert_cmphex(cons(c) & 0xffffff, ==, 0);
    g_assert_cmpuint(CONS_ERR(cons(c)), ==, CERROR_ILL);
    stop(c);
}

/*
 * An EL2 TLBI (no stage of this SMMU uses EL2's TLB: consumed, nothing
 * invalidated) counts as a command, not as an invalidation.
 */
static void test_tlbi_el2_not_counted(void)
{
    Ctx *c = start(QUEUE);

    queue_cmd(c, CMD_TLBI_EL2_ALL, 0);
    queue_cmd(c, CMD_TLBI_NH_ALL, 0);
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c), ==, c->prod);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands"), ==, 3);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-tlbi"), ==, 1);
    stop(c);
}

/* Page 1 aliases CMDQ_PROD and CMDQ_CONS (QEMU's choice, as stock) */
static void test_page1_alias(void)
{
    Ctx *c = start(QUEUE);

    queue_cmd(c, CMD_SYNC, 0);
    queue_cmd(c, CMD_SYNC, 0);
    qtest_writel(c->qts, SMMU + 0x10000 + R_CMDQ_PROD, c->prod);
    g_assert_cmphex(qtest_readl(c->qts, SMMU + 0x10000 + R_CMDQ_CONS), ==,
                    c->prod);
    g_assert_cmphex(cons(c), ==, c->prod);
    stop(c);
}

/* CMDQ_CONS moves only while the queue is disabled. */
static void test_cons_write(void)
{
    Ctx *c = start(QUEUE);

    qtest_writel(c->qts, SMMU + R_CMDQ_CONS, 3);    /* enabled: ignored */
    g_assert_cmphex(cons(c), ==, 0);
    qtest_writel(c->qts, SMMU + R_CR0, 0);
    qtest_writel(c->qts, SMMU + R_CMDQ_CONS, 3);
    g_assert_cmphex(cons(c), ==, 3);
    c->prod = 3;
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    qtest_writel(c->qts, SMMU + R_CR0, CR0_CMDQEN);
    g_assert_cmphex(cons(c), ==, 4);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands"), ==, 1);
    stop(c);
}

/*
 * More commands than one kick runs (256): the rest is drained from a
 * bottom half, so CONS reaches PROD without another PROD write.
 */
static void test_budget(void)
{
    Ctx *c = start(QUEUE);
    const uint32_t n = 600, log2size = 10;
    uint32_t i;
    int tries;

    qtest_writel(c->qts, SMMU + R_CR0, 0);
    qtest_writeq(c->qts, SMMU + R_CMDQ_BASE, QUEUE | log2size);
    for (i = 0; i < n; i++) {
        qtest_writel(c->qts, QUEUE + i * 16, CMD_SYNC);
    }
    qtest_writel(c->qts, SMMU + R_CR0, CR0_CMDQEN);
    qtest_writel(c->qts, SMMU + R_CMDQ_PROD, n);
    for (tries = 0; tries < 1000 && cons(c) != n; tries++) {
        qtest_clock_step(c->qts, 1000);
    }
    g_assert_cmphex(cons(c), ==, n);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-syncs"), ==, n);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-drains"), >=, 3);
    stop(c);
}

/* Queue a TLBI_NH_VA of one 4 KiB page (range form: TG 4 KiB, TTL 3) */
static void queue_tlbi_page(Ctx *c, uint16_t asid, uint64_t addr)
{
    uint64_t at = QUEUE + (c->prod & (ENTRIES - 1)) * 16;

    qtest_writel(c->qts, at, CMD_TLBI_NH_VA);           /* NUM 0, SCALE 0 */
    qtest_writel(c->qts, at + 4, (uint32_t)asid << 16);
    qtest_writel(c->qts, at + 8, (uint32_t)addr | (1U << 10) | (3U << 8) |
                 1);                                    /* TG, TTL, leaf */
    qtest_writel(c->qts, at + 12, addr >> 32);
    c->prod = (c->prod + 1) & (2 * ENTRIES - 1);
}

/*
 * Consecutive range TLBIs of one batch of the same kind whose ranges
 * touch are merged, across a CMD_SYNC; another ASID or a gap is not.
 */
static void test_tlbi_merge(void)
{
    Ctx *c = start(QUEUE);

    queue_tlbi_page(c, 1, 0x1000);
    queue_tlbi_page(c, 1, 0x2000);          /* merged */
    queue_tlbi_page(c, 2, 0x3000);          /* another ASID */
    queue_tlbi_page(c, 2, 0x5000);          /* a gap */
    queue_cmd(c, CMD_SYNC, 0);
    queue_tlbi_page(c, 2, 0x4000);          /* fills it: merged */
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c), ==, c->prod);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-tlbi"), ==, 5);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-tlbi-merged"), ==, 2);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-errors"), ==, 0);
    stop(c);
}

/*
 * Translation tables in MMIO: a walk on a thread without the BQL fails
 * (it may not take the BQL under the SMMU's mutex), one with the BQL
 * reads them as stock does (the "smmuv3-walk-mmio" verb).
 */
static void test_walk_mmio(void)
{
    Ctx *c = start_with("-M virt,iommu=smmuv3 -m 512M "
                        "-device pci-testdev", QUEUE);
    g_autofree gchar *rsp = qtest_smmuv3_walk_mmio(c->qts);

    g_assert_cmpstr(rsp, ==, "OK thread=fault bql=0x40000000");
    stop(c);
}

/*
 * Producers, pollers and translations racing the invalidations (the
 * verb checks that no translation is older than its page's last
 * completed CMD_SYNC); every command it queued ran and was counted, and
 * translations of more pages than the IOTLB holds evicted entries.
 */
static void test_stress(void)
{
    const char *env = g_getenv("SMMUV3_STRESS_ROUNDS");
    int rounds = env ? atoi(env) : 2000;
    Ctx *c = g_new0(Ctx, 1);
    g_autofree gchar *rsp = NULL;
    uint64_t commands = 0, syncs = 0, translations = 0, mapped = 0;
    uint64_t commands_before, syncs_before;

    /* Another PCI function than 00:00.0: the verb's static stream */
    c->qts = qtest_init("-M virt,iommu=smmuv3 -m 512M "
                        "-device pci-testdev");
    commands_before = smmu_stat(c, "smmu-cmdq-commands");
    syncs_before = smmu_stat(c, "smmu-cmdq-syncs");
    rsp = qtest_smmuv3_cmdq_stress(c->qts, 4, rounds, g_test_rand_int());
    g_test_message("%s", rsp);
    g_assert_true(g_str_has_prefix(rsp, "OK "));
    g_assert_cmpint(sscanf(rsp, "OK commands=%" SCNu64 " syncs=%" SCNu64
                           " translations=%" SCNu64 " mapped=%" SCNu64,
                           &commands, &syncs, &translations, &mapped), ==, 4);
    /* A TLBI and a CMD_SYNC a round at least, and the set-up's three */
    g_assert_cmpuint(commands, >=, 4 * 2 * rounds + 3);
    g_assert_cmpuint(syncs, ==, 4 * rounds);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-commands") - commands_before,
                     ==, commands);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-syncs") - syncs_before, ==,
                     syncs + 1);
    g_assert_cmpuint(smmu_stat(c, "smmu-cmdq-errors"), ==, 0);
    g_assert_cmpuint(smmu_stat(c, "smmu-iotlb-evictions"), >, 0);
    /* Translations ran and checked something: each mapped page's */
    g_assert_cmpuint(translations, >, 0);
    g_assert_cmpuint(mapped, >, 0);
    stop(c);
}

/*
 * A guest-written STE that asks for AArch32 stage-2 tables (S2AA64 = 0,
 * which IDR0.TTF does not offer) is ILLEGAL: the translation fails with
 * C_BAD_STE and QEMU goes on (the base aborted on a g_assert).  The same
 * STE with S2AA64 = 1 is otherwise valid: its empty table then faults
 * with F_TRANSLATION instead.  The DMA comes from an edu device at 00:02.0
 * (StreamID 0x10) on virt's low ECAM (highmem=off).
 */
#define ECAM            0x3f000000ULL
#define EDU_CFG         (ECAM + (0x10 << 12))
#define EDU_BAR         0x10000000ULL
#define STRTAB          0x40200000ULL
#define EVENTQ          0x40210000ULL
#define S2_TABLE        0x40300000ULL
#define EDU_SID         0x10
#define R_STRTAB_BASE   0x80
#define R_STRTAB_CFG    0x88
#define R_EVENTQ_BASE   0xa0
#define R_EVENTQ_PROD   0x100a8         /* page 1 */
#define CR0_SMMUEN      (1U << 0)
#define CR0_EVENTQEN    (1U << 2)
#define EVT_C_BAD_STE   0x04
#define EVT_F_TRANSLATION 0x10

static void write_s2_ste(Ctx *c, bool aa64)
{
    uint64_t ste = STRTAB + EDU_SID * 64;
    int i;

    for (i = 0; i < 16; i++) {
        qtest_writel(c->qts, ste + i * 4, 0);
    }
    qtest_writel(c->qts, ste, 1 | (6 << 1));       /* V, Config: S2 only */
    qtest_writel(c->qts, ste + 16, 1);              /* S2VMID */
    /* T0SZ 25, SL0 1 (4 KiB: level 1), TG 4 KiB, PS 40 bits, S2R */
    qtest_writel(c->qts, ste + 20, 25 | (1 << 6) | (2 << 16) |
                 ((uint32_t)aa64 << 19) | (1 << 26));
    qtest_writel(c->qts, ste + 24, (uint32_t)S2_TABLE);
}

/*
 * edu: read 4 bytes at IOVA 0x1000 into its buffer, and let it run.
 * One dword: a failed translation leaves an access to
 * io_mem_unassigned, at most 4 bytes at a time, so a longer one would
 * be translated (and reported) again for each further 4 bytes.
 */
static void edu_dma(Ctx *c)
{
    qtest_writeq(c->qts, EDU_BAR + 0x80, 0x1000);           /* src */
    qtest_writeq(c->qts, EDU_BAR + 0x88, 0x40000);          /* dst */
    qtest_writeq(c->qts, EDU_BAR + 0x90, 4);                /* count */
    qtest_writeq(c->qts, EDU_BAR + 0x98, 1);                /* run */
    qtest_clock_step(c->qts, 200 * 1000 * 1000);            /* its timer */
    g_assert_cmpuint(qtest_readq(c->qts, EDU_BAR + 0x98) & 1, ==, 0);
}

static uint32_t event_type(Ctx *c, unsigned n)
{
    uint64_t evt = EVENTQ + n * 32;

    g_assert_cmphex(qtest_readl(c->qts, evt + 4), ==, EDU_SID);
    return qtest_readl(c->qts, evt) & 0xff;
}

static void test_ste_s2_aarch32(void)
{
    Ctx *c = start_with("-M virt,iommu=smmuv3,highmem=off -m 512M "
                        "-global arm-smmuv3.stage=2 -device edu,addr=2",
                        QUEUE);

    g_assert_cmphex(qtest_readl(c->qts, EDU_CFG), ==, 0x11e81234);
    qtest_writel(c->qts, EDU_CFG + 0x10, (uint32_t)EDU_BAR);
    qtest_writew(c->qts, EDU_CFG + 0x04, 0x6);      /* memory, bus master */

    write_s2_ste(c, false);
    qtest_writeq(c->qts, SMMU + R_STRTAB_BASE, STRTAB);
    qtest_writel(c->qts, SMMU + R_STRTAB_CFG, 5);   /* linear, 32 STEs */
    qtest_writeq(c->qts, SMMU + R_EVENTQ_BASE, EVENTQ | 3);
    qtest_writel(c->qts, SMMU + R_CR0,
                 CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN);
    g_assert_cmphex(qtest_readl(c->qts, SMMU + R_CR0ACK), ==,
                    CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN);

    edu_dma(c);
    g_assert_cmphex(qtest_readl(c->qts, SMMU + R_EVENTQ_PROD), ==, 1);
    g_assert_cmphex(event_type(c, 0), ==, EVT_C_BAD_STE);

    /* The same STE with AArch64 tables: decoded, its empty table faults */
    write_s2_ste(c, true);
    queue_cmd(c, CMD_CFGI_STE_RANGE, 31);           /* CFGI_ALL */
    queue_cmd(c, CMD_SYNC, 0);
    publish(c);
    g_assert_cmphex(cons(c), ==, c->prod);
    edu_dma(c);
    g_assert_cmphex(qtest_readl(c->qts, SMMU + R_EVENTQ_PROD), ==, 2);
    g_assert_cmphex(event_type(c, 1), ==, EVT_F_TRANSLATION);
    /* its InputAddr: the IOVA the device read */
    g_assert_cmphex(qtest_readq(c->qts, EVENTQ + 32 + 16), ==, 0x1000);
    stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/smmuv3-cmdq/consume", test_consume);
    qtest_add_func("/smmuv3-cmdq/wrap", test_wrap);
    qtest_add_func("/smmuv3-cmdq/disabled", test_disabled);
    qtest_add_func("/smmuv3-cmdq/illegal", test_illegal);
    qtest_add_func("/smmuv3-cmdq/queue-in-mmio", test_queue_in_mmio);
    qtest_add_func("/smmuv3-cmdq/queue-in-smmu", test_queue_in_smmu);
    qtest_add_func("/smmuv3-cmdq/queue-not-mapped", test_queue_not_mapped);
    qtest_add_func("/smmuv3-cmdq/queue-in-flash", test_queue_in_flash);
    qtest_add_func("/smmuv3-cmdq/tlbi-el2", test_tlbi_el2_not_counted);
    qtest_add_func("/smmuv3-cmdq/page1-alias", test_page1_alias);
    qtest_add_func("/smmuv3-cmdq/cons-write", test_cons_write);
    qtest_add_func("/smmuv3-cmdq/budget", test_budget);
    qtest_add_func("/smmuv3-cmdq/tlbi-merge", test_tlbi_merge);
    qtest_add_func("/smmuv3-cmdq/walk-mmio", test_walk_mmio);
    qtest_add_func("/smmuv3-cmdq/stress", test_stress);
    qtest_add_func("/smmuv3/ste-s2-aarch32", test_ste_s2_aarch32);
    return g_test_run();
}
