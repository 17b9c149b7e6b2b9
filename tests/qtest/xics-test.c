/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtests of the emulated XICS on pseries (ic-mode=xics, -accel qtest):
 * RTAS ibm,set-xive / get-xive / int-off / int-on and their errors, and
 * the presenter hypercalls (H_CPPR, H_XIRR, H_XIRR_X, H_EOI, H_IPI,
 * H_IPOLL) issued on a chosen vCPU through the "hcall" qtest verb:
 * priorities, rejects and resends, masked sources, IPIs between vCPUs,
 * bad server numbers, and the counters of the "irq" stats provider.
 * The level-triggered source is the INTx line of an edu PCI device.
 * xics/stress runs the multi-threaded "xics-stress" verb (threads
 * inside QEMU, without the BQL) and checks its verdict and counters;
 * XICS_STRESS_ROUNDS sets its length (make check-tsan shortens it).
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-spapr.h"
#include "libqos/pci-spapr.h"
#include "qobject/qdict.h"
#include "irq-stats-qtest.h"

#define H_SUCCESS       0
#define H_HARDWARE      ((uint64_t)-1)
#define H_PARAMETER     ((uint64_t)-4)
#define H_EOI           0x64
#define H_CPPR          0x68
#define H_IPI           0x6c
#define H_IPOLL         0x70
#define H_XIRR          0x74
#define H_XIRR_X        0x2fc

#define RTAS_SUCCESS     0
#define RTAS_PARAM_ERROR (-3)

#define XICS_IPI        0x2
#define EDU_DEVFN       QPCI_DEVFN(4, 0)
/* PHB 0's first LSI; edu in slot 4, pin A swizzles to LSI 0. */
#define EDU_LSI         0x1200
#define EDU_RAISE_IRQ   0x60
#define EDU_ACK_IRQ     0x64
#define RTAS_BUF        0x1000000

#define MACHINE "-M pseries,ic-mode=xics -smp 2 -device edu,addr=04.0"

typedef struct Xics {
    QOSState *qs;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *edu;
    QPCIBar bar;
} Xics;

static uint64_t hcall(Xics *x, int cpu, uint64_t opcode, uint64_t *args,
                      int nargs)
{
    return qtest_spapr_hcall(x->qts, cpu, opcode, args, nargs);
}

static uint64_t h_cppr(Xics *x, int cpu, uint8_t cppr)
{
    uint64_t a[1] = { cppr };
    return hcall(x, cpu, H_CPPR, a, 1);
}

static uint64_t h_ipi(Xics *x, int cpu, uint64_t server, uint8_t mfrr)
{
    uint64_t a[2] = { server, mfrr };
    return hcall(x, cpu, H_IPI, a, 2);
}

static uint32_t h_xirr(Xics *x, int cpu)
{
    uint64_t a[1] = { 0 };
    g_assert_cmphex(hcall(x, cpu, H_XIRR, a, 1), ==, H_SUCCESS);
    return a[0];
}

static uint64_t h_eoi(Xics *x, int cpu, uint32_t xirr)
{
    uint64_t a[1] = { xirr };
    return hcall(x, cpu, H_EOI, a, 1);
}

/* XIRR of @server as H_IPOLL sees it, without accepting. */
static uint32_t h_ipoll(Xics *x, int cpu, uint64_t server, uint8_t *mfrr)
{
    uint64_t a[2] = { server, 0 };
    g_assert_cmphex(hcall(x, cpu, H_IPOLL, a, 2), ==, H_SUCCESS);
    if (mfrr) {
        *mfrr = a[1];
    }
    return a[0];
}

static int32_t rtas(Xics *x, const char *name, int nargs, const uint32_t *args,
                    int nret, uint32_t *ret)
{
    uint64_t rets = RTAS_BUF + 0x100;

    for (int i = 0; i < nargs; i++) {
        qtest_writel(x->qts, RTAS_BUF + 4 * i, args[i]);
    }
    for (int i = 0; i < nret; i++) {
        qtest_writel(x->qts, rets + 4 * i, 0xdeadbeef);
    }
    qtest_rtas_call(x->qts, name, nargs, RTAS_BUF, nret, rets);
    for (int i = 0; i < nret; i++) {
        ret[i] = qtest_readl(x->qts, rets + 4 * i);
    }
    return ret[0];
}

