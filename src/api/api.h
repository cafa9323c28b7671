/*
 * api/api.h — what the layer of the public edge gives the worker above it
 * beyond <sked.h>.
 *
 * Folder src/api/ (floor 7, docs/design.md): the public edge of the
 * library: api.c (a handle's life cycle), abi.c (what bindings need).
 * Calls model/ and below.
 *
 * Only src/worker/ includes this file.
 */
#ifndef SKED_API_API_H
#define SKED_API_API_H

#include "sked.h"

/* A second handle on the same database, with the same options, the same
 * strategy and the same name on the server (the worker's lease-renewal,
 * finishing and pruning connections). */
int sked__reopen(const sked *h, sked **out);

#endif /* SKED_API_API_H */
