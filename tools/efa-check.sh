#!/bin/bash
# efa-check.sh HOST_B: the real-EFA check (issue 11, docs/efa.md).  Runs
# the same size sweep of srd-perf's bw and lat tests from this host to
# HOST_B over three transports:
#   -t fabric --provider efa   libfabric's efa provider: real SRD on the NIC
#   -t udp                     this project's SRD emulation over UDP (ENA)
#   -t tcp                     kernel TCP
# and prints one table (bandwidth and round-trip latency per size, with
# the ratios emulation/EFA and tcp/EFA), writes it as CSV, the raw JSON of
# every transport, and one plot (srd-plot, gnuplot) into -o DIR.
# --provider "tcp;ofi_rxm" stands in for efa where there is no EFA (the
# test, test/tools/test_efa_check.sh, does that on 127.0.0.1).
#
# Servers on HOST_B are started over ssh (${SSH:-ssh}), or here when
# HOST_B is a loopback address, or by the user (--servers-running: the
# commands to run are printed).  Every srd-perf call is bounded by its
# --time-limit and by timeout(1); servers this script starts are stopped,
# by PID, when it exits, however it exits.
#
# Exit status: 0 the table was made; 1 a server never answered, a run
# failed, or an output could not be written; 2 bad usage (unknown option,
# no srd-perf, a provider fi_info does not list here).
set -u

me=efa-check.sh
here=$(cd "$(dirname "$0")" && pwd)

help() {
  cat <<'EOF'
Usage: efa-check.sh [OPTION]... HOST_B
Measure bandwidth and latency against message size from this host to
HOST_B over libfabric's efa provider (real SRD), this project's SRD
emulation over UDP (srd-perf -t udp) and kernel TCP (-t tcp), side by
side, and print one table with the ratios; write DIR/table.txt,
DIR/table.csv, DIR/sweep.csv, the raw srd-perf JSON per transport and
test (DIR/TRANSPORT-TEST.json) and the plot (DIR/sweep.png).

Servers on HOST_B:
  (default)              started over ssh: ${SSH:-ssh} HOST_B ..., and
                         stopped at exit; when HOST_B is a loopback
                         address, started here instead
  --servers-running      the user started them: print the commands to
                         run on HOST_B, then wait for them to answer
  --via-ssh              use ssh even for a loopback HOST_B
  --remote-srd-perf PATH srd-perf on HOST_B [the local one's path]
  --server-wait SECS     how long servers may take to answer [20]
  --server-poll busy|blocking
                         the servers spin (--busy-poll, as fabtests'
                         servers do by default) or sleep in the kernel;
                         busy costs a core per server on HOST_B [busy]

Sweep:
  --provider NAME        the libfabric provider of -t fabric [efa]
  --sizes LIST           message sizes, e.g. 64,4K,1M [powers of two
                         from --min-size to --max-size]
  --min-size SIZE        smallest size [8]
  --max-size SIZE        largest size [8M, as srd-perf -a]
  -n N                   iterations per size and test [as srd-perf -a:
                         bw 256 MiB worth (64..10000), lat 1000]
  -D SECS                run each size this long instead (srd-perf -D)
  -m host|cuda           message memory, passed to srd-perf (both ends)
                         only when given
  -p PORT                base port [18515]: udp PORT..PORT+15 (UDP),
                         tcp PORT (TCP), fabric PORT+1 (TCP, the address
                         exchange)
  --time-limit SECS      bound on each srd-perf call [60]
  --srd-perf PATH        the local srd-perf [next to this script, or
                         build/bin of its source tree, or PATH]

Prediction and output:
  --predict              add srd-sim's prediction for a dumbbell of
                         --link-gbps hosts (scenarios/single-flow.ini with
                         --set): the columns sim_srd and sim_tcp
  --link-gbps G          the hosts' link rate for --predict [100]
  -o, --output DIR       output directory [efa-check-out]
  --no-plot              do not draw the plot
  -q, --quiet            no progress lines
  -h, --help             display this help and exit

Bandwidth is in GB/s (10^9 bytes per second, as fabtests report it);
latency is the p50 round trip of srd-perf's lat test in microseconds.
Exit status: 0 ok; 1 a server never answered or a run failed; 2 bad
usage (an unknown option, no srd-perf, a provider fi_info does not list).
EOF
}

usage_error() {
  echo "$me: $*" >&2
  echo "Try '$me --help' for more information." >&2
  exit 2
}
die() {
  echo "$me: $*" >&2
  exit 1
}
say() { [ "$quiet" = 1 ] || echo "$@" >&2; }

# to_bytes SIZE: 64, 4K, 1M, 2G (binary, as srd-perf reads them).
to_bytes() {
  local v=$1 m=1
  case $v in
    *[kK]) m=1024; v=${v%?} ;;
    *[mM]) m=$((1024 * 1024)); v=${v%?} ;;
    *[gG]) m=$((1024 * 1024 * 1024)); v=${v%?} ;;
  esac
  case $v in '' | *[!0-9]*) return 1 ;; esac
  echo $((v * m))
}
# human BYTES: the size as srd-perf's tables print it (8, 64K, 1M).
human() {
  local b=$1
  if [ $((b % (1024 * 1024))) = 0 ]; then echo "$((b / 1024 / 1024))M"
  elif [ $((b % 1024)) = 0 ]; then echo "$((b / 1024))K"
  else echo "$b"; fi
}
# A duration for timeout(1): srd-perf's SECS with a unit, as seconds.
to_secs() {
  case $1 in
    *ms) awk -v v="${1%ms}" 'BEGIN { print v / 1000 }' ;;
    *us) awk -v v="${1%us}" 'BEGIN { print v / 1e6 }' ;;
    *ns) awk -v v="${1%ns}" 'BEGIN { print v / 1e9 }' ;;
    *s) echo "${1%s}" ;;
    *) echo "$1" ;;
  esac
}
is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

