#!/usr/bin/env bats
# tests/man.bats - the man page tapir(1), docs/tapir.1: man renders it
# without a warning, and it names every option that `tapir --help`,
# `tapir run --help` and `tapir pasta --help` list, so that a new option
# without a man entry fails here. The list comes from --help at test time.

load lib

# render: the page as man shows it, plain text, wide enough that no option
# is broken across lines (the page also turns hyphenation off).
render() {
	MANWIDTH=200 man --warnings -l "$TAPIR_ROOT/docs/tapir.1" 2>"$BATS_TEST_TMPDIR/warnings" |
		col -b
}

@test "man: tapir(1) renders with man -l, without warnings" {
	run render
	echo "$output"
	echo "warnings: $(cat "$BATS_TEST_TMPDIR/warnings")"
	[ "$status" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/warnings" ]
	[[ "${lines[0]}" =~ ^TAPIR\(1\) ]]
	local section
	for section in NAME SYNOPSIS DESCRIPTION OPTIONS "API SOCKET" \
		"EXIT STATUS" EXAMPLES "CONTAINER ENGINES" "PASTA MODE" "SEE ALSO"; do
		has_line "$section" || {
			echo "no section $section"
			return 1
		}
	done
}

@test "man: tapir(1) names every option of tapir --help, tapir run --help and tapir pasta --help" {
	local page opts opt missing=()
	page=$(render)
	opts=$({
		"$TAPIR_BIN" --help
		"$TAPIR_BIN" run --help
		"$TAPIR_BIN" pasta --help
	} | grep -oE '(^|[ ,])--?[[:alnum:]][[:alnum:]-]*' | sed 's/^[ ,]*//' |
		sort -u)
	echo "options in --help: $(xargs <<<"$opts")"
	# A sanity floor: the parse must have found the options.
	[ "$(wc -l <<<"$opts")" -ge 20 ]
	for opt in $opts; do
		# As a whole option: not a prefix of a longer one.
		grep -qE -- "(^|[^-[:alnum:]])$opt([^-[:alnum:]]|\$)" <<<"$page" ||
			missing+=("$opt")
	done
	for opt in "tapir run" "tapir api" "tapir pasta"; do
		grep -qF -- "$opt" <<<"$page" || missing+=("$opt")
	done
	echo "missing from tapir(1): ${missing[*]}"
	[ "${#missing[@]}" -eq 0 ]
}
