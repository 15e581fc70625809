/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control-serve: answering the control socket on the sandbox's event loop (control-serve.c).
 */
#pragma once

#include "sandbox.h"

#define CONTROL_RETRY_MS 100 /* accepting paused this long when out of descriptors */

/* The listener (EV_CONTROL) is readable: take the waiting clients. */
void control_on_listen(struct sandlock_sandbox *sb, int epfd);
/* Client @slot (EV_CLIENT + slot) is readable: read, and answer a whole line. */
void control_on_client(struct sandlock_sandbox *sb, int epfd, int slot);
/* Watch the listener again once a pause is over. Returns the milliseconds the pause has left
 * (for the loop's timeout), or -1 when there is none. */
int control_retry(struct sandlock_sandbox *sb, int epfd);
