/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest PCI: finds the PHB in the device tree (device_type "pci"),
 * its BUID ("reg"), its 32-bit MMIO window ("ranges") and the LSI of
 * each slot and pin ("interrupt-map"); scans bus 0 with RTAS
 * ibm,read-pci-config, assigns BAR0 of each edu (1234:11e8) and e1000
 * (8086:100e) itself (VOF assigns nothing) with ibm,write-pci-config and
 * enables memory decoding.  Each device can raise its INTx on demand:
 * edu through register 0x60 (or the factorial thread, status bit 0x80),
 * e1000 through ICS; the interrupt is an LSI of the XICS source
 * controller, or for an edu switched to MSI (bootarg msi=N) an MSI.
 */
#include "guest.h"

#define EDU_IDENT       0x00
#define EDU_FACT        0x08
#define EDU_STATUS      0x20
#define EDU_IRQ_STATUS  0x24
#define EDU_IRQ_RAISE   0x60
#define EDU_IRQ_ACK     0x64
#define EDU_IRQFACT     0x80

#define E1000_ICR       0xc0
#define E1000_ICS       0xc8
#define E1000_IMS       0xd0
#define E1000_IMC       0xd8
#define E1000_OUR_BITS  0x7fff0000u

/*
 * edu's registers have the target's byte order (DEVICE_NATIVE_ENDIAN:
 * big-endian on qemu-system-ppc64); e1000's are little-endian.
 */
static uint32_t edu_read(struct dev *d, unsigned off)
{
    return be32(mmio_read32(d->mmio + off));
}

static void edu_write(struct dev *d, unsigned off, uint32_t v)
{
    mmio_write32(d->mmio + off, be32(v));
}

struct dev devs[MAX_DEVS];
int ndevs;

static uint64_t buid;
static uint64_t mem_pci, mem_cpu, mem_size, mem_next;
static uint32_t imap[32 * 4 * 7];
static int imap_n;
static uint32_t imap_mask[4];

static int cfg_read(uint32_t addr, int off, int size, uint32_t *val)
{
    uint32_t r[2];
    int st = rtas_call("ibm,read-pci-config", 4, 2, r, addr | off,
                       (uint32_t)(buid >> 32), (uint32_t)buid, size);

    *val = r[1];
    return st;
}

static void cfg_write(uint32_t addr, int off, int size, uint32_t val)
{
    uint32_t st;

    if (rtas_call("ibm,write-pci-config", 5, 1, &st, addr | off,
                  (uint32_t)(buid >> 32), (uint32_t)buid, size, val)) {
        fail("write-pci-config 0x%x+0x%x failed: %d", addr, off, (int)st);
    }
}

static int find_phb(void)
{
    int root = of_finddevice("/");
    int ph;

    for (ph = of_child(root); ph && ph != -1; ph = of_peer(ph)) {
        char type[8] = "";

        of_getprop(ph, "device_type", type, sizeof(type));
        if (!strcmp(type, "pci")) {
            return ph;
        }
    }
    return 0;
}

static void phb_init(int phb)
{
    uint32_t reg[4], ranges[3 * 7];
    int len, i;

    if (of_getprop(phb, "reg", reg, sizeof(reg)) < 8) {
        fail("PHB without reg");
    }
    buid = ((uint64_t)be32(reg[0]) << 32) | be32(reg[1]);

    /* ranges: phys.hi, pci address (2), cpu address (2), size (2) */
    len = of_getprop(phb, "ranges", ranges, sizeof(ranges));
    for (i = 0; i + 7 <= len / 4; i += 7) {
        if (((be32(ranges[i]) >> 24) & 3) == 2) {
            mem_pci = ((uint64_t)be32(ranges[i + 1]) << 32) |
                      be32(ranges[i + 2]);
            mem_cpu = ((uint64_t)be32(ranges[i + 3]) << 32) |
                      be32(ranges[i + 4]);
            mem_size = ((uint64_t)be32(ranges[i + 5]) << 32) |
                       be32(ranges[i + 6]);
        }
    }
    if (!mem_size) {
        fail("PHB without a 32-bit MMIO window");
    }
    mem_next = mem_pci;

    len = of_getprop(phb, "interrupt-map", imap, sizeof(imap));
    if (len <= 0 || len % 28) {
        fail("PHB interrupt-map has %d bytes, not 7-cell entries", len);
    }
    imap_n = len / 28;
    if (of_getprop(phb, "interrupt-map-mask", imap_mask,
                   sizeof(imap_mask)) != 16) {
        fail("PHB without interrupt-map-mask");
    }
}

static uint32_t lsi_of(uint32_t cfg_addr, uint32_t pin)
{
    int i;

    for (i = 0; i < imap_n; i++) {
        uint32_t *e = &imap[i * 7];

        if ((cfg_addr & be32(imap_mask[0])) == be32(e[0]) &&
            (pin & be32(imap_mask[3])) == be32(e[3])) {
            return be32(e[5]);
        }
    }
    fail("no interrupt-map entry for 0x%x pin %u", cfg_addr, pin);
    return 0;
}

/*
 * Switch an edu to its MSI: ibm,change-msi allocates and programs one
 * MSI, ibm,query-interrupt-source-number names its source (an MSI of
 * the same ICS), then the guest sets "MSI enable" in the capability
 * and bus mastering in the command register.
 */
