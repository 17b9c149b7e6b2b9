/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * IntCapXT interrupts of the emulated AMD IOMMU (xtsup=on): the x2APIC
 * way for the IOMMU to signal its event log, PPR log and GA log.  An
 * x2APIC host cannot reach APIC IDs above 255 through the IOMMU's MSI,
 * so Linux (5.11+) programs one IntCapXT register per source
 * (MMIO 0x170 event log, 0x178 PPR log, 0x180 GA log: destination mode,
 * 32-bit destination, vector) and sets IntCapXTEn (control bit 51); it
 * never enables the MSI then.  With IntCapXTEn set, each source sends
 * a fixed, edge-triggered interrupt to its register's destination;
 * without it, the IOMMU's MSI is used as before.  A register whose
 * vector is below 16 (Linux masks a source by writing 0) sends nothing.
 *
 * amd_iommu.c calls amdvi_raise_interrupt() where it raised its MSI,
 * and amdvi_intcapxt_mmio_write() from its MMIO write handler.
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "hw/pci/msi.h"
#include "hw/i386/apic_internal.h"
#include "amd_iommu.h"
#include "amd_iommu-intcapxt.h"
#include "trace.h"

/* Control register: IntCapXTEn */
#define AMDVI_CONTROL_INTCAPXT_EN     (1ULL << 51)

static hwaddr intcapxt_reg(AMDVIInterruptSource src)
{
    return AMDVI_MMIO_INTCAPXT_EVT + src * 8;
}

bool amdvi_intcapxt_mmio_write(AMDVIState *s, hwaddr addr, uint64_t val,
                               unsigned size)
{
    hwaddr reg = addr & ~7ULL;
    unsigned shift = (addr & 7) * 8;
    uint64_t mask, old;

    if (!s->xtsup || reg < AMDVI_MMIO_INTCAPXT_EVT ||
        reg > AMDVI_MMIO_INTCAPXT_GA) {
        return false;
    }
    if ((size != 4 && size != 8) || (addr & 7) + size > 8) {
        trace_amdvi_intcapxt_bad_access(addr, size);
        return true;
    }
    /*
     * Writable: DestMode (2), Destination 23:0 (31:8), Vector (39:32),
     * Destination 31:24 (63:56); the rest is reserved.
     */
    mask = ((size == 8 ? ~0ULL : 0xffffffffULL) << shift) &
           (BIT_ULL(2) | MAKE_64BIT_MASK(8, 32) | MAKE_64BIT_MASK(56, 8));
    old = ldq_le_p(&s->mmior[reg]);
    stq_le_p(&s->mmior[reg], (old & ~mask) | ((val << shift) & mask));
    return true;
}

bool amdvi_raise_interrupt(AMDVIState *s, AMDVIInterruptSource src)
{
    uint64_t control = ldq_le_p(&s->mmior[AMDVI_MMIO_CONTROL]);
    uint64_t v;
    X86IOMMUIrq irq = {};
    MSIMessage msg;

    if (!s->xtsup || !(control & AMDVI_CONTROL_INTCAPXT_EN)) {
        if (!msi_enabled(&s->pci.dev)) {
            return false;
        }
        amdvi_generate_msi_interrupt(s);
        return true;
    }
    v = ldq_le_p(&s->mmior[intcapxt_reg(src)]);
    irq.vector = extract64(v, 32, 8);
    irq.dest_mode = extract64(v, 2, 1);
    irq.dest = extract64(v, 8, 24) | (extract64(v, 56, 8) << 24);
    if (irq.vector < 16) {
        /* Masked (or unprogrammed): nothing is signalled. */
        trace_amdvi_intcapxt_masked(src, v);
        return false;
    }
    /* Fixed, edge: delivery_mode and trigger_mode stay 0. */
    x86_iommu_irq_to_msi_message(&irq, &msg);
    trace_amdvi_intcapxt_raise(src, irq.dest, irq.vector);
    apic_get_class(NULL)->send_msi(&msg);
    return true;
}