host=""
out=efa-check-out
provider=efa
sizes=""
min_size=8
max_size=8M
iters=""
duration=""
mem=""
port=18515
time_limit=60
server_wait=20
server_poll=busy
servers_running=0
via_ssh=0
perf=${SRD_PERF:-}
rperf=""
predict=0
link_gbps=100
plot=1
quiet=0

need_arg() { [ "$2" -ge 2 ] || usage_error "option '$1' requires an argument"; }
while [ $# -gt 0 ]; do
  case $1 in
    -o | --output) need_arg "$1" $#; out=$2; shift ;;
    --provider) need_arg "$1" $#; provider=$2; shift ;;
    --sizes) need_arg "$1" $#; sizes=$2; shift ;;
    --min-size) need_arg "$1" $#; min_size=$2; shift ;;
    --max-size) need_arg "$1" $#; max_size=$2; shift ;;
    -n) need_arg "$1" $#; iters=$2; shift ;;
    -D) need_arg "$1" $#; duration=$2; shift ;;
    -m) need_arg "$1" $#; mem=$2; shift ;;
    -p) need_arg "$1" $#; port=$2; shift ;;
    --time-limit) need_arg "$1" $#; time_limit=$2; shift ;;
    --server-wait) need_arg "$1" $#; server_wait=$2; shift ;;
    --server-poll) need_arg "$1" $#; server_poll=$2; shift ;;
    --servers-running) servers_running=1 ;;
    --via-ssh) via_ssh=1 ;;
    --srd-perf) need_arg "$1" $#; perf=$2; shift ;;
    --remote-srd-perf) need_arg "$1" $#; rperf=$2; shift ;;
    --predict) predict=1 ;;
    --link-gbps) need_arg "$1" $#; link_gbps=$2; shift ;;
    --no-plot) plot=0 ;;
    -q | --quiet) quiet=1 ;;
    -h | --help) help; exit 0 ;;
    --) shift; break ;;
    -*) usage_error "unrecognized option '$1'" ;;
    *) [ -z "$host" ] || usage_error "one HOST_B at a time ('$host' and '$1')"
       host=$1 ;;
  esac
  shift
