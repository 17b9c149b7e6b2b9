/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Interrupt posting of the emulated Intel IOMMU (VT-d PI), see
 * intel_iommu-posted.h.  Opt-in (x-posted-intr, default off), so the
 * CAP register and the migration stream stay stock's otherwise.
 *
 * A posted-format IRTE (IM=1) carries the vector, URG and the address
 * of a 64-byte posted-interrupt descriptor (PDA); the descriptor holds
 * the 256-bit PIR, ON, SN, the notification vector NV and destination
 * NDST.  Posting sets the PIR bit of the vector and, when ON was clear
 * and (URG or not SN), sets ON and sends NV to NDST (VT-d
 * specification, "Interrupt-Posting Hardware Operation").
 *
 * The descriptor is updated in place in guest RAM with host atomics,
 * PIR first, then ON with a compare-and-swap: a guest vCPU that
 * harvests the PIR (Linux: xchg of each 64-bit word, clear ON, look at
 * the PIR again) on another thread under MTTCG or KVM sees every
 * posted bit either in its harvest or in its second look.  ON, SN and
 * NV share the control's low 32-bit word, NDST is the high one: the
 * model needs no 64-bit atomics, so 32-bit hosts build it too.  A
 * descriptor outside plain RAM, or with reserved fields set, is not
 * touched and faults.
 *
 * Under KVM (kernel-irqchip=split) interrupts of devices QEMU emulates
 * come through the interrupt-remapping region and are posted here.
 * KVM MSI routes (irqfds of vhost, VFIO) would bypass the model: with
 * posting on, realize tells devices that MSIs cannot go through irqfds
 * (virtio and vhost then signal through QEMU), and a route asked for
 * anyway (VFIO) is refused, traced and counted, so VFIO falls back to
 * delivering through QEMU.  All of them are posted.
 *
 * Only PCI requesters post: the IOAPIC (no requester ID) needs the EOI
 * of its level pins, which a posted interrupt never gets, so a posted
 * IRTE behind it faults as a reserved IRTE would.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/kvm.h"
#include "migration/vmstate.h"
#include "hw/i386/apic_internal.h"
#include "hw/i386/x86-iommu.h"
#include "system/irq-stats.h"
#include "intel_iommu_internal.h"
#include "intel_iommu-posted.h"
#include "x86-iommu-ram.h"
#include "trace.h"

/* Posted-format IRTE fields (VT-d "IRTE for Posted Interrupts") */
#define IRTE_VECTOR(lo)         extract64(lo, 16, 8)
#define IRTE_PDA(lo, hi)        ((extract64(hi, 32, 32) << 32) | \
                                 (extract64(lo, 38, 26) << 6))
/* Reserved: bits 7:2, 13:12, 37:24 and 95:84 */
#define IRTE_RSVD_LO            (MAKE_64BIT_MASK(2, 6) | \
                                 MAKE_64BIT_MASK(12, 2) | \
                                 MAKE_64BIT_MASK(24, 14))
#define IRTE_RSVD_HI            MAKE_64BIT_MASK(20, 12)

/*
 * Posted-interrupt descriptor, in 32-bit words: PIR (0-7), then the
 * control's low word (ON, SN, NV) and high word (NDST), then reserved
 */
#define PD_SIZE                 64
#define PD_CTL_LO               8
#define PD_CTL_HI               9
#define PD_ON                   (1U << 0)
#define PD_SN                   (1U << 1)
#define PD_NV(lo)               extract32(lo, 16, 8)
/* Compare-and-swap rounds on ON before a plain atomic OR */
#define PD_CMPXCHG_TRIES        16
/* Reserved: bits 271:258 and 287:280, and everything from bit 320 */
#define PD_CTL_LO_RSVD          (MAKE_64BIT_MASK(2, 14) | \
                                 MAKE_64BIT_MASK(24, 8))
/* With EIME=0, NDST holds the xAPIC ID in bits 15:8, the rest reserved */
#define PD_NDST_XAPIC_RSVD      (MAKE_64BIT_MASK(0, 8) | \
                                 MAKE_64BIT_MASK(16, 16))

