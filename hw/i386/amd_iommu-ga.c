/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Guest virtual APIC (GA) mode of the emulated AMD IOMMU: registers,
 * posting into the vAPIC backing page, doorbells, the GA log and its
 * interrupt.  See hw/i386/amd_iommu-ga.h.
 *
 * Every guest-programmed address is checked: the GA root pointer must
 * be guest RAM (the IRR word is set in place, atomically), the GA log
 * base and tail address are masked to their architected alignment and
 * written only through dma_memory_write(), which fails cleanly outside
 * guest memory; a failure gets the architected event-log entry and a
 * trace event.
 *
 * A doorbell in hardware tells the AVIC of the CPU running the target
 * vCPU to look at its IRR.  It is counted, traced and rung on the CPU
 * with the IRTE's APIC ID (x86_cpu_avic_doorbell()): under TCG, a CPU
 * that runs L2 with the emulated AVIC (target/i386/tcg/system/svm-avic.c)
 * then evaluates its backing page and delivers the vector; any other CPU
 * is only kicked, and the posted IRR bit waits for its next VMRUN, or for
 * the hypervisor in the guest to look at the backing page.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"
#include "system/dma.h"
#include "hw/pci/msi.h"
#include "hw/core/cpu.h"
#include "cpu.h"
#include "amd_iommu.h"
#include "amd_iommu-ga.h"
#include "amd_iommu-intcapxt.h"
#include "x86-iommu-ram.h"
#include "trace.h"

/* vAPIC page: IRR registers start at 0x200, one 32-bit word per 16 bytes */
#define VAPIC_IRR_OFFSET    0x200

static uint64_t reg_read(AMDVIState *s, hwaddr addr)
{
    return ldq_le_p(&s->mmior[addr]);
}

static void reg_set(AMDVIState *s, hwaddr addr, uint64_t val)
{
    stq_le_p(&s->mmior[addr], val);
}

static void status_or(AMDVIState *s, uint64_t bits)
{
    reg_set(s, AMDVI_MMIO_STATUS, reg_read(s, AMDVI_MMIO_STATUS) | bits);
}

static void status_clear(AMDVIState *s, uint64_t bits)
{
    reg_set(s, AMDVI_MMIO_STATUS, reg_read(s, AMDVI_MMIO_STATUS) & ~bits);
}

uint64_t amdvi_ga_efr(AMDVIState *s)
{
    return s->ga_vapic ? AMDVI_FEATURE_GAM_VAPIC : 0;
}

void amdvi_ga_reset(AMDVIState *s)
{
    memset(&s->ga, 0, sizeof(s->ga));
    if (!s->ga_vapic) {
        return;
    }
    /* GALogRun is read-only; GALogOverflow and GAInt are write-1-to-clear. */
    stq_le_p(&s->romask[AMDVI_MMIO_STATUS],
             ldq_le_p(&s->romask[AMDVI_MMIO_STATUS]) |
             AMDVI_STATUS_GALOG_RUN);
    stq_le_p(&s->w1cmask[AMDVI_MMIO_STATUS],
             ldq_le_p(&s->w1cmask[AMDVI_MMIO_STATUS]) |
             AMDVI_STATUS_GALOG_OVERFLOW | AMDVI_STATUS_GA_INT);
}

static uint64_t control(AMDVIState *s)
{
    return reg_read(s, AMDVI_MMIO_CONTROL);
}

static bool vapic_mode(AMDVIState *s)
{
    uint64_t c = control(s);

    return s->ga_vapic && s->ga_enabled &&
           ((c >> AMDVI_CONTROL_GAM_SHIFT) & 7) == AMDVI_CONTROL_GAM_VAPIC;
}

static bool ga_log_running(AMDVIState *s)
{
    return reg_read(s, AMDVI_MMIO_STATUS) & AMDVI_STATUS_GALOG_RUN;
}

void amdvi_ga_control_write(AMDVIState *s, uint64_t ctrl)
{
    if (!s->ga_vapic) {
        return;
    }
    /* The log runs once enabled with a valid base; it stops when disabled. */
    if ((ctrl & AMDVI_CONTROL_GALOG_EN) && s->ga.log_base) {
        if (!ga_log_running(s)) {
            status_or(s, AMDVI_STATUS_GALOG_RUN);
            trace_amdvi_ga_log_run(s->ga.log_base, s->ga.log_entries);
        }
    } else {
        status_clear(s, AMDVI_STATUS_GALOG_RUN);
    }
}

