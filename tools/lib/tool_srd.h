/*
 * tool_srd.h: what the tools print about an SRD engine, written once.
 * Kept apart from tool_json.h so that a tool that never links libsrd
 * (netsim-bench) can use the JSON writer alone.
 */
#ifndef TOOL_SRD_H
#define TOOL_SRD_H

#include <stdint.h>

#include "tool_json.h"

/* tool_json_drops writes an engine's dropped packets by reason as one
   JSON object, a key per reason named as srd_drop_reason_name() names it,
   in the engine's order: the first |n| of |drops| (indexed by
   srd_drop_reason), or every reason the engine has if it has fewer.
   Errors go to |j| as every tool_json call's do. */
void tool_json_drops(tool_json *j, const uint64_t *drops, int n);

#endif /* TOOL_SRD_H */
