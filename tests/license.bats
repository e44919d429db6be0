#!/usr/bin/env bats
# tests/license.bats - the licence: LICENSE at the top holds the whole
# text of the GPL version 2, which every source's SPDX line
# (GPL-2.0-or-later) and debian/copyright name.

load lib

@test "license: LICENSE is the GPL version 2, as every SPDX line and debian/copyright say" {
	local f bad=()
	cd "$TAPIR_ROOT"
	[ -f LICENSE ] || {
		echo "no LICENSE at the top of the tree"
		return 1
	}
	run sed -n '1,2{s/^ *//;p}' LICENSE
	[ "${lines[0]}" = "GNU GENERAL PUBLIC LICENSE" ]
	[ "${lines[1]}" = "Version 2, June 1991" ]
	# The whole text, not a pointer to it.
	grep -q "END OF TERMS AND CONDITIONS" LICENSE
	# Every C source says which licence, and every SPDX line the same.
	for f in driver/*/*.[ch] ipc/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] \
		tests/tools/*.c benchmark/*.c; do
		grep -q "SPDX-License-Identifier: GPL-2.0-or-later" "$f" ||
			bad+=("$f")
	done
	while IFS= read -r f; do
		bad+=("$f")
	done < <(grep -rl --exclude-dir='build*' --exclude-dir=.git \
		"SPDX-License-Identifier:" . |
		xargs grep -L "SPDX-License-Identifier: GPL-2.0-or-later" || true)
	echo "without GPL-2.0-or-later: ${bad[*]}"
	[ "${#bad[@]}" -eq 0 ]
	grep -qx "License: GPL-2.0-or-later" debian/copyright
}