static void ga_log_base_write(AMDVIState *s)
{
    uint64_t val = reg_read(s, AMDVI_MMIO_GA_LOG_BASE);
    unsigned len = extract64(val, AMDVI_GA_LOG_LEN_SHIFT, 4);

    if (len < AMDVI_GA_LOG_LEN_MIN) {
        /* Reserved length: no usable log. */
        s->ga.log_base = 0;
        s->ga.log_entries = 0;
        trace_amdvi_ga_bad_register("GA log length", val);
        return;
    }
    s->ga.log_base = val & AMDVI_GA_LOG_BASE_MASK;
    s->ga.log_entries = 1U << (len + 1);
}

static void ga_head_tail_write(AMDVIState *s)
{
    uint32_t size = s->ga.log_entries * AMDVI_GA_ENTRY_SIZE;
    uint32_t mask = size ? size - 1 : 0;

    /* Offsets of whole entries inside the log. */
    s->ga.head = reg_read(s, AMDVI_MMIO_GA_HEAD) & mask &
                 ~(AMDVI_GA_ENTRY_SIZE - 1);
    s->ga.tail = reg_read(s, AMDVI_MMIO_GA_TAIL) & mask &
                 ~(AMDVI_GA_ENTRY_SIZE - 1);
    reg_set(s, AMDVI_MMIO_GA_HEAD, s->ga.head);
    reg_set(s, AMDVI_MMIO_GA_TAIL, s->ga.tail);
}

void amdvi_ga_post_load(AMDVIState *s)
{
    if (!s->ga_vapic) {
        return;
    }
    ga_log_base_write(s);
    ga_head_tail_write(s);
    s->ga.tail_addr = reg_read(s, AMDVI_MMIO_GA_LOG_TAIL_ADDR) &
                      AMDVI_GA_LOG_TAIL_ADDR_MASK;
}

bool amdvi_ga_mmio_write(AMDVIState *s, hwaddr addr, uint64_t val,
                         unsigned size)
{
    hwaddr reg = addr & ~7ULL;
    unsigned shift = (addr & 7) * 8;
    uint64_t mask, old;

    if (!s->ga_vapic ||
        (reg != AMDVI_MMIO_GA_LOG_BASE && reg != AMDVI_MMIO_GA_LOG_TAIL_ADDR &&
         reg != AMDVI_MMIO_GA_HEAD && reg != AMDVI_MMIO_GA_TAIL)) {
        return false;
    }
    if (size != 4 && size != 8) {
        trace_amdvi_ga_bad_register("access size", size);
        return true;
    }
    if ((addr & 7) + size > 8) {
        trace_amdvi_ga_bad_register("unaligned access", addr);
        return true;
    }
    mask = (size == 8 ? ~0ULL : 0xffffffffULL) << shift;
    old = reg_read(s, reg);
    reg_set(s, reg, (old & ~mask) | ((val << shift) & mask));

    switch (reg) {
    case AMDVI_MMIO_GA_LOG_BASE:
        /* Changing the log while it runs is undefined: ignore it. */
        if (ga_log_running(s)) {
            reg_set(s, reg, old);
            trace_amdvi_ga_bad_register("GA log base while running", val);
            break;
        }
        ga_log_base_write(s);
        ga_head_tail_write(s);
        break;
    case AMDVI_MMIO_GA_LOG_TAIL_ADDR:
        s->ga.tail_addr = reg_read(s, reg) & AMDVI_GA_LOG_TAIL_ADDR_MASK;
        reg_set(s, reg, s->ga.tail_addr);
        break;
    default:
        ga_head_tail_write(s);
        break;
    }
    return true;
}

/*
 * Set the IRR bit of @vector in the backing page, atomically, as the
 * IOMMU does: only in guest RAM (not ROM, not MMIO).
 */
static bool post_irr(hwaddr page, uint8_t vector)
{
    hwaddr addr = page + VAPIC_IRR_OFFSET + (vector / 32) * 16;
    uint32_t *word = x86_iommu_ram_map(addr, sizeof(*word), true);

    if (!word) {
        return false;
    }
    qatomic_or(word, cpu_to_le32(1U << (vector % 32)));
    x86_iommu_ram_unmap(word, sizeof(*word), true);
    return true;
}

bool amdvi_ga_read_irte(hwaddr addr, uint64_t *lo, uint64_t *hi)
{
    uint64_t le[2];

    if (!x86_iommu_ram_read128(addr, le)) {
        return false;
    }
    *lo = le64_to_cpu(le[0]);
    *hi = le64_to_cpu(le[1]);
    return true;
}

/*
 * Set GA-log status @bits; the GA-log interrupt fires when the log
 * first needs attention (GAInt or GALogOverflow going from clear to
 * set), not once per entry: Linux clears the bits, then drains the log.
 */
