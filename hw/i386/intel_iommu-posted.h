/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Interrupt posting of the emulated Intel IOMMU (VT-d PI), opt-in with
 * -device intel-iommu,intremap=on,x-posted-intr=on: CAP.PI, IRTEs in
 * posted format (IM=1) decoded and checked, interrupts posted into the
 * posted-interrupt descriptor in guest RAM with the notification event
 * the specification's rule gives, and the counters of the "irq" stats
 * provider.  intel_iommu.c calls in from its IRTE decoding, its
 * interrupt-remapping region, its KVM route translation and realize;
 * the logic is in intel_iommu-posted.c.
 */

#ifndef HW_I386_INTEL_IOMMU_POSTED_H
#define HW_I386_INTEL_IOMMU_POSTED_H

#include "hw/i386/intel_iommu.h"
#include "qemu/stats64.h"

/* CAP_REG.PI: posted interrupts supported */
#define VTD_CAP_PI              (1ULL << 59)

/* vtd_interrupt_remap_msi(): posted, no MSI to send */
#define VTD_IR_POSTED           1

/* Posted-format IRTE, low quadword */
#define VTD_PI_IRTE_URG         (1ULL << 14)
#define VTD_PI_IRTE_IM          (1ULL << 15)

typedef enum VTDPIStat {
    VTD_PI_STAT_POSTED,
    VTD_PI_STAT_NOTIFICATIONS,
    VTD_PI_STAT_COALESCED,
    VTD_PI_STAT_PIR_ALREADY_SET,
    VTD_PI_STAT_SUPPRESSED,
    VTD_PI_STAT_FAULTS,
    VTD_PI_STAT_KVM_ROUTES_REFUSED,
    VTD_PI_STAT__MAX
} VTDPIStat;

typedef struct VTDPIStats {
    Stat64 count[VTD_PI_STAT__MAX];
    struct IrqStatsGroup *group;
} VTDPIStats;

/* Realize: checks the configuration, registers the counters. */
bool vtd_pi_realize(IntelIOMMUState *s, Error **errp);

/*
 * Migration: @cap_loaded is the CAP register the source's guest saw.
 * False (reported) when the source's x-posted-intr differs from ours:
 * posted IRTEs would be misread on one side or the other.
 */
bool vtd_pi_post_load(IntelIOMMUState *s, uint64_t cap_loaded);

/* Subsection of vtd_vmstate: present only with posting on. */
extern const VMStateDescription vtd_pi_vmstate;

/* Whether @irte (host-endian quadwords) is in posted format. */
static inline bool vtd_pi_irte_is_posted(IntelIOMMUState *s,
                                         const VTD_IR_TableEntry *irte)
{
    return s->posted_intr && (irte->data[0] & VTD_PI_IRTE_IM);
}

/* Whether a reserved field of posted-format @irte is set. */
bool vtd_pi_irte_reserved(const VTD_IR_TableEntry *irte);

/* The vector of posted-format @irte. */
uint8_t vtd_pi_irte_vector(const VTD_IR_TableEntry *irte);

/*
 * Post the interrupt of posted-format @irte (index @index, requester
 * @sid): returns 0, or the fault reason to report (the caller reports
 * it, unless the IRTE's FPD says not to).
 */
VTDFaultReason vtd_pi_post(IntelIOMMUState *s, const VTD_IR_TableEntry *irte,
                           uint16_t sid, uint16_t index);

/*
 * A KVM MSI route is being translated (kvm_arch_fixup_msi_route()):
 * with posting on, KVM would deliver such interrupts without the
 * model, so none is routed; the device falls back to interrupts that
 * QEMU delivers, which are posted.  Returns true if refused.
 */
bool vtd_pi_refuse_kvm_route(IntelIOMMUState *s, uint16_t sid);

static inline void vtd_pi_stat(IntelIOMMUState *s, VTDPIStat stat)
{
    stat64_add(&s->pi_stats->count[stat], 1);
}

#endif
