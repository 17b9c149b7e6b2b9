/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtests of the emulated AMD IOMMU's guest virtual APIC (GA) mode
 * (hw/i386/amd_iommu-ga.c, property x-ga-vapic) and of its event log:
 * the test programs the device table, 128-bit IRTEs, the GA and event
 * logs directly in guest memory and registers, raises MSIs from an edu
 * device, and checks the vAPIC backing page IRR bits, doorbells, GA-log
 * entries and tail, status bits and their W1C semantics, the GA-log
 * interrupt, overflow, event-log entries for faults, the counters over
 * query-stats, and that random garbage in registers and tables neither
 * crashes QEMU nor breaks its bookkeeping.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qobject/qdict.h"
#include "hw/pci/pci_regs.h"
#include "irq-stats-qtest.h"

#define MMIO            0xfed80000ULL
#define R_DEVTAB        0x0000
#define R_EVT_BASE      0x0010
#define R_CMD_BASE      0x0008
#define R_CONTROL       0x0018
#define R_EFR           0x0030
#define R_GA_BASE       0x00e0
#define R_GA_TAIL_ADDR  0x00e8
#define R_XT_EVT        0x0170
#define R_XT_GA         0x0180
#define R_CMD_HEAD      0x2000
#define R_CMD_TAIL      0x2008
#define R_EVT_HEAD      0x2010
#define R_EVT_TAIL      0x2018
#define R_STATUS        0x2020
#define R_GA_HEAD       0x2040
#define R_GA_TAIL       0x2048

#define CTL_IOMMU_EN    (1ULL << 0)
#define CTL_EVTLOG_EN   (1ULL << 2)
#define CTL_EVTINT_EN   (1ULL << 3)
#define CTL_COMWAIT_EN  (1ULL << 4)
#define CTL_CMDBUF_EN   (1ULL << 12)
#define CTL_GA_EN       (1ULL << 17)
#define CTL_GAM_VAPIC   (1ULL << 25)
#define CTL_GALOG_EN    (1ULL << 28)
#define CTL_GAINT_EN    (1ULL << 29)
#define CTL_INTCAPXT_EN (1ULL << 51)

#define ST_EVT_INT      (1ULL << 1)
#define ST_COMWAIT_INT  (1ULL << 2)
#define ST_GALOG_RUN    (1ULL << 8)
#define ST_GALOG_OVF    (1ULL << 9)
#define ST_GA_INT       (1ULL << 10)

#define EFR_GAM_VAPIC   (1ULL << 21)

#define EDU_DEVFN       QPCI_DEVFN(4, 0)
#define EDU_DEVID       0x20            /* bus 0, device 4, function 0 */
#define EDU_RAISE_IRQ   0x60

/* Guest memory layout of the test */
#define DEVTAB          0x100000ULL
#define IRT             0x200000ULL
#define EVTLOG          0x300000ULL
#define CMDBUF          0x380000ULL
#define GALOG           0x400000ULL
#define GALOG_TAIL      0x402000ULL
#define BACKING         0x500000ULL
#define PTROOT          0x600000ULL

#define IOMMU_PATH      "/machine/peripheral/iommu0"

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *edu;
    QPCIBar bar;
    uint8_t msi_cap;
} Ctx;

static uint64_t rd(Ctx *c, uint64_t reg)
{
    return qtest_readq(c->qts, MMIO + reg);
}

static void wr(Ctx *c, uint64_t reg, uint64_t val)
{
    qtest_writeq(c->qts, MMIO + reg, val);
}

static uint64_t get_stat(Ctx *c, const char *name)
{
    return irq_stat(c->qts, "irq-device", IOMMU_PATH, name);
}

/* CPU 0's emulated APIC: interrupts set in its IRR. */
static uint64_t cpu0_apic_irqs(Ctx *c)
{
    return irq_stat(c->qts, "irq-vcpu", "/machine/unattached/device[0]",
                    "apic-interrupt-requests");
}

/* Program edu's MSI with @data and raise one interrupt. */
static void edu_msi(Ctx *c, uint16_t data)
{
    qpci_config_writew(c->edu, c->msi_cap + PCI_MSI_DATA_64, data);
    qpci_io_writel(c->edu, c->bar, EDU_RAISE_IRQ, 1);
}

