/*
 * abi.c — what a binding in another language needs to use libsked
 * without a C compiler: the runtime version and ABI check, error codes
 * by name, the sizes of the structs a binding mirrors, and option objects
 * with setters.
 *
 * Layer: the bottom of the library, beside status.c; no SQL, no handle.
 * An option object is the very struct a C caller fills on its stack
 * (sked_options, sked_enqueue_opts, …), allocated here with room for
 * copies of its strings, so it is passed to the ordinary calls as it is:
 * no second set of entry points, and a binding never learns the layout.
 * The rules these follow are in docs/abi.md.
 */
#include "sked_abi.h"

#include <stdlib.h>
#include <string.h>

/* ---- version ---- */

SKED_API const char *
sked_version(void)
{
	return SKED_VERSION;
}

SKED_API int
sked_abi_version(void)
{
	return SKED_ABI_VERSION;
}

SKED_API int
sked_abi_check(int abi)
{
	return abi == SKED_ABI_VERSION ? SKED_OK : SKED_EUNSUPPORTED;
}

/* ---- error codes by name ---- */

/* The numbers of SKED_ERRNO_MAP are the ABI: a code never changes its
 * number, and the enum must say what the table says. */
#define CHECK(name, num, text)                                                 \
	_Static_assert(SKED_E##name == -(num), "SKED_E" #name " moved");
SKED_ERRNO_MAP(CHECK)
#undef CHECK

SKED_API int
sked_errcode(const char *name)
{
	if (!name)
		return 1;
	if (strcmp(name, "SKED_OK") == 0)
		return SKED_OK;
#define X(n, num, text)                                                        \
	if (strcmp(name, "SKED_E" #n) == 0)                                    \
		return SKED_E##n;
	SKED_ERRNO_MAP(X)
#undef X
	return 1;
}

/* ---- struct sizes ---- */

SKED_API size_t
sked_struct_size(const char *name)
{
	static const struct {
		const char *name;
		size_t size;
	} sizes[] = {
#define S(t) {#t, sizeof(t)}
	        S(sked_options),
	        S(sked_info),
	        S(sked_enqueue_opts),
	        S(sked_task),
	        S(sked_list_filter),
	        S(sked_run),
	        S(sked_queue_stats),
	        S(sked_node),
	        S(sked_worker_options),
	        S(sked_worker_counters),
	        S(sked_schedule_opts),
	        S(sked_schedule),
	        S(sked_lock_opts),
	        S(sked_lock_state),
	        S(sked_lock_run_opts),
	        S(sked_lock_run_result),
	        S(sked_lock_row),
	        S(sked_cluster_gauges),
	        S(sked_queue_gauge),
	        S(sked_process_counters),
	        S(sked_worker_metrics),
	        S(sked_worker_kind_metrics),
	        S(sked_hist),
	        S(sked_queue_info),
	        S(sked_graph_task),
	        S(sked_task_live),
	        S(sked_schedule_unique),
	        S(sked_queue_weight),
#undef S
	};
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (strcmp(sizes[i].name, name) == 0)
			return sizes[i].size;
	return 0;
}

/* ---- option objects ---- */

/* Each object is its public struct first (so a pointer to the box is a
 * pointer to the struct) and the copies of the strings it points to. */
#define NSTR 5 /* sked_enqueue_opts keeps its parents' ids in slot 3 */

#define BOX(type)                                                              \
	typedef struct type##_box {                                            \
		type o;                                                        \
		char *str[NSTR];                                               \
	} type##_box

BOX(sked_options);
BOX(sked_enqueue_opts);
BOX(sked_list_filter);
BOX(sked_worker_options);
BOX(sked_schedule_opts);
BOX(sked_lock_opts);

/* Copy s into *slot, the box's own string, and point *field at the copy
 * (NULL clears both). */
static int
set_str(char **slot, const char **field, const char *s)
{
	char *copy = NULL;
	if (s && !(copy = strdup(s)))
		return SKED_ENOMEM;
	free(*slot);
	*slot = copy;
	*field = copy;
	return SKED_OK;
}

#define LIFECYCLE(type, init)                                                  \
	SKED_API type *type##_new(void)                                        \
	{                                                                      \
		type##_box *b = calloc(1, sizeof *b);                          \
		if (!b)                                                        \
			return NULL;                                           \
		init;                                                          \
		return &b->o;                                                  \
	}                                                                      \
	SKED_API void type##_free(type *o)                                     \
	{                                                                      \
		if (!o)                                                        \
			return;                                                \
		type##_box *b = (type##_box *)o;                               \
		for (int i = 0; i < NSTR; i++)                                 \
			free(b->str[i]);                                       \
		free(b);                                                       \
	}

#define SET_STR(type, field, slot)                                             \
	SKED_API int type##_set_##field(type *o, const char *v)                \
	{                                                                      \
		if (!o)                                                        \
			return SKED_EINVAL;                                    \
		return set_str(&((type##_box *)o)->str[slot], &o->field, v);   \
	}

#define SET_NUM(type, field, ctype)                                            \
	SKED_API int type##_set_##field(type *o, ctype v)                      \
	{                                                                      \
		if (!o)                                                        \
			return SKED_EINVAL;                                    \
		o->field = v;                                                  \
		return SKED_OK;                                                \
	}

/* a copy of the n parent ids, owned by the box (freed with it) */
SKED_API int
sked_enqueue_opts_set_after(sked_enqueue_opts *o, const int64_t *ids, size_t n)
{
	if (!o || (n && !ids))
		return SKED_EINVAL;
	sked_enqueue_opts_box *b = (sked_enqueue_opts_box *)o;
	int64_t *copy = NULL;
	if (n && !(copy = malloc(sizeof *copy * n)))
		return SKED_ENOMEM;
	if (n)
		memcpy(copy, ids, sizeof *copy * n);
	free(b->str[3]);
	b->str[3] = (char *)copy;
	o->after = copy;
	o->n_after = n;
	return SKED_OK;
}

/* clang-format off */
LIFECYCLE(sked_options, (void)b)
SET_STR(sked_options, strategy, 0)
SET_STR(sked_options, prefix, 1)
SET_NUM(sked_options, migrate, int)

LIFECYCLE(sked_enqueue_opts, (void)b)
SET_STR(sked_enqueue_opts, queue, 0)
SET_STR(sked_enqueue_opts, unique_key, 1)
SET_NUM(sked_enqueue_opts, priority, int)
SET_NUM(sked_enqueue_opts, run_at_ms, int64_t)
SET_NUM(sked_enqueue_opts, delay_ms, int64_t)
SET_NUM(sked_enqueue_opts, max_attempts, int)
SET_STR(sked_enqueue_opts, concurrency_key, 2)
SET_NUM(sked_enqueue_opts, on_parent_failure, int)
SET_STR(sked_enqueue_opts, traceparent, 4)
SET_NUM(sked_enqueue_opts, unique_scope, int)
SET_NUM(sked_enqueue_opts, unique_for_ms, int64_t)
SET_NUM(sked_enqueue_opts, unique_replace, int)
SET_NUM(sked_enqueue_opts, timeout_ms, int64_t)

LIFECYCLE(sked_list_filter, b->o.status = -1)
SET_STR(sked_list_filter, queue, 0)
SET_STR(sked_list_filter, kind, 1)
SET_STR(sked_list_filter, node_id, 2)
SET_NUM(sked_list_filter, status, int)
SET_NUM(sked_list_filter, limit, int)
SET_NUM(sked_list_filter, before_id, int64_t)
SET_NUM(sked_list_filter, created_after_ms, int64_t)
SET_NUM(sked_list_filter, created_before_ms, int64_t)

LIFECYCLE(sked_worker_options, (void)b)
SET_STR(sked_worker_options, node_id, 0)
SET_STR(sked_worker_options, queues, 1)
SET_NUM(sked_worker_options, concurrency, int)
SET_NUM(sked_worker_options, lease_ms, int64_t)
SET_NUM(sked_worker_options, poll_ms, int64_t)
SET_NUM(sked_worker_options, grace_ms, int64_t)
SET_NUM(sked_worker_options, retry_base_ms, int64_t)
SET_NUM(sked_worker_options, retry_max_ms, int64_t)
SET_NUM(sked_worker_options, until_empty, int)
SET_NUM(sked_worker_options, timeout_ms, int64_t)
SET_NUM(sked_worker_options, prefetch, int)
SET_NUM(sked_worker_options, lock_wait_warn_ms, int64_t)

LIFECYCLE(sked_schedule_opts, (void)b)
SET_STR(sked_schedule_opts, tz, 0)
SET_STR(sked_schedule_opts, payload, 1)
SET_STR(sked_schedule_opts, queue, 2)
SET_NUM(sked_schedule_opts, priority, int)
SET_NUM(sked_schedule_opts, max_attempts, int)
SET_NUM(sked_schedule_opts, misfire, int)
SET_NUM(sked_schedule_opts, overlap, int)

LIFECYCLE(sked_lock_opts, (void)b)
SET_NUM(sked_lock_opts, wait_ms, int64_t)
SET_NUM(sked_lock_opts, at_least_ms, int64_t)
/* clang-format on */