static void setup_msi(struct dev *d)
{
    uint32_t r[4], cap, ctrl;
    int st;

    st = rtas_call("ibm,change-msi", 6, 4, r, d->cfg_addr,
                   (uint32_t)(buid >> 32), (uint32_t)buid, 3 /* MSI */, 1,
                   0);
    if (st || r[1] != 1) {
        fail("ibm,change-msi for 0x%x: status %d, %u vectors", d->cfg_addr,
             st, r[1]);
    }
    st = rtas_call("ibm,query-interrupt-source-number", 4, 3, r,
                   d->cfg_addr, (uint32_t)(buid >> 32), (uint32_t)buid, 0);
    if (st) {
        fail("ibm,query-interrupt-source-number for 0x%x: %d", d->cfg_addr,
             st);
    }
    d->irq = r[1];
    cfg_read(d->cfg_addr, 0x34, 1, &cap);
    while (cap) {
        uint32_t id;

        cfg_read(d->cfg_addr, cap, 1, &id);
        if (id == 0x05) {
            break;
        }
        cfg_read(d->cfg_addr, cap + 1, 1, &cap);
    }
    if (!cap) {
        fail("no MSI capability at 0x%x", d->cfg_addr);
    }
    cfg_read(d->cfg_addr, cap + 2, 2, &ctrl);
    cfg_write(d->cfg_addr, cap + 2, 2, ctrl | 1);
    /* An MSI is a DMA write to the PHB's MSI window: bus mastering. */
    cfg_read(d->cfg_addr, 0x04, 2, &ctrl);
    cfg_write(d->cfg_addr, 0x04, 2, ctrl | 0x4);
    d->msi = true;
}

static unsigned long assign_bar0(uint32_t addr)
{
    uint32_t v, size;
    uint64_t pci;

    cfg_write(addr, 0x10, 4, 0xffffffff);
    cfg_read(addr, 0x10, 4, &v);
    if (v & 1) {
        fail("BAR0 of 0x%x is I/O", addr);
    }
    size = ~(v & ~0xfu) + 1;
    pci = (mem_next + size - 1) & ~(uint64_t)(size - 1);
    if (pci + size > mem_pci + mem_size) {
        fail("32-bit MMIO window full");
    }
    mem_next = pci + size;
    cfg_write(addr, 0x10, 4, (uint32_t)pci);
    cfg_read(addr, 0x04, 2, &v);
    cfg_write(addr, 0x04, 2, v | 0x2);          /* memory space */
    return mem_cpu + (pci - mem_pci);
}

void pci_init(void)
{
    int phb = find_phb();
    uint32_t slot;

    if (!phb) {
        printf("XICS-GUEST INFO no PHB\n");
        return;
    }
    phb_init(phb);
    for (slot = 0; slot < 32 && ndevs < MAX_DEVS; slot++) {
        uint32_t addr = slot << 11, id, pin;
        struct dev *d = &devs[ndevs];

        if (cfg_read(addr, 0, 4, &id) || id == 0xffffffff) {
            continue;
        }
        if (id == 0x11e81234) {
            d->kind = DEV_EDU;
        } else if (id == 0x100e8086) {
            d->kind = DEV_E1000;
        } else {
            continue;
        }
        cfg_read(addr, 0x3d, 1, &pin);
        d->cfg_addr = addr;
        d->pin = pin;
        d->irq = lsi_of(addr, pin);
        d->mmio = assign_bar0(addr);
        d->target = 0;
        d->prio = 0xff;
        if (d->kind == DEV_EDU) {
            uint32_t ident = edu_read(d, EDU_IDENT), bar, cmd;

            if (ident != 0x010000ed) {
                cfg_read(addr, 0x10, 4, &bar);
                cfg_read(addr, 0x04, 2, &cmd);
                fail("edu at 0x%lx: ident 0x%x (BAR0 0x%x, command 0x%x)",
                     d->mmio, ident, bar, cmd);
            }
            edu_write(d, EDU_STATUS, EDU_IRQFACT);
            if (ndevs < (int)opt_msi) {
                setup_msi(d);
            }
        } else {
            mmio_write32(d->mmio + E1000_IMC, 0xffffffff);
            mmio_read32(d->mmio + E1000_ICR);
            mmio_write32(d->mmio + E1000_IMS, E1000_OUR_BITS);
        }
        printf("XICS-GUEST DEV %d %s slot=%u pin=%u irq=0x%x type=%s "
               "bar0=0x%lx\n", ndevs, d->kind == DEV_EDU ? "edu" : "e1000",
               slot, pin, d->irq, d->msi ? "msi" : "lsi", d->mmio);
        ndevs++;
    }
}

struct dev *dev_by_irq(uint32_t irq)
{
    int i;

    for (i = 0; i < ndevs; i++) {
        if (devs[i].irq == irq) {
            return &devs[i];
        }
    }
    return NULL;
}

uint32_t dev_bit(struct dev *d, uint64_t seq)
{
    if (d->kind == DEV_EDU) {
        return 1u << (9 + seq % 23);            /* not FACT 0x1, DMA 0x100 */
    }
    return 1u << (16 + seq % 15);
}

void dev_raise(struct dev *d, uint32_t bit)
{
    atomic_or(&d->outstanding, bit);
    d->raised++;
    if (d->kind == DEV_EDU) {
        edu_write(d, EDU_IRQ_RAISE, bit);
    } else {
        mmio_write32(d->mmio + E1000_ICS, bit);
    }
}

void dev_start_factorial(struct dev *d, uint32_t n)
{
    d->fact_n = n;
    atomic_or(&d->outstanding, 1);
    d->raised++;
    edu_write(d, EDU_FACT, n);
}

/* Read and acknowledge what the device raised: its line goes low. */
uint32_t dev_take(struct dev *d, uint32_t *fact)
{
    uint32_t bits;

    if (d->kind == DEV_EDU) {
        bits = edu_read(d, EDU_IRQ_STATUS);
        if (bits & 1) {
            *fact = edu_read(d, EDU_FACT);
        }
        edu_write(d, EDU_IRQ_ACK, bits);
        return bits;
    }
    return mmio_read32(d->mmio + E1000_ICR) & E1000_OUR_BITS;
}