static int32_t set_xive(Xics *x, uint32_t nr, uint32_t server, uint32_t prio)
{
    uint32_t a[3] = { nr, server, prio }, r[1];
    return rtas(x, "ibm,set-xive", 3, a, 1, r);
}

static int32_t int_onoff(Xics *x, const char *name, uint32_t nr)
{
    uint32_t a[1] = { nr }, r[1];
    return rtas(x, name, 1, a, 1, r);
}

static void edu_intx(Xics *x, bool level)
{
    qpci_io_writel(x->edu, x->bar, level ? EDU_RAISE_IRQ : EDU_ACK_IRQ, 1);
}

static Xics *xics_start(const char *extra)
{
    Xics *x = g_new0(Xics, 1);

    x->qs = qtest_spapr_boot(MACHINE " %s", extra ? extra : "");
    x->qts = x->qs->qts;
    x->bus = qpci_new_spapr(x->qts, &x->qs->alloc);
    x->edu = qpci_device_find(x->bus, EDU_DEVFN);
    g_assert_nonnull(x->edu);
    qpci_device_enable(x->edu);
    x->bar = qpci_iomap(x->edu, 0, NULL);
    /* Both presenters accept everything. */
    g_assert_cmphex(h_cppr(x, 0, 0xff), ==, H_SUCCESS);
    g_assert_cmphex(h_cppr(x, 1, 0xff), ==, H_SUCCESS);
    return x;
}

static void xics_stop(Xics *x)
{
    qpci_iounmap(x->edu, x->bar);
    g_free(x->edu);
    qpci_free_spapr(x->bus);
    qtest_spapr_shutdown(x->qs);
    g_free(x);
}

static uint64_t xstat(Xics *x, const char *target, const char *path,
                      const char *name)
{
    return irq_stat(x->qts, target, path, name);
}

static void test_rtas_xive(void)
{
    Xics *x = xics_start(NULL);
    uint32_t a[3], r[3];

    g_assert_cmpint(set_xive(x, EDU_LSI, 1, 5), ==, RTAS_SUCCESS);
    a[0] = EDU_LSI;
    g_assert_cmpint(rtas(x, "ibm,get-xive", 1, a, 3, r), ==, RTAS_SUCCESS);
    g_assert_cmpuint(r[1], ==, 1);
    g_assert_cmpuint(r[2], ==, 5);

    /* int-off masks and remembers the priority; int-on restores it. */
    g_assert_cmpint(int_onoff(x, "ibm,int-off", EDU_LSI), ==, RTAS_SUCCESS);
    rtas(x, "ibm,get-xive", 1, a, 3, r);
    g_assert_cmpuint(r[2], ==, 0xff);
    g_assert_cmpint(int_onoff(x, "ibm,int-on", EDU_LSI), ==, RTAS_SUCCESS);
    rtas(x, "ibm,get-xive", 1, a, 3, r);
    g_assert_cmpuint(r[1], ==, 1);
    g_assert_cmpuint(r[2], ==, 5);

    /* Invalid source, server and priority: parameter error. */
    g_assert_cmpint(set_xive(x, 0xfff, 0, 5), ==, RTAS_PARAM_ERROR);
    g_assert_cmpint(set_xive(x, 0x2000, 0, 5), ==, RTAS_PARAM_ERROR);
    g_assert_cmpint(set_xive(x, EDU_LSI, 1000, 5), ==, RTAS_PARAM_ERROR);
    g_assert_cmpint(set_xive(x, EDU_LSI, 0, 0x100), ==, RTAS_PARAM_ERROR);
    a[0] = 0x2000;
    g_assert_cmpint(rtas(x, "ibm,get-xive", 1, a, 3, r), ==, RTAS_PARAM_ERROR);
    g_assert_cmpint(int_onoff(x, "ibm,int-off", 0x2000), ==, RTAS_PARAM_ERROR);
    g_assert_cmpint(int_onoff(x, "ibm,int-on", 0xfff), ==, RTAS_PARAM_ERROR);
    /* Wrong number of arguments. */
    a[0] = EDU_LSI;
    g_assert_cmpint(rtas(x, "ibm,set-xive", 1, a, 1, r), ==, RTAS_PARAM_ERROR);
    /* Nothing above changed the source. */
    rtas(x, "ibm,get-xive", 1, a, 3, r);
    g_assert_cmpuint(r[1], ==, 1);
    g_assert_cmpuint(r[2], ==, 5);
    xics_stop(x);
}