done
if [ $# -gt 0 ]; then
  if [ -n "$host" ] || [ $# != 1 ]; then usage_error "one HOST_B at a time"; fi
  host=$1
fi
[ -n "$host" ] || usage_error "no HOST_B given (the second EFA instance)"

# Values.
case $mem in '' | host | cuda) ;; *) usage_error "-m: '$mem' is not host or cuda" ;; esac
case $server_poll in busy | blocking) ;; *) usage_error "--server-poll: '$server_poll' is not busy or blocking" ;; esac
if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65500 ]; then
  usage_error "-p: '$port' is not a port (1..65500)"
fi
[ -z "$iters" ] || [[ $iters =~ ^[1-9][0-9]*$ ]] || usage_error "-n: '$iters' is not a positive count"
[ -z "$iters" ] || [ -z "$duration" ] || usage_error "-n and -D exclude each other"
for v in "$time_limit" "$server_wait" ${duration:+"$duration"}; do
  is_number "$(to_secs "$v")" || usage_error "'$v' is not a duration (SECS, or with ms, us, ns, s)"
done
is_number "$link_gbps" || usage_error "--link-gbps: '$link_gbps' is not a rate in Gbit/s"
if [ -n "$sizes" ]; then
  list=""
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s") || usage_error "--sizes: '$s' is not a size (64, 4K, 1M)"
    [ "$b" -ge 8 ] || usage_error "--sizes: '$s' is below srd-perf's 8 bytes"
    list="$list $b"
  done
  sizes=$list
else
  lo=$(to_bytes "$min_size") || usage_error "--min-size: '$min_size' is not a size"
  hi=$(to_bytes "$max_size") || usage_error "--max-size: '$max_size' is not a size"
  [ "$lo" -ge 8 ] || usage_error "--min-size: srd-perf's messages are at least 8 bytes"
  [ "$hi" -ge "$lo" ] || usage_error "--max-size is below --min-size"
  for ((s = 8; s <= hi; s *= 2)); do [ $s -lt "$lo" ] || sizes="$sizes $s"; done
  [ -n "$sizes" ] || usage_error "no power of two between --min-size and --max-size"
fi
read -ra sz <<< "$sizes"

# The tools.
if [ -z "$perf" ]; then
  for p in "$here/srd-perf" "$here/../build/bin/srd-perf"; do
    [ -f "$p" ] && [ -x "$p" ] && { perf=$p; break; }
  done
  [ -n "$perf" ] || perf=$(command -v srd-perf) ||
    usage_error "no srd-perf: build it (make) or give --srd-perf PATH"
fi
if ! [ -f "$perf" ] || ! [ -x "$perf" ]; then
  usage_error "$perf: no srd-perf there (build it with make, or give --srd-perf PATH)"
fi
perf=$(cd "$(dirname "$perf")" && pwd)/$(basename "$perf")
[ -n "$rperf" ] || rperf=$perf
command -v python3 > /dev/null || usage_error "python3 is needed to make the table"
"$perf" --version 2> /dev/null | grep -q "transports:.* fabric" ||
  usage_error "$perf was built without libfabric (-t fabric): install libfabric-dev and rebuild"
"$perf" --list-providers 2> /dev/null | grep -qxF "provider: $provider" ||
  usage_error "provider '$provider' is not offered here (fi_info does not list it; srd-perf --list-providers shows what is)"
if [ -n "$mem" ]; then
  # An srd-perf older than -m host|cuda took -m as the MTU: say so
  # rather than pass it an MTU of "cuda".
  "$perf" --help | grep -q -- "-m.*cuda" ||
    usage_error "-m $mem: this srd-perf has no -m host|cuda (build one with CUDA support)"
fi
if [ "$predict" = 1 ]; then
  sim=$(dirname "$perf")/srd-sim
  scn=$here/../scenarios/single-flow.ini
  [ -x "$sim" ] || usage_error "--predict: no $sim"
  [ -r "$scn" ] || usage_error "--predict: no $scn"
fi

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d) || die "mktemp failed"

