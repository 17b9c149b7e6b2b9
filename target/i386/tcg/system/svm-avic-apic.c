/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * AMD AVIC virtual APIC backing page rules: see svm-avic-apic.h.
 *
 * Concurrency: other vCPU threads and the emulated IOMMU set IRR bits
 * of a backing page at any time (avic_apic_set_irr(), atomic OR).  The
 * page's own vCPU is the only one that clears IRR bits (accepting, with
 * an atomic AND-NOT that tells whether the bit was still set) or
 * touches ISR, TPR and PPR.  A bit set concurrently with an evaluation
 * is either seen by it or followed by a doorbell, which makes the
 * owner evaluate again: the setter stores IRR before it reads IsRunning
 * and rings (a full barrier in between, avic_apic_send_ipi()).
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/host-utils.h"
#include "svm-avic-apic.h"

#define REG(page, off)      ((page)[(off) / 4])

/* Interrupt command register fields */
#define ICR_VECTOR_MASK     0xffU
#define ICR_DM_SHIFT        8
#define ICR_DM_MASK         (7U << ICR_DM_SHIFT)    /* 0: fixed */
#define ICR_DEST_LOGICAL    (1U << 11)
#define ICR_DELIV_STATUS    (1U << 12)
#define ICR_TRIGGER_LEVEL   (1U << 15)
#define ICR_SHORTHAND_SHIFT 18
#define ICR_SHORTHAND_MASK  (3U << ICR_SHORTHAND_SHIFT)

enum {
    SHORTHAND_NONE = 0,
    SHORTHAND_SELF = 1,
    SHORTHAND_ALL = 2,
    SHORTHAND_ALL_BUT_SELF = 3,
};

#define DFR_MODEL_FLAT      0xfU    /* DFR[31:28] */

AvicAccess avic_apic_access(uint32_t offset, bool write, bool x2apic)
{
    if (offset & 0xf || offset >= AVIC_BACKING_PAGE_SIZE) {
        return AVIC_ACCESS_FAULT;
    }
    if (offset >= AVIC_REG_ISR && offset < AVIC_REG_ESR) {
        /* ISR, TMR, IRR: readable, not writable */
        return write ? AVIC_ACCESS_FAULT : AVIC_ACCESS_ALLOW;
    }
    if (offset >= AVIC_REG_LVT_TIMER && offset <= AVIC_REG_LVT_ERROR) {
        return write ? AVIC_ACCESS_TRAP : AVIC_ACCESS_ALLOW;
    }
    switch (offset) {
    case AVIC_REG_ID:
        /* x2APIC IDs are read-only */
        return !write ? AVIC_ACCESS_ALLOW :
               x2apic ? AVIC_ACCESS_FAULT : AVIC_ACCESS_TRAP;
    case AVIC_REG_VERSION:
    case AVIC_REG_PPR:
        return write ? AVIC_ACCESS_FAULT : AVIC_ACCESS_ALLOW;
    case AVIC_REG_TPR:
        return write ? AVIC_ACCESS_ACCEL : AVIC_ACCESS_ALLOW;
    case AVIC_REG_EOI:
        return write ? AVIC_ACCESS_ACCEL : AVIC_ACCESS_FAULT;
    case AVIC_REG_RRD:
        return write ? AVIC_ACCESS_TRAP : AVIC_ACCESS_FAULT;
    case AVIC_REG_LDR:
        /* read-only in x2APIC mode */
        return !write ? AVIC_ACCESS_ALLOW :
               x2apic ? AVIC_ACCESS_FAULT : AVIC_ACCESS_TRAP;
    case AVIC_REG_DFR:
        /* no DFR in x2APIC mode */
        return x2apic ? AVIC_ACCESS_FAULT :
               write ? AVIC_ACCESS_TRAP : AVIC_ACCESS_ALLOW;
    case AVIC_REG_SVR:
    case AVIC_REG_ESR:
    case AVIC_REG_TIMER_ICR:
    case AVIC_REG_TIMER_DCR:
        return write ? AVIC_ACCESS_TRAP : AVIC_ACCESS_ALLOW;
    case AVIC_REG_ICR_LO:
        /* x2APIC: the 64-bit ICR, written as a whole */
        return write ? AVIC_ACCESS_ACCEL : AVIC_ACCESS_ALLOW;
    case AVIC_REG_ICR_HI:
        /* x2APIC has no separate ICR high register (MSR 0x831) */
        return x2apic ? AVIC_ACCESS_FAULT : AVIC_ACCESS_ALLOW;
    case AVIC_REG_SELF_IPI:
        return x2apic && write ? AVIC_ACCESS_ACCEL : AVIC_ACCESS_FAULT;
    default:
        /* APR, current count (the hypervisor's timer), reserved */
        return AVIC_ACCESS_FAULT;
    }
}

