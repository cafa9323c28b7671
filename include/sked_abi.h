/*
 * sked_abi.h — the binary interface of libsked for bindings in other
 * languages (docs/abi.md): what a binding calls instead of reading
 * sked.h with a C compiler.
 *
 * Installed beside sked.h, which it includes: sked.h stays the contract
 * (every call, struct and code, and the version calls sked_abi_check()
 * among them); this header adds what only a binding needs. A C program
 * needs none of it: it has the enum, sizeof and the structs themselves.
 *
 * A binding (ctypes, cffi, a JNI or Go wrapper) needs, besides the calls
 * it wraps: sked_abi_check() (sked.h) once after loading the library;
 * sked_errcode() for the numbers of the codes it maps to its exceptions;
 * the option objects below instead of mirroring the option structs;
 * sked_struct_size() to check its mirrors of the structs the library
 * fills (sked_task, sked_run, sked_worker_counters, …);
 * sked_job_set_error_msg() (sked.h) instead of the variadic
 * sked_job_set_error(). Handlers are called on the worker's pool
 * threads, several at once: a binding takes its own interpreter lock
 * there (docs/abi.md). Defined in src/api/abi.c.
 */
#ifndef SKED_ABI_H
#define SKED_ABI_H

#include "sked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The code named name as sked_errname() spells it ("SKED_ENOTFOUND",
 * "SKED_OK"); 1, which is no code, for an unknown name. A code keeps its
 * number for good. */
SKED_API int sked_errcode(const char *name);

/* sizeof the public struct named name ("sked_task", "sked_run", …);
 * 0 for a name that is not one. */
SKED_API size_t sked_struct_size(const char *name);

/* Option objects: each is the very struct of sked.h (with its defaults, as
 * if zeroed: the filter's status is -1), allocated by the library, so it
 * is passed as it is to the call that takes the struct. Call the setters
 * only on objects from _new (never on a struct of your own: a C caller
 * simply fills that). The setters copy
 * strings (NULL clears one) and check nothing but the object: the call
 * that reads it checks the values, with its one-line sked_errmsg().
 * Setters return SKED_OK, SKED_EINVAL for a NULL object or SKED_ENOMEM.
 * _new returns NULL when out of memory; _free accepts NULL. An object is
 * used from one thread at a time; the calls read it during the call only. */
SKED_API sked_options *sked_options_new(void);
SKED_API void sked_options_free(sked_options *o);
SKED_API int sked_options_set_strategy(sked_options *o, const char *v);
SKED_API int sked_options_set_prefix(sked_options *o, const char *v);
SKED_API int sked_options_set_migrate(sked_options *o, int v);

SKED_API sked_enqueue_opts *sked_enqueue_opts_new(void);
SKED_API void sked_enqueue_opts_free(sked_enqueue_opts *o);
SKED_API int sked_enqueue_opts_set_queue(sked_enqueue_opts *o, const char *v);
SKED_API int sked_enqueue_opts_set_unique_key(sked_enqueue_opts *o,
                                              const char *v);
SKED_API int sked_enqueue_opts_set_priority(sked_enqueue_opts *o, int v);
SKED_API int sked_enqueue_opts_set_run_at_ms(sked_enqueue_opts *o, int64_t v);
SKED_API int sked_enqueue_opts_set_delay_ms(sked_enqueue_opts *o, int64_t v);
SKED_API int sked_enqueue_opts_set_max_attempts(sked_enqueue_opts *o, int v);
SKED_API int sked_enqueue_opts_set_concurrency_key(sked_enqueue_opts *o,
                                                   const char *v);
/* the parents (a copy of the n ids is kept) and what their failure does
 * (SKED_PARENT_CANCEL, SKED_PARENT_IGNORE): docs/workflows.md */
SKED_API int sked_enqueue_opts_set_after(sked_enqueue_opts *o,
                                         const int64_t *ids, size_t n);
SKED_API int sked_enqueue_opts_set_on_parent_failure(sked_enqueue_opts *o,
                                                     int v);
SKED_API int sked_enqueue_opts_set_traceparent(sked_enqueue_opts *o,
                                               const char *v);
