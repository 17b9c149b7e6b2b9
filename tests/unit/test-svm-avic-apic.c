/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit test of the AVIC backing page rules
 * (target/i386/tcg/system/svm-avic-apic.c): access classes, interrupt
 * evaluation against PPR, accept and EOI, and IPIs through fake
 * physical and logical APIC ID tables, with the exit causes and
 * indexes Linux's avic_incomplete_ipi_interception() expects.
 */

#include "qemu/osdep.h"
#include "../../target/i386/tcg/system/svm-avic-apic.h"

#define NPAGES      32
#define PAGE_PA(i)  (0x100000ULL + (i) * 0x1000ULL)

typedef struct Fake {
    uint32_t page[NPAGES][1024];
    uint64_t phys[512];
    uint32_t log[64];
    int doorbells;
    uint32_t last_doorbell;
    /* Flip IsRunning of entry flip_index on its next read: a race */
    int flip_index;
    /* Order of events: 'i' = IRR set, 'r' = IsRunning read, 'd' = bell */
    char events[64];
    unsigned nevents;
} Fake;

static void event(Fake *f, char c)
{
    if (f->nevents < sizeof(f->events) - 1) {
        f->events[f->nevents++] = c;
    }
}

#define REG(p, off) ((p)[(off) / 4])

static uint64_t fake_phys(void *opaque, uint32_t index)
{
    Fake *f = opaque;

    g_assert_cmpuint(index, <, 512);
    event(f, 'r');
    if ((int)index == f->flip_index) {
        uint64_t old = f->phys[index];

        f->phys[index] ^= AVIC_PHYS_IS_RUNNING;
        f->flip_index = -1;
        return old;
    }
    return f->phys[index];
}

static uint32_t fake_log(void *opaque, uint32_t index)
{
    Fake *f = opaque;

    g_assert_cmpuint(index, <, 64);
    return f->log[index];
}

static bool fake_set_irr(void *opaque, uint64_t pa, int vector)
{
    Fake *f = opaque;

    for (int i = 0; i < NPAGES; i++) {
        if (pa == PAGE_PA(i)) {
            event(f, 'i');
            avic_apic_set_irr(f->page[i], vector);
            return true;
        }
    }
    return false;
}

static void fake_doorbell(void *opaque, uint32_t host_id)
{
    Fake *f = opaque;

    event(f, 'd');
    f->doorbells++;
    f->last_doorbell = host_id;
}

static const AvicIpiOps fake_ops = {
    .phys_entry = fake_phys,
    .log_entry = fake_log,
    .set_irr = fake_set_irr,
    .doorbell = fake_doorbell,
};

/* vCPU @id uses page @id, runs on host APIC ID 0x10 + id if running */
static void add_vcpu(Fake *f, uint32_t id, bool running)
{
    f->phys[id] = AVIC_PHYS_VALID | PAGE_PA(id) | (0x10 + id) |
                  (running ? AVIC_PHYS_IS_RUNNING : 0);
}

static bool irr(Fake *f, int page, int vector)
{
    return REG(f->page[page], AVIC_REG_IRR + 0x10 * (vector / 32)) &
           (1U << (vector % 32));
}