/* The IOMMU's own MSI, so its event and GA-log interrupts are raised. */
static void enable_iommu_msi(Ctx *c)
{
    QPCIDevice *dev = NULL;
    uint16_t flags;
    uint8_t cap;

    for (int slot = 0; slot < 32 && !dev; slot++) {
        QPCIDevice *d = qpci_device_find(c->bus, QPCI_DEVFN(slot, 0));

        if (d && qpci_config_readw(d, PCI_VENDOR_ID) == 0x1022 &&
            qpci_config_readw(d, PCI_DEVICE_ID) == 0x1419) {
            dev = d;
        } else {
            g_free(d);
        }
    }
    g_assert_nonnull(dev);
    cap = qpci_find_capability(dev, PCI_CAP_ID_MSI, 0);
    g_assert_cmpint(cap, !=, 0);
    flags = qpci_config_readw(dev, cap + PCI_MSI_FLAGS);
    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_LO, 0xfee00000);
    if (flags & PCI_MSI_FLAGS_64BIT) {
        qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_HI, 0);
        qpci_config_writew(dev, cap + PCI_MSI_DATA_64, 0x42);
    } else {
        qpci_config_writew(dev, cap + PCI_MSI_DATA_32, 0x42);
    }
    qpci_config_writew(dev, cap + PCI_MSI_FLAGS, flags | PCI_MSI_FLAGS_ENABLE);
    g_free(dev);
}

static void write_irte_ga(Ctx *c, int index, bool guest_mode, bool is_run,
                          bool ga_log_intr, uint32_t tag, uint8_t vector,
                          uint64_t backing)
{
    uint64_t lo = 1 /* RemapEn */ | (uint64_t)ga_log_intr << 2 |
                  (uint64_t)is_run << 6 | (uint64_t)guest_mode << 7 |
                  (uint64_t)tag << 32;
    uint64_t hi = vector | ((backing >> 12) << 12);

    qtest_writeq(c->qts, IRT + index * 16, lo);
    qtest_writeq(c->qts, IRT + index * 16 + 8, hi);
}

static Ctx *start_xt(bool ga_vapic, bool xtsup)
{
    Ctx *c = g_new0(Ctx, 1);
    uint64_t dte2;

    c->qts = qtest_initf("-M q35 -smp 2 %s -device amd-iommu,intremap=on,"
                         "x-ga-vapic=%s,xtsup=%s,id=iommu0 "
                         "-device edu,addr=04.0",
                         xtsup ? "-cpu qemu64,+x2apic" : "",
                         ga_vapic ? "on" : "off", xtsup ? "on" : "off");
    c->bus = qpci_new_pc(c->qts, NULL);
    c->edu = qpci_device_find(c->bus, EDU_DEVFN);
    g_assert_nonnull(c->edu);
    qpci_device_enable(c->edu);
    c->bar = qpci_iomap(c->edu, 0, NULL);
    c->msi_cap = qpci_find_capability(c->edu, PCI_CAP_ID_MSI, 0);
    qpci_config_writel(c->edu, c->msi_cap + PCI_MSI_ADDRESS_LO, 0xfee00000);
    qpci_config_writel(c->edu, c->msi_cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(c->edu, c->msi_cap + PCI_MSI_FLAGS,
                       qpci_config_readw(c->edu, c->msi_cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);

    /* Device table of one page; edu's DTE remaps through the IRT. */
    wr(c, R_DEVTAB, DEVTAB);
    dte2 = 1 /* IV */ | (9ULL << 1) /* 512 IRTEs */ | IRT |
           (2ULL << 60) /* IntCtl: remap */;
    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32 + 16, dte2);
    /* Event log of 256 entries, GA log of 512. */
    wr(c, R_EVT_BASE, EVTLOG | (8ULL << 56));
    wr(c, R_GA_BASE, GALOG | (8ULL << 56));
    wr(c, R_GA_TAIL_ADDR, GALOG_TAIL);
    return c;
}

static Ctx *start(bool ga_vapic)
{
    return start_xt(ga_vapic, false);
}

static void stop(Ctx *c)
{
    qpci_iounmap(c->edu, c->bar);
    g_free(c->edu);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    g_free(c);
}

static const uint64_t ga_control = CTL_IOMMU_EN | CTL_EVTLOG_EN |
    CTL_EVTINT_EN | CTL_GA_EN | CTL_GAM_VAPIC | CTL_GALOG_EN | CTL_GAINT_EN;

static uint32_t irr_word(Ctx *c, uint8_t vector)
{
    return qtest_readl(c->qts, BACKING + 0x200 + (vector / 32) * 16);
}

static void test_efr(void)
{
    Ctx *c = start(false);

    g_assert_false(rd(c, R_EFR) & EFR_GAM_VAPIC);
    stop(c);
    c = start(true);
    g_assert_true(rd(c, R_EFR) & EFR_GAM_VAPIC);
    /* GALogRun follows GALogEn. */
    g_assert_false(rd(c, R_STATUS) & ST_GALOG_RUN);
    wr(c, R_CONTROL, ga_control);
    g_assert_true(rd(c, R_STATUS) & ST_GALOG_RUN);
    wr(c, R_CONTROL, ga_control & ~CTL_GALOG_EN);
    g_assert_false(rd(c, R_STATUS) & ST_GALOG_RUN);
    stop(c);
}

static void test_post_running(void)
{
    Ctx *c = start(true);
    uint64_t apic;

    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 3, true, true, true, 0x1234, 0x41, BACKING);
    apic = cpu0_apic_irqs(c);
    edu_msi(c, 3);
    /* Posted, not delivered: no CPU was interrupted. */
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic);

    /* IRR bit 0x41: word 2, bit 1; nothing logged, a doorbell counted. */
    g_assert_cmphex(irr_word(c, 0x41), ==, 1U << 1);
    g_assert_cmphex(irr_word(c, 0x21), ==, 0);
    g_assert_cmpuint(get_stat(c, "amdvi-posted-interrupts"), ==, 1);
    g_assert_cmpuint(get_stat(c, "amdvi-doorbells"), ==, 1);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 0);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 0);

    /* A second vector in the same word: both bits set (OR, not store). */
    write_irte_ga(c, 4, true, true, false, 0, 0x45, BACKING);
    edu_msi(c, 4);
    g_assert_cmphex(irr_word(c, 0x41), ==, (1U << 1) | (1U << 5));
    g_assert_cmpuint(get_stat(c, "amdvi-doorbells"), ==, 2);
    stop(c);
}

