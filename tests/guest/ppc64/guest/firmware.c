/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest firmware interfaces.  The device tree is read through the
 * VOF client interface (finddevice, getprop, child, peer), called with
 * the KVMPPC_H_VOF_CLIENT hypercall that VOF's own entry stub makes, so
 * that this little-endian guest does not have to switch to big-endian
 * to call VOF's code.  RTAS is called with the KVMPPC_H_RTAS hypercall
 * and an argument buffer per CPU; the tokens come from the properties
 * of the /rtas node.  All cells are big-endian.
 */
#include "guest.h"

static uint32_t ci_args[16];

static int ci_call(const char *service, int nargs, int nret,
                   const uint32_t *args, uint32_t *rets)
{
    int i;

    ci_args[0] = be32((uint32_t)(unsigned long)service);
    ci_args[1] = be32(nargs);
    ci_args[2] = be32(nret);
    for (i = 0; i < nargs; i++) {
        ci_args[3 + i] = be32(args[i]);
    }
    for (i = 0; i < nret; i++) {
        ci_args[3 + nargs + i] = 0;
    }
    if (hcall(KVMPPC_H_VOF_CLIENT, (long)ci_args, 0, 0, 0, 0, 0, NULL) !=
        H_SUCCESS) {
        return -1;
    }
    for (i = 0; i < nret; i++) {
        rets[i] = be32(ci_args[3 + nargs + i]);
    }
    return 0;
}

int of_finddevice(const char *path)
{
    uint32_t a[1] = { (uint32_t)(unsigned long)path }, r[1];

    if (ci_call("finddevice", 1, 1, a, r)) {
        return -1;
    }
    return (int)r[0];
}

int of_getprop(int ph, const char *name, void *buf, int len)
{
    uint32_t a[4] = { ph, (uint32_t)(unsigned long)name,
                      (uint32_t)(unsigned long)buf, len }, r[1];

    if (ci_call("getprop", 4, 1, a, r)) {
        return -1;
    }
    return (int)r[0];
}

int of_child(int ph)
{
    uint32_t a[1] = { ph }, r[1];

    return ci_call("child", 1, 1, a, r) ? 0 : (int)r[0];
}

int of_peer(int ph)
{
    uint32_t a[1] = { ph }, r[1];

    return ci_call("peer", 1, 1, a, r) ? 0 : (int)r[0];
}

uint32_t of_getprop32(int ph, const char *name, uint32_t dflt)
{
    uint32_t v;

    if (of_getprop(ph, name, &v, 4) != 4) {
        return dflt;
    }
    return be32(v);
}

/* RTAS functions the guest uses; tokens read once by the boot CPU. */
static struct {
    const char *name;
    uint32_t token;
    bool optional;
} rtas_fns[] = {
    { "start-cpu" }, { "query-cpu-stopped-state" }, { "power-off" },
    { "ibm,set-xive" }, { "ibm,get-xive" }, { "ibm,int-on" },
    { "ibm,int-off" }, { "ibm,read-pci-config" }, { "ibm,write-pci-config" },
    { "ibm,change-msi", 0, true },
    { "ibm,query-interrupt-source-number", 0, true },
    { "stop-self", 0, true },
};
#define N_RTAS_FNS (sizeof(rtas_fns) / sizeof(rtas_fns[0]))

void rtas_init(void)
{
    int rtas = of_finddevice("/rtas");
    unsigned i;

    if (rtas == -1 || rtas == 0) {
        fail("no /rtas node");
    }
    for (i = 0; i < N_RTAS_FNS; i++) {
        rtas_fns[i].token = of_getprop32(rtas, rtas_fns[i].name, 0);
        if (!rtas_fns[i].token && !rtas_fns[i].optional) {
            fail("no RTAS token for %s", rtas_fns[i].name);
        }
    }
}

uint32_t rtas_token(const char *name)
{
    unsigned i;

    for (i = 0; i < N_RTAS_FNS; i++) {
        if (!strcmp(rtas_fns[i].name, name)) {
            return rtas_fns[i].token;
        }
    }
    return 0;
}

/*
 * Call RTAS function "name" with nargs 32-bit arguments (varargs, as
 * unsigned int); the nret return cells go to rets.  Returns rets[0], the
 * status, or -99 if the function is unknown.
 */
int rtas_call(const char *name, int nargs, int nret, uint32_t *rets, ...)
{
    uint32_t *buf = this_cpu->rtas_buf;
    uint32_t token = rtas_token(name);
    __builtin_va_list ap;
    int i;

    if (!token) {
        return -99;
    }
    buf[0] = be32(token);
    buf[1] = be32(nargs);
    buf[2] = be32(nret);
    __builtin_va_start(ap, rets);
    for (i = 0; i < nargs; i++) {
        buf[3 + i] = be32(__builtin_va_arg(ap, unsigned int));
    }
    __builtin_va_end(ap);
    for (i = 0; i < nret; i++) {
        buf[3 + nargs + i] = be32(0xdeadbeef);
    }
    sync();
    hcall(KVMPPC_H_RTAS, (long)buf, 0, 0, 0, 0, 0, NULL);
    sync();
    for (i = 0; i < nret; i++) {
        rets[i] = be32(buf[3 + nargs + i]);
    }
    return nret ? (int)rets[0] : 0;
}