static void test_access(void)
{
    g_assert_cmpint(avic_apic_access(AVIC_REG_TPR, true, false), ==,
                    AVIC_ACCESS_ACCEL);
    g_assert_cmpint(avic_apic_access(AVIC_REG_TPR, false, false), ==,
                    AVIC_ACCESS_ALLOW);
    g_assert_cmpint(avic_apic_access(AVIC_REG_EOI, true, true), ==,
                    AVIC_ACCESS_ACCEL);
    g_assert_cmpint(avic_apic_access(AVIC_REG_EOI, false, false), ==,
                    AVIC_ACCESS_ALLOW);
    g_assert_cmpint(avic_apic_access(AVIC_REG_ICR_LO, true, false), ==,
                    AVIC_ACCESS_ACCEL);
    g_assert_cmpint(avic_apic_access(AVIC_REG_ICR_HI, true, false), ==,
                    AVIC_ACCESS_ALLOW);
    g_assert_cmpint(avic_apic_access(AVIC_REG_ICR_HI, false, true), ==,
                    AVIC_ACCESS_GP);
    /* The registers Linux handles as trap writes */
    for (uint32_t off = AVIC_REG_LVT_TIMER; off <= AVIC_REG_LVT_ERROR;
         off += 0x10) {
        g_assert_cmpint(avic_apic_access(off, true, false), ==,
                        AVIC_ACCESS_TRAP);
        g_assert_cmpint(avic_apic_access(off, false, false), ==,
                        AVIC_ACCESS_ALLOW);
    }
    g_assert_cmpint(avic_apic_access(AVIC_REG_ID, true, false), ==,
                    AVIC_ACCESS_TRAP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_LDR, true, false), ==,
                    AVIC_ACCESS_TRAP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_DFR, true, false), ==,
                    AVIC_ACCESS_TRAP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_SVR, true, false), ==,
                    AVIC_ACCESS_TRAP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_TIMER_ICR, true, false), ==,
                    AVIC_ACCESS_TRAP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_TIMER_DCR, true, false), ==,
                    AVIC_ACCESS_TRAP);
    /* Read-only or hypervisor-owned */
    g_assert_cmpint(avic_apic_access(AVIC_REG_IRR + 0x30, true, false), ==,
                    AVIC_ACCESS_FAULT);
    g_assert_cmpint(avic_apic_access(AVIC_REG_ISR, false, false), ==,
                    AVIC_ACCESS_ALLOW);
    g_assert_cmpint(avic_apic_access(AVIC_REG_TIMER_CCR, false, false), ==,
                    AVIC_ACCESS_FAULT);
    g_assert_cmpint(avic_apic_access(AVIC_REG_VERSION, true, false), ==,
                    AVIC_ACCESS_FAULT);
    g_assert_cmpint(avic_apic_access(AVIC_REG_APR, false, false), ==,
                    AVIC_ACCESS_FAULT);
    /* x2APIC differences: what x2APIC itself refuses is #GP */
    g_assert_cmpint(avic_apic_access(AVIC_REG_LDR, true, true), ==,
                    AVIC_ACCESS_GP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_LDR, false, true), ==,
                    AVIC_ACCESS_ALLOW);
    g_assert_cmpint(avic_apic_access(AVIC_REG_ID, true, true), ==,
                    AVIC_ACCESS_GP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_DFR, false, true), ==,
                    AVIC_ACCESS_GP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_EOI, false, true), ==,
                    AVIC_ACCESS_GP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_SELF_IPI, false, true), ==,
                    AVIC_ACCESS_GP);
    g_assert_cmpint(avic_apic_access(AVIC_REG_SELF_IPI, true, true), ==,
                    AVIC_ACCESS_ACCEL);
    g_assert_cmpint(avic_apic_access(AVIC_REG_SELF_IPI, true, false), ==,
                    AVIC_ACCESS_FAULT);
    /* Offsets inside a register classify as the register, as Linux */
    g_assert_cmpint(avic_apic_access(AVIC_REG_EOI + 4, true, false), ==,
                    AVIC_ACCESS_ACCEL);
    g_assert_cmpint(avic_apic_access(0x400, false, false), ==,
                    AVIC_ACCESS_FAULT);
}

/*
 * Linux's is_avic_unaccelerated_access_trap(): NOACCEL at these offsets
 * is taken as a trap after a write, whatever the exit says; so they
 * never fault, and no read anywhere traps.
 */
static void test_access_linux_traps(void)
{
    static const uint32_t traps[] = {
        0x020, 0x0b0, 0x0c0, 0x0d0, 0x0e0, 0x0f0, 0x280, 0x300,
        0x320, 0x330, 0x340, 0x350, 0x360, 0x370, 0x380, 0x3e0,
    };

    for (uint32_t off = 0; off < 0x1000; off += 0x10) {
        for (int x2 = 0; x2 < 2; x2++) {
            g_assert_cmpint(avic_apic_access(off, false, x2), !=,
                            AVIC_ACCESS_TRAP);
        }
    }
    for (unsigned i = 0; i < ARRAY_SIZE(traps); i++) {
        for (int w = 0; w < 2; w++) {
            for (int x2 = 0; x2 < 2; x2++) {
                g_assert_cmpint(avic_apic_access(traps[i], w, x2), !=,
                                AVIC_ACCESS_FAULT);
            }
        }
    }
}

