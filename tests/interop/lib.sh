# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Settings and helpers shared by the interop lab's scripts (sourced).
#
# The lab boots Debian 12 guests (Linux 6.1, rdma_rxe, rdma-core 44) under
# QEMU and puts them on a bridge in a network namespace; a softrdmad in
# the same namespace joins the bridge with `softrdma link add`.  Big files
# live under $IL_CACHE (default /tmp/softrdma-interop), never in the tree.

IL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IL_CACHE=${IL_CACHE:-/tmp/softrdma-interop}

il_log()
{
	echo "# [$(date +%T)] $*"
}

il_die()
{
	echo "error: $*" >&2
	exit 1
}

# The image is rebuilt whenever what goes into it changes: its directory
# is named by a hash of the builder and the guest's files (the agent is
# not in the image: each run hands it over).
il_image_key()
{
	cat "$IL_DIR/image.sh" "$IL_DIR"/guest/* | sha256sum | cut -c1-12
}

il_image_dir()
{
	echo "$IL_CACHE/image-$(il_image_key)"
}

# il_stop_lab: stop the guest, the daemon and whatever else runs in the
# namespace $NS, then delete it (QEMU_PID, DAEMON_PID may be empty).
il_stop_lab()
{
	local p

	if [ -n "${QEMU_PID:-}" ] && kill -0 "$QEMU_PID" 2>/dev/null; then
		kill "$QEMU_PID" 2>/dev/null
		sleep 1
		kill -KILL "$QEMU_PID" 2>/dev/null
	fi
	[ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null
	# Whatever still runs in our namespace was started here.
	p=$(ip netns pids "$NS" 2>/dev/null)
	# shellcheck disable=SC2086 # one word per pid
	[ -n "$p" ] && kill -KILL $p 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	return 0
}
