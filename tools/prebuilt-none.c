/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prebuilt-none: the empty precompiled-program table the generator links with (it cannot use
 * the table it is about to write).
 */
#include "plan/seccomp.h"

const struct seccomp_prebuilt seccomp_prebuilt_table[] = { { -1, NULL, 0, NULL, 0 } };
const size_t seccomp_prebuilt_count = 0;
