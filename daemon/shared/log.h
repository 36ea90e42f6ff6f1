/* SPDX-License-Identifier: MIT */
/* Logging to stderr (the journal under systemd), with syslog-style level prefixes. */
#pragma once

#include <syslog.h>

#include "common/macro.h"

extern int log_max_level;

_printf_(2, 3) void log_at(int level, const char *fmt, ...);

/* Log an error and return err (a negative errno), for `return log_error_errno(-errno, ...)`. */
_printf_(2, 3) int log_error_errno(int err, const char *fmt, ...);

#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_at(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_at(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_at(LOG_ERR, __VA_ARGS__)
