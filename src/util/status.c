/*
 * status.c — the names of status codes and of task states.
 *
 * Layer: the bottom of the library, beside the handle core; no SQL and no
 * handle. The codes themselves are SKED_ERRNO_MAP in sked.h, the task
 * states SKED_PENDING … SKED_CANCELLED; this file turns them into the
 * words the command line, the logs and the JSON output use.
 */
#include "sked.h"

#include <string.h>

/* ---- status codes ---- */

SKED_API const char *
sked_errname(int code)
{
	switch (code) {
	case SKED_OK:
		return "SKED_OK";
#define X(name, num, text)                                                     \
	case SKED_E##name:                                                     \
		return "SKED_E" #name;
		SKED_ERRNO_MAP(X)
#undef X
	}
	return "SKED_E?";
}

SKED_API const char *
sked_strerror(int code)
{
	switch (code) {
	case SKED_OK:
		return "success";
#define X(name, num, text)                                                     \
	case SKED_E##name:                                                     \
		return text;
		SKED_ERRNO_MAP(X)
#undef X
	}
	return "unknown status code";
}

static const char *const status_names[] = {
        "pending", "running",   "succeeded", "dead",
        "retry",   "cancelled", "blocked",
};

SKED_API const char *
sked_status_name(int status)
{
	if (status < 0 || status > 6)
		return "?";
	return status_names[status];
}

SKED_API int
sked_status_parse(const char *name)
{
	for (int i = 0; i < 7; i++)
		if (name && strcmp(name, status_names[i]) == 0)
			return i;
	return -1;
}
