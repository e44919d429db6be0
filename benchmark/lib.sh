# shellcheck shell=bash
# benchmark/lib.sh - shared code of the benchmark scripts: entering the
# sandbox, starting a driver, the identity proof and the JSON output.
#
# A benchmark script sources this file and calls `bench_enter "$0" "$@"`
# first. Outside the sandbox that re-executes the script inside
# hack/sandbox.sh (as root, after hack/test-user.sh); inside, it loads
# tests/scenario.bash (as_user, bg_start, wait_for, ...) and stages the
# binaries where the unprivileged test user can run them.
#
# Every number a script prints must be attributable: it runs the workload,
# then bench_prove_* shows that the traffic crossed the named driver, and
# only then does bench_emit print the JSON line. A failed proof ends the
# script with status 3 (bench_refuse) and no number at all.
#
# Drivers:
#   tapir        rootlesskit --net=slirp4netns --slirp4netns-binary=$TAPIR_BIN
#   tapir-X.Y    the same tapir binary on the path it takes on Linux X.Y,
#                a kernel without TCP SO_PEEK_OFF (X.Y older than 6.10,
#                e.g. tapir-6.1 for Debian 12): rootlesskit and so tapir run
#                with LD_PRELOAD=oldkernel.so TAPIR_OLDKERNEL=X.Y
#                (tests/tools/oldkernel.c), and the proof checks that tapir's
#                get_info reports tcp_peek "discard" for IPv4 and IPv6
#   tapir-sandbox tapir with rootlesskit's --slirp4netns-sandbox=true and
#                --slirp4netns-seccomp=true (dockerd-rootless.sh's "auto"
#                does the same): sandboxed and filtered, where rootlesskit's
#                own default (false) runs tapir and slirp4netns without;
#                the proof checks the tap holder's /proc/PID/status
#                (Seccomp 2). Every tapir and slirp4netns line records that
#                status as "isolation".
#   tapir-qN     tapir with N tap queues (1..16): rootlesskit, and so tapir,
#                run with TAPIR_QUEUES=N (rootlesskit passes only
#                slirp4netns's flags, and TAPIR_QUEUES is the default of
#                --queues); tapir-q1 is the explicit one-queue baseline,
#                whatever TAPIR_QUEUES the caller has. The proof checks
#                that get_stats lists N queues and get_info's tap has N;
#                with BENCH_QUEUE_THREADS=1, also that the tap holder has at
#                least N threads (one datapath thread per queue)
#   tapir-nocond tapir built without network conditions (`make nocond`,
#                TAPIR_NOCOND_BIN, default build-nocond/tapir, built when
#                missing), started as tapir: what having them costs when
#                none is set. The proof checks that get_info's features
#                lack "conditions"
#   slirp4netns  rootlesskit --net=slirp4netns --slirp4netns-binary=$SLIRP4NETNS_BIN
#   pasta        rootlesskit --net=pasta (rootlesskit >= 2), else pasta itself
#   pasta-trixie Debian 13's pasta (2025), which hack/trixie-peers.sh builds
#                into /var/cache/tapir/trixie (PASTA_TRIXIE_BIN), started
#                exactly as pasta is; it must not be byte-identical to the
#                pasta of PASTA_BIN
#   tapir-pasta  tapir run as pasta (a link named pasta to TAPIR_BIN), started
#                exactly as pasta is; the proof checks that the tap holder
#                runs the tapir binary
#   veth         a veth pair made by root: the rootful kernel baseline
#   loopback     no namespace and no driver: iperf3 over the sandbox host's
#                own loopback, the machine's ceiling (iperf3-net only)
#   builtin      rootlesskit's builtin port driver (forwarding benchmarks only;
#                the network driver is slirp4netns, which it bypasses)
# Every namespace looks the same from inside: 10.0.2.100/24, gateway
# 10.0.2.2. User-mode drivers map the gateway to the sandbox host's
# 127.0.0.1, where the servers listen (bound to 127.0.0.1 only, so nothing
# else could reach them); for veth, 10.0.2.2 is the host end of the pair.
#
# Environment:
#   BENCH_TIME        seconds per measurement (default 30)
#   TAPIR_BIN         tapir (default: ./tapir of the build tree, then PATH)
#   SLIRP4NETNS_BIN   slirp4netns (default: PATH)
#   PASTA_BIN         pasta (default: PATH)
#   PASTA_TRIXIE_BIN  pasta-trixie (default: /var/cache/tapir/trixie/passt/pasta)
#   ROOTLESSKIT_BIN   rootlesskit (default: PATH)
#   BENCH_TOOLS_DIR   rr, conns, tunns, oldkernel.so, and the echo servers
#                     manyconn and udpecho (default: $TAPIR_BIN_DIR
#                     when it has them, else $TAPIR_BUILD/benchmark and
#                     $TAPIR_BUILD/tools, or build/..., built with
#                     `make bench-tools` when missing)
#   BENCH_OLDKERNEL_SO the LD_PRELOAD shim of tapir-X.Y (default: oldkernel.so
#                     from BENCH_TOOLS_DIR as above)
#   BENCH_ROUND       the round this run belongs to, copied into every JSON
#                     line (default 1; run-matrix.sh sets it)
#   BENCH_QUEUE_THREADS=1
#                     tapir-qN: refuse unless the tap holder runs at least
#                     N threads (default 0: the thread count is recorded
#                     and shown in the proof, not required, since a tapir
#                     that serves every queue from one thread is valid)
#   BENCH_SKIP_STATIC_IDENTITY=1
#                     tests only: skip the --version and byte-identity
#                     checks, to show that the runtime proof alone refuses
#                     a binary that is not the named driver

# The BENCH_* and OPT_* globals are the interface to the scripts, and the
# snapshot variables are set through printf -v:
# shellcheck disable=SC2034,SC2154
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=$(basename "$0")
: "${BENCH_TIME:=30}"
export BENCH_TIME

# The namespace's addresses, the same for every driver.
readonly BENCH_GW=10.0.2.2 BENCH_GUEST=10.0.2.100

bench_log() { # MESSAGE...
	echo "$BENCH_NAME: $*" >&2
}

bench_die() { # MESSAGE...: set-up or usage failure, no number
	echo "$BENCH_NAME: error: $*" >&2
	exit 1
}

bench_refuse() { # MESSAGE...: the identity proof failed, no number
	local log
	echo "$BENCH_NAME: REFUSED: $*" >&2
	echo "$BENCH_NAME: the traffic cannot be attributed to '${BENCH_DRIVER:-?}'; no number is printed" >&2
	# The exit trap shows the daemons' logs; the workload's own would
	# show the unattributed numbers after all.
	for log in "${SCEN_DIR:-/nonexistent}"/*.log; do
		[[ -f "$log" && "$log" != */driver.log ]] && : >"$log"
	done
	exit 3
}

# ---- entering the sandbox -------------------------------------------

bench_enter() { # SCRIPT ARGS...
	local script=$1
	shift
	if [[ "${SANDBOX:-}" != 1 ]]; then
		((EUID == 0)) || bench_die "must run as root: it builds a sandboxed host (hack/sandbox.sh) and runs the drivers as the test user"
		"$BENCH_ROOT/hack/test-user.sh" >&2
		exec "$BENCH_ROOT/hack/sandbox.sh" "$(readlink -f "$script")" "$@"
	fi
	# shellcheck source=tests/scenario.bash
	source "$BENCH_ROOT/tests/scenario.bash"
	# The machine's load before this cell starts anything (1, 5, 15 min).
	BENCH_LOADAVG=$(awk '{ printf "[%s,%s,%s]", $1, $2, $3 }' /proc/loadavg)
	bench_stage_tools
}

# bench_accessible PATH: prints PATH if the test user can execute it,
# else a copy in $SCEN_DIR (a CI checkout may sit where that user cannot
# traverse). The copy keeps the file name, which pasta's mode depends on.
# Readable too: the dynamic loader opens an LD_PRELOAD shim.
bench_accessible() {
	local path=$1 dir="$SCEN_DIR/bin"
	if as_user test -x "$path" -a -r "$path"; then
		echo "$path"
		return
	fi
	mkdir -p "$dir"
	chmod 0755 "$dir"
	cp "$path" "$dir/"
	chmod 0755 "$dir/${path##*/}"
	echo "$dir/${path##*/}"
}

# bench_tool NAME: prints the path of a helper built by `make bench-tools`
# (rr, conns, tunns, oldkernel.so, manyconn, ...), building them when none
# is found.
bench_tool() {
	local name=$1 d build="$BENCH_ROOT/${TAPIR_BUILD:-build}" try
	local -a dirs=("${BENCH_TOOLS_DIR:-}" "${TAPIR_BIN_DIR:-}"
		"$build/benchmark" "$build/tools")
	for try in 1 2; do
		for d in "${dirs[@]}"; do
			if [[ -n "$d" && -f "$d/$name" && -x "$d/$name" ]]; then
				echo "$d/$name"
				return
			fi
		done
		((try == 1)) || break
		bench_log "building the benchmark tools (make bench-tools) into $build"
		make -s -C "$BENCH_ROOT" BUILD="${TAPIR_BUILD:-build}" bench-tools >&2 ||
			bench_die "could not build the benchmark tools; run 'make bench-tools'"
	done
	bench_die "no $name after 'make bench-tools'"
}

bench_stage_tools() {
	local rr
	rr=$(bench_tool rr)
	# shellcheck disable=SC2034 # used by benchmark-rr.sh
	BENCH_RR=$(bench_accessible "$rr")
	BENCH_TUNNS=$(bench_tool tunns) # runs as root
}

# ---- binaries and their static identity -----------------------------

