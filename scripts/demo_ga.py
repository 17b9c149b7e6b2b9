# SPDX-License-Identifier: GPL-2.0-or-later
"""GA round trip for make demo: on a q35 VM under qtest with
amd-iommu,x-ga-vapic=on and an edu device, program the IOMMU as a
hypervisor would (device table, 128-bit GuestMode IRTEs, GA log), raise
MSIs from edu, and show what the IOMMU did: the IRR bit posted in the
vAPIC backing page, a doorbell for IsRun=1, a GA-log entry and the
GA-log interrupt for IsRun=0."""

MMIO = 0xfed80000
DEVTAB, IRT, GALOG, BACKING = 0x100000, 0x200000, 0x400000, 0x500000
EDU_BDF = (0, 4, 0)
EDU_BAR = 0xfe000000


def cfg_addr(bdf, off):
    bus, dev, fn = bdf
    return 0x80000000 | bus << 16 | dev << 11 | fn << 8 | (off & 0xfc)


def cfg_read(vm, bdf, off, size):
    vm.qtest("outl 0xcf8 0x%x" % cfg_addr(bdf, off))
    port = 0xcfc + (off & 3)
    op = {1: "inb", 2: "inw", 4: "inl"}[size]
    return int(vm.qtest("%s 0x%x" % (op, port))[0], 16)


def cfg_write(vm, bdf, off, size, val):
    vm.qtest("outl 0xcf8 0x%x" % cfg_addr(bdf, off))
    port = 0xcfc + (off & 3)
    op = {1: "outb", 2: "outw", 4: "outl"}[size]
    vm.qtest("%s 0x%x 0x%x" % (op, port, val))


def find_cap(vm, bdf, cap_id):
    ptr = cfg_read(vm, bdf, 0x34, 1)
    while ptr:
        if cfg_read(vm, bdf, ptr, 1) == cap_id:
            return ptr
        ptr = cfg_read(vm, bdf, ptr + 1, 1)
    raise RuntimeError("capability 0x%x not found" % cap_id)


def mmio_wq(vm, reg, val):
    vm.qtest("writeq 0x%x 0x%x" % (MMIO + reg, val))


def mmio_rq(vm, reg):
    return int(vm.qtest("readq 0x%x" % (MMIO + reg))[0], 16)


def irte(vm, index, is_run, ga_log_intr, tag, vector):
    lo = 1 | ga_log_intr << 2 | is_run << 6 | 1 << 7 | tag << 32
    hi = vector | BACKING
    vm.qtest("writeq 0x%x 0x%x" % (IRT + index * 16, lo))
    vm.qtest("writeq 0x%x 0x%x" % (IRT + index * 16 + 8, hi))


def round_trip(vm):
    # edu: BAR0, memory + bus master, MSI to 0xfee00000.
    cfg_write(vm, EDU_BDF, 0x10, 4, EDU_BAR)
    cfg_write(vm, EDU_BDF, 0x04, 2, 0x6)
    msi = find_cap(vm, EDU_BDF, 0x05)
    cfg_write(vm, EDU_BDF, msi + 4, 4, 0xfee00000)
    cfg_write(vm, EDU_BDF, msi + 8, 4, 0)
    cfg_write(vm, EDU_BDF, msi + 2, 2,
              cfg_read(vm, EDU_BDF, msi + 2, 2) | 1)
    # The IOMMU's own MSI carries its GA-log interrupt.
    for dev in range(32):
        bdf = (0, dev, 0)
        if cfg_read(vm, bdf, 0, 4) == 0x14191022:
            cap = find_cap(vm, bdf, 0x05)
            flags = cfg_read(vm, bdf, cap + 2, 2)
            cfg_write(vm, bdf, cap + 4, 4, 0xfee00000)
            if flags & 0x80:                    # 64-bit address
                cfg_write(vm, bdf, cap + 8, 4, 0)
                cfg_write(vm, bdf, cap + 12, 2, 0x43)
            else:
                cfg_write(vm, bdf, cap + 8, 2, 0x43)
            cfg_write(vm, bdf, cap + 2, 2, flags | 1)
    # IOMMU: device table, edu's DTE remaps via the IRT, GA log, vAPIC mode.
    mmio_wq(vm, 0x0000, DEVTAB)
    vm.qtest("writeq 0x%x 0x%x" % (DEVTAB + 0x20 * 32 + 16,
                                   1 | 9 << 1 | IRT | 2 << 60))
    mmio_wq(vm, 0x00e0, GALOG | 8 << 56)
    mmio_wq(vm, 0x0018, 1 | 1 << 17 | 1 << 25 | 1 << 28 | 1 << 29)
    lines = []

    def raise_msi(index):
        cfg_write(vm, EDU_BDF, msi + 12, 2, index)
        vm.qtest("writel 0x%x 1" % (EDU_BAR + 0x60))

    irte(vm, 1, 1, 0, 0, 0x41)
    raise_msi(1)
    irr = int(vm.qtest("readl 0x%x" % (BACKING + 0x220))[0], 16)
    lines.append("IsRun=1, vector 0x41 -> backing page IRR[0x40..0x5f] = "
                 "0x%08x (doorbell)" % irr)
    irte(vm, 2, 0, 1, 0xcafe, 0x42)
    raise_msi(2)
    entry = int(vm.qtest("readq 0x%x" % GALOG)[0], 16)
    status = mmio_rq(vm, 0x2020)
    lines.append("IsRun=0, GALogIntr=1, GATag 0xcafe -> GA log entry "
                 "0x%016x, GA tail %d, status GAInt=%d GALogRun=%d" % (
                     entry, mmio_rq(vm, 0x2048), status >> 10 & 1,
                     status >> 8 & 1))
    return lines
