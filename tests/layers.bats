#!/usr/bin/env bats
# tests/layers.bats - driver/ in folders that include and call only
# downward (driver/LAYERS), checked by hack/layers.sh as `make lint` does.

load lib

@test "layers: driver/ includes and calls only downward; an upward include or call is refused by name" {
	cd "$TAPIR_ROOT"
	local build=${TAPIR_BUILD:-build}
	[[ "$build" = /* ]] || build="$TAPIR_ROOT/$build"
	run hack/layers.sh "$build"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# A copy of the tree where the core includes a front end's header:
	# refused, naming both files.
	local t="$BATS_TEST_TMPDIR/tree"
	mkdir -p "$t/hack"
	cp -r driver ipc "$t/"
	cp hack/layers.sh "$t/hack/"
	sed -i '0,/^#include "driver\/core\/log.h"/s//&\n#include "driver\/front\/cli.h"/' \
		"$t/driver/core/log.c"
	grep -q 'driver/front/cli.h' "$t/driver/core/log.c"
	run "$t/hack/layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"driver/core/log includes driver/front/cli, in front/, above core/"* ]]
	# A call the same way, with no include: the objects tell. The
	# event loop's function, defined in front/, called from core/.
	run bash -c "cd '$t' && mkdir -p b/driver/core b/driver/front &&
		printf 'void loop_run(void);\nvoid f(void) { loop_run(); }\n' >x.c &&
		printf 'void loop_run(void) {}\n' >y.c &&
		cc -c -o b/driver/core/x.o x.c && cc -c -o b/driver/front/y.o y.c &&
		hack/layers.sh b"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"driver/core/x calls loop_run() of driver/front/y, in front/, above core/"* ]]
}