static void test_ipi(void)
{
    Xics *x = xics_start(NULL);
    g_autofree char *cpu1 = irq_stats_cpu_path(x->qts, 1);
    uint8_t mfrr;

    g_assert_cmpuint(xstat(x, "irq-vcpu", cpu1, "xics-icp-ipis"), ==, 0);

    /* CPU 0 sends an IPI to server 1. */
    g_assert_cmphex(h_ipi(x, 0, 1, 4), ==, H_SUCCESS);
    g_assert_cmphex(h_ipoll(x, 0, 1, &mfrr), ==, 0xff000000 | XICS_IPI);
    g_assert_cmpuint(mfrr, ==, 4);
    /* CPU 0 itself has nothing pending. */
    g_assert_cmphex(h_ipoll(x, 0, 0, NULL), ==, 0xff000000);

    /* CPU 1 accepts it: CPPR becomes the IPI's priority. */
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000 | XICS_IPI);
    g_assert_cmphex(h_ipoll(x, 1, 1, NULL), ==, 0x04000000);
    g_assert_cmphex(h_ipi(x, 1, 1, 0xff), ==, H_SUCCESS);
    g_assert_cmphex(h_eoi(x, 1, 0xff000000 | XICS_IPI), ==, H_SUCCESS);
    g_assert_cmphex(h_ipoll(x, 1, 1, NULL), ==, 0xff000000);
    /* Nothing more. */
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000);

    g_assert_cmpuint(xstat(x, "irq-vcpu", cpu1, "xics-icp-ipis"), ==, 1);
    g_assert_cmpuint(xstat(x, "irq-vcpu", cpu1, "xics-icp-accepted"), ==, 1);
    g_assert_cmpuint(xstat(x, "irq-vcpu", cpu1, "xics-icp-eois"), ==, 1);

    /* An IPI no more favoured than CPPR waits until CPPR drops. */
    g_assert_cmphex(h_cppr(x, 1, 3), ==, H_SUCCESS);
    g_assert_cmphex(h_ipi(x, 0, 1, 5), ==, H_SUCCESS);
    g_assert_cmphex(h_ipoll(x, 1, 1, NULL), ==, 0x03000000);
    g_assert_cmphex(h_cppr(x, 1, 0xff), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000 | XICS_IPI);
    xics_stop(x);
}

static void test_bad_server(void)
{
    Xics *x = xics_start(NULL);
    uint64_t a[2] = { 1000, 0 };

    g_assert_cmphex(h_ipi(x, 0, 1000, 5), ==, H_PARAMETER);
    g_assert_cmphex(h_ipi(x, 0, 2, 5), ==, H_PARAMETER);
    g_assert_cmphex(h_ipi(x, 0, UINT64_MAX, 5), ==, H_PARAMETER);
    g_assert_cmphex(h_ipi(x, 0, 0x80000000, 5), ==, H_PARAMETER);
    g_assert_cmphex(hcall(x, 0, H_IPOLL, a, 2), ==, H_PARAMETER);
    a[0] = UINT64_MAX;
    g_assert_cmphex(hcall(x, 0, H_IPOLL, a, 2), ==, H_PARAMETER);
    /* The presenters are untouched. */
    g_assert_cmphex(h_ipoll(x, 0, 0, NULL), ==, 0xff000000);
    g_assert_cmphex(h_ipoll(x, 0, 1, NULL), ==, 0xff000000);
    xics_stop(x);
}