/* Highest vector set in the eight 32-bit words of ISR, TMR or IRR */
static int highest_vector(const uint32_t *page, uint32_t base)
{
    for (int i = 7; i >= 0; i--) {
        uint32_t word = qatomic_read(&REG(page, base + 0x10 * i));

        if (word) {
            return i * 32 + 31 - clz32(word);
        }
    }
    return -1;
}

static bool vector_set(const uint32_t *page, uint32_t base, int vector)
{
    return qatomic_read(&REG(page, base + 0x10 * (vector / 32))) &
           (1U << (vector % 32));
}

uint32_t avic_apic_ppr(const uint32_t *page)
{
    uint32_t tpr = REG(page, AVIC_REG_TPR) & 0xff;
    int isrv = highest_vector(page, AVIC_REG_ISR);
    uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xf0;

    return (tpr & 0xf0) >= isr_class ? tpr : isr_class;
}

static void update_ppr(uint32_t *page)
{
    REG(page, AVIC_REG_PPR) = avic_apic_ppr(page);
}

int avic_apic_pending(const uint32_t *page)
{
    int irrv = highest_vector(page, AVIC_REG_IRR);

    if (irrv < 0 || ((uint32_t)irrv & 0xf0) <= (avic_apic_ppr(page) & 0xf0)) {
        return -1;
    }
    return irrv;
}

bool avic_apic_accept(uint32_t *page, int vector)
{
    uint32_t bit = 1U << (vector % 32);
    uint32_t *irr = &REG(page, AVIC_REG_IRR + 0x10 * (vector / 32));

    if (!(qatomic_fetch_and(irr, ~bit) & bit)) {
        return false;
    }
    REG(page, AVIC_REG_ISR + 0x10 * (vector / 32)) |= bit;
    update_ppr(page);
    return true;
}

bool avic_apic_eoi(uint32_t *page, int *vector)
{
    int isrv = highest_vector(page, AVIC_REG_ISR);

    *vector = isrv;
    if (isrv < 0) {
        return true;        /* nothing in service: nothing to do */
    }
    if (vector_set(page, AVIC_REG_TMR, isrv)) {
        return false;       /* level-triggered: the hypervisor's EOI */
    }
    REG(page, AVIC_REG_ISR + 0x10 * (isrv / 32)) &= ~(1U << (isrv % 32));
    update_ppr(page);
    return true;
}

void avic_apic_set_tpr(uint32_t *page, uint32_t tpr)
{
    REG(page, AVIC_REG_TPR) = tpr & 0xff;
    update_ppr(page);
}

void avic_apic_set_irr(uint32_t *page, int vector)
{
    qatomic_or(&REG(page, AVIC_REG_IRR + 0x10 * (vector / 32)),
               1U << (vector % 32));
}

typedef struct IpiState {
    const AvicIpiOps *ops;
    void *opaque;
    int vector;
    AvicIpiResult res;
    bool not_running;
    uint32_t not_running_index;
} IpiState;

static void fail(IpiState *s, AvicIpiFailure cause, uint32_t index)
{
    if (!s->res.incomplete) {
        s->res.incomplete = true;
        s->res.cause = cause;
        s->res.index = index;
    }
}

/* Deliver to the vCPU at physical table @index; @report: exit index */
static void deliver_physical(IpiState *s, uint32_t index, uint32_t report)
{
    uint64_t entry = s->ops->phys_entry(s->opaque, index);

    if (!(entry & AVIC_PHYS_VALID)) {
        fail(s, AVIC_IPI_FAILURE_INVALID_TARGET, report);
        return;
    }
    if (!s->ops->set_irr(s->opaque, entry & AVIC_PHYS_BACKING_MASK,
                         s->vector)) {
        fail(s, AVIC_IPI_FAILURE_INVALID_BACKING_PAGE, report);
        return;
    }
    /* IRR before IsRunning: see the header comment */
    smp_mb();
    entry = s->ops->phys_entry(s->opaque, index);
    if (entry & AVIC_PHYS_IS_RUNNING) {
        s->ops->doorbell(s->opaque, entry & AVIC_PHYS_HOST_ID_MASK);
    } else if (!s->not_running) {
        s->not_running = true;
        s->not_running_index = report;
    }
}

