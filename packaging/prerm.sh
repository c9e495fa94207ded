#!/bin/sh
# Removed or upgraded: stop the agent first (it restores its tuning on
# SIGTERM) so that no agent runs a binary that is going away.
set -e
if [ -d /run/systemd/system ]; then
	systemctl stop linerate-agent.service || true
fi