bench_driver_bin() { # DRIVER: prints the configured binary (may be empty)
	case $1 in
	tapir | tapir-pasta)
		if [[ -n "${TAPIR_BIN:-}" ]]; then
			echo "$TAPIR_BIN"
		elif [[ -x "$BENCH_ROOT/tapir" ]]; then
			echo "$BENCH_ROOT/tapir"
		else
			command -v tapir || true
		fi
		;;
	tapir-nocond) echo "${TAPIR_NOCOND_BIN:-$BENCH_ROOT/build-nocond/tapir}" ;;
	slirp4netns) echo "${SLIRP4NETNS_BIN:-$(command -v slirp4netns || true)}" ;;
	pasta) echo "${PASTA_BIN:-$(command -v pasta || true)}" ;;
	pasta-trixie) echo "${PASTA_TRIXIE_BIN:-/var/cache/tapir/trixie/passt/pasta}" ;;
	builtin | rootlesskit) echo "${ROOTLESSKIT_BIN:-$(command -v rootlesskit || true)}" ;;
	veth) ;;
	esac
}

# The --version banner each driver prints first; a binary passed as
# TAPIR_BIN that answers like slirp4netns is refused before it runs.
bench_banner_re() { # DRIVER
	case $1 in
	tapir | tapir-pasta) echo '^tapir ' ;;
	slirp4netns) echo '^slirp4netns version ' ;;
	pasta) echo '^pasta ' ;;
	builtin | rootlesskit) echo '^rootlesskit version ' ;;
	esac
}

# The name /proc/PID/exe must resolve to (its basename; Debian's pasta is
# a symlink to passt, and the kernel shows the target).
bench_exe_name_re() { # DRIVER
	case $1 in
	tapir | tapir-pasta) echo '^tapir' ;;
	slirp4netns) echo '^slirp4netns' ;;
	pasta) echo '^pas(ta|st)' ;;
	builtin | rootlesskit) echo '^rootlesskit' ;;
	esac
}

# bench_imitated DRIVER: prints X.Y for tapir-X.Y (tapir on the path it
# takes on Linux X.Y), nothing for any other driver.
bench_imitated() {
	[[ "$1" =~ ^tapir-([0-9]+)\.([0-9]+)$ ]] || return 0
	echo "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
}

# bench_queues_of DRIVER: prints N for tapir-qN (tapir with N tap
# queues), nothing for any other driver.
bench_queues_of() {
	[[ "$1" =~ ^tapir-q([1-9][0-9]?)$ ]] || return 0
	echo "${BASH_REMATCH[1]}"
}

# bench_check_driver DRIVER CHOICES...: the usage check of a script's
# DRIVER. tapir-X.Y is accepted where tapir is, for kernels without TCP
# SO_PEEK_OFF (older than 6.10): that is the path it exists to measure;
# so are tapir-sandbox and tapir-qN; and pasta-trixie where pasta is.
bench_check_driver() {
	local driver=$1 v ma mi
	shift
	if [[ "$driver" == tapir-pasta || "$driver" == pasta-trixie ]]; then
		# tapir run as pasta, another pasta: measured wherever pasta is.
		driver=pasta
	elif [[ "$driver" == tapir-sandbox || "$driver" == tapir-nocond ]]; then
		driver=tapir
	elif [[ "$driver" =~ ^tapir-q ]]; then
		v=$(bench_queues_of "$driver")
		if ! [[ "$v" =~ ^[0-9]+$ ]] || ((v > 16)); then
			bench_die "unknown driver '$driver' (tapir-qN: N tap queues, 1..16)"
		fi
		driver=tapir
	elif [[ "$driver" == tapir-* ]]; then
		v=$(bench_imitated "$driver")
		[[ -n "$v" ]] ||
			bench_die "unknown driver '$driver' (tapir-X.Y names a kernel, e.g. tapir-6.1)"
		IFS=. read -r ma mi <<<"$v"
		((ma < 6 || (ma == 6 && mi < 10))) ||
			bench_die "$driver: Linux $v has TCP SO_PEEK_OFF; tapir-X.Y is the path of kernels older than 6.10"
		driver=tapir
	fi
	bench_check_choice driver "$driver" "$@"
}

# bench_package FILE: prints "PACKAGE VERSION" of the Debian package that
# installed FILE, or nothing (a build tree). pasta's own banner says
# "unknown version" in Debian 12; the package says which pasta it is.
bench_package() {
	local pkg
	pkg=$(dpkg-query -S "$1" 2>/dev/null | head -n1 | cut -d: -f1) || return 0
	[[ -n "$pkg" && "$pkg" != *" "* ]] || return 0
	dpkg-query -W -f='${Package} ${Version}' "$pkg" 2>/dev/null || true
}

# bench_version BIN: the first line of `BIN --version`. Some pastas
# (trixie's) print it through stdio and leave with _exit(), so a pipe
# gets nothing; then it is asked again on a terminal (script(1)).
bench_version() {
	local v
	v=$(timeout 5 "$1" --version 2>&1 | head -n1 || true)
	if [[ -z "$v" ]]; then
		v=$(timeout 5 script -qec "$(printf '%q' "$1") --version" /dev/null \
			</dev/null 2>&1 | head -n1 | tr -d '\r' || true)
	fi
	echo "$v"
}

# bench_resolve DRIVER: sets BENCH_DRIVER, BENCH_KIND (tapir for
# tapir-X.Y and tapir-qN, pasta for pasta-trixie, else the driver),
# BENCH_IMITATED (X.Y or empty), BENCH_QUEUES (N of tapir-qN, or empty),
# BENCH_BIN_ORIG (as configured, resolved), BENCH_BIN (what is run),
# BENCH_VERSION, BENCH_PACKAGE and BENCH_SHA256, after the static checks:
# the banner names the driver, and the binary is not byte-identical to
# another driver's. For tapir-X.Y it also stages the shim (BENCH_SHIM).
bench_resolve() {
	local driver=$1 bin other obin re kind
	BENCH_DRIVER=$driver BENCH_IMITATED=$(bench_imitated "$driver")
	kind=$driver BENCH_ISOLATE=""
	[[ -n "$BENCH_IMITATED" ]] && kind=tapir
	[[ "$driver" == tapir-sandbox ]] && kind=tapir BENCH_ISOLATE=1
	[[ "$driver" == tapir-nocond ]] && kind=tapir
	[[ "$driver" == pasta-trixie ]] && kind=pasta
	BENCH_QUEUES=$(bench_queues_of "$driver")
	[[ -n "$BENCH_QUEUES" ]] && kind=tapir
	BENCH_KIND=$kind BENCH_PACKAGE="" BENCH_SHIM="" BENCH_SHIM_SHA256=""
	if [[ "$driver" == veth || "$driver" == loopback ]]; then
		BENCH_BIN_ORIG="" BENCH_BIN="" BENCH_SHA256=""
		BENCH_VERSION="linux $(uname -r) $driver"
		return
	fi
	bin=$(bench_driver_bin "$kind")
	[[ "$driver" == pasta-trixie ]] && bin=$(bench_driver_bin pasta-trixie)
	if [[ "$driver" == tapir-nocond ]]; then
		bin=$(bench_driver_bin tapir-nocond)
		if [[ ! -x "$bin" && -z "${TAPIR_NOCOND_BIN:-}" ]]; then
			bench_log "building tapir without network conditions (make nocond)"
			make -s -C "$BENCH_ROOT" nocond >&2 || bench_die "make nocond failed"
		fi
	fi
	[[ -n "$bin" ]] || bench_die "no $kind binary (set the variable or install it)"
	[[ -f "$bin" && -x "$bin" ]] || bench_die "$kind binary '$bin' is not an executable file"
	BENCH_BIN_ORIG=$(readlink -f "$bin")
	BENCH_SHA256=$(sha256sum <"$BENCH_BIN_ORIG" | cut -d' ' -f1)
	BENCH_VERSION=$(bench_version "$bin")
	BENCH_PACKAGE=$(bench_package "$BENCH_BIN_ORIG")
	if [[ "${BENCH_SKIP_STATIC_IDENTITY:-}" != 1 ]]; then
		re=$(bench_banner_re "$kind")
		[[ "$BENCH_VERSION" =~ $re ]] ||
			bench_refuse "'$bin --version' says '$BENCH_VERSION': that is not $kind"
		for other in tapir slirp4netns pasta; do
			[[ "$other" == "$kind" && "$driver" != tapir-nocond &&
				"$driver" != pasta-trixie ]] && continue
			# tapir-pasta is the tapir binary, by another name.
			[[ "$kind" == tapir-pasta && "$other" == tapir ]] && continue
			obin=$(bench_driver_bin "$other")
			[[ -n "$obin" && -f "$obin" ]] || continue
			if cmp -s "$BENCH_BIN_ORIG" "$obin"; then
				bench_refuse "$kind binary '$bin' is byte-identical to the $other binary '$obin'"
			fi
		done
	else
		bench_log "BENCH_SKIP_STATIC_IDENTITY=1: static checks skipped (tests only)"
	fi
	# pasta must keep its name: passt decides its mode from argv[0].
	BENCH_BIN=$(bench_accessible "$bin")
	# tapir-pasta: tapir by the name its callers run, through a link.
	if [[ "$kind" == tapir-pasta ]]; then
		mkdir -p "$SCEN_DIR/pasta-link"
		chmod 0755 "$SCEN_DIR/pasta-link"
		ln -sfn "$BENCH_BIN" "$SCEN_DIR/pasta-link/pasta"
		BENCH_BIN=$SCEN_DIR/pasta-link/pasta
	fi
	if [[ -n "$BENCH_IMITATED" ]]; then
		local shim=${BENCH_OLDKERNEL_SO:-}
		[[ -n "$shim" ]] || shim=$(bench_tool oldkernel.so)
		[[ -f "$shim" ]] || bench_die "no old-kernel shim at '$shim'"
		BENCH_SHIM_SHA256=$(sha256sum <"$shim" | cut -d' ' -f1)
		BENCH_SHIM=$(bench_accessible "$(readlink -f "$shim")")
	fi
}

# ---- the namespace and the driver -----------------------------------

