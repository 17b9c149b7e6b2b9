/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtests of the emulated Intel IOMMU's interrupt posting
 * (hw/i386/intel_iommu-posted.c, -device intel-iommu,x-posted-intr=on).
 * The test programs the interrupt-remapping table and posted-interrupt
 * descriptors in guest memory, raises MSIs from an edu device in
 * remappable format, and checks against the VT-d specification: CAP.PI,
 * PIR bits, ON, one notification for a burst while ON stays set,
 * notification again once ON is cleared, SN and URG, NDST in xAPIC and
 * x2APIC form, and the faults (reason, index, source) of a bad
 * descriptor address (outside RAM, in MMIO), descriptor reserved fields
 * and posted-IRTE reserved fields, none recorded when the IRTE's FPD
 * is set, and of an IOAPIC pin (no requester) behind a posted IRTE.
 * Notifications are counted by the receiving CPU's APIC
 * ("apic-interrupt-requests") and found as NV in its IRR ("info
 * lapic"), independently of the IOMMU's own counters, which are
 * checked too.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "irq-stats-qtest.h"

/* VT-d registers */
#define DMAR            0xfed90000ULL
#define R_CAP           0x08
#define R_GCMD          0x18
#define R_GSTS          0x1c
#define R_FSTS          0x34
#define R_IRTA          0xb8
#define CAP_PI          (1ULL << 59)
#define CAP_FRO(cap)    ((((cap) >> 24) & 0x3ff) * 16)
#define GCMD_IRE        (1U << 25)
#define GCMD_SIRTP      (1U << 24)
#define GSTS_IRES       (1U << 25)
#define GSTS_IRTPS      (1U << 24)
#define FSTS_PPF        (1U << 1)
#define IRTA_EIME       (1ULL << 11)

/* Fault reasons */
#define FR_IRTE_RSVD    0x24
#define FR_PID_ACCESS   0x27
#define FR_PID_RSVD     0x28

#define SID_NONE        0xffff          /* the IOAPIC's requests */
#define IOAPIC          0xfec00000ULL
#define IOAPIC_PIN      10              /* not wired on q35 */

#define EDU_DEVFN       QPCI_DEVFN(4, 0)
#define EDU_SID         0x20            /* bus 0, device 4, function 0 */
#define EDU_RAISE_IRQ   0x60

/* Guest memory layout of the test */
#define IRT             0x200000ULL
#define PD0             0x300000ULL     /* posted-interrupt descriptors */
#define PD1             0x300040ULL

#define IOMMU_PATH      "/machine/peripheral/iommu0"
#define NV              0xeb            /* Linux's posted-MSI vector */

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *edu;
    QPCIBar bar;
    uint8_t msi_cap;
    bool eime;
} Ctx;

static uint64_t iommu_stat(Ctx *c, const char *name)
{
    return irq_stat(c->qts, "irq-device", IOMMU_PATH, name);
}

/* Interrupts set in the IRR of CPU @cpu's emulated APIC. */
static uint64_t apic_irqs(Ctx *c, int cpu)
{
    g_autofree char *path = irq_stats_cpu_path(c->qts, cpu);

    return irq_stat(c->qts, "irq-vcpu", path, "apic-interrupt-requests");
}

/*
 * The vectors pending in CPU @cpu's IRR, as "info lapic" lists them
 * (the vCPUs never run under qtest: nothing leaves the IRR).
 */
static char *apic_irr(Ctx *c, int cpu)
{
    g_autofree char *out = qtest_hmp(c->qts, "info lapic %d", cpu);
    char *line = strstr(out, "IRR");

    g_assert_nonnull(line);
    return g_strndup(line, strcspn(line, "\r\n"));
}

/* A posted-format IRTE (VT-d "IRTE for Posted Interrupts"). */
static void write_posted_irte(Ctx *c, int index, uint8_t vector, bool urg,
                              uint64_t pda, uint64_t rsvd_lo)
{
    uint64_t lo = 1 /* P */ | (1ULL << 15) /* IM */ |
                  (uint64_t)urg << 14 | (uint64_t)vector << 16 |
                  ((pda >> 6) & ((1ULL << 26) - 1)) << 38 | rsvd_lo;
    uint64_t hi = (pda >> 32) << 32;    /* SVT 0: no source check */

    qtest_writeq(c->qts, IRT + index * 16, lo);
    qtest_writeq(c->qts, IRT + index * 16 + 8, hi);
}

/* A posted-interrupt descriptor: PIR clear, NV, NDST of APIC ID @apic. */
static void write_pd(Ctx *c, uint64_t pd, uint32_t apic, bool sn)
{
    uint32_t ndst = c->eime ? apic : apic << 8;

    for (int i = 0; i < 64; i += 8) {
        qtest_writeq(c->qts, pd + i, 0);
    }
    qtest_writeq(c->qts, pd + 32, (uint64_t)sn << 1 | (uint64_t)NV << 16 |
                 (uint64_t)ndst << 32);
}