loopback=0
case $host in 127.* | ::1 | localhost | ip6-localhost) loopback=1 ;; esac
case $host in *:*) v6=1 ;; *) v6=0 ;; esac
mode=ssh
[ "$loopback" = 1 ] && [ "$via_ssh" = 0 ] && mode=local
[ "$servers_running" = 1 ] && mode=user

# The three servers' arguments (udp and tcp share a port number: one
# is UDP, the other TCP; fabric's address exchange is TCP on the next).
tl_srv=("--$server_poll")
[ "$server_poll" = busy ] && tl_srv=(--busy-poll)
[ -z "$mem" ] || tl_srv+=(-m "$mem")
bind=()
[ "$mode" = local ] && bind=("$host")
srv_udp=(-s "${bind[@]}" -p "$port" -t udp "${tl_srv[@]}")
srv_tcp=(-s "${bind[@]}" -p "$port" -t tcp "${tl_srv[@]}")
srv_fab=(-s "${bind[@]}" -p $((port + 1)) -t fabric --provider "$provider" "${tl_srv[@]}")
if [ "$v6" = 1 ] && [ "$mode" != local ]; then
  srv_udp=(-s :: "${srv_udp[@]:1}"); srv_tcp=(-s :: "${srv_tcp[@]:1}"); srv_fab=(-s :: "${srv_fab[@]:1}")
fi
# quoted ARGS: the words as a POSIX shell reads them back ('tcp;ofi_rxm').
quoted() {
  local w q=""
  for w in "$@"; do
    if [[ $w =~ ^[A-Za-z0-9_./:=+,@%-]+$ ]]; then q="$q $w"
    else q="$q '${w//\'/\'\\\'\'}'"; fi
  done
  echo "${q# }"
}

pids=()
hold_fd=""
ssh_pid=""
cleanup() {
  local p i
  # ssh: closing its stdin makes the remote shell stop the servers and
  # exit, and ssh with it; it is killed only if it does not.
  if [ -n "$hold_fd" ]; then
    exec {hold_fd}>&-
    for ((i = 0; i < 100; i++)); do kill -0 "$ssh_pid" 2> /dev/null || break; sleep 0.05; done
  fi
  for p in "${pids[@]}"; do
    kill "$p" 2> /dev/null
  done
  for p in "${pids[@]}"; do
    for ((i = 0; i < 40; i++)); do kill -0 "$p" 2> /dev/null || break; sleep 0.05; done
    kill -9 "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  pids=()
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_listening LOG N: wait until N servers say they listen (in LOG);
# 1 after --server-wait, or as soon as one of the processes started exits.
wait_listening() {
  local log=$1 n=$2 end p
  end=$(awk -v w="$(to_secs "$server_wait")" -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + w }')
  while :; do
    [ "$(grep -c 'server listening on' "$log" 2> /dev/null)" -ge "$n" ] && return 0
    for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null || return 1; done
    awk -v e="$end" -v t="$(date +%s.%N)" 'BEGIN { exit !(t > e) }' && return 1
    sleep 0.1
  done
}

case $mode in
  local)
    say "$me: servers on $host, started here (stopped at exit)"
    for s in udp tcp fab; do
      declare -n a=srv_$s
      "$rperf" "${a[@]}" 2>> "$tmp/servers.log" > /dev/null &
      pids+=($!)
      unset -n a
    done
    wait_listening "$tmp/servers.log" 3 || {
      echo "$me: the servers on $host did not answer within $server_wait s, or exited; what they said:" >&2
      sed 's/^/  /' "$tmp/servers.log" >&2
      exit 1
    }
    ;;
  ssh)
    rq=$(quoted "$rperf")
    script="$rq $(quoted "${srv_udp[@]}") & a=\$!; $rq $(quoted "${srv_tcp[@]}") & b=\$!;"
    script="$script $rq $(quoted "${srv_fab[@]}") & c=\$!; read x; kill \$a \$b \$c; wait"
    say "$me: servers on $host, started over ${SSH:-ssh} (stopped at exit)"
    mkfifo "$tmp/hold" || die "mkfifo failed"
    exec {hold_fd}<> "$tmp/hold"
    # shellcheck disable=SC2086 # SSH may carry options: "ssh -i key"
    ${SSH:-ssh} "$host" "sh -c $(quoted "$script")" < "$tmp/hold" {hold_fd}>&- > /dev/null 2>> "$tmp/servers.log" &
    ssh_pid=$!
    pids+=("$ssh_pid")
    wait_listening "$tmp/servers.log" 3 || {
      echo "$me: the servers on $host did not answer within $server_wait s, or ${SSH:-ssh} exited (${SSH:-ssh} $host $rperf ...); what came back:" >&2
      sed 's/^/  /' "$tmp/servers.log" >&2
      exit 1
    }
    ;;
  user)
    echo "$me: run these on $host (each in its own terminal, or with &):"
    echo "  $(quoted "$rperf" "${srv_udp[@]}")"
    echo "  $(quoted "$rperf" "${srv_tcp[@]}")"
    echo "  $(quoted "$rperf" "${srv_fab[@]}")"
    ;;