static void ga_log_signal(AMDVIState *s, uint64_t bits)
{
    uint64_t pending = AMDVI_STATUS_GA_INT | AMDVI_STATUS_GALOG_OVERFLOW;
    bool was = reg_read(s, AMDVI_MMIO_STATUS) & pending;

    status_or(s, bits);
    /* IntCapXT's GA-log register, or the IOMMU's MSI */
    if (!was && (control(s) & AMDVI_CONTROL_GAINT_EN) &&
        amdvi_raise_interrupt(s, AMDVI_INTR_GA_LOG)) {
        amdvi_stats_inc(&s->stats, AMDVI_STAT_GA_LOG_INTERRUPTS);
    }
}

static void ga_log_append(AMDVIState *s, uint32_t ga_tag, uint16_t devid)
{
    uint32_t size = s->ga.log_entries * AMDVI_GA_ENTRY_SIZE;
    uint32_t next;
    uint64_t entry;

    if (!(control(s) & AMDVI_CONTROL_GALOG_EN) || !ga_log_running(s) ||
        !size) {
        trace_amdvi_ga_log_off(devid, ga_tag);
        return;
    }
    next = (s->ga.tail + AMDVI_GA_ENTRY_SIZE) % size;
    if (next == s->ga.head) {
        /*
         * Full: the entry is lost and the log stops (GALogRun clear)
         * until software restarts it, as on hardware.
         */
        status_clear(s, AMDVI_STATUS_GALOG_RUN);
        amdvi_stats_inc(&s->stats, AMDVI_STAT_GA_LOG_OVERFLOWS);
        trace_amdvi_ga_log_overflow(devid, ga_tag);
        ga_log_signal(s, AMDVI_STATUS_GALOG_OVERFLOW);
        return;
    }
    entry = cpu_to_le64((uint64_t)ga_tag | ((uint64_t)devid << 32) |
                        (AMDVI_GA_GUEST_NR << 60));
    if (dma_memory_write(&address_space_memory, s->ga.log_base + s->ga.tail,
                         &entry, sizeof(entry), MEMTXATTRS_UNSPECIFIED)) {
        trace_amdvi_ga_log_write_fail(s->ga.log_base + s->ga.tail);
        amdvi_report_event(s, devid, s->ga.log_base + s->ga.tail,
                           AMDVI_EVENT_PAGE_TAB_HW_ERROR);
        return;
    }
    s->ga.tail = next;
    reg_set(s, AMDVI_MMIO_GA_TAIL, s->ga.tail);
    if (s->ga.tail_addr) {
        uint64_t tail = cpu_to_le64(s->ga.tail);

        if (dma_memory_write(&address_space_memory, s->ga.tail_addr, &tail,
                             sizeof(tail), MEMTXATTRS_UNSPECIFIED)) {
            trace_amdvi_ga_log_write_fail(s->ga.tail_addr);
        }
    }
    amdvi_stats_inc(&s->stats, AMDVI_STAT_GA_LOG_ENTRIES);
    trace_amdvi_ga_log_entry(devid, ga_tag, s->ga.tail);

    ga_log_signal(s, AMDVI_STATUS_GA_INT);
}

int amdvi_ga_post(AMDVIState *s, uint64_t lo, uint64_t hi, uint16_t devid)
{
    bool ga_log_intr = extract64(lo, 2, 1);
    bool is_run = extract64(lo, 6, 1);
    uint32_t ga_tag = extract64(lo, 32, 32);
    uint8_t vector = extract64(hi, 0, 8);
    hwaddr page = extract64(hi, 12, 40) << 12;

    if (!vapic_mode(s)) {
        /* An invalid IRTE: the caller logs the IO page fault. */
        trace_amdvi_ga_not_enabled(devid);
        return -AMDVI_IR_ERR;
    }
    if (!post_irr(page, vector)) {
        trace_amdvi_ga_bad_backing_page(devid, page);
        amdvi_report_event(s, devid, page, AMDVI_EVENT_PAGE_TAB_HW_ERROR);
        return -AMDVI_IR_LOGGED;
    }
    amdvi_stats_inc(&s->stats, AMDVI_STAT_POSTED_INTERRUPTS);
    trace_amdvi_ga_posted(devid, vector, page, is_run, ga_log_intr);

    if (is_run) {
        uint32_t dest = extract64(lo, 8, 24) | (extract64(hi, 56, 8) << 24);
        CPUState *cs;

        amdvi_stats_inc(&s->stats, AMDVI_STAT_DOORBELLS);
        trace_amdvi_ga_doorbell(devid, dest);
        CPU_FOREACH(cs) {
            if (X86_CPU(cs)->apic_id == dest) {
                x86_cpu_avic_doorbell(cs);
            }
        }
    } else if (ga_log_intr) {
        ga_log_append(s, ga_tag, devid);
    }
    return AMDVI_IR_POSTED;
}