static uint64_t pd_control(Ctx *c, uint64_t pd)
{
    return qtest_readq(c->qts, pd + 32);
}

static bool pd_on(Ctx *c, uint64_t pd)
{
    return pd_control(c, pd) & 1;
}

static bool pir_bit(Ctx *c, uint64_t pd, uint8_t vector)
{
    return qtest_readl(c->qts, pd + (vector / 32) * 4) & (1U << (vector % 32));
}

/* edu's MSI in remappable format through IRTE @index, one interrupt. */
static void edu_msi(Ctx *c, int index)
{
    uint32_t addr = 0xfee00000 | (index & 0x7fff) << 5 | 1 << 4 /* IF */ |
                    1 << 3 /* SHV */ | (index >> 15) << 2;

    qpci_config_writel(c->edu, c->msi_cap + PCI_MSI_ADDRESS_LO, addr);
    qpci_config_writew(c->edu, c->msi_cap + PCI_MSI_DATA_64, 0);
    qpci_io_writel(c->edu, c->bar, EDU_RAISE_IRQ, 1);
}

static Ctx *start(const char *posted, bool eime)
{
    Ctx *c = g_new0(Ctx, 1);

    c->eime = eime;
    c->qts = qtest_initf("-M q35 -smp 2 %s -device intel-iommu,intremap=on,"
                         "eim=%s%s%s,id=iommu0 -device edu,addr=04.0",
                         eime ? "-cpu qemu64,+x2apic" : "",
                         eime ? "on" : "off",
                         posted ? ",x-posted-intr=" : "",
                         posted ? posted : "");
    c->bus = qpci_new_pc(c->qts, NULL);
    c->edu = qpci_device_find(c->bus, EDU_DEVFN);
    g_assert_nonnull(c->edu);
    qpci_device_enable(c->edu);
    c->bar = qpci_iomap(c->edu, 0, NULL);
    c->msi_cap = qpci_find_capability(c->edu, PCI_CAP_ID_MSI, 0);
    qpci_config_writel(c->edu, c->msi_cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(c->edu, c->msi_cap + PCI_MSI_FLAGS,
                       qpci_config_readw(c->edu, c->msi_cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);

    /* A table of 256 IRTEs, then interrupt remapping on. */
    qtest_writeq(c->qts, DMAR + R_IRTA,
                 IRT | (eime ? IRTA_EIME : 0) | 7 /* 2^(7+1) entries */);
    qtest_writel(c->qts, DMAR + R_GCMD, GCMD_SIRTP);
    g_assert_true(qtest_readl(c->qts, DMAR + R_GSTS) & GSTS_IRTPS);
    qtest_writel(c->qts, DMAR + R_GCMD, GCMD_IRE);
    g_assert_true(qtest_readl(c->qts, DMAR + R_GSTS) & GSTS_IRES);
    return c;
}

static void stop(Ctx *c)
{
    qpci_iounmap(c->edu, c->bar);
    g_free(c->edu);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    g_free(c);
}

/* The first fault record: its reason, interrupt index and source. */
static void assert_fault_sid(Ctx *c, uint8_t reason, uint16_t index,
                             uint16_t sid)
{
    uint64_t frcd = DMAR + CAP_FRO(qtest_readq(c->qts, DMAR + R_CAP));
    uint64_t lo = qtest_readq(c->qts, frcd);
    uint64_t hi = qtest_readq(c->qts, frcd + 8);

    g_assert_true(qtest_readl(c->qts, DMAR + R_FSTS) & FSTS_PPF);
    g_assert_true(hi >> 63);                             /* F */
    g_assert_cmphex((hi >> 32) & 0xff, ==, reason);      /* FR */
    g_assert_cmphex(hi & 0xffff, ==, sid);               /* SID */
    g_assert_cmphex(lo >> 48, ==, index);                /* FI: index */
}

static void assert_fault(Ctx *c, uint8_t reason, uint16_t index)
{
    assert_fault_sid(c, reason, index, EDU_SID);
}

static void test_cap(void)
{
    Ctx *c = start(NULL, false);

    g_assert_false(qtest_readq(c->qts, DMAR + R_CAP) & CAP_PI);
    stop(c);
    c = start("on", false);
    g_assert_true(qtest_readq(c->qts, DMAR + R_CAP) & CAP_PI);
    stop(c);
}

/* ON clear: PIR, ON, one notification; ON set: PIR only (coalesced). */
static void test_burst(void)
{
    Ctx *c = start("on", false);
    uint64_t apic0 = apic_irqs(c, 0);
    g_autofree char *irr = NULL;

    write_pd(c, PD0, 0, false);
    write_posted_irte(c, 5, 0x45, false, PD0, 0);
    edu_msi(c, 5);
    g_assert_true(pir_bit(c, PD0, 0x45));
    g_assert_true(pd_on(c, PD0));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0 + 1);
    /* The notification is NV, not the posted vector */
    irr = apic_irr(c, 0);
    g_assert_cmpstr(irr, ==, "IRR\t 235 ");

    /* A burst while ON stays set: no further notification. */
    write_posted_irte(c, 6, 0x46, false, PD0, 0);
    edu_msi(c, 6);
    edu_msi(c, 5);
    edu_msi(c, 6);
    g_assert_true(pir_bit(c, PD0, 0x45));
    g_assert_true(pir_bit(c, PD0, 0x46));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0 + 1);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-interrupts"), ==, 4);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-notifications"), ==, 1);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-coalesced"), ==, 3);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-pir-already-set"), ==, 2);

    /* The guest harvests the PIR and clears ON: notified again. */
    qtest_writeq(c->qts, PD0, 0);
    qtest_writeq(c->qts, PD0 + 8, 0);
    qtest_writeq(c->qts, PD0 + 32, pd_control(c, PD0) & ~1ULL);
    edu_msi(c, 6);
    g_assert_true(pir_bit(c, PD0, 0x46));
    g_assert_false(pir_bit(c, PD0, 0x45));
    g_assert_true(pd_on(c, PD0));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0 + 2);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-notifications"), ==, 2);
    stop(c);
}