esac

# client T TEST SIZE [ARGS...]: one srd-perf run, its JSON object on stdout.
client() {
  local t=$1 test=$2 size=$3 p=$port
  shift 3
  local a=(-t "$t")
  [ "$t" = fabric ] && a=(-t fabric --provider "$provider") && p=$((port + 1))
  [ -z "$mem" ] || a+=(-m "$mem")
  timeout -k 5 "$(awk -v t="$(to_secs "$time_limit")" 'BEGIN { print t + 15 }')" \
    "$perf" "$host" -p "$p" "${a[@]}" -T "$test" -s "$size" --json \
    --time-limit "$time_limit" "$@"
}

transports="fabric udp tcp"
if [ "$mode" = user ]; then
  # Wait until each answers one ping-pong.
  end=$(awk -v w="$(to_secs "$server_wait")" -v t="$(date +%s)" 'BEGIN { printf "%d", t + w + 0.999 }')
  for t in $transports; do
    until client "$t" lat 8 -n 1 -w 0 --idle-timeout 2 > /dev/null 2> "$tmp/probe.err"; do
      [ "$(date +%s)" -lt "$end" ] || {
        echo "$me: no $t server answers on $host within $server_wait s (start the servers above):" >&2
        sed 's/^/  /' "$tmp/probe.err" >&2
        exit 1
      }
      sleep 0.5
    done
  done
fi

# The sweep: for each size both tests, the transports one after another
# (interleaved, so that each sees the same moment of the machines).
for t in $transports; do for test in bw lat; do : > "$tmp/$t-$test.jsonl"; done; done
declare -A desc=([fabric]="fabric ($provider)" [udp]="udp (SRD emulation)" [tcp]="tcp (kernel)")
for s in "${sz[@]}"; do
  for test in bw lat; do
    n=()
    if [ -n "$duration" ]; then
      n=(-D "$duration")
    elif [ -n "$iters" ]; then
      n=(-n "$iters")
    elif [ $test = bw ]; then
      k=$(((256 * 1024 * 1024) / s))
      [ $k -ge 64 ] || k=64
      [ $k -le 10000 ] || k=10000
      n=(-n "$k")
    else
      n=(-n 1000)
    fi
    for t in $transports; do
      client "$t" $test "$s" "${n[@]}" > "$tmp/one.json" 2> "$tmp/one.err"
      rc=$?
      if [ $rc != 0 ]; then
        echo "$me: ${desc[$t]} $test at $(human "$s") B to $host failed (srd-perf exit $rc):" >&2
        sed 's/^/  /' "$tmp/one.err" >&2
        [ ! -s "$tmp/servers.log" ] || { echo "  the servers said:" >&2; sed 's/^/    /' "$tmp/servers.log" >&2; }
        exit 1
      fi
      # A row without a time (srd-perf gives 0 s, 0 MB/s when all of -n
      # fits in one window) or a latency is no measurement.
      if ! got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