static const IrqStatDef vtd_pi_stat_defs[VTD_PI_STAT__MAX] = {
    /* Interrupts whose vector was set in a descriptor's PIR, */
    [VTD_PI_STAT_POSTED] = {
        "vtd-posted-interrupts", STATS_TYPE_CUMULATIVE },
    /* notification events sent (ON was clear, and URG or not SN), */
    [VTD_PI_STAT_NOTIFICATIONS] = {
        "vtd-posted-notifications", STATS_TYPE_CUMULATIVE },
    /* posted interrupts that found ON set: coalesced into a pending one, */
    [VTD_PI_STAT_COALESCED] = {
        "vtd-posted-coalesced", STATS_TYPE_CUMULATIVE },
    /* posted interrupts whose PIR bit was already set, */
    [VTD_PI_STAT_PIR_ALREADY_SET] = {
        "vtd-posted-pir-already-set", STATS_TYPE_CUMULATIVE },
    /* posted interrupts whose notification SN suppressed (URG clear), */
    [VTD_PI_STAT_SUPPRESSED] = {
        "vtd-posted-suppressed", STATS_TYPE_CUMULATIVE },
    /* posted IRTEs or descriptors that faulted (reserved fields, bad PDA), */
    [VTD_PI_STAT_FAULTS] = {
        "vtd-posted-faults", STATS_TYPE_CUMULATIVE },
    /* KVM MSI routes not set up because posting is on. */
    [VTD_PI_STAT_KVM_ROUTES_REFUSED] = {
        "vtd-posted-kvm-routes-refused", STATS_TYPE_CUMULATIVE },
};

bool vtd_pi_realize(IntelIOMMUState *s, Error **errp)
{
    if (!s->posted_intr) {
        return true;
    }
    if (!x86_iommu_ir_supported(X86_IOMMU_DEVICE(s))) {
        error_setg(errp, "x-posted-intr=on requires intremap=on");
        error_append_hint(errp, "Add intremap=on to -device intel-iommu "
                          "(under KVM it needs -M q35,kernel-irqchip=split),"
                          " or drop x-posted-intr=on.\n");
        return false;
    }
    if (kvm_enabled()) {
        /*
         * KVM would deliver irqfd MSIs past the model: virtio and vhost
         * signal through QEMU instead, which posts (the split irqchip's
         * IOAPIC keeps its own routes).
         */
        kvm_msi_via_irqfd_allowed = false;
    }
    s->pi_stats = g_new0(VTDPIStats, 1);
    s->pi_stats->group = irq_stats_register(OBJECT(s),
                                            STATS_TARGET_IRQ_DEVICE,
                                            vtd_pi_stat_defs,
                                            s->pi_stats->count,
                                            VTD_PI_STAT__MAX);
    return true;
}

bool vtd_pi_post_load(IntelIOMMUState *s, uint64_t cap_loaded)
{
    bool source_posts = cap_loaded & VTD_CAP_PI;

    if (source_posts != s->posted_intr) {
        error_report("intel-iommu: the migration source has "
                     "x-posted-intr=%s, this QEMU x-posted-intr=%s; start "
                     "the destination with x-posted-intr=%s",
                     source_posts ? "on" : "off",
                     s->posted_intr ? "on" : "off",
                     source_posts ? "on" : "off");
        return false;
    }
    return true;
}

static bool vtd_pi_vmstate_needed(void *opaque)
{
    IntelIOMMUState *s = opaque;

    return s->posted_intr;
}

/*
 * Sent only with posting on, and empty: a destination that does not
 * know it (stock QEMU) refuses the stream instead of misreading posted
 * IRTEs.  vtd_pi_post_load() checks the setting on this fork's side.
 */
const VMStateDescription vtd_pi_vmstate = {
    .name = "iommu-intel/posted-intr",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vtd_pi_vmstate_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_END_OF_LIST()
    }
};

bool vtd_pi_irte_reserved(const VTD_IR_TableEntry *irte)
{
    return irte->data[0] & IRTE_RSVD_LO || irte->data[1] & IRTE_RSVD_HI;
}

uint8_t vtd_pi_irte_vector(const VTD_IR_TableEntry *irte)
{
    return IRTE_VECTOR(irte->data[0]);
}

static bool pd_reserved(IntelIOMMUState *s, uint32_t lo, const uint32_t *pd)
{
    int i;

    if ((lo & PD_CTL_LO_RSVD) ||
        (!s->intr_eime &&
         (le32_to_cpu(qatomic_read(&pd[PD_CTL_HI])) & PD_NDST_XAPIC_RSVD))) {
        return true;
    }
    for (i = PD_CTL_HI + 1; i < PD_SIZE / 4; i++) {
        if (qatomic_read(&pd[i])) {
            return true;
        }
    }
    return false;
}

/* The notification event: NV to NDST, physical, fixed, edge. */
static void pi_notify(IntelIOMMUState *s, hwaddr pda, uint32_t lo,
                      uint32_t ndst)
{
    X86IOMMUIrq irq = {
        .vector = PD_NV(lo),
        .dest = s->intr_eime ? ndst : extract32(ndst, 8, 8),
        .delivery_mode = APIC_DM_FIXED,
    };
    MSIMessage msg;

    x86_iommu_irq_to_msi_message(&irq, &msg);
    trace_vtd_pi_notify(pda, irq.vector, irq.dest);
    vtd_pi_stat(s, VTD_PI_STAT_NOTIFICATIONS);
    apic_get_class(NULL)->send_msi(&msg);
}