static void test_log_not_running(void)
{
    Ctx *c = start(true);
    uint64_t entry, apic;

    enable_iommu_msi(c);
    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 7, true, false, true, 0xabcd1234, 0x60, BACKING);
    apic = cpu0_apic_irqs(c);
    edu_msi(c, 7);
    /* edu's MSI was posted; the one CPU interrupt is the GA-log MSI. */
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 1);

    g_assert_cmphex(irr_word(c, 0x60), ==, 1);
    entry = qtest_readq(c->qts, GALOG);
    g_assert_cmphex(entry & 0xffffffff, ==, 0xabcd1234);      /* GATag */
    g_assert_cmphex((entry >> 32) & 0xffff, ==, EDU_DEVID);
    g_assert_cmphex(entry >> 60, ==, 1);                       /* GUEST_NR */
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);
    g_assert_cmphex(qtest_readq(c->qts, GALOG_TAIL), ==, 8);
    g_assert_true(rd(c, R_STATUS) & ST_GA_INT);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 1);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-interrupts"), ==, 1);
    g_assert_cmpuint(get_stat(c, "amdvi-doorbells"), ==, 0);

    /* GAInt is write-1-to-clear; GALogRun is read-only. */
    wr(c, R_STATUS, ST_GA_INT | ST_GALOG_RUN);
    g_assert_false(rd(c, R_STATUS) & ST_GA_INT);
    g_assert_true(rd(c, R_STATUS) & ST_GALOG_RUN);

    /* GALogIntr=0: posted, not logged. */
    write_irte_ga(c, 8, true, false, false, 0x5555, 0x61, BACKING);
    edu_msi(c, 8);
    g_assert_cmphex(irr_word(c, 0x60), ==, 3);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);

    /* Without GAIntEn: logged, GAInt set, no interrupt. */
    wr(c, R_CONTROL, ga_control & ~CTL_GAINT_EN);
    edu_msi(c, 7);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 16);
    g_assert_true(rd(c, R_STATUS) & ST_GA_INT);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 2);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-interrupts"), ==, 1);

    /* One interrupt when GAInt goes from 0 to 1, not one per entry. */
    wr(c, R_CONTROL, ga_control);
    apic = cpu0_apic_irqs(c);
    edu_msi(c, 7);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 24);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-interrupts"), ==, 1);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic);
    wr(c, R_STATUS, ST_GA_INT);
    edu_msi(c, 7);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-interrupts"), ==, 2);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 1);
    stop(c);
}

static void test_log_overflow(void)
{
    Ctx *c = start(true);

    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 1, true, false, true, 0x77, 0x30, BACKING);
    edu_msi(c, 1);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);

    /* Software has consumed nothing up to head = tail + 8: full. */
    wr(c, R_GA_HEAD, 16);
    qtest_writeq(c->qts, GALOG + 8, 0);
    edu_msi(c, 1);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);
    g_assert_cmphex(qtest_readq(c->qts, GALOG + 8), ==, 0);
    g_assert_true(rd(c, R_STATUS) & ST_GALOG_OVF);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-overflows"), ==, 1);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 1);
    /* Still posted. */
    g_assert_cmpuint(get_stat(c, "amdvi-posted-interrupts"), ==, 2);
    /* The log stopped: nothing more is logged until it is restarted. */
    g_assert_false(rd(c, R_STATUS) & ST_GALOG_RUN);
    wr(c, R_GA_HEAD, 8);
    edu_msi(c, 1);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 1);

    /* Restarted as Linux does: clear the overflow, enable the log. */
    wr(c, R_STATUS, ST_GALOG_OVF);
    g_assert_false(rd(c, R_STATUS) & ST_GALOG_OVF);
    wr(c, R_CONTROL, ga_control);
    g_assert_true(rd(c, R_STATUS) & ST_GALOG_RUN);
    edu_msi(c, 1);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 16);
    g_assert_cmphex(qtest_readq(c->qts, GALOG + 8) & 0xffffffff, ==, 0x77);
    stop(c);
}

