# Definitions that make jaq's standard library behave as jq 1.6 does where
# they differ; they come after jaq's and so take precedence. The natives
# they call (`tojson`, `__halt_message`, `__setpath`, `input_filename`,
# `@csv`, `@tsv`) are vfs-sh's own (see mod.rs). A definition sees only
# those above it.

# jq creates what a path needs on null; jaq's `getpath($path) = $x` would refuse.
def setpath($path; $x): __setpath($path; $x);

# jq prints numbers in strings as it prints them in output (`10`, not `10.0`).
def tostring: if type == "string" then . else tojson end;
def @text: tostring;
def @json: tojson;

# jq 1.6's join: null joins as "", numbers and booleans as their JSON text.
def join($x): reduce .[] as $i (null;
  (if . == null then "" else . + $x end)
  + ($i | if . == null then "" elif type == "string" then .
          elif type == "array" or type == "object" then error("Cannot join with \(type)")
          else tojson end)) // "";

# A string goes to standard error as it is, anything else as JSON.
def halt_error($exit_code): __halt_message, halt($exit_code);
def halt_error: halt_error(5);

def env: $ENV;

# jq 1.6 builtins jaq does not have.
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def leaf_paths: paths(scalars);
def tostream: path(def r: (.[]? | r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p + $q]);
def fromstream(f): {x: null, e: false} as $init
  | foreach f as $i ($init;
      if .e then $init else . end
      | if $i | length == 2
        then setpath(["e"]; $i[0] | length == 0) | setpath(["x"] + $i[0]; $i[1])
        else setpath(["e"]; $i[0] | length == 1) end;
      if .e then .x else empty end);

# jq leaves anything but a string with the prefix or suffix as it is.
def ltrimstr($x): if type == "string" and ($x | type) == "string" and startswith($x) then .[($x | length):] else . end;
def rtrimstr($x): if type == "string" and ($x | type) == "string" and endswith($x) and ($x | length) > 0 then .[:length - ($x | length)] else . end;

# jq's todate formats broken-down times too; `input` past the end is an error.
def todate: strftime("%Y-%m-%dT%H:%M:%SZ");
def input: [limit(1; inputs)] | if length == 0 then error("No more inputs") else .[0] end;

# jq 1.6's error for the keys of a scalar, the value cut as its messages cut it.
def keys:
  if type == "object" or type == "array" then keys_unsorted | sort
  else error("\(type) (\(tojson | if length > 14 then .[:11] + "..." else . end)) has no keys") end;

# jq 1.6's has: an object by string keys, an array by numbers (cut toward
# zero), null never; any other pairing is an error.
def has($k):
  if type == "null" then false
  elif type == "object" and ($k | type) == "string" then any(keys_unsorted[]; . == $k)
  elif type == "array" and ($k | type) == "number" then
    ($k | if . < 0 then ceil else floor end) as $i | $i >= 0 and $i < length
  else error("Cannot check whether \(type) has a \($k | type) key") end;
def in(xs): . as $x | xs | has($x);

# jq 1.6's deletion keeps an object's other keys in their order.
def delpaths($paths): __delpaths($paths);
def del(f): delpaths([path(f)]);
