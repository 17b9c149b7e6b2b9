/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The SMMU's reads of its in-memory tables (stream table, context
 * descriptors, translation tables) for a walk, see smmu-common.h.
 * Hooked into get_pte() of smmu-common.c and smmu_get_ste(),
 * smmu_get_cd() and smmu_find_ste() of smmuv3.c.
 *
 * A walk runs under the SMMU's mutex, and the BQL is taken before that
 * mutex (a CR0 write, a command queue drained under the BQL): a walk
 * that dispatched to MMIO from a thread without the BQL would take the
 * BQL under the mutex, the reverse order.  So tables in RAM (and in a
 * ROM device in ROM mode) are read directly, by any thread; tables
 * elsewhere are read through the memory API, as stock QEMU reads them,
 * only by a thread that holds the BQL.  Anywhere else the read fails
 * as a bus abort would: the walk reports its fetch fault.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "system/dma.h"
#include "hw/arm/smmu-common.h"

MemTxResult smmu_table_read(dma_addr_t addr, void *buf, dma_addr_t len)
{
    MemoryRegion *mr;
    hwaddr xlat, l = len;

    WITH_RCU_READ_LOCK_GUARD() {
        mr = address_space_translate(&address_space_memory, addr, &xlat,
                                     &l, false, MEMTXATTRS_UNSPECIFIED);
        if ((memory_region_is_ram(mr) || memory_region_is_romd(mr)) &&
            !memory_region_is_ram_device(mr) && l == len) {
            void *ptr = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;

            dma_barrier(&address_space_memory, DMA_DIRECTION_TO_DEVICE);
            if (len == 8 && QEMU_PTR_IS_ALIGNED(ptr, 8)) {
                /* A descriptor: one single-copy atomic read */
                uint64_t v = qatomic_read__nocheck((uint64_t *)ptr);

                memcpy(buf, &v, 8);
            } else {
                memcpy(buf, ptr, len);
            }
            return MEMTX_OK;
        }
    }
    if (!bql_locked()) {
        qemu_log_mask(LOG_GUEST_ERROR, "smmu: table at 0x%" PRIx64
                      " is not in RAM: read only under the BQL, aborted\n",
                      (uint64_t)addr);
        return MEMTX_ERROR;
    }
    return dma_memory_read(&address_space_memory, addr, buf, len,
                           MEMTXATTRS_UNSPECIFIED);
}