/* A fault must become an event-log entry with the right status bits. */
static void check_fault_event(Ctx *c, uint64_t faults_before,
                              uint16_t type)
{
    uint64_t q0 = qtest_readq(c->qts, EVTLOG);

    g_assert_cmpuint(get_stat(c, "amdvi-ir-faults"), ==, faults_before + 1);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 16);
    g_assert_cmphex(q0 & 0xffff, ==, EDU_DEVID);
    g_assert_cmphex(q0 >> 60, ==, type);
    g_assert_true(rd(c, R_STATUS) & ST_EVT_INT);
    wr(c, R_STATUS, ST_EVT_INT);
    g_assert_false(rd(c, R_STATUS) & ST_EVT_INT);
}

static void test_guest_mode_rejected(void)
{
    /* Property off: a GuestMode IRTE is an IR fault (IO_PAGE_FAULT). */
    Ctx *c = start(false);

    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_EVTLOG_EN | CTL_GA_EN);
    write_irte_ga(c, 2, true, true, false, 0, 0x50, BACKING);
    edu_msi(c, 2);
    check_fault_event(c, 0, 2);
    g_assert_cmphex(irr_word(c, 0x50), ==, 0);
    stop(c);

    /* Property on but GAMEn not vAPIC: the same. */
    c = start(true);
    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_EVTLOG_EN | CTL_GA_EN);
    write_irte_ga(c, 2, true, true, false, 0, 0x50, BACKING);
    edu_msi(c, 2);
    check_fault_event(c, 0, 2);
    g_assert_cmpuint(get_stat(c, "amdvi-posted-interrupts"), ==, 0);
    stop(c);
}

static void test_bad_backing_page(void)
{
    Ctx *c = start(true);

    wr(c, R_CONTROL, ga_control);
    /* GA root pointer in the IOMMU's own MMIO: not guest RAM. */
    write_irte_ga(c, 5, true, true, false, 0, 0x50, MMIO);
    edu_msi(c, 5);
    check_fault_event(c, 0, 4);     /* PAGE_TAB_HW_ERROR */
    g_assert_cmpuint(get_stat(c, "amdvi-posted-interrupts"), ==, 0);
    /* Beyond the end of RAM. */
    write_irte_ga(c, 5, true, true, false, 0, 0x50, 0xffffff000000ULL);
    edu_msi(c, 5);
    g_assert_cmpuint(get_stat(c, "amdvi-ir-faults"), ==, 2);
    stop(c);
}

static void test_ga_log_write_error(void)
{
    Ctx *c = start(true);

    /* A GA log outside guest RAM: the entry cannot be written. */
    wr(c, R_GA_BASE, 0xff000000000ULL | (8ULL << 56));
    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 9, true, false, true, 0x99, 0x70, BACKING);
    edu_msi(c, 9);
    g_assert_cmphex(irr_word(c, 0x70), ==, 1U << 16);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 0);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-entries"), ==, 0);
    /* Posted all the same, and the failure is an event-log entry. */
    g_assert_cmpuint(get_stat(c, "amdvi-posted-interrupts"), ==, 1);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 16);
    g_assert_cmphex(qtest_readq(c->qts, EVTLOG) >> 60, ==, 4);
    g_assert_true(rd(c, R_STATUS) & ST_EVT_INT);
    stop(c);
}

static void test_invalid_irte_and_dte(void)
{
    Ctx *c = start(true);

    wr(c, R_CONTROL, ga_control);
    /* RemapEn=0 */
    qtest_writeq(c->qts, IRT + 6 * 16, 0);
    qtest_writeq(c->qts, IRT + 6 * 16 + 8, 0x40);
    edu_msi(c, 6);
    check_fault_event(c, 0, 2);
    stop(c);

    /* A DTE with reserved bits set. */
    c = start(true);
    wr(c, R_CONTROL, ga_control);
    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32 + 16, 1ULL << 52);
    edu_msi(c, 6);
    check_fault_event(c, 0, 1);     /* ILLEGAL_DEV_TABLE_ENTRY */
    stop(c);
}

static void test_event_log_wraps(void)
{
    Ctx *c = start(true);

    /* A log of 256 entries: fill it with faults, then it overflows. */
    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_EVTLOG_EN | CTL_GA_EN);
    qtest_writeq(c->qts, IRT, 0);
    /* head and tail stay inside the log of 256 entries */
    wr(c, R_EVT_HEAD, 0x40 + 256 * 16);
    wr(c, R_EVT_TAIL, 0x10 + 256 * 16);
    g_assert_cmphex(rd(c, R_EVT_HEAD), ==, 0x40);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 0x10);
    edu_msi(c, 0);
    edu_msi(c, 0);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 0x30);
    /* One slot short of head: full, the third is lost and flagged. */
    edu_msi(c, 0);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 0x30);
    g_assert_true(rd(c, R_STATUS) & 1);     /* EventOverflow */
    stop(c);
}