ok = d["seconds"] > 0 and d["mbps"] > 0 and d["lat_us"]["p50"] > 0
print(("%.3f GB/s" % (d["mbps"] / 1000) if d["test"] == "bw" else "%.2f us" % d["lat_us"]["p50"])
      if ok else "%d iterations in %g s, window %d" % (d["iterations"], d["seconds"], d["window"]))
sys.exit(not ok)' "$tmp/one.json"); then
        echo "$me: ${desc[$t]} $test at $(human "$s") B measured nothing ($got): raise -n above the window, or use -D" >&2
        exit 1
      fi
      cat "$tmp/one.json" >> "$tmp/$t-$test.jsonl"
      say "  $(human "$s") $test $t: $got"
    done
  done
done

# The raw JSON: one array per transport and test, as srd-perf -a --json
# prints one.
for t in $transports; do
  for test in bw lat; do
    python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]")' "$tmp/$t-$test.jsonl" \
      > "$out/$t-$test.json" || die "cannot write $out/$t-$test.json"
  done
done

# The prediction: srd-sim's single-flow dumbbell (one host each side) at
# --link-gbps, a fabric of 8 paths as fast as the hosts, one sweep point
# per size; bandwidth from a window of 8, latency from a window of 1.
if [ "$predict" = 1 ]; then
  say "$me: srd-sim prediction, dumbbell at $link_gbps Gbit/s"
  csv=$(IFS=,; echo "${sz[*]}")
  for w in 8 1; do
    if ! timeout 600 "$sim" run "$scn" --json -q --only srd,tcp \
      --set topology.rate="${link_gbps}G" --set topology.fabric_rate="${link_gbps}G" \
      --set workload.window=$w --set scenario.sweep="workload.message=$csv" \
      > "$out/sim-w$w.json" 2> "$tmp/sim.err"; then
      echo "$me: srd-sim failed:" >&2
      sed 's/^/  /' "$tmp/sim.err" >&2
      exit 1
    fi
  done
fi

# The table, its CSV, and sweep.csv (long: transport,size,GB/s,p50 us)
# for srd-plot.
python3 - "$out" "$provider" "$host" "$predict" "${sz[@]}" > "$out/table.txt" <<'PY' || die "cannot make the table"
import json, os, sys
out, provider, host, predict = sys.argv[1:5]
sizes = [int(s) for s in sys.argv[5:]]
ts = ["fabric", "udp", "tcp"]
data = {}
for t in ts:
    for test in ("bw", "lat"):
        for r in json.load(open(os.path.join(out, "%s-%s.json" % (t, test)))):
            data[(t, test, r["size"])] = r

def human(b):
    if b % (1 << 20) == 0:
        return "%dM" % (b >> 20)
    if b % 1024 == 0:
        return "%dK" % (b >> 10)
    return str(b)

def ratio(a, b):
    return a / b if b else float("nan")

sim = {}
if predict == "1":
    # srd-sim --json: one entry per transport and sweep point, the point
    # named "workload.message=SIZE".  Latency: a ping-pong is two one-way
    # messages, so twice the p50 message latency (post to readable) with
    # one message outstanding.
    for w, what in (("8", "bw"), ("1", "lat")):
        d = json.load(open(os.path.join(out, "sim-w%s.json" % w)))
        for r in d["transports"]:
            s = int(r["point"].split("=")[1])
            if what == "bw":
                sim[(r["name"], "bw", s)] = r["throughput_gbps"] / 8
            else:
                sim[(r["name"], "lat", s)] = 2 * r["msg_latency_us"]["p50"]

rows = []
for s in sizes:
    bw = [data[(t, "bw", s)]["mbps"] / 1000 for t in ts]
    lat = [data[(t, "lat", s)]["lat_us"]["p50"] for t in ts]
    row = [s] + bw + [ratio(bw[1], bw[0]), ratio(bw[2], bw[0])] + lat + \
        [ratio(lat[1], lat[0]), ratio(lat[2], lat[0])]
    if sim:
        row += [sim.get(("srd", "bw", s)), sim.get(("tcp", "bw", s)),
                sim.get(("srd", "lat", s)), sim.get(("tcp", "lat", s))]
    rows.append(row)