bench_rootlesskit_has_pasta() {
	"$(bench_driver_bin rootlesskit)" --help 2>&1 | grep -q -- '--pasta-binary'
}

# bench_start DRIVER MTU [PORT_DRIVER]: starts the namespace with its
# driver, as the test user (veth: as root). PORT_DRIVER is the rootlesskit
# port driver (default slirp4netns, which gives tapir its API socket) or
# "pasta:HOSTPORT:GUESTPORT" for pasta's own TCP forward
# ("pasta-udp:..." for UDP; see bench_start_pasta). BENCH_SIDE and
# BENCH_LAUNCH_NETNS_PID start a second one (bench_launch_user); its
# state dir is then rk$BENCH_SIDE. Sets BENCH_NS_PID
# (a process in the namespace), BENCH_LAUNCHER_PID, BENCH_LAUNCHER (text),
# BENCH_IFNAME, BENCH_SRV_BIND (where host-side servers listen),
# BENCH_STATE_DIR and BENCH_API_SOCK (tapir and slirp4netns only), and
# BENCH_TARGET, where workloads in the namespace connect (10.0.2.2).
# loopback starts nothing: its "namespace" is the sandbox host itself.
bench_start() {
	local driver=$1 mtu=$2 pd=${3:-slirp4netns} life side=${BENCH_SIDE:-}
	BENCH_TARGET=$BENCH_GW
	if [[ "$driver" == loopback ]]; then
		BENCH_IFNAME=lo BENCH_SRV_BIND=127.0.0.1 BENCH_TARGET=127.0.0.1
		BENCH_NS_PID=$$ BENCH_LAUNCHER_PID="" BENCH_API_SOCK=""
		BENCH_LAUNCHER="iperf3 client and server on the sandbox host's loopback (lo, MTU $(cat /sys/class/net/lo/mtu)): no namespace, no driver"
		bench_log "loopback: $BENCH_LAUNCHER"
		return
	fi
	# A pasta forward spec means "the default" for the other drivers.
	[[ "$pd" == pasta*:* && "$BENCH_KIND" != pasta &&
		"$BENCH_KIND" != tapir-pasta ]] && pd=slirp4netns
	# The holder outlives any run but is still bounded.
	life=$((BENCH_TIME * 20 + 600))
	BENCH_NS_TOKEN="tapir-bench-ns-$$-$RANDOM"
	# shellcheck disable=SC2016 # expanded by the inner bash
	local -a hold=(bash -c 'exec -a "$0" sleep "$1"' "$BENCH_NS_TOKEN" "$life")
	BENCH_IFNAME=tap0 BENCH_SRV_BIND=127.0.0.1
	BENCH_STATE_DIR="$SCEN_DIR/rk$side" BENCH_API_SOCK=""
	# The process that holds the tap; only for builtin is it not the
	# driver being measured.
	BENCH_NET_DRIVER=$BENCH_KIND BENCH_NET_BIN=$BENCH_BIN
	case $BENCH_KIND in
	tapir | slirp4netns | builtin)
		if [[ "$driver" == builtin ]]; then
			BENCH_NET_DRIVER=slirp4netns pd=builtin
			BENCH_NET_BIN=$(bench_accessible "$(bench_driver_bin slirp4netns)")
		fi
		local -a iso=()
		[[ -n "$BENCH_ISOLATE" ]] && iso=(--slirp4netns-sandbox=true
			--slirp4netns-seccomp=true)
		bench_start_rootlesskit --net=slirp4netns --mtu="$mtu" \
			--slirp4netns-binary="$BENCH_NET_BIN" --port-driver="$pd" \
			"${iso[@]}" -- "${hold[@]}"
		[[ "$pd" == slirp4netns ]] && BENCH_API_SOCK="$BENCH_STATE_DIR/.s4nn.sock"
		;;
	pasta | tapir-pasta)
		if bench_rootlesskit_has_pasta; then
			local rpd=none
			[[ "$pd" == pasta*:* ]] && rpd=implicit
			bench_start_rootlesskit --net=pasta --mtu="$mtu" \
				--pasta-binary="$BENCH_BIN" --port-driver="$rpd" \
				-- "${hold[@]}"
		else
			bench_start_pasta "$mtu" "$pd" "${hold[@]}"
		fi
		;;
	veth) bench_start_veth "$mtu" "${hold[@]}" ;;
	*) bench_die "unknown driver '$driver'" ;;
	esac
	if ! wait_for 20 bench_find_ns_pid >/dev/null; then
		bench_die "$driver did not start (no process in a new network namespace after 20 s)"
	fi
	BENCH_NS_PID=$(bench_find_ns_pid)
	if ! wait_for 10 bench_ns_ready; then
		bench_in_ns ip addr >&2 || true
		bench_die "$driver: no $BENCH_GUEST on $BENCH_IFNAME in the namespace after 10 s"
	fi
	bench_log "$driver is up (launcher: $BENCH_LAUNCHER, pid $BENCH_LAUNCHER_PID; namespace process pid $BENCH_NS_PID)"
}

bench_start_rootlesskit() { # ROOTLESSKIT_ARGS...
	local rk
	rk=$(bench_driver_bin rootlesskit)
	[[ -n "$rk" ]] || bench_die "rootlesskit is not installed"
	BENCH_ROOTLESSKIT_VERSION=$("$rk" --version 2>&1 | head -n1)
	# tapir-X.Y: rootlesskit passes its environment on to the driver it
	# starts, so the shim reaches tapir (and, harmlessly, rootlesskit).
	local -a envw=()
	local envtext=""
	if [[ -n "${BENCH_SHIM:-}" ]]; then
		read -r -a envw <<<"$(oldkernel_env "$BENCH_IMITATED" "$BENCH_SHIM")"
		envtext="LD_PRELOAD=${BENCH_SHIM##*/} TAPIR_OLDKERNEL=$BENCH_IMITATED "
	fi
	# tapir-qN: the same way, since rootlesskit has no flag for queues.
	if [[ -n "${BENCH_QUEUES:-}" ]]; then
		envw+=("TAPIR_QUEUES=$BENCH_QUEUES")
		envtext+="TAPIR_QUEUES=$BENCH_QUEUES "
	fi
	# --copy-up=/etc as dockerd-rootless.sh does (rootlesskit then writes
	# its own resolv.conf into a copy of /etc); it also works with
	# sandboxes whose /etc/resolv.conf cannot be mounted over.
	bench_launch_user env "${envw[@]}" "$rk" \
		--state-dir="$BENCH_STATE_DIR" --copy-up=/etc "$@"
	BENCH_LAUNCHER="$envtext$BENCH_ROOTLESSKIT_VERSION $(printf '%s ' "$@" | sed 's/ -- .*//')"
}

# bench_launch_user CMD...: start the driver's launcher as the test user,
# in the network namespace of BENCH_LAUNCH_NETNS_PID when that is set (a
# second simulated host), and set BENCH_LAUNCHER_PID. Its name is
# "driver", with BENCH_SIDE appended when a script runs two.
bench_launch_user() {
	local name="driver${BENCH_SIDE:-}"
	local -a as_user_cmd
	if [[ -n "${BENCH_LAUNCH_NETNS_PID:-}" ]]; then
		_scen_as_user_cmd as_user_cmd
		bg_start "$name" nsenter -t "$BENCH_LAUNCH_NETNS_PID" -n -- \
			"${as_user_cmd[@]}" "$@"
	else
		bg_start_user "$name" "$@"
	fi
	BENCH_LAUNCHER_PID=$(bg_pid "$name")
}

# bench_start_pasta MTU PORT_SPEC HOLD_CMD...: PORT_SPEC pasta:HP:GP
# forwards TCP from the host's 127.0.0.1:HP, pasta-udp:HP:GP UDP from
# every host address.
bench_start_pasta() {
	local mtu=$1 pd=$2 tports=none uports=none hp gp
	shift 2
	IFS=: read -r _ hp gp <<<"$pd"
	case $pd in
	pasta:*) tports="127.0.0.1/$hp:$gp" ;;
	pasta-udp:*) uports="$hp:$gp" ;;
	esac
	# rootlesskit 1.x has no --net=pasta: the same configuration by hand
	# (its offsets: guest net+100, gateway net+2); -f keeps pasta in the
	# foreground so that its pid is known.
	local -a args=(-f -q -I tap0 --config-net -a "$BENCH_GUEST" -n 24
		-g "$BENCH_GW" --mtu "$mtu" -4 -t "$tports" -u "$uports" -T none
		-U none)
	bench_launch_user "$BENCH_BIN" "${args[@]}" -- "$@"
	BENCH_LAUNCHER="pasta ${args[*]} (the installed rootlesskit has no --net=pasta)"
}

bench_start_veth() { # MTU HOLD_CMD...
	local mtu=$1
	shift
	bg_start driver unshare --net -- "$@"
	BENCH_LAUNCHER_PID=$(bg_pid driver)
	wait_for 10 bench_find_ns_pid >/dev/null || bench_die "veth: no namespace"
	local pid
	pid=$(bench_find_ns_pid)
	BENCH_IFNAME=veth0 BENCH_SRV_BIND=$BENCH_GW
	ip link add bvh0 mtu "$mtu" type veth peer name veth0 mtu "$mtu" netns "$pid"
	ip addr add "$BENCH_GW/24" dev bvh0
	ip link set bvh0 up
	nsenter -t "$pid" -n -- sh -ec "
		ip link set lo up
		ip addr add $BENCH_GUEST/24 dev veth0
		ip link set veth0 up
		ip route add default via $BENCH_GW"
	BENCH_LAUNCHER="root: ip link add bvh0 mtu $mtu type veth peer name veth0 (rootful baseline)"
}

bench_find_ns_pid() { # prints the pid of the namespace holder
	local pid
	pid=$(pgrep -f "^$BENCH_NS_TOKEN ") || return 1
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	[[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ]] || return 1
	echo "$pid"
}