static void test_lsi_reject_resend(void)
{
    Xics *x = xics_start(NULL);
    g_autofree char *cpu0 = irq_stats_cpu_path(x->qts, 0);
    uint64_t rejects, resent, scanned, passes;

    g_assert_cmpint(set_xive(x, EDU_LSI, 0, 5), ==, RTAS_SUCCESS);

    /* The LSI is presented to server 0. */
    edu_intx(x, true);
    g_assert_cmphex(h_ipoll(x, 1, 0, NULL), ==, 0xff000000 | EDU_LSI);

    /* A more favoured IPI makes the presenter reject the LSI. */
    rejects = xstat(x, "irq-vcpu", cpu0, "xics-icp-rejects");
    g_assert_cmphex(h_ipi(x, 1, 0, 3), ==, H_SUCCESS);
    g_assert_cmpuint(xstat(x, "irq-vcpu", cpu0, "xics-icp-rejects"), ==,
                     rejects + 1);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | XICS_IPI);

    /* EOI of the IPI resends the still asserted LSI, visiting it alone. */
    resent = xstat(x, "irq-device", NULL, "xics-ics-resent");
    scanned = xstat(x, "irq-device", NULL, "xics-ics-resend-scanned");
    passes = xstat(x, "irq-device", NULL, "xics-ics-resend-passes");
    g_assert_cmphex(h_ipi(x, 0, 0, 0xff), ==, H_SUCCESS);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | XICS_IPI), ==, H_SUCCESS);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-resent"), ==,
                     resent + 1);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-resend-passes"),
                     >, passes);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-resend-scanned"),
                     ==, scanned + 1);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EDU_LSI);

    /* Lowering the line, then EOI: not presented again. */
    edu_intx(x, false);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EDU_LSI), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000);

    /* Still asserted at EOI: presented again. */
    edu_intx(x, true);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EDU_LSI);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EDU_LSI), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EDU_LSI);
    edu_intx(x, false);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EDU_LSI), ==, H_SUCCESS);

    /* CPPR at or above the source's priority holds it back. */
    g_assert_cmphex(h_cppr(x, 0, 5), ==, H_SUCCESS);
    edu_intx(x, true);
    g_assert_cmphex(h_ipoll(x, 1, 0, NULL), ==, 0x05000000);
    g_assert_cmphex(h_cppr(x, 0, 6), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0x06000000 | EDU_LSI);
    edu_intx(x, false);
    g_assert_cmphex(h_eoi(x, 0, 0x06000000 | EDU_LSI), ==, H_SUCCESS);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-lsi-events"), ==,
                     3);
    xics_stop(x);
}

static void test_masked(void)
{
    Xics *x = xics_start(NULL);

    g_assert_cmpint(set_xive(x, EDU_LSI, 1, 5), ==, RTAS_SUCCESS);
    g_assert_cmpint(int_onoff(x, "ibm,int-off", EDU_LSI), ==, RTAS_SUCCESS);
    edu_intx(x, true);
    /* Masked: not presented, even on a resend. */
    g_assert_cmphex(h_ipoll(x, 0, 1, NULL), ==, 0xff000000);
    g_assert_cmphex(h_cppr(x, 1, 0xff), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000);
    g_assert_cmphex(h_eoi(x, 1, 0xff000000), ==, H_SUCCESS);
    g_assert_cmphex(h_ipoll(x, 0, 1, NULL), ==, 0xff000000);
    /* Unmasked while asserted: presented at once. */
    g_assert_cmpint(int_onoff(x, "ibm,int-on", EDU_LSI), ==, RTAS_SUCCESS);
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000 | EDU_LSI);
    edu_intx(x, false);
    g_assert_cmphex(h_eoi(x, 1, 0xff000000 | EDU_LSI), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 1), ==, 0xff000000);
    xics_stop(x);
}

/* The EPOW source is an MSI: system_powerdown pulses it. */
#define EPOW_MSI        0x1000

static void epow_msi(Xics *x)
{
    qtest_qmp_assert_success(x->qts, "{ 'execute': 'system_powerdown' }");
    qtest_qmp_eventwait(x->qts, "POWERDOWN");
}

static void test_msi(void)
{
    Xics *x = xics_start(NULL);
    uint64_t events = xstat(x, "irq-device", NULL, "xics-ics-msi-events");
    uint64_t resent;

    g_assert_cmpint(set_xive(x, EPOW_MSI, 0, 5), ==, RTAS_SUCCESS);
    epow_msi(x);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EPOW_MSI);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EPOW_MSI), ==, H_SUCCESS);
    /* An edge: the EOI does not bring it back. */
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-msi-events"),
                     ==, events + 1);

    /* Rejected by CPPR 5, kept, and resent when CPPR drops. */
    g_assert_cmphex(h_cppr(x, 0, 5), ==, H_SUCCESS);
    epow_msi(x);
    g_assert_cmphex(h_ipoll(x, 1, 0, NULL), ==, 0x05000000);
    resent = xstat(x, "irq-device", NULL, "xics-ics-resent");
    g_assert_cmphex(h_cppr(x, 0, 0xff), ==, H_SUCCESS);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-resent"), ==,
                     resent + 1);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EPOW_MSI);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EPOW_MSI), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000);

    /* Masked: held pending, delivered once when unmasked. */
    g_assert_cmpint(int_onoff(x, "ibm,int-off", EPOW_MSI), ==, RTAS_SUCCESS);
    epow_msi(x);
    g_assert_cmphex(h_ipoll(x, 1, 0, NULL), ==, 0xff000000);
    g_assert_cmpint(int_onoff(x, "ibm,int-on", EPOW_MSI), ==, RTAS_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000 | EPOW_MSI);
    g_assert_cmphex(h_eoi(x, 0, 0xff000000 | EPOW_MSI), ==, H_SUCCESS);
    g_assert_cmphex(h_xirr(x, 0), ==, 0xff000000);
    g_assert_cmpuint(xstat(x, "irq-device", NULL, "xics-ics-msi-events"),
                     ==, events + 3);
    xics_stop(x);
}

