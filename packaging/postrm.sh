#!/bin/sh
# Removed: systemd forgets the unit. Purged: the agent's state
# (/var/lib/linerate: tuning journals, the admin socket) goes too, and the
# unit's enablement links.
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/linerate
	rm -f /etc/systemd/system/multi-user.target.wants/linerate-agent.service
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