/* SN suppresses the notification of a non-urgent interrupt only. */
static void test_sn_urg(void)
{
    Ctx *c = start("on", false);
    uint64_t apic0 = apic_irqs(c, 0);

    write_pd(c, PD0, 0, true);
    write_posted_irte(c, 7, 0x47, false, PD0, 0);
    edu_msi(c, 7);
    g_assert_true(pir_bit(c, PD0, 0x47));
    g_assert_false(pd_on(c, PD0));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-suppressed"), ==, 1);

    write_posted_irte(c, 8, 0x48, true, PD0, 0);
    edu_msi(c, 8);
    g_assert_true(pir_bit(c, PD0, 0x48));
    g_assert_true(pd_on(c, PD0));
    g_assert_true(pd_control(c, PD0) & 2);      /* SN left as it was */
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0 + 1);
    stop(c);
}

/* NDST: the xAPIC ID in bits 15:8 (EIME=0), the x2APIC ID (EIME=1). */
static void test_ndst(gconstpointer opaque)
{
    bool eime = GPOINTER_TO_INT(opaque);
    Ctx *c = start("on", eime);
    uint64_t apic0 = apic_irqs(c, 0), apic1 = apic_irqs(c, 1);
    g_autofree char *irr = NULL;

    write_pd(c, PD1, 1, false);
    write_posted_irte(c, 9, 0x49, false, PD1, 0);
    edu_msi(c, 9);
    g_assert_true(pir_bit(c, PD1, 0x49));
    g_assert_cmpuint(apic_irqs(c, 1), ==, apic1 + 1);
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0);
    irr = apic_irr(c, 1);
    g_assert_cmpstr(irr, ==, "IRR\t 235 ");
    stop(c);
}

/* A descriptor outside guest RAM: fault 27h, nothing delivered. */
static void test_bad_pda(void)
{
    Ctx *c = start("on", false);
    uint64_t apic0 = apic_irqs(c, 0);

    write_posted_irte(c, 10, 0x4a, false, 0x10000000000ULL, 0);
    edu_msi(c, 10);
    assert_fault(c, FR_PID_ACCESS, 10);
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-faults"), ==, 1);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-interrupts"), ==, 0);
    stop(c);
}

/*
 * A descriptor address in MMIO (the IOMMU's own registers): fault 27h,
 * and nothing written there.
 */
static void test_mmio_pda(void)
{
    Ctx *c = start("on", false);
    uint64_t cap = qtest_readq(c->qts, DMAR + R_CAP);
    uint64_t irta = qtest_readq(c->qts, DMAR + R_IRTA);

    write_posted_irte(c, 13, 0x4d, true, DMAR, 0);
    edu_msi(c, 13);
    assert_fault(c, FR_PID_ACCESS, 13);
    g_assert_cmphex(qtest_readq(c->qts, DMAR + R_CAP), ==, cap);
    g_assert_cmphex(qtest_readq(c->qts, DMAR + R_IRTA), ==, irta);
    g_assert_true(qtest_readl(c->qts, DMAR + R_GSTS) & GSTS_IRES);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-interrupts"), ==, 0);
    stop(c);
}

/*
 * FPD (IRTE bit 1) set: a bad descriptor address records no fault, the
 * interrupt is still dropped and counted as a posting fault.
 */
