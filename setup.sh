#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One entry point for a fresh Debian 12 machine (run as root, from the source tree):
#
#   ./setup.sh demo    install what is needed, build, run a real sandboxed command
#   ./setup.sh check   install, build (-Werror), run the whole test suite: as root, again as an
#                      unprivileged user, and once under ASan+UBSan
#   ./setup.sh deps    install the Debian packages only
#   ./setup.sh build   build only
set -eu
cd "$(dirname "$0")"

PACKAGES="build-essential pkg-config libseccomp-dev libjansson-dev python3 python3-pytest python3-venv \
python3-pip python3-setuptools python3-wheel bubblewrap \
strace util-linux procps openssl golang-github-burntsushi-toml-dev help2man groff-base"

deps() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup.sh: missing packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "setup.sh: installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
		>/dev/null
}

jobs() {
	nproc 2>/dev/null || echo 2
}

build() {
	make -s -j"$(jobs)" WERROR=1 "$@"
}

demo() {
	deps
	build
	b=./build/sandlock
	echo
	echo "\$ sandlock run -r /usr -r /lib -r /lib64 -r /bin -- cat /etc/hostname"
	if $b run -r /usr -r /lib -r /lib64 -r /bin -- cat /etc/hostname; then
		echo "(unexpected: the read outside the grants succeeded)" >&2
		exit 1
	fi
	echo "  -> denied: /etc is not granted"
	echo
	echo "\$ sandlock run -r /usr -r /lib -r /lib64 -r /bin -r /etc -- cat /etc/hostname"
	$b run -r /usr -r /lib -r /lib64 -r /bin -r /etc -- cat /etc/hostname
	echo "  -> allowed: /etc is granted"
	echo
	echo "\$ sandlock run --name demo -r /usr -r /lib -r /lib64 -r /bin -- uname -n"
	$b run --name demo -r /usr -r /lib -r /lib64 -r /bin -- uname -n
}

# Run one pass of the suite, printing its output, and remember its summary (last) line.
SUMMARIES=""
pass() {
	pass_log=$(mktemp)
	pass_rc=$(mktemp)
	{ "$@" 2>&1; echo $? >"$pass_rc"; } | tee "$pass_log"
	pass_status=$(cat "$pass_rc")
	rm -f "$pass_rc"
	SUMMARIES="$SUMMARIES$(tail -n 1 "$pass_log" | sed 's/^sandlock tests //')
"
	rm -f "$pass_log"
	[ "$pass_status" -eq 0 ]
}

# Run the suite as an unprivileged user, on a copy of the tree that user owns.
check_unprivileged() {
	user=sandlock-test
	id "$user" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh "$user"
	dir=$(mktemp -d /tmp/sandlock-unpriv.XXXXXX)
	cp -a . "$dir/src"
	chown -R "$user:" "$dir"
	chmod 755 "$dir"
	user_status=0
	toml_test=${SANDLOCK_TOML_TEST:-}
	pass runuser -u "$user" -- env SANDLOCK_MUST_WORK="${SANDLOCK_MUST_WORK:-}" \
		SANDLOCK_TOML_TEST="$toml_test" \
		HOME="$(getent passwd "$user" | cut -d: -f6)" \
		"$dir/src/tests/run" --build build --label unprivileged || user_status=1
	rm -rf "$dir"
	return $user_status
}

check() {
	deps
	build
	build SANITIZE=1
	# Kernel ping sockets for every group, as systemd's default sysctl.d has it (the ICMP
	# tests use them; Debian without systemd's defaults has none).
	if [ "$(id -u)" -eq 0 ]; then
		sysctl -qw net.ipv4.ping_group_range="0 2147483647" 2>/dev/null || true
	fi
	status=0
	pass tests/run --build build --label "$(id -un)" || status=1
	if [ "$(id -u)" -eq 0 ]; then
		check_unprivileged || status=1
	else
		echo "setup.sh: not root: the pass above was the unprivileged one"
	fi
	pass env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run --build build-asan --label asan-ubsan || status=1
	echo
	printf '%s' "$SUMMARIES"
	verdict=PASS
	[ $status -eq 0 ] || verdict=FAIL
	echo "sandlock tests: $(printf '%s' "$SUMMARIES" | grep -c .) passes; $verdict"
	return $status
}

case "${1:-}" in
deps) deps ;;
build) deps; build ;;
demo) demo ;;
check) check ;;
*) echo "usage: ./setup.sh demo|check|deps|build" >&2; exit 2 ;;
esac
