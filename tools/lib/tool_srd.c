/*
 * tool_srd.c: what the tools print about an SRD engine.
 */
#include "tool_srd.h"

#include <srd/srd.h>

void tool_json_drops(tool_json *j, const uint64_t *drops, int n) {
  int d;

  if (n > SRD_DROP_REASONS) {
    n = SRD_DROP_REASONS;
  }
  tool_json_obj_begin(j);
  for (d = 0; d < n; ++d) {
    tool_json_kv_u64(j, srd_drop_reason_name((srd_drop_reason)d), drops[d]);
  }
  tool_json_obj_end(j);
}
