/*
 * ident.h — the strict patterns names must match before they go near SQL.
 *
 * Layer: util (pure). Names (queues, kinds, nodes, locks) are always bound
 * as parameters; the table prefix is the one identifier spliced into SQL
 * text, which is why its pattern is the narrowest. Quoting is the
 * dialects' business.
 */
#ifndef SKED_UTIL_IDENT_H
#define SKED_UTIL_IDENT_H

#include <stddef.h>

/* 1 when s matches [A-Za-z0-9][A-Za-z0-9_.:-]* and is 1..SKED_MAX_NAME
 * bytes long; 0 otherwise (NULL included). */
int sked__name_valid(const char *s);

/* 1 when s matches [a-z_][a-z0-9_]{0,30}; 0 otherwise (NULL included). */
int sked__prefix_valid(const char *s);

/* 1 when s is a W3C trace context header value as sked stores it
 * (https://www.w3.org/TR/trace-context/#traceparent-header):
 * "VV-TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT-PPPPPPPPPPPPPPPP-FF", 55
 * characters, lowercase hex fields, version not ff, trace id and parent
 * id not all zeros; 0 otherwise (NULL included). */
#define SKED_TRACEPARENT_LEN 55
int sked__traceparent_valid(const char *s);

/* The default owner of a lock or id of a node: HOST-PID-RANDOM, the host
 * name with every byte a name may not hold made '-', so always a valid
 * name. 96 bytes of buf always suffice. */
void sked__default_id(char *buf, size_t len);

#endif /* SKED_UTIL_IDENT_H */
