# tool_lib.sh: what the tool tests that start servers share (sourced, not
# run).

# wait_for FILE PATTERN: waits, bounded (20 s), until FILE contains
# PATTERN; returns 1 if it never does.  A test empties a reused FILE
# itself before starting the process that writes it.
wait_for() {
  local i
  for ((i = 0; i < 400; i++)); do
    grep -q "$2" "$1" 2> /dev/null && return 0
    sleep 0.05
  done
  return 1
}