AvicIpiResult avic_apic_send_ipi(const AvicIpiOps *ops, void *opaque,
                                 uint32_t *self_page, uint32_t self_id,
                                 uint32_t icr_lo, uint32_t icr_hi,
                                 bool x2apic, uint32_t max_index)
{
    IpiState s = {
        .ops = ops, .opaque = opaque,
        .vector = icr_lo & ICR_VECTOR_MASK,
    };
    unsigned shorthand = (icr_lo & ICR_SHORTHAND_MASK) >> ICR_SHORTHAND_SHIFT;
    uint32_t broadcast = x2apic ? 0xffffffffU : 0xffU;
    uint32_t dest = x2apic ? icr_hi : icr_hi >> 24;

    /*
     * The write lands in the backing page, delivery status clear; in
     * x2APIC mode the ICR is one 64-bit register at 0x300 (as KVM reads
     * it back on AVIC_INCOMPLETE_IPI), else ICR high is at 0x310.
     */
    REG(self_page, AVIC_REG_ICR_LO) = icr_lo & ~ICR_DELIV_STATUS;
    REG(self_page, x2apic ? AVIC_REG_ICR_LO + 4 : AVIC_REG_ICR_HI) = icr_hi;
    if ((icr_lo & ICR_DM_MASK) || (icr_lo & ICR_TRIGGER_LEVEL)) {
        /* Only fixed, edge-triggered IPIs are accelerated */
        s.res = (AvicIpiResult) {
            .incomplete = true, .cause = AVIC_IPI_FAILURE_INVALID_INT_TYPE,
        };
        return s.res;
    }
    if (s.vector < 16) {
        s.res = (AvicIpiResult) {
            .incomplete = true,
            .cause = AVIC_IPI_FAILURE_INVALID_IPI_VECTOR,
        };
        return s.res;
    }
    max_index = MIN(max_index, x2apic ? AVIC_MAX_INDEX_X2APIC :
                                        AVIC_MAX_INDEX_XAPIC);

    if (shorthand == SHORTHAND_SELF) {
        avic_apic_set_irr(self_page, s.vector);
        return s.res;
    }
    if (shorthand == SHORTHAND_ALL || shorthand == SHORTHAND_ALL_BUT_SELF ||
        dest == broadcast) {
        bool others_only = shorthand == SHORTHAND_ALL_BUT_SELF;

        /* Every valid entry; invalid ones are skipped, not failures */
        for (uint32_t i = 0; i <= max_index; i++) {
            if (i == self_id) {
                if (!others_only) {
                    avic_apic_set_irr(self_page, s.vector);
                }
                continue;
            }
            if (ops->phys_entry(opaque, i) & AVIC_PHYS_VALID) {
                deliver_physical(&s, i, i);
            }
        }
    } else if (!(icr_lo & ICR_DEST_LOGICAL)) {
        if (dest > max_index) {
            fail(&s, AVIC_IPI_FAILURE_INVALID_TARGET, dest);
        } else if (dest == self_id) {
            avic_apic_set_irr(self_page, s.vector);
        } else {
            deliver_physical(&s, dest, dest);
        }
    } else if (x2apic) {
        /* x2APIC logical: cluster in [31:16], one bit per member */
        uint32_t cluster = dest >> 16;
        uint32_t bitmap = dest & 0xffff;

        while (bitmap) {
            uint32_t bit = ctz32(bitmap);
            uint32_t id = (cluster << 4) + bit;

            bitmap &= bitmap - 1;
            if (id > max_index) {
                fail(&s, AVIC_IPI_FAILURE_INVALID_TARGET, id);
            } else if (id == self_id) {
                avic_apic_set_irr(self_page, s.vector);
            } else {
                deliver_physical(&s, id, id);
            }
        }
    } else {
        /* xAPIC logical, flat or cluster model from the sender's DFR */
        bool flat = (REG(self_page, AVIC_REG_DFR) >> 28) == DFR_MODEL_FLAT;
        uint32_t base = flat ? 0 : (dest >> 4) << 2;
        uint32_t bitmap = flat ? dest & 0xff : dest & 0xf;

        if (!flat && (dest >> 4) == 0xf) {
            bitmap = 0;     /* cluster 15 is the broadcast cluster */
        }
        while (bitmap) {
            uint32_t bit = ctz32(bitmap);
            uint32_t index = base + bit;
            uint32_t entry;

            bitmap &= bitmap - 1;
            entry = ops->log_entry(opaque, index);
            if (!(entry & AVIC_LOG_VALID)) {
                fail(&s, AVIC_IPI_FAILURE_INVALID_TARGET, index);
                continue;
            }
            entry &= AVIC_LOG_GUEST_ID_MASK;
            if (entry == self_id) {
                avic_apic_set_irr(self_page, s.vector);
            } else if (entry > max_index) {
                fail(&s, AVIC_IPI_FAILURE_INVALID_TARGET, index);
            } else {
                deliver_physical(&s, entry, index);
            }
        }
    }
    if (!s.res.incomplete && s.not_running) {
        /* IRR bits are set everywhere: the hypervisor wakes the target */
        s.res = (AvicIpiResult) {
            .incomplete = true,
            .cause = AVIC_IPI_FAILURE_TARGET_NOT_RUNNING,
            .index = s.not_running_index,
        };
    }
    return s.res;
}