static void test_pending_ppr(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    uint32_t *p = f->page[0];

    g_assert_cmpint(avic_apic_pending(p), ==, -1);
    avic_apic_set_irr(p, 0x41);
    g_assert_cmpint(avic_apic_pending(p), ==, 0x41);
    /* TPR in the same priority class masks it */
    avic_apic_set_tpr(p, 0x40);
    g_assert_cmpuint(REG(p, AVIC_REG_PPR), ==, 0x40);
    g_assert_cmpint(avic_apic_pending(p), ==, -1);
    avic_apic_set_tpr(p, 0x3f);
    g_assert_cmpint(avic_apic_pending(p), ==, 0x41);
    avic_apic_set_tpr(p, 0);
    /* An in-service vector of a higher class masks it too */
    g_assert_true(avic_apic_accept(p, 0x41));
    g_assert_false(irr(f, 0, 0x41));
    g_assert_cmpuint(REG(p, AVIC_REG_ISR + 0x20), ==, 1U << 1);
    g_assert_cmpuint(REG(p, AVIC_REG_PPR), ==, 0x40);
    avic_apic_set_irr(p, 0x45);
    g_assert_cmpint(avic_apic_pending(p), ==, -1);
    avic_apic_set_irr(p, 0xe1);
    g_assert_cmpint(avic_apic_pending(p), ==, 0xe1);
    /* Accepting a bit that is gone changes nothing */
    g_assert_false(avic_apic_accept(p, 0x80));
    g_assert_cmpuint(REG(p, AVIC_REG_ISR + 0x40), ==, 0);
}

static void test_eoi(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    uint32_t *p = f->page[0];
    int vec;

    g_assert_true(avic_apic_eoi(p, &vec));
    g_assert_cmpint(vec, ==, -1);
    avic_apic_set_irr(p, 0x31);
    avic_apic_set_irr(p, 0x62);
    g_assert_true(avic_apic_accept(p, 0x31));
    g_assert_true(avic_apic_accept(p, 0x62));
    /* Edge: the highest in-service vector is cleared */
    g_assert_true(avic_apic_eoi(p, &vec));
    g_assert_cmpint(vec, ==, 0x62);
    g_assert_cmpuint(REG(p, AVIC_REG_ISR + 0x30), ==, 0);
    g_assert_cmpuint(REG(p, AVIC_REG_PPR), ==, 0x30);
    /* Level: nothing changes, the write traps */
    REG(p, AVIC_REG_TMR + 0x10) = 1U << (0x31 - 32);
    g_assert_false(avic_apic_eoi(p, &vec));
    g_assert_cmpint(vec, ==, 0x31);
    g_assert_cmpuint(REG(p, AVIC_REG_ISR + 0x10), ==, 1U << (0x31 - 32));
}

static AvicIpiResult send_ipi(Fake *f, uint32_t self, uint32_t lo, uint32_t hi,
                              bool x2apic)
{
    return avic_apic_send_ipi(&fake_ops, f, f->page[self], self, lo, hi,
                              x2apic, x2apic ? 0x1ff : 0xfe);
}

static void test_ipi_physical(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, true);
    add_vcpu(f, 2, false);

    /* Running target: IRR and a doorbell to its host APIC ID */
    r = send_ipi(f, 0, 0x1000 | 0x50, 1 << 24, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 1, 0x50));
    g_assert_cmpint(f->doorbells, ==, 1);
    g_assert_cmpuint(f->last_doorbell, ==, 0x11);
    /* The ICR landed in the sender's page without delivery status */
    g_assert_cmpuint(REG(f->page[0], AVIC_REG_ICR_LO), ==, 0x50);
    g_assert_cmpuint(REG(f->page[0], AVIC_REG_ICR_HI), ==, 1 << 24);

    /* Not running: IRR set, no doorbell, exit with the destination */
    r = send_ipi(f, 0, 0x51, 2 << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
    g_assert_cmpuint(r.index, ==, 2);
    g_assert_true(irr(f, 2, 0x51));
    g_assert_cmpint(f->doorbells, ==, 1);

    /* Invalid entry, index beyond the table */
    r = send_ipi(f, 0, 0x52, 3 << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_cmpuint(r.index, ==, 3);
    r = avic_apic_send_ipi(&fake_ops, f, f->page[0], 0, 0x52, 2 << 24,
                           false, 1);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    /* The max index field's reserved bits are not part of it */
    r = avic_apic_send_ipi(&fake_ops, f, f->page[0], 0, 0x52, 2 << 24,
                           false, 0x201);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    r = avic_apic_send_ipi(&fake_ops, f, f->page[0], 0, 0x52, 2,
                           true, 0x401);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);

    /* Backing page the tables point nowhere */
    f->phys[3] = AVIC_PHYS_VALID | AVIC_PHYS_IS_RUNNING | 0xdead000ULL;
    r = send_ipi(f, 0, 0x52, 3 << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_BACKING_PAGE);
    f->phys[3] = 0;

    /* Not fixed (INIT), level-triggered, vector below 16: no IRR */
    r = send_ipi(f, 0, 0x500, 1 << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_INT_TYPE);
    r = send_ipi(f, 0, 0x8000 | 0x53, 1 << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_INT_TYPE);
    g_assert_false(irr(f, 1, 0x53));
    r = send_ipi(f, 0, 0x05, 1 << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_IPI_VECTOR);
    g_assert_cmpint(f->doorbells, ==, 1);

    /* Self by destination and by shorthand */
    r = send_ipi(f, 1, 0x54, 1 << 24, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 1, 0x54));
    r = send_ipi(f, 1, (1 << 18) | 0x55, 0, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 1, 0x55));
    g_assert_cmpint(f->doorbells, ==, 1);
}

