# benchmark/report.jq - the report of one run's results.jsonl, for
# benchmark/run-matrix.sh:
#
#   jq -rs --arg what WHAT -f benchmark/report.jq results.jsonl
#
# WHAT is one of
#   context  the machine, the load, and one line per driver binary
#            (version, Debian package, sha256, how it was launched)
#   tables   the markdown tables
#   stalls   the per-second evidence of every stalled or lost connection
#   plot     the data file of benchmark/plot.gp: one line per net cell,
#            median, min and max per driver
#   queues   the tables of the queues suite (lines with "suite": "queues",
#            which the others leave out): tapir with 1 and N tap queues,
#            each thread's share of the CPU, each queue's share of the bytes
#   conditions  the tables of the conditions suite ("suite": "conditions"):
#            each network condition's target against what was measured,
#            and tapir with the conditions compiled in and out
#   connections the tables of the connections suite ("suite":
#            "connections"): concurrent TCP connections and UDP flows per
#            driver, with the nofile ceiling they ran under
#
# Each input line is one driver in one cell (bench and its keys: MTU and
# direction, concurrency or mode) in one round, or an {"error": ...}
# line where no number was verified. A figure is shown as
# "median [min–max]" over the rounds. A ratio between two drivers is
# taken within each round first (they ran back to back), then the median
# and range of those ratios are shown: two cells measured minutes apart
# are never compared directly. A net cell whose loopback baseline varied
# by more than 20 % across rounds ((max - min) / median) is marked noisy.

def fixed2: (. * 100 | round) as $n
	| "\($n / 100 | floor).\($n % 100 | tostring | if length == 1 then "0" + . else . end)";
# Numbers: whole ones as they are, from 100 on rounded, below 0.1 three
# decimals (a stalled peer's 0.004 Gbit/s is not "0.00"), else two.
# dec: the same for measured rates and ratios, 1.00 rather than 1.
def dec: if . >= 100 then (round | tostring)
	elif . < 0.1 then (. * 1000 | round / 1000 | tostring) else fixed2 end;
def num: if . == null then "–" elif type != "number" then tostring
	elif . == floor then tostring else dec end;
def pct: . * 100 | if . < 10 then (. * 10 | round / 10 | tostring) else (round | tostring) end;
def dirname: if . == "ns-host" then "ns → host" elif . == "host-ns" then "host → ns"
	elif . == "a-b" then "pod A → pod B" elif . == "b-a" then "pod B → pod A" else "–" end;
