#!/bin/sh
# kafka-configs.sh (--describe | --alter …), as upstream.
exec "$(dirname "$0")/kafka-run-class.sh" kafka.admin.ConfigCommand "$@"
