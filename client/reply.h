/* SPDX-License-Identifier: MIT */
/* A reply's fields as the library reads them (reply.c): absent or of another type, the default. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "libbpfbroker-internal.h"

BPFBROKER_HIDDEN const char *reply_text(json_object *reply);
BPFBROKER_HIDDEN const char *get_str(json_object *o, const char *key);
BPFBROKER_HIDDEN int64_t get_int(json_object *o, const char *key, int64_t dflt);
BPFBROKER_HIDDEN bool get_bool(json_object *o, const char *key);
BPFBROKER_HIDDEN const char **string_array(json_object *o, const char *key);
BPFBROKER_HIDDEN const char **reason_keys(json_object *o);
BPFBROKER_HIDDEN bool reasons_complete(json_object *o, const char *const *reasons,
				       const char *const *keys);
