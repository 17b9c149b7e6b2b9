/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest main: reads its options from /chosen "bootargs" (QEMU's
 * -append): mode=test|bench|soak|stopself, n=COUNT, ms=MILLISECONDS,
 * phases=LIST, msi=N (the first N edu devices use their MSI),
 * dec=TICKS (decrementer period, default 0x7fffffff), cede=0 (waiting
 * CPUs spin instead of H_CEDE); finds RTAS, the CPUs and the PCI devices, switches
 * interrupts to little-endian (H_SET_MODE), installs the vectors,
 * starts the secondary CPUs and runs the mode on all of them; the boot
 * CPU powers the machine off at the end.
 */
#include "guest.h"

const char *opt_mode = "test";
unsigned long opt_n = 200;
unsigned long opt_ms = 1000;
unsigned long opt_msi;
unsigned long opt_dec = 0x7fffffff;
unsigned long opt_cede = 1;
extern const char *opt_phases;

static char bootargs[256];
static char mode_buf[16];
static char phases_buf[96];

static void copy_word(char *dst, size_t size, const char *src)
{
    size_t i;

    for (i = 0; i + 1 < size && src[i] && src[i] != ' '; i++) {
        dst[i] = src[i];
    }
    dst[i] = 0;
}

static void parse_bootargs(void)
{
    int chosen = of_finddevice("/chosen");
    const char *p = bootargs;

    if (chosen == -1 || of_getprop(chosen, "bootargs", bootargs,
                                   sizeof(bootargs) - 1) <= 0) {
        return;
    }
    while (*p) {
        const char *v;

        while (*p == ' ') {
            p++;
        }
        if (!strncmp(p, "mode=", 5)) {
            copy_word(mode_buf, sizeof(mode_buf), p + 5);
            opt_mode = mode_buf;
        } else if (!strncmp(p, "n=", 2)) {
            v = p + 2;
            opt_n = parse_num(&v);
        } else if (!strncmp(p, "ms=", 3)) {
            v = p + 3;
            opt_ms = parse_num(&v);
        } else if (!strncmp(p, "dec=", 4)) {
            v = p + 4;
            opt_dec = parse_num(&v);
        } else if (!strncmp(p, "cede=", 5)) {
            v = p + 5;
            opt_cede = parse_num(&v);
        } else if (!strncmp(p, "msi=", 4)) {
            v = p + 4;
            opt_msi = parse_num(&v);
        } else if (!strncmp(p, "phases=", 7)) {
            copy_word(phases_buf, sizeof(phases_buf), p + 7);
            opt_phases = phases_buf;
        }
        while (*p && *p != ' ') {
            p++;
        }
    }
}

static void run_mode(void)
{
    if (!strcmp(opt_mode, "bench")) {
        run_bench();
    } else if (!strcmp(opt_mode, "soak")) {
        run_soak();
    } else if (!strcmp(opt_mode, "stopself")) {
        run_stopself();
    } else {
        run_tests();
    }
}

void boot_main(void)
{
    long rc;
    int i;

    this_cpu->idx = 0;
    rtas_init();
    parse_bootargs();
    smp_init();
    printf("XICS-GUEST BOOT mode=%s n=%lu ms=%lu cpus=%d tb=%lu\n", opt_mode,
           opt_n, opt_ms, ncpus, tb_freq);
    for (i = 0; i < ncpus; i++) {
        printf("XICS-GUEST CPUINFO idx=%d reg=%u server=%u\n", i, cpus[i].reg,
               cpus[i].server);
    }
    /* Interrupts are taken little-endian from here on (LPCR[ILE]). */
    rc = hcall(H_SET_MODE, 1, 4, 0, 0, 0, 0, NULL);
    if (rc != H_SUCCESS) {
        fail("H_SET_MODE(little-endian interrupts): %ld", rc);
    }
    xics_install_vectors();
    pci_init();
    asm volatile("mtspr 22, %0" :: "r"(opt_dec));
    set_cppr(0xff);
    irq_enable();
    smp_start_secondaries(run_mode);
    run_mode();
    printf("XICS-GUEST END\n");
    power_off();
}