/* unique scopes (sked.h: SKED_UNIQUE_*, docs/unique.md) */
SKED_API int sked_enqueue_opts_set_unique_scope(sked_enqueue_opts *o, int v);
SKED_API int sked_enqueue_opts_set_unique_for_ms(sked_enqueue_opts *o,
                                                 int64_t v);
SKED_API int sked_enqueue_opts_set_unique_replace(sked_enqueue_opts *o, int v);
SKED_API int sked_enqueue_opts_set_timeout_ms(sked_enqueue_opts *o, int64_t v);

SKED_API sked_list_filter *sked_list_filter_new(void);
SKED_API void sked_list_filter_free(sked_list_filter *o);
SKED_API int sked_list_filter_set_queue(sked_list_filter *o, const char *v);
SKED_API int sked_list_filter_set_kind(sked_list_filter *o, const char *v);
SKED_API int sked_list_filter_set_node_id(sked_list_filter *o, const char *v);
SKED_API int sked_list_filter_set_status(sked_list_filter *o, int v);
SKED_API int sked_list_filter_set_limit(sked_list_filter *o, int v);
SKED_API int sked_list_filter_set_before_id(sked_list_filter *o, int64_t v);
SKED_API int sked_list_filter_set_created_after_ms(sked_list_filter *o,
                                                   int64_t v);
SKED_API int sked_list_filter_set_created_before_ms(sked_list_filter *o,
                                                    int64_t v);

SKED_API sked_worker_options *sked_worker_options_new(void);
SKED_API void sked_worker_options_free(sked_worker_options *o);
SKED_API int sked_worker_options_set_node_id(sked_worker_options *o,
                                             const char *v);
SKED_API int sked_worker_options_set_queues(sked_worker_options *o,
                                            const char *v);
SKED_API int sked_worker_options_set_concurrency(sked_worker_options *o, int v);
SKED_API int sked_worker_options_set_lease_ms(sked_worker_options *o,
                                              int64_t v);
SKED_API int sked_worker_options_set_poll_ms(sked_worker_options *o, int64_t v);
SKED_API int sked_worker_options_set_grace_ms(sked_worker_options *o,
                                              int64_t v);
SKED_API int sked_worker_options_set_retry_base_ms(sked_worker_options *o,
                                                   int64_t v);
SKED_API int sked_worker_options_set_retry_max_ms(sked_worker_options *o,
                                                  int64_t v);
SKED_API int sked_worker_options_set_until_empty(sked_worker_options *o, int v);
SKED_API int sked_worker_options_set_timeout_ms(sked_worker_options *o,
                                                int64_t v);
SKED_API int sked_worker_options_set_prefetch(sked_worker_options *o, int v);
SKED_API int sked_worker_options_set_lock_wait_warn_ms(sked_worker_options *o,
                                                       int64_t v);

/* sked_schedule_put's options; the payload is text (its length is
 * strlen: payload_len stays 0). */
SKED_API sked_schedule_opts *sked_schedule_opts_new(void);
SKED_API void sked_schedule_opts_free(sked_schedule_opts *o);
SKED_API int sked_schedule_opts_set_tz(sked_schedule_opts *o, const char *v);
SKED_API int sked_schedule_opts_set_payload(sked_schedule_opts *o,
                                            const char *v);
SKED_API int sked_schedule_opts_set_queue(sked_schedule_opts *o, const char *v);
SKED_API int sked_schedule_opts_set_priority(sked_schedule_opts *o, int v);
SKED_API int sked_schedule_opts_set_max_attempts(sked_schedule_opts *o, int v);
SKED_API int sked_schedule_opts_set_misfire(sked_schedule_opts *o, int v);
SKED_API int sked_schedule_opts_set_overlap(sked_schedule_opts *o, int v);

/* sked_lock_acquire's and sked_lock_release's options. */
SKED_API sked_lock_opts *sked_lock_opts_new(void);
SKED_API void sked_lock_opts_free(sked_lock_opts *o);
SKED_API int sked_lock_opts_set_wait_ms(sked_lock_opts *o, int64_t v);
SKED_API int sked_lock_opts_set_at_least_ms(sked_lock_opts *o, int64_t v);

#ifdef __cplusplus
}
#endif
#endif /* SKED_ABI_H */
