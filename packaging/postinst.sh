#!/bin/sh
# The unit is new or changed: systemd rereads it (where systemd runs). It is
# not enabled or started: the host needs its configuration and
# certificates first (/etc/linerate).
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
