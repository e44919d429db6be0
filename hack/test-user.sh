#!/usr/bin/env bash
# hack/test-user.sh - make sure the unprivileged user that the integration
# tests run tapir, rootlesskit and slirp4netns as exists and can create
# user namespaces with a subordinate id range.
#
# Idempotent and quiet when nothing needs doing. Needs root.
set -euo pipefail

user=${TAPIR_TEST_USER:-tapirtest}
# A range well away from the 100000 block that useradd hands out by default,
# so it cannot overlap ranges of real users on the machine.
range_start=200000
range_end=265535

if ((EUID != 0)); then
	echo "hack/test-user.sh: must run as root (it creates user '$user')" >&2
	exit 1
fi

if ! id -u "$user" >/dev/null 2>&1; then
	useradd --create-home --shell /bin/bash "$user"
	echo "hack/test-user.sh: created user $user"
fi

# rootlesskit and newuidmap need a subordinate range; add one only when the
# user has none, so re-runs never stack up duplicate ranges.
has_range() { # FILE
	[[ -f "$1" ]] && grep -q "^${user}:" "$1"
}
if ! has_range /etc/subuid; then
	usermod --add-subuids "${range_start}-${range_end}" "$user"
	echo "hack/test-user.sh: gave $user subuids ${range_start}-${range_end}"
fi
if ! has_range /etc/subgid; then
	usermod --add-subgids "${range_start}-${range_end}" "$user"
	echo "hack/test-user.sh: gave $user subgids ${range_start}-${range_end}"
fi

# Debian servers ship /dev/net/tun as 0600; desktop distributions ship 0666,
# and tapir's users (userns-root without real privileges) need to open it.
tun=/dev/net/tun
if [[ -c "$tun" ]]; then
	mode=$(stat -c '%04a' "$tun")
	# Only the "other" read and write bits matter.
	if (((8#$mode & 8#006) != 8#006)); then
		chmod 0666 "$tun"
		echo "hack/test-user.sh: $tun was $mode; made it 0666 so unprivileged users can open it (as desktop distributions ship it)"
	fi
fi
