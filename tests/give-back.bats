#!/usr/bin/env bats
# tests/give-back.bats - hack/give-back.sh, which `sudo make bench` and
# `sudo hack/test.sh` run under: the outputs go to the invoking user, a
# tracked file that the command replaced gets its owner and mode back, and
# the command's exit status is passed on. On a scratch git repository owned
# by the test user, as a normal account's checkout would be.

load lib

# The command run as root: it writes outputs, replaces a tracked file the
# way `mv` does (benchmark/run-matrix.sh on docs/benchmarks.md), and fails.
CMD='mkdir -p build/sub && touch build/sub/obj tapir &&
ln -s sub build/link && echo new >doc.md.new && mv doc.md.new doc.md &&
exit 3'

setup() {
	repo="$BATS_TEST_TMPDIR/repo"
	mkdir -p "$repo/hack"
	cp "$TAPIR_ROOT/hack/give-back.sh" "$repo/hack/"
	echo old >"$repo/doc.md"
	chmod 0640 "$repo/doc.md"
	git -C "$repo" init -q
	git -C "$repo" add -A
	git -C "$repo" -c user.name=t -c user.email=t@example.invalid \
		commit -q -m init
	user_ids="$(id -u "$TAPIR_TEST_USER"):$(id -g "$TAPIR_TEST_USER")"
}

# owners: "PATH UID:GID MODE" for what the command touched.
owners() {
	(cd "$repo" && stat -c '%n %u:%g %a' doc.md tapir build build/sub \
		build/sub/obj && stat -c '%n %u:%g' build/link)
}

@test "give-back: sudo: outputs to SUDO_UID, tracked file restored, status kept" {
	chown -R "$user_ids" "$repo"
	run env SUDO_UID="${user_ids%:*}" SUDO_GID="${user_ids#*:}" \
		"$repo/hack/give-back.sh" build tapir -- bash -c "cd '$repo' && $CMD"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"doc.md: owner and mode restored to $user_ids 640"* ]]
	run owners
	echo "$output"
	has_line "doc.md $user_ids 640"
	has_line "build/sub/obj $user_ids 644"
	has_line "build/link $user_ids"
	[[ "$output" == *"tapir $user_ids "* ]]
	[ "$(cat "$repo/doc.md")" = new ]
}

@test "give-back: root without sudo: outputs to the tree's owner" {
	chown -R "$user_ids" "$repo"
	run env -u SUDO_UID -u SUDO_GID \
		"$repo/hack/give-back.sh" build tapir -- bash -c "cd '$repo' && $CMD"
	[ "$status" -eq 3 ]
	run owners
	echo "$output"
	has_line "doc.md $user_ids 640"
	has_line "build/sub/obj $user_ids 644"
}

@test "give-back: a root-owned tree (CI) is left alone" {
	run env -u SUDO_UID -u SUDO_GID \
		"$repo/hack/give-back.sh" build tapir -- bash -c "cd '$repo' && $CMD"
	[ "$status" -eq 3 ]
	run owners
	echo "$output"
	has_line "build/sub/obj 0:0 644"
	has_line "doc.md 0:0 644"
}

@test "give-back: outputs outside the tree are refused" {
	chown -R "$user_ids" "$repo"
	run env SUDO_UID="${user_ids%:*}" "$repo/hack/give-back.sh" /etc -- true
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"outputs are paths inside the tree"* ]]
	run env SUDO_UID="${user_ids%:*}" "$repo/hack/give-back.sh" ../x -- true
	[ "$status" -eq 2 ]
}