bench_ns_ready() {
	bench_in_ns ip -4 -o addr show dev "$BENCH_IFNAME" 2>/dev/null |
		grep -qF " $BENCH_GUEST/"
}

# bench_in_ns CMD...: run CMD as the test user in the namespace's network
# namespace. Root enters it (only the netns: the user namespace plays no
# part in the datapath), then drops to the test user, so the same
# unprivileged workload runs for every driver, veth included.
bench_in_ns() {
	local -a as_user_cmd
	_scen_as_user_cmd as_user_cmd
	nsenter -t "$BENCH_NS_PID" -n -- "${as_user_cmd[@]}" "$@"
}

bench_in_ns_root() { # CMD...: as root in the namespace (sysctls)
	nsenter -t "$BENCH_NS_PID" -n -- "$@"
}

bench_bg_in_ns() { # NAME CMD...: a daemon in the namespace, as the test user
	local name=$1
	local -a as_user_cmd
	shift
	_scen_as_user_cmd as_user_cmd
	bg_start "$name" nsenter -t "$BENCH_NS_PID" -n -- "${as_user_cmd[@]}" "$@"
}

# bench_forward HOSTPORT GUESTPORT: forward host 127.0.0.1:HOSTPORT to
# the namespace's GUESTPORT through the driver's port driver; sets
# BENCH_FWD_ADDR and BENCH_FWD_PORT, where host clients connect.
bench_forward() {
	local hp=$1 gp=$2
	BENCH_FWD_ADDR=127.0.0.1 BENCH_FWD_PORT=$hp
	case $BENCH_DRIVER in
	veth)
		# No forwarding needed (or possible): routed straight in.
		BENCH_FWD_ADDR=$BENCH_GUEST BENCH_FWD_PORT=$gp
		return
		;;
	pasta)
		# Set up at start (pasta -t), or rootlesskit's implicit
		# driver, which forwards the same port number.
		bench_rootlesskit_has_pasta && BENCH_FWD_PORT=$gp
		;;
	*)
		as_user "$(dirname "$(bench_driver_bin rootlesskit)")/rootlessctl" \
			--socket "$BENCH_STATE_DIR/api.sock" add-ports \
			"127.0.0.1:$hp:$gp/tcp" >/dev/null ||
			bench_die "rootlessctl add-ports 127.0.0.1:$hp:$gp/tcp failed"
		;;
	esac
	wait_for 10 bench_listener_pid "$BENCH_FWD_PORT" >/dev/null ||
		bench_die "nothing listens on 127.0.0.1:$BENCH_FWD_PORT after the forward was added"
}

bench_listening() { # PORT: true once something listens on TCP PORT here
	ss -Hltn "( sport = :$1 )" | grep -q .
}

bench_ns_listening() { # PORT: true once something listens on PORT in the namespace
	bench_in_ns ss -Hltn "( sport = :$1 )" | grep -q .
}

# bench_listener_pid PORT: prints the single process listening on
# 127.0.0.1:PORT. The namespace's own process (our `sleep`) is ignored: the
# Debian 12 pasta forks it with the listening sockets still open, but it
# never accepts.
bench_listener_pid() {
	local pids
	pids=$(ss -Hltnp "( sport = :$1 )" | grep -o 'pid=[0-9]*' |
		cut -d= -f2 | grep -vx "${BENCH_NS_PID:-0}" | sort -u)
	[[ -n "$pids" && "$pids" =~ ^[0-9]+$ ]] || return 1
	echo "$pids"
}

# ---- measurement helpers --------------------------------------------

# bench_cpu_ticks PID: sets BENCH_TICKS to utime+stime of all of PID's
# threads, in clock ticks (0 without a PID).
bench_cpu_ticks() {
	local stat
	local -a f
	BENCH_TICKS=0
	[[ -n "$1" ]] || return 0
	stat=$(cat "/proc/$1/stat" 2>/dev/null) ||
		bench_die "the driver process, pid $1, is gone"
	# Fields after the ")" that ends the command name: state is field 3,
	# utime 14 and stime 15.
	read -r -a f <<<"${stat##*) }"
	BENCH_TICKS=$((f[11] + f[12]))
}

bench_ticks_to_s() { # TICKS
	awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz }'
}

# bench_tap_counter bytes|packets: prints "RX TX" of the namespace's
# interface (/proc/net/dev: rx bytes and packets are fields 2 and 3, tx
# ones 10 and 11).
bench_tap_counter() {
	local col=2
	[[ "$1" == packets ]] && col=3
	awk -v ifc="$BENCH_IFNAME:" -v c="$col" '$1 == ifc { print $c, $(c + 8) }' \
		"/proc/$BENCH_NS_PID/net/dev"
}

# bench_count_start: from now until bench_count_stop, count the system
# calls of the driver's process (BENCH_CPU_PID, every thread; perf stat
# -e raw_syscalls:sys_enter, from the outside, so that every driver is
# counted alike) and the frames crossing the namespace's interface.
bench_count_start() {
	BENCH_COUNT_PERF="" BENCH_COUNT_PK=$(bench_tap_counter packets)
	[[ -n "${BENCH_CPU_PID:-}" ]] || return 0
	rm -f "$SCEN_DIR/perf.count"
	perf stat -x, -e raw_syscalls:sys_enter -p "$BENCH_CPU_PID" \
		-o "$SCEN_DIR/perf.count" 2>/dev/null &
	BENCH_COUNT_PERF=$!
	# perf attaches before the workload starts (idle calls count too).
	sleep 0.3
}

# bench_count_stop: end the counts of bench_count_start (before anything
# else talks to the driver): BENCH_COUNT_CALLS (null without a driver
# process or perf), BENCH_COUNT_RX and BENCH_COUNT_TX, the frames into and
# out of the namespace. Not in a subshell: it waits for its perf.
bench_count_stop() {
	local -a pk0 pk1
	BENCH_COUNT_CALLS=null
	if [[ -n "$BENCH_COUNT_PERF" ]]; then
		kill -INT "$BENCH_COUNT_PERF" 2>/dev/null || true
		wait "$BENCH_COUNT_PERF" 2>/dev/null || true
		BENCH_COUNT_CALLS=$(awk -F, '/raw_syscalls:sys_enter/ && $1 ~ /^[0-9]+$/ { print $1 }' \
			"$SCEN_DIR/perf.count" 2>/dev/null)
		[[ "$BENCH_COUNT_CALLS" =~ ^[0-9]+$ ]] || BENCH_COUNT_CALLS=null
	fi
	read -r -a pk0 <<<"$BENCH_COUNT_PK"
	read -r -a pk1 <<<"$(bench_tap_counter packets)"
	BENCH_COUNT_RX=$((pk1[0] - pk0[0])) BENCH_COUNT_TX=$((pk1[1] - pk0[1]))
}

# bench_count_json TRANSACTIONS: the counts per transaction, as JSON
# fields: syscalls_per_tx, frames_to_guest_per_tx, frames_to_host_per_tx.
bench_count_json() {
	jq -cn --argjson n "$1" --argjson calls "$BENCH_COUNT_CALLS" \
		--argjson rx "$BENCH_COUNT_RX" --argjson tx "$BENCH_COUNT_TX" '
		def per: if $n > 0 then . / $n * 100 | round / 100 else null end;
		{syscalls_per_tx: (if $calls == null then null else $calls | per end),
		 frames_to_guest_per_tx: ($rx | per),
		 frames_to_host_per_tx: ($tx | per)}'
}

bench_api() { # JSON: one request to the driver's API socket, reply on stdout
	# socat rather than `tapir api`: the check must not rely on the
	# binary under test to report on itself.
	[[ -S "$BENCH_API_SOCK" ]] || return 1
	printf '%s\n' "$1" | timeout 5 socat -t 5 - "UNIX-CONNECT:$BENCH_API_SOCK"
}

# bench_tcp_stats REPLY: prints "TO_HOST TO_GUEST" bytes of the protocol
# the workload uses, BENCH_STATS_PROTO (default tcp), from a get_stats
# reply.
bench_tcp_stats() {
	jq -er --arg p "${BENCH_STATS_PROTO:-tcp}" \
		'[.return.to_host[$p].bytes, .return.to_guest[$p].bytes] |
		map(numbers) | if length == 2 then "\(.[0]) \(.[1])" else error end' \
		<<<"$1" 2>/dev/null || {
		bench_log "get_stats reply: ${1:-<none>}"
		return 1
	}
}

# bench_queue_stats REPLY: prints the "queues" array of a get_stats
# reply, one {rx_frames, rx_bytes, tx_frames, tx_bytes} per tap queue, or
# null when there is none.
bench_queue_stats() {
	jq -c '.return.queues | if type == "array" then
		map({rx_frames, rx_bytes, tx_frames, tx_bytes}) else null end' \
		<<<"$1" 2>/dev/null || echo null
}