static void test_ipi_broadcast(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, true);
    add_vcpu(f, 3, false);      /* 2 is a hole: skipped, not a failure */

    /* All but self */
    r = send_ipi(f, 0, (3 << 18) | 0x60, 0, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
    g_assert_cmpuint(r.index, ==, 3);
    g_assert_false(irr(f, 0, 0x60));
    g_assert_true(irr(f, 1, 0x60));
    g_assert_true(irr(f, 3, 0x60));
    g_assert_cmpint(f->doorbells, ==, 1);
    /* All including self, by shorthand and by destination 0xff */
    r = send_ipi(f, 1, (2 << 18) | 0x61, 0, false);
    g_assert_true(irr(f, 0, 0x61) && irr(f, 1, 0x61) && irr(f, 3, 0x61));
    r = send_ipi(f, 1, 0x62, 0xffU << 24, false);
    g_assert_true(irr(f, 0, 0x62) && irr(f, 1, 0x62) && irr(f, 3, 0x62));
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
}

static void test_ipi_logical(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, true);
    add_vcpu(f, 2, true);

    /* Flat model: index = bit of the MDA */
    REG(f->page[0], AVIC_REG_DFR) = 0xffffffff;
    f->log[1] = AVIC_LOG_VALID | 1;
    f->log[2] = AVIC_LOG_VALID | 2;
    r = send_ipi(f, 0, 0x800 | 0x70, 0x06U << 24, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 1, 0x70) && irr(f, 2, 0x70));
    g_assert_cmpint(f->doorbells, ==, 2);
    /* A bit with no valid entry fails with its index */
    r = send_ipi(f, 0, 0x800 | 0x71, 0x0aU << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_cmpuint(r.index, ==, 3);
    g_assert_false(irr(f, 1, 0x71));
    /* A logical 0xff is no broadcast: all eight bits, the holes fail */
    r = send_ipi(f, 0, 0x800 | 0x73, 0xffU << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_cmpuint(r.index, ==, 0);
    g_assert_false(irr(f, 1, 0x73) || irr(f, 2, 0x73));

    /* Cluster model: index = cluster * 4 + bit */
    memset(f->log, 0, sizeof(f->log));
    REG(f->page[0], AVIC_REG_DFR) = 0x0fffffff;
    f->log[(2 << 2) + 1] = AVIC_LOG_VALID | 2;
    r = send_ipi(f, 0, 0x800 | 0x72, 0x22U << 24, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 2, 0x72));
    g_assert_false(irr(f, 1, 0x72));
}

static void test_ipi_x2apic(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, false);
    add_vcpu(f, 5, true);
    /* Physical, 32-bit destination; the ICR is 64-bit at 0x300 */
    r = send_ipi(f, 0, 0x1000 | 0x80, 5, true);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 5, 0x80));
    g_assert_cmpuint(f->last_doorbell, ==, 0x15);
    /* AMD keeps the x2APIC ICR split at 0x300 / 0x310 */
    g_assert_cmpuint(REG(f->page[0], AVIC_REG_ICR_LO), ==, 0x80);
    g_assert_cmpuint(REG(f->page[0], AVIC_REG_ICR_HI), ==, 5);
    /* Beyond the x2AVIC table */
    r = send_ipi(f, 0, 0x81, 0x200, true);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_cmpuint(r.index, ==, 0x200);
    /* Logical: cluster 0, members 1 and 5 */
    r = send_ipi(f, 0, 0x800 | 0x82, (1 << 1) | (1 << 5), true);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
    g_assert_cmpuint(r.index, ==, 1);
    g_assert_true(irr(f, 1, 0x82) && irr(f, 5, 0x82));
    /* Logical: cluster 1, member 2 is x2APIC ID 18 */
    add_vcpu(f, 18, true);
    r = send_ipi(f, 0, 0x800 | 0x83, (1 << 16) | (1 << 2), true);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 18, 0x83));
    g_assert_false(irr(f, 2, 0x83));
    g_assert_cmpuint(f->last_doorbell, ==, 0x10 + 18);
    /* Broadcast, and a not-running target above 255 */
    f->phys[300] = AVIC_PHYS_VALID | PAGE_PA(30) | 0x77;   /* not running */
    r = send_ipi(f, 0, 0x84, 0xffffffff, true);
    g_assert_true(irr(f, 5, 0x84) && irr(f, 18, 0x84) && irr(f, 0, 0x84));
    g_assert_true(irr(f, 30, 0x84));
    g_assert_true(r.self);
    r = send_ipi(f, 0, 0x85, 300, true);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
    g_assert_cmpuint(r.index, ==, 300);
}

