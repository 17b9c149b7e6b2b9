/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A virtio ring behind a vIOMMU whose used ring straddles two IOVA pages
 * mapped to guest-physical pages that are not adjacent (patch 0064,
 * system/physmem.c).  Virtio writes a used element through a
 * MemoryRegionCache over the IOMMU region; the element's second half
 * must land where the second IOVA page maps, not in the page that
 * physically follows the first.
 *
 * The qtest plays the guest driver: VT-d legacy-mode tables (root,
 * context, three-level second-level paging) for a virtio-rng-pci with
 * iommu_platform=on, one 8-entry queue, one 16-byte writable buffer.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/i386/intel_iommu_internal.h"
#include "hw/i386/intel_iommu.h"
#include "standard-headers/linux/virtio_pci.h"
#include "standard-headers/linux/virtio_config.h"
#include "standard-headers/linux/virtio_ring.h"

#define RNG_DEVFN       QPCI_DEVFN(4, 0)

/* Guest-physical layout */
#define ROOT_TABLE      0x100000ULL
#define CONTEXT_TABLE   0x101000ULL
#define SL_L3           0x102000ULL     /* 1 GiB entries */
#define SL_L2           0x103000ULL     /* 2 MiB entries */
#define SL_L1           0x104000ULL     /* 4 KiB entries */
#define RING_PAGE0      0x300000ULL     /* IOVA 0x200000 */
#define NEXT_PHYS_PAGE  0x301000ULL     /* mapped at no IOVA: a canary */
#define RING_PAGE1      0x305000ULL     /* IOVA 0x201000 */
#define BUFFER_PAGE     0x306000ULL     /* IOVA 0x202000 */

/*
 * IOVAs: descriptors, then the avail ring, in the first page; the used
 * ring 8 bytes before its end, so element 0 (id, len) straddles it
 */
#define IOVA_DESC       0x200000ULL
#define IOVA_AVAIL      0x200100ULL
#define IOVA_USED       0x200ff8ULL
#define IOVA_BUFFER     0x202000ULL
#define QUEUE_SIZE      8
#define BUFFER_LEN      16

#define SL_RW           (VTD_SL_R | VTD_SL_W)
#define DMAR            Q35_HOST_BRIDGE_IOMMU_ADDR
#define CANARY          0xa5a5a5a5U

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint32_t common, notify, notify_mult;
} Ctx;

static uint64_t ring_phys(uint64_t iova)
{
    return (iova < 0x201000 ? RING_PAGE0 : RING_PAGE1) + (iova & 0xfff);
}

/*
 * Legacy-mode VT-d: bus 0 -> context table -> 3-level tables -> on;
 * the used ring's second page mapped only if @second_page
 */
static void iommu_map(Ctx *c, bool second_page)
{
    QTestState *s = c->qts;

    qtest_writeq(s, ROOT_TABLE, CONTEXT_TABLE | VTD_ROOT_ENTRY_P);
    qtest_writeq(s, CONTEXT_TABLE + RNG_DEVFN * 16, SL_L3 |
                 VTD_CONTEXT_ENTRY_P);     /* TT 0: second-level */
    qtest_writeq(s, CONTEXT_TABLE + RNG_DEVFN * 16 + 8,
                 1 /* AW 39 bits */ | (1 << 8) /* domain 1 */);
    qtest_writeq(s, SL_L3, SL_L2 | SL_RW);
    qtest_writeq(s, SL_L2 + 1 * 8, SL_L1 | SL_RW);              /* 2 MiB */
    qtest_writeq(s, SL_L1 + 0 * 8, RING_PAGE0 | SL_RW);
    if (second_page) {
        qtest_writeq(s, SL_L1 + 1 * 8, RING_PAGE1 | SL_RW);
    }
    qtest_writeq(s, SL_L1 + 2 * 8, BUFFER_PAGE | SL_RW);

    qtest_writeq(s, DMAR + DMAR_RTADDR_REG, ROOT_TABLE);
    qtest_writel(s, DMAR + DMAR_GCMD_REG, VTD_GCMD_SRTP);
    g_assert_true(qtest_readl(s, DMAR + DMAR_GSTS_REG) & VTD_GSTS_RTPS);
    qtest_writel(s, DMAR + DMAR_GCMD_REG, VTD_GCMD_TE);
    g_assert_true(qtest_readl(s, DMAR + DMAR_GSTS_REG) & VTD_GSTS_TES);
}

/* The modern capabilities: common and notify configuration in one BAR */
static void find_caps(Ctx *c)
{
    uint8_t cap = qpci_find_capability(c->dev, PCI_CAP_ID_VNDR, 0);
    int bar = -1;

    c->common = c->notify = UINT32_MAX;
    for (; cap; cap = qpci_find_capability(c->dev, PCI_CAP_ID_VNDR, cap)) {
        uint8_t type = qpci_config_readb(c->dev, cap +
                            offsetof(struct virtio_pci_cap, cfg_type));
        uint8_t cap_bar = qpci_config_readb(c->dev, cap +
                            offsetof(struct virtio_pci_cap, bar));
        uint32_t off = qpci_config_readl(c->dev, cap +
                            offsetof(struct virtio_pci_cap, offset));

        if (type == VIRTIO_PCI_CAP_COMMON_CFG) {
            c->common = off;
        } else if (type == VIRTIO_PCI_CAP_NOTIFY_CFG) {
            c->notify = off;
            c->notify_mult = qpci_config_readl(c->dev, cap +
                offsetof(struct virtio_pci_notify_cap, notify_off_multiplier));
        } else {
            continue;
        }
        g_assert_true(bar == -1 || bar == cap_bar);
        bar = cap_bar;
    }
    g_assert_cmpuint(c->common, !=, UINT32_MAX);
    g_assert_cmpuint(c->notify, !=, UINT32_MAX);
    c->bar = qpci_iomap(c->dev, bar, NULL);
}

