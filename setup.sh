#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One entry point for a fresh Debian 12 machine (run as root, from the source tree):
#
#   ./setup.sh demo    install what is needed, build, run a real sandboxed command
#                      (SANDLOCK_BIN=PATH: with that sandlock, nothing installed or built)
#   ./setup.sh check   install, build (-Werror), run the whole test suite: as root, again as an
#                      unprivileged user, and once under ASan+UBSan
#   ./setup.sh deps    install the Debian packages (and the MCP tests' npm packages) only
#   ./setup.sh build   build only
set -eu
cd "$(dirname "$0")"

PACKAGES="build-essential pkg-config libseccomp-dev libjansson-dev libssl-dev python3 python3-pytest python3-venv \
python3-pip python3-setuptools python3-wheel bubblewrap \
strace util-linux procps openssl curl golang-github-burntsushi-toml-dev help2man groff-base"

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

# The MCP tests' real clients, the official TypeScript SDK and the MCP Inspector
# (tests/mcp-client, from npm, with the Node.js 22 they run on: Debian 12's is 18). npm comes
# from Debian's nodejs and npm, unless a node with its npm is already installed (a vendor's
# nodejs package carries npm itself and conflicts with Debian's).
NODE_PACKAGES="nodejs npm"

node_deps() {
	if ! command -v npm >/dev/null 2>&1; then
		system_packages=$PACKAGES
		PACKAGES=$NODE_PACKAGES
		deps
		PACKAGES=$system_packages
	fi
	# Without the registry the MCP client tests skip (and fail under SANDLOCK_MUST_WORK=1).
	(cd tests/mcp-client && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "setup.sh: npm ci in tests/mcp-client failed: the MCP client tests will skip" >&2
}

jobs() {
	nproc 2>/dev/null || echo 2
}

build() {
	make -s -j"$(jobs)" WERROR=1 "$@"
}

# One step of the demo: `sandlock run ARGS`, then what happened, told apart by --status-fd:
# sandlock writes the command's exit status there only when the command ran. Without it,
# sandlock itself refused to start (its own error on stderr; exit 1: the policy cannot be
# enforced on this kernel), and that is not the command being denied.
demo_step() {
	want=$1 what=$2
	shift 2
	echo
	echo "\$ sandlock run $*"
	step_err=$(mktemp)
	step_status=$(mktemp)
	step_rc=0
	"$b" run --status-fd 3 "$@" 2>"$step_err" 3>"$step_status" || step_rc=$?
	cat "$step_err" >&2
	code=$(sed -n 's/^{"exit_code":\(-\{0,1\}[0-9]*\).*/\1/p' "$step_status")
	denied=0
	grep -q "Permission denied" "$step_err" && denied=1
	rm -f "$step_err" "$step_status"
	if [ -z "$code" ]; then
		echo "  -> sandlock could not start the sandbox (exit $step_rc): not a denial"
		# `sandlock check` fails where a default sandbox cannot run (a protection the
		# kernel lacks); any other refusal is sandlock's own error, printed above.
		if [ "$step_rc" -eq 1 ] && ! "$b" check >/dev/null 2>&1; then
			echo "  hint: your kernel ($(uname -r)) lacks a Landlock protection sandlock" \
				"enforces by default (strict mode needs Landlock ABI 6, Linux 6.12+;" \
				"'$b check' lists them); run with --allow-degraded all"
		fi
		return 1
	fi
	case $want in
	denied)
		if [ "$code" -ne 0 ] && [ "$denied" -eq 1 ]; then
			echo "  -> denied: $what"
			return 0
		fi
		echo "(unexpected: the command exited $code, not denied by the sandbox)" >&2 ;;
	allowed)
		if [ "$code" -eq 0 ]; then
			echo "  -> allowed: $what"
			return 0
		fi
		echo "(unexpected: the command exited $code)" >&2 ;;
	esac
	return 1
}

# SANDLOCK_BIN: run the demo with that sandlock (an installed one), without installing or
# building anything.
demo() {
	b=${SANDLOCK_BIN:-}
	if [ -z "$b" ]; then
		deps
		build
		b=./build/sandlock
	fi
	sys=""
	for d in /usr /lib /lib64 /bin; do
		[ -e "$d" ] && sys="$sys -r $d"
	done
	# shellcheck disable=SC2086
	demo_step denied "/etc is not granted" $sys -- cat /etc/hostname &&
		demo_step allowed "/etc is granted" $sys -r /etc -- cat /etc/hostname &&
		demo_step allowed "the sandbox's own hostname" --name demo $sys -- uname -n
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
	node_deps
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
deps) deps; node_deps ;;
build) deps; build ;;
demo) demo ;;
check) check ;;
*) echo "usage: ./setup.sh demo|check|deps|build" >&2; exit 2 ;;
esac