static void test_fpd(void)
{
    Ctx *c = start("on", false);
    uint64_t apic0 = apic_irqs(c, 0);

    write_posted_irte(c, 14, 0x4e, false, 0x10000000000ULL, 1ULL << 1);
    edu_msi(c, 14);
    g_assert_false(qtest_readl(c->qts, DMAR + R_FSTS) & FSTS_PPF);
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-faults"), ==, 1);
    stop(c);
}

/* A reserved field set in the descriptor: fault 28h, PIR untouched. */
static void test_pd_reserved(void)
{
    Ctx *c = start("on", false);

    write_pd(c, PD0, 0, false);
    qtest_writeq(c->qts, PD0 + 48, 1);              /* bits 447:384 */
    write_posted_irte(c, 11, 0x4b, false, PD0, 0);
    edu_msi(c, 11);
    assert_fault(c, FR_PID_RSVD, 11);
    g_assert_false(pir_bit(c, PD0, 0x4b));
    g_assert_false(pd_on(c, PD0));
    stop(c);

    /* Control bits 15:2 (bits 271:258 of the descriptor) */
    c = start("on", false);
    write_pd(c, PD0, 0, false);
    qtest_writeq(c->qts, PD0 + 32, pd_control(c, PD0) | 1ULL << 2);
    write_posted_irte(c, 11, 0x4b, false, PD0, 0);
    edu_msi(c, 11);
    assert_fault(c, FR_PID_RSVD, 11);
    g_assert_false(pir_bit(c, PD0, 0x4b));
    stop(c);
}

/* Reserved bits of a posted IRTE (bits 37:24 here): fault 24h. */
static void test_irte_reserved(void)
{
    Ctx *c = start("on", false);

    write_pd(c, PD0, 0, false);
    write_posted_irte(c, 12, 0x4c, false, PD0, 1ULL << 30);
    edu_msi(c, 12);
    assert_fault(c, FR_IRTE_RSVD, 12);
    g_assert_false(pir_bit(c, PD0, 0x4c));
    stop(c);
}

static void ioapic_write(Ctx *c, uint8_t reg, uint32_t val)
{
    qtest_writel(c->qts, IOAPIC, reg);              /* IOREGSEL */
    qtest_writel(c->qts, IOAPIC + 0x10, val);       /* IOWIN */
}

/*
 * An IOAPIC pin behind a posted IRTE: fault 24h with no requester,
 * nothing posted or delivered (a level pin's EOI would never come).
 * The same IRTE still posts edu's MSI.
 */
static void test_ioapic(void)
{
    Ctx *c = start("on", false);
    uint64_t apic0 = apic_irqs(c, 0);
    int index = 15;

    write_pd(c, PD0, 0, false);
    write_posted_irte(c, index, 0x4f, false, PD0, 0);
    /* Remappable format: IRTE index 14:0 in bits 63:49, bit 48 set */
    ioapic_write(c, 0x11 + 2 * IOAPIC_PIN, (index & 0x7fff) << 17 | 1 << 16);
    ioapic_write(c, 0x10 + 2 * IOAPIC_PIN, 0x4f);   /* edge, unmasked */
    qtest_set_irq_in(c->qts, "/machine/q35/ioapic", NULL, IOAPIC_PIN, 1);
    qtest_set_irq_in(c->qts, "/machine/q35/ioapic", NULL, IOAPIC_PIN, 0);
    assert_fault_sid(c, FR_IRTE_RSVD, index, SID_NONE);
    g_assert_false(pir_bit(c, PD0, 0x4f));
    g_assert_false(pd_on(c, PD0));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-faults"), ==, 1);
    g_assert_cmpuint(iommu_stat(c, "vtd-posted-interrupts"), ==, 0);

    edu_msi(c, index);
    g_assert_true(pir_bit(c, PD0, 0x4f));
    g_assert_cmpuint(apic_irqs(c, 0), ==, apic0 + 1);
    stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/intel-iommu-posted/cap", test_cap);
    qtest_add_func("/intel-iommu-posted/burst", test_burst);
    qtest_add_func("/intel-iommu-posted/sn-urg", test_sn_urg);
    qtest_add_data_func("/intel-iommu-posted/ndst-xapic",
                        GINT_TO_POINTER(false), test_ndst);
    qtest_add_data_func("/intel-iommu-posted/ndst-x2apic",
                        GINT_TO_POINTER(true), test_ndst);
    qtest_add_func("/intel-iommu-posted/bad-pda", test_bad_pda);
    qtest_add_func("/intel-iommu-posted/mmio-pda", test_mmio_pda);
    qtest_add_func("/intel-iommu-posted/fpd", test_fpd);
    qtest_add_func("/intel-iommu-posted/pd-reserved", test_pd_reserved);
    qtest_add_func("/intel-iommu-posted/irte-reserved", test_irte_reserved);
    qtest_add_func("/intel-iommu-posted/ioapic", test_ioapic);
    return g_test_run();
}