def drank: . as $d | if . == "tapir" then 0 elif startswith("tapir-") then 1
	else ((["slirp4netns", "pasta", "pasta-trixie", "builtin", "veth", "loopback"] | index($d)) // 7) + 2 end;
# Table order: the cell's keys, then the driver.
def modeidx: if .mode == "crr" then 1 elif .mode == "rr-fwd" then 2 else 0 end;
def order: [.mtu // 0, -(.link_mtu // 0),
	(.direction == "host-ns" or .direction == "b-a"), .concurrency // 0,
	modeidx, .size // 0, .connections // 0, (.driver | drank), .driver];
def tapirs: . == "tapir" or startswith("tapir-");

def median: sort | length as $n
	| if $n == 0 then null elif $n % 2 == 1 then .[($n - 1) / 2]
	  else (.[$n / 2 - 1] + .[$n / 2]) / 2 end;
# [numbers] -> {n, med, min, max}
def stats: map(select(type == "number")) | {n: length, med: median, min: min, max: max};
# stats -> "median [min–max]", or the one value, or "–"; $unit follows
# the median ("×", " %").
def show(f; $unit): if .n == 0 then "–" elif .n == 1 then (.med | f) + $unit
	else "\(.med | f)\($unit) [\(.min | f)–\(.max | f)]" end;
def show(f): show(f; "");
def spread: if .n < 2 or .med == null or .med == 0 then 0 else (.max - .min) / .med end;
def rounds_text: map(tostring) | if length == 1 then "round \(.[0])"
	else "rounds \(.[:-1] | join(", ")) and \(.[-1])" end;

def verified: select(.verified == true);
def same($x; $keys): . as $y | all($keys[]; $y[.] == $x[.]);

# ratios($all; $keys; $m; $num; $den): per round, driver $num's metric $m
# over driver $den's in the same cell; the list of those ratios.
def ratios($all; $keys; $m; $x; $den):
	[$x[] as $a
	 | ($all | map(verified | select(.driver == $den and .round == $a.round
		and same($a; $keys)))[0]) as $b
	 | select($b != null and $b[$m] > 0) | $a[$m] / $b[$m]];

# cells($bench; $keys): the groups of one table, one per cell and driver,
# in table order: {key (the first line), driver, ok (verified lines),
# failed (error lines)}.
def cells($bench; $keys):
	[.[] | select(.bench == $bench)]
	| group_by(order)
	| map({key: .[0], driver: .[0].driver, ok: map(verified),
		failed: map(select(.error != null))});

# loopback($all; $key): stats of the loopback baseline of a net cell.
def loopback($all; $key):
	[$all[] | verified | select(.driver == "loopback" and .bench == "iperf3-net"
		and .mtu == $key.mtu and .direction == $key.direction) | .gbps] | stats;

def failnotes: group_by(.error) | map("\(.[0].error) in \(map(.round) | rounds_text)");

def stallnotes($ok_n): (map(select(.stalled)) | if length == 0 then [] else
		["stalled in \(length) of \($ok_n) verified rounds (below 10 % of its best second from \(map(.stall.from_s) | min) s on)"] end)
	+ (map(select(.aborted != null)) | if length == 0 then [] else
		["connection lost after \(map(.seconds | round) | min) s in \(map(.round) | rounds_text)"] end);

def notes($all; $c; $noisy):
	($c.ok | length) as $ok_n
	| ([$c.failed | failnotes[]] + [$c.ok | stallnotes($ok_n)[]]
	   + (if $noisy then ["noisy cell: loopback varied \(loopback($all; $c.key) | spread | pct) % across rounds"] else [] end))
	| if length == 0 then "" else join("; ") end;

def value($c; $m; f):
	if ($c.ok | length) == 0 then
		"**\($c.failed | map(.error) | unique | join(", ") | if . == "" then "no result" else . end)**"
	else ($c.ok | map(.[$m]) | stats | show(f))
		+ (if any($c.ok[]; .stalled) then " **stalled**" else "" end) end;

# table($title; $bench; $keys; $m; $unit; $extra): one markdown table.
# $extra: the columns after the ratio, as [header, field] pairs, or
# "share" for the share of the same round's loopback.
def table($title; $bench; $keys; $keyheads; $m; $unit; $extra):
	. as $all
	| cells($bench; $keys) as $cells
	| if ($cells | length) == 0 then empty else
	  "### \($title)", "",
	  "| \($keyheads + ["driver", $unit, "vs tapir"] + ($extra | map(if . == "share" then "share of loopback" else .[0] end)) + ["notes"] | join(" | ")) |",
	  "|\(($keyheads + ["", "", ""] + $extra + [""]) | map("---") | join("|"))|",
	  ($cells[] as $c
	   | ($bench == "iperf3-net" and (loopback($all; $c.key) | spread > 0.2)) as $noisy
	   | "| " + ([($keys[] as $k | $c.key[$k] | if $k == "direction" then dirname else num end),
		$c.driver, value($c; $m; if $m == "gbps" then dec else num end),
		(ratios($all; $keys; $m; $c.ok; "tapir") | stats | show(dec; "×")),
		($extra[] as $e | if $e == "share" then
			($c.ok | map(.loopback_share) | stats | show(pct; " %"))
		 else ($c.ok | map(.[$e[1]]) | if length > 0 and all(.[]; type == "string")
			then unique | join(", ") else stats | show(num) end) end),
		notes($all; $c; $noisy)] | join(" | ")) + " |"),
	  "" end;

# ratio_table($title; $bench; $keys; $keyheads): tapir (and tapir-X.Y)
# ÷ each peer, per cell of $bench.
def ratio_table($title; $bench; $keys; $keyheads):
	. as $all
	| [.[] | select(.bench == $bench) | verified] as $rows
	| ($rows | map(.driver) | unique | map(select(tapirs)) | sort_by(drank, .)) as $num
	| ($rows | map(.driver) | unique | map(select(tapirs | not) | select(. != "loopback" and . != "veth")) | sort_by(drank, .)) as $den
	| if ($num | length) == 0 or ($den | length) == 0 then empty else
	  "### \($title) (median [min–max] of each round's ratio)", "",
	  "| \($keyheads | join(" | ")) | \([$num[] as $n | $den[] as $d | "\($n) ÷ \($d)"] | join(" | ")) |",
	  "|\([$keyheads[] | "---"] | join("|"))|\([$num[] as $n | $den[] | "---"] | join("|"))|",
	  ($rows | map(with_entries(select(.key as $k | $keys | index($k)))) | unique
	   | sort_by(.mtu // 0, -(.link_mtu // 0), .direction == "host-ns" or .direction == "b-a") | .[] as $k
	   | "| \([$keys[] as $key | $k[$key] | if $key == "direction" then dirname else num end] | join(" | ")) | " +
	     ([$num[] as $n | $den[] as $d
	       | [$rows[] | select(.driver == $n and same($k; $keys))] as $x
	       | (ratios($all; $keys; "gbps"; $x; $d) | stats | show(dec; "×"))
	         + (if any($rows[]; .driver == $d and .stalled and same($k; $keys))
		    then " (\($d) stalled)" else "" end)] | join(" | ")) + " |"),
	  "" end;

# goals: tapir on an older kernel's path (tapir-X.Y), host → namespace
# at MTU 1500, must be at least twice slirp4netns.
def goals:
	. as $all
	| [.[] | select(.bench == "iperf3-net" and .mtu == 1500 and .direction == "host-ns") | verified] as $rows
	| [$rows[] | .driver | select(startswith("tapir-"))] | unique | .[] as $n
	| (ratios($all; ["mtu", "direction"]; "gbps"; [$rows[] | select(.driver == $n)]; "slirp4netns")) as $r
	| select($r | length > 0)
	| ($r | stats) as $s
	| "Goal: \($n) (tapir on the path of Linux \($n | ltrimstr("tapir-")), without TCP SO_PEEK_OFF), host → ns at MTU 1500, at least 2× slirp4netns: "
	  + "\(if $s.med >= 2 then "**met**" else "**not met**" end), \($s | show(dec; "×")) "
	  + "(≥ 2× in \($r | map(select(. >= 2)) | length) of \($r | length) rounds).";

# overlay_goal: tapir pod to pod at least 1.5× slirp4netns, in every
# cell and round; the cells that miss it are named.
def overlay_goal:
	. as $all
	| ["mtu", "link_mtu", "direction"] as $keys
	| [.[] | select(.bench == "overlay") | verified] as $rows
	| [$rows[] | select(.driver == "tapir") | {mtu, link_mtu, direction}] | unique
	| map(. as $k | {k: $k, r: ratios($all; $keys; "gbps";
		[$rows[] | select(.driver == "tapir" and same($k; $keys))]; "slirp4netns")})
	| map(select(.r | length > 0))
	| select(length > 0)
	| ([.[].r[]]) as $r
	| map(select(any(.r[]; . < 1.5))) as $miss
	| "Goal: tapir pod to pod at least 1.5× slirp4netns in every cell and round: "
	  + (if ($miss | length) == 0 then "**met**" else "**not met**" end)
	  + " (≥ 1.5× in \($r | map(select(. >= 1.5)) | length) of \($r | length) cell-rounds"
	  + (if ($miss | length) == 0 then "" else "; missed at " + ($miss
		| map("tap MTU \(.k.mtu), link MTU \(.k.link_mtu), \(.k.direction | dirname): \(.r | stats | show(dec; "×"))")
		| join("; ")) end) + ").";

# http_goals: through a port forward at c=32 and c=128, tapir at least
# 1.3× slirp4netns and 1.1× pasta in requests/s, with no failed request,
# and at most 0.7× slirp4netns's forwarder CPU per request; per round.
def http_goals:
	. as $all
	| [.[] | select(.bench == "http") | verified] as $rows
	| [32, 128][] as $c
	| [$rows[] | select(.driver == "tapir" and .concurrency == $c)] as $x
	| select($x | length > 0)
	| (ratios($all; ["concurrency"]; "rps"; $x; "slirp4netns")) as $rs
	| (ratios($all; ["concurrency"]; "rps"; $x; "pasta")) as $rp
	| (ratios($all; ["concurrency"]; "driver_cpu_us_per_req"; $x; "slirp4netns")) as $cpu
	| ([$x[] | .failed] | add) as $failed
	| "Goal at c=\($c): tapir ≥ 1.3× slirp4netns (\($rs | stats | show(dec; "×"))), "
	  + "≥ 1.1× pasta (\($rp | stats | show(dec; "×"))), 0 failed (\($failed)), "
	  + "CPU/request ≤ 0.7× slirp4netns's (\($cpu | stats | show(dec; "×"))): "
	  + (if ($rs | length) > 0 and all($rs[]; . >= 1.3) and
	        (($rp | length) == 0 or all($rp[]; . >= 1.1)) and $failed == 0 and
	        ($cpu | length) > 0 and all($cpu[]; . <= 0.7)
	     then "**met** in every round" else "**not met**" end) + ".";

def tables:
	map(select(.suite != "queues"))
	| (if any(.[]; .bench == "iperf3-net") then
	  (goals, ""),
	  table("iperf3, namespace ↔ host (Gbit/s)"; "iperf3-net"; ["mtu", "direction"];
		["MTU", "direction"]; "gbps"; "Gbit/s";
		["share", ["retransmits", "retransmits"], ["driver CPU s/GB", "driver_cpu_s_per_gb"]]),
	  ratio_table("tapir ÷ peer, namespace ↔ host"; "iperf3-net"; ["mtu", "direction"]; ["MTU", "direction"])
	 else empty end),
	table("iperf3 through a port forward (Gbit/s)"; "iperf3-port"; ["mtu", "direction"];
		["MTU", "direction"]; "gbps"; "Gbit/s";
		[["retransmits", "retransmits"], ["forwarder CPU s/GB", "driver_cpu_s_per_gb"], ["path", "path"]]),
	(http_goals | (., "")),
	table("HTTP through a port forward (nginx, 1 KiB page, wrk)"; "http"; ["concurrency"];
		["concurrency"]; "rps"; "requests/s";
		[["failed", "failed"], ["p50 ms", "p50_ms"], ["p99 ms", "p99_ms"],
		 ["forwarder CPU µs/request", "driver_cpu_us_per_req"],
		 ["syscalls/request", "syscalls_per_tx"], ["frames to ns/request", "frames_to_guest_per_tx"],
		 ["frames from ns/request", "frames_to_host_per_tx"], ["path", "path"]]),
	table("TCP request/response (rr: ns → host; crr: a connection each; rr-fwd: host → ns through the forward)"; "rr";
		["mode", "size", "connections"]; ["mode", "bytes", "connections"]; "tps"; "transactions/s";
		[["p50 µs", "p50_us"], ["p99 µs", "p99_us"], ["driver CPU µs/transaction", "driver_cpu_us_per_transaction"],
		 ["syscalls/transaction", "syscalls_per_tx"], ["frames to ns/transaction", "frames_to_guest_per_tx"],
		 ["frames from ns/transaction", "frames_to_host_per_tx"]]),
	(overlay_goal | (., "")),
	table("VXLAN overlay, pod to pod across two hosts (iperf3, Gbit/s)"; "overlay";
		["mtu", "link_mtu", "direction"]; ["tap MTU", "link MTU", "direction"]; "gbps"; "Gbit/s";
		[["retransmitted % of segments", "retrans_pct"], ["hosts' UdpRcvbufErrors", "host_rcvbuf_errors"],
		 ["drivers' CPU s/GB (both hosts)", "driver_cpu_s_per_gb"]]),
	ratio_table("tapir ÷ peer, VXLAN overlay pod to pod"; "overlay";
		["mtu", "link_mtu", "direction"]; ["tap MTU", "link MTU", "direction"]);

def context:
	[.[] | verified] as $ok
	| ($ok | map(.loadavg_before[0]? // empty) | stats) as $load
	| "Machine: \($ok | map("\(.cpus) CPUs") | unique | join(", ")), Linux \($ok | map(.kernel) | unique | join(", ")); "
	  + "load average (1 min) before each cell \($load | show(fixed2)), over \($ok | length) verified lines in \($ok | map(.round) | unique | length) rounds.",
	"",
	($ok | group_by(.driver | drank, .) | .[] | . as $d | $d[0] as $x
	 | ($d | map([.version, .package, .sha256, .shim_sha256]) | unique) as $ids
	 | "- **\($x.driver)**: "
	   + ($ids | map("\(.[0])\(if .[1] then " (Debian \(.[1]))" else "" end)\(if .[2] then ", sha256 `\(.[2])`" else "" end)") | join("; "))
	   + (if $x.binary then ", `\($x.binary)`" else "" end)
	   + (if $x.kernel_imitated then
		"; Linux \($x.kernel_imitated) imitated: LD_PRELOAD=\($x.shim) (sha256 `\($x.shim_sha256)`) TAPIR_OLDKERNEL=\($x.kernel_imitated), "
		+ "proven by get_info: tcp_peek \($d | map(.tcp_peek | "ipv4 \(.ipv4), ipv6 \(.ipv6)") | unique | join(" / "))"
	      elif $x.tcp_peek then "; get_info: tcp_peek \($d | map(.tcp_peek | "ipv4 \(.ipv4), ipv6 \(.ipv6)") | unique | join(" / "))"
	      else "" end)
	   + "; \($x.launcher | gsub("--mtu[= ][0-9]+"; "--mtu=M") | gsub("mtu [0-9]+ type"; "mtu M type"))");

def stalls:
	[.[] | verified | select(.stalled or .aborted != null)]
	| sort_by(.bench, order, .round)
	| if length == 0 then empty else
	  "### Stalled cells: the evidence, second by second", "",
	  "The receiver's Gbit/s and the sender's retransmits in each one-second interval.", "",
	  (.[] | "- \(.driver), \(.bench), MTU \(.mtu), \(.direction | dirname), round \(.round): "
	    + (if .stalled then "stalled from \(.stall.from_s) s (best second \(.stall.peak_gbps | num) Gbit/s, \(.stall.after_gbps | num) on average after)" else "no stall in the intervals" end)
	    + (if .aborted then "; connection lost after \(.seconds | round) s (\(.aborted))" else "" end)
	    + ".  \n  Gbit/s: \(.intervals.gbps // [] | map(tostring) | join(" "))  \n  retransmits: \(.intervals.retransmits // [] | map(tostring) | join(" "))"),
	  "" end;

def plot:
	[.[] | select(.bench == "iperf3-net" and .suite != "queues")] as $rows
	| ($rows | map(select(.verified)) | map(.driver) | unique | sort_by(drank, .)) as $d
	| if ($d | length) == 0 then empty else
	  ("cell " + ($d | map(., . + "_min", . + "_max") | join(" "))),
	  ($rows | map({mtu, direction}) | unique | sort_by(.mtu, .direction == "host-ns") | .[] as $c
	   | "\"MTU \($c.mtu), \(if $c.direction == "ns-host" then "ns→host" else "host→ns" end)\" "
	     + ([$d[] as $drv | ($rows | map(verified | select(.driver == $drv and same($c; ["mtu", "direction"])) | .gbps) | stats)
		 | if .n == 0 then "- - -" else "\(.med) \(.min) \(.max)" end] | join(" ")))
	  end;

# ---- the queues suite ----

# qbase: the baseline driver of the queues tables, tapir-q1 when it ran
# (else tapir): the "vs q1" column is each round's ratio to it.
def qbase: if any(.[]; .driver == "tapir-q1") then "tapir-q1" else "tapir" end;

# per_index(f): [[numbers] per line] -> the median of each position, over
# the lines that have it.
def per_index: (map(length) | max // 0) as $n
	| [range(0; $n) as $i | map(.[$i] | select(type == "number")) | median];

# threads_text: the threads' shares of the driver's CPU (median per
# thread, in tid order) and the cores the process used in all, e.g.
# "55 / 45 % (1.62 cores)"; "–" without thread data.
def threads_text:
	map(select(.threads != null))
	| if length == 0 then "–" else
	  (map([.threads[].share]) | per_index | map(if . == null then "–" else pct end) | join(" / "))
	  + " % (\(map([.threads[].core_share] | add) | median | dec) cores)" end;

# queue_share_text: each tap queue's share of the bytes (median per queue),
# e.g. "70 / 30 %"; "–" without queue data.
def queue_share_text:
	map(select(.queue_byte_share != null) | .queue_byte_share)
	| if length == 0 then "–" else (per_index | map(if . == null then "–" else pct end) | join(" / ")) + " %" end;

# qtable($title; $bench; $keys; $keyheads; $m; $unit; $cpuhead; $cpu): one
# table of the queues suite, a row per cell and driver.
def qtable($title; $bench; $keys; $keyheads; $m; $unit; $cpuhead; $cpu):
	. as $all
	| qbase as $base
	| [.[] | select(.bench == $bench)]
	| group_by([($keys[] as $k | .[$k] | if $k == "direction" then . == "host-ns" else . // 0 end), (.driver | drank), .driver])
	| map({key: .[0], driver: .[0].driver, ok: map(verified),
		failed: map(select(.error != null))}) as $cells
	| if ($cells | length) == 0 then empty else
	  "### \($title)", "",
	  "| \($keyheads + ["driver", $unit, "vs \($base | ltrimstr("tapir-"))", $cpuhead, "per-thread CPU %", "per-queue byte share", "notes"] | join(" | ")) |",
	  "|\(($keyheads + ["", "", "", "", "", "", ""]) | map("---") | join("|"))|",
	  ($cells[] as $c
	   | "| " + ([($keys[] as $k | $c.key[$k] | if $k == "direction" then dirname else num end),
		$c.driver, value($c; $m; if $m == "gbps" then dec else num end),
		(ratios($all; $keys; $m; $c.ok; $base) | stats | show(dec; "×")),
		($c.ok | map(.[$cpu]) | stats | show(num)),
		($c.ok | threads_text), ($c.ok | queue_share_text),
		notes($all; $c; false)] | join(" | ")) + " |"),
	  "" end;

def queues:
	map(select(.suite == "queues"))
	| (qbase as $b | "Baseline: \($b); the other drivers are tapir with more tap queues (TAPIR_QUEUES=N, proven by get_stats and get_info). "
	  + "Per-thread CPU %: each thread's share of the driver's CPU, in thread-id order, and the cores the process used; "
	  + "per-queue byte share: each tap queue's share of the frames' bytes, both directions.", ""),
	qtable("tap queues: iperf3, namespace ↔ host (Gbit/s)"; "iperf3-net";
		["mtu", "direction", "streams"]; ["MTU", "direction", "-P"]; "gbps"; "Gbit/s";
		"driver CPU s/GB"; "driver_cpu_s_per_gb"),
	qtable("tap queues: HTTP through a port forward (nginx, 1 KiB page, wrk)"; "http";
		["concurrency"]; ["concurrency"]; "rps"; "requests/s";
		"forwarder CPU µs/request"; "driver_cpu_us_per_req");

# ---- the conditions suite ----

# cond_table($kind; $title; $heads; $cols): one table of the conditions
# suite's $kind lines, a row per target (and direction): $cols are
# [field, format] pairs, each shown as median [min–max] over the rounds.
def cond_table($kind; $title; $heads; $cols):
	[.[] | select(.bench == "conditions" and .kind == $kind) | verified]
	| group_by([.target, .direction // ""])
	| sort_by(.[0] | [.target_ms // .target_pct // .target_mbps // 0, .direction // ""])
	| if length == 0 then empty else
	  "#### \($title)", "",
	  "| \((["target"] + $heads) | join(" | ")) |",
	  "|\((["target"] + $heads) | map("---") | join("|"))|",
	  (.[] | . as $g
	   | "| " + ([$g[0].target + (if $g[0].direction then ", \($g[0].direction | dirname)" else "" end)]
		+ [$cols[] as $c | $g | map(.[$c[0]]) | stats
		   | if $c[1] == "pct" then show(num; " %") elif $c[1] == "x" then show(dec; "×") else show(num) end]
		| join(" | ")) + " |"),
	  "" end;

def conditions:
	map(select(.suite == "conditions"))
	| ([.[] | select(.bench == "conditions") | verified | .dropped_overflow] | max // 0) as $over
	| "Every target was set over rootlesskit's API socket (set_conditions) and measured through tapir, "
	  + "as benchmark/benchmark-conditions.sh describes; frames dropped for want of memory in all rounds: \($over).", "",
	cond_table("delay"; "Delay each way: UDP round trips, 200 probes (ms)";
		["target p50 (2 × delay + baseline)", "p50", "p99", "p50 − target"];
		[["target_ms", "n"], ["p50_ms", "n"], ["p99_ms", "n"], ["error_ms", "n"]]),
	cond_table("loss"; "Loss on the way to the host: 10 000 datagrams";
		["target", "measured"]; [["target_pct", "pct"], ["measured_pct", "pct"]]),
	cond_table("rate"; "Rate: iperf3, the first second omitted (Mbit/s)";
		["target", "measured", "÷ target"]; [["target_mbps", "n"], ["mbps", "n"], ["ratio", "x"]]),
	cond_table("download"; "A 16 MB download under loss each way (iperf3 -R -n)";
		["bytes", "seconds", "Mbit/s"]; [["bytes", "n"], ["seconds", "n"], ["mbps", "n"]]),
	cond_table("upload"; "A 16 MB upload under loss each way (iperf3 -n; bytes the host had when the client had written them all)";
		["bytes", "seconds", "Mbit/s"]; [["bytes", "n"], ["seconds", "n"], ["mbps", "n"]]),
	cond_table("upload_whole"; "A 16 MB upload under loss each way, until the host had the last byte (socat)";
		["bytes", "seconds", "Mbit/s"]; [["bytes", "n"], ["seconds", "n"], ["mbps", "n"]]),
	cond_table("neutral"; "A neutral rule (delay=0) against none: iperf3 download, in the order none, neutral, neutral, none, none, neutral; medians";
		["no rule Gbit/s", "delay=0 Gbit/s", "÷ no rule"]; [["gbps_none", "n"], ["gbps_neutral", "n"], ["ratio", "x"]]),
	([.[] | select(.bench == "iperf3-net")]
	 | table("Conditions compiled in (tapir) and out (tapir-nocond, make nocond), none set: iperf3 (Gbit/s)"; "iperf3-net";
		["mtu", "direction"]; ["MTU", "direction"]; "gbps"; "Gbit/s";
		[["driver CPU s/GB", "driver_cpu_s_per_gb"]]));

# ---- the connections suite ----

def kb_mb: . / 1024 | . * 10 | round / 10;
def rounds_of(f): map(select(f) | .round) | unique;

# conn_notes($c): why a cell got less than all: failed or refused rounds,
# the bounds it ran into and the errors its connects or flows met.
def conn_notes($c):
	($c.ok | length) as $ok_n
	| [$c.failed | failnotes[]]
	+ ($c.ok | rounds_of(.open_deadline_hit == true or .deadline_hit == true)
		| if length == 0 then [] else ["stopped at the \($c.ok[0].open_limit_s) s bound in \(rounds_text)"] end)
	+ ($c.ok | rounds_of(.roundtrip_deadline_hit == true)
		| if length == 0 then [] else ["round trips stopped at the \($c.ok[0].roundtrip_limit_s) s bound in \(rounds_text)"] end)
	+ ($c.ok | rounds_of(.client_fd_limit == true)
		| if length == 0 then [] else ["the client ran out of fds in \(rounds_text)"] end)
	+ ($c.ok | map(.lost // 0) | max // 0 | if . > 0 then ["up to \(.) lost (no echo within 1 s)"] else [] end)
	+ ($c.ok | map((.connect_errors // {}) + (.errors // {}) | to_entries[])
		| group_by(.key) | map("\(.[0].key) up to \(map(.value) | max)")
		| if length == 0 then [] else ["errors: " + join(", ")] end)
	| join("; ");

# conn_got($c; $f): how many of N a cell got, "all" when every round got
# them all.
def conn_got($c; $f):
	if ($c.ok | length) == 0 then
		"**\($c.failed | map(.error) | unique | join(", ") | if . == "" then "no result" else . end)**"
	elif all($c.ok[]; .[$f] == .connections) then "all"
	else ($c.ok | map(.[$f]) | stats | show(num)) + " of \($c.key.connections)" end;

def conn_table($proto; $title; $heads; $got; $rate; $cols):
	. as $all
	| [.[] | select(.proto == $proto)] as $rows
	| ($rows | cells("connections"; ["connections"])) as $cells
	| if ($cells | length) == 0 then empty else
	  "### \($title)", "",
	  "| \($heads | join(" | ")) |",
	  "|\($heads | map("---") | join("|"))|",
	  ($cells[] as $c
	   | "| " + ([($c.key.connections | num), $c.driver, conn_got($c; $got),
		($c.ok | map(.[$rate]) | stats | show(num)),
		(ratios($rows; ["proto", "connections"]; $rate; $c.ok; "tapir") | stats | show(dec; "×")),
		($cols[] as $f | $c.ok | map(.[$f[0]] | if . != null and $f[1] == "mb" then kb_mb else . end)
		 | stats | show(num)),
		conn_notes($c)] | join(" | ")) + " |"),
	  "" end;

def connections:
	map(select(.suite == "connections"))
	| [.[] | verified] as $ok
	| ($ok | map(.nofile) | unique | map(tostring) | join(", ")) as $nofile
	| ($ok | map(select(.proto == "tcp")) | first) as $t
	| ($ok | map(select(.proto == "udp")) | first) as $u
	| "Clients in the namespace (benchmark/conns.c), an echo server on the host's 127.0.0.1 "
	  + "(tests/tools/manyconn, tests/tools/udpecho), through each driver (benchmark/benchmark-connections.sh). "
	  + "nofile ceiling: **\($nofile)**, the test user's hard limit; the driver, the server and the client run with their soft "
	  + "limit raised to it, so a cell needs N fds in the client and one or more per connection in the driver.",
	"",
	(if $t then "TCP: at most \($t.window) connects pending at once, the open phase bounded at \($t.open_limit_s) s; "
	  + "then one \($t.size)-byte round trip on each open connection, \($t.in_flight) in flight, bounded at \($t.roundtrip_limit_s) s. "
	  + "opens/s: connections opened ÷ the time until the last one settled (or the bound). "
	  + "Driver: peak RSS (VmHWM) and fds while every connection is held, per connection above the idle driver's; "
	  + "CPU (utime + stime) during the open phase per connection opened.", "" else empty end),
	(if $u then "UDP: one socket a flow, one \($u.size)-byte datagram each way, \($u.in_flight) in flight, "
	  + "a datagram not back within \($u.timeout_ms) ms lost; bounded at \($u.open_limit_s) s. "
	  + "Driver CPU per flow answered.", "" else empty end),
	conn_table("tcp"; "Concurrent TCP connections, namespace → host";
		["connections", "driver", "opened", "opens/s", "vs tapir", "round trip p50 ms", "p99 ms",
		 "driver peak RSS MB", "KB/connection", "driver fds", "fds/connection", "driver CPU µs/open", "notes"];
		"opened"; "opens_per_s";
		[["rtt_p50_ms"], ["rtt_p99_ms"], ["driver_rss_kb", "mb"], ["driver_kb_per_conn"],
		 ["driver_fds"], ["driver_fds_per_conn"], ["driver_cpu_us_per_open"]]),
	conn_table("udp"; "UDP flows, namespace → host";
		["flows", "driver", "answered", "flows/s", "vs tapir", "round trip p50 ms", "p99 ms",
		 "driver peak RSS MB", "KB/flow", "driver fds", "fds/flow", "driver CPU µs/flow", "notes"];
		"answered"; "flows_per_s";
		[["rtt_p50_ms"], ["rtt_p99_ms"], ["driver_rss_kb", "mb"], ["driver_kb_per_conn"],
		 ["driver_fds"], ["driver_fds_per_conn"], ["driver_cpu_us_per_flow"]]);

if $what == "tables" then tables
elif $what == "conditions" then conditions
elif $what == "connections" then connections
elif $what == "queues" then queues
elif $what == "context" then context
elif $what == "stalls" then stalls
elif $what == "plot" then plot
else error("report.jq: unknown --arg what \($what)") end