head = ["size", "fabric_GBps", "udp_GBps", "tcp_GBps", "udp_over_fabric_bw",
        "tcp_over_fabric_bw", "fabric_lat_p50_us", "udp_lat_p50_us",
        "tcp_lat_p50_us", "udp_over_fabric_lat", "tcp_over_fabric_lat"]
if sim:
    head += ["sim_srd_GBps", "sim_tcp_GBps", "sim_srd_lat_p50_us",
             "sim_tcp_lat_p50_us"]
with open(os.path.join(out, "table.csv"), "w") as f:
    f.write(",".join(head) + "\n")
    for r in rows:
        f.write(",".join(str(r[0]) if i == 0 else ("" if v is None else "%.6g" % v)
                         for i, v in enumerate(r)) + "\n")
with open(os.path.join(out, "sweep.csv"), "w") as f:
    f.write("transport,size,GBps,lat_p50_us\n")
    for t in ts:
        for s in sizes:
            f.write("%s,%d,%.6g,%.6g\n" % (t, s, data[(t, "bw", s)]["mbps"] / 1000,
                                          data[(t, "lat", s)]["lat_us"]["p50"]))
    if sim:
        for t in ("srd", "tcp"):
            for s in sizes:
                b, l = sim.get((t, "bw", s)), sim.get((t, "lat", s))
                if b is not None and l is not None:
                    f.write("sim-%s,%d,%.6g,%.6g\n" % (t, s, b, l))

print("efa-check: %s to %s; fabric = -t fabric --provider %s, udp = -t udp "
      "(this project's SRD emulation), tcp = -t tcp (kernel TCP)" % ("this host", host, provider))
print("bandwidth: srd-perf -T bw, GB/s (10^9 bytes/s); latency: -T lat, "
      "round trip p50, us; ratios: X/fabric")
print()
cols = ["size", "fabric", "udp", "tcp", "udp/fab", "tcp/fab",
        "fabric", "udp", "tcp", "udp/fab", "tcp/fab"]
if sim:
    cols += ["sim-srd", "sim-tcp", "sim-srd", "sim-tcp"]
cells = []
for r in rows:
    c = [human(r[0])]
    c += ["%.3f" % v for v in r[1:4]] + ["%.2fx" % v for v in r[4:6]]
    c += ["%.2f" % v for v in r[6:9]] + ["%.2fx" % v for v in r[9:11]]
    if sim:
        c += ["-" if v is None else ("%.3f" % v if i < 2 else "%.2f" % v)
              for i, v in enumerate(r[11:15])]
    cells.append(c)
wid = [max(len(x) for x in [cols[i]] + [c[i] for c in cells]) for i in range(len(cols))]
groups = [(1, 5, "bandwidth, GB/s"), (6, 10, "latency p50 RTT, us")]
if sim:
    groups += [(11, 12, "sim GB/s"), (13, 14, "sim us")]
line = " " * wid[0]
for a, b, title in groups:
    span = sum(wid[a:b + 1]) + 2 * (b - a)
    line += " | " + title.center(span)
print(line.rstrip())
def fmt(c):
    s = c[0].rjust(wid[0])
    for a, b, _ in groups:
        s += " | " + "  ".join(c[i].rjust(wid[i]) for i in range(a, b + 1))
    return s
print(fmt(cols))
print("-" * len(fmt(cols)))
for c in cells:
    print(fmt(c))
PY
cat "$out/table.txt"

if [ "$plot" = 1 ]; then
  plotter=$(dirname "$perf")/srd-plot
  [ -x "$plotter" ] || plotter=$here/srd-plot
  if ! command -v gnuplot > /dev/null; then
    say "$me: gnuplot is not installed (Debian: gnuplot-nox): no plot"
  elif ! "$plotter" -q "$out"; then
    die "srd-plot failed on $out"
  else
    say "$me: plot in $out/sweep.png"
  fi
fi
say "$me: table, CSV and JSON in $out"