VTDFaultReason vtd_pi_post(IntelIOMMUState *s, const VTD_IR_TableEntry *irte,
                           uint16_t sid, uint16_t index)
{
    uint64_t lo = irte->data[0], hi = irte->data[1];
    hwaddr pda = IRTE_PDA(lo, hi);
    uint8_t vector = IRTE_VECTOR(lo);
    bool urgent = lo & VTD_PI_IRTE_URG;
    uint32_t bit = 1U << (vector % 32), old_pir, old, new, ndst = 0;
    uint32_t *pd;
    bool notify = false;
    int tries;

    trace_vtd_pi_post(sid, index, pda, vector, urgent);
    if (sid == X86_IOMMU_SID_INVALID) {
        trace_vtd_pi_fault(index, pda, "no requester (IOAPIC) cannot post");
        vtd_pi_stat(s, VTD_PI_STAT_FAULTS);
        return VTD_FR_IR_IRTE_RSVD;
    }
    pd = x86_iommu_ram_map(pda, PD_SIZE, true);
    if (!pd) {
        trace_vtd_pi_fault(index, pda, "descriptor not in guest RAM");
        vtd_pi_stat(s, VTD_PI_STAT_FAULTS);
        return VTD_FR_IR_PID_ACCESS;
    }
    if (pd_reserved(s, le32_to_cpu(qatomic_read(&pd[PD_CTL_LO])), pd)) {
        x86_iommu_ram_unmap(pd, PD_SIZE, false);
        trace_vtd_pi_fault(index, pda, "reserved field set in descriptor");
        vtd_pi_stat(s, VTD_PI_STAT_FAULTS);
        return VTD_FR_IR_PID_RSVD;
    }

    /* PIR first: a harvest that clears ON looks at the PIR again after. */
    old_pir = le32_to_cpu(qatomic_fetch_or(&pd[vector / 32], cpu_to_le32(bit)));
    /* Against the harvest's ON clear then PIR re-read: store, then load */
    smp_mb__after_rmw();
    vtd_pi_stat(s, VTD_PI_STAT_POSTED);
    if (old_pir & bit) {
        vtd_pi_stat(s, VTD_PI_STAT_PIR_ALREADY_SET);
    }

    old = le32_to_cpu(qatomic_read(&pd[PD_CTL_LO]));
    for (tries = 0; ; tries++) {
        if (old & PD_CTL_LO_RSVD) {
            /* Rewritten since the check: the PIR bit stays, nothing sent */
            trace_vtd_pi_fault(index, pda, "descriptor changed to reserved");
            vtd_pi_stat(s, VTD_PI_STAT_FAULTS);
            break;
        }
        if (old & PD_ON) {
            vtd_pi_stat(s, VTD_PI_STAT_COALESCED);
            trace_vtd_pi_no_notify(pda, "ON set");
            break;
        }
        if ((old & PD_SN) && !urgent) {
            vtd_pi_stat(s, VTD_PI_STAT_SUPPRESSED);
            trace_vtd_pi_no_notify(pda, "SN set");
            break;
        }
        if (tries == PD_CMPXCHG_TRIES) {
            /*
             * A guest rewriting the word without pause must not hold the
             * BQL here: set ON whatever else changed; at worst the
             * notification is spurious, which Linux and KVM tolerate.
             */
            new = le32_to_cpu(qatomic_fetch_or(&pd[PD_CTL_LO],
                                               cpu_to_le32(PD_ON)));
            if (new & PD_ON) {
                vtd_pi_stat(s, VTD_PI_STAT_COALESCED);
                break;
            }
            old = new;
        } else {
            new = le32_to_cpu(qatomic_cmpxchg(&pd[PD_CTL_LO],
                                              cpu_to_le32(old),
                                              cpu_to_le32(old | PD_ON)));
            if (new != old) {
                old = new;      /* the guest changed it: decide again */
                continue;
            }
        }
        /* NDST as it is now: a guest moving it has moved it for us */
        ndst = le32_to_cpu(qatomic_read(&pd[PD_CTL_HI]));
        notify = true;
        break;
    }
    x86_iommu_ram_unmap(pd, PD_SIZE, true);

    if (notify) {
        pi_notify(s, pda, old, ndst);
    }
    return 0;
}

bool vtd_pi_refuse_kvm_route(IntelIOMMUState *s, uint16_t sid)
{
    /*
     * The IOAPIC's pin routes (no requester) stay: Linux posts only PCI
     * MSIs, and a posted IRTE behind a pin faults (vtd_pi_post()); its
     * route, like one behind any IRTE that does not translate, is not
     * updated.
     */
    if (!s->posted_intr || sid == X86_IOMMU_SID_INVALID) {
        return false;
    }
    trace_vtd_pi_kvm_route_refused(sid);
    vtd_pi_stat(s, VTD_PI_STAT_KVM_ROUTES_REFUSED);
    return true;
}