#define H_FUNCTION      ((uint64_t)-2)

/*
 * With XIVE only, the XICS presenter calls are not registered: they
 * fail with H_FUNCTION and QEMU lives on.
 */
static void test_xics_calls_without_xics(void)
{
    QTestState *qts = qtest_init("-M pseries,ic-mode=xive -smp 2");
    static const uint64_t calls[] = { H_XIRR, H_XIRR_X, H_EOI, H_CPPR, H_IPI,
                                      H_IPOLL };
    QDict *resp;

    for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
        uint64_t a[2] = { 1, 5 };

        g_assert_cmphex(qtest_spapr_hcall(qts, i & 1, calls[i], a, 2), ==,
                        H_FUNCTION);
    }
    resp = qtest_qmp(qts, "{ 'execute': 'query-status' }");
    g_assert(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    qtest_quit(qts);
}

/*
 * Several threads inside QEMU raising MSIs and LSIs, taking and EOI-ing
 * them, sending IPIs, changing CPPR and moving sources at once, without
 * the BQL (hw/ppc/spapr_qtest_xics_stress.c): every interrupt taken
 * exactly once, none lost.  Then the counters must add up.
 */
static void test_stress(void)
{
    QTestState *qts = qtest_init("-M pseries,ic-mode=xics -smp 4");
    const char *rounds_env = g_getenv("XICS_STRESS_ROUNDS");
    int rounds = rounds_env ? atoi(rounds_env) : 20000;
    uint64_t raised, delivered, sent, taken, moves;
    uint64_t total_taken = 0, accepted = 0, eois = 0;

    for (uint32_t seed = 1; seed <= 3; seed++) {
        g_autofree gchar *rsp = qtest_spapr_xics_stress(qts, 4, rounds, seed);

        g_test_message("seed %u: %s", seed, rsp);
        g_assert_cmpint(sscanf(rsp, "OK raised=%" SCNu64 " delivered=%" SCNu64
                               " ipis-sent=%" SCNu64 " ipis-taken=%" SCNu64
                               " moves=%" SCNu64, &raised, &delivered, &sent,
                               &taken, &moves), ==, 5);
        g_assert_cmpuint(raised, ==, delivered);
        g_assert_cmpuint(sent, ==, taken);
        g_assert_cmpuint(raised, >, 0);
        g_assert_cmpuint(sent, >, 0);
        total_taken += delivered + taken;
    }

    /* Each interrupt taken is one H_XIRR that found one, and one H_EOI */
    for (int cpu = 0; cpu < 4; cpu++) {
        g_autofree char *path = irq_stats_cpu_path(qts, cpu);

        accepted += irq_stat(qts, "irq-vcpu", path, "xics-icp-accepted");
        eois += irq_stat(qts, "irq-vcpu", path, "xics-icp-eois");
    }
    g_assert_cmpuint(accepted, ==, total_taken);
    g_assert_cmpuint(eois, ==, total_taken);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    if (!g_str_equal(qtest_get_arch(), "ppc64")) {
        return 0;
    }
    qtest_add_func("xics/rtas-xive", test_rtas_xive);
    qtest_add_func("xics/ipi", test_ipi);
    qtest_add_func("xics/bad-server", test_bad_server);
    qtest_add_func("xics/lsi-reject-resend", test_lsi_reject_resend);
    qtest_add_func("xics/masked", test_masked);
    qtest_add_func("xics/msi", test_msi);
    qtest_add_func("xics/calls-without-xics", test_xics_calls_without_xics);
    qtest_add_func("xics/stress", test_stress);
    return g_test_run();
}