#define COMMON(field) \
    (c->common + offsetof(struct virtio_pci_common_cfg, field))

static void virtio_setup(Ctx *c)
{
    uint8_t status = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

    qpci_io_writeb(c->dev, c->bar, COMMON(device_status), 0);
    qpci_io_writeb(c->dev, c->bar, COMMON(device_status), status);
    /* VERSION_1 and ACCESS_PLATFORM: features 32 and 33 */
    qpci_io_writel(c->dev, c->bar, COMMON(guest_feature_select), 1);
    qpci_io_writel(c->dev, c->bar, COMMON(guest_feature),
                   (1U << (VIRTIO_F_VERSION_1 - 32)) |
                   (1U << (VIRTIO_F_ACCESS_PLATFORM - 32)));
    status |= VIRTIO_CONFIG_S_FEATURES_OK;
    qpci_io_writeb(c->dev, c->bar, COMMON(device_status), status);
    g_assert_cmpuint(qpci_io_readb(c->dev, c->bar, COMMON(device_status)),
                     ==, status);

    qpci_io_writew(c->dev, c->bar, COMMON(queue_select), 0);
    qpci_io_writew(c->dev, c->bar, COMMON(queue_size), QUEUE_SIZE);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_desc_lo), IOVA_DESC);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_desc_hi), 0);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_avail_lo), IOVA_AVAIL);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_avail_hi), 0);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_used_lo), IOVA_USED);
    qpci_io_writel(c->dev, c->bar, COMMON(queue_used_hi), 0);
    qpci_io_writew(c->dev, c->bar, COMMON(queue_enable), 1);
    status |= VIRTIO_CONFIG_S_DRIVER_OK;
    qpci_io_writeb(c->dev, c->bar, COMMON(device_status), status);
}

/* One writable buffer, no interrupt asked; waits for the used index */
static void virtio_request(Ctx *c)
{
    QTestState *s = c->qts;
    uint16_t notify_off;
    gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

    qtest_writeq(s, ring_phys(IOVA_DESC), IOVA_BUFFER);
    qtest_writel(s, ring_phys(IOVA_DESC) + 8, BUFFER_LEN);
    qtest_writew(s, ring_phys(IOVA_DESC) + 12, VRING_DESC_F_WRITE);
    qtest_writew(s, ring_phys(IOVA_DESC) + 14, 0);
    qtest_writew(s, ring_phys(IOVA_AVAIL) + 4, 0);              /* ring[0] */
    qtest_writew(s, ring_phys(IOVA_AVAIL), VRING_AVAIL_F_NO_INTERRUPT);
    qtest_writew(s, ring_phys(IOVA_AVAIL) + 2, 1);              /* idx */

    notify_off = qpci_io_readw(c->dev, c->bar, COMMON(queue_notify_off));
    qpci_io_writew(c->dev, c->bar, c->notify + notify_off * c->notify_mult,
                   0);
    while (qtest_readw(s, ring_phys(IOVA_USED) + 2) != 1) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
}

/*
 * With @second_page, the element's len must land in the page the second
 * IOVA page maps to; without, its half there faults and is dropped.
 * Either way nothing lands in the page that physically follows the
 * first.
 */
static void used_ring_straddles_pages(bool second_page)
{
    Ctx c = {};
    uint64_t used_elem = IOVA_USED + 4;     /* element 0: id, then len */

    c.qts = qtest_init("-M q35 -device intel-iommu "
                       "-device virtio-rng-pci,addr=04.0,"
                       "iommu_platform=on,disable-legacy=on");
    c.bus = qpci_new_pc(c.qts, NULL);
    c.dev = qpci_device_find(c.bus, RNG_DEVFN);
    g_assert_nonnull(c.dev);
    qpci_device_enable(c.dev);

    qtest_writel(c.qts, NEXT_PHYS_PAGE, CANARY);
    qtest_writel(c.qts, ring_phys(used_elem), CANARY);
    qtest_writel(c.qts, ring_phys(used_elem + 4), CANARY);
    iommu_map(&c, second_page);
    find_caps(&c);
    virtio_setup(&c);
    virtio_request(&c);

    /* id 0 at the end of the first page, len at the start of the second */
    g_assert_cmphex(ring_phys(used_elem) & 0xfff, ==, 0xffc);
    g_assert_cmphex(ring_phys(used_elem + 4), ==, RING_PAGE1);
    g_assert_cmpuint(qtest_readl(c.qts, ring_phys(used_elem)), ==, 0);
    g_assert_cmpuint(qtest_readl(c.qts, ring_phys(used_elem + 4)), ==,
                     second_page ? BUFFER_LEN : CANARY);
    /* and nothing in the page that physically follows the first */
    g_assert_cmphex(qtest_readl(c.qts, NEXT_PHYS_PAGE), ==, CANARY);

    qpci_iounmap(c.dev, c.bar);
    g_free(c.dev);
    qpci_free_pc(c.bus);
    qtest_quit(c.qts);
}

static void test_used_ring_straddles_pages(void)
{
    used_ring_straddles_pages(true);
}

static void test_used_ring_second_page_unmapped(void)
{
    used_ring_straddles_pages(false);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("intel-iommu") ||
        !qtest_has_device("virtio-rng-pci")) {
        g_test_skip("intel-iommu or virtio-rng-pci not built");
        return g_test_run();
    }
    qtest_add_func("/iommu-vring/used-ring-second-page-unmapped",
                   test_used_ring_second_page_unmapped);
    qtest_add_func("/iommu-vring/used-ring-straddles-pages",
                   test_used_ring_straddles_pages);
    return g_test_run();
}
