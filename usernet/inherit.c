/* SPDX-License-Identifier: MIT */
/* Combines a unit's network settings with its parent slices' as systemd does (inherit.h). */
#include "usernet/inherit.h"

#include <errno.h>
#include <string.h>

#include "common/macro.h"

bool usernet_setting_passes_down(const char *assignment)
{
	static const char *const names[] = {"IPAddressAllow=", "IPAddressDeny="};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strncmp(assignment, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

int usernet_slice_split(struct usernet_assignments *settings,
			struct usernet_assignments *ret_passed)
{
	struct usernet_assignments kept = {}, passed = {};
	int k = 0;

	for (size_t i = 0; i < settings->n && k >= 0; i++)
		k = usernet_assignments_push(usernet_setting_passes_down(settings->v[i]) ? &passed
											 : &kept,
					     settings->v[i], settings->from[i]);
	if (k < 0) {
		usernet_assignments_done(&kept);
		usernet_assignments_done(&passed);
		return k;
	}
	usernet_assignments_done(settings);
	*settings = kept;
	*ret_passed = passed;
	return 0;
}

int usernet_inherit(struct usernet_assignments *settings,
		    const struct usernet_assignments *slice_settings, const char *slice)
{
	for (size_t i = 0; i < slice_settings->n; i++) {
		int k;

		if (!usernet_setting_passes_down(slice_settings->v[i]))
			continue;
		k = usernet_assignments_push(settings, slice_settings->v[i], slice);
		if (k < 0)
			return k;
	}
	return 0;
}