/*
 * A DMA translation fault is logged as a DMA fault: IO_PAGE_FAULT with
 * the requester's full ID and domain, the faulting address, I
 * (interrupt) clear, RW for a write, PR|PE when the page is present but
 * the access not permitted.
 */
static void edu_dma(Ctx *c, uint64_t iova, bool to_ram)
{
    qpci_io_writeq(c->edu, c->bar, 0x80, to_ram ? 0x40000 : iova);
    qpci_io_writeq(c->edu, c->bar, 0x88, to_ram ? iova : 0x40000);
    qpci_io_writeq(c->edu, c->bar, 0x90, 4);     /* one access */
    qpci_io_writeq(c->edu, c->bar, 0x98, 1 | (to_ram ? 2 : 0));
    qtest_clock_step(c->qts, 200 * 1000 * 1000);     /* edu's DMA timer */
}

static void check_dma_fault(Ctx *c, uint64_t tail, uint64_t iova,
                            uint16_t flags)
{
    uint64_t q0 = qtest_readq(c->qts, EVTLOG + tail - 16);

    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, tail);
    g_assert_cmphex(q0 & 0xffff, ==, EDU_DEVID);            /* DeviceID */
    g_assert_cmphex((q0 >> 32) & 0xffff, ==, 0x42);         /* DomainID */
    g_assert_cmphex(q0 >> 60, ==, 2);                       /* IO_PAGE_FAULT */
    g_assert_cmphex((q0 >> 48) & 0xfff, ==, flags);
    g_assert_cmphex(qtest_readq(c->qts, EVTLOG + tail - 8), ==, iova);
}

static void test_dma_fault(void)
{
    Ctx *c = start(false);
    uint64_t dte0 = 1 | 2 | (1ULL << 9) | PTROOT;   /* V, TV, one level */

    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32 + 8, 0x42);
    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_EVTLOG_EN);

    /* the DTE allows reads only: a write faults, present (PR, PE) */
    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32, dte0 | (1ULL << 61));
    edu_dma(c, 0x5000, true);
    check_dma_fault(c, 16, 0x5000, 0x20 | 0x10 | 0x40);
    /* no permission at all: a read faults, RW clear */
    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32, dte0);
    edu_dma(c, 0x6000, false);
    check_dma_fault(c, 32, 0x6000, 0x10 | 0x40);

    /* a read-write leaf under a read-only directory: writes fault */
    qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32,
                 1 | 2 | (2ULL << 9) | PTROOT | (3ULL << 61));
    qtest_writeq(c->qts, PTROOT, (PTROOT + 0x1000) | 1 | (1ULL << 9) |
                 (1ULL << 61));
    qtest_writeq(c->qts, PTROOT + 0x1000 + 8, 0x700000 | 1 | (3ULL << 61));
    edu_dma(c, 0x1000, true);
    check_dma_fault(c, 48, 0x1000, 0x20 | 0x10 | 0x40);
    /* a not-present leaf */
    edu_dma(c, 0x2000, false);
    check_dma_fault(c, 64, 0x2000, 0);

    /* a directory that points to itself a level down: no endless walk */
    qtest_writeq(c->qts, PTROOT, PTROOT | 1 | (2ULL << 9) | (3ULL << 61));
    edu_dma(c, 0x1000, false);
    check_dma_fault(c, 80, 0x1000, 0x10 | 0x40);
    stop(c);
}

/* IntCapXT register value: fixed interrupt, physical destination */
static uint64_t intcapxt(uint32_t dest, uint8_t vector)
{
    return ((uint64_t)(dest & 0xffffff) << 8) | ((uint64_t)vector << 32) |
           ((uint64_t)(dest >> 24) << 56);
}

/*
 * xtsup=on: with IntCapXTEn the event log and GA log signal through
 * their IntCapXT registers (Linux never enables the MSI then).
 */
static void test_intcapxt(void)
{
    Ctx *c = start_xt(true, true);
    uint64_t apic;

    wr(c, R_XT_EVT, intcapxt(0, 0x55));
    wr(c, R_XT_GA, intcapxt(0, 0x66));
    g_assert_cmphex(rd(c, R_XT_EVT), ==, intcapxt(0, 0x55));
    wr(c, R_CONTROL, ga_control | CTL_INTCAPXT_EN);

    /* An interrupt-remapping fault: event log entry and its interrupt */
    apic = cpu0_apic_irqs(c);
    qtest_writeq(c->qts, IRT, 0);
    qtest_writeq(c->qts, IRT + 8, 0);
    edu_msi(c, 0);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 16);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 1);

    /* A GA-log entry: the GA log's register */
    write_irte_ga(c, 7, true, false, true, 0x1234, 0x60, BACKING);
    edu_msi(c, 7);
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 2);
    g_assert_cmpuint(get_stat(c, "amdvi-ga-log-interrupts"), ==, 1);

    /* Masked (vector 0, as Linux masks it): logged, not signalled */
    wr(c, R_XT_EVT, 0);
    wr(c, R_STATUS, ST_EVT_INT);
    edu_msi(c, 0);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 32);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 2);

    /* Without IntCapXTEn and without MSI: nothing is signalled */
    wr(c, R_XT_EVT, intcapxt(0, 0x55));
    wr(c, R_CONTROL, ga_control);
    edu_msi(c, 0);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 48);
    g_assert_cmpuint(cpu0_apic_irqs(c), ==, apic + 2);
    stop(c);
}