# bench_thread_ticks PID: prints PID's threads as JSON, [{tid, comm,
# ticks}] sorted by tid, ticks being utime+stime; [] without a PID. A
# thread that exits while it is read is left out.
bench_thread_ticks() {
	local pid=$1 f stat comm tid
	local -a v
	[[ -n "$pid" ]] || {
		echo '[]'
		return
	}
	for f in "/proc/$pid/task/"*/stat; do
		{ stat=$(<"$f"); } 2>/dev/null || continue
		comm=${stat#*\(} comm=${comm%\)*}
		read -r -a v <<<"${stat##*) }"
		tid=${f#/proc/"$pid"/task/} tid=${tid%/stat}
		printf '%s\t%s\t%s\n' "$tid" "$((v[11] + v[12]))" "$comm"
	done | jq -Rsc 'split("\n") | map(select(length > 0) | split("\t")
		| {tid: (.[0] | tonumber), comm: .[2], ticks: (.[1] | tonumber)})
		| sort_by(.tid)'
}

# bench_snapshot NAME: record the counters the proof compares, before or
# after the workload: tap bytes, tapir's bytes of BENCH_STATS_PROTO and
# per-queue counters (one get_stats), the driver's CPU, in all and per
# thread.
bench_snapshot() {
	local name=$1 tap stats="" queues=null reply
	tap=$(bench_tap_counter bytes)
	[[ -n "$tap" ]] || bench_die "no $BENCH_IFNAME in the namespace's /proc/net/dev"
	if [[ "$BENCH_KIND" == tapir ]]; then
		reply=$(bench_api '{"execute":"get_stats"}') || reply=""
		stats=$(bench_tcp_stats "$reply") || stats="none"
		queues=$(bench_queue_stats "$reply")
	fi
	printf -v "BENCH_SNAP_${name}_TAP" '%s' "$tap"
	printf -v "BENCH_SNAP_${name}_STATS" '%s' "$stats"
	printf -v "BENCH_SNAP_${name}_QUEUES" '%s' "$queues"
	bench_cpu_ticks "${BENCH_CPU_PID:-}"
	printf -v "BENCH_SNAP_${name}_CPU" '%s' "$BENCH_TICKS"
	printf -v "BENCH_SNAP_${name}_TIME" '%s' "$EPOCHREALTIME"
	printf -v "BENCH_SNAP_${name}_THREADS" '%s' \
		"$(bench_thread_ticks "${BENCH_CPU_PID:-}")"
}

# bench_snapshot_copy FROM TO: the snapshot FROM, every field that
# bench_snapshot records, under the name TO (a script with two drivers
# keeps one per side, and the proof reads "before" and "after").
bench_snapshot_copy() {
	local f n
	for f in TAP STATS QUEUES CPU TIME THREADS; do
		n="BENCH_SNAP_${1}_$f"
		printf -v "BENCH_SNAP_${2}_$f" '%s' "${!n}"
	done
}

# bench_thread_queue_fields BEFORE AFTER SECONDS: the JSON fields of how
# the work spread between two snapshots. "threads": per thread of the
# driver's process, its CPU seconds, its share of the threads' CPU and
# its use of one core over SECONDS, the workload's own measured time (the
# snapshots take longer, around a workload that the driver is idle
# before and after; "snapshot_s" is their distance); a thread gone by
# AFTER is not counted. For tapir, "queues": how much each tap queue's
# counters grew, and "queue_byte_share": each queue's share of the bytes
# (rx + tx).
bench_thread_queue_fields() {
	local b=$1 a=$2 tb ta qb qa wb wa
	tb="BENCH_SNAP_${b}_THREADS" ta="BENCH_SNAP_${a}_THREADS"
	qb="BENCH_SNAP_${b}_QUEUES" qa="BENCH_SNAP_${a}_QUEUES"
	wb="BENCH_SNAP_${b}_TIME" wa="BENCH_SNAP_${a}_TIME"
	jq -cn --argjson tb "${!tb:-[]}" --argjson ta "${!ta:-[]}" \
		--argjson qb "${!qb:-null}" --argjson qa "${!qa:-null}" \
		--argjson wb "${!wb}" --argjson wa "${!wa}" --argjson s "$3" \
		--argjson hz "$(getconf CLK_TCK)" '
		def r4: . * 10000 | round / 10000;
		($tb | map({key: (.tid | tostring), value: .ticks}) | from_entries) as $before
		| [$ta[] | {tid, comm, t: (.ticks - ($before[.tid | tostring] // 0))}] as $d
		| ($d | map(.t) | add // 0) as $sum
		| (if ($ta | length) == 0 then {} else {snapshot_s: ($wa - $wb | r4), threads: [$d[]
			| {tid, comm, cpu_s: (.t / $hz | r4),
			   share: (if $sum > 0 then .t / $sum | r4 else null end),
			   core_share: (if $s > 0 then .t / $hz / $s | r4 else null end)}]} end)
		+ (if $qa == null or $qb == null or ($qa | length) != ($qb | length) then {}
		   else [range(0; $qa | length) as $i
			| $qa[$i] | with_entries(.value -= $qb[$i][.key])] as $q
		   | ($q | map(.rx_bytes + .tx_bytes) | add // 0) as $tot
		   | {queues: $q, queue_byte_share: (if $tot > 0 then
			$q | map((.rx_bytes + .tx_bytes) / $tot | r4) else null end)} end)'
}

# ---- the identity proof ---------------------------------------------

# bench_tap_holder: sets BENCH_TAP_HOLDER to the pid of the one process
# holding the tap of the namespace, and BENCH_TUN_FDS to tunns's list;
# refuses when there is none, several, or when tun fds exist for other
# namespaces (nothing else in this sandbox uses a tap), but for the
# namespaces whose inodes BENCH_OTHER_NETNS lists (a script's second
# driver, proven on its own).
bench_tap_holder() {
	local out ns pids line mine=""
	local -a f
	ns=$(stat -L -c %i "/proc/$BENCH_NS_PID/ns/net")
	out=$("$BENCH_TUNNS") || bench_refuse "tunns could not inspect every tun fd in the sandbox"
	while read -r line; do
		[[ -z "$line" ]] && continue
		read -r -a f <<<"$line"
		if [[ "${f[2]}" == "$BENCH_IFNAME" && "${f[3]}" == "$ns" ]]; then
			mine+="$line"$'\n'
		elif [[ " ${BENCH_OTHER_NETNS:-} " != *" ${f[3]} "* ]]; then
			bench_refuse "unexpected tun fd in the sandbox: pid ${f[0]} fd ${f[1]}, ${f[2]} in net:[${f[3]}]"
		fi
	done <<<"$out"
	BENCH_TUN_FDS=${mine%$'\n'}
	pids=$(awk '{ print $1 }' <<<"$BENCH_TUN_FDS" | sort -u)
	[[ -n "$pids" ]] || bench_refuse "no process holds $BENCH_IFNAME of the benchmark's namespace net:[$ns]"
	[[ "$pids" =~ ^[0-9]+$ ]] || bench_refuse "several processes hold $BENCH_IFNAME of net:[$ns]: $(echo "$pids" | xargs)"
	BENCH_TAP_HOLDER=$pids
}

bench_ppid() { # PID
	awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

bench_starttime() { # PID: start time in clock ticks after boot
	local stat
	local -a f
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r -a f <<<"${stat##*) }"
	echo "${f[19]}"
}

# bench_started_by PID LAUNCHER: true if PID descends from LAUNCHER, or
# is a daemon that forked away from it (pasta under rootlesskit >= 2):
# reparented to this sandbox's pid 1 and started no earlier than LAUNCHER.
# The sandbox's pid namespace is new, so its pid 1 is this run.
bench_started_by() {
	local pid=$1 i
	for ((i = 0; i < 64 && pid > 1; i++)); do
		[[ "$pid" == "$2" ]] && return 0
		pid=$(bench_ppid "$pid") || return 1
	done
	[[ "$pid" == "$2" ]] && return 0
	[[ "$(bench_ppid "$1")" == 1 ]] || return 1
	(($(bench_starttime "$1") >= $(bench_starttime "$2")))
}

# bench_check_exe PID DRIVER BINARY: refuses unless PID runs BINARY (same
# file, by device and inode) and its name is the driver's. passt/pasta
# re-executes itself as "<its real path>.avx2" when the CPU has AVX2 and
# that file exists, so for pasta that sibling counts too. Sets BENCH_EXE.
bench_check_exe() {
	local pid=$1 driver=$2 bin=$3 exe re id cand
	local -a cands=("$bin")
	exe=$(readlink -f "/proc/$pid/exe") || bench_refuse "cannot read /proc/$pid/exe"
	re=$(bench_exe_name_re "$driver")
	[[ "${exe##*/}" =~ $re ]] ||
		bench_refuse "pid $pid runs '$exe', whose name is not $driver's"
	[[ "$driver" == pasta && -f "$(readlink -f "$bin").avx2" ]] &&
		cands+=("$(readlink -f "$bin").avx2")
	id=$(stat -L -c %d:%i "/proc/$pid/exe")
	for cand in "${cands[@]}"; do
		if [[ "$(stat -L -c %d:%i "$cand")" == "$id" ]]; then
			BENCH_EXE=$exe
			return 0
		fi
	done
	bench_refuse "pid $pid runs '$exe', not the $driver binary '$bin'"
}

# bench_proof MESSAGE...: one line of the proof. Kept until the whole
# proof has passed, then printed by bench_emit before the number: a
# refused run prints nothing on stdout.
BENCH_PROOF_LINES=()
bench_proof() {
	BENCH_PROOF_LINES+=("proof: $*")
}

# bench_prove_driver_pid: before the workload, find the process that
# must carry it and remember it (BENCH_DRIVER_PID, BENCH_CPU_PID). For
# veth there is none: the proof is that no tun fd exists at all.
bench_prove_driver_pid() {
	if [[ "$BENCH_DRIVER" == veth || "$BENCH_DRIVER" == loopback ]]; then
		[[ -z "$("$BENCH_TUNNS")" ]] || bench_refuse "a tun fd exists in the $BENCH_DRIVER sandbox"
		BENCH_DRIVER_PID="" BENCH_CPU_PID=""
		return
	fi
	bench_tap_holder
	BENCH_DRIVER_PID=$BENCH_TAP_HOLDER
	BENCH_CPU_PID=$BENCH_DRIVER_PID
}

# bench_prove_path DIRECTION PAYLOAD_BYTES [TAP]: after the workload,
# prove that the traffic crossed the named driver. DIRECTION is ns-host
# (the namespace sent the payload), host-ns, or both (PAYLOAD_BYTES in
# total, either way). TAP=bypass when the payload is known not to cross
# the tap (rootlesskit's builtin port driver, pasta's splice): then the
# tap's bytes are reported, not required. Prints the proof lines and
# sets BENCH_PROOF_JSON.
bench_prove_path() {
	local dir=$1 bytes=$2 tap=${3:-tap} ns route holder exe bin tap_b tap_a
	local proto=${BENCH_STATS_PROTO:-tcp}
	ns=$(stat -L -c %i "/proc/$BENCH_NS_PID/ns/net")
	route=$(bench_in_ns ip -o route get "$BENCH_TARGET" 2>&1 || true)
	[[ "$route" == *" dev $BENCH_IFNAME "* ]] ||
		bench_refuse "in the namespace, $BENCH_TARGET is not routed via $BENCH_IFNAME: $route"
	bench_proof "the workload's network namespace is net:[$ns]; $BENCH_TARGET is routed there via $BENCH_IFNAME"
	exe="" holder=""
	if [[ "$BENCH_DRIVER" == veth ]]; then
		[[ -z "$("$BENCH_TUNNS")" ]] || bench_refuse "a tun fd exists in the veth sandbox"
		bench_in_ns ip -d -o link show dev veth0 | grep -qw veth ||
			bench_refuse "veth0 in the namespace is not a veth device"
		bench_proof "veth0 is a veth device and no process holds any tun fd in the sandbox"
	elif [[ "$BENCH_DRIVER" == loopback ]]; then
		[[ -z "$("$BENCH_TUNNS")" ]] || bench_refuse "a tun fd exists in the loopback sandbox"
		[[ "$ns" == "$(stat -L -c %i /proc/self/ns/net)" ]] ||
			bench_refuse "the loopback run left the sandbox host's network namespace"
		bench_in_ns ip -o link show dev lo | grep -q 'link/loopback' ||
			bench_refuse "lo is not a loopback device"
		bench_proof "net:[$ns] is the sandbox host itself, lo is its loopback device, and no process holds any tun fd in the sandbox"
	else
		bench_tap_holder
		holder=$BENCH_TAP_HOLDER
		[[ "$holder" == "$BENCH_DRIVER_PID" ]] ||
			bench_refuse "$BENCH_IFNAME was held by pid $BENCH_DRIVER_PID before the run and by $holder after it"
		bench_started_by "$holder" "$BENCH_LAUNCHER_PID" ||
			bench_refuse "the tap holder, pid $holder, was not started by this run (launcher pid $BENCH_LAUNCHER_PID)"
		bin=$BENCH_NET_BIN
		bench_check_exe "$holder" "$BENCH_NET_DRIVER" "$bin"
		exe=$BENCH_EXE
		bench_proof "$BENCH_IFNAME of net:[$ns] is held by pid $holder only (tun fds: $(awk '{ printf "%s%s/fd%s", s, $1, $2; s=" " }' <<<"$BENCH_TUN_FDS")), started by this run's launcher (pid $BENCH_LAUNCHER_PID)"
		bench_proof "pid $holder runs $exe, the same file (device and inode) as the $BENCH_NET_DRIVER binary $bin$([[ "$exe" == *.avx2 ]] && echo "'s AVX2 build, which it re-executes")"
		bench_prove_isolation "$holder"
	fi
	read -r -a tap_b <<<"$BENCH_SNAP_before_TAP"
	read -r -a tap_a <<<"$BENCH_SNAP_after_TAP"
	local rx=$((tap_a[0] - tap_b[0])) tx=$((tap_a[1] - tap_b[1])) tap_delta
	case $dir in
	ns-host) tap_delta=$tx ;;
	host-ns) tap_delta=$rx ;;
	*) tap_delta=$((rx + tx)) ;;
	esac
	if [[ "$tap" == tap ]]; then
		((tap_delta >= bytes)) ||
			bench_refuse "$BENCH_IFNAME carried $tap_delta bytes ($dir) during the run, less than the $bytes payload bytes measured"
		bench_proof "$BENCH_IFNAME carried $tap_delta bytes ($dir; rx $rx, tx $tx) >= $bytes payload bytes measured"
	else
		((tap_delta < bytes)) ||
			bench_refuse "$BENCH_IFNAME carried $tap_delta bytes ($dir), the whole $bytes payload bytes, on a path that should bypass it"
		bench_proof "$BENCH_IFNAME carried only $tap_delta bytes ($dir) of the $bytes payload bytes: the payload bypassed it, as this path should"
	fi
	local stats_delta=null
	if [[ "$BENCH_KIND" == tapir ]]; then
		[[ "$BENCH_SNAP_before_STATS" != none && "$BENCH_SNAP_after_STATS" != none ]] ||
			bench_refuse "tapir's API socket ($BENCH_API_SOCK) did not answer get_stats with $proto byte counters: is TAPIR_BIN really tapir?"
		local -a s_b s_a
		read -r -a s_b <<<"$BENCH_SNAP_before_STATS"
		read -r -a s_a <<<"$BENCH_SNAP_after_STATS"
		local th=$((s_a[0] - s_b[0])) tg=$((s_a[1] - s_b[1]))
		case $dir in
		ns-host) stats_delta=$th ;;
		host-ns) stats_delta=$tg ;;
		*) stats_delta=$((th + tg)) ;;
		esac
		((stats_delta >= bytes)) ||
			bench_refuse "tapir's get_stats $proto bytes grew by $stats_delta ($dir; to_host $th, to_guest $tg), less than the $bytes payload bytes measured"
		bench_proof "tapir's get_stats $proto bytes grew by $stats_delta ($dir; to_host $th, to_guest $tg) >= $bytes"
		bench_prove_kernel_path "$holder"
		bench_prove_queues "$holder"
		bench_prove_conditions_build
	fi
	[[ "$BENCH_KIND" == tapir ]] || BENCH_TCP_PEEK=null BENCH_SHIM_MAPPED="" \
		BENCH_QUEUE_COUNT=null BENCH_TASKS=""
	BENCH_PROOF_JSON=$(jq -cn --arg ns "$ns" --arg ifc "$BENCH_IFNAME" \
		--arg holder "$holder" --arg exe "$exe" \
		--argjson peek "$BENCH_TCP_PEEK" --arg shim "$BENCH_SHIM_MAPPED" \
		--argjson tap "$tap_delta" --argjson stats "$stats_delta" \
		--arg proto "$proto" \
		--argjson iso "${BENCH_ISOLATION:-null}" \
		--argjson queues "${BENCH_QUEUE_COUNT:-null}" --arg tasks "${BENCH_TASKS:-}" \
		'{netns: $ns, ifname: $ifc,
		  tap_holder_pid: ($holder | if . == "" then null else tonumber end),
		  exe: ($exe | if . == "" then null else . end),
		  tap_bytes: $tap, ("stats_" + $proto + "_bytes"): $stats}
		 + (if $peek == null then {} else {tcp_peek: $peek} end)
		 + (if $iso == null then {} else {isolation: $iso} end)
		 + (if $shim == "" then {} else {shim_loaded: $shim} end)
		 + (if $queues == null then {} else {queues: $queues} end)
		 + (if $tasks == "" then {} else {tasks: ($tasks | tonumber)} end)')
}

# bench_prove_isolation PID: record how the tap holder is isolated, as
# its /proc/PID/status shows it (BENCH_ISOLATION, a JSON object): seccomp
# mode, no_new_privs and the effective capabilities. tapir-sandbox must
# run filtered, or its cost would be measured against itself.
bench_prove_isolation() {
	local pid=$1 seccomp nnp capeff
	seccomp=$(awk '/^Seccomp:/ { print $2 }' "/proc/$pid/status")
	nnp=$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$pid/status")
	capeff=$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")
	BENCH_ISOLATION=$(jq -cn --argjson s "${seccomp:-0}" \
		--argjson n "${nnp:-0}" --arg c "$capeff" \
		'{seccomp: $s, no_new_privs: $n, cap_eff: $c}')
	if [[ -n "${BENCH_ISOLATE:-}" && ("$seccomp" != 2 || "$nnp" != 1) ]]; then
		bench_refuse "pid $pid runs with Seccomp $seccomp, NoNewPrivs $nnp: tapir-sandbox must be filtered and sandboxed"
	fi
	bench_proof "pid $pid: Seccomp $seccomp, NoNewPrivs $nnp, CapEff $capeff"
}

# bench_prove_kernel_path PID: tapir's get_info says which paths it took
# on this kernel; record them (BENCH_TCP_PEEK, a JSON object). For
# tapir-X.Y, refuse unless PID has the shim mapped and get_info reports
# the path of a kernel without TCP SO_PEEK_OFF, "discard" for IPv4 and
# IPv6: a shim that failed to load (the loader only warns) must never be
# reported as the old-kernel path. Sets BENCH_SHIM_MAPPED for the proof.
bench_prove_kernel_path() {
	local pid=$1 reply shim=""
	BENCH_TCP_PEEK=null BENCH_SHIM_MAPPED=""
	reply=$(bench_api '{"execute":"get_info"}') || reply=""
	BENCH_TCP_PEEK=$(jq -ce '.return.kernel.tcp_peek |
		select(.ipv4 | type == "string") | {ipv4, ipv6}' <<<"$reply" 2>/dev/null) ||
		BENCH_TCP_PEEK=null
	if [[ -z "$BENCH_IMITATED" ]]; then
		[[ "$BENCH_TCP_PEEK" == null ]] ||
			bench_proof "tapir's get_info: tcp_peek ipv4 $(jq -r .ipv4 <<<"$BENCH_TCP_PEEK"), ipv6 $(jq -r .ipv6 <<<"$BENCH_TCP_PEEK") on Linux $(uname -r)"
		return 0
	fi
	shim=$(readlink -f "$BENCH_SHIM")
	awk -v f="$shim" '$6 == f { found = 1 } END { exit !found }' \
		"/proc/$pid/maps" 2>/dev/null ||
		bench_refuse "pid $pid has not loaded the old-kernel shim $shim (LD_PRELOAD did not reach it)"
	BENCH_SHIM_MAPPED=$shim
	[[ "$BENCH_TCP_PEEK" != null ]] ||
		bench_refuse "tapir's get_info gave no kernel.tcp_peek: ${reply:-no reply}"
	[[ "$(jq -r '"\(.ipv4) \(.ipv6)"' <<<"$BENCH_TCP_PEEK")" == "discard discard" ]] ||
		bench_refuse "tapir's get_info says tcp_peek $BENCH_TCP_PEEK, not discard for IPv4 and IPv6: this is not the path of Linux $BENCH_IMITATED"
	bench_proof "pid $pid has the shim $shim mapped (TAPIR_OLDKERNEL=$BENCH_IMITATED), and tapir's get_info reports tcp_peek ipv4 discard, ipv6 discard: the path of a kernel without TCP SO_PEEK_OFF"
}

# bench_prove_conditions_build: for tapir-nocond, refuse unless tapir's
# get_info lists its features without "conditions" (`make nocond`); for
# any other tapir, say whether it has them.
bench_prove_conditions_build() {
	local reply has=no
	reply=$(bench_api '{"execute":"get_info"}') || reply=""
	[[ -n "$reply" ]] || bench_refuse "tapir's API socket did not answer get_info"
	jq -e '.return.features | split(" ") | index("conditions")' <<<"$reply" >/dev/null && has=yes
	if [[ "$BENCH_DRIVER" == tapir-nocond ]]; then
		[[ "$has" == no ]] ||
			bench_refuse "tapir-nocond's get_info lists the feature \"conditions\": it was not built with make nocond"
		bench_proof "tapir's get_info lists no \"conditions\" feature: built without network conditions (make nocond)"
	else
		bench_proof "tapir's get_info: network conditions built in: $has"
	fi
}

# bench_prove_queues PID: record how many tap queues tapir ran with
# (BENCH_QUEUE_COUNT, from the get_stats "queues" of the last snapshot)
# and how many threads PID has (BENCH_TASKS). For tapir-qN, refuse unless
# get_stats lists N queues and get_info's tap report says N: a
# TAPIR_QUEUES that did not reach tapir must not be reported as N queues.
# With BENCH_QUEUE_THREADS=1, also refuse unless PID runs at least N
# threads, one per queue (N > 1).
bench_prove_queues() {
	local pid=$1 n=${BENCH_QUEUES:-} info reply
	BENCH_QUEUE_COUNT=$(jq 'if type == "array" then length else null end' \
		<<<"${BENCH_SNAP_after_QUEUES:-null}")
	BENCH_TASKS=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	if [[ -z "$n" ]]; then
		bench_proof "tapir ran with ${BENCH_QUEUE_COUNT/null/an unknown number of} tap queue(s) (get_stats) and $BENCH_TASKS thread(s)"
		return 0
	fi
	[[ "$BENCH_QUEUE_COUNT" == "$n" ]] ||
		bench_refuse "tapir's get_stats lists ${BENCH_QUEUE_COUNT/null/no} queues, not the $n of $BENCH_DRIVER (TAPIR_QUEUES=$n)"
	reply=$(bench_api '{"execute":"get_info"}') || reply=""
	info=$(jq -r '.return.tap.queues // .return.queues // "none"' <<<"$reply" 2>/dev/null) ||
		info=none
	[[ "$info" == "$n" ]] ||
		bench_refuse "tapir's get_info says its tap has $info queues, not the $n of $BENCH_DRIVER"
	if [[ "${BENCH_QUEUE_THREADS:-0}" == 1 ]] && ((n > 1 && BENCH_TASKS < n)); then
		bench_refuse "pid $pid runs $BENCH_TASKS thread(s), fewer than one per queue ($n; BENCH_QUEUE_THREADS=1)"
	fi
	bench_proof "tapir's get_stats lists $n tap queues and get_info's tap has $n (TAPIR_QUEUES=$n); pid $pid runs $BENCH_TASKS thread(s)$([[ "${BENCH_QUEUE_THREADS:-0}" == 1 ]] && echo ", at least one per queue (BENCH_QUEUE_THREADS=1)")"
}

# bench_prove_listener: the forward's host side, the one listener on
# 127.0.0.1:$BENCH_FWD_PORT, belongs to this run and runs the driver's
# binary (rootlesskit for builtin); except for builtin it is also the
# tap's holder. Call it before and after the workload (it must be the
# same process). Sets BENCH_CPU_PID to it, since it does the forwarding.
bench_prove_listener() {
	local port=$BENCH_FWD_PORT pid driver=$BENCH_NET_DRIVER bin=$BENCH_NET_BIN
	[[ "$BENCH_DRIVER" == veth ]] && return 0
	if [[ "$BENCH_DRIVER" == builtin ]]; then
		driver=rootlesskit bin=$BENCH_BIN
	fi
	pid=$(bench_listener_pid "$port") ||
		bench_refuse "not exactly one process listens on 127.0.0.1:$port"
	[[ -z "${BENCH_LISTENER_PID:-}" || "$pid" == "$BENCH_LISTENER_PID" ]] ||
		bench_refuse "127.0.0.1:$port was held by pid $BENCH_LISTENER_PID before the run and by $pid after it"
	BENCH_LISTENER_PID=$pid
	bench_started_by "$pid" "$BENCH_LAUNCHER_PID" ||
		bench_refuse "the listener on 127.0.0.1:$port, pid $pid, was not started by this run"
	if [[ "$BENCH_DRIVER" != builtin && "$pid" != "$BENCH_DRIVER_PID" ]]; then
		bench_refuse "127.0.0.1:$port is held by pid $pid, but the tap by pid $BENCH_DRIVER_PID"
	fi
	bench_check_exe "$pid" "$driver" "$bin"
	BENCH_LISTENER_PROOF="127.0.0.1:$port, the forward's host side, is held by pid $pid only, which runs $BENCH_EXE ($driver)"
	BENCH_CPU_PID=$pid
}

# ---- iperf3 ------------------------------------------------------------

# bench_iperf3_server ns|host BIND PORT: start the one-off iperf3 server
# (as the test user) whose JSON report bench_iperf3 falls back on. BIND
# may be empty (all addresses).
bench_iperf3_server() {
	local where=$1 bind=$2 port=$3
	local -a cmd=(iperf3 -s -1 -J -p "$port" --logfile "$SCEN_DIR/iperf3-server.json")
	[[ -n "$bind" ]] && cmd+=(-B "$bind")
	if [[ "$where" == ns ]]; then
		bench_bg_in_ns iperf3-server "${cmd[@]}"
		wait_for 5 bench_ns_listening "$port" ||
			bench_die "the iperf3 server in the namespace did not start"
	else
		bg_start_user iperf3-server "${cmd[@]}"
		wait_for 5 bench_listening "$port" ||
			bench_die "the iperf3 server did not start"
	fi
}

# bench_iperf3 ns|host ARGS...: run the iperf3 client (as the test user, in
# the namespace or on the host) with a hard time limit, and set IPERF_BYTES
# (received), IPERF_SECONDS, IPERF_BPS, IPERF_RETRANS (the sender's, or
# null) and IPERF_ABORTED (null, or iperf3's error as JSON).
#
# A stalled driver must not hang the run: iperf3's own timeouts act
# first, then `timeout`. When the test aborts midway (iperf3 still exits
# 0, with an "error" in its JSON, e.g. when a stalled connection is reset)
# the numbers are honest ones from the receiver's per-second intervals up
# to the abort: the server's report for namespace → host, the client's
# own for -R.
bench_iperf3() {
	local where=$1 rc=0 why limit=$((BENCH_TIME + 40)) reverse=0 arg
	local client="$SCEN_DIR/iperf3.json" server="$SCEN_DIR/iperf3-server.json"
	shift
	for arg in "$@"; do
		[[ "$arg" == -R ]] && reverse=1
	done
	local -a cmd=(timeout -k 5 "$limit" iperf3 -J --connect-timeout 5000 "$@")
	bench_log "running iperf3 $* ($where)"
	if [[ "$where" == ns ]]; then
		bench_in_ns "${cmd[@]}" >"$client" 2>"$SCEN_DIR/iperf3.err" || rc=$?
	else
		as_user "${cmd[@]}" >"$client" 2>"$SCEN_DIR/iperf3.err" || rc=$?
	fi
	why=$(jq -r '.error // empty' "$client" 2>/dev/null || true)
	if ((rc != 0)); then
		((rc == 124 || rc == 137)) && why="killed after $limit s"
		bench_die "iperf3 failed (status $rc): ${why:-$(tail -n3 "$SCEN_DIR/iperf3.err")}"
	fi
	IPERF_ABORTED=null
	if [[ -z "$why" ]]; then
		read -r IPERF_BYTES IPERF_SECONDS IPERF_BPS IPERF_RETRANS < <(jq -r '.end |
			[.sum_received.bytes, .sum_received.seconds,
			 .sum_received.bits_per_second,
			 (.sum_sent.retransmits // "null")] | @tsv' "$client")
	else
		bench_iperf3_aborted "$why" "$reverse" "$client" "$server"
	fi
	if ! [[ "$IPERF_BYTES" =~ ^[0-9]+$ ]] || ((IPERF_BYTES == 0)); then
		bench_die "iperf3 moved no data${why:+ ($why)}"
	fi
	bench_iperf3_intervals "$reverse" "$client" "$server"
}

# bench_iperf3_intervals REVERSE CLIENT_JSON SERVER_JSON: the evidence
# second by second. Sets IPERF_INTERVALS, {"gbps": [the receiver's rate
# per interval], "retransmits": [the sender's per interval, or null]},
# and IPERF_STALL: null, or {from_s, peak_gbps, after_gbps} when two
# intervals in a row ran below 10 % of the best one. That is a stall (a
# collapse within the run, as pasta's namespace → host path does here),
# not a slow driver, and the tables say so.
bench_iperf3_intervals() {
	local reverse=$1 client=$2 server=$3 receiver sender
	receiver=$server sender=$client
	((reverse)) && receiver=$client sender=$server
	if ! wait_for 15 bench_server_done; then
		bench_log "the iperf3 server wrote no report; intervals from the client alone"
		receiver=$client sender=$client
	fi
	# The sender's intervals are counted on its own clock: each one goes
	# to the receiver's interval it starts in (the last takes the rest).
	IPERF_INTERVALS=$(jq -cn --slurpfile r "$receiver" --slurpfile s "$sender" '
		[$r[0].intervals[]?.sum] as $ri | [$s[0].intervals[]?.sum] as $si
		| {gbps: [$ri[].bits_per_second / 1e9 | . * 1000 | round / 1000],
		   retransmits: (if all($si[]; .retransmits == null) then null
			else [range(0; $ri | length) as $i
			  | [$si[] | select(.start >= $ri[$i].start and
				($i == ($ri | length) - 1 or .start < $ri[$i].end))
				| .retransmits // 0] | add // 0] end)}') ||
		IPERF_INTERVALS=null
	IPERF_STALL=$(jq -c --slurpfile r "$receiver" '.gbps as $g
		| ($g | max // 0) as $p
		| [range(0; ($g | length) - 1)
		   | select($g[.] < 0.1 * $p and $g[. + 1] < 0.1 * $p)] | first
		| if . == null then null else
		  {from_s: ($r[0].intervals[.].sum.start | round), peak_gbps: $p,
		   after_gbps: ($g[.:] | add / length * 1000 | round / 1000)} end' \
		<<<"$IPERF_INTERVALS" 2>/dev/null) || IPERF_STALL=null
	[[ -n "$IPERF_STALL" ]] || IPERF_STALL=null
	if [[ "$IPERF_STALL" != null ]]; then
		bench_log "stalled: $(jq -r '"below 10 % of its best second (\(.peak_gbps) Gbit/s) from \(.from_s) s on, \(.after_gbps) Gbit/s on average after that"' <<<"$IPERF_STALL")"
	fi
}

# bench_iperf3_aborted ERROR REVERSE CLIENT_JSON SERVER_JSON: the numbers
# of an aborted test, from the receiver's intervals.
bench_iperf3_aborted() {
	local why=$1 reverse=$2 client=$3 server=$4 receiver sender
	bench_log "iperf3 aborted: $why; counting the receiver's intervals up to the abort"
	# The one-off server writes its report when the test ends.
	wait_for 15 bench_server_done ||
		bench_die "iperf3 aborted ($why) and its server wrote no report"
	receiver=$server sender=$client
	((reverse)) && receiver=$client sender=$server
	read -r IPERF_BYTES IPERF_SECONDS IPERF_BPS < <(jq -r '
		[.intervals[].sum] | (map(.bytes) | add // 0) as $b
		| (map(.seconds) | add // 0) as $s
		| [$b, $s, (if $s > 0 then $b * 8 / $s else 0 end)] | @tsv' "$receiver")
	IPERF_RETRANS=$(jq '[.intervals[].sum.retransmits // empty] |
		if length == 0 then null else add end' "$sender")
	IPERF_ABORTED=$(jq -cn --arg why "$why" '$why')
}

bench_server_done() {
	[[ -s "$SCEN_DIR/iperf3-server.json" ]] && ! _scen_alive "$(bg_pid iperf3-server)"
}

# bench_iperf3_fields BENCH MTU DIRECTION STREAMS: the JSON fields of an
# iperf3 result (after bench_iperf3 and the snapshots), with the driver's
# threads and tapir's queues (bench_thread_queue_fields).
bench_iperf3_fields() {
	jq -cn --arg bench "$1" --argjson mtu "$2" --arg dir "$3" \
		--argjson streams "$4" --argjson bytes "$IPERF_BYTES" \
		--argjson seconds "$IPERF_SECONDS" --argjson bps "$IPERF_BPS" \
		--argjson retrans "$IPERF_RETRANS" --argjson cpu "$(bench_cpu_s)" \
		--argjson aborted "$IPERF_ABORTED" \
		--argjson intervals "$IPERF_INTERVALS" --argjson stall "$IPERF_STALL" \
		--argjson spread "$(bench_thread_queue_fields before after "$IPERF_SECONDS")" '{
		bench: $bench, mtu: $mtu, direction: $dir, streams: $streams,
		seconds: ($seconds * 1000 | round / 1000), bytes: $bytes,
		gbps: ($bps / 1e9 * 1000 | round / 1000),
		retransmits: $retrans, aborted: $aborted,
		stalled: ($stall != null), stall: $stall, intervals: $intervals,
		driver_cpu_s: $cpu,
		driver_cpu_s_per_gb: (if $cpu == null then null
			else ($cpu / ($bytes / 1e9) * 10000 | round / 10000) end)}
		+ $spread'
}

# ---- output -----------------------------------------------------------

# bench_emit JSON_FIELDS: prints the verified JSON line: the common fields
# (driver, round, binary, its sha256, version and Debian package,
# launcher; for tapir the kernel path it took, for tapir-X.Y the kernel
# imitated and the shim; the machine: kernel, CPUs, load average before
# the cell), then the given ones, then the date and the proof.
bench_emit() {
	local fields=$1
	if ((${#BENCH_PROOF_LINES[@]} > 0)); then
		printf '%s\n' "${BENCH_PROOF_LINES[@]}"
		BENCH_PROOF_LINES=()
	fi
	jq -cn --arg driver "$BENCH_DRIVER" --arg binary "$BENCH_BIN_ORIG" \
		--arg version "$BENCH_VERSION" --arg sha "$BENCH_SHA256" \
		--arg package "$BENCH_PACKAGE" --arg launcher "$BENCH_LAUNCHER" \
		--argjson round "${BENCH_ROUND:-1}" --arg imitated "$BENCH_IMITATED" \
		--arg shim "$BENCH_SHIM" --arg shimsha "$BENCH_SHIM_SHA256" \
		--argjson peek "${BENCH_TCP_PEEK:-null}" --arg kernel "$(uname -r)" \
		--argjson cpus "$(nproc)" --argjson load "$BENCH_LOADAVG" \
		--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		--argjson proof "$BENCH_PROOF_JSON" --argjson f "$fields" '
		def nonempty: if . == "" then null else . end;
		{driver: $driver, round: $round, binary: ($binary | nonempty),
		 sha256: ($sha | nonempty), version: $version,
		 package: ($package | nonempty), launcher: $launcher}
		+ (if $peek == null then {} else {tcp_peek: $peek} end)
		+ (if $imitated == "" then {} else {kernel_imitated: $imitated,
			shim: ($shim | split("/") | last), shim_sha256: $shimsha} end)
		+ {kernel: $kernel, cpus: $cpus, loadavg_before: $load}
		+ $f + {date: $date, proof: $proof, verified: true}'
}

bench_cpu_s() { # CPU seconds the driver used between the snapshots
	if [[ -z "${BENCH_CPU_PID:-}" ]]; then
		echo null
		return
	fi
	bench_ticks_to_s "$((BENCH_SNAP_after_CPU - BENCH_SNAP_before_CPU))"
}

# ---- argument helpers ---------------------------------------------------

bench_check_choice() { # WHAT VALUE CHOICES...
	local what=$1 value=$2 c
	shift 2
	for c in "$@"; do
		[[ "$value" == "$c" ]] && return 0
	done
	bench_die "unknown $what '$value' (one of: $*)"
}

# bench_parse_args ALLOWED ARGS...: the options the scripts share. ALLOWED
# lists the options this script takes (e.g. "--reverse --parallel"). Sets
# BENCH_ARGS (the positional arguments), OPT_REVERSE (0/1), OPT_STREAMS,
# OPT_MTU, OPT_CONCURRENCY, OPT_MODES, OPT_SIZES and OPT_CONNECTIONS;
# returns 1 on a usage error.
bench_parse_args() {
	local allowed=" $1 "
	shift
	BENCH_ARGS=() OPT_REVERSE=0 OPT_STREAMS=1 OPT_MTU=65520
	OPT_CONCURRENCY="1 8 16 32 128" OPT_MODES="rr crr rr-fwd"
	OPT_SIZES="100 4096" OPT_CONNECTIONS="1 32"
	while (($# > 0)); do
		if [[ "$1" == --* && "$allowed" != *" $1 "* ]]; then
			return 1
		fi
		case $1 in
		--reverse) OPT_REVERSE=1 ;;
		--parallel | --mtu | --concurrency | --modes | --sizes | --connections)
			(($# >= 2)) || return 1
			case $1 in
			--parallel) OPT_STREAMS=$2 ;;
			--mtu) OPT_MTU=$2 ;;
			--concurrency) OPT_CONCURRENCY=$2 ;;
			--modes) OPT_MODES=$2 ;;
			--sizes) OPT_SIZES=$2 ;;
			--connections) OPT_CONNECTIONS=$2 ;;
			esac
			shift
			;;
		--*) return 1 ;;
		*) BENCH_ARGS+=("$1") ;;
		esac
		shift
	done
	bench_check_int --parallel "$OPT_STREAMS" 1 128
	bench_check_mtu "$OPT_MTU"
	bench_check_int BENCH_TIME "$BENCH_TIME" 1 86400
	bench_check_int BENCH_ROUND "${BENCH_ROUND:-1}" 1 1000
}

# bench_direction FLIP: prints ns-host, or host-ns with --reverse; FLIP=1
# swaps them, for scripts whose natural direction is host → namespace.
bench_direction() {
	if ((OPT_REVERSE ^ $1)); then
		echo host-ns
	else
		echo ns-host
	fi
}

bench_check_int() { # WHAT VALUE MIN MAX
	if ! [[ "$2" =~ ^[0-9]+$ ]] || (($2 < $3 || $2 > $4)); then
		bench_die "$1 must be a whole number in $3..$4, not '$2'"
	fi
}

bench_check_mtu() { # MTU
	bench_check_int MTU "$1" 1280 65520
}
