/* SPDX-License-Identifier: GPL-2.0-or-later */
/* placeholder */
#include "guest.h"
void run_bench(void) {}
void run_soak(void) {}
