/* SPDX-License-Identifier: MIT */
/*
 * Refusals made outside the policy verdict (quotas, checks after relocation,
 * shares, pins), worded and sent as the verdict's reasons are
 * (policy/verdict.h): the message ends with "(policy key KEY)" where a policy
 * key could allow the request, and the error carries "reasons" (the message)
 * and "denials" (its one entry), so that a client finds the key of every
 * denial in the same place (proto/PROTOCOL.md).
 */
#pragma once

#include "common/macro.h"
#include "reply.h"

/*
 * Make r the error code/err with that message. kind is "object", "program"
 * or "map" and name the program's or map's (NULL for the object); key the
 * policy key, or NULL when no policy can allow it. code (> 0: answered) or
 * -ENOMEM, as reply_error().
 */
_printf_(7, 8) int denial_reply(struct reply *r, enum proto_error code, int err, const char *kind,
				const char *name, const char *key, const char *fmt, ...);