static void wait_migration(QTestState *qts, const char *want)
{
    for (int i = 0; i < 3000; i++) {
        QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = ret && qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "";
        bool done = g_str_equal(st, want);

        g_assert_cmpstr(st, !=, "failed");
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_usleep(10 * 1000);
    }
    g_assert_not_reached();
}

/*
 * Migration, fork to fork, with GA mode and both logs in use: the
 * registers, the logs' positions, the status bits and the IOMMU's MSI
 * arrive, and the logs go on where they were.
 */
static void test_migration(void)
{
    Ctx *c = start(true), *d = g_new0(Ctx, 1);
    g_autofree char *file = g_strdup_printf("%s/amdvi-migration-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t status, apic;
    QDict *rsp;

    enable_iommu_msi(c);
    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 7, true, false, true, 0xabcd, 0x60, BACKING);
    edu_msi(c, 7);                          /* GA log entry 0 */
    qtest_writeq(c->qts, IRT, 0);
    qtest_writeq(c->qts, IRT + 8, 0);
    edu_msi(c, 0);                          /* event log entry 0 */
    g_assert_cmphex(rd(c, R_GA_TAIL), ==, 8);
    g_assert_cmphex(rd(c, R_EVT_TAIL), ==, 16);
    status = rd(c, R_STATUS);
    g_assert_true(status & ST_GA_INT);

    /* to a file, then from it */
    rsp = qtest_qmp(c->qts, "{ 'execute': 'migrate', "
                    "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    wait_migration(c->qts, "completed");
    d->qts = qtest_initf("-M q35 -smp 2 -device amd-iommu,intremap=on,"
                         "x-ga-vapic=on,xtsup=off,id=iommu0 "
                         "-device edu,addr=04.0 -incoming defer");
    rsp = qtest_qmp(d->qts, "{ 'execute': 'migrate-incoming', "
                    "'arguments': { 'uri': %s } }", uri);
    qobject_unref(rsp);
    wait_migration(d->qts, "completed");

    /* The destination's registers are the source's */
    g_assert_cmphex(rd(d, R_STATUS), ==, status);
    g_assert_cmphex(rd(d, R_GA_TAIL), ==, 8);
    g_assert_cmphex(rd(d, R_EVT_TAIL), ==, 16);
    g_assert_cmphex(rd(d, R_CONTROL), ==, ga_control);

    /* ... and the logs go on from there, with the MSI still set up */
    /* edu has no migration state of its own: set it up again */
    d->bus = qpci_new_pc(d->qts, NULL);
    d->edu = qpci_device_find(d->bus, EDU_DEVFN);
    qpci_device_enable(d->edu);
    d->bar = qpci_iomap(d->edu, 0, NULL);
    d->msi_cap = c->msi_cap;
    qpci_config_writel(d->edu, d->msi_cap + PCI_MSI_ADDRESS_LO, 0xfee00000);
    qpci_config_writew(d->edu, d->msi_cap + PCI_MSI_FLAGS,
                       qpci_config_readw(d->edu, d->msi_cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);
    wr(d, R_STATUS, ST_GA_INT);
    apic = cpu0_apic_irqs(d);
    edu_msi(d, 7);
    g_assert_cmphex(rd(d, R_GA_TAIL), ==, 16);
    g_assert_cmphex(qtest_readq(d->qts, GALOG + 8) & 0xffffffff, ==, 0xabcd);
    g_assert_cmphex(qtest_readq(d->qts, GALOG_TAIL), ==, 16);
    g_assert_cmpuint(cpu0_apic_irqs(d), ==, apic + 1);  /* GA-log MSI */
    edu_msi(d, 0);
    g_assert_cmphex(rd(d, R_EVT_TAIL), ==, 32);

    stop(d);
    stop(c);
    unlink(file);
}

/* A GA log stopped by an overflow stays stopped across migration. */
static void test_migration_overflow(void)
{
    Ctx *c = start(true);
    g_autofree char *file = g_strdup_printf("%s/amdvi-migration-ovf-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    QTestState *d;
    QDict *rsp;

    wr(c, R_CONTROL, ga_control);
    write_irte_ga(c, 1, true, false, true, 0x77, 0x30, BACKING);
    wr(c, R_GA_HEAD, 8);
    edu_msi(c, 1);                          /* full: overflow, log stops */
    g_assert_true(rd(c, R_STATUS) & ST_GALOG_OVF);
    g_assert_false(rd(c, R_STATUS) & ST_GALOG_RUN);

    rsp = qtest_qmp(c->qts, "{ 'execute': 'migrate', "
                    "'arguments': { 'uri': %s } }", uri);
    qobject_unref(rsp);
    wait_migration(c->qts, "completed");
    d = qtest_initf("-M q35 -smp 2 -device amd-iommu,intremap=on,"
                    "x-ga-vapic=on,xtsup=off,id=iommu0 "
                    "-device edu,addr=04.0 -incoming defer");
    rsp = qtest_qmp(d, "{ 'execute': 'migrate-incoming', "
                    "'arguments': { 'uri': %s } }", uri);
    qobject_unref(rsp);
    wait_migration(d, "completed");
    g_assert_false(qtest_readq(d, MMIO + R_STATUS) & ST_GALOG_RUN);
    g_assert_true(qtest_readq(d, MMIO + R_STATUS) & ST_GALOG_OVF);
    qtest_quit(d);
    stop(c);
    unlink(file);
}

/*
 * Status bits are write-1-to-clear: writing 0 leaves them.  Linux's
 * GA-log handler writes only GAInt|GALogOverflow (0x600); a pending
 * completion-wait interrupt must survive it.
 */
static void test_status_w1c(void)
{
    Ctx *c = start(true);

    wr(c, R_CMD_BASE, CMDBUF | (8ULL << 56));       /* 256 commands */
    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_CMDBUF_EN | CTL_COMWAIT_EN);
    /* COMPLETION_WAIT (opcode 1) with I=1: sets ComWaitInt */
    qtest_writeq(c->qts, CMDBUF, (1ULL << 60) | 2);
    qtest_writeq(c->qts, CMDBUF + 8, 0);
    wr(c, R_CMD_TAIL, 16);
    g_assert_cmpuint(rd(c, R_CMD_HEAD), ==, 16);
    g_assert_cmphex(rd(c, R_STATUS) & ST_COMWAIT_INT, ==, ST_COMWAIT_INT);

    wr(c, R_STATUS, ST_GA_INT | ST_GALOG_OVF);
    g_assert_cmphex(rd(c, R_STATUS) & ST_COMWAIT_INT, ==, ST_COMWAIT_INT);
    qtest_writel(c->qts, MMIO + R_STATUS, 0);
    g_assert_cmphex(rd(c, R_STATUS) & ST_COMWAIT_INT, ==, ST_COMWAIT_INT);
    wr(c, R_STATUS, ST_COMWAIT_INT);
    g_assert_cmphex(rd(c, R_STATUS) & ST_COMWAIT_INT, ==, 0);
    stop(c);
}

/*
 * A command tail written before the command buffer's base, then the
 * buffer enabled: nothing to run (QEMU used to spin with the BQL held).
 */
static void test_cmdbuf_unsized(void)
{
    Ctx *c = start(false);

    wr(c, R_CMD_TAIL, 0x7ff0);
    wr(c, R_CONTROL, CTL_IOMMU_EN | CTL_CMDBUF_EN);
    /* QEMU answers: it did not hang in the command loop */
    g_assert_cmpuint(rd(c, R_CMD_HEAD), ==, 0);
    /* a buffer programmed afterwards works */
    wr(c, R_CMD_BASE, CMDBUF | (8ULL << 56));
    qtest_writeq(c->qts, CMDBUF, 1ULL << 60);
    qtest_writeq(c->qts, CMDBUF + 8, 0);
    wr(c, R_CMD_TAIL, 16);
    g_assert_cmpuint(rd(c, R_CMD_HEAD), ==, 16);
    stop(c);
}

/* PCI configuration of 00:@dev.0 through the 0xcf8/0xcfc ports */
static uint32_t cfg_read(QTestState *qts, int dev, int off)
{
    qtest_outl(qts, 0xcf8, 0x80000000u | (dev << 11) | off);
    return qtest_inl(qts, 0xcfc);
}

/*
 * The southbridge function at 00:14.0 is a device the guest sees:
 * only x-southbridge=on adds it (intremap=on alone keeps stock's
 * platform).
 */
static void test_southbridge(void)
{
    QTestState *qts = qtest_init("-M q35 -device amd-iommu,intremap=on");

    g_assert_cmphex(cfg_read(qts, 0x14, PCI_VENDOR_ID), ==, 0xffffffff);
    qtest_quit(qts);

    qts = qtest_init("-M q35 -device amd-iommu,intremap=on,x-southbridge=on");
    g_assert_cmphex(cfg_read(qts, 0x14, PCI_VENDOR_ID), ==, 0x00fe1b36);
    g_assert_cmphex(cfg_read(qts, 0x14, PCI_CLASS_REVISION) >> 16, ==,
                    0x0c05);
    qtest_quit(qts);
}

/*
 * Garbage in registers, tables, commands and IRTEs, with the command
 * buffer, both logs and IntCapXT enabled at random: QEMU survives
 * (no hang, no crash) and stays consistent.
 */
static void test_garbage(void)
{
    static const uint64_t regs[] = {
        R_DEVTAB, R_EVT_BASE, R_CONTROL, R_GA_BASE, R_GA_TAIL_ADDR,
        R_EVT_HEAD, R_EVT_TAIL, R_STATUS, R_GA_HEAD, R_GA_TAIL,
        R_CMD_BASE, R_CMD_HEAD, R_CMD_TAIL, 0x0038, 0x2030, 0x2038,
        R_XT_EVT, R_XT_GA,
    };
    Ctx *c = start(true);
    GRand *rand = g_rand_new_with_seed(0x9a11);
    uint64_t posted, doorbells, entries, remapped;
    QDict *resp;

    for (int i = 0; i < 600; i++) {
        uint64_t v = ((uint64_t)g_rand_int(rand) << 32) | g_rand_int(rand);
        int idx = g_rand_int_range(rand, 0, 16);

        switch (g_rand_int_range(rand, 0, 6)) {
        case 0: {
            uint64_t reg = regs[g_rand_int_range(rand, 0, G_N_ELEMENTS(regs))];

            if (g_rand_boolean(rand)) {
                wr(c, reg, v);
            } else {
                qtest_writel(c->qts, MMIO + reg + 4 * g_rand_int_range(rand,
                             0, 2), v);
            }
            break;
        }
        case 1:
            qtest_writeq(c->qts, IRT + idx * 16, v);
            qtest_writeq(c->qts, IRT + idx * 16 + 8, v ^ (v << 17));
            break;
        case 2:
            qtest_writeq(c->qts, DEVTAB + EDU_DEVID * 32 +
                         8 * g_rand_int_range(rand, 0, 4), v);
            break;
        case 3:
            wr(c, R_CONTROL, ga_control | CTL_CMDBUF_EN |
               (g_rand_boolean(rand) ? CTL_INTCAPXT_EN : 0));
            wr(c, R_DEVTAB, DEVTAB);
            break;
        case 4:
            /* a random command in a programmed buffer, then run it */
            wr(c, R_CMD_BASE, CMDBUF | (8ULL << 56));
            qtest_writeq(c->qts, CMDBUF + idx * 16, v);
            qtest_writeq(c->qts, CMDBUF + idx * 16 + 8, v * 0x9e3779b9);
            wr(c, R_CMD_TAIL, (idx + 1) * 16);
            break;
        default:
            edu_msi(c, g_rand_int_range(rand, 0, 0x800));
            break;
        }
    }
    resp = qtest_qmp(c->qts, "{ 'execute': 'query-status' }");
    g_assert(qdict_haskey(resp, "return"));
    qobject_unref(resp);

    posted = get_stat(c, "amdvi-posted-interrupts");
    doorbells = get_stat(c, "amdvi-doorbells");
    entries = get_stat(c, "amdvi-ga-log-entries");
    remapped = get_stat(c, "amdvi-remapped-interrupts");
    g_assert_cmpuint(doorbells + entries, <=, posted);
    g_assert_cmpuint(posted, <=, remapped);
    g_rand_free(rand);
    stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/amd-iommu-ga/efr-and-run", test_efr);
    qtest_add_func("/amd-iommu-ga/post-running", test_post_running);
    qtest_add_func("/amd-iommu-ga/log-not-running", test_log_not_running);
    qtest_add_func("/amd-iommu-ga/log-overflow", test_log_overflow);
    qtest_add_func("/amd-iommu-ga/guest-mode-rejected",
                   test_guest_mode_rejected);
    qtest_add_func("/amd-iommu-ga/bad-backing-page", test_bad_backing_page);
    qtest_add_func("/amd-iommu-ga/ga-log-write-error",
                   test_ga_log_write_error);
    qtest_add_func("/amd-iommu-ga/invalid-irte-dte",
                   test_invalid_irte_and_dte);
    qtest_add_func("/amd-iommu-ga/event-log-wraps", test_event_log_wraps);
    qtest_add_func("/amd-iommu-ga/garbage", test_garbage);
    qtest_add_func("/amd-iommu-ga/status-w1c", test_status_w1c);
    qtest_add_func("/amd-iommu-ga/cmdbuf-unsized", test_cmdbuf_unsized);
    qtest_add_func("/amd-iommu-ga/dma-fault", test_dma_fault);
    qtest_add_func("/amd-iommu-ga/intcapxt", test_intcapxt);
    qtest_add_func("/amd-iommu-ga/southbridge", test_southbridge);
    qtest_add_func("/amd-iommu-ga/migration", test_migration);
    qtest_add_func("/amd-iommu-ga/migration-overflow",
                   test_migration_overflow);
    return g_test_run();
}