static void test_ipi_all_or_nothing(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, true);
    REG(f->page[0], AVIC_REG_DFR) = 0xffffffff;
    f->log[0] = AVIC_LOG_VALID | 0;
    f->log[1] = AVIC_LOG_VALID | 1;
    /* Members 1 (valid) and 2 (no entry): nobody gets it */
    r = send_ipi(f, 0, 0x800 | 0x90, 0x06U << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_cmpuint(r.index, ==, 2);
    g_assert_false(irr(f, 1, 0x90));
    g_assert_cmpint(f->doorbells, ==, 0);
    /* Self plus a vCPU whose logical entry names a bad physical one */
    f->log[2] = AVIC_LOG_VALID | 7;
    r = send_ipi(f, 0, 0x800 | 0x91, 0x05U << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
    g_assert_false(irr(f, 0, 0x91));
}

static void test_ipi_logical_clusters(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 4, true);
    REG(f->page[0], AVIC_REG_DFR) = 0x0fffffff;
    /* Cluster 10, member bit 3: index 43 */
    f->log[(10 << 2) + 3] = AVIC_LOG_VALID | 4;
    r = send_ipi(f, 0, 0x800 | 0xa0, 0xa8U << 24, false);
    g_assert_false(r.incomplete);
    g_assert_true(irr(f, 4, 0xa0));
    /* Cluster 15 but not all ones: the hypervisor's to emulate */
    r = send_ipi(f, 0, 0x800 | 0xa1, 0xf1U << 24, false);
    g_assert_true(r.incomplete);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_INVALID_TARGET);
}

/* IRR is set before IsRunning is read; the read after the IRR decides */
static void test_ipi_running_race(void)
{
    g_autofree Fake *f = g_new0(Fake, 1);
    AvicIpiResult r;

    f->flip_index = -1;
    add_vcpu(f, 0, true);
    add_vcpu(f, 1, false);
    /* Not running */
    f->flip_index = -1;
    r = send_ipi(f, 0, 0xb0, 1 << 24, false);
    g_assert_cmpint(r.cause, ==, AVIC_IPI_FAILURE_TARGET_NOT_RUNNING);
    f->nevents = 0;
    memset(f->events, 0, sizeof(f->events));
    f->flip_index = 1;      /* the validation read flips it to running */
    r = send_ipi(f, 0, 0xb1, 1 << 24, false);
    g_assert_false(r.incomplete);
    g_assert_cmpint(f->doorbells, ==, 1);
    /* entry read (validation), IRR, IsRunning read, doorbell */
    g_assert_cmpstr(f->events, ==, "rird");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/svm-avic-apic/access", test_access);
    g_test_add_func("/svm-avic-apic/access-linux-traps",
                    test_access_linux_traps);
    g_test_add_func("/svm-avic-apic/pending-ppr", test_pending_ppr);
    g_test_add_func("/svm-avic-apic/eoi", test_eoi);
    g_test_add_func("/svm-avic-apic/ipi-physical", test_ipi_physical);
    g_test_add_func("/svm-avic-apic/ipi-broadcast", test_ipi_broadcast);
    g_test_add_func("/svm-avic-apic/ipi-logical", test_ipi_logical);
    g_test_add_func("/svm-avic-apic/ipi-x2apic", test_ipi_x2apic);
    g_test_add_func("/svm-avic-apic/ipi-all-or-nothing",
                    test_ipi_all_or_nothing);
    g_test_add_func("/svm-avic-apic/ipi-logical-clusters",
                    test_ipi_logical_clusters);
    g_test_add_func("/svm-avic-apic/ipi-running-race", test_ipi_running_race);
    return g_test_run();
}
